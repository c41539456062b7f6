"""Timing: the default solver study (``python -m validation.solvers --model M``), budget 60 s on 2 cores.

    python benchmarks/bench_solvers.py                  # res1, res2-ode, res1 --width 1, and every --problem
    python benchmarks/bench_solvers.py --models res1    # one model
    python benchmarks/bench_solvers.py --repeats 3      # median of three runs each

Each run is :func:`validation.solvers.run` at the model's defaults (one torch thread, as the CLI), timed
end to end: drawing the path, the network and every scheme at every depth, the references, the rate fits
and their bootstraps. The budget (issue: "the default validation.solvers run takes at most 60 s on 2
cores"; issue 21: every --problem's default run too) is checked for every run. Results go to
``benchmarks/results/bench_solvers.json`` with the machine, versions and each run's verdict.
"""

from __future__ import annotations

import functools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import budget  # noqa: E402
from limits.problems import PROBLEMS  # noqa: E402
from validation import solvers  # noqa: E402

#: the runs timed: (label, model, settings beyond the defaults)
RUNS = {
    "res1": ("res1", {}),
    "res2-ode": ("res2-ode", {}),
    "res1-width1": ("res1", {"width": 1, "samples": 4000}),
    **{f"problem:{name}": (None, {"problem": name}) for name in PROBLEMS},
}


def main(argv: list[str] | None = None) -> int:
    command_line = budget.parser(__doc__, "--models", list(RUNS), "runs", "bench_solvers.json")
    args = command_line.parse_args(argv)
    started = budget.start(args, command_line)
    rows = {}
    for label in args.models:
        model, settings = RUNS[label]
        times, result = budget.timed(functools.partial(solvers.run, model, progress=False, **settings), args.repeats)
        verdict = result.verdict
        rows[label] = {"model": model, "settings": settings, "seconds": times, "median_s": statistics.median(times),
                       "verdict": verdict,
                       "schemes": {run.name: {"rate": run.fit.rate if run.fit is not None and run.fit.finite else None,
                                              "verdict": run.verdict(result.settings.tolerance)}
                                   for run in result.runs}}
        print(f"{label:32s} median {statistics.median(times):6.1f} s over {args.repeats} run(s); verdict {verdict}")
    return budget.finish("bench_solvers", rows, args.json, started)


if __name__ == "__main__":
    raise SystemExit(main())
