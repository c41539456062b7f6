"""Output digests: proof that a refactor leaves every number identical (issue 43).

A refactor (moving code, merging helpers, renaming) must not change a single number any study reports. This script
runs a fixed list of small study runs through the Python APIs, in one process, normalises each result's JSON and
records or compares one SHA-256 digest per case. Run it with ``--write`` before the refactor and with ``--check``
after it: every case must say ``same``.

    python benchmarks/compare_outputs.py --list                                   # the cases
    python benchmarks/compare_outputs.py --write benchmarks/results/output_digests.json
    python benchmarks/compare_outputs.py --check benchmarks/results/output_digests.json
    python benchmarks/compare_outputs.py --check benchmarks/results/output_digests.json --only figures/ --only res1
    python benchmarks/compare_outputs.py --check benchmarks/results/output_digests.json --dropped  # + keys dropped
    python benchmarks/compare_outputs.py --check D.json --dump /tmp/after   # and --write … --dump /tmp/before, then
                                                                            # diff -r /tmp/before /tmp/after

``--check`` prints one line per case: ``same``, ``DIFFERENT`` (the digest changed), ``new`` (a case the digest file
does not have) or ``missing`` (a case of the file that was not run; only without ``--only``); a case that raises
is reported as ``ERROR: <ExceptionName>: message``. It exits 1 if any case is DIFFERENT, missing or an error, 0
otherwise (``new`` alone is not a difference). ``--write`` records, besides each digest, the package's git commit
and the case's elapsed seconds; neither is part of the digest (the commit is suffixed ``-dirty`` when tracked
files had uncommitted changes). ``--only SUBSTRING`` (repeatable, or a comma list) keeps the cases whose name
contains one of the substrings; ``--write`` with ``--only`` keeps the file's other cases.
``--dump DIR`` writes each case's normalised JSON to ``DIR/<case>.json`` (``/`` in the name as ``__``) to find
*which* number moved.

The cases (``--list``; about 1 min in all on one core of the 2-core development machine):

* ``convergence/<pair>`` for every pair of ``limits.registry.pair_names()`` (40 samples; SDE pairs at depths
  4…32 against a 256-step reference, ODE pairs at depths 8…64), and ``convergence/res1-defaults``, res1 at every
  default (the command line's run, ~8 s);
* ``figures/<figure>`` for every figure of ``validation.figures.SMOKE``, at its smoke settings;
* ``training/<experiment>`` for every experiment of ``validation.training.EXPERIMENTS``, at its smoke settings,
  with no checkpoints;
* ``regimes/<preset>`` for every preset of ``validation.regimes.PRESETS``, at the small sizes of the tests
  (``prop3``, which no test runs, at its own depths 1024…4096 and d = 64 with 10 networks: ``REGIMES``);
* ``gradients/res1``, ``solvers/res1``, ``solvers/res1-ode``, ``solvers/problem-levy-area``,
  ``multilevel/res1``, ``weak/tanh``, ``ablation/small`` and ``phase/small``, at the small sizes of the tests.

Every run is at ``threads=1`` and ``progress=False``, on the CPU, so the numbers do not depend on the machine's
cores. The cases run in the listed order; each study seeds its own draws, so a case's numbers do not depend on
the cases run before it (``--only`` gives the same digests).

Normalisation (what the digest covers): ``result.to_dict()`` (NaN and infinities are already ``null`` there),
less

* the whole ``run`` section: the start time, the wall time, the package and library versions, the git commit and
  its dirtiness, the platform, the threads and the command line — where and when it ran, not what it computed;
* every key, at any depth, that measures wall-clock time and so differs from run to run: a name containing
  ``seconds``, ``wall_time``, ``time_s``, ``timing``, ``elapsed``, ``per_second`` or ``_time`` (``TIMING_PARTS``),
  except the names of ``KEEP_KEYS``, which match that rule but are fixed numbers (``backward_times``, the gradient
  study's times s of p(s); ``timing_repeats``, the solvers setting; ``timing``, the solvers' timing protocol:
  warm-up and timed run counts). On the cases above this drops exactly these (``--dropped`` prints them):

  - ``solvers/*``: ``result/schemes/[]/seconds`` and ``result/adaptive/[]/seconds`` (each scheme's median wall
    time per depth);
  - ``gradients/res1``: ``result/methods/<method>/seconds`` (each adjoint method's wall time);
  - ``multilevel/res1``: ``result/solvers/[]/estimates/[]/seconds`` (each MLMC estimate's wall time),
    ``result/solvers/[]/levels/[]/seconds_per_sample``, and ``result/solvers/[]/gamma_time`` with
    ``gamma_time_interval`` (the cost rate fitted to those wall times; ``gamma``, from the evaluation counts, is
    kept);
  - ``weak/tanh``: ``result/models/<model>/simulation_seconds`` and ``result/models/<model>/weak/seconds``;
  - ``ablation/small``: ``result/corrected/seconds`` and ``result/naive/seconds``;
  - ``phase/small``: ``result/wall_time_s`` and ``result/column_seconds``.

  A timing key added later is dropped by the same rule, and ``--dropped`` shows it.

Every other number is kept, bit for bit: the digest is of ``json.dumps(obj, sort_keys=True, allow_nan=True)``,
whose floats are Python's shortest round-trip ``repr``, so a change in the last bit of any float changes it.
Checked: ``--write`` then ``--check`` on the same checkout gives ``same`` for every case (no case had to be left
out for nondeterminism).

**One machine's digests.** The same code gives other last bits on another CPU (torch picks its kernels by the
instruction set: the file's digests recorded on one machine were ``different`` for all 55 cases on a machine with
AVX-512 FP16, at the same commit). On a new machine, first ``--write`` at the commit before the change (``git
stash``), then ``--check`` the change against that file; the committed file names its machine's ``platform``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: a key whose name contains one of these (lower-cased) measures wall-clock time and is dropped
TIMING_PARTS = ("seconds", "wall_time", "time_s", "timing", "elapsed", "per_second", "_time")
#: names that match TIMING_PARTS but are no wall-clock time (fixed numbers, the same in every run): kept
KEEP_KEYS = frozenset({
    "backward_times",   # gradients setting: the times s in (0, 1) of the backward states p(s)
    "timing_repeats",   # solvers setting: how many timed runs per scheme
    "timing",           # solvers result: {warm_up_runs, timed_runs, timed_runs_within_s, statistic}, the protocol
})
#: the format of the digest file
FORMAT = 1

# ------------------------------------------------------------------------------------------------ cases
#: small sizes, from the tests (tests/test_regimes.py, test_results_schema.py, test_gpu.py, …)
SDE_CONVERGENCE = dict(samples=40, depths=(4, 8, 16, 32), reference_steps=256)
ODE_CONVERGENCE = dict(samples=40, depths=(8, 16, 32, 64))
REGIMES = {
    "fig1": dict(depths=(16, 64, 256), samples=30, width=16),                       # test_regimes.py
    "fig4": dict(depths=(16, 64, 256), samples=30, width=16),                       # test_regimes.py
    "fig2": dict(depths=(64,), samples=40, width=16),                               # test_results_schema.py
    "prop13": dict(depths=(16, 64, 256), samples=12, width=12, betas=(0.5, 1.0)),   # test_regimes.py
    # prop3's own depths (L ≥ 1024, where its lower bound applies) at a small width and few networks
    "prop3": dict(depths=(1024, 2048, 4096), samples=10, width=64),
    "assumptions": dict(width=12, samples=2000),                                    # test_regimes.py
    "chizat": dict(samples=40, sweep_samples=10, layers=10, depths=(10, 30, 100), width=8, hidden=4),
}


def _cases() -> dict[str, Callable[[], Any]]:
    """Case name → a function that runs it and returns the study's result."""
    from limits import get_pair
    from limits.registry import pair_names
    from validation import ablation, convergence, solvers, training, weak
    from validation.figures import study as figures
    from validation.gradients import study as gradients
    from validation.multilevel import study as multilevel
    from validation.phase import study as phase
    from validation.regimes import study as regimes

    common = dict(progress=False, threads=1)
    cases: dict[str, Callable[[], Any]] = {}

    def add(name: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        assert name not in cases, name
        cases[name] = lambda: function(*args, **common, **kwargs)

    for pair in pair_names():
        add(f"convergence/{pair}", convergence.run, pair,
            **(SDE_CONVERGENCE if get_pair(pair).kind == "sde" else ODE_CONVERGENCE))
    add("convergence/res1-defaults", convergence.run, "res1")
    for name, settings in figures.SMOKE.items():
        add(f"figures/{name}", figures.run, name, **settings)
    for name, experiment in training.EXPERIMENTS.items():
        add(f"training/{name}", training.run, name, checkpoint_dir=None, **experiment.smoke)
    for preset in regimes.PRESETS:
        add(f"regimes/{preset}", regimes.run, preset, **REGIMES[preset])
    # tests/test_gradients.py
    add("gradients/res1", gradients.run, "res1", samples=12, width=3, depths=(4, 8, 16), reference_steps=128,
        resamples=200)
    # tests/test_gpu.py (an SDE pair), tests/test_solvers.py (an ODE pair), tests/test_problems.py (a problem)
    add("solvers/res1", solvers.run, "res1", samples=40, depths=(4, 8, 16, 32), reference_steps=512, bootstrap=200)
    add("solvers/res1-ode", solvers.run, "res1-ode", samples=20, width=4, depths=(8, 16, 32, 64),
        schemes=("euler", "midpoint", "dopri5"), tolerances=(1e-4, 1e-6), bootstrap=200, fit_from=8)
    add("solvers/problem-levy-area", solvers.run, problem="levy-area", samples=200, depths=(4, 8, 16, 32),
        resamples=300)
    # tests/test_multilevel.py
    add("multilevel/res1", multilevel.run, "res1", samples=500, depths=(1, 2, 4, 8), schemes=("network",),
        accuracies=(5e-2,), resamples=100)
    # tests/test_gpu.py
    add("weak/tanh", weak.run, models=("tanh",), draws=100, width=8, depth=8, sde_steps=8, weak_draws=100,
        weak_depths=(2, 4, 8), weak_reference=32, weak_fit_from=2, permutations=600, energy_points=50)
    add("ablation/small", ablation.run, samples=100, width=3, depths=(4, 8, 16), reference_steps=256, bootstrap=200)
    add("phase/small", phase.run, hursts=(0.3, 0.7), betas=(0.2, 0.6, 1.0), depth=32, networks=2, inputs=2,
        workers=1)
    return cases


# ------------------------------------------------------------------------------------------------ normalise
def is_timing(key: str) -> bool:
    """Whether a key's name measures wall-clock time (see the module docstring)."""
    return key not in KEEP_KEYS and any(part in key.lower() for part in TIMING_PARTS)


def normalise(data: dict[str, Any], dropped: set[str] | None = None) -> dict[str, Any]:
    """A result's ``to_dict()`` less its ``run`` section and every timing key at any depth (the dropped keys'
    paths, e.g. ``result/runs/[]/seconds``, go to ``dropped``)."""

    def strip(value: Any, path: str) -> Any:
        if isinstance(value, dict):
            kept = {}
            for key, item in value.items():
                if is_timing(str(key)):
                    if dropped is not None:
                        dropped.add(f"{path}{key}")
                    continue
                kept[key] = strip(item, f"{path}{key}/")
            return kept
        if isinstance(value, (list, tuple)):
            return [strip(item, f"{path}[]/") for item in value]
        return value

    return strip({key: value for key, value in data.items() if key != "run"}, "")


def serialise(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, allow_nan=True)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ------------------------------------------------------------------------------------------------ run
def _selected(names: list[str], only: list[str]) -> list[str]:
    parts = [part.strip() for item in only for part in item.split(",") if part.strip()]
    return [name for name in names if not parts or any(part in name for part in parts)]


def _commit(data: dict[str, Any]) -> str | None:
    git = (data.get("run") or {}).get("git")
    if not git:
        from validation.core.results import git_commit

        git = git_commit()
    if not git:
        return None
    return git["commit"] + ("-dirty" if git.get("dirty") else "")


def run_case(name: str, function: Callable[[], Any], dump: Path | None,
             dropped: set[str]) -> tuple[dict[str, Any], str | None]:
    """Run one case: its record (digest, commit, elapsed seconds) and its error line, if it raised."""
    started = time.perf_counter()
    try:
        data = function().to_dict()
    except Exception as error:  # noqa: BLE001 — reported, and counted as a difference
        elapsed = time.perf_counter() - started
        message = " ".join(str(error).split())
        if len(message) > 300:
            message = message[:297] + "..."
        traceback.print_exc(file=sys.stderr)
        return {"error": f"{type(error).__name__}: {message}", "elapsed_s": round(elapsed, 2)}, \
            f"ERROR: {type(error).__name__}: {message}"
    elapsed = time.perf_counter() - started
    paths: set[str] = set()
    text = serialise(normalise(data, paths))
    dropped.update(f"{name}: {path}" for path in paths)
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / (name.replace("/", "__") + ".json")).write_text(
            json.dumps(json.loads(text), sort_keys=True, indent=1) + "\n")
    return {"sha256": digest(text), "commit": _commit(data), "elapsed_s": round(elapsed, 2)}, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", metavar="JSON", type=Path, help="run the cases and record their digests here")
    action.add_argument("--check", metavar="JSON", type=Path, help="run the cases and compare with these digests")
    action.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument("--only", action="append", default=[], metavar="SUBSTRING",
                        help="only the cases whose name contains this (repeatable, or a comma list)")
    parser.add_argument("--dump", metavar="DIR", type=Path, help="write each case's normalised JSON to DIR/<case>.json")
    parser.add_argument("--dropped", action="store_true", help="print the timing keys dropped, at the end (stderr)")
    args = parser.parse_args(argv)

    cases = _cases()
    names = _selected(list(cases), args.only)
    if args.list:
        print("\n".join(names))
        return 0
    if not names:
        parser.error(f"no case matches --only {args.only}")

    import torch

    torch.set_num_threads(1)
    recorded: dict[str, Any] = {}
    if args.check is not None:
        recorded = json.loads(args.check.read_text())["cases"]
    records: dict[str, Any] = {}
    dropped: set[str] = set()
    different = False
    clock = time.perf_counter()
    for index, name in enumerate(names, 1):
        print(f"[{index}/{len(names)}] {name} ...", file=sys.stderr, flush=True)
        record, error = run_case(name, cases[name], args.dump, dropped)
        records[name] = record
        print(f"[{index}/{len(names)}] {name}: {record['elapsed_s']:.1f} s"
              f"{' (' + error + ')' if error else ''}", file=sys.stderr, flush=True)
        if args.check is not None:
            if error is not None:
                status, different = error, True
            elif name not in recorded:
                status = "new"
            elif recorded[name].get("sha256") == record["sha256"]:
                status = "same"
            else:
                status, different = "DIFFERENT", True
            print(f"{name:40s} {status}", flush=True)
        elif error is not None:
            print(f"{name:40s} {error}", flush=True)
            different = True
    total = time.perf_counter() - clock
    if args.check is not None and not args.only:
        for name in recorded:
            if name not in records:
                print(f"{name:40s} missing", flush=True)
                different = True
    if args.write is not None:
        previous = {}
        if args.only and args.write.exists():
            previous = json.loads(args.write.read_text()).get("cases", {})
        payload = {
            "format": FORMAT,
            "about": "SHA-256 of each case's normalised result JSON; written and checked by "
                     "benchmarks/compare_outputs.py (commit and elapsed_s are not part of the digest)",
            "written_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "platform": platform.platform(),
            "total_s": round(total, 1),
            "cases": {**previous, **records},
        }
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {len(records)} digest(s) to {args.write}", flush=True)
    if args.dropped:
        print("dropped timing keys:" + "".join(f"\n  {path}" for path in sorted(dropped)) if dropped else
              "dropped timing keys: none", file=sys.stderr)
    print(f"total {total:.1f} s for {len(names)} case(s)", file=sys.stderr, flush=True)
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
