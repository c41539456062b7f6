"""torchsde's fixed-step schemes, run by ``torchsde.sdeint`` on the shared path.

Each class names one of torchsde's methods and declares its abilities as torchsde documents them (strong
orders by noise type: https://github.com/google-research/torchsde/blob/master/DOCUMENTATION.md). The
scheme's :meth:`~TorchsdeMethod.integrate` is one ``sdeint(sde, h0, [0, T], bm=path, method=…, dt=T/L)``
call, with ``path`` the study's :class:`~limits.brownian.DyadicPath`: the same increments (and space-time
areas) the network and every other scheme read.

Strong orders (the general-noise Stratonovich schemes have no Lévy areas and are order 1/2 — Clark &
Cameron 1980: no scheme using only the increments beats 1/2 for non-commutative noise; with
commutative noise they are order 1):

=====================  ==============  =================================  ========================
method                 form            noise                              strong order
=====================  ==============  =================================  ========================
midpoint               Stratonovich    all                                1/2 general, 1 otherwise
euler_heun             Stratonovich    all                                1/2 general, 1 otherwise
reversible_heun        Stratonovich    all                                1/2 general, 1 additive
                                                                          (commutative: not stated)
log_ode_midpoint       Stratonovich    all (Lévy area approximation)      1/2 general, 1 otherwise; 1 on a
                                                                          path with full Lévy areas
milstein               Itô             scalar, diagonal, additive         1
srk                    Itô             scalar, diagonal, additive         1.5 (space-time area)
=====================  ==============  =================================  ========================
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torchsde

from .base import PathIncrement, SDEScheme

__all__ = ["TorchsdeMethod", "Midpoint", "EulerHeun", "ReversibleHeun", "LogODEMidpoint", "Milstein", "SRK"]

_STRATONOVICH_ORDERS = {"general": 0.5, "commutative": 1.0, "diagonal": 1.0, "scalar": 1.0, "additive": 1.0}


class TorchsdeMethod(SDEScheme):
    """A torchsde method by name (``method``), integrated by ``torchsde.sdeint`` with fixed steps."""

    method: ClassVar[str]
    options: ClassVar[dict[str, Any]] = {}

    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        raise NotImplementedError(f"{self.name} runs whole paths through torchsde.sdeint (integrate)")

    def integrate(self, h0: torch.Tensor, path: Any, steps: int, t1: float = 1.0) -> torch.Tensor:
        ts = torch.tensor([0.0, t1], dtype=h0.dtype, device=h0.device)
        with torch.no_grad():
            ys = torchsde.sdeint(self.sde, h0, ts, bm=path, method=self.method, dt=t1 / steps,
                                 options=dict(self.options) or None)
        return ys[-1]


class Midpoint(TorchsdeMethod):
    name = method = "midpoint"
    description = "explicit midpoint (Stratonovich), torchsde"
    sde_type = "stratonovich"
    strong_orders = _STRATONOVICH_ORDERS
    drift_evaluations = diffusion_evaluations = 2


class EulerHeun(TorchsdeMethod):
    name = method = "euler_heun"
    description = "Euler-Heun (Stratonovich), torchsde"
    sde_type = "stratonovich"
    strong_orders = _STRATONOVICH_ORDERS
    drift_evaluations, diffusion_evaluations = 1, 2


class ReversibleHeun(TorchsdeMethod):
    name = method = "reversible_heun"
    description = "reversible Heun (Stratonovich; Kidger et al. 2021), torchsde"
    sde_type = "stratonovich"
    # torchsde (and Kidger et al. 2021) state 1/2, and 1 for additive noise; for scalar/diagonal noise no order is
    # declared here, so the study reports the measured one without checking it
    strong_orders = {"general": 0.5, "additive": 1.0, "scalar": None, "diagonal": None, "commutative": None}
    needs_diffusion_matrix = True  # torchsde carries g itself from step to step
    drift_evaluations = diffusion_evaluations = 1


class LogODEMidpoint(TorchsdeMethod):
    name = "log_ode_midpoint"
    method = "log_ode"
    description = "log-ODE midpoint (Stratonovich) with the path's Levy area (E[A | W, H] without full areas), torchsde"
    sde_type = "stratonovich"
    strong_orders = _STRATONOVICH_ORDERS
    #: with the path's own Lévy areas the log-ODE step matches the iterated integrals of order 1 (Foster et al.)
    levy_area_orders = {"general": 1.0}
    needs_space_time_area = True
    needs_diffusion_matrix = True
    drift_evaluations = diffusion_evaluations = 2
    #: its Lévy-area term costs m Jacobian–vector products per step on general noise (m = d² + …: 30 s for res1 at
    #: d = 10, N = 200)
    costly_on_general_noise = True


class Milstein(TorchsdeMethod):
    name = method = "milstein"
    description = "Milstein (Ito), torchsde"
    sde_type = "ito"
    noise_types = frozenset({"scalar", "diagonal", "additive"})
    strong_orders = {"scalar": 1.0, "diagonal": 1.0, "additive": 1.0}
    needs_diffusion_matrix = True
    drift_evaluations, diffusion_evaluations = 1, 2


class SRK(TorchsdeMethod):
    name = method = "srk"
    description = "stochastic Runge-Kutta (Ito; Roessler 2010), torchsde"
    sde_type = "ito"
    noise_types = frozenset({"scalar", "diagonal", "additive"})
    strong_orders = {"scalar": 1.5, "diagonal": 1.5, "additive": 1.5}
    needs_space_time_area = True
    needs_diffusion_matrix = True
    drift_evaluations, diffusion_evaluations = 4, 4
