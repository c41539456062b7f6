"""Cohen, Cont, Rossier & Xu (ICML 2021, §4): the Itô-corrected SDE regime and the ODE regime (docs/theory.md §3).

Network (depth L, grid t_k = k/L), with a *smooth trend* (Ā_t, b̄_t) and Brownian fluctuations:

    h_{k+1} = h_k + L^{-α} σ(A_k h_k + b_k),
    A_k = L^{-β} Ā_{t_k} + ΔW^A_k,   b_k = L^{-β} b̄_{t_k} + ΔW^b_k,
    W^A = (s_A/√d) B^A (d×d),        W^b = s_b B^b (d),

B^A, B^b independent standard Brownian motions, read as ONE path in R^{d²+d} per sample (channels
0…d²−1 are B^A row-major, channels d²…d²+d−1 are B^b).

**cohen-sde** (α = 0, β = 1, Thm 4.4): the limit carries an Itô correction,

    dH = σ'(0) [dW^A H + dW^b + (Ā_t H + b̄_t) dt] + ½ σ''(0) Q(t, H) dt,
    Q_i(t, x) = (s_A²/d) ‖x‖² + s_b²          (every coordinate i, for i.i.d. Brownian weights).

Where it comes from: the pre-activation M = ΔW^A h + Δb has E M = O(dt) and E M_i² = Q_i dt, so
σ(M) = σ'(0) M + ½ σ''(0) M² + O(|M|³) has mean σ'(0) E M + ½ σ''(0) Q dt + O(dt²) — the square of the
Brownian increment does not average out. docs/theory.md §3 states the theorem for σ'(0) = 1; the σ'(0) factor
(Peluchetti–Favaro, docs/theory.md §4) makes the pair right for swish too. The network is *not* the Euler scheme
of the limit (σ sits outside the increment); the reference is torchsde's Euler on a much finer grid of
the same path. Strong rate 1/2.

**cohen-sde-naive**: the same network against the SDE read naively off the recursion, *without*
½σ''(0)Q. For σ''(0) ≠ 0 the network does not converge to it: the error tends to a non-zero constant
(docs/theory.md §3a measured 4.1 → 5.4 over L = 8…1024), so its check is that the rate interval lies well
below 1/2.

**cohen-ode** (0 < α < 1, α + β = 1, no noise, Thm 4.3): dH/dt = σ'(0) (Ā_t H + b̄_t). Taylor-expanding
L^{-α} σ(L^{-β} y) = L^{-1} [σ'(0) y + ½ σ''(0) L^{-β} y² + σ'''(0)/6 L^{-2β} y³ + …] shows the per-step
defect L^{-1-β} (or L^{-1-2β} when σ''(0) = 0) summed over L steps: the rate is min(1, β) when
σ''(0) ≠ 0 and min(1, 2β) when σ''(0) = 0 (docs/theory.md §3b) — computed here from the activation, with 1
for an activation that is linear (identity).

All maths shared by the two readers is one function each: :meth:`CohenSDE.noise` (ΔW^A h + ΔW^b,
used by the network's pre-activation and by ``g_prod``; :func:`limits.ito.affine_noise`),
:meth:`Trend.__call__` (Ā_t h + b̄_t) and :meth:`CohenSDE.correction` (½σ''(0)Q, from
:mod:`limits.ito`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch

from .activations import Activation
from .ito import (ItoLimit, affine_noise, iid_quadratic_variation, ito_correction, matrix_noise_correction,
                  matrix_noise_diffusion, matrix_noise_tangent)
from .pairs import ModelConfig, ODEPair, OptionSpec, PairError, SDEPair, number_option
from .seeding import generator
from .smooth import SmoothGaussianProcess

__all__ = ["Trend", "CohenLimit", "CohenODELimit", "CohenSDE", "CohenSDENaive", "CohenODE", "CohenODENoise", "ode_rate",
           "third_derivative_at_zero"]

TREND_KINDS = ("smooth", "constant", "zero")


# ----------------------------------------------------------------------------------------------- option parsers
def _trend_kind(text: str) -> str:
    value = text.strip().lower()
    if value not in TREND_KINDS:
        raise ValueError(f"trend={text!r} unknown (allowed: {', '.join(TREND_KINDS)})")
    return value


def _profile(text: str) -> tuple[float, float] | None:
    """``constant`` (None) or ``linear:A:B``: λ(t) = A + (B − A) t, both ends > 0."""
    value = text.strip().lower()
    if value == "constant":
        return None
    parts = value.split(":")
    try:
        if parts[0] != "linear" or len(parts) != 3:
            raise ValueError
        a, b = float(parts[1]), float(parts[2])
    except ValueError:
        raise ValueError(f"s_profile={text!r} unknown (allowed: constant, linear:A:B with A, B > 0)") from None
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        raise ValueError(f"s_profile={text!r} is out of range (allowed: linear:A:B with finite A, B > 0)")
    return (a, b)


# ----------------------------------------------------------------------------------------------- the trend
class Trend:
    """The smooth trend (Ā_t, b̄_t): t ↦ Ā_t h + b̄_t, the same function for the network and the limit.

    ``kind``:
      * ``smooth`` — every entry an independent Gaussian process with the RBF kernel of length-scale ℓ
        (:class:`~limits.smooth.SmoothGaussianProcess`, exact at any t), entries of Ā with variance
        a_bar²/d, entries of b̄ with variance b_bar²;
      * ``constant`` — one Gaussian draw per sample with the same variances, constant in t (the limit of
        cohen-ode is then solved exactly with a matrix exponential);
      * ``zero`` — Ā = 0, b̄ = 0.
    Streams: ``(seed, "smooth", "cohen-Abar")`` / ``"cohen-bbar"`` or ``(seed, "cohen-trend")``.
    """

    def __init__(self, kind: str, samples: int, width: int, a_bar: float, b_bar: float, lengthscale: float,
                 seed: int, dtype: torch.dtype, device: torch.device) -> None:
        self.kind = kind
        self.samples, self.width = samples, width
        self.dtype, self.device = dtype, device
        self.a_gp = self.b_gp = None
        self.a_const = self.b_const = None
        self._last: tuple[float, tuple[torch.Tensor, torch.Tensor]] | None = None
        if kind == "smooth":
            common = dict(samples=samples, lengthscale=lengthscale, seed=seed, dtype=dtype, device=device)
            self.a_gp = SmoothGaussianProcess(shape=(width, width), variance=a_bar**2 / width, stream="cohen-Abar",
                                              **common)
            self.b_gp = SmoothGaussianProcess(shape=(width,), variance=b_bar**2, stream="cohen-bbar", **common)
        else:
            gen = generator(seed, "cohen-trend", device=device)
            a = torch.randn((samples, width, width), generator=gen, dtype=dtype, device=device)
            b = torch.randn((samples, width), generator=gen, dtype=dtype, device=device)
            scale_a, scale_b = (a_bar / math.sqrt(width), b_bar) if kind == "constant" else (0.0, 0.0)
            self.a_const, self.b_const = a * scale_a, b * scale_b

    @property
    def constant(self) -> bool:
        return self.kind != "smooth"

    def values(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(Ā, b̄) at a 1-D tensor of T times: shapes (T, N, d, d) and (T, N, d)."""
        if self.constant:
            size = t.shape[0]
            return (self.a_const.unsqueeze(0).expand(size, -1, -1, -1),
                    self.b_const.unsqueeze(0).expand(size, -1, -1))
        return self.a_gp(t), self.b_gp(t)

    def at(self, t: float | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(Ā_t, b̄_t) at one time: shapes (N, d, d) and (N, d). The last time asked is remembered: a scheme's drift
        and its first variation (the gradient study) ask for the same t one after the other."""
        if self.constant:
            return self.a_const, self.b_const
        key = float(t)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        a, b = self.values(torch.as_tensor(t, dtype=self.dtype, device=self.device).reshape(1))
        self._last = (key, (a[0], b[0]))
        return self._last[1]

    @staticmethod
    def apply(a: torch.Tensor, b: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """Ā h + b̄ for a batch."""
        return torch.bmm(a, h.unsqueeze(-1)).squeeze(-1) + b

    def __call__(self, t: float | torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """Ā_t h + b̄_t."""
        a, b = self.at(t)
        return self.apply(a, b, h)


# ----------------------------------------------------------------------------------------------- SDE regime
class CohenLimit(ItoLimit):
    """dH = σ'(0)[dW^A H + dW^b + (Ā_t H + b̄_t) dt] + c · ½σ''(0) Q(t, H) dt for torchsde (``g_prod`` only);
    c = 1 for the Itô-corrected limit, c = 0 for the naive one."""

    def __init__(self, pair: "CohenSDE") -> None:
        super().__init__()
        self.pair = pair
        self.noise_channels = pair.noise_dim

    def f(self, t, y: torch.Tensor) -> torch.Tensor:
        if self.pair.beta == 1.0:
            drift = self.pair.activation.d1 * self.pair.trend(t, y)
        else:  # β > 1: the trend L^{-β}Ā sums to L^{1−β} → 0 and drops out of the limit (Thm 4.4, 1_{β=1})
            drift = torch.zeros_like(y)
        if self.pair.corrected:
            drift = drift + self.pair.correction(y, t)
        return drift

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.pair.activation.d1 * self.pair.scaled(self.pair.noise(v, y), t)

    def f_tangent(self, t, y: torch.Tensor, tangents: torch.Tensor) -> torch.Tensor:
        """∂_y f · T = σ'(0) Ā_t T (β = 1) + c σ''(0) λ(t)² (s_A²/d) (yᵀT) on every coordinate (the correction
        ½σ''(0)Q with ∂_y Q · T = 2 λ² (s_A²/d) yᵀT)."""
        pair = self.pair
        out = (pair.activation.d1 * torch.bmm(pair.trend.at(t)[0], tangents) if pair.beta == 1.0
               else torch.zeros_like(tangents))
        if pair.corrected:
            inner = torch.einsum("ni,nic->nc", y, tangents).unsqueeze(1)
            out = out + pair.scaled(pair.activation.d2 * pair.s_a**2 / pair.width * inner, t, power=2)
        return out

    def g_prod_tangent(self, t, y: torch.Tensor, v: torch.Tensor, tangents: torch.Tensor) -> torch.Tensor:
        """∂_y(σ'(0) λ(t)(V^A y + V^b)) · T = σ'(0) λ(t) (s_A/√d) ΔB^A T."""
        pair = self.pair
        return pair.activation.d1 * pair.scaled(matrix_noise_tangent(v, tangents, pair.s_a / math.sqrt(pair.width)), t)

    def diffusion_matrix(self, t, y: torch.Tensor) -> torch.Tensor:
        """σ'(0) λ(t) [(s_A/√d) δ_{ii'} y_j | s_b I], shape (N, d, d² + d)."""
        pair = self.pair
        eye = torch.eye(pair.width, dtype=y.dtype, device=y.device).expand(y.shape[0], -1, -1)
        weight = matrix_noise_diffusion(y, pair.s_a / math.sqrt(pair.width))
        return pair.activation.d1 * pair.scaled(torch.cat([weight, pair.s_b * eye], dim=-1), t)

    def stratonovich_correction(self, t, y: torch.Tensor) -> torch.Tensor:
        """½ σ'(0)² λ(t)² (s_A²/d) y (the bias channels are additive and add nothing; limits.ito)."""
        pair = self.pair
        return pair.scaled(matrix_noise_correction(torch.ones_like(y), y, pair.activation.d1**2 * pair.s_a**2 / pair.width),
                           t, power=2)


_TREND_OPTIONS: dict[str, OptionSpec] = {
    "trend": OptionSpec("smooth", "trend (Ā_t, b̄_t): smooth (RBF Gaussian processes, length-scale --lengthscale), "
                                  "constant (one Gaussian draw), or zero", _trend_kind),
    "a_bar": OptionSpec(1.0, "scale of Ā: entries have variance a_bar²/d (≥ 0)", number_option("a_bar", minimum=0.0)),
    "b_bar": OptionSpec(1.0, "scale of b̄: entries have variance b_bar² (≥ 0)", number_option("b_bar", minimum=0.0)),
}


class _CohenBase:
    """The trend shared by the three Cohen pairs (a mixin before SDEPair / ODEPair)."""

    def _make_trend(self) -> Trend:
        return Trend(self.option("trend"), self.samples, self.width, self.option("a_bar"), self.option("b_bar"),
                     self.lengthscale, self.seed, self.dtype, self.device)


class CohenSDE(_CohenBase, SDEPair):
    """Cohen et al. α = 0, β ≥ 1: h ← h + σ(A_k h + b_k), A_k = L^{-β}Ā + ΔW^A ↔ the Itô-corrected SDE (module
    docstring). β = 1 (the default) keeps the trend in the limit; β > 1 drops it (Thm 4.4's 1_{β=1}): the network's
    trend then adds L^{1−β} in all, and the strong rate is min(½, β − 1).

    Uses ``width``, ``activation`` (default shifted-softplus, σ''(0) = 1/2; any C³ σ with σ(0) = 0), ``beta`` (≥ 1),
    ``lengthscale`` (ℓ of a smooth trend), ``input_dim`` and the settings in ``option_specs``.
    """

    name = "cohen-sde"
    description = ("Cohen et al. h + sigma(A_k h + b_k), Brownian A, b with trend  <->  Ito-corrected SDE "
                   "(+ 1/2 sigma''(0) Q dt)")
    theory_source = "docs/theory.md §3a; Cohen et al. 2021, Thm 4.4"
    default_activation = "shifted-softplus"
    config_fields = frozenset({"activation", "lengthscale", "input_dim", "beta"})
    config_hints = {"weight_var": "its weight scales are the settings s_a and s_b (--set s_a=…, s_b=…)"}
    requires_smooth_activation = True
    corrected: ClassVar[bool] = True
    option_specs = {
        "s_a": OptionSpec(0.7, "W^A = (s_a/√d) B^A: the weight fluctuation scale (≥ 0)", number_option("s_a", minimum=0.0)),
        "s_b": OptionSpec(0.7, "W^b = s_b B^b: the bias fluctuation scale (≥ 0)", number_option("s_b", minimum=0.0)),
        "s_profile": OptionSpec("constant", "time profile λ(t) of both fluctuation scales: constant, or linear:A:B "
                                            "(λ(t) = A + (B − A)t): W^A = ∫ λ (s_a/√d) dB^A, an Itô process with "
                                            "Σ^A_t = λ(t)² s_a²/d (Cohen et al. eqs. 11–12); likewise W^b", _profile),
        **_TREND_OPTIONS,
        "a_bar": OptionSpec(0.5, _TREND_OPTIONS["a_bar"].help, number_option("a_bar", minimum=0.0)),
        "b_bar": OptionSpec(0.5, _TREND_OPTIONS["b_bar"].help, number_option("b_bar", minimum=0.0)),
    }
    #: recommended study size (validation.convergence honours it): d = 6 as in docs/theory.md §3a; the shortest
    #: depths are pre-asymptotic, which the corrected rate fit models (docs/theory.md §6). The defaults s_a = s_b = 0.7, a_bar = b_bar = 0.5
    #: keep the error distribution light-tailed: with s_a = s_b = 1 the quadratic Itô drift ¼(‖H‖²/d + 1)
    #: lets a few paths grow large, and 1000 paths gave rate 0.41 with a 95% interval [0.29, 0.52].
    default_study: ClassVar[dict[str, Any]] = {
        "depths": [8, 16, 32, 64, 128, 256, 512], "samples": 1000, "reference_steps": 8192, "width": 6,
    }

    def __init__(self, config: ModelConfig, samples: int, seed: int = 0, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        beta, alpha = self.exponents(config.beta)                   # checked before anything is built
        super().__init__(config, samples, seed, dtype, device)
        self.beta, self.alpha = beta, alpha
        self.s_a, self.s_b = self.option("s_a"), self.option("s_b")
        self.profile = self.option("s_profile")
        self.trend = self._make_trend()

    def exponents(self, beta: float | None) -> tuple[float, float]:
        """(β, α) from ``--beta`` (None: 1): α = 0, β ≥ 1."""
        beta = 1.0 if beta is None else beta
        if not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta >= 1):
            raise PairError(f"{self.name} is the α = 0 regime, β ≥ 1; got --beta {beta:g} "
                            "(use cohen-ode or cohen-ode-noise for 0 ≤ β < 1)")
        return float(beta), 0.0

    @property
    def theory_rate(self) -> float:
        """½ at β = 1; min(½, β − 1) for β > 1, where the dropped trend leaves a bias of order L^{1−β}."""
        return 0.5 if self.beta == 1.0 else min(0.5, self.beta - 1.0)

    @property
    def next_order(self) -> float:
        """q of e = C L^-r (1 + c L^-q): 1 at β = 1 (the pair-study default); for β > 1 the error is the noise's
        L^-1/2 plus the dropped trend's L^{1−β}, so q = |½ − (β − 1)| (1 where they coincide, β = 3/2)."""
        if self.beta == 1.0:
            return 1.0
        gap = abs(0.5 - (self.beta - 1.0))
        return gap if gap > 0 else 1.0

    @property
    def noise_dim(self) -> int:
        return self.width * self.width + self.width

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "lengthscale": self.lengthscale, "beta": self.beta, "alpha": self.alpha,
                "ito_correction": self.corrected, "sigma_d1": self.activation.d1, "sigma_d2": self.activation.d2}

    def noise(self, dW: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """ΔW^A h + ΔW^b with W^A = (s_A/√d) B^A, W^b = s_b B^b; ``dW`` (N, d² + d) is the shared path's
        increment (channels 0…d²−1: ΔB^A row-major; d²…: ΔB^b)."""
        return affine_noise(dW, h, self.s_a / math.sqrt(self.width), self.s_b)

    def scaled(self, x: torch.Tensor, t: Any, power: int = 1) -> torch.Tensor:
        """x λ(t)^power, λ the ``s_profile`` (x itself, untouched, for the constant profile)."""
        if self.profile is None:
            return x
        a, b = self.profile
        return x * (a + (b - a) * t) ** power

    def quadratic_variation(self, h: torch.Tensor, t: Any = 0.0) -> torch.Tensor:
        """Q_i(t, h) = λ(t)² ((s_A²/d) ‖h‖² + s_b²), the same for every coordinate i; shape (N, d) (eq. 12 with
        Σ^A_t = λ(t)² s_A²/d I, Σ^b_t = λ(t)² s_b² I)."""
        return self.scaled(iid_quadratic_variation(h, self.s_a * self.s_a / self.width, self.s_b * self.s_b), t, power=2)

    def correction(self, h: torch.Tensor, t: Any = 0.0) -> torch.Tensor:
        """The Itô drift ½ σ''(0) Q(t, h) of Cohen et al. Thm 4.4, shape (N, d)."""
        return ito_correction(self.activation.d2, self.quadratic_variation(h, t))

    def preactivation(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """A_k h + b_k = dt^β (Ā_t h + b̄_t) + λ(t_k)(ΔW^A h + ΔW^b) (dt = 1/L; λ ≡ 1 unless ``s_profile``: the
        Itô integral ∫ λ dB over the layer read at its left end, an error of order dt^{3/2} per layer)."""
        return dt**self.beta * self.trend(t, h) + self.scaled(self.noise(dW, h), t)

    def network_step(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """h + L^{-α} σ(A_k h + b_k), α = 0 here."""
        step = self.activation(self.preactivation(h, t, dt, dW))
        return h + (step if self.alpha == 0.0 else dt**self.alpha * step)

    def network_tangent(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor, tangents: torch.Tensor
                        ) -> torch.Tensor:
        """L^{-α} σ'(A_k h + b_k) ⊙ (A_k T), A_k T = dt^β Ā_t T + λ(t_k)(s_A/√d) ΔB^A T, on every column of T."""
        slope = self.activation.derivative(self.preactivation(h, t, dt, dW)).unsqueeze(-1)
        linear = (dt**self.beta * torch.bmm(self.trend.at(t)[0], tangents)
                  + self.scaled(matrix_noise_tangent(dW, tangents, self.s_a / math.sqrt(self.width)), t))
        step = slope * linear
        return step if self.alpha == 0.0 else dt**self.alpha * step

    def limit_sde(self) -> CohenLimit:
        return CohenLimit(self)


class CohenSDENaive(CohenSDE):
    """The cohen-sde network against the SDE *without* the Itô correction: deliberately wrong for σ''(0) ≠ 0."""

    name = "cohen-sde-naive"
    description = ("cohen-sde network  <->  naive SDE without the Ito correction (deliberately wrong: the error "
                   "does not vanish)")
    theory_source = "docs/theory.md §3a (ablation); Cohen et al. 2021, Thm 4.4"
    corrected = False
    converges = False
    excluded_rate = 0.5

    def __init__(self, config, samples, seed=0, dtype=torch.float64, device="cpu") -> None:
        super().__init__(config, samples, seed, dtype, device)
        if self.activation.d2 == 0:
            raise PairError(f"{self.name}: with {self.activation.name} σ''(0) = 0, so the naive limit is the "
                            "correct one and there is nothing to ablate; use an activation with σ''(0) ≠ 0 "
                            "(shifted-softplus, swish)")

    @property
    def theory_rate(self) -> float:
        """0: the error tends to a non-zero constant (the missing drift ½σ''(0)Q integrated over [0, 1])."""
        return 0.0


class CohenODELimit(CohenLimit):
    """dH = σ'(0)(Ā_t H + b̄_t) dt, an ODE handed to torchsde as an SDE of zero diffusion (so that the network and
    the reference read the same Brownian path: only the network uses it)."""

    def f(self, t, y: torch.Tensor) -> torch.Tensor:
        return self.pair.activation.d1 * self.pair.trend(t, y)

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(y)

    def f_tangent(self, t, y: torch.Tensor, tangents: torch.Tensor) -> torch.Tensor:
        return self.pair.activation.d1 * torch.bmm(self.pair.trend.at(t)[0], tangents)

    def g_prod_tangent(self, t, y: torch.Tensor, v: torch.Tensor, tangents: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(tangents)

    def diffusion_matrix(self, t, y: torch.Tensor) -> torch.Tensor:
        return torch.zeros((*y.shape, self.noise_channels), dtype=y.dtype, device=y.device)

    def stratonovich_correction(self, t, y: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(y)


class CohenODENoise(CohenSDE):
    """Cohen et al. Thm 4.4, second part: 0 < α < 1, α + β = 1, under Hypothesis 2 (noise present):
    h ← h + L^{-α} σ(L^{-β}(Ā h + b̄) + ΔW^A h + ΔW^b) ↔ the ODE dH/dt = σ'(0)(Ā_t H + b̄_t) — the same ODE as
    without noise (Thm 4.3, cohen-ode): Hypotheses 1 and 2 have one limit (their §4.4).

    Expanding the step as in cohen-ode, the error has three parts: the noise's martingale L^{-α} Σ_k ΔW_k h_k and
    the Itô term ½σ''(0) L^{-α} Q dt summed (both of order L^{-α}), the Taylor defect of the trend (L^{-β}, or
    L^{-2β} when σ''(0) = 0) and the Euler error L^{-1}: the strong rate is min(α, ode rate(σ, β)) =
    min(1 − β, β) for σ''(0) ≠ 0. The default β = 0.7 (α = 0.3) makes the noise the leading term.
    """

    name = "cohen-ode-noise"
    description = ("Cohen et al. h + L^-alpha sigma(L^-beta (A h + b) + dW^A h + dW^b), alpha + beta = 1  <->  the "
                   "noise-free linear ODE dH/dt = sigma'(0)(A_t H + b_t)")
    theory_source = "docs/theory.md §3b; Cohen et al. 2021, Thm 4.4 (ODE limit under Hypothesis 2)"
    corrected = False
    default_beta: ClassVar[float] = 0.7
    default_study: ClassVar[dict[str, Any]] = {
        "depths": [8, 16, 32, 64, 128, 256, 512, 1024], "samples": 1000, "reference_steps": 8192, "width": 6,
    }

    def __init__(self, config: ModelConfig, samples: int, seed: int = 0, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        super().__init__(config, samples, seed, dtype, device)
        self._rate = min(self.alpha, ode_rate(self.activation, self.beta))

    def exponents(self, beta: float | None) -> tuple[float, float]:
        """(β, α) from ``--beta`` (None: 0.7): 0 < β < 1, α = 1 − β."""
        beta = self.default_beta if beta is None else beta
        if not (isinstance(beta, (int, float)) and math.isfinite(beta) and 0 < beta < 1):
            raise PairError(f"{self.name}: β = {beta} is out of range (allowed: 0 < β < 1, α = 1 − β)")
        return float(beta), 1.0 - float(beta)

    @property
    def theory_rate(self) -> float:
        return self._rate

    @property
    def next_order(self) -> float:
        """q of e = C L^-r (1 + c L^-q): the gap from r to the next exponent among the noise's α, the Taylor terms
        (β, 2β if σ''(0) ≠ 0; 2β, 4β otherwise) and the Euler term 1."""
        taylor = {self.beta, 2 * self.beta} if self.activation.d2 != 0 else {2 * self.beta, 4 * self.beta}
        above = sorted(x for x in {self.alpha, 1.0, *taylor} if x > self._rate + 1e-12)
        return above[0] - self._rate if above else 1.0

    def limit_sde(self) -> CohenODELimit:
        return CohenODELimit(self)


# ----------------------------------------------------------------------------------------------- ODE regime
def third_derivative_at_zero(activation: Activation) -> float:
    """σ'''(0) by automatic differentiation (float64)."""
    x = torch.zeros((), dtype=torch.float64, requires_grad=True)
    y = activation(x)
    (g1,) = torch.autograd.grad(y, x, create_graph=True)
    if not g1.requires_grad:
        return 0.0
    (g2,) = torch.autograd.grad(g1, x, create_graph=True)
    if not g2.requires_grad:
        return 0.0
    (g3,) = torch.autograd.grad(g2, x, allow_unused=True)
    return 0.0 if g3 is None else float(g3)


def ode_rate(activation: Activation, beta: float) -> float:
    """Rate of cohen-ode (docs/theory.md §3b): min(1, β) if σ''(0) ≠ 0, min(1, 2β) if σ''(0) = 0 ≠ σ'''(0), and 1 for
    an activation that is linear near 0 (no Taylor defect at all)."""
    if activation.d2 != 0:
        return min(1.0, beta)
    if abs(third_derivative_at_zero(activation)) > 1e-12:
        return min(1.0, 2.0 * beta)
    probe = torch.linspace(-1, 1, 11, dtype=torch.float64)
    if torch.allclose(activation(probe), activation.d1 * probe, rtol=0, atol=1e-14):
        return 1.0
    raise PairError(f"cohen-ode: {activation.name} has σ''(0) = σ'''(0) = 0 but is not linear; its rate is "
                    "not covered by docs/theory.md §3b")


class CohenODE(_CohenBase, ODEPair):
    """Cohen et al. 0 < α < 1, α + β = 1, no noise: h ← h + L^{-α} σ(L^{-β}(Ā h + b̄)) ↔ dH/dt = σ'(0)(Ā H + b̄).

    ``--beta 0`` (α = 1) is Cohen et al.'s own parametrisation of the neural ODE (§4.2): h ← h + L^{-1} σ(Ā h + b̄)
    ↔ dH/dt = σ(Ā H + b̄), of which the network is the Euler scheme (rate 1).

    Uses ``width``, ``activation`` (default shifted-softplus; smooth, σ(0) = 0), ``beta`` (default 0.3),
    ``lengthscale`` (smooth trend) and ``input_dim``. With a constant or zero trend (the default) the limit
    is solved exactly by a matrix exponential; with a smooth trend by torchdiffeq.
    """

    name = "cohen-ode"
    description = ("Cohen et al. h + L^-alpha sigma(L^-beta (A h + b)), alpha + beta = 1  <->  linear ODE "
                   "dH/dt = sigma'(0)(A_t H + b_t)")
    theory_source = "docs/theory.md §3b; Cohen et al. 2021, Thm 4.3 (rate min(1, β) / min(1, 2β))"
    default_activation = "shifted-softplus"
    config_fields = frozenset({"activation", "lengthscale", "input_dim", "beta"})
    config_hints = {"weight_var": "there is no noise in this regime; the trend scales are --set a_bar=…, b_bar=…"}
    requires_smooth_activation = True
    default_beta: ClassVar[float] = 0.3
    option_specs = {
        **_TREND_OPTIONS,
        "trend": OptionSpec("constant", _TREND_OPTIONS["trend"].help, _trend_kind),
        "a_bar": OptionSpec(0.5, _TREND_OPTIONS["a_bar"].help, number_option("a_bar", minimum=0.0)),
        "b_bar": OptionSpec(1.0, _TREND_OPTIONS["b_bar"].help, number_option("b_bar", minimum=0.0)),
    }
    #: recommended study size: long depth ranges are cheap (no noise), and the early depths are
    #: pre-asymptotic (the O(1/L) Euler term, of opposite sign, competes with L^{-β} / L^{-2β}); the corrected
    #: rate fit drops them where its model does not fit (docs/theory.md §6). a_bar = 0.5 < b_bar = 1 keeps that Euler term (∝ Ā) small: with a_bar = b_bar
    #: = 1, tanh at β = 0.3 still has local slope 0.54 at L = 2^16 (0.58 with the defaults, docs/theory.md §3b 0.595).
    default_study: ClassVar[dict[str, Any]] = {
        "depths": [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536], "samples": 100, "width": 6,
    }

    def __init__(self, config: ModelConfig, samples: int, seed: int = 0, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        beta = self.default_beta if config.beta is None else config.beta
        if not (isinstance(beta, (int, float)) and math.isfinite(beta) and 0 <= beta < 1):
            raise PairError(f"cohen-ode: β = {beta} is out of range (allowed: 0 ≤ β < 1, α = 1 − β)")
        super().__init__(config, samples, seed, dtype, device)
        self.beta = float(beta)
        self.alpha = 1.0 - self.beta
        self.trend = self._make_trend()
        # β = 0 (α = 1, Cohen et al. §4.2): the network is the Euler scheme of the neural ODE dH = σ(Ā H + b̄) dt
        self._rate = 1.0 if self.beta == 0 else ode_rate(self.activation, self.beta)

    @property
    def theory_rate(self) -> float:
        return self._rate

    @property
    def next_order(self) -> float:
        """q of e = C L^-r (1 + c L^-q): the gap from r to the next exponent of the error's terms — the Euler
        term L^-1 and the Taylor terms L^-kβ (k = 1, 2 if σ''(0) ≠ 0; k = 2, 4 if σ''(0) = 0; docs/theory.md §3b).
        With the defaults (β = 0.3, shifted softplus) q = 0.7: the local slopes' deficit shrinks ×0.62 per
        doubling of L, 2^-0.7."""
        if self.beta == 0:
            return 1.0                                      # Euler: e = C L^-1 (1 + c L^-1)
        if self.activation.d2 != 0:
            exponents = {self.beta, 2 * self.beta, 1.0}
        elif abs(third_derivative_at_zero(self.activation)) > 1e-12:
            exponents = {2 * self.beta, 4 * self.beta, 1.0}
        else:
            exponents = {1.0, 2.0}
        above = sorted(x for x in exponents if x > self._rate + 1e-12)
        return above[0] - self._rate

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "beta": self.beta, "alpha": self.alpha, "lengthscale": self.lengthscale,
                "sigma_d1": self.activation.d1, "sigma_d2": self.activation.d2,
                "sigma_d3": third_derivative_at_zero(self.activation),
                "limit": "neural ODE dH/dt = σ(Ā H + b̄)" if self.beta == 0 else "linear ODE dH/dt = σ'(0)(Ā H + b̄)",
                "limit_solver": "matrix exponential (exact)" if self._linear_exact else "torchdiffeq"}

    @property
    def _linear_exact(self) -> bool:
        """The limit is linear with constant coefficients (β > 0, constant trend): solved by a matrix exponential."""
        return self.beta > 0 and self.trend.constant

    def weights(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.trend.values(t)

    def network_step(self, h, t, dt, weights):
        """h + L^{-α} σ(L^{-β}(Ā h + b̄)) with L = 1/dt."""
        a, b = weights
        y = Trend.apply(a, b, h)
        return h + dt**self.alpha * self.activation(dt**self.beta * y)

    def limit_field(self, t, h):
        """σ'(0)(Ā_t h + b̄_t) for β > 0 (Thm 4.3); σ(Ā_t h + b̄_t) for β = 0, α = 1 (§4.2: the neural ODE)."""
        if self.beta == 0:
            return self.activation(self.trend(t, h))
        return self.activation.d1 * self.trend(t, h)

    def solve_limit(self, h0, times, rtol, atol, method="dopri5"):
        """Exact for a constant trend: the stacked state [H; 1] at time t is exp(σ'(0) t G) [H_0; 1] with
        G = [[Ā, b̄], [0, 0]].

        On a uniform grid of output times (as the study engine asks) the one-step propagator
        exp(σ'(0) Δ G) is computed once and applied step after step (exact flow, rounding only); other
        grids get one matrix exponential per time. A smooth trend is solved by torchdiffeq.
        """
        if not self._linear_exact:
            return super().solve_limit(h0, times, rtol, atol, method)
        n, d = h0.shape
        gen = torch.zeros((n, d + 1, d + 1), dtype=h0.dtype, device=h0.device)
        gen[:, :d, :d] = self.trend.a_const
        gen[:, :d, d] = self.trend.b_const
        gen = self.activation.d1 * gen
        z0 = torch.cat([h0, torch.ones_like(h0[:, :1])], dim=1)
        tau = (times - times[0]).to(h0.dtype)
        steps = torch.diff(tau)
        if len(steps) and torch.allclose(steps, steps[0].expand_as(steps), rtol=1e-12, atol=0):
            prop = torch.linalg.matrix_exp(steps[0] * gen)  # (N, d+1, d+1)
            out = [z0]
            for _ in range(len(steps)):
                out.append(torch.bmm(prop, out[-1].unsqueeze(-1)).squeeze(-1))
            return torch.stack(out)[..., :d]
        expo = torch.linalg.matrix_exp(tau[:, None, None, None] * gen.unsqueeze(0))  # (T, N, d+1, d+1)
        return torch.einsum("tnij,nj->tni", expo[..., :d, :], z0)
