"""Demo 1: Snake learned by reinforcement learning, thousands of boards at once on the device."""
