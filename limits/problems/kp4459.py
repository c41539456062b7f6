"""``kp4459``: Kloeden & Platen (1992), eq. (4.4.59), as sdeint tests it: one coordinate, two channels.

    dX = a X dt + b₁ X dB¹ + b₂ X dB² (Itô),  a = −0.02, b₁ = 1, b₂ = 2, X_0 = 1,
    X_t = X_0 exp((a − (b₁² + b₂²)/2) t + b₁ W¹_t + b₂ W²_t).

Its two diffusion vectors commute (both are multiples of X): commutative noise, not diagonal.
"""

from __future__ import annotations

import torch

from ..brownian import DyadicPath
from .base import Problem, path_total

__all__ = ["KP4459"]


class KP4459(Problem):
    name = "kp4459"
    description = "dX = -0.02 X dt + X dB1 + 2 X dB2 (Ito), X0 = 1: two commuting channels"
    source = "Kloeden & Platen 1992, eq. (4.4.59); sdeint's test_KP4459"
    dimension, channels = 1, 2
    noise_type = "commutative"
    a, b1, b2, x0 = -0.02, 1.0, 2.0, 1.0

    def initial_value(self) -> torch.Tensor:
        return torch.tensor([self.x0], dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return self.a * x

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.b1 * x, self.b2 * x], dim=-1)

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """½ (b₁² + b₂²) x."""
        return 0.5 * (self.b1**2 + self.b2**2) * x

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        w = path_total(path)
        exponent = (self.a - 0.5 * (self.b1**2 + self.b2**2)) * self.t1 + self.b1 * w[:, :1] + self.b2 * w[:, 1:]
        return x0 * torch.exp(exponent)
