"""The main command as a user feels it — a whole process, imports and exit included — side by side with the
straightforward torchsde approach, on this machine's cores.

Two commands, each a fresh process, run alternately ``--pairs`` times (a busy moment of the machine then spreads
over both), timed by the launcher:

* **package**: ``python -m validation.convergence --model res1 --quiet`` (its defaults: both cores when the machine
  has them, the path drawn in float32, blocks of 250 samples);
* **torchsde**: ``python benchmarks/straightforward_res1.py`` — one shared ``torchsde.BrownianInterval``
  (``halfway_tree=True``: the constructor's defaults take 8× longer), an ``sdeint`` Euler reference, one loop per
  depth, torch on 2 threads, a line fit with a bootstrap interval (its docstring).

* **jax** (with ``--jax-python PYTHON``, a Python that has JAX; JAX is not a dependency of the package):
  ``benchmarks/straightforward_res1_jax.py`` — the same study hand-written in JAX and tuned (``lax.scan``,
  ``unsafe_rbg``, unrolled, the samples on two CPU devices; its docstring).

Wall time (the launcher's clock around the process) and CPU time (user + system, of the child, from
``resource.getrusage``) are recorded for every run; the medians and the ratio of the medians are printed and
written to the JSON. The package's own result (rate, interval, verdict) is read from its ``--json`` to show it
computed the study, not a shortcut.

Usage: ``python benchmarks/bench_whole_process.py [--pairs 3] [--jax-python PATH] [--json
benchmarks/results/bench_whole_process.json]``.
Extra words after ``--`` go to the package's command (e.g. ``-- --workers 1`` for one process).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, its stdout) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1, 4):
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def _jax_version(python: str) -> str:
    """The JAX version of the Python that ran the JAX peer."""
    return subprocess.run([python, "-c", "import jax; print(jax.__version__)"], capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3, help="alternating runs of each command (default 3)")
    parser.add_argument("--json", type=Path, default=None, help="write every run and the medians to this file")
    parser.add_argument("--jax-python", default=None, metavar="PATH",
                        help="a Python with JAX: also time the JAX peer (benchmarks/straightforward_res1_jax.py)")
    parser.add_argument("extra", nargs="*", help="after --: words added to the package's command")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        result_file = Path(folder) / "res1.json"
        commands = {
            "package": [sys.executable, "-m", "validation.convergence", "--model", "res1", "--quiet", "--json",
                        str(result_file), *args.extra],
            "torchsde": [sys.executable, str(ROOT / "benchmarks" / "straightforward_res1.py")],
        }
        if args.jax_python is not None:
            commands["jax"] = [args.jax_python, str(ROOT / "benchmarks" / "straightforward_res1_jax.py")]
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        printed = {}
        for index in range(args.pairs):
            for name, command in commands.items():
                wall, cpu, out = timed(command)
                runs[name].append({"wall_s": wall, "cpu_s": cpu})
                printed[name] = out.strip().splitlines()[-2 if name == "package" else -1]
                print(f"pair {index + 1}/{args.pairs}  {name:9s} wall {wall:6.2f} s  CPU {cpu:6.2f} s", flush=True)
        study = json.loads(result_file.read_text())
    medians = {name: {key: statistics.median(run[key] for run in values) for key in ("wall_s", "cpu_s")}
               for name, values in runs.items()}
    ratios = {f"{name}_over_package": {key: medians[name][key] / medians["package"][key] for key in ("wall_s", "cpu_s")}
              for name in commands if name != "package"}
    print(f"\nmedians of {args.pairs} (cores: {len(os.sched_getaffinity(0))})")
    print(f"{'command':10s} {'wall':>8s} {'CPU':>8s}")
    for name, value in medians.items():
        print(f"{name:10s} {value['wall_s']:7.2f}s {value['cpu_s']:7.2f}s")
    for name, value in ratios.items():
        print(f"{name.split('_')[0]} / package: {value['wall_s']:.2f}x wall, {value['cpu_s']:.2f}x CPU")
    result = study["result"]
    fit = result["fits"][result["verdict_metric"]]
    summary = {"rate": fit["rate"], "ci": fit["ci"], "verdict": result["verdict"]}
    print(f"package's result: rate {fit['rate']:.3f} [{fit['ci'][0]:.3f}, {fit['ci'][1]:.3f}], {result['verdict']}; "
          f"torchsde approach: {printed['torchsde']}" + (f"; JAX: {printed['jax']}" if "jax" in printed else ""))
    if args.json is not None:
        import torch

        payload = {
            "benchmark": "bench_whole_process", "commands": {name: " ".join(Path(word).name if word == sys.executable
                                                                              else word for word in command)
                                                             for name, command in commands.items()},
            "runs": runs, "median": medians, **ratios, "pairs": args.pairs,
            "package_result": summary, "package_settings_workers": study["settings"].get("workers"),
            "torchsde_printed": printed["torchsde"], **({"jax_printed": printed["jax"], "jax": _jax_version(
                args.jax_python)} if "jax" in printed else {}),
            "python": platform.python_version(), "torch": torch.__version__,
            "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores",
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
