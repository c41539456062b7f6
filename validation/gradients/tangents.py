"""The gradients of a pair's network and of its limit, on the same weights and path, in the engine's one pass.

For a loss ℓ(h_L) of the last state (:data:`LOSSES`: ``half-square`` ℓ = ½‖h_L‖², ∇ℓ = h_L; ``sum`` ℓ = Σ_i h_{L,i},
∇ℓ = 1) the study compares, network against limit (docs/theory.md §7):

* the input gradient ∂ℓ/∂h_0 = J_{0→L}ᵀ ∇ℓ(h_L);
* the backward state at time s, p(s) = ∂ℓ/∂h_{sL} = J_{s→L}ᵀ ∇ℓ(h_L) (the adjoint a(s) of the limit);
* the gradient with respect to the residual branch's multiplier θ, for the network h_{k+1} = h_k + θ Δ_k(h_k) and
  the limit dH = θ (f dt + g dB), at θ = 1: ∂ℓ/∂θ = ∇ℓ(h_L)ᵀ v_L with v = ∂h/∂θ.

**Forward-mode tangents.** Every one of them is a product ∇ℓᵀ·(a tangent), so the tangents are carried forward
beside the state — no layer is stored, memory is flat in the depth (backpropagation keeps every h_k). With a layer
h ↦ F_k(h) and its Jacobian ∂F_k:

    v_{k+1} = ∂F_k(h_k) v_k + (F_k(h_k) − h_k),        v_0 = 0,
    J^{(s)}_{k+1} = ∂F_k(h_k) J^{(s)}_k   for t_k ≥ s,     J^{(s)} = I_d before s,

one Jacobian–vector product per tangent column (``torch.func.jvp`` under ``vmap``). The augmented state
x = [h | v | J^{(s_1)} | …] (:class:`TangentLayout`) is handed to the engine as a pair of its own
(:class:`TangentSystem`): its network layer is the tangent map of the pair's layer, and its limit is the pair's limit
augmented with its first variation — dX = f_aug dt + g_aug dB for an SDE pair, whose Euler–Maruyama step *is* the
tangent map of the limit's Euler–Maruyama step, and the variational equation for an ODE pair, solved by dopri5 with the
same tolerances as the forward study. So the limit's gradients are its *discretise-then-optimise* gradients on the
convergence study's reference (the same path, the same seed, the same dyadic increments; the second reference gives
the floor), and the network's are exactly backpropagation's (tested against autograd to rounding).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
from torch.func import jvp, vmap

from limits.brownian import DyadicPath
from limits.ito import ItoLimit
from limits.pairs import ODEPair, Pair, SDEPair
from validation.core.one_pass import PathPass, ode_pass, sde_pass

__all__ = ["LOSSES", "QUANTITIES", "closed_form", "TangentLayout", "AugmentedLimit", "TangentSystem", "GradientErrors", "gradient_errors",
           "network_input_gradient", "loss_gradient", "merge_gradient_errors"]

#: ∇ℓ(h_L) of each loss the gradients can be taken of
LOSSES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "half-square": lambda h: h,
    "sum": torch.ones_like,
}


def loss_gradient(loss: str, h: torch.Tensor) -> torch.Tensor:
    """∇ℓ(h) for a loss of :data:`LOSSES` (ValueError naming the allowed ones otherwise)."""
    if loss not in LOSSES:
        raise ValueError(f"loss {loss!r} unknown (allowed: {', '.join(LOSSES)})")
    return LOSSES[loss](h)


@dataclass(frozen=True)
class TangentLayout:
    """The augmented state x = [h | T] of width d: T (N, d, C) row-major, its columns the tangents — column 0 is
    v = ∂h/∂θ, then d columns of J^{(s)} for each backward time s in ``times`` (increasing; 0 gives the input
    gradient)."""

    width: int
    times: tuple[float, ...]

    @property
    def columns(self) -> int:
        return 1 + self.width * len(self.times)

    @property
    def size(self) -> int:
        return self.width * (1 + self.columns)

    def initial(self, h0: torch.Tensor) -> torch.Tensor:
        """x_0 = [h_0 | v = 0 | J^{(s)} = I for every s]."""
        n, d = h0.shape
        tangents = torch.zeros(n, d, self.columns, dtype=h0.dtype, device=h0.device)
        for j in range(len(self.times)):
            tangents[:, :, 1 + j * d:1 + (j + 1) * d] = torch.eye(d, dtype=h0.dtype, device=h0.device)
        return torch.cat([h0, tangents.reshape(n, -1)], dim=1)

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(h (N, d), T (N, d, C)) of an augmented state."""
        d = self.width
        return x[:, :d], x[:, d:].reshape(x.shape[0], d, self.columns)

    def active(self, t: float) -> int:
        """The number of tangent columns that evolve on a step starting at t: v, and J^{(s)} for every s ≤ t."""
        return 1 + self.width * sum(s <= t + 1e-12 for s in self.times)

    def step(self, maps: Callable[[torch.Tensor], tuple[torch.Tensor, ...]], x: torch.Tensor, t: float,
             linear: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, ...]] | None = None
             ) -> tuple[torch.Tensor, ...]:
        """The tangent map of one step. ``maps(h)`` returns one or more parts of the step's increment (F(h) − h for a
        layer; (f, g·dB) for an SDE's drift and noise); returns, for each part P, the augmented [P(h) | ∂P·T + θ-term]
        with the θ-term P(h) on column 0, and 0 on the columns not yet active. ``linear(h, T)``, when the pair has
        closed forms, gives the parts' ∂P(h)·T for T (N, d, C) directly; else forward-mode autodiff takes them."""
        h, tangents = self.split(x)
        active = self.active(t)
        parts = maps(h)
        if linear is not None:
            pushed = linear(h, tangents[:, :, :active])
        else:
            # out_dims=0, then moved: an output that does not depend on h (a zero drift) comes back unbatched, and
            # vmap expands it along dimension 0 only
            pushed = tuple(push.movedim(0, 2) for push in
                           vmap(lambda column: jvp(maps, (h,), (column,))[1], in_dims=2)(tangents[:, :, :active]))
        out = []
        for part, push in zip(parts, pushed):
            push = push.clone()
            push[:, :, 0] += part
            full = torch.cat([push, torch.zeros_like(tangents[:, :, active:])], dim=2)
            out.append(torch.cat([part, full.reshape(x.shape[0], -1)], dim=1))
        return tuple(out)


def closed_form(obj: Any, tangents: dict[str, str]) -> bool:
    """Whether ``obj``'s closed-form tangents (``tangents``: map name → its tangent's name) can be used: each is set.
    A subclass that overrides a map (a user's pair built on res1, say) without its tangent has had the tangent
    withdrawn when it was defined (:mod:`limits.closed_forms`), so it falls back to autodiff instead of inheriting a
    wrong one."""
    return all(getattr(obj, tangent, None) is not None for tangent in tangents.values())


class AugmentedLimit(ItoLimit):
    """The limit SDE with its first variation, for ``torchsde.sdeint(method="euler")``: f_aug and g_aug·dB of
    x = [H | T] (:meth:`TangentLayout.step`); an Euler–Maruyama step of it is the tangent map of the limit's."""

    def __init__(self, limit: Any, layout: TangentLayout) -> None:
        super().__init__()
        self.limit = limit
        self.layout = layout
        self.closed_form = closed_form(limit, {"f": "f_tangent", "g_prod": "g_prod_tangent"})

    def _linear(self, t, *parts: str, v: torch.Tensor | None = None):
        if not self.closed_form:
            return None
        forms = {"f": lambda h, T: self.limit.f_tangent(t, h, T), "g": lambda h, T: self.limit.g_prod_tangent(t, h, v, T)}
        return lambda h, T: tuple(forms[p](h, T) for p in parts)

    def f_and_g_prod(self, t, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        drift, noise = self.layout.step(lambda h: (self.limit.f(t, h), self.limit.g_prod(t, h, v)), x, float(t),
                                        self._linear(t, "f", "g", v=v))
        return drift, noise

    def f(self, t, x: torch.Tensor) -> torch.Tensor:
        return self.layout.step(lambda h: (self.limit.f(t, h),), x, float(t), self._linear(t, "f"))[0]

    def g_prod(self, t, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.layout.step(lambda h: (self.limit.g_prod(t, h, v),), x, float(t), self._linear(t, "g", v=v))[0]


class TangentSystem:
    """A pair's network and limit with their tangents (:class:`TangentLayout`), presented to the one-pass engine as a
    pair: ``network_step`` is the tangent map of the pair's layer, ``limit_sde`` / ``solve_limit`` the limit with its
    first variation; everything else (samples, the path's channels, the weights) is the pair's."""

    def __init__(self, pair: Pair, times: tuple[float, ...]) -> None:
        self.pair = pair
        self.layout = TangentLayout(pair.width, tuple(sorted(times)))
        self.name = pair.name
        self.samples, self.dtype, self.device = pair.samples, pair.dtype, pair.device
        self.closed_form = closed_form(pair, {"network_step": "network_tangent"})
        if isinstance(pair, SDEPair):
            self.noise_dim = pair.noise_dim

    def initial_state(self) -> torch.Tensor:
        return self.layout.initial(self.pair.initial_state())

    def network_step(self, x: torch.Tensor, t: float, dt: float, driver: Any) -> torch.Tensor:
        step, tangent = self.pair.network_step, self.pair.network_tangent if self.closed_form else None
        linear = None if tangent is None else lambda h, T: (tangent(h, t, dt, driver, T),)
        return x + self.layout.step(lambda h: (step(h, t, dt, driver) - h,), x, t, linear)[0]

    # SDE pairs
    def limit_sde(self) -> Any:
        return AugmentedLimit(self.pair.limit_sde(), self.layout)

    # ODE pairs
    def weights(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.pair.weights(t)

    def limit_field(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.layout.step(lambda h: (self.pair.limit_field(t, h),), x, float(t))[0]

    def solve_limit(self, x0: torch.Tensor, times: torch.Tensor, rtol: float, atol: float,
                    method: str = "dopri5") -> torch.Tensor:
        """Solve the augmented limit, output at ``times``, in pieces that end at each tangent start s inside the span:
        on a piece the set of active tangent columns is constant, and it is read once, at the piece's start. An
        adaptive solver evaluates stages at a step's end and steps past a piece's end before interpolating back, so
        reading the columns at each stage's time would start J^{(s)} before s — a machine-dependent error of the
        reference, since rounding decides where the last step before s lands."""
        from torchdiffeq import odeint

        first, last = float(times[0]), float(times[-1])
        starts = sorted(s for s in self.layout.times if first + 1e-12 < s < last - 1e-12)
        out, x = [x0[None]], x0
        for a, b in zip([first] + starts, starts + [last]):
            inside = [float(t) for t in times if a + 1e-12 < float(t) < b - 1e-12]
            span = torch.tensor([a] + inside + [b], dtype=times.dtype, device=times.device)
            field = lambda t, y, a=a: self.layout.step(lambda h: (self.pair.limit_field(t, h),), y, a)[0]  # noqa: E731
            ys = odeint(field, x, span, rtol=rtol, atol=atol, method=method)
            x = ys[-1]
            keep = ys[1:] if any(abs(float(t) - b) <= 1e-12 for t in times) else ys[1:-1]
            out.append(keep)
        return torch.cat(out)


#: the quantities compared, network against limit: key → (what, how it is read from a final augmented state)
QUANTITIES: dict[str, str] = {
    "state": "the forward state h_L against H_1 (the convergence study's error, on the same run)",
    "input": "the input gradient ∂ℓ/∂h_0 against the adjoint a(0)",
    "branch": "the gradient ∂ℓ/∂θ with respect to the residual branch's multiplier θ (at θ = 1)",
}


def _backward_key(s: float) -> str:
    return "input" if s == 0 else f"backward@{s:g}"


def _read(layout: TangentLayout, x: torch.Tensor, loss: str) -> dict[str, torch.Tensor]:
    """Every quantity of a final augmented state: key → (N, k) values."""
    h, tangents = layout.split(x)
    grad = loss_gradient(loss, h)
    out = {"state": h, "branch": torch.einsum("ni,ni->n", grad, tangents[:, :, 0]).unsqueeze(1)}
    d = layout.width
    for j, s in enumerate(layout.times):
        jacobian = tangents[:, :, 1 + j * d:1 + (j + 1) * d]
        out[_backward_key(s)] = torch.einsum("nij,ni->nj", jacobian, grad)
    return out


@dataclass
class GradientErrors:
    """Per-sample squared errors of each quantity, network against the limit's reference.

    Attributes:
        depths: the depths L.
        keys: the quantities, in order (``state``, ``input``, ``backward@s`` for each other backward time s,
            ``branch``).
        squared: key → ‖network − reference‖² per sample and depth, (N, D).
        squared_second: key → the same against the second reference, (N, D).
        successive: key → ‖q_L − q_2L‖², (N, D − 1).
        reference_gap: key → ‖reference − second reference‖², (N,).
        scale: key → ‖reference‖², (N,) (to read the errors relative to the quantity's size).
        nonfinite_network: key → per depth, the samples with a NaN/inf value; ``nonfinite_reference``: key → count.
        reference: how the references were computed (the engine's description).
        reference_input: the limit's input gradient per sample, (N, d) (against which other ways of computing it are
            measured).
        path: with ``record_path``, the pass's Brownian path at the deepest depth's resolution
            (:class:`~limits.brownian.DyadicPath`, the same tree sums the networks read), for the adjoints and the
            backsolve to read without drawing it again; None otherwise (not saved).
    """

    depths: list[int]
    keys: list[str]
    squared: dict[str, np.ndarray]
    squared_second: dict[str, np.ndarray]
    successive: dict[str, np.ndarray]
    reference_gap: dict[str, np.ndarray]
    scale: dict[str, np.ndarray]
    nonfinite_network: dict[str, list[int]] = field(default_factory=dict)
    nonfinite_reference: dict[str, int] = field(default_factory=dict)
    reference: dict[str, Any] = field(default_factory=dict)
    reference_input: np.ndarray | None = None
    path: Any = None

    @property
    def samples(self) -> int:
        return next(iter(self.scale.values())).shape[0]


def _numpy(x: torch.Tensor) -> np.ndarray:
    return x.detach().to(torch.float64).cpu().numpy()


def gradient_errors(pair: Pair, depths: list[int], *, seed: int, loss: str = "half-square",
                    backward_times: tuple[float, ...] = (0.0, 0.5), reference_steps: int | None = None,
                    rtol: float = 1e-10, atol: float = 1e-10, noise_dtype: torch.dtype | None = None,
                    record_path: bool = False, progress: bool = False) -> GradientErrors:
    """The network's gradients at every depth against the limit's, in one pass (module docstring).

    Args:
        pair: the pair (its samples, width, dtype and device; SDE pairs read the
            :class:`~limits.brownian.BrownianGrid` of ``reference_steps`` steps seeded by ``seed``, the path of the
            convergence study with that seed; ODE pairs read their own smooth weights).
        depths: increasing powers of two (SDE: below ``reference_steps``).
        seed: the path's seed.
        loss: a key of :data:`LOSSES`.
        backward_times: the times s of the backward states p(s), dyadic in [0, 1) (0: the input gradient, always
            included).
        reference_steps, noise_dtype: SDE pairs: the Euler reference's steps (the second: half) and the type the path's
            normals are drawn in; rtol, atol: ODE pairs: dopri5's tolerances (the second: 100× looser).
        record_path: SDE pairs: keep the path's increments at the deepest depth (K·N·m numbers, K = max(depths)) in
            :attr:`GradientErrors.path`.
        progress: a progress bar over the path.
    """
    loss_gradient(loss, torch.zeros(1))
    times = tuple(sorted({0.0, *(float(s) for s in backward_times)}))
    for s in times:
        if not 0 <= s < 1 or any(s * L != int(s * L) for L in depths):
            raise ValueError(f"backward time {s:g} must lie in [0, 1) on the grid of every depth {list(depths)}")
    system = TangentSystem(pair, times)
    if isinstance(pair, SDEPair):
        if reference_steps is None:
            raise ValueError("an SDE pair needs reference_steps")
        result: PathPass = sde_pass(system, list(depths), reference_steps, seed, progress=progress,  # type: ignore[arg-type]
                                    noise_dtype=noise_dtype, record_steps=depths[-1] if record_path else None)
    elif isinstance(pair, ODEPair):
        result = ode_pass(system, list(depths), rtol=rtol, atol=atol, progress=progress)  # type: ignore[arg-type]
    else:
        raise TypeError(f"unsupported pair type {type(pair).__name__}")
    layout = system.layout
    networks = [_read(layout, x, loss) for x in result.states["network"]]
    reference, second = _read(layout, result.reference, loss), _read(layout, result.second, loss)
    keys = ["state", *(_backward_key(s) for s in times), "branch"]

    def sq(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a - b).square().sum(1)

    def nonfinite(x: torch.Tensor) -> int:
        return int((~torch.isfinite(x)).any(-1).sum())

    def stacked(values: list[torch.Tensor], width: int) -> np.ndarray:
        return _numpy(torch.stack(values, dim=1)) if values else np.zeros((pair.samples, width))

    return GradientErrors(
        depths=list(depths), keys=keys,
        squared={k: stacked([sq(net[k], reference[k]) for net in networks], 0) for k in keys},
        squared_second={k: stacked([sq(net[k], second[k]) for net in networks], 0) for k in keys},
        successive={k: stacked([sq(a[k], b[k]) for a, b in zip(networks, networks[1:])], 0) for k in keys},
        reference_gap={k: _numpy(sq(reference[k], second[k])) for k in keys},
        scale={k: _numpy(reference[k].square().sum(1)) for k in keys},
        nonfinite_network={k: [nonfinite(net[k]) for net in networks] for k in keys},
        nonfinite_reference={k: nonfinite(reference[k]) for k in keys},
        reference=dict(result.info, augmented_width=layout.size),
        reference_input=_numpy(reference["input"]),
        path=DyadicPath(result.recorded) if result.recorded is not None else None,
    )


def network_input_gradient(pair: Pair, depth: int, path: Any, h0: torch.Tensor, loss: str = "half-square"
                           ) -> torch.Tensor:
    """∂ℓ/∂h_0 of the depth-L network by reverse-mode autograd through a plain loop of its layers (memory grows with
    L: the reference implementation the one-pass tangents are tested against, and the backprop of the memory
    benchmark). ``path`` is the SDE pair's Brownian path (None for an ODE pair)."""
    from limits.pairs import run_network

    with torch.enable_grad():
        x = h0.detach().clone().requires_grad_(True)
        h = run_network(pair, depth, path, x)
        (grad,) = torch.autograd.grad(h, x, grad_outputs=loss_gradient(loss, h.detach()))
    return grad


def merge_gradient_errors(parts: list[GradientErrors]) -> GradientErrors:
    """The errors of consecutive blocks of samples as one set: per-sample arrays concatenated in block order,
    non-finite counts added (as :func:`validation.core.one_pass.merge_errors` does for the forward errors)."""
    if not parts:
        raise ValueError("no blocks to merge")
    first = parts[0]
    if len(parts) == 1:
        return first

    def join(name: str) -> dict[str, np.ndarray]:
        return {k: np.concatenate([getattr(part, name)[k] for part in parts]) for k in first.keys}

    return GradientErrors(
        depths=list(first.depths), keys=list(first.keys), squared=join("squared"),
        squared_second=join("squared_second"), successive=join("successive"), reference_gap=join("reference_gap"),
        scale=join("scale"),
        nonfinite_network={k: [sum(v) for v in zip(*(p.nonfinite_network[k] for p in parts))] for k in first.keys},
        nonfinite_reference={k: sum(p.nonfinite_reference[k] for p in parts) for k in first.keys},
        reference=dict(first.reference, sample_blocks=len(parts)),
        reference_input=np.concatenate([p.reference_input for p in parts]),
    )
