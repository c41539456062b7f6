"""Timing: each training experiment's preset (``python -m validation.training --experiment NAME``), budget
10 minutes each on 2 cores.

    python benchmarks/bench_training.py                          # every experiment, one after the other
    python benchmarks/bench_training.py --experiments pf-sgd     # one
    python benchmarks/bench_training.py --parallel 2             # two at a time (one torch thread each)
    python benchmarks/bench_training.py --outputs docs/figures   # also each result's JSON and figure
    python benchmarks/bench_training.py --experiments marion-fig9 depth-transfer --dataset fashion-mnist \
        --data-dir /usr/share/datasets/fashion-mnist --train-size 1437 \
        --json benchmarks/results/bench_fashion_mnist.json      # the presets on real images (Debian's files)

Each run is :func:`validation.training.run` at the experiment's preset (one torch thread and the allocator's
settings of the command line, float32), timed end to end: loading the data, training every configuration, the fits and bootstraps. No
checkpoint is read (a fresh folder per run). With ``--parallel 2`` two experiments share the two cores, as
two users would; their times are then upper bounds of a run alone. Results go to
``benchmarks/results/bench_training.json`` with the machine, versions, each run's verdict and its budget check;
timing some experiments updates their rows and keeps the others' (each row says when it was measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation import training  # noqa: E402
from validation.core import runtime  # noqa: E402
from validation.core.checks import combine  # noqa: E402
from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402

BUDGET_S = 600.0


def _time(name: str, outputs: str | None = None, overrides: dict | None = None) -> dict:
    torch.set_num_threads(1)
    runtime.reuse_freed_memory()  # as the command line does: without it sander2022-linear took 183 s, not 126 s
    overrides = overrides or {}
    with tempfile.TemporaryDirectory() as folder:
        clock = time.perf_counter()
        result = training.run(name, checkpoint_dir=folder, **overrides)
        seconds = time.perf_counter() - clock
    if outputs is not None:
        stem = f"training_{name}" + (f"_{overrides['dataset']}" if "dataset" in overrides else "")
        result.save(Path(outputs) / f"{stem}.json")
        result.save_plot(Path(outputs) / f"{stem}.png")
    return {"seconds": seconds, "within_budget": seconds <= BUDGET_S, "verdict": result.verdict,
            "measured_utc": utc_now().isoformat(timespec="seconds"),
            "configurations": len(result.records), "settings": overrides,
            "checks": [{"check": c["check"], "verdict": combine([c])} for c in result.numbers["checks"]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = sorted(training.EXPERIMENTS)
    parser.add_argument("--experiments", nargs="+", choices=names, default=names, help="the presets to time")
    parser.add_argument("--parallel", type=int, default=1, choices=(1, 2), help="presets run at once (1 or 2)")
    parser.add_argument("--outputs", default=None, metavar="DIR",
                        help="also write each run's result JSON and figure to this folder (e.g. docs/figures)")
    parser.add_argument("--dataset", default=None, help="run the presets on this data set instead (e.g. fashion-mnist)")
    parser.add_argument("--data-dir", default=None, help="the folder of --dataset's files")
    parser.add_argument("--train-size", type=int, default=None, help="use only this many training examples")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_training.json"),
                        help="where the timings are written")
    args = parser.parse_args(argv)
    started = utc_now()
    with ProcessPoolExecutor(args.parallel) as pool:
        overrides = {key: value for key, value in (("dataset", args.dataset), ("data_dir", args.data_dir),
                                                      ("train_size", args.train_size)) if value is not None}
        count = len(args.experiments)
        rows = dict(zip(args.experiments, pool.map(_time, args.experiments, [args.outputs] * count,
                                                   [overrides] * count)))
    for name, row in rows.items():
        print(f"{name:14s} {row['seconds']:7.1f} s  (budget {BUDGET_S:g} s: {'ok' if row['within_budget'] else 'OVER'})"
              f"  verdict {row['verdict']}")
    info = RunInfo.capture(seed=0, dtype="float32", device="cpu", started=started,
                           wall_time_s=sum(r["seconds"] for r in rows.values()), command=" ".join(sys.argv))
    path = Path(args.json)
    earlier = json.loads(path.read_text())["runs"] if path.is_file() else {}
    for name, row in rows.items():  # a run of some experiments keeps the others' earlier rows (each dated)
        earlier[name] = {**row, "parallel": args.parallel}
    write_json(path, {"benchmark": "bench_training", "budget_s": BUDGET_S,
                      "within_budget": all(r["within_budget"] for r in earlier.values()), "runs": earlier,
                      "run": info.to_dict()})
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
