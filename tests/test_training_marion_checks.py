"""The controls of marion-fig8 and marion-fig9 can fail: Fig. 8's "training moved the weights" FAILs when the
optimiser step does nothing, and Fig. 9's depth comparison FAILs when the failing region rises with depth."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from validation import training
from validation.training import marion
from validation.training.trainer import BatchedOptimizer

#: a Fig. 8 run of a few seconds in which Adam moves V by several per cent
SMALL = dict(depths=(4, 8, 16), width=6, epochs=2, replicates=3, train_size=256, batch_size=32, resamples=200,
             inits=("iid",), learning_rates=(1e-2,), checkpoint_dir=None)


def _moved(result):
    [check] = [c for c in result.numbers["checks"] if "training moved" in c["check"]]
    return check


def test_fig8_weights_moved_passes_on_a_small_run():
    result = training.run("marion-fig8", **SMALL)
    check = _moved(result)
    assert check["verdict"] == "PASS", check["detail"]
    moved = result.numbers["per_init"]["iid"]["weights_moved"]
    assert min(lo for lo, _ in moved["relative"]["ci"]) >= marion.MOVED
    assert all(moved["loss_reduced"])
    assert all(t < i for t, i in zip(moved["trained_train_loss"], moved["initial_train_loss"]))
    assert "weights moved" in result.table()


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore:The BCa confidence interval")  # unmoved: degenerate
def test_fig8_weights_moved_fails_when_the_optimiser_does_nothing(monkeypatch):
    """A planted error: the optimiser step is a no-op, so V stays at its initialisation and the loss does not fall.
    The regularity checks still PASS (trivially: nothing changed); the movement check is what catches it."""
    monkeypatch.setattr(BatchedOptimizer, "step", lambda self, active, factor=1.0: None)
    result = training.run("marion-fig8", **SMALL)
    check = _moved(result)
    assert check["verdict"] == "FAIL"
    assert result.verdict == "FAIL"
    moved = result.numbers["per_init"]["iid"]["weights_moved"]
    assert max(m for m in moved["relative"]["mean"]) == 0.0 and not any(moved["loss_reduced"])
    keeps = [c for c in result.numbers["checks"] if "change of the exponent" in c["check"]]
    assert keeps and all(c["passed"] for c in keeps)


def test_movement_and_exponent_reach():
    V0 = torch.randn(8, 3, 3, dtype=torch.float64)
    assert marion.movement(V0.clone(), V0, 0.5) == {"relative": 0.0, "layer": 0.0, "layer_change": 0.0,
                                                    "scaled_norm": 0.0, "path": 0.0}
    shifted = marion.movement(V0 + 1.0, V0, 0.5)   # a constant shift: no layer-to-layer change, a linear path
    assert shifted["layer_change"] < 1e-12 and math.isclose(shifted["layer"], 3.0)
    assert math.isclose(shifted["path"], 0.5 * 3.0 * 8)
    depths = (16, 32, 64, 128, 256)
    assert marion.exponent_reach(depths, np.zeros((5, 3))) == 0.0
    assert marion.exponent_reach(depths, np.full((5, 3), 1.0)) == math.inf
    # a 1% bound at the two ends allows at most log(1.01/0.99)/log 16 with two depths
    assert math.isclose(marion.exponent_reach((16, 256), np.full((2, 1), 0.01)), math.log(1.01 / 0.99) / math.log(16))


def _fig9(failing: dict[int, dict[float, float]]):
    """Fig. 9's summary of planted records: every cell trains (accuracy 0.95) but those listed, per depth, as
    {H: the largest failing β} (every β up to it at accuracy 0.1)."""
    settings = SimpleNamespace(hursts=(0.1, 0.5, 0.9), betas=(0.2, 0.4, 0.6, 0.8, 1.0), depths=tuple(failing),
                               learning_rates=(1e-3, 1e-2), dataset="planted")
    records = {}
    for L in settings.depths:
        for h in settings.hursts:
            for b in settings.betas:
                acc = 0.1 if b <= failing[L].get(h, -1) + 1e-12 else 0.95
                records[f"H{h:g}-beta{b:g}-L{L}"] = {"test_accuracy": [[acc, acc]], "train_loss": [[1.0, 0.5]],
                                                      "diverged": [[False, False]]}
    return marion.MarionFig9().summarise(settings, records)


def _depth_check(numbers):
    [check] = [c for c in numbers["checks"] if "at every depth" in c["check"]]
    return check


def test_fig9_depth_check_passes_when_the_shift_holds_at_both_depths():
    pattern = {0.5: 0.2, 0.9: 0.4}   # failures 0.2–0.5 below the line, the same at both depths
    numbers = _fig9({100: pattern, 1000: pattern})
    check = _depth_check(numbers)
    assert check["passed"] and check["rises_at"] == []
    assert numbers["per_depth"][1]["largest_failing_beta"] == [None, 0.2, 0.4]
    assert numbers["verdict"] == "PASS"


def test_fig9_depth_check_fails_when_the_failing_region_rises_with_depth():
    """A planted finite-depth effect: at L = 1000 the failures reach up to the critical line, as in Fig. 7's
    explosion zone. The old checks still PASS at both depths; the depth comparison FAILs."""
    numbers = _fig9({100: {0.5: 0.2, 0.9: 0.4}, 1000: {0.1: 0.4, 0.5: 0.4, 0.9: 0.8}})
    check = _depth_check(numbers)
    assert not check["passed"] and check["rises_at"] == [0.1, 0.5, 0.9]
    old = [c for c in numbers["checks"] if c is not check]
    assert all(c["passed"] for c in old)
    assert numbers["verdict"] == "FAIL"
    assert numbers["per_depth"][0]["band_lower_edge"] == [0.2, 0.4, 0.6]


def test_fig9_at_one_depth_reports_the_shift_and_does_not_judge_it():
    """At one depth the shift cannot be told from a finite-depth effect: the same records PASS whether the failures
    sit 0.2–0.5 below the line (a shift) or reach up to it (Fig. 7's zone at a larger depth) — so the shift is a
    REPORTED line with its count, and the verdict is the two judged checks'."""
    shifted = _fig9({100: {0.5: 0.2, 0.9: 0.4}})
    unshifted = _fig9({100: {0.1: 0.4, 0.5: 0.4, 0.9: 0.8}})
    for numbers, trains in ((shifted, "5 of 8"), (unshifted, "0 of 8")):
        [report] = [c for c in numbers["checks"] if c["verdict"] == "REPORTED"]
        assert report["detail"].startswith(f"{trains} cells below the line train") and "--depths" in report["detail"]
        assert numbers["verdict"] == "PASS" and not any("at every depth" in c["check"] for c in numbers["checks"])
