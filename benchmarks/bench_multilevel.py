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

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation import multilevel  # noqa: E402
from validation.results import RunInfo, utc_now, write_json  # noqa: E402

#: the runs timed: label → settings beyond the defaults
RUNS = {
    "default": {},
    "accuracy-sweep": {"accuracies": (1e-3, 5e-4, 2.5e-4)},
}
BUDGET_S = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS), help="the runs to time")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each; the median is reported (≥ 1)")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_multilevel.json"),
                        help="where the timings are written")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats} is out of range (allowed: ≥ 1)")
    torch.set_num_threads(1)
    started = utc_now()
    rows = {}
    for label in args.runs:
        settings = RUNS[label]
        times = []
        for _ in range(args.repeats):
            clock = time.perf_counter()
            result = multilevel.run("res1", progress=False, **settings)
            times.append(time.perf_counter() - clock)
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
    over = [label for label, row in rows.items() if not row["median_s"] <= BUDGET_S]
    within = not over
    print(f"every run within the {BUDGET_S:g} s budget: {'yes' if within else 'NO: ' + ', '.join(over)}")
    info = RunInfo.capture(seed=0, dtype="float64", device="cpu", started=started,
                           wall_time_s=sum(sum(r["seconds"]) for r in rows.values()), command=" ".join(sys.argv))
    write_json(args.json, {"benchmark": "bench_multilevel", "budget_s": BUDGET_S, "within_budget": within,
                           "runs": rows, "run": info.to_dict()})
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
