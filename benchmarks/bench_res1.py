"""Timing of the res-1 strong-error study against the random-number floor and the straightforward approach.

Three ways to the same numbers (res1, width d, N samples, depths 4…256, Euler reference with R steps):

1. **floor** — drawing the reference path's N·R·d² normals alone (``torch.randn`` in the same blocks,
   nothing else). No study on this path can be faster.
2. **one pass** — ``validation.engine.sde_errors``: the path streamed block by block, all depths and two
   torchsde references stepped as the blocks arrive. Timed twice: with the normals drawn in float64, and
   drawn in float32 and cast to float64 (``--noise-dtype float32``), each against its own floor
   (``torch.randn`` in float64, and in float32 plus the cast).
3. **straightforward** — what a user writes first: one ``torchsde.BrownianInterval`` (``halfway_tree``)
   shared by ``sdeint`` (reference, dt = 1/R) and by each network, one solve per depth, every network
   reading ``bm(k/L, (k+1)/L)``. It is slow (each interval query costs tens of ms at this size), so
   ``--naive-fraction f`` times the reference solve over [0, f] only and scales it by 1/f (linear in the
   number of steps); the networks are timed in full. The JSON says which.

Usage: ``python benchmarks/bench_res1.py [--samples 500 --width 10 --reference-steps 8192] [--json FILE]``.
Peak memory of a large run (the issue's 2^16-step reference) is measured separately with
``/usr/bin/time -v python -m validation.convergence --model res1 --samples 1000 --reference-steps 65536``.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
import torchsde

from limits.brownian import default_block_steps
from limits import ModelConfig, get_pair, run_network
from validation.engine import sde_errors
from validation.results import RunInfo, utc_now, write_json
from validation.runtime import reuse_freed_memory


def time_floor(samples: int, channels: int, steps: int, dtype: torch.dtype,
               noise_dtype: torch.dtype | None = None) -> float:
    block = max(2, default_block_steps(samples, channels, steps, 1 << 23))
    gen = torch.Generator().manual_seed(0)
    started = time.perf_counter()
    for _ in range(steps // block):
        noise = torch.randn((block, samples, channels), generator=gen, dtype=noise_dtype or dtype)
        if noise_dtype is not None:
            noise.to(dtype)
    return time.perf_counter() - started


def time_one_pass(pair, depths, steps, noise_dtype: torch.dtype | None = None) -> float:
    started = time.perf_counter()
    sde_errors(pair, depths, steps, seed=0, noise_dtype=noise_dtype)
    return time.perf_counter() - started


def time_straightforward(pair, depths, steps, fraction: float) -> dict[str, float]:
    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(pair.samples, pair.noise_dim), dtype=pair.dtype,
                                   halfway_tree=True, tol=1e-12)
    h0 = pair.initial_state()
    end = max(1, round(fraction * steps)) / steps
    started = time.perf_counter()
    ts = torch.tensor([0.0, end], dtype=pair.dtype)
    torchsde.sdeint(pair.limit_sde(), h0, ts, bm=bm, method="euler", dt=1.0 / steps)
    reference = (time.perf_counter() - started) / (end / 1.0)
    started = time.perf_counter()
    for depth in depths:
        run_network(pair, depth, bm, h0)
    networks = time.perf_counter() - started
    return {"reference_seconds": reference, "networks_seconds": networks, "total_seconds": reference + networks}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--width", type=int, default=10)
    parser.add_argument("--reference-steps", type=int, default=8192)
    parser.add_argument("--naive-fraction", type=float, default=1.0,
                        help="fraction of the straightforward reference solve that is timed (then scaled)")
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--allocator", choices=("reuse", "default"), default="reuse",
                        help="reuse: keep freed memory for reuse, as the command lines do "
                             "(validation.runtime.reuse_freed_memory); default: glibc's own behaviour")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    reused = reuse_freed_memory() if args.allocator == "reuse" else False
    started, clock = utc_now(), time.perf_counter()
    depths = [4, 8, 16, 32, 64, 128, 256]
    dtype = torch.float64
    pair = get_pair("res1")(ModelConfig(width=args.width), args.samples, seed=0, dtype=dtype)
    normals = args.samples * pair.noise_dim * args.reference_steps
    floor = time_floor(args.samples, pair.noise_dim, args.reference_steps, dtype)
    one_pass = time_one_pass(pair, depths, args.reference_steps)
    floor32 = time_floor(args.samples, pair.noise_dim, args.reference_steps, dtype, torch.float32)
    one_pass32 = time_one_pass(pair, depths, args.reference_steps, torch.float32)
    rows = [("random-number floor", floor), ("one pass (this package)", one_pass),
            ("float32 floor (randn float32 + cast)", floor32), ("one pass, --noise-dtype float32", one_pass32)]
    naive = None
    if not args.skip_naive:
        naive = time_straightforward(pair, depths, args.reference_steps, args.naive_fraction)
        rows.append(("straightforward (BrownianInterval)", naive["total_seconds"]))
    print(f"res1 study: d={args.width}, N={args.samples}, depths {depths[0]}…{depths[-1]}, reference "
          f"{args.reference_steps} steps; {normals / 1e6:.0f} M normals; torch threads {torch.get_num_threads()}; "
          f"freed memory reused: {'yes' if reused else 'no'}")
    for name, seconds in rows:
        print(f"  {name:38s} {seconds:9.2f} s   {seconds / floor:7.2f} × floor")
    print(f"  random numbers: {normals / floor / 1e6:.1f} M normals/s (float64), {normals / floor32 / 1e6:.1f} M/s "
          f"(float32 + cast); float32-noise pass / its floor = {one_pass32 / floor32:.2f}")
    if naive is not None:
        print(f"  straightforward / one pass = {naive['total_seconds'] / one_pass:.1f} "
              f"(reference solve timed over {args.naive_fraction:g} of [0, 1] and scaled)")
    if args.json:
        write_json(args.json, {
            "benchmark": "res1 strong-error study", "samples": args.samples, "width": args.width,
            "freed_memory_reused": reused,
            "depths": depths, "reference_steps": args.reference_steps, "normals": normals,
            "floor_seconds": floor, "one_pass_seconds": one_pass, "one_pass_over_floor": one_pass / floor,
            "float32_noise": {"floor_seconds": floor32, "one_pass_seconds": one_pass32,
                              "one_pass_over_floor": one_pass32 / floor32},
            "straightforward": naive, "naive_fraction": args.naive_fraction,
            "straightforward_over_one_pass": naive["total_seconds"] / one_pass if naive else None,
            "run": RunInfo.capture(seed=0, dtype=str(dtype).replace("torch.", ""), device="cpu", started=started,
                                   wall_time_s=time.perf_counter() - clock, command=" ".join(sys.argv)).to_dict(),
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
