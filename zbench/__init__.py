"""zbench: a terminal workbench for GPU workstations."""

__version__ = "0.1.0"
