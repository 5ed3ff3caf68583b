"""Scripts that measure zbench itself against plain references; run from the repository root."""
