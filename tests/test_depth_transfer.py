"""depth-transfer: the optimal learning rate's vertex and its exponent in depth are recovered from losses built with a
known optimum, a grid edge is flagged rather than extrapolated, and a per-parameter learning-rate scale is exactly a
scaled rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from validation.training.depth_transfer import hidden_rate_exponent, optimal_log_rate, transfer_fit
from validation.training.trainer import BatchedOptimizer


def test_the_vertex_of_a_parabola_in_log_rate_is_exact():
    log_rates = np.log(np.array([1e-3, 1e-2, 1e-1, 1.0]))
    centre = math.log(0.03)
    value, edge = optimal_log_rate(log_rates, 2.0 + (log_rates - centre) ** 2)
    assert not edge and value == pytest.approx(centre, abs=1e-12)
    value, edge = optimal_log_rate(log_rates, -log_rates)        # falls to the largest rate: the grid's edge
    assert edge and value == log_rates[-1]
    value, edge = optimal_log_rate(log_rates, np.array([1.0, np.inf, np.inf, np.inf]))
    assert edge and value == log_rates[0]
    assert math.isnan(optimal_log_rate(log_rates, np.full(4, np.inf))[0])


@pytest.mark.parametrize("gamma", [0.0, -1.5])
def test_transfer_fit_recovers_a_known_exponent(gamma):
    """Losses with optimum η*(L) = 0.01 (L/4)^γ and replicate noise: the fitted exponent's interval holds γ and is
    narrow; with γ = 0 it lies within the ±0.1 margin, with γ = −3/2 far outside it."""
    depths, rates = [4, 8, 16, 32, 64], np.exp(np.linspace(math.log(1e-5), math.log(1.0), 11))
    rng = np.random.default_rng(0)
    optimum = np.log(0.01 * (np.array(depths) / 4.0) ** gamma)
    log_loss = (np.log(rates)[None, :, None] - optimum[:, None, None]) ** 2 / 4
    losses = np.exp(log_loss + 0.05 * rng.standard_normal((len(depths), len(rates), 8)))
    fit = transfer_fit(depths, list(rates), losses, confidence=0.95, resamples=300, seed=0)
    low, high = fit["exponent_ci"]
    assert low <= gamma <= high and high - low < 0.2 and not any(fit["at_edge"])
    assert abs(fit["exponent"] - gamma) < 0.05


def test_learning_rate_rules():
    assert hidden_rate_exponent(0.0) == 0.0 and hidden_rate_exponent(0.5) == -0.5 and hidden_rate_exponent(1.0) == 0.0


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_a_learning_rate_scale_is_a_scaled_rate(kind):
    torch.manual_seed(0)
    start = {"V": torch.randn(2, 3, 3), "W": torch.randn(2, 3)}
    scaled = {k: v.clone().requires_grad_(True) for k, v in start.items()}
    plain = {k: v.clone().requires_grad_(True) for k, v in start.items()}
    ours = BatchedOptimizer(scaled, kind, torch.tensor([0.1, 0.02]), scales={"V": 0.25})
    reference_v = BatchedOptimizer({"V": plain["V"]}, kind, torch.tensor([0.025, 0.005]))
    reference_w = BatchedOptimizer({"W": plain["W"]}, kind, torch.tensor([0.1, 0.02]))
    for _ in range(4):
        for params in (scaled, plain):
            for p in params.values():
                p.grad = None
            (params["V"].sin().sum() + (params["W"] ** 2).sum()).backward()
        ours.step(torch.tensor([True, True]))
        reference_v.step(torch.tensor([True, True]))
        reference_w.step(torch.tensor([True, True]))
    for key in start:
        torch.testing.assert_close(scaled[key], plain[key], rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="not parameters"):
        BatchedOptimizer(scaled, kind, torch.tensor([0.1, 0.1]), scales={"U": 2.0})


@pytest.mark.parametrize("argv, text", [(["--depths", "4,8"], "at least 3 depths"),
                                        (["--learning-rates", "0.1,1"], "at least 3 learning rates")])
def test_too_small_a_sweep_is_bad_input(argv, text, capsys):
    from validation import training

    assert training.main(["--experiment", "depth-transfer", "--quiet", "--checkpoint-dir", "none", *argv]) == 2
    assert text in capsys.readouterr().err
