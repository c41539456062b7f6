"""``r74``: Rößler (2010), eq. (7.4), as sdeint tests it: a linear system with 4 channels that commute.

    dX = A X dt + Σ_{k=1}^4 B X dB^k (Itô),  d = 5,  A = 0.05 𝟙 − 1.55 I (so A_ii = −1.5),  B = 0.01 𝟙 + 0.19 I,
    X_0 = (1, …, 1),   X_t = exp((A − ½ Σ_k B²) t + B Σ_k W^k_t) X_0        (A and B commute: both are in span{I, 𝟙}).
"""

from __future__ import annotations

import torch

from ..brownian import DyadicPath
from .base import Problem, path_total

__all__ = ["R74"]


def _matrices(dtype: torch.dtype, device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor]:
    ones = torch.ones(5, 5, dtype=dtype, device=device)
    eye = torch.eye(5, dtype=dtype, device=device)
    return 0.05 * ones - 1.55 * eye, 0.01 * ones + 0.19 * eye


class R74(Problem):
    name = "r74"
    description = "5-d linear system dX = A X dt + sum_k B X dB^k, 4 channels, commuting matrices (Ito)"
    source = "Roessler 2010, eq. (7.4); sdeint's test_R74"
    dimension, channels = 5, 4
    noise_type = "commutative"

    def initial_value(self) -> torch.Tensor:
        return torch.ones(self.dimension, dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        a, _ = _matrices(x.dtype, x.device)
        return x @ a.T

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        _, b = _matrices(x.dtype, x.device)
        return (x @ b.T).unsqueeze(-1).expand(-1, -1, self.channels)

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """½ Σ_k B (B x) = 2 B² x."""
        _, b = _matrices(x.dtype, x.device)
        return 0.5 * self.channels * x @ (b @ b).T

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        a, b = _matrices(x0.dtype, x0.device)
        total = path_total(path).sum(-1)                                      # Σ_k W^k_T, (N,)
        generator = (a - 0.5 * self.channels * b @ b) * self.t1 + total.view(-1, 1, 1) * b
        return (torch.linalg.matrix_exp(generator) @ x0.unsqueeze(-1)).squeeze(-1)
