"""The smoke calibration (issue 62): in CI, every planted alternative of the calibration's rows under a minute a run
(benchmarks/calibrate.py :func:`smoke_commands`) and of its draw rows (:data:`SMOKE_DRAWS`) is run on three seeds,
and each run must FAIL. The full calibration — the rates over 10 to 20 seeds, the null included — is kept out of CI
(``python benchmarks/calibrate.py``; docs/results/calibration.md). The runs are marked ``slow``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("calibrate_smoke", ROOT / "benchmarks" / "calibrate.py")
calibrate = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = calibrate          # dataclasses resolve their module's names through sys.modules
_spec.loader.exec_module(calibrate)

COMMAND_RUNS = [pytest.param(check, hypothesis, seed, id=f"{check.key}|{hypothesis.name}|seed{seed}")
                for check, hypothesis in calibrate.smoke_commands() for seed in range(calibrate.SMOKE_SEEDS)]
DRAW_RUNS = [pytest.param(key, seed, id=f"{key}|seed{seed}")
             for key in calibrate.SMOKE_DRAWS for seed in range(calibrate.SMOKE_SEEDS)]


def test_the_smoke_calibration_runs_at_least_ten_planted_alternatives():
    """The issue's floor: ten alternatives, at least, each on three seeds (the draw rows' families counted)."""
    commands = len(calibrate.smoke_commands())
    draws = len(calibrate.FIG1_HYPOTHESES) - 1 + len(calibrate.COHEN_FAMILIES)
    assert commands >= 5 and commands + draws >= 10, (commands, draws)
    assert calibrate.SMOKE_SEEDS >= 3


@pytest.mark.slow
@pytest.mark.parametrize("check, hypothesis, seed", COMMAND_RUNS)
def test_a_planted_alternative_fails_the_command_at_its_defaults(check, hypothesis, seed):
    run = calibrate.run_one(check, hypothesis, seed)
    assert run["verdict"] == "FAIL", (check.command(hypothesis, seed), run)


@pytest.mark.slow
@pytest.mark.parametrize("key, seed", DRAW_RUNS)
def test_the_planted_alternatives_of_a_draw_row_fail(key, seed):
    verdicts = calibrate.smoke_draw_verdicts(key, seed)
    assert verdicts and all(verdict == "FAIL" for verdict in verdicts.values()), verdicts
