"""Peluchetti & Favaro (AISTATS 2020, §3): ResNets x + φ(ΔW ψ(x) + Δb) and their diffusion limit (docs/theory.md §4).

Network, depth L, Δt = T/L (T = 1 unless the setting ``T``), D = width:

    x_{k+1} = x_k + φ(ΔW_k ψ(x_k) + Δb_k),
    dW = μ^W dt + σ^{W_O} dB^W σ^{W_I}   (D×D, matrix normal: Σ^{W_O} = σ^{W_O}σ^{W_O}ᵀ, Σ^{W_I} = σ^{W_I}ᵀσ^{W_I}),
    db = μ^b dt + σ^b dB^b,               (Σ^b = σ^b σ^bᵀ)

with B^W (D×D) and B^b (D) independent standard Brownian motions, read as ONE path in R^{D²+D} per
sample (channels 0…D²−1 are B^W row-major, the last D are B^b). Here

    Σ^{W_O} = (σ_w²/D) R_O,   Σ^{W_I} = R_I,   Σ^b = σ_b² R_b,   μ^W = μ_w I,   μ^b = μ_b 1,

where R_O, R_I, R_b are correlation-type matrices chosen by a family name (``iid`` = identity, which is
the paper's fully i.i.d. Assumption 3.4: dW = (σ_w/√D) dB^W, db = σ_b dB^b). Limit (Thm 3.1,
Cor. 3.1–3.3), driven by the same Brownian motions:

    dx = φ'(0) (dW ψ(x) + db) + ½ φ''(0) diag(Σ^b + Σ^{W_O} (ψ(x)ᵀ Σ^{W_I} ψ(x))) dt.

φ ∈ C³ with φ(0) = 0 (tanh, swish, shifted-softplus, identity; φ'(0) ≠ 1 is allowed: swish has
φ'(0) = φ''(0) = 1/2); ψ any activation of the list. The paper proves convergence in law; on a shared
path the convergence is strong with rate 1/2 (Cohen et al. Thm 4.4 covers ψ = id).

Shared maths, one function each: :meth:`PFBlock.noise` (dW ψ + db without drift; the network's
pre-activation and the SDE's ``g_prod``), :meth:`PFBlock.mean_drift` (μ^W ψ + μ^b) and
:meth:`PFBlock.correction` (½φ''(0) diag(…)). The weak study reuses them.

**Gram reduction (the weak study).** With fully i.i.d. weights, the rows of ΔW are independent, so for
K state vectors Y = [y_1 … y_K] (D×K, e.g. one network for each of K inputs) the rows of ΔW Y + Δb 1ᵀ are
i.i.d. N(0, Δt (σ_w²/D YᵀY + σ_b² 11ᵀ)) given the past. Drawing those D×K numbers per step instead of
the D² + D weights is *exact in law* for the joint process of the K networks (and likewise for the
limit SDE's increments): :func:`simulate_gram`. It costs O(N·D·K) per step instead of O(N·D²).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Sequence

import torch
from tqdm.auto import tqdm

from .activations import Activation, ActivationError, get_activation
from .ito import ItoLimit, affine_noise, iid_quadratic_variation, ito_correction, matrix_noise_correction
from .pairs import ModelConfig, OptionSpec, PairError, SDEPair, number_option
from .seeding import generator

__all__ = ["COVARIANCE_FAMILIES", "parse_covariance", "covariance_matrix", "PFBlock", "PFLimit", "PFPair",
           "simulate_gram"]

COVARIANCE_FAMILIES = ("iid", "ar1:RHO", "equi:RHO", "diag:LO:HI")


# ----------------------------------------------------------------------------------------------- settings
def parse_covariance(text: str | tuple) -> tuple:
    """Parse a covariance family: ``iid`` (identity), ``ar1:RHO`` (R_ij = ρ^|i−j|), ``equi:RHO``
    (1 on the diagonal, ρ off it) or ``diag:LO:HI`` (diagonal, entries linearly from LO to HI); a tuple
    such as ``("ar1", 0.5)`` is checked the same way.

    Only the syntax is checked here; positive definiteness depends on D and is checked by
    :func:`covariance_matrix`.
    """
    if isinstance(text, tuple):
        text = ":".join(map(str, text))
    parts = str(text).strip().lower().split(":")
    name = parts[0]
    try:
        numbers = [float(p) for p in parts[1:]]
    except ValueError:
        raise ValueError(f"covariance {text!r}: parameters must be numbers (allowed: {', '.join(COVARIANCE_FAMILIES)})"
                         ) from None
    arity = {"iid": 0, "ar1": 1, "equi": 1, "diag": 2}
    if name not in arity or len(numbers) != arity[name]:
        raise ValueError(f"covariance {text!r} unknown (allowed: {', '.join(COVARIANCE_FAMILIES)})")
    if not all(math.isfinite(x) for x in numbers):
        raise ValueError(f"covariance {text!r}: parameters must be finite")
    return (name, *numbers)


def covariance_matrix(spec: tuple | str, size: int, label: str = "Σ") -> torch.Tensor:
    """The (size × size) float64 matrix of a family; :class:`PairError` if it is not positive definite."""
    if isinstance(spec, str):
        spec = parse_covariance(spec)
    name, *params = spec
    idx = torch.arange(size, dtype=torch.float64)
    if name == "iid":
        mat = torch.eye(size, dtype=torch.float64)
    elif name == "ar1":
        rho = params[0]
        lag = (idx[:, None] - idx[None, :]).abs()
        mat = torch.where(lag == 0, torch.ones(()), torch.as_tensor(rho, dtype=torch.float64) ** lag)
    elif name == "equi":
        mat = torch.full((size, size), params[0], dtype=torch.float64)
        mat.fill_diagonal_(1.0)
    else:
        mat = torch.diag(torch.linspace(params[0], params[1], size, dtype=torch.float64))
    smallest = float(torch.linalg.eigvalsh(mat)[0])
    if not smallest > 1e-12 * max(1.0, float(mat.abs().max())):
        text = ":".join([name, *(f"{p:g}" for p in params)])
        hint = {"ar1": " (ar1 needs |ρ| < 1)", "equi": f" (equi needs −1/(D−1) < ρ < 1, D = {size})",
                "diag": " (diag needs LO, HI > 0)"}.get(name, "")
        raise PairError(f"{label} = {text} with D = {size} is not positive definite: smallest eigenvalue "
                        f"{smallest:.3g}{hint}")
    return mat


def _activation_name(text: str | Activation) -> str:
    if not isinstance(text, Activation) and not str(text).strip():
        return ""
    try:
        return get_activation(text).name
    except ActivationError as exc:
        raise ValueError(str(exc)) from None


def _initial(text: str) -> str | float:
    value = str(text).strip().lower()
    if value == "normal":
        return value
    try:
        z = float(value)
    except ValueError:
        raise ValueError(f"x0={text!r}: use 'normal' (x_0 ~ N(0, I)) or a number z copied to every coordinate"
                         ) from None
    if not math.isfinite(z):
        raise ValueError(f"x0={z} must be finite")
    return z


# ----------------------------------------------------------------------------------------------- the block
class PFBlock:
    """The maths of one block, shared by the network, the limit SDE and the weak study.

    Args:
        phi, psi: the activations φ (outside) and ψ (inside).
        width: D.
        sigma_w, sigma_b: weight and bias scales (≥ 0).
        mu_w, mu_b: drifts μ^W = μ_w I, μ^b = μ_b 1.
        cov_out, cov_in, cov_b: families of R_O, R_I, R_b (:func:`parse_covariance`).
    """

    def __init__(self, phi: Activation, psi: Activation, width: int, sigma_w: float = 1.0, sigma_b: float = 1.0,
                 mu_w: float = 0.0, mu_b: float = 0.0, cov_out: tuple | str = ("iid",),
                 cov_in: tuple | str = ("iid",), cov_b: tuple | str = ("iid",),
                 dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu") -> None:
        self.phi, self.psi = phi, psi
        self.width = int(width)
        self.sigma_w, self.sigma_b = float(sigma_w), float(sigma_b)
        self.mu_w, self.mu_b = float(mu_w), float(mu_b)
        specs = {k: parse_covariance(v) for k, v in (("out", cov_out), ("in", cov_in), ("b", cov_b))}
        self.iid = all(s[0] == "iid" for s in specs.values())
        d = self.width
        mats = {k: covariance_matrix(s, d, {"out": "R_O (Σ^{W_O} = σ_w²/D R_O)", "in": "R_I (Σ^{W_I})",
                                            "b": "R_b (Σ^b = σ_b² R_b)"}[k]) for k, s in specs.items()}
        cast = dict(dtype=dtype, device=device)
        # σ^{W_O} = chol(R_O) (left factor), σ^{W_I} = chol(R_I)ᵀ (right factor), σ^b = chol(R_b)
        self.left = torch.linalg.cholesky(mats["out"]).to(**cast)
        self.right = torch.linalg.cholesky(mats["in"]).T.contiguous().to(**cast)
        self.bias_factor = torch.linalg.cholesky(mats["b"]).to(**cast)
        self.r_in = mats["in"].to(**cast)
        self.diag_out = torch.diagonal(mats["out"]).to(**cast)
        self.diag_b = torch.diagonal(mats["b"]).to(**cast)
        self.specs = specs

    @property
    def weight_scale(self) -> float:
        """σ_w/√D."""
        return self.sigma_w / math.sqrt(self.width)

    def noise(self, dW: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """σ^{W_O} ΔB^W σ^{W_I} y + σ^b ΔB^b for a batch (the fluctuation of ΔW y + Δb), shape (N, D).

        ``dW`` (N, D² + D): ΔB^W row-major then ΔB^b; ``y`` = ψ(x), shape (N, D).
        """
        n, d = y.shape
        d2 = d * d
        if self.iid:
            return affine_noise(dW, y, self.weight_scale, self.sigma_b)
        z = y @ self.right.T  # σ^{W_I} y
        w_part = torch.bmm(dW[:, :d2].reshape(n, d, d), z.unsqueeze(-1)).squeeze(-1) @ self.left.T
        return self.weight_scale * w_part + self.sigma_b * (dW[:, d2:] @ self.bias_factor.T)

    def mean_drift(self, y: torch.Tensor) -> torch.Tensor:
        """μ^W y + μ^b = μ_w y + μ_b (the drift of ΔW y + Δb per unit time)."""
        return self.mu_w * y + self.mu_b

    def quadratic_variation(self, y: torch.Tensor) -> torch.Tensor:
        """diag(Σ^b + Σ^{W_O} (yᵀ Σ^{W_I} y)): the variance rate of each coordinate of dW y + db, shape (N, D)."""
        if self.iid:
            return iid_quadratic_variation(y, self.sigma_w**2 / self.width, self.sigma_b**2)
        quad = ((y @ self.r_in) * y).sum(-1, keepdim=True)
        return (self.sigma_w**2 / self.width) * quad * self.diag_out + self.sigma_b**2 * self.diag_b

    def correction(self, y: torch.Tensor) -> torch.Tensor:
        """The Itô drift ½ φ''(0) diag(Σ^b + Σ^{W_O}(yᵀΣ^{W_I}y)), y = ψ(x)."""
        return ito_correction(self.phi.d2, self.quadratic_variation(y))

    def network_step(self, x: torch.Tensor, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """x + φ(ΔW ψ(x) + Δb) = x + φ(dt (μ^W ψ + μ^b) + noise)."""
        y = self.psi(x)
        return x + self.phi(dt * self.mean_drift(y) + self.noise(dW, y))

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        """φ'(0)(μ^W ψ(x) + μ^b) + ½φ''(0) diag(…): the limit's drift."""
        y = self.psi(x)
        return self.phi.d1 * self.mean_drift(y) + self.correction(y)

    def diffusion_prod(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """φ'(0) (σ^{W_O} v^W σ^{W_I} ψ(x) + σ^b v^b): the limit's ``g_prod``."""
        return self.phi.d1 * self.noise(v, self.psi(x))

    def stratonovich_correction(self, x: torch.Tensor) -> torch.Tensor:
        """½ φ'(0)² (σ_w²/D) R_O (ψ'(x) ⊙ R_I ψ(x)): the Itô minus the Stratonovich drift (limits.ito)."""
        coefficient = self.phi.d1**2 * self.weight_scale**2
        if self.iid:
            return matrix_noise_correction(self.psi.derivative(x), self.psi(x), coefficient)
        row_cov = self.left @ self.left.T
        return matrix_noise_correction(self.psi.derivative(x), self.psi(x), coefficient, row_cov, self.r_in)


class PFLimit(ItoLimit):
    """The Peluchetti–Favaro SDE for torchsde (Itô, general noise, ``g_prod`` only), on [0, T] read on s = t/T ∈
    [0, 1]: drift × T, diffusion × √T (the time change of §3.4; ``horizon`` T, 1 by default)."""

    def __init__(self, block: PFBlock, horizon: float = 1.0) -> None:
        super().__init__()
        self.block = block
        self.horizon = float(horizon)
        self.noise_channels = block.width * block.width + block.width

    def _timed(self, x: torch.Tensor, diffusion: bool = False) -> torch.Tensor:
        """x × T, or × √T for a diffusion term (x itself at T = 1, so that T = 1 computes what it always did)."""
        if self.horizon == 1.0:
            return x
        return (math.sqrt(self.horizon) if diffusion else self.horizon) * x

    def f(self, t, y):
        return self._timed(self.block.drift(y))

    def g_prod(self, t, y, v):
        return self._timed(self.block.diffusion_prod(y, v), diffusion=True)

    def stratonovich_correction(self, t, y):
        return self._timed(self.block.stratonovich_correction(y))


class PFPair(SDEPair):
    """Peluchetti–Favaro block x + φ(ΔW ψ(x) + Δb) ↔ its diffusion limit on the same Brownian path.

    φ is ``activation`` (default swish: φ'(0) = φ''(0) = 1/2) or the ``phi`` setting; everything else
    is in ``option_specs``. Uses ``width`` (D) and ``input_dim`` (unless ``x0`` is a number).
    """

    name = "pf"
    description = "Peluchetti-Favaro x + phi(dW psi(x) + db)  <->  dx = phi'(0)(dW psi + db) + 1/2 phi''(0) diag(...) dt"
    theory_source = "docs/theory.md §4; Peluchetti & Favaro 2020, Thm 3.1, Cor. 3.1-3.3"
    default_activation = "swish"
    requires_smooth_activation = True
    config_hints = {"weight_var": "its weight scales are the settings sigma_w and sigma_b (--set sigma_w=…, sigma_b=…)",
                    "beta": "its scaling is fixed by Δt = 1/L"}
    option_specs = {
        "phi": OptionSpec("", "φ by name (same as --activation; default swish)", _activation_name),
        "psi": OptionSpec("identity", "ψ by name (any activation of the list)", _activation_name),
        "sigma_w": OptionSpec(1.0, "σ_w ≥ 0: Σ^{W_O} = (σ_w²/D) R_O", number_option("sigma_w", minimum=0.0)),
        "sigma_b": OptionSpec(1.0, "σ_b ≥ 0: Σ^b = σ_b² R_b", number_option("sigma_b", minimum=0.0)),
        "mu_w": OptionSpec(0.0, "weight drift: μ^W = mu_w · I", number_option("mu_w")),
        "mu_b": OptionSpec(0.0, "bias drift: μ^b = mu_b · 1", number_option("mu_b")),
        "cov_out": OptionSpec("iid", "R_O (row covariance of the weights): iid, ar1:RHO, equi:RHO, diag:LO:HI",
                              parse_covariance),
        "cov_in": OptionSpec("iid", "R_I = Σ^{W_I} (column covariance): iid, ar1:RHO, equi:RHO, diag:LO:HI",
                             parse_covariance),
        "cov_b": OptionSpec("iid", "R_b (bias covariance): iid, ar1:RHO, equi:RHO, diag:LO:HI", parse_covariance),
        "x0": OptionSpec("normal", "input: 'normal' (x_0 ~ N(0, I_D), or an input layer with --input-dim) or a "
                                   "number z copied to every coordinate (the paper's SC models)", _initial),
        "T": OptionSpec(1.0, "the integration time T > 0: Δt = T/L, the path on [0, T] (§3.4: equivalent to T = 1 with "
                             "σ_w, σ_b × √T and μ_w, μ_b × T)", number_option("T", minimum=0.0)),
    }
    #: recommended study size (validation.convergence honours it); early depths are pre-asymptotic, which the
    #: corrected rate fit models (docs/theory.md §6).
    default_study: ClassVar[dict[str, Any]] = {
        "depths": [8, 16, 32, 64, 128, 256, 512], "samples": 1000, "reference_steps": 8192, "width": 6,
    }

    def __init__(self, config: ModelConfig, samples: int, seed: int = 0, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        super().__init__(config, samples, seed, dtype, device)
        self.x0 = self.option("x0")
        if isinstance(self.x0, (int, float)) and config.input_dim is not None:
            raise PairError("pf: x0 is a number (copied input), so input_dim (--input-dim) does not apply")
        self.psi = get_activation(self.option("psi"))
        scales = {key: self.option(key) for key in ("sigma_w", "sigma_b", "mu_w", "mu_b", "cov_out", "cov_in", "cov_b")}
        self.block = PFBlock(self.activation, self.psi, self.width, **scales, dtype=dtype, device=self.device)
        self.horizon = float(self.option("T"))
        if not self.horizon > 0:
            raise PairError(f"pf: T={self.horizon:g} is out of range (allowed: T > 0)")

    def _activation_spec(self) -> str:
        """φ: ``--activation`` or the setting ``phi`` (they must agree when both are given), else swish."""
        phi = self.option("phi")
        if phi and self.config.activation is not None and get_activation(self.config.activation).name != phi:
            raise PairError(f"pf: activation {self.config.activation} and the setting phi={phi} disagree")
        return phi or super()._activation_spec()

    @property
    def theory_rate(self) -> float:
        return 0.5

    @property
    def noise_dim(self) -> int:
        return self.width * self.width + self.width

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "phi": self.activation.name, "psi": self.psi.name,
                "phi_d1": self.activation.d1, "phi_d2": self.activation.d2, "fully_iid": self.block.iid,
                "T": self.horizon}

    def initial_state(self) -> torch.Tensor:
        if isinstance(self.x0, (int, float)):
            return torch.full((self.samples, self.width), float(self.x0), dtype=self.dtype, device=self.device)
        return super().initial_state()

    def network_step(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """The block on [0, T]: Δt = T/L and the path's increment over it, √T ΔB̃ in law of B̃ on [0, 1] (the engine's
        path, read on s = t/T; at T = 1 nothing is rescaled)."""
        if self.horizon == 1.0:
            return self.block.network_step(h, dt, dW)
        return self.block.network_step(h, self.horizon * dt, math.sqrt(self.horizon) * dW)

    def limit_sde(self) -> PFLimit:
        return PFLimit(self.block, self.horizon)


# ----------------------------------------------------------------------------------------------- Gram reduction
def _row_factor(cov: torch.Tensor) -> torch.Tensor:
    """F with F Fᵀ = cov for a batch of small symmetric PSD matrices (N, K, K).

    K = 1, 2: closed-form Cholesky with the pivots clamped at 0, so singular covariances (e.g. two equal
    inputs, or the input z = 0 whose ψ(x) vanishes at the first step) are fine; K > 2: eigen-decomposition
    in float64.
    """
    k = cov.shape[-1]
    if k == 1:
        return cov.clamp_min(0).sqrt()
    if k == 2:
        c11, c21, c22 = cov[:, 0, 0], cov[:, 1, 0], cov[:, 1, 1]
        l11 = c11.clamp_min(0).sqrt()
        l21 = torch.where(l11 > 0, c21 / l11.clamp_min(torch.finfo(cov.dtype).tiny), torch.zeros_like(c21))
        l22 = (c22 - l21 * l21).clamp_min(0).sqrt()
        zero = torch.zeros_like(c11)
        return torch.stack([torch.stack([l11, zero], -1), torch.stack([l21, l22], -1)], -2)
    vals, vecs = torch.linalg.eigh(cov.double())
    return (vecs * vals.clamp_min(0).sqrt().unsqueeze(-2)).to(cov.dtype)


def simulate_gram(
    phi: Activation,
    inputs: Sequence[float] | torch.Tensor,
    width: int,
    steps: int,
    draws: int,
    *,
    mode: str = "network",
    sigma_w: float = 1.0,
    sigma_b: float = 1.0,
    psi: Activation | None = None,
    seed: int = 0,
    stream: str = "gram",
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
    chunk: int = 1000,
    keep: int | None = 1,
    progress: bool = False,
    first_chunk: int = 0,
) -> torch.Tensor:
    """Outputs at t = 1 of the fully i.i.d. PF network (or its limit SDE) for K inputs, exact in law.

    Each draw is one weight realisation applied to all K inputs x_0^{(k)} = z_k 1_D. Per step, with
    Y = ψ(X) (D × K) and Δt = 1/steps, the rows of ΔW Y + Δb 1ᵀ are drawn i.i.d. from
    N(0, Δt (σ_w²/D YᵀY + σ_b² 11ᵀ)) (module docstring), then

    * ``mode="network"``: X ← X + φ(rows)  (the ResNet of depth L = ``steps``);
    * ``mode="sde"``: X ← X + φ'(0) rows + ½φ''(0) Δt (σ_b² + σ_w²/D diag(YᵀY))  (Euler–Maruyama of the
      limit SDE with ``steps`` steps, its own independent noise).

    Args:
        phi, psi: φ and ψ (ψ default identity).
        inputs: the K scalars z_k.
        width: D; steps: L (network) or Euler steps (SDE); draws: N.
        seed, stream: noise from ``generator(seed, "pf-gram", stream, mode, chunk index)``.
        dtype: float32 by default (a distribution study: rounding is far below its resolution).
        chunk: draws simulated at once (memory ~ 6·chunk·D·K numbers).
        keep: number of leading coordinates returned (None: all D).
        progress: a tqdm bar over steps × chunks.
        first_chunk: the index of the first chunk's stream: chunk c of a run is ``simulate_gram(…, draws=size,
            chunk=chunk, first_chunk=c)`` alone, bit for bit (how a study shares its chunks out to workers).

    Returns:
        (N, keep, K) tensor of output coordinates.
    """
    if mode not in ("network", "sde"):
        raise ValueError(f"mode={mode!r} (allowed: network, sde)")
    if width < 1 or steps < 1 or draws < 1:
        raise ValueError(f"width={width}, steps={steps}, draws={draws} must all be ≥ 1")
    psi = psi or get_activation("identity")
    z = torch.as_tensor(inputs, dtype=dtype, device=device).reshape(-1)
    k = z.shape[0]
    dt = 1.0 / steps
    w2 = sigma_w**2 / width
    outputs = []
    chunks = [(start, min(chunk, draws - start)) for start in range(0, draws, chunk)]
    bar = tqdm(total=steps * len(chunks), desc=f"{phi.name} {mode}", unit="step", disable=not progress,
               leave=False, mininterval=0.5)
    for c, (_start, size) in enumerate(chunks):
        gen = generator(seed, "pf-gram", stream, mode, first_chunk + c, device=device)
        x = z[None, :, None].expand(size, k, width).clone()  # (N, K, D): K states of width D per draw
        ones = torch.ones((k, k), dtype=dtype, device=device)
        for _ in range(steps):
            y = x if psi.name == "identity" else psi(x)
            gram = torch.bmm(y, y.transpose(1, 2))  # (N, K, K) = YᵀY
            cov = dt * (w2 * gram + sigma_b**2 * ones)
            factor = _row_factor(cov)  # (N, K, K), F Fᵀ = cov
            noise = torch.randn((size, k, width), generator=gen, dtype=dtype, device=device)
            rows = torch.bmm(factor, noise)  # column j: the K pre-activations of coordinate j, ~ N(0, cov)
            if mode == "network":
                x = x + phi(rows)
            else:
                q = sigma_b**2 + w2 * torch.diagonal(gram, dim1=1, dim2=2)  # (N, K)
                x = x + phi.d1 * rows + (0.5 * phi.d2 * dt) * q.unsqueeze(-1)
            bar.update(1)
        x = x.transpose(1, 2)  # (N, D, K)
        outputs.append(x if keep is None else x[:, :keep, :].clone())
    bar.close()
    return torch.cat(outputs, dim=0)
