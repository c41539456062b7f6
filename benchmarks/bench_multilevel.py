"""Timing: the multilevel study (``python -m validation.multilevel``), budget 60 s on 2 cores.

    python benchmarks/bench_multilevel.py                 # the default run and the ε sweep of the results page
    python benchmarks/bench_multilevel.py --runs default  # one run
    python benchmarks/bench_multilevel.py --repeats 3     # median of three runs each

Each run is :func:`validation.multilevel.run` (one torch thread, as the CLI), timed end to end: the complexity
test of both solvers (10⁵ level samples per level, depths 1–128), the rate fits and their bootstraps, and the MLMC
estimator at every accuracy. Beside the wall time it records, per solver, β and α with their intervals, and per
accuracy the MLMC cost, plain Monte Carlo's cost and their ratio — the numbers of docs/results/multilevel.md.
Results go to ``benchmarks/results/bench_multilevel.json`` with the machine and versions.
"""

from __future__ import annotations

import functools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import budget  # noqa: E402
from validation.multilevel import study as multilevel  # noqa: E402

#: the runs timed: label → settings beyond the defaults
RUNS = {
    "default": {},
    "accuracy-sweep": {"accuracies": (1e-3, 5e-4, 2.5e-4)},
}


def main(argv: list[str] | None = None) -> int:
    command_line = budget.parser(__doc__, "--runs", list(RUNS), "runs", "bench_multilevel.json")
    args = command_line.parse_args(argv)
    started = budget.start(args, command_line)
    rows = {}
    for label in args.runs:
        settings = RUNS[label]
        times, result = budget.timed(functools.partial(multilevel.run, "res1", progress=False, **settings),
                                     args.repeats)
        rows[label] = {
            "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()}, "seconds": times,
            "median_s": statistics.median(times), "verdict": result.verdict,
            "solvers": {solver.solver: {
                "beta": [solver.rates["beta"].rate, *solver.rates["beta"].interval],
                "alpha": [solver.rates["alpha"].rate, *solver.rates["alpha"].interval],
                "estimates": [{"accuracy": e.accuracy, "levels": e.levels, "mlmc_cost": e.cost, "mc_cost": e.mc_cost,
                               "ratio": e.cost_ratio, "seconds": e.seconds} for e in solver.estimates]}
                for solver in result.solvers},
        }
        print(f"{label:16s} median {statistics.median(times):6.1f} s over {args.repeats} run(s); verdict {result.verdict}")
    return budget.finish("bench_multilevel", rows, args.json, started)


if __name__ == "__main__":
    raise SystemExit(main())
