"""``additive-system``: SDEProblemLibrary's ``prob_sde_additivesystem``: 4 coordinates, each with its own channel and
its own β — additive noise, time-dependent coefficients:

    dX_i = (β_i/√(1+t) − X_i/(2(1+t))) dt + α β_i/√(1+t) dB^i,  α = 0.1, β = (0.5, 0.25, 0.125, 0.1115), X_0 = 1,
    X_i(t) = (X_i(0) + β_i (t + α W^i_t)) / √(1+t).
"""

from __future__ import annotations

import math

import torch

from ..brownian import DyadicPath
from .base import Problem, path_total

__all__ = ["AdditiveSystem"]


class AdditiveSystem(Problem):
    name = "additive-system"
    description = "4 additive-noise SDEs, one channel each (b = 0.5, 0.25, 0.125, 0.1115; a = 0.1)"
    source = "SDEProblemLibrary prob_sde_additivesystem"
    dimension = channels = 4
    noise_type = "additive"
    alpha = 0.1
    betas = (0.5, 0.25, 0.125, 0.1115)

    def _beta(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tensor(self.betas, dtype=x.dtype, device=x.device)

    def initial_value(self) -> torch.Tensor:
        return torch.ones(self.dimension, dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return self._beta(x) / math.sqrt(1 + t) - x / (2 * (1 + t))

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return torch.diag_embed((self.alpha / math.sqrt(1 + t)) * self._beta(x)).expand(x.shape[0], -1, -1)

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """Zero: additive noise."""
        return torch.zeros_like(x)

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        t = self.t1
        return (x0 + self._beta(x0) * (t + self.alpha * path_total(path))) / math.sqrt(1 + t)
