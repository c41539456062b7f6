"""``cubic``: SDEProblemLibrary's ``prob_sde_cubic``.

    dX = −¼ X (1 − X²) dt + ½ (1 − X²) dB (Itô),  X_0 = ½,
    X_t = ((1 + X_0) e^{W_t} + X_0 − 1) / ((1 + X_0) e^{W_t} + 1 − X_0) = tanh(atanh X_0 + W_t / 2).

(The library's docstring prints the drift as +¼ X (1 − X²); its code, and Itô's formula for the solution above, give
−¼ X (1 − X²).)
"""

from __future__ import annotations

import torch

from .base import ScalarProblem

__all__ = ["Cubic"]


class Cubic(ScalarProblem):
    name = "cubic"
    description = "dX = -X(1 - X^2)/4 dt + (1 - X^2)/2 dB (Ito), X0 = 1/2"
    source = "SDEProblemLibrary prob_sde_cubic"
    x0 = 0.5

    def a(self, x: torch.Tensor) -> torch.Tensor:
        return -0.25 * x * (1 - x * x)

    def b(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * (1 - x * x)

    def solution(self, t: float, w: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        grow = (1 + x0) * torch.exp(w)
        return (grow + x0 - 1) / (grow + 1 - x0)
