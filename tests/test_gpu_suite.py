"""The prepared GPU run (benchmarks/gpu_suite.py) in its CPU dry run: every part runs and writes its own JSON, a part
that raises is recorded and the next one runs, and a part the budget cannot fit is skipped, saying why."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_suite  # noqa: E402


def test_the_dry_run_runs_every_part_and_writes_its_json(tmp_path):
    records = gpu_suite.run_suite(tmp_path, dry_run=True, budget_s=600.0)
    assert [r["part"] for r in records] == [p.name for p in gpu_suite.PARTS]
    assert all(r["status"] == "ok" for r in records), [(r["part"], r["status"]) for r in records]
    for part in gpu_suite.PARTS:
        saved = json.loads((tmp_path / f"{part.name}.json").read_text())
        assert saved["status"] == "ok" and saved["device"] == "cpu" and "torch" in saved and saved["numbers"]
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob(".*.part"))


def test_a_failing_part_is_recorded_and_a_part_over_the_budget_is_skipped(tmp_path):
    def fails(ctx):
        raise RuntimeError("planted")

    parts = (gpu_suite.Part("fails", 1.0, fails), gpu_suite.Part("too_long", 1e6, lambda ctx: {"x": 1}),
             gpu_suite.Part("fine", 1.0, lambda ctx: {"x": 2}))
    records = gpu_suite.run_suite(tmp_path, dry_run=True, budget_s=60.0, parts=parts)
    status = {r["part"]: r["status"] for r in records}
    assert status["fails"] == "error: RuntimeError: planted"
    assert status["too_long"].startswith("skipped: its estimate") and status["fine"] == "ok"
    assert json.loads((tmp_path / "fine.json").read_text())["numbers"] == {"x": 2}
