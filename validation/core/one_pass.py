"""One pass over the weight process computes every depth and the references.

**SDE pairs** (:func:`sde_errors`). The shared Brownian path (:class:`~limits.brownian.BrownianGrid`,
n = ``reference_steps`` fine steps) is streamed block by block: each block's normals are drawn at once, then read
in chunks of a few fine steps (:data:`CHUNK_BUDGET`) that stay in a core's cache while every reader reads them.
For each chunk:

1. its normals are scaled to increments and its dyadic coarsenings formed once
   (:func:`~limits.brownian.dyadic_levels`); a depth L with r = n/L fine steps per layer reads level log2(r); a
   depth whose layers span several chunks reads tree sums of chunk totals merged by a binary carry stack — the same
   tree as ``BrownianGrid.__call__``, so every depth sees exactly the increments a stand-alone network would,
   whatever the chunk;
2. the limit is advanced over the chunk by Euler–Maruyama with dt = 1/n on its increments, with
   outputs on the grid of the deepest network, and a second reference with dt = 2/n on the same path
   (docs/theory.md §6: the slope against both must agree, or the reference is too coarse). The package
   steps them itself (:class:`EulerOnIncrements`: ``torchsde.sdeint(method="euler", bm=path)``'s arithmetic,
   bit for bit, without its per-step Python); an SDE it cannot step (no ``g_prod``) goes to torchsde;
3. every network is stepped through its layers in the chunk and compared with the reference at each of
   its grid points (running max for the sup-over-grid error).

Memory is one block of normals (and a chunk of increments) plus O(N·d) per depth, whatever n and L.

**ODE pairs** (:func:`ode_errors`). The grid of the deepest network is streamed in chunks: the weights
are evaluated once per chunk for all its grid times, the reference is advanced with torchdiffeq
(adaptive, tight tolerances; or fixed-step, finer than the deepest network, where the pair declares it) with
outputs on the grid, and every network is stepped and compared. The second reference is the same solver at 100×
looser tolerances (fixed-step: half the steps).

Both return a :class:`StudyErrors` of per-sample squared errors, on which :mod:`validation.core.stats` fits
rates with a paired bootstrap.

**Blocks of samples** (:func:`sample_blocks`, :func:`block_seed`, :func:`merge_errors`). A study of N samples
is cut into fixed blocks of at most ``SAMPLE_BLOCK`` samples. Block k is a study of its own: its pair and its
path draw from streams seeded by ``block_seed(seed, k)`` (block 0 by ``seed`` itself, so a study of one block
is the study of earlier versions). Blocks are independent, so they can run in any order, in any process or on
any machine; their per-sample errors are concatenated in block order, and the bootstrap runs on the merged
set. The numbers depend on the block size, never on how many workers run the blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
import torchsde
from tqdm.auto import tqdm

from limits.brownian import BrownianGrid, default_block_steps, dyadic_levels, merge_space_time_areas
from limits.pairs import ODEPair, Pair, SDEPair
from limits.seeding import stream_seed

__all__ = ["StudyErrors", "PathPass", "sde_pass", "sde_errors", "ode_pass", "ode_errors", "study_errors", "SAMPLE_BLOCK",
           "sample_blocks", "block_seed", "merge_errors"]

#: samples per block of a study (the unit workers share out). 250 keeps the per-step tensors large enough that
#: cutting res-1's 500 samples in two costs 1.5% (measured: 3.89 s → 3.95 s; blocks of 125: 4.59 s)
SAMPLE_BLOCK = 250

#: elements of fine increments the one pass reads at a time (a chunk of a block of the path: its increments and
#: dyadic levels, 2 MiB in float64, stay in a core's cache while the references and the networks read them). The
#: chunk changes no number: the block is drawn whole, and scaled and summed entry by entry and by the same tree.
#: Measured, one block of res-1's default study (250 samples, 8192 steps, one core): 2.23 s read whole (blocks of
#: 256 steps), 1.81–1.87 s in chunks of 2 to 16 steps
CHUNK_BUDGET = 1 << 18


@dataclass
class StudyErrors:
    """Per-sample squared errors of every depth (arrays of shape (N, number of depths)).

    Attributes:
        depths: the depths L, increasing powers of two.
        final_sq: ‖h_L − H_1‖² against the primary reference.
        final_sq_second: ‖h_L − H̃_1‖² against the second (coarser / looser) reference.
        sup_sq: max over the grid k/L of ‖h_k − H_{k/L}‖².
        successive_sq: ‖h_L − h_{2L}‖² for consecutive depths (N, number of depths − 1); needs no
            reference.
        reference_gap_sq: ‖H̃_1 − H_1‖², the two references' disagreement, shape (N,).
        reference: how the references were computed.
        nonfinite_network: per depth, the number of samples whose network output h_L is NaN/inf.
        nonfinite_reference: the number of samples whose reference H_1 is NaN/inf (and of the second
            reference, ``nonfinite_second``): a blow-up of the limit's solver rather than of the network.
    """

    depths: list[int]
    final_sq: np.ndarray
    final_sq_second: np.ndarray
    sup_sq: np.ndarray
    successive_sq: np.ndarray
    reference_gap_sq: np.ndarray
    reference: dict[str, Any] = field(default_factory=dict)
    nonfinite_network: list[int] = field(default_factory=list)
    nonfinite_reference: int = 0
    nonfinite_second: int = 0

    @property
    def samples(self) -> int:
        return self.final_sq.shape[0]


def _sq_norm(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum(-1)


class _DepthTracker:
    """State of one scheme at one depth during the pass: h, the running sup error, its grid spacing r
    (fine steps per layer) and its layer map."""

    def __init__(self, depth: int, h0: torch.Tensor, fine_per_layer: int, step: Callable | None = None) -> None:
        self.depth = depth
        self.h = h0.clone()
        self.r = fine_per_layer
        self.layer = step
        self.sup = torch.zeros(h0.shape[0], dtype=h0.dtype, device=h0.device)

    def step(self, start: int, fine_steps: int, increment: torch.Tensor) -> None:
        """One layer from fine index ``start`` with the path increment over its ``r`` fine steps."""
        self.h = self.layer(self.h, start / fine_steps, self.r / fine_steps, increment)

    def compare(self, reference: torch.Tensor) -> None:
        self.sup = torch.maximum(self.sup, _sq_norm(self.h - reference))


def _finish(
    depths: list[int],
    hs: list[torch.Tensor],
    sups: list[torch.Tensor],
    reference: torch.Tensor,
    second: torch.Tensor,
    info: dict[str, Any],
) -> StudyErrors:
    def stack(values: list[torch.Tensor]) -> np.ndarray:
        return torch.stack(values, dim=1).cpu().double().numpy()

    def nonfinite(x: torch.Tensor) -> int:
        return int((~torch.isfinite(x)).any(-1).sum())

    return StudyErrors(
        depths=list(depths),
        final_sq=stack([_sq_norm(h - reference) for h in hs]),
        final_sq_second=stack([_sq_norm(h - second) for h in hs]),
        sup_sq=stack(sups),
        successive_sq=stack([_sq_norm(a - b) for a, b in zip(hs, hs[1:])]) if len(hs) > 1
        else np.zeros((hs[0].shape[0], 0)),
        reference_gap_sq=_sq_norm(second - reference).cpu().double().numpy(),
        reference=info,
        nonfinite_network=[nonfinite(h) for h in hs],
        nonfinite_reference=nonfinite(reference),
        nonfinite_second=nonfinite(second),
    )


def _check_depths(depths: list[int], finest: int) -> None:
    if not depths or any(L < 1 or L & (L - 1) for L in depths):
        raise ValueError(f"depths {depths} must be powers of two")
    if list(depths) != sorted(set(depths)):
        raise ValueError(f"depths {depths} must be strictly increasing")
    if finest <= depths[-1]:
        raise ValueError(f"reference resolution {finest} must be finer than the deepest depth {depths[-1]}")


#: one layer of a scheme on the path: (h_k, t_k, Δt, ΔB over [t_k, t_k + Δt]) ↦ h_{k+1}
StepFn = Callable[[torch.Tensor, float, float, torch.Tensor], torch.Tensor]


@dataclass
class PathPass:
    """What one pass over a Brownian path leaves: for each scheme, the final state and the running sup
    error of every depth (lists in the order of ``depths``), and the two references' final states."""

    depths: list[int]
    states: dict[str, list[torch.Tensor]]
    sup_sq: dict[str, list[torch.Tensor]]
    reference: torch.Tensor
    second: torch.Tensor
    info: dict[str, Any]
    #: with ``record_steps``: the path's increments at that resolution, (K, N, m), and their space-time
    #: Lévy areas (``record_areas``), for :class:`~limits.brownian.DyadicPath`
    recorded: torch.Tensor | None = None
    recorded_areas: torch.Tensor | None = None


def compiled_step(function: Callable[..., torch.Tensor], device: torch.device | str) -> Callable[..., torch.Tensor]:
    """``function`` (one step of a scheme: a few tensor operations) compiled by ``torch.compile``, shapes fixed: on
    CUDA in the mode ``reduce-overhead``, which records the step's kernels as one CUDA graph and replays it, so a
    step costs one launch instead of one per operation (the study's steps are small batched products, launch-bound on
    a GPU); elsewhere fused by the C++ backend. The fused arithmetic may round differently from the eager step's, so
    the results agree with the eager loop to rounding, not bit for bit (tests/test_compiled_steps.py). The first call
    of each shape compiles (seconds to tens of seconds)."""
    mode = "reduce-overhead" if str(device).startswith("cuda") else "default"
    return torch.compile(function, mode=mode, dynamic=False)


class EulerOnIncrements:
    """The Itô Euler–Maruyama scheme of a torchsde SDE on increments already drawn, without torchsde's per-step
    Python (its time loop, the solver's step and the Brownian query cost more than the step's own tensor work):

        y_{k+1} = y_k + f(t_k, y_k) Δt + g(t_k, y_k) ΔW_k,   t_k = (first + k·r)/n,  Δt = r/n,

    with ``f`` and the product ``g ΔW`` from the SDE's ``f_and_g_prod`` (else ``f`` and ``g_prod``), evaluated in the
    order and with the expression of ``torchsde``'s ``Euler.step`` (``y0 + f * dt + g_prod``), at the same times
    (dyadic, so exact in the pair's dtype). The states therefore equal ``torchsde.sdeint(sde, y0, ts, bm=path,
    method="euler", dt=r/n)`` on the same path bit for bit (tests/test_engine.py compares them). An SDE that declares
    ``drift_free`` (f ≡ 0, :class:`limits.ito.ItoLimit`) is stepped as y + g ΔW: adding the zero f Δt changes no
    value, and forming it took a third of res-1's reference (measured: 69 → 49 µs a step at N = 250, d = 10).
    """

    def __init__(self, step: Callable[..., torch.Tensor], n: int, dtype: torch.dtype, device: torch.device,
                 compile_steps: bool = False) -> None:
        self.step = compiled_step(step, device) if compile_steps else step
        self.n, self.dtype, self.device = n, dtype, device

    @classmethod
    def of(cls, sde: Any, n: int, dtype: torch.dtype, device: torch.device,
           compile_steps: bool = False) -> "EulerOnIncrements | None":
        """The loop for ``sde``, or None where torchsde must step it (not Itô, or no ``g_prod``: torchsde then forms
        g·ΔW from g itself); ``compile_steps``: each step by :func:`compiled_step`."""
        if getattr(sde, "sde_type", "ito") != "ito":
            return None
        if getattr(sde, "drift_free", False) and hasattr(sde, "g_prod"):
            def step(t: torch.Tensor, y: torch.Tensor, increment: torch.Tensor, dt: float) -> torch.Tensor:
                return y + sde.g_prod(t, y, increment)
        elif hasattr(sde, "f_and_g_prod") or hasattr(sde, "f") and hasattr(sde, "g_prod"):
            f_and_g_prod = getattr(sde, "f_and_g_prod", None) or (lambda t, y, v: (sde.f(t, y), sde.g_prod(t, y, v)))

            def step(t: torch.Tensor, y: torch.Tensor, increment: torch.Tensor, dt: float) -> torch.Tensor:
                f, g_prod = f_and_g_prod(t, y, increment)
                return y + f * dt + g_prod
        else:
            return None
        return cls(step, n, dtype, device, compile_steps)

    def __call__(self, y: torch.Tensor, first: int, increments: torch.Tensor, r: int, every: int) -> list[torch.Tensor]:
        """Step ``y`` from fine index ``first`` through ``increments`` (K, N, m), each over r fine steps; returns the
        states after every ``every`` steps, the start included (``every`` = 0: the start and the end only)."""
        steps = increments.shape[0]
        times = ((first + r * torch.arange(steps, dtype=torch.float64)) / self.n).to(dtype=self.dtype,
                                                                                     device=self.device)
        dt = r / self.n
        states = [y]
        step = self.step
        for k in range(steps):
            y = step(times[k], y, increments[k], dt)
            if every and (k + 1) % every == 0:
                states.append(y)
        if not every:
            states.append(y)
        return states


def sde_pass(
    pair: SDEPair,
    depths: list[int],
    reference_steps: int,
    seed: int,
    schemes: dict[str, StepFn] | None = None,
    progress: bool = False,
    block_budget: int = 1 << 23,
    record_steps: int | None = None,
    record_areas: bool = False,
    noise_dtype: torch.dtype | None = None,
    compile_steps: bool = False,
) -> PathPass:
    """Step every scheme at every depth and the two Euler references along one shared path, in one pass.

    Args:
        pair: the SDE pair (its ``samples``, ``dtype`` and ``device`` size the path).
        depths: increasing powers of two, all < ``reference_steps``.
        reference_steps: n, a power of two; the second reference uses n/2 steps of the same path.
        seed: seed of the Brownian path.
        schemes: named layer maps read on the grid of each depth; default ``{"network":
            pair.network_step}``. Another scheme, e.g. Euler of the limit at step 1/L, rides along on
            the same increments at no extra random-number cost.
        progress: show a progress bar over the path.
        block_budget: elements of fine increments generated at once (sets the block length).
        record_steps: also keep the path's increments on the grid of K = ``record_steps`` steps (a power
            of two dividing n; K·N·m numbers), the same tree sums the networks read — for schemes that
            integrate the limit afterwards on the same path (:class:`~limits.brownian.DyadicPath`).
        record_areas: with ``record_steps``, also the space-time Lévy area of each recorded step, of the
            path piecewise linear between the fine grid points (H = 0 on a fine step, merged upwards by
            :func:`~limits.brownian.merge_space_time_areas`).
        noise_dtype: the type the path's normals are drawn in (None: the pair's dtype;
            :class:`~limits.brownian.BrownianGrid`).
        compile_steps: each scheme's layer and the references' Euler step compiled (:func:`compiled_step`; on CUDA
            one graph launch per step): the states agree with the eager pass's to rounding.
    """
    _check_depths(depths, reference_steps)
    schemes = schemes or {"network": pair.network_step}
    if compile_steps:
        schemes = {name: compiled_step(step, pair.device) for name, step in schemes.items()}
    n = reference_steps
    record_every = 0
    if record_steps is not None:
        if record_steps < 1 or record_steps & (record_steps - 1) or record_steps > n:
            raise ValueError(f"record_steps={record_steps} must be a power of two ≤ reference_steps={n}")
        record_every = n // record_steps
        block_budget = max(block_budget, record_every * pair.samples * pair.noise_dim)
    block = max(2, default_block_steps(pair.samples, pair.noise_dim, n, block_budget))
    # the pass's unit: a chunk of the block whose increments and dyadic levels stay in the cache while every reader
    # reads them (recorded steps must fit in one chunk)
    chunk = min(block, max(2, record_every, default_block_steps(pair.samples, pair.noise_dim, n, CHUNK_BUDGET)))
    path = BrownianGrid(
        pair.samples, pair.noise_dim, n, seed=seed, dtype=pair.dtype, device=pair.device, block_steps=block,
        noise_dtype=noise_dtype,
    )
    # the recorded steps (and areas) are filled in place, chunk by chunk: held once, never as pieces and a copy
    recorded = (torch.empty((n // record_every, pair.samples, pair.noise_dim), dtype=pair.dtype, device=pair.device)
                if record_every else None)
    recorded_areas = torch.empty_like(recorded) if recorded is not None and record_areas else None
    h0 = pair.initial_state()
    trackers = [_DepthTracker(L, h0, n // L, step) for step in schemes.values() for L in depths]
    long_layers: dict[int, list[_DepthTracker]] = {}
    for tracker in trackers:
        if tracker.r > chunk:
            long_layers.setdefault(tracker.r, []).append(tracker)
    sde = pair.limit_sde()
    euler = EulerOnIncrements.of(sde, n, pair.dtype, pair.device, compile_steps)
    H = h0.clone()
    H_second = h0.clone()
    r_out = min(n // depths[-1], chunk)  # output spacing of the reference inside a chunk
    out_offsets = torch.arange(0, chunk + 1, r_out, dtype=torch.float64)
    carry: list[tuple[int, torch.Tensor]] = []

    blocks = range(path.num_blocks)
    for b in tqdm(blocks, desc=f"{pair.name}: path", unit="block", disable=not progress, leave=False):
        normals = path.normals(b)
        for c in range(0, block, chunk):
            first = b * block + c
            levels = dyadic_levels(path.scaled(normals[c:c + chunk]))
            if euler is not None:
                ys = euler(H, first, levels[0], 1, r_out)
                H, H_second = ys[-1], euler(H_second, first, levels[1], 2, 0)[-1]
            else:
                ts = ((first + out_offsets) / n).to(dtype=pair.dtype, device=pair.device)
                ys = torchsde.sdeint(sde, H, ts, bm=path, method="euler", dt=1.0 / n)
                ys_second = torchsde.sdeint(sde, H_second, ts[[0, -1]], bm=path, method="euler", dt=2.0 / n)
                H, H_second = ys[-1], ys_second[-1]
            if recorded is not None:
                level = record_every.bit_length() - 1
                rows = slice(first // record_every, (first + chunk) // record_every)
                recorded[rows] = levels[level]
                if recorded_areas is not None:
                    w, area = levels[0], torch.zeros_like(levels[0])
                    for _ in range(level):
                        w, area = merge_space_time_areas(w, area)
                    recorded_areas[rows] = area
            for tracker in trackers:
                if tracker.r > chunk:
                    continue
                increments = levels[tracker.r.bit_length() - 1]
                for i in range(chunk // tracker.r):
                    tracker.step(first + i * tracker.r, n, increments[i])
                    tracker.compare(ys[(i + 1) * tracker.r // r_out])
            # layers longer than a chunk: tree sums of chunk totals through a binary carry stack (the same tree as
            # the dyadic levels of a block, so every depth reads the same increments whatever the chunk)
            node, size = levels[-1][0], chunk
            while True:
                for tracker in long_layers.get(size, ()):
                    tracker.step(first + chunk - size, n, node)
                    tracker.compare(H)
                if carry and carry[-1][0] == size:
                    node = carry.pop()[1] + node
                    size *= 2
                else:
                    carry.append((size, node))
                    break
        del normals  # before the next block is drawn: one block of normals held at a time
    info = {
        "kind": "sde",
        "method": ("Euler-Maruyama (Ito) on the path's increments: the package's loop, torchsde.sdeint euler's "
                   "arithmetic" if euler is not None else "torchsde.sdeint euler (Ito), g_prod, shared BrownianGrid"),
        "steps": n,
        "second_steps": n // 2,
        "block_steps": block,
        "noise_dtype": str(path.noise_dtype).removeprefix("torch."),
    }
    count = len(depths)
    return PathPass(
        depths=list(depths),
        states={name: [t.h for t in trackers[i * count:(i + 1) * count]] for i, name in enumerate(schemes)},
        sup_sq={name: [t.sup for t in trackers[i * count:(i + 1) * count]] for i, name in enumerate(schemes)},
        reference=H,
        second=H_second,
        info=info,
        recorded=recorded,
        recorded_areas=recorded_areas,
    )


def sde_errors(
    pair: SDEPair,
    depths: list[int],
    reference_steps: int,
    seed: int,
    progress: bool = False,
    block_budget: int = 1 << 23,
    noise_dtype: torch.dtype | None = None,
    compile_steps: bool = False,
) -> StudyErrors:
    """Errors of the network at every depth against the Euler reference with ``reference_steps`` steps
    (and the second one with half as many), in one pass over the path (:func:`sde_pass`)."""
    result = sde_pass(pair, depths, reference_steps, seed, progress=progress, block_budget=block_budget,
                      noise_dtype=noise_dtype, compile_steps=compile_steps)
    return _finish(depths, result.states["network"], result.sup_sq["network"], result.reference, result.second,
                   result.info)


#: the reference floor of each kind of reference: depths whose RMS error is below this multiple of the two
#: references' RMS gap are not fitted (docs/theory.md §6). The one table of every study that fits above a floor.
#:
#: * ``brownian-halved`` (SDE: Euler with n and n/2 steps of the same path): the gap is about the primary reference's
#:   own error, a nearly independent fluctuation nested in the network's (e_measured² ≈ e² − e_ref²): at 3× a local
#:   slope moves by about r/9 at that one depth (the default studies' deepest depths sit at 5–6×: r/30).
#: * ``adaptive-loosened`` (ODE: dopri5 and the same solver 100× looser): the gap is the *second* reference's error,
#:   ≥ 20× the primary's (measured on res2-rk4: 6e-8 against 3e-9), so an error above 0.5× the gap is ≥ 10× the
#:   primary reference's error.
#: * ``fixed-halved`` (ODE: a fixed-step order-p method with k and k/2 steps per layer): the gap is about (2^p − 1)×
#:   the primary's error (15× for rk4), a deterministic bias, so an error 10× above the gap is distorted by ≤ 1%.
FLOOR_FACTORS: dict[str, float] = {"brownian-halved": 3.0, "adaptive-loosened": 0.5, "fixed-halved": 10.0}


def reference_text(info: dict[str, Any]) -> str:
    """One line saying how an ODE pass's references were computed, from its ``info`` (:func:`ode_pass`)."""
    method = info["method"].removeprefix("torchdiffeq.odeint ")
    if "steps" in info:
        return f"{method} with {info['steps']} fixed steps (second: {info['second_steps']})"
    return f"{method}, rtol {info['rtol']:g}, atol {info['atol']:g} (second: 100× looser)"


def reference_kind(pair: Pair) -> str:
    """The kind of reference a strong-error study of ``pair`` measures against (a key of :data:`FLOOR_FACTORS`)."""
    if isinstance(pair, SDEPair) or getattr(pair, "kind", None) == "sde":
        return "brownian-halved"
    return "adaptive-loosened" if getattr(pair, "reference_refinement", None) is None else "fixed-halved"


def ode_pass(
    pair: ODEPair,
    depths: list[int],
    rtol: float = 1e-10,
    atol: float = 1e-10,
    method: str | None = None,
    progress: bool = False,
    chunk_budget: int = 1 << 22,
) -> PathPass:
    """Step every depth of the network and the limit's reference along the deepest grid, in one pass.

    The deepest grid is streamed in chunks; the weights are evaluated once per chunk for all its grid times, and the
    reference is advanced with outputs on the grid. Which reference the pair declares
    (:attr:`~limits.pairs.ODEPair.reference_refinement`):

    * adaptive (the default): ``pair.solve_limit`` at ``rtol``, ``atol`` with ``method`` (the pair's
      ``reference_method``, dopri5, when None); the second reference is the same solver at ``100·rtol``, ``100·atol``;
    * fixed-step, k = ``reference_refinement``: ``pair.solve_limit`` with torchdiffeq's ``reference_method`` and
      ``options={"step_size": 1/(k·L_max)}`` (rtol and atol unused); the second reference takes steps 2/(k·L_max).

    Returns the states as :func:`sde_pass` does (scheme ``"network"``).
    """
    _check_depths(depths, 2 * depths[-1])
    finest = depths[-1]
    method = method or getattr(pair, "reference_method", "dopri5")
    refinement = getattr(pair, "reference_refinement", None)
    if refinement is None:
        def solve(h: torch.Tensor, ts: torch.Tensor, second: bool) -> torch.Tensor:
            scale = 100 if second else 1
            return pair.solve_limit(h, ts, rtol=scale * rtol, atol=scale * atol, method=method)
        info: dict[str, Any] = {"kind": "ode", "method": f"torchdiffeq.odeint {method}", "rtol": rtol, "atol": atol,
                                "second_rtol": 100 * rtol, "second_atol": 100 * atol}
    else:
        def solve(h: torch.Tensor, ts: torch.Tensor, second: bool) -> torch.Tensor:
            steps = refinement // 2 if second else refinement
            return pair.solve_limit(h, ts, rtol=rtol, atol=atol, method=method,
                                    options={"step_size": 1.0 / (steps * finest)})
        info = {"kind": "ode", "method": f"torchdiffeq.odeint {method}", "steps": refinement * finest,
                "second_steps": refinement // 2 * finest}
    h0 = pair.initial_state()
    probe = pair.weights(torch.zeros(1, dtype=pair.dtype, device=pair.device))
    per_time = sum(w[0].numel() for w in probe)
    chunk = 1
    while chunk * 2 <= finest and chunk * 2 * per_time <= chunk_budget:
        chunk *= 2
    trackers = [_DepthTracker(L, h0, finest // L) for L in depths]
    pending: dict[int, torch.Tensor] = {}  # depth → h after a layer longer than a chunk, not yet compared
    H = h0.clone()
    H_second = h0.clone()
    for c in tqdm(range(finest // chunk), desc=f"{pair.name}: grid", unit="chunk", disable=not progress,
                  leave=False):
        first = c * chunk
        ts = torch.arange(first, first + chunk + 1, dtype=torch.float64) / finest
        ts = ts.to(dtype=pair.dtype, device=pair.device)
        ys = solve(H, ts, False)
        H = ys[-1]
        H_second = solve(H_second, ts[[0, -1]], True)[-1]
        weights = pair.weights(ts[:-1])
        for tracker in trackers:
            r = tracker.r
            if r <= chunk:
                for i in range(0, chunk, r):
                    tracker.h = pair.network_step(tracker.h, (first + i) / finest, r / finest,
                                                  tuple(w[i] for w in weights))
                    tracker.compare(ys[i + r])
            else:
                if first % r == 0:
                    pending[tracker.depth] = pair.network_step(
                        tracker.h, first / finest, r / finest, tuple(w[0] for w in weights)
                    )
                if (first + chunk) % r == 0:
                    tracker.h = pending.pop(tracker.depth)
                    tracker.compare(H)
    info["chunk"] = chunk
    return PathPass(depths=list(depths), states={"network": [t.h for t in trackers]},
                    sup_sq={"network": [t.sup for t in trackers]}, reference=H, second=H_second, info=info)


def ode_errors(
    pair: ODEPair,
    depths: list[int],
    rtol: float = 1e-10,
    atol: float = 1e-10,
    method: str | None = None,
    progress: bool = False,
    chunk_budget: int = 1 << 22,
) -> StudyErrors:
    """Errors of every depth against the adaptive ODE solution, in one pass over the deepest grid
    (:func:`ode_pass`). The second reference uses the same solver at ``100·rtol``, ``100·atol``."""
    result = ode_pass(pair, depths, rtol=rtol, atol=atol, method=method, progress=progress,
                      chunk_budget=chunk_budget)
    return _finish(depths, result.states["network"], result.sup_sq["network"], result.reference, result.second,
                   result.info)


def study_errors(pair: Pair, depths: list[int], *, reference_steps: int, seed: int, rtol: float = 1e-10,
                 atol: float = 1e-10, progress: bool = False, noise_dtype: torch.dtype | None = None,
                 compile_steps: bool = False) -> StudyErrors:
    """Dispatch on the pair's kind (SDE: Brownian reference with ``reference_steps``, the path's normals drawn
    in ``noise_dtype``, the steps compiled with ``compile_steps``; ODE: adaptive)."""
    if isinstance(pair, SDEPair):
        return sde_errors(pair, depths, reference_steps, seed, progress=progress, noise_dtype=noise_dtype,
                          compile_steps=compile_steps)
    if isinstance(pair, ODEPair):
        return ode_errors(pair, depths, rtol=rtol, atol=atol, progress=progress)
    raise TypeError(f"unsupported pair type {type(pair).__name__}")


# ------------------------------------------------------------------------------------------------ sample blocks
def sample_blocks(samples: int, block: int = SAMPLE_BLOCK) -> list[tuple[int, int]]:
    """The blocks of a study of ``samples`` samples: ``[(index, size), …]``, every block ``block`` samples but
    the last (the rest)."""
    if samples < 1 or block < 1:
        raise ValueError(f"samples={samples} and block={block} must be ≥ 1")
    return [(index, min(block, samples - start)) for index, start in enumerate(range(0, samples, block))]


def block_seed(seed: int, index: int) -> int:
    """The seed of sample block ``index``: ``seed`` itself for block 0, else ``stream_seed(seed, "samples",
    index)`` — independent streams for every block, determined by (seed, index) alone."""
    return int(seed) if index == 0 else stream_seed(seed, "samples", index)


def merge_errors(parts: list[StudyErrors]) -> StudyErrors:
    """The errors of consecutive sample blocks as one study: per-sample arrays concatenated in block order,
    non-finite counts added; the reference description is the first block's, with the block count."""
    if not parts:
        raise ValueError("no blocks to merge")
    first = parts[0]
    if len(parts) == 1:
        return first
    if any(part.depths != first.depths for part in parts):
        raise ValueError("blocks of different depths cannot be merged")

    def join(name: str) -> np.ndarray:
        return np.concatenate([getattr(part, name) for part in parts])

    return StudyErrors(
        depths=list(first.depths), final_sq=join("final_sq"), final_sq_second=join("final_sq_second"),
        sup_sq=join("sup_sq"), successive_sq=join("successive_sq"), reference_gap_sq=join("reference_gap_sq"),
        reference=dict(first.reference),
        nonfinite_network=[sum(values) for values in zip(*(part.nonfinite_network for part in parts))],
        nonfinite_reference=sum(part.nonfinite_reference for part in parts),
        nonfinite_second=sum(part.nonfinite_second for part in parts),
    )
