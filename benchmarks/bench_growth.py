"""Growth: how the wall time and the peak memory of a whole run grow with the samples N and with the depth L — the
main study (``convergence --model res1``) and the multilevel study (``multilevel --schemes network``).

    python benchmarks/bench_growth.py                      # both studies, both sweeps (about 5 minutes on 2 cores)
    python benchmarks/bench_growth.py --only convergence   # one study (the other's sweeps in the JSON are kept)

Each point runs the command line as a child process, measured as ``benchmarks/bench_memory.py`` measures a run
(the process tree's peak, polled every 20 ms, or its high-water mark when larger; wall time from start to exit).
For each sweep the JSON holds every point and two least-squares slopes on log–log axes, over the sweep's points:

* ``time_exponent``: the least-squares slope of log(t − t₀) on log(N·L) (N the samples, per level for multilevel;
  L the deepest depth), t₀ (``fixed_seconds``) the wall time of the same study at almost no work (``FIXED``: a few
  samples, the shallowest depths) — start-up, imports, writing; 1 means the time beyond that grows linearly in N·L.
  ``time_exponent_whole`` is the plain slope of log t, fixed cost included;
* ``memory_exponent``: of the peak memory against the swept size: 0 means memory flat in it.

The bounds a design promise asks for (time ~ N·L, memory flat in L and, for multilevel, in N) are printed beside,
and measured, not asserted: timings vary with the machine (no wall-clock assertion in a test). Results go to
``benchmarks/results/bench_growth.json`` with the machine, versions and command of each point. Run it alone: a
timing beside other jobs measures them too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_memory import measure  # noqa: E402

RESULT = ROOT / "benchmarks" / "results" / "bench_growth.json"

#: (study, sweep name, the swept size's symbol, [(size, work N·L, arguments)], the promise in words)
SWEEPS: list[tuple[str, str, str, list[tuple[int, int, list[str]]], str]] = [
    ("convergence", "samples", "N",
     [(n, n * 256, ["--model", "res1", "--samples", str(n)]) for n in (500, 1000, 2000, 4000)],
     "time ∝ N·L; memory flat in N beyond the blocks of samples (each worker holds one block)"),
    ("convergence", "depth", "L",
     [(L, 500 * L, ["--model", "res1", "--depths", f"4:{L}"]) for L in (64, 128, 256, 512, 1024)],
     "time ∝ N·L; memory flat in L (the network and the limit run in one pass, block by block)"),
    ("multilevel", "samples", "N",
     [(n, n * 128, ["--model", "res1", "--schemes", "network", "--accuracies", "0.05", "--depths", "1:128",
       "--samples", str(n)])
      for n in (20000, 40000, 80000, 160000)],
     "time ∝ N·L; memory flat in N (running sums per level, samples streamed in batches)"),
    ("multilevel", "depth", "L",
     [(L, 40000 * L, ["--model", "res1", "--schemes", "network", "--accuracies", "0.05", "--depths", f"1:{L}",
       "--samples", "40000"])
      for L in (64, 128, 256, 512, 1024)],
     "time ∝ N·L; memory flat in L"),
]


def slope(x: list[float], y: list[float]) -> float:
    """The least-squares slope of log y on log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


#: per study, a run of almost no work: its wall time is the fixed cost t₀ subtracted before the time exponent
FIXED: dict[str, list[str]] = {
    "convergence": ["--model", "res1", "--samples", "16", "--depths", "4:8", "--reference-steps", "64"],
    "multilevel": ["--model", "res1", "--schemes", "network", "--accuracies", "0.05", "--depths", "1:8",
                   "--samples", "200"],
}


def run_sweep(study: str, name: str, symbol: str, points: list[tuple[int, int, list[str]]], promise: str) -> dict:
    fixed = measure(study, FIXED[study])
    print(f"  {study} at almost no work: {fixed['seconds']:7.2f} s, exit {fixed['exit']}", flush=True)
    rows = []
    for size, work, args in points:
        measured = measure(study, args)
        rows.append({"size": size, "work": work, "command": f"python -m validation.{study} " + " ".join(args),
                     **measured})
        print(f"  {study} {symbol} = {size:>6}: {measured['seconds']:7.2f} s, {measured['peak_mb']:7.1f} MiB, "
              f"exit {measured['exit']}", flush=True)
    ok = [r for r in rows if r["exit"] in (0, 1, 4)]
    works, seconds = [r["work"] for r in ok], [r["seconds"] for r in ok]
    t0 = fixed["seconds"] if fixed["exit"] in (0, 1, 4) else None
    beyond = [t - t0 for t in seconds] if t0 is not None else []
    return {"study": study, "sweep": name, "symbol": symbol, "promise": promise, "points": rows,
            "fixed_command": f"python -m validation.{study} " + " ".join(FIXED[study]), "fixed_seconds": t0,
            "time_exponent": slope(works, beyond) if len(ok) >= 2 and all(b > 0 for b in beyond) else None,
            "time_exponent_whole": slope(works, seconds) if len(ok) >= 2 else None,
            "memory_exponent": slope([r["size"] for r in ok], [r["peak_mb"] for r in ok]) if len(ok) >= 2 else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted({s[0] for s in SWEEPS}), help="one study's sweeps")
    parser.add_argument("--json", type=Path, default=RESULT, help=f"where the results go (default: {RESULT})")
    args = parser.parse_args(argv)
    sweeps = []
    for study, name, symbol, points, promise in SWEEPS:
        if args.only and study != args.only:
            continue
        print(f"{study}, growing {symbol}:", flush=True)
        sweep = run_sweep(study, name, symbol, points, promise)
        print(f"  time − {sweep['fixed_seconds']:.1f} s ∝ (N·L)^{(sweep['time_exponent'] or float('nan')):.2f} "
              f"(whole: {sweep['time_exponent_whole']:.2f}); peak ∝ {symbol}^{sweep['memory_exponent']:.2f}; "
              f"promise: {promise}", flush=True)
        sweeps.append(sweep)
    import torch

    if args.only and args.json.exists():  # the other study's sweeps, as measured before, are kept
        earlier = json.loads(args.json.read_text()).get("sweeps", [])
        sweeps = [sweep for sweep in earlier if sweep["study"] != args.only] + sweeps
    payload = {"what": "growth of wall time and peak memory with samples and depth, whole processes",
               "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "command": "python benchmarks/bench_growth.py" + (f" --only {args.only}" if args.only else ""),
               "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": sys.version.split()[0],
                           "torch": torch.__version__},
               "seed": 0, "dtype": "float64", "device": "cpu", "sweeps": sweeps}
    partial = args.json.with_name(args.json.name + ".part")
    partial.write_text(json.dumps(payload, indent=1))
    os.replace(partial, args.json)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
