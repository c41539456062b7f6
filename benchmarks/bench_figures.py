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

import functools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import budget  # noqa: E402
from validation.figures import study as figures  # noqa: E402

BUDGET_S = budget.BUDGET_S


def main(argv: list[str] | None = None) -> int:
    command_line = budget.parser(__doc__, "--figures", list(figures.FIGURES), "figures", "bench_figures.json")
    args = command_line.parse_args(argv)
    started = budget.start(args, command_line)
    rows = {}
    for name in args.figures:
        times, result = budget.timed(functools.partial(figures.run, name, progress=False), args.repeats)
        verdict = result.verdict
        checks = [{"check": c["check"], "passed": c["passed"], "detail": c["detail"]} for c in result.checks]
        median = statistics.median(times)
        rows[name] = {"seconds": times, "median_s": median, "within_budget": median <= BUDGET_S,
                      "verdict": verdict, "checks": checks}
        print(f"{name:18s} median {median:6.1f} s over {args.repeats} run(s); verdict {verdict}; "
              f"within {BUDGET_S:g} s: {'yes' if median <= BUDGET_S else 'NO'}")
    return budget.finish("bench_figures", rows, args.json, started)


if __name__ == "__main__":
    raise SystemExit(main())
