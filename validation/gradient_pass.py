"""The input gradient of a pair's network and of its limit, on the same weights and path, by forward-mode tangents.

For a loss ℓ(h_L) of the last state (``half-square``: ℓ = ½‖h_L‖², ∇ℓ = h_L; ``sum``: ℓ = Σ_i h_{L,i}, ∇ℓ = 1),
the gradient with respect to the input is

    ∂ℓ/∂h_0 = J_Lᵀ ∇ℓ(h_L),     J_{k+1} = (∂ step_k / ∂h)(h_k) J_k,   J_0 = I_d,

with step_k the network's layer k (or a step of the limit's scheme). J is carried forward beside h — d
Jacobian–vector products per layer (``torch.func.jvp`` under ``vmap``), O(N d²) memory whatever the depth, where
backpropagation through the layers would keep every h_k. The same recursion through the limit's fine scheme is
its *discretise-then-optimise* gradient (the exact gradient of the reference solve):

* SDE pairs: Euler–Maruyama of the limit (Itô, ``f`` and ``g_prod``) on ``reference_steps`` steps of the
  :class:`~limits.brownian.BrownianGrid` the networks read — the convergence study's reference, on its path
  (the same seed, the same dyadic increments); a second reference at half the steps bounds its error;
* ODE pairs: the classical Runge–Kutta scheme on ``reference_steps`` steps of the limit field (and half as many).

The per-sample squared errors ‖∂ℓ/∂h_0(network, L) − ∂ℓ/∂h_0(limit)‖² feed the package's rate fits
(:func:`validation.stats.fit_rate`). This is the first piece of the gradient study (the adjoint methods, the
parameter gradients and the memory axis come on top of it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch.func import jvp, vmap

from limits.brownian import BrownianGrid
from limits.pairs import ODEPair, Pair, SDEPair

__all__ = ["LOSSES", "GradientErrors", "tangent_step", "input_gradient_errors"]

#: ∇ℓ(h_L) of each loss the gradients can be taken of
LOSSES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "half-square": lambda h: h,
    "sum": torch.ones_like,
}


@dataclass
class GradientErrors:
    """Per-sample squared errors of the input gradient.

    Attributes:
        depths: the depths L.
        squared: ‖g_L − g_ref‖² per sample and depth, shape (N, len(depths)).
        reference_gap: ‖g_ref − g_ref2‖² per sample (the second reference at half the steps), shape (N,).
        gradient_scale: ‖g_ref‖² per sample, shape (N,) (to read the errors relative to the gradient).
    """

    depths: list[int]
    squared: np.ndarray
    reference_gap: np.ndarray
    gradient_scale: np.ndarray


def tangent_step(step: Callable[[torch.Tensor], torch.Tensor], h: torch.Tensor,
                 jacobian: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(step(h), ∂step/∂h · J) for h (N, d) and J (N, d, d): one Jacobian–vector product per column of J."""
    pushed = vmap(lambda v: jvp(step, (h,), (v,))[1], in_dims=2, out_dims=2)(jacobian)
    return step(h), pushed


def _gradient(h: torch.Tensor, jacobian: torch.Tensor, loss: str) -> torch.Tensor:
    """J_Lᵀ ∇ℓ(h_L), shape (N, d)."""
    return torch.einsum("nij,ni->nj", jacobian, LOSSES[loss](h))


def _identity(h0: torch.Tensor) -> torch.Tensor:
    return torch.eye(h0.shape[1], dtype=h0.dtype, device=h0.device).expand(h0.shape[0], -1, -1).clone()


def _network_gradient(pair: Pair, depth: int, path: BrownianGrid | None, h0: torch.Tensor, loss: str) -> torch.Tensor:
    h, jacobian = h0, _identity(h0)
    dt = 1.0 / depth
    for k in range(depth):
        t = k * dt
        if isinstance(pair, SDEPair):
            increment = path(t, t + dt)
            step = lambda x: pair.network_step(x, t, dt, increment)  # noqa: E731, B023 (used at once)
        else:
            weights = tuple(w[0] for w in pair.weights(torch.tensor([t], dtype=pair.dtype, device=pair.device)))
            step = lambda x: pair.network_step(x, t, dt, weights)  # noqa: E731, B023
        h, jacobian = tangent_step(step, h, jacobian)
    return _gradient(h, jacobian, loss)


def _limit_gradient(pair: Pair, steps: int, path: BrownianGrid | None, h0: torch.Tensor, loss: str) -> torch.Tensor:
    h, jacobian = h0, _identity(h0)
    dt = 1.0 / steps
    if isinstance(pair, SDEPair):
        sde = pair.limit_sde()
        for k in range(steps):
            t = k * dt
            increment = path(t, t + dt)
            step = lambda x: x + sde.f(t, x) * dt + sde.g_prod(t, x, increment)  # noqa: E731, B023
            h, jacobian = tangent_step(step, h, jacobian)
    else:
        field = pair.limit_field
        for k in range(steps):
            t = k * dt

            def step(x: torch.Tensor, t: float = t) -> torch.Tensor:     # classical Runge–Kutta, order 4
                k1 = field(t, x)
                k2 = field(t + dt / 2, x + dt / 2 * k1)
                k3 = field(t + dt / 2, x + dt / 2 * k2)
                k4 = field(t + dt, x + dt * k3)
                return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

            h, jacobian = tangent_step(step, h, jacobian)
    return _gradient(h, jacobian, loss)


def input_gradient_errors(pair: Pair, depths: list[int], *, reference_steps: int, seed: int,
                          loss: str = "half-square") -> GradientErrors:
    """‖∂ℓ/∂h_0 of the depth-L network − that of the limit's reference‖² per sample (module docstring).

    SDE pairs read the :class:`~limits.brownian.BrownianGrid` of ``reference_steps`` steps seeded by ``seed`` (the
    path of the convergence study with that seed); ODE pairs read their own smooth weights. Every depth must
    divide ``reference_steps`` (an even number: the second reference takes half of them).
    """
    if loss not in LOSSES:
        raise ValueError(f"loss {loss!r} unknown (allowed: {', '.join(LOSSES)})")
    if reference_steps < 2 or reference_steps % 2:
        raise ValueError(f"reference_steps={reference_steps} must be an even number ≥ 2")
    for depth in depths:
        if depth < 1 or reference_steps % depth:
            raise ValueError(f"depth L={depth} must divide reference_steps={reference_steps}")
    if not isinstance(pair, (SDEPair, ODEPair)):
        raise TypeError(f"unsupported pair type {type(pair).__name__}")
    path = (BrownianGrid(pair.samples, pair.noise_dim, reference_steps, seed=seed, dtype=pair.dtype, device=pair.device)
            if isinstance(pair, SDEPair) else None)
    h0 = pair.initial_state()
    reference = _limit_gradient(pair, reference_steps, path, h0, loss)
    second = _limit_gradient(pair, reference_steps // 2, path, h0, loss)
    squared = torch.stack([(_network_gradient(pair, depth, path, h0, loss) - reference).square().sum(1)
                           for depth in depths], dim=1)
    as_numpy = lambda x: x.detach().to(torch.float64).cpu().numpy()  # noqa: E731
    return GradientErrors(list(depths), as_numpy(squared), as_numpy((reference - second).square().sum(1)),
                          as_numpy(reference.square().sum(1)))
