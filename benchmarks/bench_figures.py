"""Timing: each figure's default run (``python -m validation.figures --figure NAME``), budget 60 s on 2 cores.

    python benchmarks/bench_figures.py                          # all four figures
    python benchmarks/bench_figures.py --figures marion-fbm     # one figure
    python benchmarks/bench_figures.py --repeats 3              # median of three runs each

Each run is :func:`validation.figures.run` at the figure's defaults (one torch thread, float64, as the CLI),
timed end to end: the networks (or paths), the statistics and their bootstrap intervals; not the plot. The
budget ("the default run of each figure takes under 60 s on 2 cores") is checked for every figure. Results
go to ``benchmarks/results/bench_figures.json`` with the machine, versions and each run's verdict.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation import figures  # noqa: E402
from validation.results import RunInfo, utc_now, write_json  # noqa: E402

BUDGET_S = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--figures", nargs="+", choices=list(figures.FIGURES), default=list(figures.FIGURES),
                        help="the figures to time")
    parser.add_argument("--repeats", type=int, default=1, help="runs per figure; the median is reported (≥ 1)")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_figures.json"),
                        help="where the timings are written")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats} is out of range (allowed: ≥ 1)")
    torch.set_num_threads(1)
    started = utc_now()
    rows = {}
    for name in args.figures:
        times, verdict, checks = [], None, []
        for _ in range(args.repeats):
            clock = time.perf_counter()
            result = figures.run(name, progress=False)
            times.append(time.perf_counter() - clock)
            verdict = result.verdict
            checks = [{"check": c["check"], "passed": c["passed"], "detail": c["detail"]} for c in result.checks]
        median = statistics.median(times)
        rows[name] = {"seconds": times, "median_s": median, "within_budget": median <= BUDGET_S,
                      "verdict": verdict, "checks": checks}
        print(f"{name:18s} median {median:6.1f} s over {args.repeats} run(s); verdict {verdict}; "
              f"within {BUDGET_S:g} s: {'yes' if median <= BUDGET_S else 'NO'}")
    within = all(r["within_budget"] for r in rows.values())
    info = RunInfo.capture(seed=0, dtype="float64", device="cpu", started=started,
                           wall_time_s=sum(sum(r["seconds"]) for r in rows.values()), command=" ".join(sys.argv))
    write_json(args.json, {"benchmark": "bench_figures", "budget_s": BUDGET_S, "within_budget": within,
                           "runs": rows, "run": info.to_dict()})
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
