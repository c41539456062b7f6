"""Timing: the Fig. 7 phase diagram at paper resolution, and fractional weights the authors' way vs batched.

    python benchmarks/bench_phase.py                 # full: 51 H × 70 β, L = 1000, d = 40 (target < 10 min)
    python benchmarks/bench_phase.py --quick         # small grid, for a smoke test

1. The phase diagram (:func:`validation.phase.run`) at 51 H × 70 β, L = 1000, d = 40, 8 networks
   × 8 inputs per cell, plus the L' = 250 depth for the critical-β curve; its figure and JSON are written
   too (``--plot``, ``--phase-json``).
2. One 40×40×1000 fractional weight tensor (H = 0.7): (a) the authors' approach, a Python loop of one
   Davies–Harte call per matrix entry, re-created here from the ``fbm`` package's algorithm (per call:
   the autocovariance row built in a Python list comprehension, eigenvalues by FFT, the complex vector
   filled in a Python loop, one FFT; nothing shared between entries); (b) the same in numpy with the
   loops vectorised but still one call per entry; (c) :class:`limits.fractional.FractionalNoise`, one
   batched call (eigenvalues cached, two sequences per complex FFT).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from limits.fractional import FractionalNoise  # noqa: E402
from limits.seeding import generator, stream_seed  # noqa: E402
from validation.phase import study as phase  # noqa: E402
from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402


def authors_fgn(n: int, hurst: float, rng: np.random.Generator) -> np.ndarray:
    """One fGn sequence the way the ``fbm`` package's Davies–Harte does it (Python loops, per call)."""

    def autocov(k: int) -> float:
        return 0.5 * (abs(k - 1) ** (2 * hurst) - 2 * abs(k) ** (2 * hurst) + abs(k + 1) ** (2 * hurst))

    row_component = [autocov(i) for i in range(1, n)]
    row = [autocov(0)] + row_component + [0] + list(reversed(row_component))
    eig = np.fft.fft(row).real
    if np.any(eig < 0):
        raise ValueError("negative eigenvalue")
    gn, gn2 = rng.normal(size=n), rng.normal(size=n)
    w = np.zeros(2 * n, dtype=complex)
    for i in range(2 * n):
        if i == 0:
            w[i] = np.sqrt(eig[i] / (2 * n)) * gn[i]
        elif i < n:
            w[i] = np.sqrt(eig[i] / (4 * n)) * (gn[i] + 1j * gn2[i])
        elif i == n:
            w[i] = np.sqrt(eig[i] / (2 * n)) * gn2[0]
        else:
            w[i] = np.sqrt(eig[i] / (4 * n)) * (gn[2 * n - i] - 1j * gn2[2 * n - i])
    return np.fft.fft(w)[:n].real


def numpy_per_entry_fgn(n: int, hurst: float, rng: np.random.Generator) -> np.ndarray:
    """One sequence per call, vectorised numpy, eigenvalues recomputed every call."""
    k = np.arange(n + 1, dtype=float)
    g = 0.5 * (np.abs(k + 1) ** (2 * hurst) - 2 * k ** (2 * hurst) + np.abs(k - 1) ** (2 * hurst))
    lam = np.fft.fft(np.concatenate([g, g[n - 1 : 0 : -1]])).real
    z = (rng.normal(size=2 * n) + 1j * rng.normal(size=2 * n)) * np.sqrt(np.clip(lam, 0, None) / (2 * n))
    return np.fft.fft(z)[:n].real


def time_fgn(width: int, depth: int, hurst: float, seed: int, repeats: int) -> dict:
    rng = np.random.default_rng(stream_seed(seed, "bench", "authors"))
    start = time.perf_counter()
    authors = np.empty((width, width, depth))
    for i in range(width):
        for j in range(width):
            authors[i, j] = authors_fgn(depth, hurst, rng)
    t_authors = time.perf_counter() - start
    start = time.perf_counter()
    for _row in range(width):
        for _column in range(width):
            numpy_per_entry_fgn(depth, hurst, rng)
    t_numpy = time.perf_counter() - start
    out = {"shape": [width, width, depth], "hurst": hurst, "authors_loop_s": t_authors, "numpy_per_entry_s": t_numpy}
    for dtype in (torch.float64, torch.float32):
        times = []
        for r in range(repeats):
            noise = FractionalNoise(hurst, depth, dtype=dtype)
            start = time.perf_counter()
            noise.sample((width, width), generator(seed, "bench", r))
            times.append(time.perf_counter() - start)
        out[f"batched_{str(dtype)[6:]}_s"] = float(np.median(times))
    out["authors_variance"] = float(authors.var())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small phase grid (smoke test)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="cpu or cuda: the device of the phase diagram (on a GPU give "
                                                        "--workers 1); the fGn timings stay on the CPU")
    parser.add_argument("--json", type=Path, default=Path("results/bench_phase.json"))
    parser.add_argument("--phase-json", type=Path, default=Path("results/phase.json"))
    parser.add_argument("--plot", type=Path, default=Path("results/phase.png"))
    args = parser.parse_args()
    torch.set_num_threads(1)

    fgn = time_fgn(40, 1000, 0.7, args.seed, repeats=5)
    print("fractional weights, one 40×40×1000 tensor (H = 0.7)")
    print(f"{'method':>44} | {'seconds':>9} | speed-up vs authors")
    for key, name in (("authors_loop_s", "authors: Python loop, fbm-style DH per entry"),
                      ("numpy_per_entry_s", "numpy DH per entry (vectorised inside)"),
                      ("batched_float64_s", "FractionalNoise batched, float64"),
                      ("batched_float32_s", "FractionalNoise batched, float32")):
        print(f"{name:>44} | {fgn[key]:>9.4f} | {fgn['authors_loop_s'] / fgn[key]:>8.1f}×")

    grid = dict(hursts=(0.1, 0.3, 0.5, 0.7, 0.9), betas=tuple(np.linspace(0.2, 1.3, 12)), networks=2, inputs=2) \
        if args.quick else {}
    started = utc_now()
    outcome = phase.run(workers=args.workers, seed=args.seed, device=args.device, progress=True, **grid)
    print(outcome.table())
    outcome.save(args.phase_json)
    outcome.save_plot(args.plot)
    result = outcome.numbers
    cells = len(result["hursts"]) * len(result["betas"])
    summary = {
        "phase": {"hursts": len(result["hursts"]), "betas": len(result["betas"]), "cells": cells,
                  "depth": result["depth"], "ref_depth": result["ref_depth"], "width": result["width"],
                  "samples_per_cell": result["samples_per_cell"], "workers": result["workers"],
                  "wall_time_s": result["wall_time_s"], "target_s": 600,
                  "meets_target": result["wall_time_s"] < 600,
                  "median_column_s": float(np.median(result["column_seconds"]))},
        "fgn": fgn,
    }
    print(f"\nphase diagram: {len(result['hursts'])} H × {len(result['betas'])} β = {cells} cells, L = {result['depth']} "
          f"(+ L' = {result['ref_depth']}), {result['samples_per_cell']} samples per cell: {result['wall_time_s']:.1f} s "
          f"with {result['workers']} workers (target 600 s) — {'meets' if summary['phase']['meets_target'] else 'MISSES'} target")
    run = RunInfo.capture(seed=args.seed, dtype=outcome.settings.dtype, device=args.device, started=started,
                          wall_time_s=result["wall_time_s"], command=" ".join(sys.argv))
    write_json(args.json, {"study": "bench_phase", **summary, "run": run.to_dict()})
    print(f"wrote {args.json}, {args.phase_json}, {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
