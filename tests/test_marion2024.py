"""marion2024-fig1 (Marion et al. 2024, Fig. 1): the authors' model and distance, and the O(1/L) claim measured at a
size that runs in seconds."""

import numpy as np
import pytest
import torch

from validation import training
from validation.settings import SettingsError
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
