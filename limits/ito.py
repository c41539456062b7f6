"""The Itô pieces shared by every SDE pair: the noise product, the quadratic variation, the correction.

Every SDE pair reads one Brownian path per sample whose first d² channels are a d×d matrix B^W (row-major)
and, for pairs with a bias, whose last d channels are a vector B^b. Over one layer of length Δt the
fluctuation of the pre-activation is

    M = ΔW y + Δb,     ΔW = (s_w/√d) ΔB^W,     Δb = s_b ΔB^b

(:func:`affine_noise`; :func:`matrix_noise_product` is the ΔW y part alone). Given y, every coordinate
of M has the variance rate

    Q_i(y) = d⟨(W y + b)_i⟩/dt = (s_w²/d) ‖y‖² + s_b²

(:func:`iid_quadratic_variation`). A block x ↦ x + σ(M) with σ ∈ C³, σ(0) = 0 expands as
σ(M) = σ'(0) M + ½ σ''(0) M² + O(|M|³), and E[M_i² | y] = Q_i(y) Δt: the square of the Brownian
increment does not average out, it leaves the drift ½ σ''(0) Q(y) (:func:`ito_correction`) — the Itô
correction of Cohen et al. (Thm 4.4) and Peluchetti & Favaro (Thm 3.1), docs/theory.md §3–4.

The network (reading the increments on its grid) and the limit (torchsde's ``g_prod`` and ``f``) call
these same functions, so the two readers cannot disagree about the noise.

**The Stratonovich form** (for the Stratonovich schemes of ``validation.solvers``). The same process solves
dH = f dt + g dB (Itô) and dH = (f − c) dt + g ∘ dB (Stratonovich), with

    c_k(y) = ½ Σ_j Σ_l ∂_l g_{kj}(y) g_{lj}(y)          (j over the m noise channels)

(:meth:`ItoLimit.stratonovich_correction`, generic by automatic differentiation; the pairs override it with
closed forms, which the tests check against the generic one). For the noise φ'(0)(ΔW ψ(y) + Δb) with
W = (s_w/√d) L B^W R (row factor L, column factor R: L Lᵀ = R_O, Rᵀ R = R_I) the columns of B^W give

    c(y) = ½ φ'(0)² (s_w²/d) R_O (ψ'(y) ⊙ R_I ψ(y))         (the bias channels are constant: no term),

which is ½ (s²/d) σ'(y) σ(y) for res-1 (φ = id, ψ = σ, R = I) and ½ σ'(0)² (s_A²/d) y for Cohen et al.'s
SDE (ψ = id) — :func:`matrix_noise_correction`. :class:`SDEForm` hands a scheme the form it integrates.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import torch
import torchsde

from .closed_forms import withdraw_stale

__all__ = ["matrix_noise_product", "matrix_noise_tangent", "affine_noise", "iid_quadratic_variation", "ito_correction",
           "matrix_noise_correction", "matrix_noise_diffusion", "matrix_noise_derivative", "directional_derivative", "ItoLimit", "SDEForm",
           "SDEFormWithMatrix"]


def matrix_noise_product(dW: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    """``scale · ΔB y`` for a batch: the first d² channels of ``dW`` (N, ≥ d²) read row-major as
    (N, d, d), times y (N, d); returns (N, d). Component i is scale · Σ_j ΔB_ij y_j."""
    n, d = y.shape
    matrix = dW.view(n, d, d) if dW.shape[1] == d * d else dW[:, : d * d].reshape(n, d, d)
    return scale * torch.bmm(matrix, y.unsqueeze(-1)).squeeze(-1)


def matrix_noise_tangent(dW: torch.Tensor, tangents: torch.Tensor, scale: float) -> torch.Tensor:
    """``scale · ΔB T`` for tangents T (N, d, C): :func:`matrix_noise_product` applied to every column, (N, d, C)."""
    n, d = tangents.shape[:2]
    matrix = dW.view(n, d, d) if dW.shape[1] == d * d else dW[:, : d * d].reshape(n, d, d)
    return scale * torch.bmm(matrix, tangents)


def affine_noise(dW: torch.Tensor, y: torch.Tensor, weight_scale: float, bias_scale: float) -> torch.Tensor:
    """ΔW y + Δb = weight_scale · ΔB^W y + bias_scale · ΔB^b for ``dW`` of shape (N, d² + d)."""
    d = y.shape[1]
    return matrix_noise_product(dW, y, weight_scale) + bias_scale * dW[:, d * d:]


def iid_quadratic_variation(y: torch.Tensor, coefficient: float, offset: float) -> torch.Tensor:
    """Q(y) = coefficient · ‖y‖² + offset on every coordinate, shape (N, d).

    With i.i.d. Brownian weights W = (s_w/√d) B^W and b = s_b B^b the coefficient is s_w²/d and the offset
    s_b²: Q_i = Σ_{j,k} y_j y_k Σ^W_{ijik} + Σ^b_{ii} with Σ^W_{ijik} = (s_w²/d) δ_jk.
    """
    q = coefficient * (y * y).sum(-1, keepdim=True) + offset
    return q.expand_as(y)


def ito_correction(second_derivative: float, quadratic_variation: torch.Tensor) -> torch.Tensor:
    """The Itô drift ½ σ''(0) Q, from σ''(0) and Q (any shape)."""
    return (0.5 * second_derivative) * quadratic_variation


def matrix_noise_correction(derivative: torch.Tensor, value: torch.Tensor, coefficient: float,
                            row_cov: torch.Tensor | None = None, col_cov: torch.Tensor | None = None) -> torch.Tensor:
    """The Stratonovich drift correction ½ c R_O (ψ'(y) ⊙ R_I ψ(y)) of the noise c^½ L ΔB R ψ(y) (module
    docstring), from ``derivative`` = ψ'(y) and ``value`` = ψ(y), shape (N, d); ``coefficient`` is
    φ'(0)² s_w²/d; R_O, R_I default to the identity (i.i.d. weights)."""
    inner = value if col_cov is None else value @ col_cov.T
    out = derivative * inner
    if row_cov is not None:
        out = out @ row_cov.T
    return (0.5 * coefficient) * out


def matrix_noise_diffusion(y: torch.Tensor, scale: float) -> torch.Tensor:
    """The diffusion matrix of ``matrix_noise_product``: G (N, d, d²) with G[n, i, (i', j)] = scale δ_{ii'} y_j,
    so that G v = scale · V y for v the row-major V."""
    n, d = y.shape
    eye = torch.eye(d, dtype=y.dtype, device=y.device)
    return scale * (eye.view(1, d, d, 1) * y.view(n, 1, 1, d)).reshape(n, d, d * d)


def matrix_noise_derivative(derivative: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """Σ_l Σ_j (∂_l G_{·j}) v_{lj} for the diffusion G of :func:`matrix_noise_diffusion` at y = ψ(h), in closed form
    (:meth:`ItoLimit.diffusion_derivative`): G[i, (a, b)] = scale δ_ia ψ(h_b), so ∂_l G[i, (a, b)] = scale δ_ia δ_bl
    ψ'(h_l) and the sum is scale Σ_l ψ'(h_l) v[l, (i, l)]. ``derivative`` = ψ'(h), shape (N, d); ``v`` (N, d, d²)."""
    n, d = derivative.shape
    diagonal = torch.diagonal(v.reshape(n, d, d, d), dim1=1, dim2=3)        # [n, i, l] = v[n, l, (i, l)]
    return scale * (diagonal * derivative.unsqueeze(1)).sum(-1)


class ItoLimit(torchsde.SDEIto):
    """Base of the limits handed to ``torchsde.sdeint``: an Itô SDE with general noise, given by its
    drift ``f(t, y)`` and the diffusion–vector product ``g_prod(t, y, v)`` only.

    Never materialising g (a d × d² matrix per sample for res-1) keeps a step at O(N d²) work and memory
    (docs/design.md). Subclasses implement :meth:`f` and :meth:`g_prod`.
    """

    def __init__(self) -> None:
        super().__init__(noise_type="general")

    def f(self, t, y: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def f_and_g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.f(t, y), self.g_prod(t, y, v)

    #: optional closed forms of the first variation, for tangents T of shape (N, d, C) → (N, d, C):
    #: ``f_tangent(t, y, T)`` = ∂_y f(t, y) · T and ``g_prod_tangent(t, y, v, T)`` = ∂_y (g(t, y) v) · T. None: the
    #: gradient study takes them by forward-mode autodiff (validation.gradients.tangents); both or neither are used.
    f_tangent: Callable[..., torch.Tensor] | None = None
    g_prod_tangent: Callable[..., torch.Tensor] | None = None

    #: m, the number of noise channels (set by the subclass; needed by :meth:`diffusion_matrix`)
    noise_channels: int = 0

    #: f is identically zero (the SDE is dH = g(H) dW): Euler's step y + f Δt + g ΔW is then y + g ΔW, the same
    #: number (adding the zero f Δt changes no value), without forming and adding the zeros
    #: (:class:`validation.core.one_pass.EulerOnIncrements`)
    drift_free: bool = False

    #: the closed forms and shortcuts a subclass may give beside ``f`` and ``g_prod``, each with the methods it restates
    #: (:mod:`limits.closed_forms`): one left older than a method it restates (a subclass overrides ``f`` and keeps
    #: ``drift_free``) is withdrawn when the subclass is defined, and every one in force is probed at a run's start
    closed_forms: ClassVar[dict[str, tuple[str, ...]]] = {
        "drift_free": ("f",), "f_tangent": ("f",), "g_prod_tangent": ("g_prod",), "f_and_g_prod": ("f", "g_prod"),
        "diffusion_matrix": ("g_prod",), "diffusion_derivative": ("g_prod", "diffusion_matrix"),
        "stratonovich_correction": ("g_prod", "diffusion_matrix"), "exact_solution": ("f", "g_prod"),
    }
    #: the closed forms withdrawn from this class when it was defined (:mod:`limits.closed_forms`)
    closed_forms_withdrawn: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        generic = {name: vars(ItoLimit)[name] for name in ItoLimit.closed_forms}
        cls.closed_forms_withdrawn = withdraw_stale(cls, ItoLimit.closed_forms, generic)

    def diffusion_matrix(self, t, y: torch.Tensor) -> torch.Tensor:
        """The diffusion matrix, shape (N, d, m), assembled column by column from ``g_prod`` (m calls).

        Only the schemes that need the matrix itself (Milstein, the log-ODE scheme) and the tests ask for
        it; a pair may override it with a closed form. (It is not called ``g``: ``torchsde.sdeint`` calls an
        SDE's ``g``, when it has one, to check shapes on every call.)"""
        if self.noise_channels < 1:
            raise NotImplementedError(f"{type(self).__name__} sets no noise_channels, so g cannot be assembled")
        eye = torch.eye(self.noise_channels, dtype=y.dtype, device=y.device)
        columns = [self.g_prod(t, y, eye[j].expand(y.shape[0], -1)) for j in range(self.noise_channels)]
        return torch.stack(columns, dim=-1)

    def diffusion_derivative(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Σ_l Σ_j (∂_l g_{·j}(y)) v_{lj}, shape (N, d), for v of shape (N, d, m): the derivative of the diffusion
        contracted with v — Milstein's term Σ_{j1, j2} (L^{j1} g_{j2}) I_{j1 j2} is this with v = g I.

        Generic: d directional derivatives of :meth:`diffusion_matrix` by automatic differentiation (d evaluations
        of g, each differentiated); a pair may override it with a closed form (res-1 does:
        :func:`matrix_noise_derivative`)."""
        basis = torch.eye(y.shape[-1], dtype=y.dtype, device=y.device)
        total = torch.zeros_like(y)
        for coordinate in range(y.shape[-1]):
            derivative = directional_derivative(lambda x: self.diffusion_matrix(t, x), y,
                                                basis[coordinate].expand_as(y))     # ∂_l g, (N, d, m)
            total = total + (derivative * v[:, coordinate, None, :]).sum(-1)
        return total

    def exact_solution(self, h0: torch.Tensor, path, t1: float = 1.0) -> torch.Tensor | None:
        """H_{t1} in closed form as a function of the path (``path(0, t1)`` and its areas), where the SDE has one;
        None (the default) where it has none. The solver study uses it as its reference when it is not None."""
        return None

    def stratonovich_correction(self, t, y: torch.Tensor) -> torch.Tensor:
        """c(y) = ½ Σ_j (∂g_{·j}) g_{·j}: the Itô drift minus the Stratonovich drift (module docstring).

        Generic: automatic differentiation of :meth:`diffusion_matrix` (m Jacobian–vector products, for small sizes and
        the tests); the pairs override it with closed forms."""
        y = y.detach()
        matrix = self.diffusion_matrix(t, y)
        total = torch.zeros_like(y)
        for j in range(matrix.shape[-1]):
            total = total + directional_derivative(lambda x, j=j: self.diffusion_matrix(t, x)[..., j], y,
                                                    matrix[..., j])
        return 0.5 * total.detach()


def directional_derivative(fn, y: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """(∂fn(y)) · direction for a batch, by the double-backward trick (fn maps (N, d) row-wise to (N, …)); zero where
    fn does not depend on y (additive noise)."""
    with torch.enable_grad():
        y = y.detach().requires_grad_(True)
        out = fn(y)
        if not out.requires_grad:
            return torch.zeros_like(out)
        probe = torch.zeros_like(out, requires_grad=True)
        (vjp,) = torch.autograd.grad(out, y, grad_outputs=probe, create_graph=True, allow_unused=True)
        if vjp is None or not vjp.requires_grad:
            return torch.zeros_like(out)
        (jvp,) = torch.autograd.grad(vjp, probe, grad_outputs=direction, allow_unused=True)
    return torch.zeros_like(out) if jvp is None else jvp


class SDEForm(torchsde.BaseSDE):
    """The pair's Itô limit in the form a scheme integrates: ``sde_type`` ``"ito"`` (f as is) or
    ``"stratonovich"`` (f − c, :meth:`ItoLimit.stratonovich_correction`), with a declared ``noise_type``
    (a pair's noise is ``general``; a width-1 res-1 is ``scalar``, which Milstein needs). The diffusion
    (``g_prod``) is the limit's own; :class:`SDEFormWithMatrix` adds ``g`` for the schemes that need the matrix
    (torchsde evaluates ``g`` on every ``sdeint`` call when an SDE has it, so the plain form has none)."""

    def __init__(self, limit: ItoLimit, sde_type: str = "ito", noise_type: str = "general") -> None:
        # torchsde has no "commutative" type: commutative noise that is not diagonal is general noise to torchsde
        super().__init__(noise_type="general" if noise_type == "commutative" else noise_type, sde_type=sde_type)
        self.limit = limit

    def f(self, t, y: torch.Tensor) -> torch.Tensor:
        drift = self.limit.f(t, y)
        if self.sde_type == "stratonovich":
            drift = drift - self.limit.stratonovich_correction(t, y)
        return drift

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.limit.g_prod(t, y, v)

    def f_and_g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.f(t, y), self.g_prod(t, y, v)


class SDEFormWithMatrix(SDEForm):
    """:class:`SDEForm` with the diffusion matrix ``g`` (N, d, m), for Milstein and the log-ODE scheme — for
    diagonal noise its diagonal (N, d), torchsde's layout."""

    def g(self, t, y: torch.Tensor) -> torch.Tensor:
        matrix = self.limit.diffusion_matrix(t, y)
        return matrix.diagonal(dim1=-2, dim2=-1) if self.noise_type == "diagonal" else matrix
