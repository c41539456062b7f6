"""Euler–Maruyama: H_{k+1} = H_k + f(t_k, H_k) Δt + g(t_k, H_k) ΔB_k.

For res-1 this is the residual network itself (limits/res_sde.py); for the Itô-corrected pairs it is the
scheme the convergence study's reference uses. Strong order 1/2 for general noise, 1 for additive noise.
"""

from __future__ import annotations

from typing import Any

import torch

from .base import PathIncrement, SDEScheme

__all__ = ["EulerMaruyama"]


class EulerMaruyama(SDEScheme):
    name = "euler"
    #: weak order 1: Kloeden & Platen (1992), Thm 14.5.1
    weak_order = 1.0
    description = "Euler-Maruyama (Ito): H + f dt + g dB"
    sde_type = "ito"
    strong_orders = {"general": 0.5, "additive": 1.0}

    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        return h + self.sde.f(t, h) * dt + self.sde.g_prod(t, h, increment.W), state
