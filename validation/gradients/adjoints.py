"""The limit's input gradient ∂ℓ/∂H_0 by optimise-then-discretise adjoints, on the path the networks read.

:mod:`validation.gradients.tangents` differentiates the limit's *discretised* solve (discretise-then-optimise: forward
tangents through Euler–Maruyama or RK4). This module computes the same gradient the other way round: the
continuous adjoint equation is solved backwards in time and then discretised (optimise-then-discretise).

**SDE pairs** (torchsde's stochastic adjoint, Li et al. 2020). For dH = f(t, H) dt + g(t, H) dB on [0, 1] and a
loss ℓ(H_1) of the final state (:data:`validation.gradients.tangents.LOSSES`), the adjoint a_t = ∂ℓ/∂H_t solves,
backwards from a_1 = ∇ℓ(H_1) and in the Stratonovich form dH = f̃ dt + g ∘ dB (f̃ = f − c, the drift without
the Itô correction c_k = ½ Σ_j Σ_l ∂_l g_{kj} g_{lj}),

    d a_t = − a_t ∂_H f̃(t, H_t) dt − Σ_j a_t ∂_H g_{·j}(t, H_t) ∘ dB^j_t,      ∂ℓ/∂H_0 = a_0,

together with H itself run backwards (dH = f̃ dt + g ∘ dB read from t = 1 to 0). Both are driven by **the same
Brownian path**: torchsde's ``ReverseBrownian`` asks the forward path for ``path(t_k, t_{k+1})`` whenever the
backward solve steps over [−t_{k+1}, −t_k] (it does not negate the increment: the adjoint SDE returns negated drift
and diffusion instead). :class:`RecordingBrownian` records those queries, which is how the tests prove that the
adjoint read the network's path, interval by interval, bit for bit.

The methods (:data:`ADJOINT_METHODS`):

* ``euler``: the Itô form (f, and the matrix g: torchsde's Itô general-noise adjoint needs g itself to form the
  double Stratonovich correction and the conversion of the adjoint back to Itô form), Euler–Maruyama forwards and
  backwards. The backward Euler solve is a different discretisation of the adjoint from the exact gradient of the
  forward Euler solve (:func:`sde_autograd_gradient`): the two differ by O(Δt^½) per sample (strong order ½).
  It is slow for many noise channels: torchsde's Itô general-noise adjoint takes a Jacobian–vector and two
  vector–Jacobian products per column of g at every step (3m autograd calls; res-1 at width 10 has m = 100);
* ``midpoint``: the Stratonovich form f − c, the explicit midpoint scheme forwards and backwards (measured on res-1:
  O(Δt) from the exact gradient of its forward solve);
* ``reversible_heun``: the Stratonovich form, the reversible Heun scheme forwards and its algebraic reverse
  ``adjoint_reversible_heun`` backwards (Kidger et al. 2021, "Efficient and accurate gradients for neural SDEs"):
  the backward pass reconstructs the forward states exactly and its gradient is *the exact gradient of the
  discretised forward solve* — :func:`sde_autograd_gradient` with the same method, to rounding.

The backward solve keeps O(N d) numbers (plus one d × m matrix per sample for g) whatever the number of steps;
:func:`sde_autograd_gradient`, the discretise-then-optimise counterpart through torchsde's own solver, keeps
every step's graph.

**ODE pairs** (torchdiffeq's adjoint, Chen et al. 2018). For dH/dt = F(t, H) the adjoint solves
d a/dt = −a ∂_H F(t, H_t) backwards from a_1 = ∇ℓ(H_1) (with H re-solved backwards alongside):
:func:`ode_adjoint_gradient`, and :func:`ode_autograd_gradient` differentiates the forward ``odeint`` itself.
For a linear field (``res1-ode`` with the identity activation: F = V_t H) both are exact up to the solver's
tolerance.

Forms: the limit is the pair's Itô SDE ``pair.limit_sde()`` (:class:`limits.ito.ItoLimit`); the form a method
integrates is :class:`limits.ito.SDEFormWithMatrix` (``f`` or ``f − c``, ``g_prod`` and the matrix ``g``), as
:mod:`validation.solvers` builds it for the schemes of :mod:`limits.schemes`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, NamedTuple

import torch
import torchsde
from torch import nn

from limits.ito import ItoLimit, SDEFormWithMatrix
from limits.pairs import ODEPair, Pair, SDEPair
from validation.gradients.tangents import LOSSES

__all__ = [
    "AdjointMethod", "ADJOINT_METHODS", "ODE_FIXED_METHODS", "ODE_ADAPTIVE_METHODS", "BrownianQuery",
    "RecordingBrownian", "sde_form", "sde_adjoint_gradient", "sde_autograd_gradient", "ode_adjoint_gradient",
    "ode_autograd_gradient",
]


@dataclass(frozen=True)
class AdjointMethod:
    """One way to differentiate the limit SDE's solve by the stochastic adjoint.

    Attributes:
        name: the key in :data:`ADJOINT_METHODS`.
        method: torchsde's forward method.
        adjoint_method: torchsde's method for the backward (adjoint) solve.
        sde_type: the form integrated, ``"ito"`` (f) or ``"stratonovich"`` (f − c).
        description: one line.
    """

    name: str
    method: str
    adjoint_method: str
    sde_type: str
    description: str


#: The adjoint methods by name (module docstring).
ADJOINT_METHODS: Mapping[str, AdjointMethod] = MappingProxyType({
    "euler": AdjointMethod("euler", "euler", "euler", "ito",
                           "Euler-Maruyama forwards and backwards on the Itô form (needs g; O(dt^1/2) from autograd)"),
    "midpoint": AdjointMethod("midpoint", "midpoint", "midpoint", "stratonovich",
                              "explicit midpoint forwards and backwards on the Stratonovich form"),
    "reversible_heun": AdjointMethod("reversible_heun", "reversible_heun", "adjoint_reversible_heun", "stratonovich",
                                     "reversible Heun and its algebraic reverse (Kidger et al. 2021): the exact "
                                     "gradient of the discretised solve"),
})

#: torchdiffeq's fixed-step methods (taken with ``steps``)
ODE_FIXED_METHODS: tuple[str, ...] = ("euler", "midpoint", "heun2", "heun3", "rk4", "explicit_adams", "implicit_adams",
                                      "fixed_adams")
#: torchdiffeq's adaptive methods (taken with ``rtol`` and ``atol``)
ODE_ADAPTIVE_METHODS: tuple[str, ...] = ("dopri5", "dopri8", "bosh3", "fehlberg2", "adaptive_heun")


# ------------------------------------------------------------------------------------------------ the path
class BrownianQuery(NamedTuple):
    """One call of a Brownian path: the times asked for (``tb`` None for B(ta) − B(0)) and what came back."""

    ta: float
    tb: float | None
    value: Any


class RecordingBrownian(torchsde.BaseBrownian):
    """A torchsde Brownian object that forwards every call to ``path`` and records it.

    Each call ``(ta, tb, return_U, return_A)`` is passed on unchanged; the times (as floats) and the returned
    tensor (or tuple of tensors) are appended to :attr:`queries`. torchsde's ``ReverseBrownian`` wraps this object
    in the backward pass of ``sdeint_adjoint``, so the queries it records there are the *forward-time* intervals
    (t_k, t_{k+1}) the adjoint read.

    Args:
        path: any torchsde ``BaseBrownian`` (a :class:`~limits.brownian.BrownianGrid`, a
            :class:`~limits.brownian.DyadicPath`, …).
    """

    __slots__ = ("path", "queries")

    def __init__(self, path: torchsde.BaseBrownian) -> None:
        if not isinstance(path, torchsde.BaseBrownian):
            raise TypeError(f"path must be a torchsde BaseBrownian; got {type(path).__name__}")
        self.path = path
        self.queries: list[BrownianQuery] = []

    def __call__(self, ta, tb=None, return_U: bool = False, return_A: bool = False):
        value = self.path(ta, tb, return_U=return_U, return_A=return_A)
        self.queries.append(BrownianQuery(float(ta), None if tb is None else float(tb), value))
        return value

    def __repr__(self) -> str:
        return f"RecordingBrownian({self.path!r}, queries={len(self.queries)})"

    @property
    def dtype(self) -> torch.dtype:
        return self.path.dtype

    @property
    def device(self) -> torch.device:
        return self.path.device

    @property
    def shape(self) -> tuple[int, ...]:
        return self.path.shape

    @property
    def levy_area_approximation(self) -> str:
        return self.path.levy_area_approximation


# ------------------------------------------------------------------------------------------------ checks
def _check_loss(loss: str) -> None:
    if loss not in LOSSES:
        raise ValueError(f"loss {loss!r} unknown (allowed: {', '.join(LOSSES)})")


def _check_steps(steps: Any) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps={steps!r} must be an integer ≥ 1")
    return steps


def _check_h0(pair: Pair, h0: torch.Tensor) -> None:
    if not isinstance(h0, torch.Tensor) or h0.dim() != 2 or h0.shape[1] != pair.width:
        shape = tuple(h0.shape) if isinstance(h0, torch.Tensor) else type(h0).__name__
        raise ValueError(f"h0 of shape {shape} must be (N, {pair.width}) for {pair.name} (width {pair.width})")


def _adjoint_method(method: str) -> AdjointMethod:
    if method not in ADJOINT_METHODS:
        raise ValueError(f"method {method!r} unknown (allowed: {', '.join(ADJOINT_METHODS)})")
    return ADJOINT_METHODS[method]


def _pair_of_kind(pair: Any, kind: type) -> Any:
    """``pair`` if it is an SDEPair / ODEPair as ``kind`` asks; else TypeError naming the adjoint to use instead."""
    if not isinstance(pair, kind):
        sde = kind is SDEPair
        other = (ODEPair if sde else SDEPair)
        what = f"an {'ODE' if sde else 'SDE'} pair" if isinstance(pair, other) else type(pair).__name__
        raise TypeError(f"{getattr(pair, 'name', pair)!r} is {what}: the {'SDE' if sde else 'ODE'} adjoints take an "
                        f"{kind.__name__} (use {'ode' if sde else 'sde'}_adjoint_gradient for an "
                        f"{'ODE' if sde else 'SDE'} pair)")
    return pair


def _check_path(pair: SDEPair, path: Any, h0: torch.Tensor, steps: int) -> None:
    if not isinstance(path, torchsde.BaseBrownian):
        raise TypeError(f"path must be a torchsde BaseBrownian (BrownianGrid, DyadicPath); got {type(path).__name__}")
    expected = (h0.shape[0], pair.noise_dim)
    if tuple(path.shape) != expected:
        raise ValueError(f"path of shape {tuple(path.shape)} does not match (samples, noise channels) = {expected} "
                         f"of {pair.name}")
    if path.dtype != h0.dtype:
        raise ValueError(f"path of dtype {path.dtype} differs from h0's {h0.dtype}")
    t1 = getattr(path, "t1", 1.0)
    if float(t1) != 1.0:
        raise ValueError(f"the path runs on [0, {t1}]; the limit is solved on [0, 1] (build the path with t1=1)")
    grid = getattr(path, "steps", None)
    if isinstance(grid, int) and grid % steps:
        raise ValueError(f"steps={steps} must divide the path's {grid} grid steps")


# ------------------------------------------------------------------------------------------------ SDE pairs
def sde_form(pair: SDEPair, sde_type: str = "ito") -> SDEFormWithMatrix:
    """The form of ``pair``'s Itô limit a torchsde method integrates, with the matrix g.

    ``sde_type`` ``"ito"``: drift f; ``"stratonovich"``: f − c, c the Itô–Stratonovich correction
    (:meth:`limits.ito.ItoLimit.stratonovich_correction`). A limit that sets no ``noise_channels`` gets
    ``pair.noise_dim`` (as :mod:`validation.solvers` does): g is assembled column by column from ``g_prod``.

    Raises:
        ValueError: for an unknown ``sde_type``, or a Stratonovich form of a limit that keeps
            :class:`~limits.ito.ItoLimit`'s generic correction (it is computed on detached states, so its
            derivative — which the adjoint needs — would be missing).
    """
    if sde_type not in ("ito", "stratonovich"):
        raise ValueError(f"sde_type {sde_type!r} unknown (allowed: ito, stratonovich)")
    limit = _pair_of_kind(pair, SDEPair).limit_sde()
    if getattr(limit, "noise_channels", 1) < 1:
        limit.noise_channels = pair.noise_dim
    if sde_type == "stratonovich" and type(limit).stratonovich_correction is ItoLimit.stratonovich_correction:
        raise ValueError(f"{pair.name}'s limit has no closed-form stratonovich_correction: the generic one detaches "
                         "the state, so Stratonovich gradients would miss its derivative (use method 'euler')")
    return SDEFormWithMatrix(limit, sde_type, pair.noise_type)


def _sde_setup(pair: Any, path: Any, h0: torch.Tensor, steps: int, loss: str, method: str
               ) -> tuple[SDEPair, AdjointMethod, SDEFormWithMatrix, torch.Tensor, torch.Tensor, float]:
    pair = _pair_of_kind(pair, SDEPair)
    _check_loss(loss)
    spec = _adjoint_method(method)
    steps = _check_steps(steps)
    _check_h0(pair, h0)
    _check_path(pair, path, h0, steps)
    form = sde_form(pair, spec.sde_type)
    ts = torch.tensor([0.0, 1.0], dtype=h0.dtype, device=h0.device)
    start = h0.detach().clone().requires_grad_(True)
    return pair, spec, form, ts, start, 1.0 / steps


def _gradient(final: torch.Tensor, start: torch.Tensor, loss: str) -> torch.Tensor:
    """∂ℓ/∂h_0 from the final state: the vector–Jacobian product with ∇ℓ(h_1) = LOSSES[loss](h_1)."""
    (grad,) = torch.autograd.grad(final, start, grad_outputs=LOSSES[loss](final.detach()))
    return grad


def sde_adjoint_gradient(pair: SDEPair, path: torchsde.BaseBrownian, h0: torch.Tensor, steps: int, *,
                         loss: str = "half-square", method: str = "euler") -> torch.Tensor:
    """∂ℓ/∂h_0 of the limit SDE's solve by torchsde's stochastic adjoint (optimise-then-discretise).

    The limit dH = f dt + g dB (Itô; or its Stratonovich form, per :data:`ADJOINT_METHODS`) is solved on [0, 1]
    with ``torchsde.sdeint_adjoint`` at the fixed step Δt = 1/``steps`` on ``path``; the backward pass solves the
    adjoint SDE

        d a = − a ∂_H f̃ dt − Σ_j a ∂_H g_{·j} ∘ dB^j,     a_1 = ∇ℓ(H_1),     ∂ℓ/∂h_0 = a_0

    backwards with ``adjoint_method`` on the same path (module docstring). Per sample, ℓ(H_1) is ½‖H_1‖²
    (``half-square``) or Σ_i H_{1,i} (``sum``).

    Args:
        pair: an SDE pair (its limit ``pair.limit_sde()``).
        path: the Brownian path the networks read (:class:`~limits.brownian.BrownianGrid`,
            :class:`~limits.brownian.DyadicPath`, or any torchsde ``BaseBrownian``), shape (N, pair.noise_dim).
        h0: the initial states, shape (N, d).
        steps: the number of steps on [0, 1] (it must divide the path's grid steps).
        loss: a key of :data:`validation.gradients.tangents.LOSSES`.
        method: a key of :data:`ADJOINT_METHODS`.

    Returns:
        ∂ℓ/∂h_0, shape (N, d), detached.

    Raises:
        TypeError: ``pair`` is not an SDE pair, or ``path`` not a torchsde Brownian object.
        ValueError: an unknown ``loss`` or ``method``, ``steps`` < 1 or not dividing the path's grid, shapes that
            do not match.
    """
    pair, spec, form, ts, start, dt = _sde_setup(pair, path, h0, steps, loss, method)
    with torch.enable_grad():
        ys = torchsde.sdeint_adjoint(form, start, ts, bm=path, method=spec.method, adjoint_method=spec.adjoint_method,
                                     dt=dt, adjoint_params=())
        return _gradient(ys[-1], start, loss)


def sde_autograd_gradient(pair: SDEPair, path: torchsde.BaseBrownian, h0: torch.Tensor, steps: int, *,
                          loss: str = "half-square", method: str = "euler") -> torch.Tensor:
    """∂ℓ/∂h_0 of the same forward solve as :func:`sde_adjoint_gradient`, by reverse-mode autograd through
    ``torchsde.sdeint`` (discretise-then-optimise: the exact gradient of the discretised solve).

    Same arguments, checks and form as :func:`sde_adjoint_gradient` (``method`` picks the forward method and the
    form from :data:`ADJOINT_METHODS`; its adjoint method is not used). Memory grows with ``steps`` (every step's
    graph is kept). With ``method="euler"`` this is the gradient :mod:`validation.gradients.tangents` computes by
    forward tangents through Euler–Maruyama on the same path.

    Returns:
        ∂ℓ/∂h_0, shape (N, d), detached.
    """
    pair, spec, form, ts, start, dt = _sde_setup(pair, path, h0, steps, loss, method)
    with torch.enable_grad():
        ys = torchsde.sdeint(form, start, ts, bm=path, method=spec.method, dt=dt)
        return _gradient(ys[-1], start, loss)


# ------------------------------------------------------------------------------------------------ ODE pairs
class _Field(nn.Module):
    """The limit field F(t, H) of an ODE pair as an ``nn.Module`` (torchdiffeq's ``odeint_adjoint`` needs one; it
    has no parameters: the pair's weights are fixed functions of t)."""

    def __init__(self, field: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.field = field

    def forward(self, t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.field(t, h)


def _ode_setup(pair: Any, h0: torch.Tensor, loss: str, method: str | None, rtol: float, atol: float,
               steps: int | None) -> tuple[ODEPair, torch.Tensor, torch.Tensor, dict[str, Any]]:
    pair = _pair_of_kind(pair, ODEPair)
    _check_loss(loss)
    _check_h0(pair, h0)
    if steps is None:
        method = "dopri5" if method is None else method
        if method not in ODE_ADAPTIVE_METHODS:
            raise ValueError(f"method {method!r} unknown or fixed-step without steps (allowed without steps: "
                             f"{', '.join(ODE_ADAPTIVE_METHODS)}; with steps: {', '.join(ODE_FIXED_METHODS)})")
        for name, value in (("rtol", rtol), ("atol", atol)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r} must be a finite number > 0")
        options: dict[str, Any] = dict(method=method, rtol=rtol, atol=atol)
    else:
        steps = _check_steps(steps)
        method = "rk4" if method is None else method
        if method not in ODE_FIXED_METHODS:
            raise ValueError(f"method {method!r} unknown or adaptive with steps={steps} (allowed with steps: "
                             f"{', '.join(ODE_FIXED_METHODS)}; without: {', '.join(ODE_ADAPTIVE_METHODS)})")
        options = dict(method=method, options=dict(step_size=1.0 / steps))
    ts = torch.tensor([0.0, 1.0], dtype=h0.dtype, device=h0.device)
    start = h0.detach().clone().requires_grad_(True)
    return pair, ts, start, options


def ode_adjoint_gradient(pair: ODEPair, h0: torch.Tensor, *, loss: str = "half-square", method: str | None = None,
                         rtol: float = 1e-10, atol: float = 1e-10, steps: int | None = None) -> torch.Tensor:
    """∂ℓ/∂h_0 of the limit ODE dH/dt = F(t, H) (``pair.limit_field``) on [0, 1] by torchdiffeq's adjoint.

    ``torchdiffeq.odeint_adjoint`` solves the adjoint d a/dt = −a ∂_H F(t, H_t) backwards from a_1 = ∇ℓ(H_1)
    (with H re-solved backwards beside it) by the same method: ∂ℓ/∂h_0 = a_0 (optimise-then-discretise).

    Args:
        pair: an ODE pair.
        h0: the initial states, shape (N, d).
        loss: a key of :data:`validation.gradients.tangents.LOSSES`.
        method: a torchdiffeq method; None: ``dopri5`` (adaptive, with ``rtol``, ``atol``), or ``rk4`` when
            ``steps`` is given. An adaptive method needs ``steps=None`` (:data:`ODE_ADAPTIVE_METHODS`), a fixed-step
            one needs ``steps`` (:data:`ODE_FIXED_METHODS`).
        rtol, atol: tolerances of an adaptive method (forwards and backwards).
        steps: the number of fixed steps (step size 1/steps), or None for an adaptive method.

    Returns:
        ∂ℓ/∂h_0, shape (N, d), detached.

    Raises:
        TypeError: ``pair`` is not an ODE pair.
        ValueError: an unknown ``loss`` or ``method``, a method that does not fit ``steps``, bad tolerances.
    """
    from torchdiffeq import odeint_adjoint

    pair, ts, start, options = _ode_setup(pair, h0, loss, method, rtol, atol, steps)
    with torch.enable_grad():
        hs = odeint_adjoint(_Field(pair.limit_field), start, ts, adjoint_params=(), **options)
        return _gradient(hs[-1], start, loss)


def ode_autograd_gradient(pair: ODEPair, h0: torch.Tensor, *, loss: str = "half-square", method: str | None = None,
                          rtol: float = 1e-10, atol: float = 1e-10, steps: int | None = None) -> torch.Tensor:
    """∂ℓ/∂h_0 of the same forward solve as :func:`ode_adjoint_gradient`, by reverse-mode autograd through
    ``torchdiffeq.odeint`` (discretise-then-optimise). Same arguments, checks and defaults.

    Returns:
        ∂ℓ/∂h_0, shape (N, d), detached.
    """
    from torchdiffeq import odeint

    pair, ts, start, options = _ode_setup(pair, h0, loss, method, rtol, atol, steps)
    with torch.enable_grad():
        hs = odeint(pair.limit_field, start, ts, **options)
        return _gradient(hs[-1], start, loss)
