"""Activations with their Taylor coefficients at the origin.

The continuous limits of docs/theory.md depend on an activation only through a few numbers:

* σ'(0) scales the diffusion of the Peluchetti–Favaro limit (docs/theory.md §4);
* σ''(0) is the Itô correction ½σ''(0)Q(t, H) of Cohen et al. Thm 4.4 (docs/theory.md §3a) and decides the
  rate of Cohen's ODE regime, min(1, β) if σ''(0) ≠ 0 and min(1, 2β) otherwise (docs/theory.md §3b).

So every :class:`Activation` carries ``d1 = σ'(0)`` and ``d2 = σ''(0)`` next to the function, and the
registry :func:`get_activation` parses names such as ``"prelu:0.2"`` (parameterised families take one
number after a colon). For the non-smooth ones (relu, prelu) the one-sided derivative from the right is
recorded for σ'(0) and σ''(0) = 0 away from the kink; they are Lipschitz, which is all the SDE/ODE
limits of Marion et al. need, but not C³, so Cohen's and Peluchetti–Favaro's corrections do not apply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

__all__ = ["Activation", "get_activation", "ACTIVATION_NAMES", "ActivationError"]


class ActivationError(ValueError):
    """An unknown activation name or a bad parameter."""


@dataclass(frozen=True)
class Activation:
    """An entrywise activation σ with its derivatives at 0.

    Attributes:
        name: canonical name, e.g. ``"tanh"`` or ``"prelu:0.25"``.
        fn: the function, applied entrywise to a tensor.
        d1: σ'(0) (right derivative for kinked functions).
        d2: σ''(0) (0 for piecewise-linear functions).
        smooth: True when σ is C³ near 0, the hypothesis of the Itô-corrected limits.
        zero_at_zero: True when σ(0) = 0.
    """

    name: str
    fn: Callable[[torch.Tensor], torch.Tensor] = field(repr=False, compare=False)
    d1: float
    d2: float
    smooth: bool
    zero_at_zero: bool = True

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)

    def derivative(self, x: torch.Tensor) -> torch.Tensor:
        """σ'(x) entrywise, by automatic differentiation of the entrywise σ (at a kink, PyTorch's subgradient)."""
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(self.fn(x).sum(), x)
        return grad


_LOG2 = math.log(2.0)


def _shifted_softplus(x: torch.Tensor) -> torch.Tensor:
    """2(softplus(x) − log 2): σ(0) = 0, σ'(0) = 1, σ''(0) = 1/2."""
    return 2.0 * (F.softplus(x) - _LOG2)


def _make_prelu(slope: float) -> Callable[[torch.Tensor], torch.Tensor]:
    def prelu(x: torch.Tensor) -> torch.Tensor:
        return torch.where(x >= 0, x, slope * x)

    return prelu


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


def _swish(x: torch.Tensor) -> torch.Tensor:
    """x·sigmoid(x): σ'(0) = 1/2, σ''(0) = 1/2."""
    return x * torch.sigmoid(x)


_FIXED: dict[str, Activation] = {
    "relu": Activation("relu", torch.relu, d1=1.0, d2=0.0, smooth=False),
    "tanh": Activation("tanh", torch.tanh, d1=1.0, d2=0.0, smooth=True),
    "identity": Activation("identity", _identity, d1=1.0, d2=0.0, smooth=True),
    "swish": Activation("swish", _swish, d1=0.5, d2=0.5, smooth=True),
    # x Φ(x): σ'(0) = Φ(0) = 1/2, σ''(0) = 2φ(0) = 2/√(2π) (Marion et al. 2024's activation)
    "gelu": Activation("gelu", F.gelu, d1=0.5, d2=2.0 / math.sqrt(2.0 * math.pi), smooth=True),
    "shifted-softplus": Activation("shifted-softplus", _shifted_softplus, d1=1.0, d2=0.5, smooth=True),
}

#: Names accepted by :func:`get_activation` (``prelu`` takes an optional ``:slope``, default 0.25).
ACTIVATION_NAMES: tuple[str, ...] = tuple(sorted([*_FIXED, "prelu"]))


def get_activation(spec: str | Activation) -> Activation:
    """Return the activation named by ``spec``.

    ``spec`` is one of :data:`ACTIVATION_NAMES`; ``prelu`` accepts a slope for negative inputs as
    ``"prelu:0.1"`` (default 0.25, any finite number). An :class:`Activation` is returned unchanged.

    Raises:
        ActivationError: unknown name or unparsable parameter; the message lists the allowed names.
    """
    if isinstance(spec, Activation):
        return spec
    name, _, param = str(spec).strip().lower().partition(":")
    if name in _FIXED and not param:
        return _FIXED[name]
    if name == "prelu":
        try:
            slope = float(param) if param else 0.25
        except ValueError:
            raise ActivationError(f"prelu slope {param!r} is not a number (use e.g. 'prelu:0.25')") from None
        if not math.isfinite(slope):
            raise ActivationError(f"prelu slope {slope} must be finite")
        return Activation(f"prelu:{slope:g}", _make_prelu(slope), d1=1.0, d2=0.0, smooth=False)
    raise ActivationError(
        f"unknown activation {spec!r}; allowed: {', '.join(ACTIVATION_NAMES)} (prelu takes ':slope')"
    )
