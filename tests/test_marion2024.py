"""marion2024-fig1 (Marion et al. 2024, Fig. 1): the authors' model and distance, and the O(1/L) claim measured at a
size that runs in seconds."""

import numpy as np
import pytest
import torch

from validation import training
from validation.core.settings import SettingsError
from validation.training.marion2024 import layer_distance


def test_layer_distance_compares_layer_k_with_the_reference_layer_k_times_the_ratio():
    coarse = torch.zeros(2, 4, 3)
    fine = torch.arange(2 * 16 * 3, dtype=torch.float32).reshape(2, 16, 3)
    expected = [float(np.sqrt(np.mean([(fine[r, 4 * k] ** 2).sum().item() for k in range(4)]))) for r in range(2)]
    assert layer_distance(coarse, fine).tolist() == pytest.approx(expected)
    assert layer_distance(fine, fine).tolist() == [0.0, 0.0]


def test_trained_weights_converge_at_rate_one_at_every_checked_time():
    """Depths 8 … 64 against 1024 (factor 16, as the preset), float64: the rate of ‖𝒱^L − 𝒱‖ at the three checked
    iterations is 1 within ±0.1 (the paper's O(1/L)); the successive differences say the same without a reference."""
    result = training.run("marion2024-fig1", depths=(8, 16, 32, 64, 1024), width=4, hidden=6, epochs=10,
                          replicates=4, train_size=20, resamples=200, dtype="float64", checkpoint_dir=None)
    n = result.numbers
    assert n["check_iterations"] == [2, 5, 10]
    for t in n["check_iterations"]:
        for name in ("V", "W"):
            assert -n["rates"][name][t - 1]["slope"] == pytest.approx(1.0, abs=0.1)
        assert -n["successive_rates"]["V"][t - 1]["slope"] == pytest.approx(1.0, abs=0.1)
    assert result.verdict == "PASS"
    # at iteration 0 every depth is the same network (V = 0, W = W⁰ in every layer): distance 0
    assert np.all(np.asarray(result.records["all-depths"]["distance"]["V"][0]) == 0)


@pytest.mark.parametrize("depths, match", [((4, 8), "at least two depths"), ((2, 8, 12, 64), "power of two"),
                                           ((2, 4, 64), "≥ 8")])
def test_bad_depths_are_refused(depths, match):
    with pytest.raises(SettingsError, match=match):
        training.run("marion2024-fig1", depths=depths, checkpoint_dir=None)


def test_long_training_checks_successive_differences_uniformly_in_time():
    """marion2024-fig2 at a size of seconds (float64): the loss falls at every depth, the checks are on
    ‖𝒱^L − 𝒱^2L‖ at three times and on its supremum over training, and the trace holds V_k, W_k along k."""
    result = training.run("marion2024-fig2", depths=(8, 16, 32, 64, 128), width=4, hidden=8, epochs=200,
                          replicates=3, train_size=10, resamples=200, dtype="float64", checkpoint_dir=None)
    n, record = result.numbers, result.records["all-depths"]
    assert n["checked_distance"] == "successive" and n["check_iterations"] == [4, 40, 200]
    assert [c["check"] for c in n["checks"]][-1].startswith("rate of sup over training of ‖𝒱^L − 𝒱^2L‖")
    assert len(n["checks"]) == 4
    assert all(-fit["slope"] > 0.8 for fit in n["successive_rates"]["V"][1:])
    supremum = np.asarray(record["successive"]["V"], dtype=float)[1:].max(axis=0)   # (pairs, replicates)
    assert n["supremum_rate"]["geometric_mean"] == pytest.approx(np.exp(np.log(supremum).mean(axis=1)).tolist())
    for entry in n["loss"]:
        assert entry["final"] < entry["initial"] and entry["late_log_slope"]["value"] < 0
    assert len(record["trace"]) == len(record["iterations"]) and len(record["trace"][-1]["V"]) == 64
    assert 4 in record["iterations"] and 200 in record["iterations"] and len(record["iterations"]) < 60


def _plant_independent_initial_weights(monkeypatch, experiment: type) -> None:
    """The plant of both entries' tests (tests/planted_entries.py ``independent-starts``): each depth's network
    started from its own W⁰, so there is no common function of t = k/L for the depths to discretise."""
    from planted_entries import independent_initial_weights

    monkeypatch.setattr(experiment, "networks", independent_initial_weights(experiment.networks))


def test_long_training_fails_when_the_depths_do_not_share_their_initial_function(monkeypatch):
    """Each depth started from its own W⁰ (no common function of t = k/L to discretise): the successive differences
    do not shrink with L, and every check FAILs — the claim can fail for a real reason."""
    from validation.training import marion2024

    _plant_independent_initial_weights(monkeypatch, marion2024.MarionFig2)
    result = training.run("marion2024-fig2", depths=(8, 16, 32, 64, 128), width=4, hidden=8, epochs=50,
                          replicates=3, train_size=10, resamples=200, dtype="float64", checkpoint_dir=None)
    assert result.verdict == "FAIL"
    assert abs(result.numbers["supremum_rate"]["slope"]) < 0.3


def test_long_training_needs_three_fitted_depths():
    with pytest.raises(SettingsError, match="at least 3 depths"):
        training.run("marion2024-fig2", depths=(8, 16, 64), checkpoint_dir=None)


@pytest.mark.parametrize("experiment", ["marion2024-fig2", "sander2022-linear"])
def test_side_by_side_threads_leave_every_record_identical(experiment):
    """The lockstep networks stepped on 1, 2 or 3 threads at once (--workers) give the same records, bit for bit
    (float32 and GELU for Fig. 2: each operation runs on one intra-op thread, with the caller's flushing of
    subnormals)."""
    sizes = (dict(depths=(8, 16, 32, 64, 128), width=4, hidden=8, epochs=30, replicates=3, train_size=10)
             if experiment == "marion2024-fig2" else dict(depths=(8, 16, 32, 256), epochs=20, replicates=3))
    records = {}
    for threads in (1, 2, 3):
        result = training.run(experiment, checkpoint_dir=None, workers=threads, **sizes)
        records[threads] = result.records
    assert records[1] == records[2] == records[3]


def test_side_by_side_shares_the_networks_out_by_depth():
    from validation.training.lockstep import SideBySide

    class Net:
        def __init__(self, depth):
            self.depth = depth

        def step(self, rate):
            return torch.tensor([float(self.depth)])

    networks = [Net(L) for L in (16, 32, 64, 128, 256)]
    with SideBySide(networks, 2) as stepper:
        assert stepper.groups == [[4], [3, 2, 1, 0]]
        assert stepper.step(0.1) == [[16.0], [32.0], [64.0], [128.0], [256.0]]
    with SideBySide(networks, 1) as stepper:
        assert stepper.pool is None and stepper.step(0.1)[0] == [16.0]


def test_fig1_fails_when_the_depths_do_not_share_their_initial_function(monkeypatch):
    """Planted: each depth, the reference 1024 included, started from its own W⁰ — no common function of t = k/L
    for the trained weights to discretise. The distances to the reference do not fall as 1/L and the verdict FAILs;
    unplanted it PASSes (test_trained_weights_converge_at_rate_one_at_every_checked_time, the same size)."""
    from validation.training import marion2024

    _plant_independent_initial_weights(monkeypatch, marion2024.MarionFig1)
    result = training.run("marion2024-fig1", depths=(8, 16, 32, 64, 1024), width=4, hidden=6, epochs=10,
                          replicates=4, train_size=20, resamples=200, dtype="float64", checkpoint_dir=None)
    assert result.verdict == "FAIL"
    assert [c["verdict"] for c in result.numbers["checks"]] == ["FAIL"] * 3, result.numbers["checks"]   # rate ≈ 0.12
