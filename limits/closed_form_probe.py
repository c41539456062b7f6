"""The numerical half of :mod:`limits.closed_forms`: every closed form a pair and its limit have of their own,
compared with the generic form on a probe state before a run (:func:`check_pair`).

The generic forms: the diffusion matrix times a direction against ``g_prod`` of it; the derivative of the diffusion
and the Stratonovich correction against :class:`~limits.ito.ItoLimit`'s automatic differentiation of the diffusion
matrix (itself checked first); the tangents against forward differentiation of ``f``, ``g_prod`` or
``network_step``; ``drift_free`` against ``f`` = 0; an exact ODE solve against torchdiffeq at a tolerance of 1e-10.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .closed_forms import ClosedFormError, disagreements, owner
from .ito import ItoLimit, directional_derivative
from .pairs import ODEPair

__all__ = ["check_pair", "PROBE_TOLERANCE"]


#: the largest relative gap between a closed form and its generic form that :func:`check_pair` accepts, by dtype
PROBE_TOLERANCE = {torch.float64: 1e-8, torch.float32: 1e-4}
#: the probe's samples, time and seed (a generator of its own: the run's random streams are not touched)
PROBE_SAMPLES, PROBE_TIME, PROBE_SEED = 2, 0.375, 20261207


def _defined_beyond(obj: Any, base: type, name: str) -> bool:
    """``obj`` has ``name`` from a class other than ``base`` (a closed form of its own, not the generic one)."""
    defines = owner(type(obj), name)
    return defines is not None and defines is not base and getattr(obj, name, None) is not None


def _columns(function: Callable[[torch.Tensor], torch.Tensor], y: torch.Tensor, tangents: torch.Tensor
             ) -> torch.Tensor:
    """(∂function(y)) · T for every column of tangents T (N, d, C): (N, d, C), by automatic differentiation."""
    return torch.stack([directional_derivative(function, y, tangents[..., c]) for c in range(tangents.shape[-1])],
                       dim=-1)


def _sde_forms(pair: Any, h: torch.Tensor, draw: Callable[..., torch.Tensor]) -> dict[str, Callable[[], Any]]:
    limit, t, m = pair.limit_sde(), PROBE_TIME, pair.noise_dim
    v, tangents = draw(h.shape[0], m), draw(*h.shape, 2)
    forms: dict[str, Callable[[], Any]] = {}
    if getattr(limit, "drift_free", False):
        forms["drift_free"] = lambda: (limit.f(t, h), torch.zeros_like(h))
    if isinstance(limit, ItoLimit):
        def has(name: str) -> bool:
            return _defined_beyond(limit, ItoLimit, name)

        if has("f_and_g_prod"):
            forms["f_and_g_prod"] = lambda: (torch.cat(limit.f_and_g_prod(t, h, v), -1),
                                             torch.cat((limit.f(t, h), limit.g_prod(t, h, v)), -1))
        if has("diffusion_matrix"):
            forms["diffusion_matrix"] = lambda: ((limit.diffusion_matrix(t, h) @ v.unsqueeze(-1)).squeeze(-1),
                                                 limit.g_prod(t, h, v))
        if has("diffusion_derivative"):
            contracted = draw(*h.shape, m)
            forms["diffusion_derivative"] = lambda: (limit.diffusion_derivative(t, h, contracted),
                                                     ItoLimit.diffusion_derivative(limit, t, h, contracted))
        if has("stratonovich_correction"):
            forms["stratonovich_correction"] = lambda: (limit.stratonovich_correction(t, h),
                                                        ItoLimit.stratonovich_correction(limit, t, h))
        if has("f_tangent"):
            forms["f_tangent"] = lambda: (limit.f_tangent(t, h, tangents),
                                          _columns(lambda x: limit.f(t, x), h, tangents))
        if has("g_prod_tangent"):
            forms["g_prod_tangent"] = lambda: (limit.g_prod_tangent(t, h, v, tangents),
                                               _columns(lambda x: limit.g_prod(t, x, v), h, tangents))
    if getattr(pair, "network_tangent", None) is not None:
        dt = 1.0 / 16
        increment = draw(h.shape[0], m) * dt**0.5
        forms["network_tangent"] = lambda: (
            pair.network_tangent(h, t, dt, increment, tangents),
            _columns(lambda x: pair.network_step(x, t, dt, increment) - x, h, tangents))
    return forms


def _ode_forms(pair: Any, h: torch.Tensor) -> dict[str, Callable[[], Any]]:
    if not _defined_beyond(pair, ODEPair, "solve_limit"):
        return {}
    times = torch.tensor([0.0, 0.5, 1.0], dtype=h.dtype, device=h.device)
    tolerance = 1e-10 if h.dtype == torch.float64 else 1e-6
    return {"solve_limit": lambda: (pair.solve_limit(h, times, tolerance, tolerance),
                                    ODEPair.solve_limit(pair, h, times, tolerance, tolerance))}


def check_pair(pair: Any) -> None:
    """Compare every closed form ``pair`` and its limit have of their own with the generic form on a probe state (the
    initial states of a twin of the pair with :data:`PROBE_SAMPLES` samples, at t = :data:`PROBE_TIME`, with probe
    directions of a generator of its own); raise :class:`ClosedFormError` naming the class and each form that
    disagrees."""
    try:   # a twin with few samples (a limit may hold per-sample weights, so the probe's batch is the pair's)
        pair = type(pair)(pair.config, PROBE_SAMPLES, seed=pair.seed, dtype=pair.dtype, device=pair.device)
    except TypeError:   # a pair whose constructor takes other arguments: probed on all its own samples
        pass
    h = pair.initial_state().detach()
    generator = torch.Generator(device="cpu").manual_seed(PROBE_SEED)

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=torch.float64).to(dtype=h.dtype, device=h.device)

    forms = _sde_forms(pair, h, draw) if getattr(pair, "kind", None) == "sde" else _ode_forms(pair, h)
    # an ODE reference is solved to 1e-10, not to rounding: its tolerance is the solver's
    tolerance = (PROBE_TOLERANCE.get(h.dtype, 1e-4) if getattr(pair, "kind", None) == "sde"
                 else 1e-6 if h.dtype == torch.float64 else 1e-3)
    found = disagreements(forms, tolerance)
    if found:
        raise ClosedFormError(f"{type(pair).__name__}: a closed form disagrees with the methods it restates, so a "
                              f"scheme reading it would integrate another model: {'; '.join(found)}. Remove it (the "
                              "generic form is then used) or make it agree")
