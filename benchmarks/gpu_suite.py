"""The prepared GPU run: everything a lent GPU should measure, in one command, within its time budget.

    python benchmarks/gpu_suite.py                       # on a machine with CUDA: every part, ≤ --budget-s seconds
    python benchmarks/gpu_suite.py --dry-run             # on the CPU, every part at a tiny size (CI, tests)
    python benchmarks/gpu_suite.py --only res1_paths,fig2_1e5 --budget-s 300

GPU time is scarce (about 15 minutes a session, when a session has a GPU at all), so this script is what a session
runs first, in one call, and commits the JSON of. The parts run in this order, each only if the time left in the
budget covers its estimate (a part it cannot fit is recorded as skipped, with why):

* ``gpu_tests``: ``pytest tests/test_gpu.py`` (every study on CUDA reproduces itself and agrees with the CPU);
* ``res1_paths``: the main study (``convergence --model res1``, its default depths and reference) at 500, 10⁴ and
  10⁵ paths on the GPU, and at 10⁴ with its steps compiled (``--compile``: one CUDA graph per step): wall time, the
  rate, peak GPU memory; beside the 2-core CPU figure committed in ``benchmarks/results/bench_res1.json`` (500
  paths) — the target is ≥ 20× the CPU at 10⁵ paths (issue 47);
* ``fig2_1e5``: Marion et al.'s Fig. 2 at 10⁵ draws (``regimes --preset fig2``, float32), its five quantile
  checks;
* ``regimes_paper``: the regimes presets fig1 and fig4 and the phase diagram at their paper-size defaults;
* ``cohen_conv``: ``training --experiment cohen-conv`` at two of the paper's depths (8 and 16) for 3 epochs on the
  bundled digits (no data set can be downloaded on the GPU machine);
* ``chaintron``: ``training --experiment chaintron2026-linear`` and ``chaintron2026-nonlinear`` at their presets (the
  CPU takes about 190 s and 33 s), and the nonlinear width sweep to M = 65 536 (issue 44): wall times and verdicts.

Each part writes its own JSON to ``--out`` (default ``benchmarks/results/gpu_suite/``) as soon as it ends — whole
or not at all — so a run stopped by its time limit still returns the parts it finished. Every file records the
device's name, torch and CUDA versions, the part's wall time and its status (``ok``, ``error: …`` or
``skipped: …``); a part that raises is recorded and the next one runs.

``--dry-run`` runs every part on the CPU at a size that takes seconds (``gpu_tests`` only collects the tests): it
checks the script itself, and tests/test_gpu_suite.py runs it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from validation import convergence, training  # noqa: E402
from validation.core.results import utc_now, write_json  # noqa: E402
from validation.phase import study as phase  # noqa: E402
from validation.regimes import study as regimes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "gpu_suite"
#: the 2-core CPU figure of the main study that the GPU's is set beside
CPU_RES1 = ROOT / "benchmarks" / "results" / "bench_res1.json"


@dataclass(frozen=True)
class Context:
    """What every part is given: the device, whether this is the CPU dry run, and the suite's start time."""

    device: str
    dry_run: bool


@dataclass(frozen=True)
class Part:
    """One part of the suite: its name, its estimated seconds on one H100/H200 (on the CPU in a dry run: a few), and
    the function that runs it and returns its numbers."""

    name: str
    estimate_s: float
    run: Callable[[Context], dict[str, Any]]


def _peak_gpu_mb(device: str) -> float | None:
    if not device.startswith("cuda"):
        return None
    return torch.cuda.max_memory_allocated() / 2**20


def _reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def gpu_tests(ctx: Context) -> dict[str, Any]:
    """pytest tests/test_gpu.py (in a dry run: collected only)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "tests/test_gpu.py"]
    if ctx.dry_run:
        command.append("--collect-only")
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    tail = [line for line in proc.stdout.splitlines() if line.strip()][-3:]
    return {"command": " ".join(command[1:]), "returncode": proc.returncode, "summary": tail}


def res1_paths(ctx: Context) -> dict[str, Any]:
    """The main study at 500, 10⁴ and 10⁵ paths, then at 10⁴ with its steps compiled (``--compile``: CUDA graphs;
    compiling included in its time; its rate beside the eager run's) (a dry run: 50 and 100 at small depths, 50
    compiled)."""
    sizes = (50, 100) if ctx.dry_run else (500, 10_000, 100_000)
    small = dict(depths=(4, 8, 16), reference_steps=256) if ctx.dry_run else {}
    rows = []
    for samples, compiled in [*((n, False) for n in sizes), (sizes[0] if ctx.dry_run else 10_000, True)]:
        _reset_peak(ctx.device)
        clock = time.perf_counter()
        result = convergence.run("res1", samples=samples, device=ctx.device, compile_steps=compiled, **small)
        rows.append({"samples": samples, "compile_steps": compiled, "wall_s": time.perf_counter() - clock,
                     "rate": result.rate, "rate_ci": list(result.rate_ci), "verdict": result.verdict,
                     "peak_gpu_mb": _peak_gpu_mb(ctx.device)})
    cpu = json.loads(CPU_RES1.read_text()) if CPU_RES1.exists() else {}
    cpu_500 = cpu.get("default_study", {}).get("study_seconds")
    return {"rows": rows, "cpu_reference": {"file": str(CPU_RES1.relative_to(ROOT)), "samples": cpu.get("samples"),
                                            "study_seconds": cpu_500, "threads": cpu.get("threads")}}


def fig2_1e5(ctx: Context) -> dict[str, Any]:
    """Fig. 2 at 10⁵ draws, float32 (a dry run: 200 draws at d = 8)."""
    sizes = dict(samples=200, width=8) if ctx.dry_run else dict(samples=100_000)
    clock = time.perf_counter()
    result = regimes.run("fig2", device=ctx.device, dtype="float32", **sizes)
    return {"sizes": sizes, "wall_s": time.perf_counter() - clock, "verdict": result.verdict,
            "checks": [{"check": c.get("check"), "passed": c.get("passed"), "verdict": c.get("verdict")}
                       for c in result.numbers.get("checks", [])]}


def regimes_paper(ctx: Context) -> dict[str, Any]:
    """The regimes presets fig1 and fig4 and the phase diagram at their defaults (a dry run: tiny)."""
    out = {}
    for preset in ("fig1", "fig4"):
        sizes = dict(samples=10, depths=(10, 30, 100)) if ctx.dry_run else {}
        clock = time.perf_counter()
        result = regimes.run(preset, device=ctx.device, **sizes)
        out[preset] = {"wall_s": time.perf_counter() - clock, "verdict": result.verdict}
    sizes = dict(hursts=(0.5,), betas=(0.5, 1.0), depth=16, networks=2, inputs=2) if ctx.dry_run else {}
    clock = time.perf_counter()
    result = phase.run(device=ctx.device, workers=1, **sizes)
    out["phase"] = {"wall_s": time.perf_counter() - clock, "verdict": result.verdict}
    return out


def cohen_conv(ctx: Context) -> dict[str, Any]:
    """cohen-conv at the paper's depths 8 and 16, 3 epochs, on the bundled digits (a dry run: its smoke size)."""
    sizes = (dict(training.EXPERIMENTS["cohen-conv"].smoke) if ctx.dry_run else
             dict(dataset="digits", depths=(8, 16), epochs=3, replicates=5))
    clock = time.perf_counter()
    result = training.run("cohen-conv", device=ctx.device, checkpoint_dir=None, **sizes)
    return {"sizes": sizes, "wall_s": time.perf_counter() - clock, "verdict": result.verdict}


def chaintron(ctx: Context) -> dict[str, Any]:
    """The two chaintron2026 presets, and the nonlinear width sweep to M = 65 536 (a dry run: smoke sizes)."""
    out = {}
    runs = (("chaintron2026-linear", {}), ("chaintron2026-nonlinear", {}),
            ("chaintron2026-nonlinear", dict(hiddens=tuple(2**k for k in range(4, 17)), depths=(4, 8, 16))))
    for name, sizes in runs:
        sizes = dict(training.EXPERIMENTS[name].smoke) if ctx.dry_run else sizes
        clock = time.perf_counter()
        result = training.run(name, device=ctx.device, checkpoint_dir=None, **sizes)
        key = name if name not in out else f"{name} (M to 65536)"
        out[key] = {"sizes": sizes, "wall_s": time.perf_counter() - clock, "verdict": result.verdict,
                    "checks": result.numbers["checks"]}
    return out


#: a dry run's parts take about this fraction of their GPU estimates (seconds, not minutes)
DRY_RUN_SCALE = 0.01

PARTS: tuple[Part, ...] = (
    Part("gpu_tests", 150.0, gpu_tests),
    Part("res1_paths", 120.0, res1_paths),
    Part("fig2_1e5", 60.0, fig2_1e5),
    Part("regimes_paper", 90.0, regimes_paper),
    Part("cohen_conv", 60.0, cohen_conv),
    Part("chaintron", 120.0, chaintron),
)


def _environment(device: str) -> dict[str, Any]:
    cuda = device.startswith("cuda")
    return {"device": device, "device_name": torch.cuda.get_device_name(0) if cuda else "cpu",
            "torch": torch.__version__, "cuda": torch.version.cuda, "started_utc": utc_now().isoformat(timespec="seconds")}


def run_suite(out: Path, *, dry_run: bool, budget_s: float, only: set[str] | None = None,
              parts: tuple[Part, ...] = PARTS) -> list[dict[str, Any]]:
    """Run the parts in order within ``budget_s`` seconds, each writing ``out/<part>.json`` as it ends; returns the
    records."""
    device = "cpu" if dry_run else "cuda"
    if not dry_run and not torch.cuda.is_available():
        raise SystemExit("no CUDA device here: run with --dry-run to check the script on the CPU")
    ctx = Context(device=device, dry_run=dry_run)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    records = []
    for part in parts:
        if only is not None and part.name not in only:
            continue
        left = budget_s - (time.perf_counter() - started)
        estimate = part.estimate_s * (DRY_RUN_SCALE if dry_run else 1.0)
        record: dict[str, Any] = {"part": part.name, "dry_run": dry_run, **_environment(device), "estimate_s": estimate}
        if estimate > left:
            record.update(status=f"skipped: its estimate {estimate:.0f} s exceeds the {left:.0f} s left")
        else:
            clock = time.perf_counter()
            try:
                record.update(numbers=part.run(ctx), status="ok")
            except Exception as exc:  # recorded, and the next part runs
                record.update(status=f"error: {type(exc).__name__}: {exc}")
            record["wall_s"] = time.perf_counter() - clock
        write_json(out / f"{part.name}.json", record)
        print(f"{part.name:15s} {record['status']}  {record.get('wall_s', 0.0):.1f} s", flush=True)
        records.append(record)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true",
                        help="run every part on the CPU at a tiny size (checks the script; seconds)")
    parser.add_argument("--budget-s", type=float, default=480.0,
                        help="seconds the whole run may take: a part whose estimate exceeds what is left is "
                             "skipped (default 480, within an 8-minute device call)")
    parser.add_argument("--only", default=None, help="comma-separated parts to run (default: all): "
                                                     + ", ".join(p.name for p in PARTS))
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder of the JSON files (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    only = None if args.only is None else {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = (only or set()) - {p.name for p in PARTS}
    if unknown:
        parser.error(f"--only: {', '.join(sorted(unknown))} unknown (allowed: {', '.join(p.name for p in PARTS)})")
    if args.budget_s <= 0:
        parser.error(f"--budget-s {args.budget_s:g}: must be > 0")
    records = run_suite(args.out, dry_run=args.dry_run, budget_s=args.budget_s, only=only)
    return 0 if all(r["status"] == "ok" for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
