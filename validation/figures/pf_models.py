"""The models of Peluchetti & Favaro's figures (their Fig. 1, 3, 4 and Appendix B), shared by the figures that
draw them (``pf-function-space``, ``pf-correlation``, ``pf-abc``): the stable ResNets SC/SR (and the Euler
scheme of their SDE limit on the same Brownian path), and the feed-forward networks on the edge of chaos; and the
ResNet with positively homogeneous φ at the parameter scale Δt^γ of §3.4 (``pf-relu``) with its neural ODE.

Every function takes the figure's resolved settings ``s`` (seed, dtype, width, depth, sigma_w, sigma_b,
input_layer; eoc_width, eoc_depth, eoc_sigma_b) and draws network i from its own stream (or chunk c of the draws
from the chunk's), so a draw's numbers do not depend on how many are drawn; given a ``runner``, the chunks are
computed in spans on local workers or a Dask cluster with the same numbers (:func:`in_spans`: the figures'
``--workers``, ``--scheduler``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.brownian import tree_sum
from limits.peluchetti_favaro import PFBlock
from limits.seeding import generator
from validation.core.workers import TaskRunner

__all__ = ["MODELS", "SC_MODELS", "eoc_sigma_w", "pf_noise", "resnet_outputs", "block_outputs", "eoc_outputs", "pc_fractions",
           "top_pc_fraction", "homogeneous_outputs", "homogeneous_ode", "pf_seconds", "pf_megabytes", "in_spans",
           "draw_spans", "MAX_TASKS"]

#: the four models of Peluchetti & Favaro's Fig. 1, 3 and 4: (kind, activation)
MODELS = {"SC_tanh": ("resnet", "tanh"), "SC_swish": ("resnet", "swish"),
          "EO_tanh": ("eoc", "tanh"), "EO_ReLU": ("eoc", "relu")}
#: the two stable ResNets with a copied input (SC) and their activations
SC_MODELS = (("SC_tanh", "tanh"), ("SC_swish", "swish"))


def eoc_sigma_w(activation: str, sigma_b: float) -> float:
    """σ_w of the edge of chaos for a bias std σ_b: σ_w² E[φ'(√q* Z)²] = 1 with q* = σ_w² E[φ(√q* Z)²] + σ_b²
    (Poole et al. 2016, Schoenholz et al. 2017); ReLU: √2 (its EOC is σ_w² = 2, σ_b = 0)."""
    if activation == "relu":
        return math.sqrt(2.0)
    if activation != "tanh":
        raise ValueError(f"EOC parameters are implemented for tanh and relu, not {activation!r}")
    nodes, weights = np.polynomial.hermite_e.hermegauss(101)
    weights = weights / weights.sum()

    def chi(sigma_w: float) -> float:
        q = 1.0
        for _ in range(3000):
            new = sigma_w**2 * np.sum(weights * np.tanh(math.sqrt(q) * nodes) ** 2) + sigma_b**2
            if abs(new - q) < 1e-14:
                break
            q = new
        return sigma_w**2 * np.sum(weights * (1 - np.tanh(math.sqrt(q) * nodes) ** 2) ** 2)

    if sigma_b == 0:
        return 1.0
    low, high = 1.0, 4.0
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if chi(mid) < 1 else (low, mid)
    return 0.5 * (low + high)


def pf_noise(block: PFBlock, dW: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """:meth:`PFBlock.noise` (i.i.d. block) for K states per weight draw: ``dW`` (N, D² + D), ``y`` (N, K, D)
    → (N, K, D), column k being ``block.noise(dW, y[:, k])`` (one weight draw applied to K inputs)."""
    n, _, d = y.shape
    matrix = dW[:, : d * d].reshape(n, d, d)
    return block.weight_scale * torch.bmm(y, matrix.transpose(1, 2)) + block.sigma_b * dW[:, None, d * d:]


def _input_layer(kind: str, zt: torch.Tensor, gens: list[torch.Generator], size: int, d: int, dtype: torch.dtype,
                 device: torch.device) -> torch.Tensor:
    """x_0 for inputs ``zt`` of shape (K,) or (K, Z), as (size, K, D). ``copy``: x_{0,d} = z_{d mod Z} (the paper's
    SC models copy a 1-D input across all D dimensions; a 2-D input alternates its two coordinates, a choice the
    paper does not state). ``random``: x_0 = W_I z with W_I ~ N(0, 1) entries of shape (D, Z), one per draw (the
    paper's SR models)."""
    k = zt.shape[0]
    if zt.ndim == 1:  # one input dimension: the original construction, bit for bit
        if kind == "copy":
            return zt[None, :, None].expand(size, k, d).clone()
        w_in = torch.stack([torch.randn(d, generator=g, dtype=dtype, device=device) for g in gens])
        return zt[None, :, None] * w_in[:, None, :]
    z_dim = zt.shape[1]
    if kind == "copy":
        return zt[:, torch.arange(d, device=device) % z_dim][None].expand(size, k, d).clone()
    w_in = torch.stack([torch.randn((d, z_dim), generator=g, dtype=dtype, device=device) for g in gens])
    return torch.einsum("kz,ndz->nkd", zt, w_in)


#: the most tasks one call shares out: contiguous runs of its chunks of draws (a chunk's numbers never depend on
#: which run it is in, so a run's numbers do not depend on the workers)
MAX_TASKS = 64

Parts = TypeVar("Parts", np.ndarray, tuple, dict)


def draw_spans(draws: int, chunk: int, tasks: int = MAX_TASKS) -> list[tuple[int, int]]:
    """The draws 0 … ``draws`` − 1 as at most ``tasks`` contiguous spans (first, stop) of whole chunks of ``chunk``
    (the last chunk may be short), as even as the chunks allow."""
    chunks = -(-draws // chunk)
    groups = max(1, min(chunks, tasks))
    edges = [(i * chunks) // groups for i in range(groups + 1)]
    return [(a * chunk, min(draws, b * chunk)) for a, b in zip(edges, edges[1:])]


def _joined(parts: list[Parts]) -> Parts:
    """The spans' outputs end to end: arrays concatenated along the draws, tuples and dicts item by item."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(None if first[i] is None else _joined([p[i] for p in parts]) for i in range(len(first)))
    if isinstance(first, dict):
        return {key: _joined([p[key] for p in parts]) for key in first}
    return np.concatenate(parts, axis=0)


def in_spans(compute: Callable[..., Parts], draws: int, chunk: int, runner: TaskRunner | None,
             bar: tqdm | None) -> Parts:
    """``compute((0, draws), bar)`` here when ``runner`` is None; else ``compute(span)`` for the spans of
    :func:`draw_spans` on the runner (local workers or a Dask cluster: ``compute`` is a module-level function with
    its arguments bound, so it pickles), joined. Every chunk of draws is computed as in one process, from its own
    streams, so the result is the same array either way."""
    if runner is None:
        return compute((0, draws), bar)
    parts = runner(compute, draw_spans(draws, chunk))
    if bar is not None:
        bar.update(draws)
    return _joined(parts)


def resnet_outputs(s: Any, activation: str, z: np.ndarray, draws: int, sde_factor: int | None,
                    device: torch.device, bar: tqdm, runner: TaskRunner | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """x_{T,1}(z) of the P&F ResNet (and of the Euler scheme of its limit on ``sde_factor``× finer steps of
    the same path), shape (draws, K). Draw i reads the stream (seed, "figures", "pf-resnet", φ, i); the draws come
    in chunks (of 2^22 numbers at most), shared out by ``runner`` (:func:`in_spans`)."""
    channels = s.width * s.width + s.width
    chunk = max(1, min(draws, (1 << 22) // ((sde_factor or 1) * channels + 4 * len(z) * s.width)))
    return in_spans(functools.partial(_resnet_span, s, activation, z, sde_factor, str(device), chunk), draws, chunk,
                    runner, bar)


def _resnet_span(s: Any, activation: str, z: np.ndarray, sde_factor: int | None, device_name: str, chunk: int,
                 span: tuple[int, int], bar: tqdm | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`resnet_outputs` of the draws ``span`` = (first, stop), ``first`` a multiple of ``chunk``."""
    dtype, device = s.torch_dtype, torch.device(device_name)
    d, depth = s.width, s.depth
    factor = sde_factor or 1
    block = PFBlock(get_activation(activation), get_activation("identity"), d, sigma_w=s.sigma_w,
                    sigma_b=s.sigma_b, dtype=dtype, device=device)
    zt = torch.as_tensor(z, dtype=dtype, device=device)
    k = zt.shape[0]
    channels = d * d + d
    dt = 1.0 / depth
    fine_scale = math.sqrt(dt / factor)
    first, stop = span
    net_out, sde_out = np.empty((stop - first, k)), (np.empty((stop - first, k)) if sde_factor else None)
    for start in range(first, stop, chunk):
        size = min(chunk, stop - start)
        gens = [generator(s.seed, "figures", "pf-resnet", activation, i, device=device)
                for i in range(start, start + size)]
        x0 = _input_layer(s.input_layer, zt, gens, size, d, dtype, device)
        x_net, x_sde = x0, x0.clone()
        for _ in range(depth):
            fine = torch.stack([torch.randn((factor, channels), generator=g, dtype=dtype, device=device)
                                for g in gens], 1).mul_(fine_scale)  # (factor, size, D² + D)
            coarse = tree_sum(fine) if factor > 1 else fine[0]
            y = block.psi(x_net)
            x_net = x_net + block.phi(dt * block.mean_drift(y) + pf_noise(block, coarse, y))
            if sde_factor:
                for j in range(factor):
                    y = block.psi(x_sde)
                    x_sde = x_sde + (dt / factor) * block.drift(x_sde) + block.phi.d1 * pf_noise(block, fine[j], y)
        net_out[start - first:start - first + size] = x_net[:, :, 0].double().cpu().numpy()
        if sde_factor:
            sde_out[start - first:start - first + size] = x_sde[:, :, 0].double().cpu().numpy()
        if bar is not None:
            bar.update(size)
    return net_out, sde_out


def block_outputs(block: PFBlock, z: Sequence[float], depth: int, draws: int, sde_factor: int | None, *, seed: int,
                  labels: tuple[object, ...], chunk: int = 500, device: torch.device | str = "cpu",
                  bar: tqdm | None = None, runner: TaskRunner | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Every coordinate of x_T(z) of the P&F ResNet with any :class:`PFBlock` (any covariance family), and of the
    Euler scheme of its limit SDE on ``sde_factor``× finer steps of the same Brownian path, shape (draws, D, K).

    Input copied, x_0 = z_k 1_D (the paper's SC models). Per draw one weight path (ΔB^W, ΔB^b) is applied to the
    K inputs; with Δt = 1/L and h = Δt/``sde_factor`` the fine increments ε_j ~ N(0, h I_{D²+D}) give

        ResNet:  x ← x + φ(Δt (μ^W ψ(x) + μ^b) + noise(Σ_j ε_j, ψ(x)))     (:meth:`PFBlock.network_step`),
        SDE:     x ← x + h drift(x) + φ'(0) noise(ε_j, ψ(x)),  j = 1 … sde_factor   (Euler–Maruyama),

    with ``noise`` = :meth:`PFBlock.noise`, the same code for the fully i.i.d. block and the others. Draws come in
    chunks of ``chunk``; chunk c reads the stream (seed, "figures", *labels, c), so the first draws do not depend on
    how many are drawn; ``runner`` shares them out (:func:`in_spans`). ``sde_factor`` None: the ResNet alone (second
    output None); it must be a power of two.
    """
    factor = sde_factor or 1
    if factor & (factor - 1):
        raise ValueError(f"sde_factor={factor} must be a power of two (the fine steps are summed pairwise)")
    return in_spans(functools.partial(_block_span, block, tuple(float(v) for v in np.ravel(z)), depth, sde_factor,
                                      seed, labels, chunk, str(device)), draws, chunk, runner, bar)


def _block_span(block: PFBlock, z: tuple[float, ...], depth: int, sde_factor: int | None, seed: int,
                labels: tuple[object, ...], chunk: int, device: str, span: tuple[int, int],
                bar: tqdm | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`block_outputs` of the draws ``span`` = (first, stop), ``first`` a multiple of ``chunk``."""
    factor = sde_factor or 1
    dtype, d = block.r_in.dtype, block.width
    zt = torch.as_tensor(z, dtype=dtype, device=device).reshape(-1)
    k = zt.shape[0]
    channels = d * d + d
    dt, fine_scale = 1.0 / depth, math.sqrt(1.0 / (depth * factor))
    first, stop = span
    net_out = np.empty((stop - first, d, k))
    sde_out = np.empty((stop - first, d, k)) if sde_factor else None

    def noise(dW: torch.Tensor, x: torch.Tensor) -> torch.Tensor:  # one weight draw applied to the K states
        return block.noise(dW.repeat_interleave(k, 0), block.psi(x).reshape(-1, d)).reshape(x.shape)

    for start in range(first, stop, chunk):
        size = min(chunk, stop - start)
        gen = generator(seed, "figures", *labels, start // chunk, device=device)
        x_net = zt[None, :, None].expand(size, k, d).clone()
        x_sde = x_net.clone()
        for _ in range(depth):
            fine = torch.randn((factor, size, channels), generator=gen, dtype=dtype, device=device).mul_(fine_scale)
            coarse = tree_sum(fine) if factor > 1 else fine[0]
            x_net = x_net + block.phi(dt * block.mean_drift(block.psi(x_net)) + noise(coarse, x_net))
            if sde_factor:
                for j in range(factor):
                    x_sde = x_sde + (dt / factor) * block.drift(x_sde) + block.phi.d1 * noise(fine[j], x_sde)
        net_out[start - first:start - first + size] = x_net.transpose(1, 2).double().cpu().numpy()
        if sde_out is not None:
            sde_out[start - first:start - first + size] = x_sde.transpose(1, 2).double().cpu().numpy()
        if bar is not None:
            bar.update(size)
    return net_out, sde_out


def eoc_outputs(s: Any, activation: str, z: np.ndarray, draws: int, device: torch.device,
                 bar: tqdm, runner: TaskRunner | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """x_{last,1}(z) of the feed-forward network on the edge of chaos, shape (draws, K):
    h^1 = W^1 z + b^1 (W^1 ~ N(0, σ_w²)), h^{l+1} = W^{l+1} φ(h^l) + b^{l+1} (W ~ N(0, σ_w²/D), b ~ N(0, σ_b²)),
    ``eoc_depth`` layers of ``eoc_width`` units. Draw i reads the stream (seed, "figures", "pf-eoc", φ, i); the
    draws come in chunks, shared out by ``runner`` (:func:`in_spans`)."""
    sigma_b = 0.0 if activation == "relu" else s.eoc_sigma_b
    sigma_w = eoc_sigma_w(activation, sigma_b)
    d = s.eoc_width
    chunk = max(1, min(draws, (1 << 22) // (d * (d + 1) + 4 * len(z) * d)))
    out = in_spans(functools.partial(_eoc_span, s, activation, z, sigma_w, sigma_b, str(device), chunk), draws, chunk,
                   runner, bar)
    return out, {"sigma_w": sigma_w, "sigma_b": sigma_b, "width": d, "depth": s.eoc_depth}


def _eoc_span(s: Any, activation: str, z: np.ndarray, sigma_w: float, sigma_b: float, device_name: str, chunk: int,
              span: tuple[int, int], bar: tqdm | None = None) -> np.ndarray:
    """:func:`eoc_outputs` of the draws ``span`` = (first, stop), ``first`` a multiple of ``chunk``."""
    dtype, device = s.torch_dtype, torch.device(device_name)
    phi = get_activation(activation)
    d, depth = s.eoc_width, s.eoc_depth
    zt = torch.as_tensor(z, dtype=dtype, device=device)
    first, stop = span
    out = np.empty((stop - first, zt.shape[0]))
    for start in range(first, stop, chunk):
        size = min(chunk, stop - start)
        gens = [generator(s.seed, "figures", "pf-eoc", activation, i, device=device) for i in range(start, start + size)]
        first_layer = torch.stack([torch.randn((2, d), generator=g, dtype=dtype, device=device) for g in gens])
        h = sigma_w * zt[None, :, None] * first_layer[:, None, 0, :] + sigma_b * first_layer[:, None, 1, :]
        for _ in range(depth - 1):
            wb = torch.stack([torch.randn((d, d + 1), generator=g, dtype=dtype, device=device) for g in gens])
            h = (sigma_w / math.sqrt(d)) * torch.bmm(phi(h), wb[:, :, :d].transpose(1, 2)) \
                + sigma_b * wb[:, None, :, d]
        out[start - first:start - first + size] = h[:, :, 0].double().cpu().numpy()
        if bar is not None:
            bar.update(size)
    return out


def pc_fractions(x: torch.Tensor) -> torch.Tensor:
    """λ_max / trace of the sample covariance of each batch of draws x (R, n, K) → (R,)."""
    centred = x - x.mean(dim=1, keepdim=True)
    n, k = x.shape[1], x.shape[2]
    gram = centred.transpose(1, 2) @ centred if k <= n else centred @ centred.transpose(1, 2)
    values = torch.linalg.eigvalsh(gram)
    total = values.sum(-1)
    return torch.where(total > 0, values[..., -1] / total, torch.full_like(total, math.nan))


def top_pc_fraction(x: np.ndarray) -> float:
    """The fraction of the variance of the function draws (rows of x, vectors over z) explained by their first
    principal component: λ_max / trace of the sample covariance; 1 iff every pair of outputs is perfectly
    correlated (the covariance has rank 1)."""
    return float(pc_fractions(torch.as_tensor(x, dtype=torch.float64)[None])[0])


def homogeneous_outputs(phis: Sequence[str], gammas: Sequence[float], psi: str, z: float, width: int, depth: int,
                        draws: int, *, sigma_w: float, sigma_b: float, seed: int, labels: tuple[object, ...],
                        chunk: int = 1000, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
                        bar: tqdm | None = None, runner: TaskRunner | None = None
                        ) -> dict[tuple[str, float], np.ndarray]:
    """x_T − x_0 of the ResNet of P&F §3.4 ("Non-smooth activations") for every φ of ``phis`` and γ of ``gammas``,
    each (draws, D): with Δt = 1/L, x_0 = z·1 (the SC models' input layer) and, per layer k,

        x_{k+1} = x_k + φ(Δt^γ (ε^W_k ψ(x_k) + ε^b_k)),   ε^W_k ~ N(0, σ_w²/D) entries (D × D), ε^b_k ~ N(0, σ_b² I_D),

    i.e. the paper's eq. (10) with ΔW = Δt^γ ε^W, Δb = Δt^γ ε^b (γ = ½ is its Assumption 3.4, fully i.i.d., μ = 0;
    γ = 1 is the Δt-scaled block of Chen et al.'s neural ODE when φ is positively homogeneous). Every (φ, γ) reads
    the same weights (common random numbers). Draws come in chunks of ``chunk``; chunk c reads the stream
    (seed, "figures", *labels, L, c), so the depths are independent and the first draws do not depend on how many
    are drawn; ``runner`` shares them out (:func:`in_spans`)."""
    return in_spans(functools.partial(_homogeneous_span, tuple(phis), tuple(float(g) for g in gammas), psi, z, width,
                                      depth, sigma_w, sigma_b, seed, labels, chunk, dtype, str(device)),
                    draws, chunk, runner, bar)


def _homogeneous_span(phis: tuple[str, ...], gammas: tuple[float, ...], psi: str, z: float, width: int, depth: int,
                      sigma_w: float, sigma_b: float, seed: int, labels: tuple[object, ...], chunk: int,
                      dtype: torch.dtype, device: str, span: tuple[int, int], bar: tqdm | None = None
                      ) -> dict[tuple[str, float], np.ndarray]:
    """:func:`homogeneous_outputs` of the draws ``span`` = (first, stop), ``first`` a multiple of ``chunk``."""
    acts = {name: get_activation(name) for name in phis}
    inner = get_activation(psi)
    d, dt = int(width), 1.0 / depth
    scale_w = sigma_w / math.sqrt(d)
    first, stop = span
    out = {(name, float(g)): np.empty((stop - first, d)) for name in phis for g in gammas}
    for start in range(first, stop, chunk):
        size = min(chunk, stop - start)
        gen = generator(seed, "figures", *labels, depth, start // chunk, device=device)
        states = {key: torch.full((size, d), float(z), dtype=dtype, device=device) for key in out}
        for _ in range(depth):
            eps = torch.randn((size, d, d + 1), generator=gen, dtype=dtype, device=device)
            weights, biases = eps[:, :, :d] * scale_w, eps[:, :, d] * sigma_b
            for (name, gamma), x in states.items():
                pre = torch.bmm(weights, inner(x).unsqueeze(-1)).squeeze(-1) + biases
                states[(name, gamma)] = x + acts[name](dt**gamma * pre)
        for key, x in states.items():
            out[key][start - first:start - first + size] = (x - float(z)).double().cpu().numpy()
        if bar is not None:
            bar.update(size)
    return out


def homogeneous_ode(phi: str, psi: str, z: float, *, sigma_w: float, sigma_b: float, steps: int = 4096) -> float:
    """x_T − x_0 of the deterministic limit at γ = 1 (P&F §3.4; Chen et al.'s neural ODE): every coordinate follows
    m' = E φ(s(m) N(0, 1)) with s(m)² = σ_b² + σ_w² ψ(m)² (the pre-activation's variance given x = m·1, the same at
    every width), by RK4 with ``steps`` steps on [0, 1]. φ = relu: E φ(sN) = s/√(2π); φ = identity: 0 (m stays z)."""
    if phi == "identity":
        return 0.0
    if phi != "relu":
        raise ValueError(f"the neural ODE is implemented for relu and identity, not {phi!r}")
    inner = get_activation(psi)

    def rate(m: float) -> float:
        y = float(inner(torch.tensor(m, dtype=torch.float64)))
        return math.sqrt(sigma_b**2 + sigma_w**2 * y * y) / math.sqrt(2 * math.pi)

    m, h = float(z), 1.0 / steps
    for _ in range(steps):
        k1 = rate(m)
        k2 = rate(m + 0.5 * h * k1)
        k3 = rate(m + 0.5 * h * k2)
        k4 = rate(m + h * k3)
        m += h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return m - float(z)


def pf_seconds(s: Any, *, resnet_passes: int, models: int, points: int) -> float:
    """A rough run time on the 2-core reference of ``models`` ResNets and as many edge-of-chaos networks at
    ``points`` inputs, each ResNet passed ``resnet_passes`` times over its path: ~5e-10 s per multiply-add and
    ~1.5e-8 s per normal drawn (the default pf-function-space and pf-correlation: 16 s and 22 s measured)."""
    resnet = models * s.draws * s.depth * resnet_passes * s.width**2 * points
    eoc = models * s.draws * s.eoc_depth * s.eoc_width**2 * points
    normals = models * s.draws * (s.depth * max(1, resnet_passes - 1) * (s.width**2 + s.width)
                                  + s.eoc_depth * s.eoc_width * (s.eoc_width + 1))
    return 5e-10 * (resnet + eoc) + 1.5e-8 * normals


def pf_megabytes(s: Any) -> float:
    """A rough upper estimate in MiB of the peak memory of a P&F function-sample figure: chunks of at most 2^22
    numbers, the draws' outputs at every input, a correlation matrix."""
    item = s.torch_dtype.itemsize
    return (6 * 2**22 * item + 8 * s.draws * s.inputs * 8 + 4 * s.inputs**2 * 8) / 2**20 + 300
