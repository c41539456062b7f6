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

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from limits.problems import PROBLEMS  # noqa: E402
from validation import solvers  # noqa: E402
from validation.results import RunInfo, utc_now, write_json  # noqa: E402

#: the runs timed: (label, model, settings beyond the defaults)
RUNS = {
    "res1": ("res1", {}),
    "res2-ode": ("res2-ode", {}),
    "res1-width1": ("res1", {"width": 1, "samples": 4000}),
    **{f"problem:{name}": (None, {"problem": name}) for name in PROBLEMS},
}
BUDGET_S = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", choices=list(RUNS), default=list(RUNS), help="the runs to time")
    parser.add_argument("--repeats", type=int, default=1, help="runs per model; the median is reported (≥ 1)")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_solvers.json"),
                        help="where the timings are written")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats} is out of range (allowed: ≥ 1)")
    torch.set_num_threads(1)
    started = utc_now()
    rows = {}
    for label in args.models:
        model, settings = RUNS[label]
        times, verdict = [], None
        for _ in range(args.repeats):
            clock = time.perf_counter()
            result = solvers.run(model, progress=False, **settings)
            times.append(time.perf_counter() - clock)
            verdict = result.verdict
        rows[label] = {"model": model, "settings": settings, "seconds": times, "median_s": statistics.median(times),
                       "verdict": verdict,
                       "schemes": {run.name: {"rate": run.fit.rate if run.fit is not None and run.fit.finite else None,
                                              "verdict": run.verdict(result.settings.tolerance)}
                                   for run in result.runs}}
        print(f"{label:32s} median {statistics.median(times):6.1f} s over {args.repeats} run(s); verdict {verdict}")
    over = [label for label, row in rows.items() if not row["median_s"] <= BUDGET_S]
    within = not over
    print(f"every run within the {BUDGET_S:g} s budget: {'yes' if within else 'NO: ' + ', '.join(over)}")
    info = RunInfo.capture(seed=0, dtype="float64", device="cpu", started=started,
                           wall_time_s=sum(sum(r["seconds"]) for r in rows.values()), command=" ".join(sys.argv))
    write_json(args.json, {"benchmark": "bench_solvers", "budget_s": BUDGET_S, "within_budget": within,
                           "runs": rows, "run": info.to_dict()})
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
