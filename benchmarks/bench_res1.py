"""Timing of the res-1 strong-error study against the random-number floor and the straightforward approach.

Ways to the same kind of numbers (res1, width d, N samples, depths 4…256, Euler reference with R steps), all
on ``--threads`` torch threads (default 1, as the studies run):

1. **floor** — drawing the reference path's N·R·d² normals alone (``torch.randn`` in the engine's blocks,
   nothing else), in float64, and in float32 plus the cast to float64. No study on this path can be faster.
2. **the default study** — ``validation.convergence.run("res1")`` at these sizes: the path drawn in float32
   and cast, two blocks of 250 samples, every depth and two torchsde references in one pass over each block.
   Its study time (the pass, as the result's ``wall_time_s``) is compared with the float32 floor; the whole
   call (with the rate fits' bootstraps) is reported beside it.
3. **one pass in float64** — ``validation.core.one_pass.sde_errors`` with the normals drawn in float64, one block of N
   (the default of versions before 0.3), against the float64 floor.
4. **straightforward** — what a user writes first: one ``torchsde.BrownianInterval`` (``halfway_tree``)
   shared by ``sdeint`` (reference, dt = 1/R) and by each network, one solve per depth, every network
   reading ``bm(k/L, (k+1)/L)``. It is slow (each interval query costs tens of ms at this size), so
   ``--naive-fraction f`` times the reference solve over [0, f] only and scales it by 1/f (linear in the
   number of steps); the networks are timed in full. The JSON says which.

Usage: ``python benchmarks/bench_res1.py [--samples 500 --width 10 --reference-steps 8192] [--json FILE]``; on a GPU
machine add ``--device cuda`` (the straightforward approach is then skipped unless ``--naive-fraction`` is given).
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
from validation import convergence
from validation.core.one_pass import sde_errors
from validation.core.results import RunInfo, utc_now, write_json
from validation.core.runtime import reuse_freed_memory


def _synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_floor(samples: int, channels: int, steps: int, dtype: torch.dtype,
               noise_dtype: torch.dtype | None = None, device: torch.device | None = None) -> float:
    device = device if device is not None else torch.device("cpu")
    block = max(2, default_block_steps(samples, channels, steps, 1 << 23))
    gen = torch.Generator(device=device).manual_seed(0)
    _synchronise(device)
    started = time.perf_counter()
    for _ in range(steps // block):
        noise = torch.randn((block, samples, channels), generator=gen, dtype=noise_dtype or dtype, device=device)
        if noise_dtype is not None:
            noise.to(dtype)
    _synchronise(device)
    return time.perf_counter() - started


def time_one_pass(pair, depths, steps, noise_dtype: torch.dtype | None = None) -> float:
    _synchronise(pair.device)
    started = time.perf_counter()
    sde_errors(pair, depths, steps, seed=0, noise_dtype=noise_dtype)
    _synchronise(pair.device)
    return time.perf_counter() - started


def time_straightforward(pair, depths, steps, fraction: float) -> dict[str, float]:
    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(pair.samples, pair.noise_dim), dtype=pair.dtype,
                                   device=pair.device, halfway_tree=True, tol=1e-12)
    h0 = pair.initial_state()
    end = max(1, round(fraction * steps)) / steps
    started = time.perf_counter()
    ts = torch.tensor([0.0, end], dtype=pair.dtype, device=pair.device)
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
                             "(validation.core.runtime.reuse_freed_memory); default: glibc's own behaviour")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for everything timed (default 1)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (on a GPU: the floors, the default study and "
                                                        "the float64 pass on it; the straightforward approach is "
                                                        "skipped there unless --naive-fraction is given)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    reused = reuse_freed_memory() if args.allocator == "reuse" else False
    torch.set_num_threads(args.threads)
    started, clock = utc_now(), time.perf_counter()
    depths = [4, 8, 16, 32, 64, 128, 256]
    dtype = torch.float64
    device = torch.device(args.device)
    pair = get_pair("res1")(ModelConfig(width=args.width), args.samples, seed=0, dtype=dtype, device=device)
    normals = args.samples * pair.noise_dim * args.reference_steps
    floor32 = time_floor(args.samples, pair.noise_dim, args.reference_steps, dtype, torch.float32, device)
    called = time.perf_counter()
    study = convergence.run("res1", samples=args.samples, width=args.width, depths=tuple(depths),
                            reference_steps=args.reference_steps, threads=args.threads, device=args.device)
    study_call = time.perf_counter() - called
    default = study.run_info.wall_time_s
    floor = time_floor(args.samples, pair.noise_dim, args.reference_steps, dtype, device=device)
    one_pass = time_one_pass(pair, depths, args.reference_steps, torch.float64)
    rows = [("float32 floor (randn float32 + cast)", floor32), (f"default study (float32 path, {study.errors.reference['sample_blocks']} blocks)", default),
            ("  the same call with its rate fits", study_call),
            ("float64 floor", floor), ("one pass, float64 path (0.2 default)", one_pass)]
    naive = None
    if not args.skip_naive and (device.type == "cpu" or "--naive-fraction" in " ".join(sys.argv)):
        naive = time_straightforward(pair, depths, args.reference_steps, args.naive_fraction)
        rows.append(("straightforward (BrownianInterval)", naive["total_seconds"]))
    print(f"res1 study: d={args.width}, N={args.samples}, depths {depths[0]}…{depths[-1]}, reference "
          f"{args.reference_steps} steps; {normals / 1e6:.0f} M normals; torch threads {torch.get_num_threads()}; "
          f"freed memory reused: {'yes' if reused else 'no'}")
    for name, seconds in rows:
        print(f"  {name:40s} {seconds:9.2f} s   {seconds / floor32:7.2f} × float32 floor")
    print(f"  random numbers: {normals / floor / 1e6:.1f} M normals/s (float64), {normals / floor32 / 1e6:.1f} M/s "
          f"(float32 + cast); default study / float32 floor = {default / floor32:.2f}; float64 pass / float64 "
          f"floor = {one_pass / floor:.2f}")
    if naive is not None:
        print(f"  straightforward / default study = {naive['total_seconds'] / default:.1f} "
              f"(reference solve timed over {args.naive_fraction:g} of [0, 1] and scaled)")
    if args.json:
        write_json(args.json, {
            "benchmark": "res1 strong-error study", "samples": args.samples, "width": args.width,
            "freed_memory_reused": reused,
            "depths": depths, "reference_steps": args.reference_steps, "normals": normals,
            "threads": args.threads,
            "default_study": {"study_seconds": default, "call_seconds": study_call, "float32_floor_seconds": floor32,
                              "study_over_float32_floor": default / floor32, "rate": study.rate,
                              "rate_ci": list(study.rate_ci), "verdict": study.verdict,
                              "sample_blocks": study.errors.reference["sample_blocks"],
                              "noise_dtype": study.settings.noise_dtype},
            "float64_path": {"floor_seconds": floor, "one_pass_seconds": one_pass,
                             "one_pass_over_floor": one_pass / floor},
            "straightforward": naive, "naive_fraction": args.naive_fraction,
            "straightforward_over_default_study": naive["total_seconds"] / default if naive else None,
            "run": RunInfo.capture(seed=0, dtype=str(dtype).replace("torch.", ""), device=device, started=started,
                                   wall_time_s=time.perf_counter() - clock, command=" ".join(sys.argv)).to_dict(),
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
