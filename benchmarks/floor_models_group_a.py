"""Floor models (:mod:`floor_models`) of three defaults: ``validation.weak``, ``validation.phase`` and
``validation.figures --figure chizat-phase``.

Each model's counts are a function of the study's settings (``_weak_work(s)``, ``_phase_work(s)``,
``_chizat_phase_work(s)``), evaluated at the settings the command line resolves when given no flag: the package's own
settings classes and the figure's ``defaults`` dict, read here, not restated. The functions are written for any
settings so that they can be checked against the code at a small size (what was checked, and how, is in each
docstring). What is counted, as in :mod:`floor_models`:

* normals / uniforms: the random numbers the default draws (a fractional-noise draw counts its underlying normals; a
  numpy permutation or subsample counts one bounded integer per swap, as a uniform);
* products: the batched matrix products that carry the arithmetic (over 5% of it), by shape and dtype;
* chain: sequential layer (or time) steps, one dispatched operation at least each, of the longest worker;

and, by design, not: bootstraps, rate fits, medians, plots, FFTs and elementwise work.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_models import FloorModel, Product, Work  # noqa: E402


def _longest_worker(lengths: Sequence[float], workers: int) -> float:
    """The steps of the longest of ``workers`` processes when the tasks (of ``lengths`` steps each, in submission
    order) go one by one to the first free process — a pool's dynamic dispatch, with time taken ∝ steps."""
    loads = [0.0] * max(1, workers)
    for length in lengths:
        loads[loads.index(min(loads))] += length
    return max(loads)


def _merge(products: Sequence[Product]) -> tuple[Product, ...]:
    """Products of one shape and dtype summed into one (their counts added), in first-seen order."""
    counts: dict[tuple[int, int, int, int, str], float] = {}
    for p in products:
        key = (p.batch, p.m, p.k, p.n, p.dtype)
        counts[key] = counts.get(key, 0.0) + p.count
    return tuple(Product(count, *key) for key, count in counts.items() if count > 0)


# ----------------------------------------------------------------------------------------------- validation.weak
def _weak_settings(**overrides: Any) -> Any:
    from validation.core.settings import make_settings
    from validation.weak import WeakSettings

    return make_settings(WeakSettings, None, overrides)


def _weak_work(s: Any) -> Work:
    """``validation.weak`` at settings ``s``, with M = ``len(models)`` SC models, K = ``len(inputs)`` = 2 inputs.

    Part 1 (per model, :func:`limits.peluchetti_favaro.simulate_gram`, in ``dtype``): N = ``draws`` network draws of
    L = ``depth`` steps and N SDE draws of S = ``sde_steps`` steps, in chunks of c = ``chunk``; each step of a chunk
    draws c·K·D normals (D = ``width``) and does two batched products, the Gram matrix YᵀY, (c, K, D)·(c, D, K), and
    the factor times the noise, (c, K, K)·(c, K, D):

        normals₁ = M·N·K·D·(L + S),   products₁ = M·(L + S)·N/c of each of the two shapes.

    The energy test (per model, numpy float64, :func:`validation.weak.energy_test`): E = min(``energy_points``, N)
    points of each sample, so a (2E × 2E) distance matrix, and P = ``permutations`` permutations evaluated
    B = :data:`validation.weak.PERMUTATION_BATCH` = 64 at a time as one product each:

        ⌊P/B⌋ products (1, 2E, 2E, B) and one (1, 2E, 2E, P mod B) per model;
        uniforms = M·(P·(2E − 1) + 2·2E)   (a permutation of 2E labels: 2E − 1 swaps; each of the two subsamples of
        E of N points, when N > E: a tail shuffle and a shuffle, about 2E bounded integers).

    Part 2 (per model, float64, :func:`validation.weak.weak_batch`): N₂ = ``weak_draws`` paths of the shared Brownian
    path with n = ``weak_reference`` fine steps of D₂² + D₂ channels (D₂ = ``weak_width``):

        normals₂ = M·N₂·n·(D₂² + D₂).

    Its products, (N₂-batch, D₂, D₂)·(…, D₂, 1) once per step of the two references and of every depth's network and
    Euler scheme, are ≈ 1% of the arithmetic at the defaults (D₂ = 4), so they are left out.

    Chain: the tasks (:func:`validation.weak.weak_tasks`) go to ``workers`` processes; a part-1 chunk is L or S
    sequential steps, a part-2 batch n + n/2 reference steps and Σ depths network and Euler layers; the chain is
    the longest worker's steps (:func:`_longest_worker`).

    Checked at a small size (2 models, N = 40, D = 6, L = 5, S = 7, c = 16, E = 30, P = 150, N₂ = 20, D₂ = 2,
    n = 16, depths 2, 4, one worker) by counting torch's random and product ops at the dispatcher
    (``TorchDispatchMode``) and wrapping the module's numpy: normals 11 520 float32 + 3 840 float64, part 1's
    product multiply–adds, the 2 × (64, 64, 22) label blocks of the energy test and its 300 permutations of 60 labels
    and 4 subsamples of 30 of 40, all as the formulas give; part 2's 36 products a batch equal its step count."""
    from validation.weak import PERMUTATION_BATCH, WEAK_BATCH
    from validation.core.one_pass import sample_blocks

    models, k, d = len(s.models), len(s.inputs), s.width
    steps = s.depth + s.sde_steps
    normals = models * s.draws * k * d * steps
    dtype = s.dtype
    per_shape = models * steps * s.draws / s.chunk
    products = [Product(per_shape, s.chunk, k, d, k, dtype), Product(per_shape, s.chunk, k, k, d, dtype)]
    points = min(s.energy_points, s.draws)
    pooled = 2 * points
    full, rest = divmod(s.permutations, PERMUTATION_BATCH)
    products.append(Product(models * full, 1, pooled, pooled, PERMUTATION_BATCH, "float64"))
    if rest:
        products.append(Product(models, 1, pooled, pooled, rest, "float64"))
    subsample = 2 * (2 * points if s.draws > points else 0)
    uniforms = models * (s.permutations * (pooled - 1) + subsample)
    batch_steps = 0
    if s.weak:
        normals += models * s.weak_draws * s.weak_reference * (s.weak_width**2 + s.weak_width)
        batch_steps = s.weak_reference + s.weak_reference // 2 + 2 * sum(s.weak_depths)
    lengths = []
    for _ in s.models:  # weak_tasks' order: per model its network chunks, its SDE chunks, then its part-2 batches
        chunks = len(sample_blocks(s.draws, s.chunk))
        lengths += [s.depth] * chunks + [s.sde_steps] * chunks
        if s.weak:
            lengths += [batch_steps] * len(sample_blocks(s.weak_draws, WEAK_BATCH))
    workers = s.workers if s.scheduler is None else 1
    return Work(normals=normals, uniforms=uniforms, products=_merge(products), chain=_longest_worker(lengths, workers),
                how=(f"{models} SC models; part 1: N = {s.draws} draws, D = {d}, L = {s.depth} and {s.sde_steps} SDE "
                     f"steps, K = {k} inputs, chunks of {s.chunk} ({dtype}): M·N·K·D·(L + S) normals and two products a "
                     f"step; energy test on 2 × {points} points, {s.permutations} permutations {PERMUTATION_BATCH} at a "
                     f"time (float64); part 2: {s.weak_draws} paths × {s.weak_reference} steps × "
                     f"{s.weak_width**2 + s.weak_width} channels (float64); chain: the longest of {workers} workers"))


def _weak() -> Work:
    """``python -m validation.weak`` at its defaults (:class:`validation.weak.WeakSettings`): M = 2 models, N = 10⁴,
    D = L = S = 500, c = 250, E = 2000, P = 1000 (15 batches of 64 and one of 40), N₂ = 10⁴, n = 2048, D₂ = 4:
    2·10¹⁰ float32 normals in part 1, 8.19·10⁸ float64 in part 2; 8·10¹⁰ multiply–adds in part 1's products and
    3.2·10¹⁰ in the energy tests (see :func:`_weak_work`)."""
    return _weak_work(_weak_settings())


# ----------------------------------------------------------------------------------------------- validation.phase
def _phase_settings(**overrides: Any) -> Any:
    from validation.core.settings import make_settings
    from validation.phase import PhaseSettings

    return make_settings(PhaseSettings, None, overrides)


def _phase_work(s: Any) -> Work:
    """``validation.phase`` at settings ``s``: for each of the |H| Hurst indices (one task each, shared out over
    ``workers`` processes) and each depth Λ ∈ {L, L'} (``depth``, ``reference_depth``), ``networks`` = n networks
    (:func:`limits.initialisation.measure_ratios`, res-3, width d, C = |β|·``inputs`` columns):

    * weights: 2d² fGn sequences of length Λ by Davies–Harte, d² complex pairs of 2·(2Λ) normals each, and the
      network's x (n_in × inputs), A (d × n_in), B (d × 1), in ``noise_dtype`` (default: ``dtype``):

          normals = |H|·n·[4d²(L + L') + 2(n_in·inputs + d·n_in + d)];

    * forward and backward (:func:`limits.initialisation.propagate`), in chunks of b networks
      (:func:`limits.initialisation.ratio_chunk`): per layer two products (W h, V σ(W h)) forward and two (Vᵀ p,
      Wᵀ u) backward, each (b, d, d)·(b, d, C) in ``dtype``:

          products = |H|·4·Λ·n/b of shape (b, d, d, C), for Λ = L and L'.

    Chain: a column steps 2Λ layers (forward and backward) per depth and chunk; the longest of the workers takes
    ⌈|H|/workers⌉ columns: chain = ⌈|H|/workers⌉·2(L + L')·⌈n/b⌉.

    Checked at a small size (3 H, 3 β, L = 16, L' = 4, n = 3, 2 inputs, d = 5, n_in = 4, one worker; and again with
    ``ratio_chunk`` forced to b = 2) by counting torch's random and product ops at the dispatcher: 18 594 normals and
    the products' multiply–adds as the formulas give (A x, 0.7% there, is left out)."""
    from limits.initialisation import Block, ratio_chunk

    hursts, nets, d = len(s.hursts), s.networks, s.width
    columns = len(s.betas) * s.inputs
    item = 4 if s.dtype == "float32" else 8
    depths = (s.depth, s.reference_depth)
    io = s.n_in * s.inputs + d * s.n_in + d
    normals = hursts * nets * sum(4 * d * d * depth + io for depth in depths)
    products, column_steps = [], 0
    for depth in depths:
        chunk, _ = ratio_chunk(depth, d, columns, nets, item, Block("res3"))
        products.append(Product(hursts * 4 * depth * nets / chunk, chunk, d, d, columns, s.dtype))
        column_steps += 2 * depth * math.ceil(nets / chunk)
    workers = s.workers if s.scheduler is None else 1
    return Work(normals=normals, products=_merge(products),
                chain=_longest_worker([column_steps] * hursts, min(workers, hursts)),
                how=(f"{hursts} H × {nets} networks, L = {s.depth} and L' = {s.reference_depth}, d = {d}, "
                     f"{len(s.betas)} β × {s.inputs} inputs = {columns} columns ({s.dtype}): 4d²(L + L') fGn normals a "
                     f"network and 4 products (b, d, d)·(b, d, C) a layer; chain: ⌈{hursts}/{workers}⌉ columns of "
                     f"2(L + L') layer steps"))


def _phase() -> Work:
    """``python -m validation.phase`` at its defaults (:class:`validation.phase.PhaseSettings`, Marion et al.'s
    Fig. 7): |H| = 51, n = 8 networks (one chunk, b = 8), L = 1000, L' = 250, d = 40, n_in = 64, 70 β × 8 inputs
    (C = 560), float32, 2 workers: 3.27·10⁹ normals, 4·1250·51 = 255 000 products (8, 40, 40, 560) = 1.83·10¹²
    multiply–adds, chain 26·2500 = 65 000 layer steps (see :func:`_phase_work`)."""
    return _phase_work(_phase_settings())


# ------------------------------------------------------------------------------- validation.figures chizat-phase
def _chizat_phase_settings(**overrides: Any) -> Any:
    from validation.core.settings import make_settings
    from validation.figures.study import FiguresSettings, _resolve

    return _resolve("chizat-phase", make_settings(FiguresSettings, None, overrides))


def _chizat_phase_work(s: Any) -> Work:
    """``validation.figures --figure chizat-phase`` at settings ``s`` (the figure's ``defaults`` where a setting is
    not given): for each of the |β|·|γ| cells and each depth L of ``depths``,
    :func:`limits.chizat.chizat_training_changes` with n = ``networks``, S = ``inputs`` samples, d = ``width``,
    M = ``hidden``, K = ``steps``, in ``dtype``, in one process (the figure does not share its draws):

    * draws: every network's x, y (d × S each) and its block weights U (L, M, d), V (L, d, M) — redrawn for every
      cell (the same streams whatever β, γ):

          normals = |β|·|γ|·Σ_L n·(2dS + 2LMd);

    * products, all of n·d·M·S multiply–adds (batch n): a block is U h, (n, M, d)·(n, d, S), then V ρ(·),
      (n, d, M)·(n, M, S). K training steps each run the forward pass (L blocks) and autograd's backward: per block
      Vᵀ g (n, M, d)·(n, d, S), g ρᵀ (n, d, S)·(n, S, M), g′ hᵀ (n, M, S)·(n, S, d), and Uᵀ g′ (n, d, M)·(n, M, S)
      but at the first block (the input needs no gradient); then the states before and after (2 forward passes) and
      the comparison, 3 blocks a layer:

          per (cell, L): (2K + 5)L of (n, M, d, S), (2K + 5)L − K of (n, d, M, S), KL of (n, d, S, M) and of
          (n, M, S, d) — (6K + 10)L − K products in all.

    Chain: (2K + 3)L layer steps per (cell, L) — K forward and K backward passes, the two forward passes before
    and after, the comparison — all in the one process: chain = |β|·|γ|·(2K + 3)·Σ_L L.

    Checked at a small size (2 β × 2 γ, depths 2, 4, 8, n = 3, S = 2, d = 3, M = 5, K = 2) by counting torch's random
    and product ops at the dispatcher: 5 472 normals and the four shapes' counts (504, 480, 112, 112) exactly; at the
    defaults' n, S, d, M, K one run at L = 512 makes 14 333 = 28·512 − 3 products."""
    cells = len(s.betas) * len(s.gammas)
    n, S, d, M, K = s.networks, s.inputs, s.width, s.hidden, s.steps
    total_depth = sum(s.depths)
    layers = len(s.depths)
    normals = cells * sum(n * (2 * d * S + 2 * L * M * d) for L in s.depths)
    dtype = s.dtype
    products = (Product(cells * (2 * K + 5) * total_depth, n, M, d, S, dtype),
                Product(cells * ((2 * K + 5) * total_depth - K * layers), n, d, M, S, dtype),
                Product(cells * K * total_depth, n, d, S, M, dtype),
                Product(cells * K * total_depth, n, M, S, d, dtype))
    return Work(normals=normals, products=products, chain=cells * (2 * K + 3) * total_depth,
                how=(f"{len(s.betas)} β × {len(s.gammas)} γ cells, depths {list(s.depths)}, n = {n} networks, "
                     f"S = {S} samples, d = {d}, M = {M}, K = {K} steps ({dtype}, one process): Σ_L n(2dS + 2LMd) "
                     f"normals a cell, ((6K + 10)L − K) products of n·d·M·S multiply–adds per (cell, L), chain "
                     f"(2K + 3)·Σ L per cell"))


def _chizat_phase() -> Work:
    """``python -m validation.figures --figure chizat-phase`` at the figure's defaults
    (:attr:`validation.figures.catalogue.chizat_phase.ChizatPhase.defaults`): 3 β × 5 γ, depths 8, 32, 128, 512
    (Σ L = 680), n = 16, S = 4, d = 10, M = 16, K = 3, float64: 5.23·10⁷ normals, 28·680 − 12 = 19 028 products
    (16 × 640 multiply–adds each) a cell, 2.92·10⁹ in all, chain 15·9·680 = 91 800 layer steps (see
    :func:`_chizat_phase_work`)."""
    return _chizat_phase_work(_chizat_phase_settings())


MODELS: list[FloorModel] = [
    FloorModel("python -m validation.weak", 76.6, "whole process, idle machine, 2026-12-07 (docs/results/defaults.md)", _weak, cores=2,
               notes="workers: every core (2 here); part 2's (N, 4, 4)·(N, 4, 1) products (≈ 1% of the arithmetic) and "
                     "the bootstraps of the weak-rate fits are not counted"),
    FloorModel("python -m validation.phase", 58.8, "whole process, idle machine, 2026-12-07 (docs/results/defaults.md)", _phase, cores=2,
               notes="workers: every core (2 here), split over H; the Davies–Harte FFTs (length 2L, d² per network) "
                     "and the check's 200-resample bootstrap are not counted"),
    FloorModel("python -m validation.figures --figure chizat-phase", 6.8,
               "whole process, idle machine, 2026-12-07, after its autograd fix (docs/results/defaults.md)",
               _chizat_phase, cores=1,
               notes="one process (the figure does not share its draws); its weights are redrawn for every (β, γ) cell "
                     "(the same streams). Not counted: autograd's gradient of each slice U[ℓ], V[ℓ] (select_backward "
                     "filled a whole (L, n, M, d) tensor per layer and step, then summed it: O(L²), 4.0·10⁹ elements "
                     "written and as many added per cell at L = 512, against 1.7·10⁷ written by its products — fixed "
                     "2026-12-07 by unbinding the weights once, 71.4 → 10.5 s) and the 1000-resample exponent bootstraps"),
]
