"""``gbm-diagonal`` and ``gbm-diagonal-stratonovich``: SDEProblemLibrary's ``prob_sde_2Dlinear`` (and its
Stratonovich form): 8 geometric Brownian motions (a 4 × 2 matrix, flattened), each driven by its own channel —
diagonal noise, g = diag(β X), X_0 = ½ in every entry; the solution is :mod:`~limits.problems.gbm`'s, entry by entry.
"""

from __future__ import annotations

import torch

from ..brownian import DyadicPath
from .base import Problem, elementwise_correction, path_total
from .gbm import GeometricBrownianMotion
from .gbm_stratonovich import GeometricBrownianMotionStratonovich

__all__ = ["DiagonalGeometricBrownianMotion", "DiagonalGeometricBrownianMotionStratonovich"]


class DiagonalGeometricBrownianMotion(Problem):
    name = "gbm-diagonal"
    description = "8 geometric Brownian motions (a 4x2 matrix), one channel each: diagonal noise (Ito)"
    source = "SDEProblemLibrary prob_sde_2Dlinear"
    dimension = channels = 8
    noise_type = "diagonal"
    scalar = GeometricBrownianMotion()

    def initial_value(self) -> torch.Tensor:
        return torch.full((self.dimension,), self.scalar.x0, dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return self.scalar.a(x)

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return torch.diag_embed(self.scalar.b(x))

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        return self.scalar.solution(self.t1, path_total(path), x0)

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return elementwise_correction(self.scalar.b, x)


class DiagonalGeometricBrownianMotionStratonovich(DiagonalGeometricBrownianMotion):
    name = "gbm-diagonal-stratonovich"
    description = "8 geometric Brownian motions, diagonal noise, stated in Stratonovich form"
    source = "SDEProblemLibrary prob_sde_2Dlinear_stratonovich"
    stated_form = "stratonovich"
    scalar = GeometricBrownianMotionStratonovich()
