"""Floor models (:mod:`floor_models`) of three defaults: ``regimes --preset fig2``, ``training --experiment
marion2024-fig2`` and ``training --experiment depth-transfer``.

Each ``*_work(**overrides)`` resolves the default's settings through the package itself (the preset or experiment
defaults, with ``overrides`` applied the way the command line applies flags) and counts, from those settings, the
random numbers drawn, the batched products (forward and backward) and the longest dependent chain; the zero-argument
``work`` of each :class:`FloorModel` is the default. The chain is counted in layers (a forward layer and a backward
layer are one step each), the longest chain of the deepest single network; every layer is at least one product, so
the chain in products is at least that long.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_models import FloorModel, Product, Work  # noqa: E402

__all__ = ["MODELS", "fig2_work", "marion2024_fig2_work", "depth_transfer_work"]


def _merged(products: Iterable[Product]) -> tuple[Product, ...]:
    """Products of the same shape and dtype added into one (zero counts dropped), largest arithmetic first."""
    counts: dict[tuple[int, int, int, int, str], float] = defaultdict(float)
    for p in products:
        counts[(p.batch, p.m, p.k, p.n, p.dtype)] += p.count
    merged = [Product(c, *key) for key, c in counts.items() if c]
    return tuple(sorted(merged, key=lambda p: -p.madds))


# ------------------------------------------------------------------------------------ regimes --preset fig2
def _fig2_settings(overrides: dict[str, Any]) -> Any:
    from validation.core.settings import make_settings
    from validation.regimes.study import RegimesSettings, _resolve

    return _resolve("fig2", make_settings(RegimesSettings, None, overrides))


def fig2_work(**overrides: Any) -> Work:
    """``python -m validation.regimes --preset fig2`` (:mod:`validation.regimes.distribution`; defaults: the
    ``Distribution("fig2", …)`` preset over ``Distribution.kind_defaults`` and ``CommonSettings``): N = 10⁴ networks
    (i.i.d. uniform res-3, L = 1000, d = 100, n_in = 64, one input, one β), float64, one worker.

    * uniforms: each network fills one (2, L, d, d) buffer, V and W (``IIDRegime.network_weights``), and the eighth-
      moment constant of Prop. 3 draws C_SAMPLES = 4000 matrices d × d (``assumptions.eighth_moment_constant``):
      N·2·L·d² + 4000·d² = 2·10¹¹ + 4·10⁷;
    * normals: per network x (n_in·inputs), A (d·n_in), B (d) (``measure_ratios``), and the eighth moment's two
      inputs (2d): N·(n_in·inputs + d·n_in + d) + 2d = 6.564·10⁷ + 200;
    * products (``limits.initialisation.propagate``): per layer W_k·h and V_k·σ(pre) forward, V_kᵀ·(…) and W_kᵀ·u
      backward, all (b, d, d)·(b, d, C) on a chunk of b networks (C = β's × inputs = 1 column): 4L products per
      chunk; the 40 tasks of FIG2_BLOCK = 250 networks are cut into chunks of ``ratio_chunk`` networks (3 at
      512 MiB: 83 chunks of 3 and one of 1 per task) — in all 4·L·N·d² = 4·10¹¹ multiply–adds (matrix–vector);
      left out: A x per network and the eighth moment's W·[h, q] (4000·d²·4 = 1.6·10⁸, 0.04%);
    * chain: a network's forward and backward recursions, L + L = 2L layers (each two dependent products: 4L).
    """
    from limits.initialisation import Block, ratio_chunk
    from validation.regimes.distribution import FIG2_BLOCK
    from validation.regimes.preset import C_SAMPLES

    s = _fig2_settings(overrides)
    if s.regime != "iid" or s.law not in ("uniform", "normal"):
        raise NotImplementedError("counted for i.i.d. uniform or normal weights (the preset's)")
    depth, width, columns = s.depths[0], s.width, len(s.betas) * s.inputs
    block = Block(s.block, s.activation)
    per_layer = 2 if block.uses_w else 1      # W_k h (res-2/3 only) and V_k σ(pre), and as many backward
    dtype = s.noise_dtype or s.dtype
    products = []
    for first in range(0, s.samples, FIG2_BLOCK):
        count = min(FIG2_BLOCK, s.samples - first)
        chunk, _ = ratio_chunk(depth, width, columns, count, s.torch_dtype.itemsize, block, s.chunk_mb)
        full, rest = divmod(count, chunk)
        products += [Product(2 * per_layer * depth * full, chunk, width, width, columns, s.dtype),
                     Product(2 * per_layer * depth * (1 if rest else 0), rest or 1, width, width, columns, s.dtype)]
    weights = s.samples * 2 * depth * width**2 + C_SAMPLES * width**2
    normals = s.samples * (s.n_in * s.inputs + width * s.n_in + width) + 2 * width
    return Work(normals=normals + (weights if s.law == "normal" else 0),
                uniforms=weights if s.law == "uniform" else 0,
                products=_merged(products),
                chain=2 * depth,
                how=(f"N = {s.samples} networks, L = {depth}, d = {width}, n_in = {s.n_in}, {s.law} weights drawn in "
                     f"{dtype}, {s.dtype} products, {s.workers} worker(s): N·2Ld² + {C_SAMPLES}d² uniforms, "
                     f"N(n_in + d·n_in + d) + 2d normals, 4L products (b, d, d)·(b, d, 1) per chunk of b networks, "
                     f"chain 2L layers"))


# ----------------------------------------------------------------------------------------- training settings
def _training_settings(experiment: str, overrides: dict[str, Any]) -> Any:
    from validation.core.settings import make_settings
    from validation.training.study import TrainingSettings, resolve

    return resolve(experiment, make_settings(TrainingSettings, None, overrides))


# ----------------------------------------------------------------------- training --experiment marion2024-fig2
def marion2024_fig2_work(**overrides: Any) -> Work:
    """``python -m validation.training --experiment marion2024-fig2`` (:class:`validation.training.marion2024.
    MarionFig2`, its ``defaults``): depths L ∈ {16, 32, 64, 128, 256} (the last the reference, trained too), d = 16,
    M = 64 hidden, n = 50 examples, R = 4 replicates, 5000 full-batch steps, float32; the five networks stepped in
    lockstep on two threads (:class:`~validation.training.lockstep.SideBySide`).

    * normals: per replicate X and Y (n × d each) and W⁰ (d × M): R·(2nd + dM) = 10 496; no uniforms;
    * products, layer k of h ← h + σ(h W_k) V_k / L on the R replicates: forward h W_k (R, n, d)·(R, d, M) and
      σ(·) V_k (R, n, M)·(R, M, d); backward (autograd's bmm rule, grad·mat2ᵀ and selfᵀ·grad) g V_kᵀ (n, d, M),
      σᵀ g (M, n, d), g' W_kᵀ (n, M, d) — not at layer 0, whose input x needs no gradient — and hᵀ g' (d, n, M):
      6L − 1 products of R·n·d·M multiply–adds per step and network; one more forward (2L) per network for the
      final loss. In all (5000·(6·ΣL − 5) + 2ΣL)·R·n·d·M, ΣL = 496: 3.05·10¹² multiply–adds;
    * chain: the deepest network (L = 256, alone on its thread; the other thread steps 16 + 32 + 64 + 128 = 240
      layers): per step L forward and L backward layers, 5000·2L + L (the final loss) = 2 560 256 layers.
    """
    s = _training_settings("marion2024-fig2", overrides)
    R, n, d, M, steps = s.replicates, s.train_size, s.width, s.hidden, s.epochs
    total, networks, deepest = sum(s.depths), len(s.depths), max(s.depths)
    dt = s.dtype
    products = (Product(steps * 2 * total + total, R, n, d, M, dt),                 # h W_k; g V_kᵀ
                Product(steps * (2 * total - networks) + total, R, n, M, d, dt),    # σ V_k; g' W_kᵀ (k ≥ 1)
                Product(steps * total, R, M, n, d, dt),                             # dV_k = σᵀ g
                Product(steps * total, R, d, n, M, dt))                             # dW_k = hᵀ g'
    return Work(normals=R * (2 * n * d + d * M),
                products=_merged(products),
                chain=steps * 2 * deepest + deepest,
                how=(f"depths {list(s.depths)} (ΣL = {total}), d = {d}, M = {M}, n = {n}, R = {R}, {steps} steps, "
                     f"{dt}: R(2nd + dM) normals; per step (6ΣL − {networks}) products of R·n·d·M; chain "
                     f"steps·2·{deepest} + {deepest} layers"))


# ------------------------------------------------------------------------ training --experiment depth-transfer
def depth_transfer_work(**overrides: Any) -> Work:
    """``python -m validation.training --experiment depth-transfer`` (:class:`validation.training.depth_transfer.
    DepthTransfer`, its ``defaults`` and ``per_dataset["digits"]``): 3 β × 6 depths L ∈ {4, …, 128} = 18
    configurations shared out to 2 worker processes; each a res-1 :class:`~validation.training.networks.Res1Net` of
    R = G·r = 8 rates × 24 replicates = 192 networks batched, d = 32, digits (N = 1438 training, 359 test examples,
    n_in = 64, 10 classes), Adam, 4 epochs of U = ⌊N/B⌋ = 22 updates of B = 64, float32.

    * normals: per configuration R·(2Ld² + n_in·d + d·n_out) — ``IIDRegime.network_weights`` fills V *and* W, (2, L,
      d, d), and the res-1 network keeps V — summed: R·|β|·(2d²ΣL + |L|(n_in·d + d·n_out)) = 3.05·10⁸;
    * uniforms (counted as one per element of ``torch.randperm``): each replicate's data order per epoch, |β|·|L|·
      epochs·R·N = 1.99·10⁷, and the split of the 1797 digits in each process that loads them (the main one and
      the 2 workers);
    * products: per update and hidden layer σ(h) V_kᵀ (R, B, d)·(R, d, d) forward, g V_k (B, d, d) and σᵀ g (d, B, d)
      backward: 3·U·epochs·B·R·d² per layer; the evaluations after every epoch (test set) and at the end (training
      set, chunks of 1024) add forward products (R, N_chunk, d)·(R, d, d): +17%. The input and output layers (3.8%
      of the training products) are left out; in all 2.51·10¹² + 0.43·10¹² = 2.94·10¹² multiply–adds;
    * chain: the deepest configuration, L + 2 layers (input, L hidden, output) forward and backward per update and
      L + 2 per evaluated chunk: epochs·U·2(L + 2) + (epochs·⌈359/1024⌉ + ⌈1438/1024⌉)(L + 2) = 23 660 layers.
    """
    from validation.core.workers import default_workers
    from validation.training.data import load_dataset

    s = _training_settings("depth-transfer", overrides)
    data = load_dataset(s.dataset, s.seed, dtype=s.torch_dtype, data_dir=s.data_dir, train_size=s.train_size)
    n_train, n_test = len(data.x_train), len(data.x_test)
    whole = n_test + len(load_dataset(s.dataset, s.seed, data_dir=s.data_dir).x_train)  # what the split permutes
    R, d, B, dt = len(s.learning_rates) * s.replicates, s.width, s.batch_size, s.dtype
    updates = s.epochs * max(1, n_train // B)
    chunks = lambda n: [min(1024, n - i) for i in range(0, n, 1024)]  # noqa: E731  (trainer.evaluate's chunks)
    evaluated = [c for _ in range(s.epochs) for c in chunks(n_test)] + chunks(n_train)
    configurations = [(beta, L) for beta in s.betas for L in s.depths]
    products, normals = [], 0
    for _, L in configurations:
        normals += R * (2 * L * d * d + data.n_in * d + d * data.n_out)
        products += [Product(2 * updates * L, R, B, d, d, dt),      # σ(h) V_kᵀ and g V_k
                     Product(updates * L, R, d, B, d, dt)]          # dV_k = (σᵀ g)ᵀ
        products += [Product(L, R, c, d, d, dt) for c in evaluated]
    orders = len(configurations) * s.epochs * R * n_train
    workers = min(len(configurations), s.workers or default_workers(s.device))
    loads = 1 + (workers if workers > 1 else 0)     # the main process, and each worker process (study.run)
    splits = loads * whole if s.dataset == "digits" else 0
    deepest = max(s.depths) + 2
    return Work(normals=normals, uniforms=orders + splits, products=_merged(products),
                chain=updates * 2 * deepest + len(evaluated) * deepest,
                how=(f"{len(s.betas)} β × depths {list(s.depths)}, R = {len(s.learning_rates)} rates × {s.replicates} "
                     f"= {R}, d = {d}, {s.dataset} (N = {n_train}, test {n_test}), {s.epochs} epochs × "
                     f"{updates // s.epochs} updates of {B}, {dt}: normals RΣ(2Ld² + n_in·d + d·n_out); per update "
                     f"3L products (R, B, d, d), plus forward evaluations; chain "
                     f"{updates}·2(L+2) + {len(evaluated)}(L+2), L = {max(s.depths)}"))


MODELS: list[FloorModel] = [
    FloorModel("python -m validation.regimes --preset fig2 --dtype float32 --workers 2", 589.5,
               "benchmarks/results/bench_fig2.json (2026-11-24; benchmarks/bench_fig2.py)",
               lambda: fig2_work(dtype="float32", workers=2), cores=2,
               notes="the configuration bench_fig2.py times; the plain preset runs float64 on one worker, not timed "
                     "at its full size (fig2_work() counts it)"),
    FloorModel("python -m validation.training --experiment marion2024-fig2", 482.0, "docs/results/defaults.md",
               lambda: marion2024_fig2_work(), cores=2,
               notes="one process, its five depths stepped side by side on two threads (SideBySide)"),
    FloorModel("python -m validation.training --experiment depth-transfer", 277.0, "docs/results/defaults.md",
               lambda: depth_transfer_work(), cores=2, notes="18 configurations over 2 worker processes"),
]
