"""Model (4) of Marion et al. at initialisation: forward and backward ratios, batched.

The network (docs/theory.md §5), input x ∈ R^{n_in}, width d, depth L, scaling α_L = L^{-β}:

    h_0 = A x,   h_{k+1} = h_k + α_L V_{k+1} g(h_k, θ_{k+1}),   F(x) = B h_L,

with the blocks of Marion et al. Table 1

    res-1: g(h) = σ(h),   res-2: g(h, W) = σ(W h),   res-3: g(h, W) = ReLU(W h).

Weights come from a :class:`Regime`: i.i.d. (entries of √d V_k, √d W_k symmetric, unit variance),
smooth (V_k = 𝒱(k/L), W_k = 𝒲(k/L) for RBF Gaussian processes with entry variance 1/d; or, as the authors'
code reads them, the processes' normalised increments) or fractional
(each entry's sequence (√d V_{k,ij})_k a unit-variance fGn of Hurst index H). A and B have i.i.d.
N(0, 1/n_in) and N(0, 1/d) entries (their law does not enter the ratios below for the homogeneous
res-3, which only sees the direction of h_0; B enters only through the direction of p_L).

**Ratios.** r_h = ‖h_L − h_0‖/‖h_0‖ and r_p = ‖p_0 − p_L‖/‖p_L‖ with p_k = ∂ℒ/∂h_k for the squared
loss ℒ = ½(F − y)² (n_out = 1). Since p_L = (F − y) Bᵀ, the scalar (F − y) cancels in r_p, and

    p_k = p_{k+1} + α_L (∂g/∂h)(h_k, θ_{k+1})ᵀ V_{k+1}ᵀ p_{k+1},   (∂g/∂h) = diag(σ'(W h_k)) W,

is run backwards from p_L = Bᵀ by hand (tested against autograd). To keep relative accuracy when the
ratios are tiny (identity regime, α_L ≈ 10⁻⁴), the *differences* Δ_k = h_k − h_0 and p_k − p_L are
accumulated, never h_L − h_0 computed by cancellation.

**Batching.** One weight draw serves every β: for a chunk of n networks, the state is a (n, d, C)
tensor whose C columns are (β, input) pairs, so each step is two batched GEMMs. Memory per chunk:
the weights (2·L·n·d² numbers) plus the activation pattern needed by the backward pass (L·n·d·C bools
for ReLU, numbers otherwise); :func:`measure_ratios` picks n to keep this under ``memory_mb``.

**Explosions.** Nothing is clipped: a sample whose h or p overflows yields r = inf or NaN, which the
callers count as an explosion (see :func:`explosion_mask`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar, Literal

import torch

from .activations import Activation, get_activation
from .fractional import FractionalNoise, check_hurst
from .seeding import generator
from .smooth import SmoothGaussianProcess

__all__ = [
    "Regime", "IIDRegime", "SmoothRegime", "FractionalRegime", "Block", "RatioResult",
    "propagate", "measure_ratios", "explosion_mask", "check_betas", "check_depth", "IID_LAWS", "largest_real_eigenvalue",
    "SMOOTH_CONVENTIONS", "ratio_chunk",
]

IID_LAWS = ("uniform", "normal", "rademacher")
BlockName = Literal["res1", "res2", "res3"]


def check_betas(betas: list[float] | tuple[float, ...] | torch.Tensor) -> list[float]:
    """β values as floats; each must be finite and ≥ 0."""
    values = [float(b) for b in betas]
    if not values:
        raise ValueError("at least one β is needed")
    for b in values:
        if not math.isfinite(b) or b < 0:
            raise ValueError(f"β={b} is out of range (allowed: finite β ≥ 0)")
    return values


def check_depth(depth: int) -> int:
    if int(depth) != depth or depth < 1:
        raise ValueError(f"depth L={depth!r} is out of range (allowed: integer L ≥ 1)")
    return int(depth)


# --------------------------------------------------------------------------------------- regimes


class Regime:
    """A law for the weight sequences (V_k, W_k)_{k=1..L}; ``name`` labels it in results."""

    name: str = "regime"

    #: the regime's weights are random noise that ``noise_dtype`` may draw in float32 (i.i.d. and fractional)
    takes_noise_dtype: ClassVar[bool] = True

    def network_weights(
        self, seed: int, label: tuple, depth: int, width: int, dtype: torch.dtype, device: torch.device,
        out: torch.Tensor | None = None, noise_dtype: torch.dtype | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(V, W), each of shape (L, d, d), entries of variance 1/d, for the network named by ``label``.

        ``out``: a (2, L, d, d) buffer of the dtype and device to draw into (reused across networks, it spares
        a fresh allocation — and the page faults of touching it — per network); the values do not depend on it.
        ``noise_dtype``: the type the weights are drawn in, then cast to ``dtype`` (None: ``dtype``); another
        type is another draw for the seed (float32 rounds each entry by at most 2^-24 relative).
        """
        raise NotImplementedError


@dataclass(frozen=True)
class IIDRegime(Regime):
    """i.i.d. entries: √d V_{k,ij} ~ U(−√3, √3) (``uniform``), N(0, 1) (``normal``) or ±1 (``rademacher``)."""

    law: str = "uniform"

    def __post_init__(self) -> None:
        if self.law not in IID_LAWS:
            raise ValueError(f"i.i.d. law {self.law!r} unknown (allowed: {', '.join(IID_LAWS)})")

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"iid-{self.law}"

    def fill(self, out: torch.Tensor, gen: torch.Generator, scale: float) -> torch.Tensor:
        """Fill ``out`` in place with the law times ``scale`` (unit variance before scaling)."""
        if self.law == "uniform":
            a = math.sqrt(3.0) * scale
            return out.uniform_(-a, a, generator=gen)
        if self.law == "normal":
            return out.normal_(0.0, scale, generator=gen)
        return out.bernoulli_(0.5, generator=gen).mul_(2.0 * scale).sub_(scale)

    def network_weights(self, seed, label, depth, width, dtype, device, out=None, noise_dtype=None):  # noqa: D102
        scale = 1.0 / math.sqrt(width)
        gen = generator(seed, *label, "iid", self.law, depth, device=device)
        drawn = dtype if noise_dtype is None else noise_dtype
        shape = (2, depth, width, width)
        both = torch.empty(shape, dtype=dtype, device=device) if out is None else out
        if drawn == dtype:
            self.fill(both, gen, scale)
        else:
            both.copy_(self.fill(torch.empty(shape, dtype=drawn, device=device), gen, scale))
        return both[0], both[1]


#: how smooth weights are read from the Gaussian process (see :class:`SmoothRegime`)
SMOOTH_CONVENTIONS = ("values", "increments")


@dataclass(frozen=True)
class SmoothRegime(Regime):
    """Smooth weights from independent RBF Gaussian processes 𝒱, 𝒲 (length-scale ℓ, entry variance 1/d), read in
    one of two ways (``convention``):

    * ``values`` (the default; Marion et al.'s text, §4): V_k = 𝒱(k/L), W_k = 𝒲(k/L), k = 1…L. The function does not
      depend on L (the stream ignores the depth), so depths are coupled: every L reads the same 𝒱, 𝒲 on its grid.
    * ``increments`` (the authors' code, ``models.create_linear_layers_rbf``): the increments
      ΔV_k = 𝒱(k/L) − 𝒱((k−1)/L), k = 1…L, divided by their scale s √d, where s is the mean over k of the
      standard deviation of the d × d entries of ΔV_k (so each entry has variance ≈ 1/d again); likewise W,
      normalised on its own. An increment over 1/L ≪ ℓ behaves like 𝒱′(k/L)/L, so these weights are a
      discretised derivative, rescaled: smooth in k, but of a different process (𝒱′ has covariance
      −k″, i.e. (1 − τ²/ℓ²) e^{−τ²/2ℓ²}/ℓ², shorter in correlation than 𝒱's e^{−τ²/2ℓ²}).
    """

    lengthscale: float = 0.1
    convention: str = "values"

    def __post_init__(self) -> None:
        if not (self.lengthscale > 0 and math.isfinite(self.lengthscale)):
            raise ValueError(f"length-scale ℓ={self.lengthscale} is out of range (allowed: ℓ > 0)")
        if self.convention not in SMOOTH_CONVENTIONS:
            raise ValueError(f"smooth-weight convention {self.convention!r} unknown "
                             f"(allowed: {', '.join(SMOOTH_CONVENTIONS)})")

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"smooth-l{self.lengthscale:g}" + ("" if self.convention == "values" else f"-{self.convention}")

    takes_noise_dtype: ClassVar[bool] = False  # a smooth function, not noise: drawn in ``dtype``

    def _process(self, seed: int, label: tuple, width: int, dtype: torch.dtype,
                 device: torch.device) -> SmoothGaussianProcess:
        """The network's pair of processes (𝒱, 𝒲) as one (2, d, d)-valued GP; it does not depend on the depth."""
        return SmoothGaussianProcess(
            samples=1, shape=(2, width, width), variance=1.0 / width, lengthscale=self.lengthscale,
            seed=seed, stream="/".join(map(str, (*label, "smooth"))), dtype=dtype, device=device,
        )

    def initial_weights(self, seed: int, label: tuple, width: int, dtype: torch.dtype,
                        device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(𝒱(0), 𝒲(0)) of the network named by ``label``: the processes at t = 0, which no layer reads (the
        ``values`` convention's first layer is 𝒱(1/L)). Marion et al.'s Prop. 13 assumes that 𝒱(0)ᵀ has a positive
        eigenvalue; 𝒱(0) has i.i.d. N(0, 1/d) entries, the marginal law of the process."""
        values = self._process(seed, label, width, dtype, device)(torch.zeros(1, dtype=dtype, device=device))[0, 0]
        return values[0], values[1]

    def network_weights(self, seed, label, depth, width, dtype, device, out=None, noise_dtype=None):  # noqa: D102
        if noise_dtype not in (None, dtype):
            raise ValueError("smooth weights are drawn in the computation's dtype (noise_dtype applies to i.i.d. and "
                             "fractional weights)")
        gp = self._process(seed, label, width, dtype, device)
        if self.convention == "values":
            times = torch.arange(1, depth + 1, dtype=dtype, device=device) / depth
            values = gp(times)[:, 0]  # (L, 2, d, d)
            return values[:, 0], values[:, 1]
        times = torch.arange(0, depth + 1, dtype=dtype, device=device) / depth
        increments = torch.diff(gp(times)[:, 0], dim=0)                           # (L, 2, d, d)
        scale = increments.flatten(2).std(dim=2, correction=0).mean(dim=0)       # (2,): s, per process
        increments = increments / (scale * math.sqrt(width)).view(1, 2, 1, 1)
        return increments[:, 0], increments[:, 1]


@dataclass(frozen=True)
class FractionalRegime(Regime):
    """Fractional weights: each entry's sequence (√d V_{k,ij})_{k=1..L} an independent unit-variance
    fGn of Hurst index H (Davies–Harte, :class:`limits.fractional.FractionalNoise`); H = ½ is i.i.d.
    N(0, 1/d)."""

    hurst: float = 0.5

    def __post_init__(self) -> None:
        check_hurst(self.hurst)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"fractional-H{self.hurst:g}"

    def network_weights(self, seed, label, depth, width, dtype, device, out=None, noise_dtype=None):  # noqa: D102
        gen = generator(seed, *label, "fgn", self.hurst, depth, device=device)
        noise = FractionalNoise(self.hurst, depth, dtype=dtype if noise_dtype is None else noise_dtype, device=device)
        g = noise.sample((2, width, width), gen).to(dtype)  # (2, d, d, L)
        g = g.permute(0, 3, 1, 2).mul_(1.0 / math.sqrt(width))
        return g[0], g[1]


# ---------------------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Block:
    """g(h, θ) of Marion et al. Table 1: ``res1`` σ(h), ``res2`` σ(W h), ``res3`` ReLU(W h)."""

    kind: BlockName = "res3"
    activation: str = "relu"

    def __post_init__(self) -> None:
        if self.kind not in ("res1", "res2", "res3"):
            raise ValueError(f"block {self.kind!r} unknown (allowed: res1, res2, res3)")
        if self.kind == "res3" and get_activation(self.activation).name != "relu":
            raise ValueError("res3 uses ReLU by definition; pick res2 for another activation")

    @property
    def sigma(self) -> Activation:
        return get_activation(self.activation)

    @property
    def uses_w(self) -> bool:
        return self.kind != "res1"

    @property
    def is_relu(self) -> bool:
        return self.sigma.name == "relu"

    def derivative(self, pre: torch.Tensor) -> torch.Tensor:
        """σ'(pre) (ReLU: 1{pre > 0}, as autograd)."""
        if self.is_relu:
            return pre > 0
        x = pre.detach().requires_grad_(True)
        with torch.enable_grad():
            (grad,) = torch.autograd.grad(self.sigma(x).sum(), x)
        return grad


# ------------------------------------------------------------------------------------- propagate


@dataclass
class RatioResult:
    """Per (network, column): r_h = ‖h_L − h_0‖/‖h_0‖, r_p = ‖p_0 − p_L‖/‖p_L‖, the norm ratios
    n_h = ‖h_L‖/‖h_0‖ and n_p = ‖p_0‖/‖p_L‖ (Marion et al. Fig. 2), and optionally the per-layer
    squared norms ‖h_k‖², shape (L+1, n, C), the largest ratio over the layers r_h_max =
    max_k ‖h_k − h_0‖/‖h_0‖ (Marion et al. Prop. 13), and the largest real eigenvalue of each network's first
    weight V_0 (NaN when it has none; shape (n,)). In :func:`measure_ratios` the ratios have shape
    (len(betas), networks, inputs)."""

    r_h: torch.Tensor
    r_p: torch.Tensor
    n_h: torch.Tensor
    n_p: torch.Tensor
    h_norms2: torch.Tensor | None = None
    r_h_max: torch.Tensor | None = None
    v0_eigenvalue: torch.Tensor | None = None


def propagate(
    h0: torch.Tensor,
    V: torch.Tensor,
    W: torch.Tensor | None,
    alpha: torch.Tensor,
    p_last: torch.Tensor,
    block: Block = Block(),
    backward: bool = True,
    record_norms: bool = False,
    track_max: bool = False,
) -> RatioResult:
    """Run n networks on C columns each, forward then (optionally) backward.

    Args:
        h0: (n, d, C) initial states h_0 = A x.
        V, W: (L, n, d, d) weights (W ignored for res1, may be None).
        alpha: (C,) the scaling α_L of each column.
        p_last: (n, d, 1) or (n, d, C), the final gradient p_L (∝ Bᵀ).
        block: the residual block g.
        backward: also run the backward recursion for r_p (else r_p is NaN).
        record_norms: also return ‖h_k‖² for k = 0…L.
        track_max: also return r_h_max = max_k ‖h_k − h_0‖/‖h_0‖ (a running maximum: no per-layer storage).

    Returns:
        :class:`RatioResult` with r_h, r_p of shape (n, C).
    """
    depth, n, d, _ = V.shape
    if h0.shape[:2] != (n, d):
        raise ValueError(f"h0 has shape {tuple(h0.shape)}, expected (n={n}, d={d}, C)")
    columns = h0.shape[2]
    alpha = alpha.to(h0.dtype).reshape(1, 1, columns)
    sigma = block.sigma
    keep_dtype = torch.bool if block.is_relu else h0.dtype
    saved = torch.empty((depth, n, d, columns), dtype=keep_dtype, device=h0.device) if backward else None
    delta = torch.zeros_like(h0)
    norms = [h0.square().sum(1)] if record_norms else None
    largest = torch.zeros_like(h0[:, 0]) if track_max else None     # max_k ‖h_k − h_0‖², k = 0 included
    for k in range(depth):
        h = h0 + delta
        pre = torch.bmm(W[k], h) if block.uses_w else h
        if saved is not None:
            saved[k] = block.derivative(pre)
        delta.add_(torch.bmm(V[k], sigma(pre)).mul_(alpha))
        if norms is not None:
            norms.append((h0 + delta).square().sum(1))
        if track_max:
            largest = torch.maximum(largest, delta.square().sum(1))
    h0_norm = h0.norm(dim=1)
    r_h = delta.norm(dim=1) / h0_norm
    n_h = (h0 + delta).norm(dim=1) / h0_norm
    if saved is None:
        r_p = torch.full_like(r_h, float("nan"))
        n_p = r_p.clone()
    else:
        p_last = p_last.expand(n, d, columns)
        dp = torch.zeros_like(h0)
        vt = V.transpose(2, 3)
        wt = W.transpose(2, 3) if block.uses_w else None
        for k in range(depth - 1, -1, -1):
            u = torch.bmm(vt[k], p_last + dp).mul_(alpha).mul_(saved[k])
            dp.add_(torch.bmm(wt[k], u) if wt is not None else u)
        p_norm = p_last.norm(dim=1)
        r_p = dp.norm(dim=1) / p_norm
        n_p = (p_last + dp).norm(dim=1) / p_norm
    return RatioResult(r_h, r_p, n_h, n_p, torch.stack(norms) if norms is not None else None,
                       largest.sqrt() / h0_norm if track_max else None)


def largest_real_eigenvalue(matrices: torch.Tensor) -> torch.Tensor:
    """The largest real eigenvalue of each matrix of a batch (…, d, d) (float64; NaN where every eigenvalue is
    complex). An eigenvalue counts as real when its imaginary part is below 10⁻⁹ of the spectral radius (a real
    eigenvalue's computed imaginary part is exactly 0 in LAPACK's real Schur form, so the tolerance only guards
    against rounding)."""
    values = torch.linalg.eigvals(matrices.double().cpu())
    radius = values.abs().amax(dim=-1, keepdim=True)
    real = values.imag.abs() <= 1e-9 * radius
    return torch.where(real, values.real, torch.full_like(values.real, -math.inf)).amax(dim=-1).nan_to_num(
        nan=math.nan, neginf=math.nan)


def explosion_mask(r: torch.Tensor) -> torch.Tensor:
    """True where a ratio is not finite (overflow to inf or NaN): an explosion, never a number."""
    return ~torch.isfinite(r)


def ratio_chunk(depth: int, width: int, columns: int, networks: int, item: int, block: Block,
                memory_mb: float = 512.0) -> tuple[int, int]:
    """How :func:`measure_ratios` splits ``networks`` networks: (networks per chunk, bytes of one network's arrays).

    One network holds its weights V, W (2 · L · d² items of ``item`` bytes) and, for the backward pass, the forward
    pass's kept activations: L · d · columns values twice (a boolean each for a ReLU block, an item otherwise).
    A chunk is as many networks as fit in ``memory_mb`` (at least one)."""
    per_net = 2 * depth * width * width * item + depth * width * columns * (1 if block.is_relu else item) * 2
    return max(1, min(networks, int(memory_mb * 2**20 // max(per_net, 1)))), per_net


def measure_ratios(
    regime: Regime,
    depth: int,
    betas: list[float],
    networks: int,
    inputs: int = 1,
    width: int = 40,
    n_in: int = 64,
    block: Block = Block(),
    seed: int = 0,
    label: tuple = ("ratios",),
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    backward: bool = True,
    memory_mb: float = 512.0,
    progress: Callable[[int], None] | None = None,
    first: int = 0,
    noise_dtype: torch.dtype | None = None,
    track_max: bool = False,
) -> RatioResult:
    """r_h, r_p, n_h, n_p for ``networks`` networks × ``inputs`` inputs × every β, at one depth; with ``track_max``
    also r_h_max = max_k ‖h_k − h_0‖/‖h_0‖ and the largest real eigenvalue of each network's V_0 (Marion et al.
    Prop. 13: :class:`RatioResult`).

    Network i draws its weights from streams labelled ``(*label, "net", i)`` (so results do not
    depend on how networks are chunked, or split between processes: ``first`` numbers the networks
    first, first + 1, …), its inputs x ~ N(0, I_{n_in}), A and B from ``(*label, "io", i)``. Returns a
    :class:`RatioResult` whose tensors have shape (len(betas), networks, inputs) (on the CPU). The weights
    of a chunk are drawn into buffers allocated once and reused, in ``noise_dtype`` (None: ``dtype``;
    :meth:`Regime.network_weights`).
    """
    depth = check_depth(depth)
    betas = check_betas(betas)
    for name, value in (("networks", networks), ("inputs", inputs), ("width", width), ("n_in", n_in)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name}={value!r} is out of range (allowed: integer ≥ 1)")
    device = torch.device(device)
    columns = len(betas) * inputs
    alpha = torch.tensor([depth ** (-b) for b in betas], dtype=dtype, device=device).repeat_interleave(inputs)
    chunk, _ = ratio_chunk(depth, width, columns, networks, torch.finfo(dtype).bits // 8, block, memory_mb)
    fields = ("r_h", "r_p", "n_h", "n_p") + (("r_h_max",) if track_max else ())
    out = {name: torch.empty((networks, columns), dtype=dtype) for name in fields}
    eigenvalues = torch.empty(networks, dtype=torch.float64) if track_max else None
    scratch = torch.empty((2, depth, width, width), dtype=dtype, device=device)
    V_chunk = torch.empty((depth, chunk, width, width), dtype=dtype, device=device)
    W_chunk = torch.empty_like(V_chunk)
    for start in range(0, networks, chunk):
        stop = min(networks, start + chunk)
        h0s, ps = [], []
        for j, i in enumerate(range(first + start, first + stop)):
            V, W = regime.network_weights(seed, (*label, "net", i), depth, width, dtype, device, out=scratch,
                                          noise_dtype=noise_dtype)
            V_chunk[:, j] = V
            W_chunk[:, j] = W
            gen = generator(seed, *label, "io", i, device=device)
            x = torch.randn((n_in, inputs), generator=gen, dtype=dtype, device=device)
            A = torch.randn((width, n_in), generator=gen, dtype=dtype, device=device) / math.sqrt(n_in)
            B = torch.randn((width, 1), generator=gen, dtype=dtype, device=device) / math.sqrt(width)
            h0s.append((A @ x).repeat(1, len(betas)))
            ps.append(B)
        count = stop - start
        result = propagate(torch.stack(h0s), V_chunk[:, :count], W_chunk[:, :count], alpha, torch.stack(ps), block,
                           backward, track_max=track_max)
        for name in fields:
            out[name][start:stop] = getattr(result, name).cpu()
        if eigenvalues is not None:
            eigenvalues[start:stop] = largest_real_eigenvalue(V_chunk[0, :count])
        if progress is not None:
            progress(count)
    shape = (networks, len(betas), inputs)
    return RatioResult(**{name: out[name].reshape(shape).transpose(0, 1) for name in fields},
                       v0_eigenvalue=eigenvalues)
