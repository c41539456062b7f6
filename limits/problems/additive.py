"""``additive``: SDEProblemLibrary's ``prob_sde_additive`` (additive noise, time-dependent coefficients).

    dX = (β/√(1+t) − X/(2(1+t))) dt + αβ/√(1+t) dB,  α = 0.1, β = 0.05, X_0 = 1,
    X_t = X_0/√(1+t) + β (t + α W_t)/√(1+t)        (√(1+t) X_t = X_0 + β t + αβ W_t).
"""

from __future__ import annotations

import math

import torch

from ..brownian import DyadicPath
from .base import Problem, path_total

__all__ = ["Additive"]


class Additive(Problem):
    name = "additive"
    description = "dX = (b/sqrt(1+t) - X/(2(1+t))) dt + a b/sqrt(1+t) dB, a = 0.1, b = 0.05, X0 = 1"
    source = "SDEProblemLibrary prob_sde_additive"
    dimension = channels = 1
    noise_type = "additive"
    alpha, beta, x0 = 0.1, 0.05, 1.0

    def initial_value(self) -> torch.Tensor:
        return torch.tensor([self.x0], dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return self.beta / math.sqrt(1 + t) - x / (2 * (1 + t))

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return torch.full((*x.shape, 1), self.alpha * self.beta / math.sqrt(1 + t), dtype=x.dtype, device=x.device)

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """Zero: additive noise."""
        return torch.zeros_like(x)

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        t = self.t1
        return (x0 + self.beta * (t + self.alpha * path_total(path))) / math.sqrt(1 + t)
