"""Small statistical checks of the measured rates (seconds each); they fail if a pair's coupling or
scaling is wrong (e.g. a network read on a different path gives a flat error curve, rate ≈ 0)."""

import numpy as np
import pytest

from limits import ModelConfig, get_pair
from validation.core.one_pass import ode_errors, sde_errors
from validation.core.rate_fit import fit_rate, verdict


def test_res1_rate_is_one_half():
    pair = get_pair("res1")(ModelConfig(width=4), samples=300, seed=0)
    depths = [8, 16, 32, 64]
    errors = sde_errors(pair, depths, 1024, seed=0)
    fit = fit_rate(depths, errors.final_sq, resamples=500)
    assert verdict(fit, 0.5, 0.1) == "PASS", fit
    assert fit.ci[1] < 0.75  # told apart from an ODE-like rate 1
    successive = fit_rate(depths[:-1], errors.successive_sq, resamples=500)
    assert abs(successive.rate - 0.5) < 0.1


@pytest.mark.parametrize("model", ["res1-ode", "res2-ode", "res3-ode"])
def test_ode_pairs_rate_is_one(model):
    pair = get_pair(model)(ModelConfig(width=4), samples=30, seed=0)
    depths = [16, 32, 64, 128]
    errors = ode_errors(pair, depths)
    fit = fit_rate(depths, errors.final_sq, resamples=500)
    assert abs(fit.rate - 1.0) < 0.05, fit
    assert verdict(fit, 1.0, 0.1) == "PASS"


def test_a_network_on_the_wrong_path_does_not_converge():
    """Decoupled weights (the network reads another seed's path than the limit): the error stays O(1)
    and the fitted rate is ≈ 0, so the rate checks above measure the coupling, not an artefact."""
    import torch
    import torchsde

    from limits.brownian import BrownianGrid
    from limits.pairs import run_network

    pair = get_pair("res1")(ModelConfig(width=4), samples=200, seed=0)
    depths = [8, 16, 32, 64]
    h0 = pair.initial_state()
    limit_path = BrownianGrid(200, pair.noise_dim, 512, seed=0)
    other_path = BrownianGrid(200, pair.noise_dim, 512, seed=1)
    ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
    H = torchsde.sdeint(pair.limit_sde(), h0, ts, bm=limit_path, method="euler", dt=1 / 512)[-1]
    sq = np.stack([((run_network(pair, L, other_path, h0) - H) ** 2).sum(-1).numpy() for L in depths], axis=1)
    fit = fit_rate(depths, sq, resamples=300)
    assert abs(fit.rate) < 0.1
    assert verdict(fit, 0.5, 0.1) == "FAIL"


def test_fit_recovers_an_exact_power_law_and_its_interval():
    rng = np.random.default_rng(0)
    depths = [4, 8, 16, 32, 64]
    scale = rng.lognormal(size=(400, 1))
    sq = scale * np.asarray(depths, float) ** -1.4  # e(L) ∝ L^-0.7 for every sample
    fit = fit_rate(depths, sq, resamples=300)
    assert fit.rate == pytest.approx(0.7, abs=1e-12)
    assert fit.ci[0] == pytest.approx(0.7, abs=1e-9) and fit.ci[1] == pytest.approx(0.7, abs=1e-9)
    np.testing.assert_allclose(fit.local, 0.7, atol=1e-12)


def test_verdict_is_an_equivalence_test():
    from validation.core.rate_fit import RateFit

    def fit(low, high):
        return RateFit((low + high) / 2, (low, high), 0.95, np.ones(3), np.ones(3, bool), np.zeros(2), "x",
                       depths=(4, 8, 16))

    assert verdict(fit(0.45, 0.55), 0.5, 0.1) == "PASS"
    assert verdict(fit(0.35, 0.55), 0.5, 0.1) == "INCONCLUSIVE"  # interval too wide: not shown equivalent, nor off
    assert verdict(fit(0.62, 0.66), 0.5, 0.1) == "FAIL"  # wholly outside [0.4, 0.6]
    assert verdict(fit(0.58, 0.66), 0.5, 0.1) == "INCONCLUSIVE"  # straddles 0.6
    assert verdict(fit(-0.1, 0.1), 0.0, 0.1, excluded=0.5) == "PASS"
    assert verdict(fit(0.3, 0.45), 0.0, 0.1, excluded=0.5) == "INCONCLUSIVE"  # straddles 0.4
    assert verdict(fit(0.42, 0.45), 0.0, 0.1, excluded=0.5) == "FAIL"


def test_nonfinite_errors_are_not_fitted():
    sq = np.ones((10, 3))
    sq[2, 1] = np.inf
    fit = fit_rate([2, 4, 8], sq, resamples=100)
    assert not fit.finite and np.isnan(fit.rate)
    assert verdict(fit, 0.5, 0.1) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("model", ["res1", "res1-ode", "res2-ode", "res3-ode"])
def test_default_study_passes(model, tmp_path):
    """The documented default run of each core pair: PASS; res1's interval contains 0.5 and is at
    most ±0.05 wide; the ODE pairs' rates are within 0.05 of 1 (slow: ~10–30 s each)."""
    import json

    from validation.convergence import main

    out = tmp_path / "r.json"
    assert main(["--model", model, "--quiet", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["result"]
    fit = result["fits"][result["verdict_metric"]]
    low, high = fit["ci"]
    assert result["verdict"] == "PASS"
    if model == "res1":
        assert low <= 0.5 <= high and (high - low) / 2 <= 0.05
    else:
        assert abs(fit["rate"] - 1.0) < 0.05
