"""Workloads that run on the GPUs, one subprocess each (``python -m zbench.runners``).

Only ``protocol`` and ``config`` may be imported outside a runner process: they are framework-free.
Nothing in this ``__init__`` may import torch or tensorflow.
"""
