"""The backward pass of a depth-L ResNet against the gradients of its limit
(``python -m validation.gradients``).

The study is :mod:`validation.gradients.study`; this is its public surface.
"""

from .study import (
    COMMAND, GradientSettings, GradientResult, MethodErrors, SDE_METHODS, ODE_METHODS, run, main,
)

__all__ = ["COMMAND", "GradientSettings", "GradientResult", "MethodErrors", "SDE_METHODS", "ODE_METHODS", "run",
           "main"]
