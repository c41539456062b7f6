"""``kps445``: Kloeden, Platen & Schurz (1994), eq. (4.4.5), as sdeint tests it.

    dX = −(sin 2X + ¼ sin 4X) dt + √2 cos² X dB (Itô),  X_0 = 1,
    X_t = arctan(e^{−t} (tan X_0 + √2 ∫_0^t e^s dB_s))          (V = tan X solves dV = −V dt + √2 dB).

The stochastic integral is not a function of W_t alone. On each recorded step [t_k, t_k + Δt], with its increment
W_k and space-time area H_k,

    ∫ e^s dB_s = e^{t_k} (W_k (1 + Δt/2 + Δt²/6) − H_k (Δt + Δt²/2)) + R_k,

the conditional mean given (W_k, H_k) to second order in Δt; R_k has mean 0 and standard deviation O(Δt^{5/2}), so
the recorded path's solution is exact to O(Δt²) in all (Δt = T/K: 1e-6 for the study's default K = 1024).
"""

from __future__ import annotations

import math

import torch

from ..brownian import DyadicPath
from .base import ScalarProblem

__all__ = ["KPS445", "exponential_integral"]


def exponential_integral(path: DyadicPath) -> torch.Tensor:
    """∫_0^T e^s dB_s on the recorded steps (module docstring), (N, m)."""
    if path.areas is None:
        raise ValueError("∫ e^s dB_s needs the path's space-time areas (record_path(..., areas='space-time'))")
    dt = path.t1 / path.steps
    starts = torch.arange(path.steps, dtype=path.dtype, device=path.device) * dt
    weights = torch.exp(starts).view(-1, 1, 1)
    terms = path.increments * (1 + dt / 2 + dt * dt / 6) - path.areas * (dt + dt * dt / 2)
    return (weights * terms).sum(0)


class KPS445(ScalarProblem):
    name = "kps445"
    description = "dX = -(sin 2X + sin(4X)/4) dt + sqrt2 cos^2 X dB (Ito), X0 = 1"
    source = "Kloeden, Platen & Schurz 1994, eq. (4.4.5); sdeint's test_KPS445"
    solution_reads = "int_0^T e^s dB_s, by quadrature on the recorded steps with their space-time areas (O(dt^2))"
    x0 = 1.0

    def a(self, x: torch.Tensor) -> torch.Tensor:
        return -(torch.sin(2 * x) + 0.25 * torch.sin(4 * x))

    def b(self, x: torch.Tensor) -> torch.Tensor:
        return math.sqrt(2.0) * torch.cos(x) ** 2

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        integral = exponential_integral(path)
        return torch.atan(math.exp(-self.t1) * (torch.tan(x0) + math.sqrt(2.0) * integral))
