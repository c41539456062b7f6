"""Start-up of the main command: the seconds from launching ``python -m validation.convergence --model res1`` to
the moment its study starts computing, and what they are spent on.

Each measurement is a fresh process (the import cache of a warm machine is what a user has on a second run; the
first command of a session pays the disk too, which this does not measure). The launcher notes the wall clock
just before starting the process; the process prints the wall clock at the point measured:

* ``python``: the interpreter alone (``-c pass``);
* ``torch``: ``import torch``;
* ``import validation.convergence``: the module a user runs, with everything it imports;
* ``to the study``: the whole command line up to the study's ``run`` — imports, parsing, the settings' checks,
  the output plan and the memory estimate — the study's ``run`` replaced by a clock.

scipy (the bootstrap's) and matplotlib (the figures') are imported when first used — at the first rate fit and
with ``--plot`` — so none of these pay for them; the JSON records which heavy modules were loaded at the study's
start. Medians of ``--repeats`` alternating runs.

Usage: ``python benchmarks/bench_startup.py [--repeats 7] [--json benchmarks/results/bench_startup.json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBES = {
    "python": "import time; print(repr(time.time()))",
    "torch": "import torch, time; print(repr(time.time()))",
    "import validation.convergence": "import validation.convergence, time; print(repr(time.time()))",
    "to the study": (
        "import dataclasses, json, sys, time\n"
        "from validation import convergence\n"
        "from validation.core import cli\n"
        "def started(*args, **kwargs):\n"
        "    heavy = [m for m in ('scipy', 'scipy.stats', 'matplotlib', 'jsonschema', 'dask', 'distributed')\n"
        "             if m in sys.modules]\n"
        "    print(repr(time.time()))\n"
        "    print(json.dumps(heavy))\n"
        "    raise SystemExit(0)\n"
        "cli.execute(dataclasses.replace(convergence.COMMAND, run=started), ['--model', 'res1', '--quiet'])\n"
    ),
}


def measure(code: str) -> tuple[float, list[str]]:
    launched = time.time()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    lines = proc.stdout.strip().splitlines()
    heavy = json.loads(lines[1]) if len(lines) > 1 else []
    return float(lines[0]) - launched, heavy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="fresh processes per probe (default 7)")
    parser.add_argument("--json", type=Path, default=None, help="write the medians and every run to this file")
    args = parser.parse_args(argv)
    runs: dict[str, list[float]] = {name: [] for name in PROBES}
    heavy: list[str] = []
    for _ in range(args.repeats):  # alternating, so that a busy moment of the machine spreads over every probe
        for name, code in PROBES.items():
            seconds, loaded = measure(code)
            runs[name].append(seconds)
            heavy = loaded or heavy
    medians = {name: statistics.median(values) for name, values in runs.items()}
    for name, value in medians.items():
        print(f"{name:32s} {value:6.3f} s  (median of {args.repeats}; min {min(runs[name]):.3f} s)")
    print(f"heavy modules loaded when the study starts: {', '.join(heavy) or 'none'}")
    if args.json is not None:
        import platform

        import torch

        payload = {"benchmark": "bench_startup", "command": "python -m validation.convergence --model res1",
                   "median_seconds": medians, "runs": runs, "loaded_at_study_start": heavy,
                   "repeats": args.repeats, "python": platform.python_version(), "torch": torch.__version__,
                   "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                   "date": time.strftime("%Y-%m-%d", time.gmtime())}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
