"""The interface every SDE scheme implements: one step on the shared path, its abilities declared once.

A scheme advances an approximation of the limit over one step [t, t + Δt] given the path's increment over
that step, a :class:`PathIncrement` read from the same Brownian path as the network and the reference
(:func:`validation.core.one_pass.sde_pass` hands every scheme, at every step count, the dyadic tree sums of one
path). Like torchsde's ``_core/methods``, a scheme declares what it can do as class attributes —

* ``sde_type``: which form of the limit it integrates, ``"ito"`` or ``"stratonovich"``: it is given the
  pair's Itô limit and integrates that form of it (:class:`limits.ito.SDEForm`: the Stratonovich drift is
  f − ½ Σ_j (∂g_j) g_j);
* ``noise_types``: the noise structures it is valid for (``general``, ``commutative``, ``diagonal``,
  ``scalar``, ``additive``);
* ``strong_orders``: its theory strong order by noise type (a general-noise scheme without Lévy areas
  is order 1/2, Clark & Cameron 1980);
* ``drift_evaluations`` / ``diffusion_evaluations``: evaluations of f and of g (or g·v) per step, the
  cost axis of a work–precision diagram;
* ``needs_space_time_area``: whether it reads the space-time Lévy area H of the step,
  ``needs_levy_area``: whether it reads the full Lévy area A of the step (a path recorded with them,
  :func:`limits.brownian.record_path` with ``areas="levy"``), and ``levy_area_orders``: its strong orders when
  the path it reads carries full Lévy areas, where they differ (the log-ODE scheme: order 1 on general noise);
* ``needs_diffusion_matrix``: whether it needs g itself rather than products g·v —

and :class:`SDEScheme` checks them once, at construction, against the SDE it is given. A scheme's
:meth:`~SDEScheme.integrate` runs it over [0, T] in L steps on a path (anything callable as
``path(ta, tb)``, e.g. :class:`~limits.brownian.DyadicPath`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import torch

from ..ito import ItoLimit, SDEForm, SDEFormWithMatrix

__all__ = ["NOISE_TYPES", "PathIncrement", "SDEScheme", "SchemeError"]

NOISE_TYPES: tuple[str, ...] = ("general", "commutative", "diagonal", "scalar", "additive")


class SchemeError(ValueError):
    """A scheme asked to integrate an SDE it is not valid for (the message says what it supports)."""


@dataclass(frozen=True)
class PathIncrement:
    """What a scheme reads of the path over one step [t, t + Δt].

    Attributes:
        W: the Brownian increment B_{t+Δt} − B_t, shape (N, m).
        H: the space-time Lévy area H = (1/Δt) ∫_t^{t+Δt} (B_s − B_t − (s − t)/Δt · W) ds, shape (N, m),
            where the driver provides it (None otherwise).
        A: the Lévy area A_ij = ½ (∫ (B^i − B^i_t) dB^j − ∫ (B^j − B^j_t) dB^i) over the step, shape (N, m, m),
            antisymmetric, for the schemes that need it (None otherwise).
    """

    W: torch.Tensor
    H: torch.Tensor | None = None
    A: torch.Tensor | None = None


class SDEScheme(abc.ABC):
    """One step rule for dH = f(t, H) dt + g(t, H) dB (Itô) or its Stratonovich form, on the shared path.

    ``limit`` is the pair's Itô limit (:class:`~limits.ito.ItoLimit`: ``f``, ``g_prod``); ``noise_type`` its
    noise structure (the pair's ``noise_type``). The scheme keeps ``self.sde``, the form it integrates
    (``f``, ``g_prod``, and ``g`` when it needs the matrix). Subclasses implement :meth:`step` (and
    :meth:`init_state` if they carry state from step to step), or override :meth:`integrate`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    sde_type: ClassVar[str] = "ito"
    noise_types: ClassVar[frozenset[str]] = frozenset(NOISE_TYPES)
    strong_orders: ClassVar[Mapping[str, float | None]] = {}
    drift_evaluations: ClassVar[int] = 1
    diffusion_evaluations: ClassVar[int] = 1
    needs_space_time_area: ClassVar[bool] = False
    needs_levy_area: ClassVar[bool] = False
    levy_area_orders: ClassVar[Mapping[str, float | None]] = {}
    needs_diffusion_matrix: ClassVar[bool] = False
    #: the weak order (of E φ(X_T)) where one is proved for the scheme, None otherwise (the multilevel study's α)
    weak_order: ClassVar[float | None] = None
    #: a comparison runs it only when named (schemes for another question: superlinear drifts, the multilevel
    #: estimator's fine solver); a comparison on a pair also leaves a scheme that ``needs_levy_area`` to be named
    #: (the path's m² area entries per step and sample, m = d² for res-1)
    on_request: ClassVar[bool] = False
    #: too costly to run by default on general noise (a comparison runs it there only when named)
    costly_on_general_noise: ClassVar[bool] = False

    def __init__(self, limit: ItoLimit, noise_type: str = "general", *, levy_areas: bool = False) -> None:
        if noise_type not in NOISE_TYPES:
            raise SchemeError(f"noise_type={noise_type!r} unknown (allowed: {', '.join(NOISE_TYPES)})")
        if getattr(limit, "sde_type", None) != "ito":
            raise SchemeError(f"scheme {self.name!r} takes the pair's Itô limit (limit_sde()); got "
                              f"{type(limit).__name__} of type {getattr(limit, 'sde_type', None)!r}")
        if noise_type not in self.noise_types:
            raise SchemeError(f"scheme {self.name!r} is valid for {', '.join(sorted(self.noise_types))} noise; "
                              f"this SDE's noise is {noise_type}")
        form = SDEFormWithMatrix if self.needs_diffusion_matrix else SDEForm
        self.limit = limit
        self.sde = form(limit, self.sde_type, noise_type)
        self.noise_type = noise_type
        #: whether the paths it is given carry full Lévy areas (which its :attr:`strong_order` may depend on)
        self.levy_areas = bool(levy_areas) or self.needs_levy_area

    @classmethod
    def supports(cls, noise_type: str) -> bool:
        """Whether the scheme is valid for SDEs with this noise structure."""
        return noise_type in cls.noise_types

    @property
    def strong_order(self) -> float | None:
        """The theory strong order for this SDE's noise structure (the most specific entry declared), or None
        where the scheme's authors guarantee none beyond a general bound it exceeds (reported, not checked)."""
        orders = {**self.strong_orders, **self.levy_area_orders} if self.levy_areas else self.strong_orders
        for kind in (self.noise_type, "commutative" if self.noise_type in ("diagonal", "scalar") else None,
                     "general"):
            if kind in orders:
                return orders[kind]
        return None

    @property
    def evaluations(self) -> int:
        """Evaluations of the drift plus the diffusion per step (the cost axis)."""
        return self.drift_evaluations + self.diffusion_evaluations

    def init_state(self, t: float, h0: torch.Tensor) -> Any:
        """The scheme's state carried between steps (None for a one-step method)."""
        return None

    @abc.abstractmethod
    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        """h at t + Δt from h at t and the path's increment over the step; returns (h, state)."""

    def integrate(self, h0: torch.Tensor, path: Any, steps: int, t1: float = 1.0) -> torch.Tensor:
        """H at t1 after ``steps`` equal steps from H_0 = h0 at t = 0, reading ``path(t, t + Δt)`` (and
        its space-time area with ``return_U=True`` when the scheme needs it)."""
        if self.needs_levy_area and getattr(path, "levy_areas", None) is None:
            raise SchemeError(f"scheme {self.name!r} reads the Lévy areas of the path, and this path has none "
                              "(record it with limits.brownian.record_path(..., areas='levy'))")
        dt = t1 / steps
        h, state = h0, self.init_state(0.0, h0)
        for k in range(steps):
            t = k * dt
            if self.needs_levy_area:
                w, u, a = path(t, t + dt, return_U=True, return_A=True)
                increment = PathIncrement(w, u / dt - 0.5 * w, a)
            elif self.needs_space_time_area:
                w, u = path(t, t + dt, return_U=True)
                increment = PathIncrement(w, u / dt - 0.5 * w)
            else:
                increment = PathIncrement(path(t, t + dt))
            h, state = self.step(t, dt, h, increment, state)
        return h
