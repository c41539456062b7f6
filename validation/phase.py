"""The (H, β) phase diagram of Marion et al. Fig. 7: res-3 with fractional weights at initialisation.

    python -m validation.phase                       # paper resolution: 51 H × 70 β, L = 1000, d = 40
    python -m validation.phase --hursts 0.1,0.5,0.9 --betas 0.2:1.3:23 --networks 4   # a quick look

For each Hurst index H, every network draws its weights once (each entry's layer sequence an
independent unit-variance fGn, :class:`limits.initialisation.FractionalRegime`) and runs *every* β and
every input at once (batched columns), forward and backward: per cell the median over
networks × inputs of log10 r_h = log10(‖h_L − h_0‖/‖h_0‖) and log10 r_p = log10(‖p_0 − p_L‖/‖p_L‖).

**Critical β(H)**, two measurements, both drawn:

* *depth invariance* (the definition of the critical scaling: r neither grows nor vanishes with L):
  a second depth L' = L/4 is run with its own weights, and β_c(H) is the zero of the local slope
  s(β) = [log median r(L) − log median r(L')]/log(L/L'), interpolated linearly in β. For i.i.d.
  weights (H = ½) this is unbiased to O(1/L): E r_h² = (1 + L^{-2β}/2)^L − 1 is flat in L at β = ½.
* *level crossing*: the β at which median r(L) = 1 (the paper's "black zone" ‖h_L − h_0‖ ≈ ‖h_0‖).
  This depends on the O(1) constant in r ≈ c·L^{H−β} and is biased by log(c)/log(L) at finite L.

Predictions (THEORY §5): β_c = H for H ∈ (½, 1), β_c = ½ for H < ½.

**Explosions.** float32 (the default here, for speed: the run is bound by small batched GEMMs and
random numbers, both ~2× faster than float64, and differences h_k − h_0 are accumulated so r ~ 1e-5
keeps ~6 digits) overflows at 3.4e38. Every non-finite sample is counted; it enters the median as +∞,
and a cell whose median is +∞ is drawn as "overflow", not as a number, so the colour scale (fixed,
clipped at ±``--vmax`` with arrows) is never set by explosions.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from limits.fractional import FractionalNoiseError, check_hurst
from limits.initialisation import Block, FractionalRegime, measure_ratios

from .cli import HelpFormatter, UsageError, dtype_arg, int_at_least, positive_float, run_cli
from .regime_stats import critical_beta
from .runinfo import run_metadata, write_json

PAPER = dict(hursts=(0.05, 0.97, 51), betas=(0.2, 1.3, 70), depth=1000, width=40, n_in=64)


def _grid(text: str, name: str, check: Any) -> list[float]:
    """``a:b:n`` (n evenly spaced values from a to b) or a comma list."""
    try:
        if text.count(":") == 2:
            a, b, n = text.split(":")
            count = int(n)
            if count < 1:
                raise argparse.ArgumentTypeError(f"{name} grid {text!r}: the count must be ≥ 1")
            values = np.linspace(float(a), float(b), count).tolist()
        else:
            values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} grid {text!r}: use 'a:b:n' or a comma list of numbers") from None
    if not values:
        raise argparse.ArgumentTypeError(f"{name} grid {text!r} is empty")
    for v in values:
        check(v)
    return values


def _check_h(v: float) -> None:
    try:
        check_hurst(v)
    except FractionalNoiseError:
        raise argparse.ArgumentTypeError(f"Hurst index H={v:g} is out of range (allowed: 0 < H < 1)") from None


def _check_b(v: float) -> None:
    if not (math.isfinite(v) and v >= 0):
        raise argparse.ArgumentTypeError(f"β={v:g} is out of range (allowed: β ≥ 0)")


def hurst_grid(text: str) -> list[float]:
    return _grid(text, "H", _check_h)


def beta_grid(text: str) -> list[float]:
    return _grid(text, "β", _check_b)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.phase", description=__doc__, formatter_class=HelpFormatter)
    add = p.add_argument
    add("--hursts", type=hurst_grid, default="0.05:0.97:51", help="Hurst indices: 'a:b:n' or comma list, each in (0, 1)")
    add("--betas", type=beta_grid, default="0.2:1.3:70", help="scalings β: 'a:b:n' or comma list, each ≥ 0")
    add("--depth", type=int_at_least(1), default=1000, help="depth L")
    add("--ref-depth", type=int_at_least(0), default=None,
        help="second depth L' for the depth-invariance critical β (default L/4; 0 = skip)")
    add("--width", type=int_at_least(1), default=40, help="width d")
    add("--n-in", type=int_at_least(1), default=64, help="input dimension n_in")
    add("--networks", type=int_at_least(1), default=8, help="networks per H (weights drawn once, shared by every β)")
    add("--inputs", type=int_at_least(1), default=8, help="inputs per network; samples per cell = networks × inputs")
    add("--seed", type=int, default=0, help="seed of every random stream")
    add("--dtype", type=dtype_arg, default=torch.float32, help="float32 (default here, see above) or float64")
    add("--workers", type=int_at_least(1), default=2, help="processes (each single-threaded), split over H")
    add("--vmax", type=positive_float, default=4.0, help="colour scale clipped to [−vmax, vmax] in log10 r")
    add("--json", type=Path, default=Path("results/phase.json"), help="result file")
    add("--plot", type=Path, default=Path("results/phase.png"), help="figure")
    add("--no-plot", action="store_true", help="skip the figure")
    add("--quiet", action="store_true", help="no progress bar")
    return p


def phase_column(task: dict[str, Any]) -> dict[str, Any]:
    """One Hurst index: per-cell medians of log10 r and overflow counts at L (and L')."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    regime = FractionalRegime(task["hurst"])
    out: dict[str, Any] = {"hurst": task["hurst"]}
    for tag, depth in (("main", task["depth"]), ("ref", task["ref_depth"])):
        if not depth:
            continue
        res = measure_ratios(
            regime, depth, task["betas"], task["networks"], task["inputs"], task["width"], task["n_in"],
            Block("res3"), seed=task["seed"], label=("phase", tag), dtype=task["dtype"],
        )
        for key in ("r_h", "r_p"):
            r = getattr(res, key).double().reshape(len(task["betas"]), -1).numpy()
            bad = ~np.isfinite(r)
            logs = np.log10(np.where(bad, np.inf, r))
            out[f"{tag}_{key}_median_log10"] = np.median(logs, axis=1)
            out[f"{tag}_{key}_overflow"] = bad.sum(axis=1)
    out["seconds"] = time.perf_counter() - start
    return out


def _level_crossing(betas: list[float], med: np.ndarray) -> float | None:
    """β where median log10 r crosses 0 going from explosion (+) to identity (−)."""
    return critical_beta(betas, [float(v) for v in med])


def run_phase(args: argparse.Namespace, progress: bool = True) -> dict[str, Any]:
    ref_depth = args.depth // 4 if args.ref_depth is None else args.ref_depth
    if ref_depth and ref_depth >= args.depth:
        raise UsageError(f"--ref-depth {ref_depth} must be < --depth {args.depth} (or 0 to skip)")
    common = dict(betas=args.betas, depth=args.depth, ref_depth=ref_depth, width=args.width, n_in=args.n_in,
                  networks=args.networks, inputs=args.inputs, seed=args.seed, dtype=args.dtype)
    tasks = [dict(common, hurst=h) for h in args.hursts]
    start = time.perf_counter()
    bar = tqdm(total=len(tasks), desc="phase (H columns)", disable=not progress, file=sys.stderr, leave=False)
    columns: list[dict[str, Any]] = []
    if args.workers == 1:
        for task in tasks:
            columns.append(phase_column(task))
            bar.update(1)
    else:
        with ProcessPoolExecutor(max_workers=args.workers, mp_context=get_context("spawn")) as pool:
            for col in pool.map(phase_column, tasks):
                columns.append(col)
                bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - start
    grid: dict[str, Any] = {}
    for key in columns[0]:
        if key not in ("hurst", "seconds"):
            grid[key] = np.stack([c[key] for c in columns], axis=1)  # (β, H)
    log_ratio = math.log10(args.depth / ref_depth) if ref_depth else None
    critical: dict[str, list[float | None]] = {}
    for key in ("r_h", "r_p"):
        main = grid[f"main_{key}_median_log10"]
        critical[f"level_{key}"] = [_level_crossing(args.betas, main[:, j]) for j in range(len(args.hursts))]
        if ref_depth:
            ref = grid[f"ref_{key}_median_log10"]
            with np.errstate(invalid="ignore"):
                slope = (main - ref) / log_ratio
            slope = np.where(np.isnan(slope), np.inf, slope)  # inf − inf: exploded at both depths
            grid[f"slope_{key}"] = slope
            critical[f"depth_{key}"] = [critical_beta(args.betas, slope[:, j].tolist()) for j in range(len(args.hursts))]
    predicted = [h if h > 0.5 else 0.5 for h in args.hursts]
    overflow = {k: int(v.sum()) for k, v in grid.items() if k.endswith("overflow")}
    samples = args.networks * args.inputs
    return {
        "hursts": args.hursts, "betas": args.betas, "depth": args.depth, "ref_depth": ref_depth,
        "width": args.width, "n_in": args.n_in, "networks": args.networks, "inputs": args.inputs,
        "samples_per_cell": samples, "grid": grid, "critical_beta": critical, "predicted_critical_beta": predicted,
        "overflow_samples": overflow,
        "overflow_cells": {k: int((np.isinf(grid[k.replace("overflow", "median_log10")])).sum()) for k in overflow},
        "wall_time_s": elapsed, "column_seconds": [c["seconds"] for c in columns], "workers": args.workers,
    }


def print_phase(result: dict[str, Any]) -> None:
    h, b = result["hursts"], result["betas"]
    print(f"\nphase diagram: res-3, d = {result['width']}, L = {result['depth']} (L' = {result['ref_depth']}), "
          f"{len(h)} H × {len(b)} β, {result['samples_per_cell']} samples per cell")
    print(f"overflowed samples (counted as explosions, +∞ in medians): {result['overflow_samples']}")
    print(f"cells whose median overflowed (drawn as 'overflow'): {result['overflow_cells']}")
    crit = result["critical_beta"]
    cols = [k for k in ("depth_r_h", "depth_r_p", "level_r_h", "level_r_p") if k in crit]
    print(f"{'H':>6} {'predicted':>9} | " + " ".join(f"{c:>10}" for c in cols))
    step = max(1, len(h) // 17)
    for j in range(0, len(h), step):
        vals = " ".join(f"{crit[c][j]:>10.3f}" if crit[c][j] is not None else f"{'—':>10}" for c in cols)
        print(f"{h[j]:>6.3f} {result['predicted_critical_beta'][j]:>9.3f} | {vals}")
    def mean_abs(x: np.ndarray) -> str:
        return f"{x.mean():.3f}" if x.size else "—"

    for c in cols:
        est = np.array([np.nan if v is None else v for v in crit[c]], dtype=float)
        err = np.abs(est - np.array(result["predicted_critical_beta"]))
        ok, hs = np.isfinite(est), np.array(h)
        print(f"{c}: mean |β_c − prediction| = {mean_abs(err[ok])} over {ok.sum()} H values "
              f"(H > 0.5: {mean_abs(err[ok & (hs > 0.5)])}; H < 0.5: {mean_abs(err[ok & (hs < 0.5)])})")
    print(f"wall time {result['wall_time_s']:.1f} s with {result['workers']} worker(s)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = run_phase(args, progress=not args.quiet)
    print_phase(result)
    payload = {"study": "phase", "result": result, "run": run_metadata(args.seed, args.dtype, "cpu")}
    write_json(args.json, payload)
    print(f"wrote {args.json}")
    if not args.no_plot:
        from .phase_plots import plot_phase

        plot_phase(result, args.plot, args.vmax)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
