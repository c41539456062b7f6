"""``wave``: SDEProblemLibrary's ``prob_sde_wave``.

    dX = −0.01 sin X cos³ X dt + 0.1 cos² X dB (Itô),  X_0 = 1,   X_t = arctan(0.1 W_t + tan X_0).
"""

from __future__ import annotations

import torch

from .base import ScalarProblem

__all__ = ["Wave"]


class Wave(ScalarProblem):
    name = "wave"
    description = "dX = -0.01 sin X cos^3 X dt + 0.1 cos^2 X dB (Ito), X0 = 1"
    source = "SDEProblemLibrary prob_sde_wave"
    x0 = 1.0

    def a(self, x: torch.Tensor) -> torch.Tensor:
        return -0.01 * torch.sin(x) * torch.cos(x) ** 3

    def b(self, x: torch.Tensor) -> torch.Tensor:
        return 0.1 * torch.cos(x) ** 2

    def solution(self, t: float, w: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        return torch.atan(0.1 * w + torch.tan(x0))
