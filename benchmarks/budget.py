"""What the budgeted timings share (``bench_solvers``, ``bench_figures``, ``bench_multilevel``): runs repeated and
timed end to end, the median checked against the budget, and one JSON file with the machine and versions."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402

__all__ = ["BUDGET_S", "parser", "start", "timed", "finish"]

#: the budget of a default run on 2 cores
BUDGET_S = 60.0

R = TypeVar("R")


def parser(doc: str, flag: str, choices: list[str], what: str, json_name: str) -> argparse.ArgumentParser:
    """The command line: ``flag`` chooses among ``choices`` (all by default), ``--repeats``, ``--json``."""
    out = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    out.add_argument(flag, nargs="+", choices=choices, default=choices, help=f"the {what} to time")
    out.add_argument("--repeats", type=int, default=1, help="runs of each; the median is reported (≥ 1)")
    out.add_argument("--json", default=str(Path(__file__).parent / "results" / json_name),
                     help="where the timings are written")
    return out


def start(args: argparse.Namespace, command_line: argparse.ArgumentParser) -> Any:
    """Checks ``--repeats``, sets one torch thread (as the CLI) and returns the start time."""
    if args.repeats < 1:
        command_line.error(f"--repeats {args.repeats} is out of range (allowed: ≥ 1)")
    torch.set_num_threads(1)
    return utc_now()


def timed(run: Callable[[], R], repeats: int) -> tuple[list[float], R]:
    """``run()`` ``repeats`` times, each timed end to end; (the seconds, the last result)."""
    times, result = [], None
    for _ in range(repeats):
        clock = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - clock)
    return times, result  # type: ignore[return-value]


def finish(benchmark: str, rows: dict[str, dict[str, Any]], json_path: str, started: Any,
           budget: float = BUDGET_S) -> int:
    """Prints whether every row's ``median_s`` is within ``budget`` and writes the JSON (``benchmark``, ``budget_s``,
    ``within_budget``, ``runs``, ``run``)."""
    over = [label for label, row in rows.items() if not row["median_s"] <= budget]
    within = not over
    print(f"every run within the {budget:g} s budget: {'yes' if within else 'NO: ' + ', '.join(over)}")
    info = RunInfo.capture(seed=0, dtype="float64", device="cpu", started=started,
                           wall_time_s=sum(sum(r["seconds"]) for r in rows.values()), command=" ".join(sys.argv))
    write_json(json_path, {"benchmark": benchmark, "budget_s": budget, "within_budget": within, "runs": rows,
                           "run": info.to_dict()})
    print(f"wrote {json_path}")
    return 0
