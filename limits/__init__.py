"""Discrete deep ResNets paired with their continuous-depth limits, driven by the same weights."""

__version__ = "0.1.0"
