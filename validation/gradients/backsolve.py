"""The backsolve adjoint of a pair's network against its exact backpropagation (Sander, Ablin & Peyré, NeurIPS 2022).

Layer k of the depth-L network (t_k = k/L, Δt = 1/L) is a map step_k(h) = h + Δ_k(h), Δ_k its residual branch.
For a loss ℓ(h_L) of the last state (:data:`validation.gradients.tangents.LOSSES`) the **exact** input gradient is
backpropagation through the stored forward states h_0, …, h_L:

    p_L = ∇ℓ(h_L),    p_k = (∂step_k/∂h)(h_k)ᵀ p_{k+1},    g_L = p_0 = ∂ℓ/∂h_0.

The **backsolve adjoint** keeps only h_L and rebuilds the states backwards, inverting each layer approximately
as one explicit Euler step of the ODE run in reverse, then backpropagates through the layer at the rebuilt state:

    h̃_L = h_L,    h̃_k = h̃_{k+1} − Δ_k(h̃_{k+1}),
    p̃_L = ∇ℓ(h_L),    p̃_k = (∂step_k/∂h)(h̃_k)ᵀ p̃_{k+1} = p̃_{k+1} + (∂Δ_k/∂h)(h̃_k)ᵀ p̃_{k+1},    g̃_L = p̃_0.

Both vector–Jacobian products are ``torch.func.vjp`` of the same layer function (:func:`layer`), so the two
gradients differ only through the states they are taken at: g̃_L − g_L is a consequence of the reconstruction
error h̃_k − h_k alone. Where Δ_k does not depend on h (a network whose Jacobians are constant: a linear or affine
block) the two gradients agree exactly, whatever the reconstruction error.

Per layer h̃_k − h_k = Δ_k(h_k) − Δ_k(h_k + Δ_k(h_k)) ≈ −Δ_k'(h_k) Δ_k(h_k) (one-step inversion defect):

* ODE pairs (smooth weights, Δ_k = O(1/L)): O(1/L²) per layer, O(1/L) over the L layers — g̃_L → g_L at rate 1;
* res-1 with i.i.d. weights (an SDE pair, Δ_k = O(L^-1/2)): O(1/L) per layer *with a non-zero mean*
  (E[ΔB D ΔB] σ = (s²/d) Δt σ'σ componentwise), which sums to an O(1) drift: the reverse Euler scheme solves another
  SDE, the reconstruction error and the gradient error tend to non-zero constants and do not decay with L.

SDE pairs read a :class:`~limits.brownian.BrownianGrid` of ``reference_steps`` fine steps (default: the deepest
depth), seeded by ``seed``: layer k of depth L reads the increment ``path(t_k, t_k + Δt)`` of that one path, at
every depth. ODE pairs read their own smooth weights at t_k (as :mod:`validation.gradients.tangents` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
import torchsde
from torch.func import vjp

from limits.brownian import BrownianGrid
from limits.pairs import ODEPair, Pair, SDEPair
from validation.gradients.tangents import LOSSES

__all__ = ["BacksolveErrors", "layer", "exact_gradient", "backsolve_gradient", "backsolve_errors"]

Layer = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class BacksolveErrors:
    """Per-sample squared errors of the backsolve adjoint, depth by depth.

    Attributes:
        depths: the depths L.
        gradient_sq: ‖g̃_L − g_L‖² per sample and depth, shape (N, len(depths)).
        reconstruction_sq: ‖h̃_0 − h_0‖² per sample and depth, shape (N, len(depths)).
        gradient_scale: ‖g_L‖² per sample and depth, shape (N, len(depths)) (to read the errors relatively).
    """

    depths: list[int]
    gradient_sq: np.ndarray
    reconstruction_sq: np.ndarray
    gradient_scale: np.ndarray


def layer(pair: Pair, depth: int, k: int, path: BrownianGrid | None = None) -> Layer:
    """Layer k (0 ≤ k < depth) of ``pair``'s depth-L network as a function h ↦ step_k(h) = h_{k+1}, h of shape (N, d).

    An SDE pair's layer reads the increment ``path(t_k, t_k + 1/L)`` (``path`` required); an ODE pair's reads its
    weights at t_k, ``pair.weights(torch.tensor([t_k]))`` (no ``path``). The weights are read once, here.
    """
    dt = 1.0 / depth
    t = k * dt
    if isinstance(pair, SDEPair):
        if path is None:
            raise ValueError(f"{pair.name} is an SDE pair: its layers need the Brownian path")
        increment = path(t, t + dt)
        return lambda h: pair.network_step(h, t, dt, increment)
    if isinstance(pair, ODEPair):
        if path is not None:
            raise ValueError(f"{pair.name} is an ODE pair: it reads its own smooth weights, pass no path")
        weights = tuple(w[0] for w in pair.weights(torch.tensor([t], dtype=pair.dtype, device=pair.device)))
        return lambda h: pair.network_step(h, t, dt, weights)
    raise TypeError(f"unsupported pair type {type(pair).__name__} (allowed: an SDEPair or an ODEPair)")


def _pullback(step: Layer, h: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """(∂step/∂h)(h)ᵀ p per sample (rows of h and p are samples; the layer acts on each row alone)."""
    _, pull = vjp(step, h)
    return pull(p)[0]


def exact_gradient(pair: Pair, depth: int, path: BrownianGrid | None, h0: torch.Tensor,
                   loss: str = "half-square") -> tuple[torch.Tensor, torch.Tensor]:
    """(g_L, h_L): backpropagation through the stored forward states h_0 … h_{L−1} (O(L N d) memory)."""
    layers = [layer(pair, depth, k, path) for k in range(depth)]
    states = [h0]
    for step in layers[:-1]:
        states.append(step(states[-1]))
    h_last = layers[-1](states[-1])
    p = LOSSES[loss](h_last)
    for step, h in zip(reversed(layers), reversed(states)):
        p = _pullback(step, h, p)
    return p, h_last


def backsolve_gradient(pair: Pair, depth: int, path: BrownianGrid | None, h_last: torch.Tensor,
                       loss: str = "half-square") -> tuple[torch.Tensor, torch.Tensor]:
    """(g̃_L, h̃_0): the backsolve adjoint from the network's output h_L alone (module docstring; O(N d) memory)."""
    h = h_last
    p = LOSSES[loss](h_last)
    for k in reversed(range(depth)):
        step = layer(pair, depth, k, path)
        h = 2 * h - step(h)                                  # h̃_k = h̃_{k+1} − Δ_k(h̃_{k+1}), Δ_k(x) = step(x) − x
        p = _pullback(step, h, p)
    return p, h


def _check(pair: Pair, depths: Sequence[int], loss: str, reference_steps: int | None) -> int | None:
    """The path's number of steps (None for an ODE pair); ValueError naming the bad value and what is allowed."""
    if loss not in LOSSES:
        raise ValueError(f"loss {loss!r} unknown (allowed: {', '.join(LOSSES)})")
    if not isinstance(pair, (SDEPair, ODEPair)):
        raise TypeError(f"unsupported pair type {type(pair).__name__} (allowed: an SDEPair or an ODEPair)")
    depths = list(depths)
    if not depths:
        raise ValueError("depths is empty (allowed: a list of integers ≥ 1)")
    for depth in depths:
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
            raise ValueError(f"depth L={depth!r} is out of range (allowed: an integer ≥ 1)")
    if isinstance(pair, ODEPair):
        if reference_steps is not None:
            raise ValueError(f"reference_steps={reference_steps!r} applies to SDE pairs only; {pair.name} is an ODE "
                             "pair reading its own smooth weights (pass reference_steps=None)")
        return None
    if reference_steps is None:
        steps = max(depths)
        if steps & (steps - 1):
            raise ValueError(f"depth L={steps} is not a power of two (allowed for an SDE pair: powers of two, which "
                             "the Brownian path's dyadic grid of max(depths) steps divides; or pass reference_steps)")
    else:
        steps = reference_steps
        if (isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1
                or steps & (steps - 1)):
            raise ValueError(f"reference_steps={steps!r} is out of range (allowed: a power of two that every depth "
                             "divides: the Brownian path's grid)")
    for depth in depths:
        if steps % depth:
            raise ValueError(f"depth L={depth} does not divide the path's {steps} steps (allowed: powers of two "
                             f"≤ {steps})")
    return int(steps)


def backsolve_errors(pair: Pair, depths: Sequence[int], *, seed: int, loss: str = "half-square",
                     reference_steps: int | None = None, path: torchsde.BaseBrownian | None = None) -> BacksolveErrors:
    """Per-sample ‖g̃_L − g_L‖², ‖h̃_0 − h_0‖² and ‖g_L‖² of the backsolve adjoint at each depth (module docstring).

    Args:
        pair: an :class:`~limits.pairs.SDEPair` or an :class:`~limits.pairs.ODEPair`, on its ``pair.samples`` samples.
        depths: the depths L (integers ≥ 1; for an SDE pair, powers of two dividing the path's steps).
        seed: the Brownian path's seed (SDE pairs; the convergence study's path with that seed). ODE pairs read their
            own weights, fixed by the pair's seed, and ignore it.
        loss: a name in :data:`validation.gradients.tangents.LOSSES` (``half-square``: ℓ = ½‖h_L‖²; ``sum``).
        reference_steps: fine steps of the Brownian path (SDE pairs only; None: the deepest depth).
        path: SDE pairs: the path already drawn (e.g. the gradient pass's recorded
            :class:`~limits.brownian.DyadicPath`, bit for bit the increments of the path of ``seed``), read instead of
            drawing it again.

    Raises:
        ValueError: an unknown loss, a depth < 1 (or not dividing the path's steps), a bad ``reference_steps`` —
            the message names the value and what is allowed.
    """
    steps = _check(pair, depths, loss, reference_steps)
    if steps is None:
        path = None
    elif path is None:
        path = BrownianGrid(pair.samples, pair.noise_dim, steps, seed=seed, dtype=pair.dtype, device=pair.device)
    elif tuple(path.shape) != (pair.samples, pair.noise_dim):
        raise ValueError(f"path of shape {tuple(path.shape)} does not match (samples, noise channels) = "
                         f"({pair.samples}, {pair.noise_dim})")
    h0 = pair.initial_state()
    gradient, reconstruction, scale = [], [], []
    for depth in depths:
        exact, h_last = exact_gradient(pair, int(depth), path, h0, loss)
        adjoint, h0_rebuilt = backsolve_gradient(pair, int(depth), path, h_last, loss)
        gradient.append((adjoint - exact).square().sum(1))
        reconstruction.append((h0_rebuilt - h0).square().sum(1))
        scale.append(exact.square().sum(1))
    as_numpy = lambda x: torch.stack(x, dim=1).detach().to(torch.float64).cpu().numpy()  # noqa: E731
    return BacksolveErrors([int(d) for d in depths], as_numpy(gradient), as_numpy(reconstruction), as_numpy(scale))
