"""``gbm-stratonovich``: SDEProblemLibrary's ``prob_sde_linear_stratonovich``, the same coefficients read as Stratonovich.

    dX = α X dt + β X ∘ dB,  i.e. dX = (α + β²/2) X dt + β X dB (Itô),   X_t = X_0 exp(α t + β W_t).
"""

from __future__ import annotations

import torch

from .gbm import GeometricBrownianMotion

__all__ = ["GeometricBrownianMotionStratonovich"]


class GeometricBrownianMotionStratonovich(GeometricBrownianMotion):
    name = "gbm-stratonovich"
    description = "dX = 1.01 X dt + 0.87 X o dB (Stratonovich), X0 = 1/2"
    source = "SDEProblemLibrary prob_sde_linear_stratonovich"
    stated_form = "stratonovich"

    def a(self, x: torch.Tensor) -> torch.Tensor:
        return (self.alpha + 0.5 * self.beta**2) * x

    def solution(self, t: float, w: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        return x0 * torch.exp(self.alpha * t + self.beta * w)
