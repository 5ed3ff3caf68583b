"""Plain PyTorch reference loops that zbench's runner is measured against (written apart from it)."""
