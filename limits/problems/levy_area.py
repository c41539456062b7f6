"""``levy-area``: the non-commutative problem whose solution is the path's own Lévy area.

    dX¹ = dB¹,  dX² = dB²,  dX³ = ½ (X¹ dB² − X² dB¹),   X_0 = 0,   X_t = (W¹_t, W²_t, A¹²_{0,t}).

g₁ = (1, 0, −X²/2) and g₂ = (0, 1, X¹/2) do not commute ([g₁, g₂] = (0, 0, 1)), so a scheme that reads only the
increments is capped at strong order 1/2 (Clark & Cameron 1980): it misses the Lévy area of each of its steps, and
its error is the sum of those, RMS exactly (1/2)·L^{−1/2}. The Itô and Stratonovich forms coincide ((∂g_j) g_j = 0).
The exact solution is the path's Lévy area over [0, T], merged by Chen's relation from the recorded steps
(:func:`~limits.brownian.merge_levy_areas`): the same areas every scheme's steps read, so a scheme that uses them
(Milstein with Lévy areas, the log-ODE scheme) is exact up to rounding.
"""

from __future__ import annotations

import torch

from ..brownian import DyadicPath
from .base import Problem

__all__ = ["LevyAreaProblem"]


class LevyAreaProblem(Problem):
    name = "levy-area"
    description = "(B1, B2, Levy area): dX3 = (X1 dB2 - X2 dB1)/2, non-commutative noise"
    source = "issue 21's non-commutative case with a known solution (the Levy area)"
    dimension, channels = 3, 2
    noise_type = "general"
    solution_reads = "the Levy area of the path over [0, T] (its recorded steps' areas merged by Chen's relation)"
    needs_levy_area = True

    def initial_value(self) -> torch.Tensor:
        return torch.zeros(self.dimension, dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        g = x.new_zeros(x.shape[0], 3, 2)
        g[:, 0, 0] = 1.0
        g[:, 1, 1] = 1.0
        g[:, 2, 0] = -0.5 * x[:, 1]
        g[:, 2, 1] = 0.5 * x[:, 0]
        return g

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """Zero: (∂g₁) g₁ = (∂g₂) g₂ = 0."""
        return torch.zeros_like(x)

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        if path.levy_areas is None:
            raise ValueError("the levy-area problem's solution is the path's Levy area: record the path with "
                             "areas='levy'")
        whole = path.level(path.steps)
        return x0 + torch.cat([whole.increments[0], whole.levy_areas[0]], dim=-1)
