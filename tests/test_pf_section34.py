"""Peluchetti & Favaro §3.4 ("Qualitative properties"): with fully i.i.d. parameters the output coordinates are
exchangeable, and the joint law of the output at two inputs is not Gaussian — each a test that passes on the P&F
network and its limit and comes out the other way on a planted counter-example (validation.figures.distribution_tests,
the pf-qualitative figure)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from scipy import stats

from limits.activations import get_activation
from limits.peluchetti_favaro import PFBlock, simulate_gram
from limits.seeding import generator, stream_seed
from validation.figures import study as figures
from validation.figures.distribution_tests import ad_ksamp, exchangeability_test, mardia_test, pair_spread
from validation.figures.pf_models import block_outputs

ALPHA = 0.01
Z = (0.0, 1.0)


def _block(activation: str = "tanh", width: int = 6, **covariance) -> PFBlock:
    return PFBlock(get_activation(activation), get_activation("identity"), width, **covariance)


def _network(width: int = 6, depth: int = 16, draws: int = 800, seed: int = 0, sde_factor: int | None = None,
             activation: str = "tanh", **covariance):
    return block_outputs(_block(activation, width, **covariance), Z, depth, draws, sde_factor, seed=seed,
                         labels=("test-pf-section34", activation, str(covariance)))


def _rng(*labels: object) -> np.random.Generator:
    return np.random.default_rng(stream_seed(0, "test-pf-section34", *labels))


# ------------------------------------------------------------------------------------------ the statistics
def test_ad_ksamp_is_scipys_statistic_before_normalisation():
    rng = _rng("ad")
    pairs = []
    for shift in (0.0, 0.05, 0.2):
        x = rng.standard_normal((150, 5)) + shift * np.arange(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's floored p-value, not used
            ours = float(ad_ksamp(x)[0])
            theirs = stats.anderson_ksamp([x[:, i] for i in range(5)], midrank=False).statistic
        pairs.append((ours, theirs))
    # scipy's statistic is (A²_kN − (k − 1)) / σ_N with σ_N fixed by the sample sizes: the same ratio every time
    ratios = [(ours - 4) / theirs for ours, theirs in pairs]
    assert np.allclose(ratios, ratios[0], rtol=1e-8)
    # a column assignment is the same as moving the values: the permuted statistic of the step-sum formula
    columns = rng.permuted(np.broadcast_to(np.arange(5), (3, 150, 5)), axis=2)
    moved = np.empty((3, 150, 5))
    np.put_along_axis(moved, columns, np.broadcast_to(x, moved.shape), axis=2)
    assert np.allclose(ad_ksamp(x, columns), [ad_ksamp(m)[0] for m in moved], rtol=1e-9)


def test_pair_spread_is_zero_for_equal_correlations_and_grows_with_unequal_ones():
    rng = _rng("pairs")
    common = rng.standard_normal((400, 1, 2))
    equal = common + rng.standard_normal((400, 4, 2))
    chained = np.cumsum(rng.standard_normal((400, 4, 2)), axis=1)  # AR-like: corr falls with |i − j|
    assert pair_spread(equal[None])[0] < 0.1 * pair_spread(chained[None])[0]


def test_the_permutation_test_is_exact_under_exchangeability():
    # i.i.d. rows with exchangeable but dependent coordinates (a common factor): p-values ~ uniform
    rng = _rng("exact")
    p_values = []
    for _ in range(60):
        x = rng.standard_normal((120, 4, 2)) + rng.standard_normal((120, 1, 1))
        p_values.append(exchangeability_test(x, 39, rng)["p_value"])
    p_values = np.array(p_values)
    assert 0.03 <= np.mean(p_values <= 0.25) <= 0.5  # Binomial(60, 0.25): 15 ± 3.4
    assert np.all(p_values >= 1 / 40)


def test_mardia_matches_its_definition_and_is_calibrated():
    rng = _rng("mardia")
    x = rng.standard_t(6, (300, 2))
    r = mardia_test(x)
    centred = x - x.mean(axis=0)
    g = centred @ np.linalg.inv(centred.T @ centred / len(x)) @ centred.T
    assert r["b1"] == pytest.approx(np.sum(g**3) / len(x) ** 2, rel=1e-9)
    assert r["b2"] == pytest.approx(np.mean(np.diag(g) ** 2), rel=1e-9)
    rejected = [mardia_test(rng.standard_normal((500, 2)))["p_value"] < 0.05 for _ in range(400)]
    assert np.mean(rejected) < 0.09  # nominal 5% (Bonferroni of two tests: at most)


# ------------------------------------------------------------------------------------------ the simulator
def test_block_outputs_is_the_blocks_network_and_euler_scheme():
    block = _block("swish", 3, cov_b=("ar1", 0.5))
    depth, factor, draws, chunk = 4, 2, 5, 3
    net, sde = block_outputs(block, Z, depth, draws, factor, seed=7, labels=("check",), chunk=chunk)
    for c, start in enumerate(range(0, draws, chunk)):
        size = min(chunk, draws - start)
        gen = generator(7, "figures", "check", c)
        x = torch.tensor(Z, dtype=torch.float64)[:, None, None].expand(2, size, 3).clone()  # (K, N, D)
        y = x.clone()
        for _ in range(depth):
            fine = torch.randn((factor, size, 12), generator=gen, dtype=torch.float64) * math.sqrt(1 / (depth * factor))
            x = torch.stack([block.network_step(x[k], 1 / depth, fine[0] + fine[1]) for k in range(2)])
            for j in range(factor):
                y = torch.stack([y[k] + block.drift(y[k]) / (depth * factor) + block.diffusion_prod(y[k], fine[j])
                                 for k in range(2)])
        assert np.allclose(net[start:start + size], x.permute(1, 2, 0).numpy(), rtol=1e-12, atol=1e-12)
        assert np.allclose(sde[start:start + size], y.permute(1, 2, 0).numpy(), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------------ claim (8): exchangeable
@pytest.mark.parametrize("activation", ["tanh", "swish"])
def test_the_fully_iid_network_and_its_limit_are_not_rejected_as_non_exchangeable(activation):
    net, sde = _network(activation=activation, sde_factor=2)
    for values in (net, sde):
        r = exchangeability_test(values, 199, _rng("exchangeable", activation))
        assert r["p_value"] >= ALPHA, r


def test_the_gram_reduction_is_exchangeable_too():
    values = simulate_gram(get_activation("tanh"), Z, 6, 16, 800, mode="network", dtype=torch.float64, keep=None)
    assert exchangeability_test(values.numpy(), 199, _rng("gram"))["p_value"] >= ALPHA


def test_exchangeable_but_correlated_biases_are_not_rejected():
    # equicorrelated biases: coordinates dependent beyond the shared norm, still exchangeable
    net, _ = _network(cov_b=("equi", 0.5))
    assert exchangeability_test(net, 199, _rng("equi"))["p_value"] >= ALPHA


@pytest.mark.parametrize("family, statistic", [(("diag", 0.25, 1.75), "ad_p_value"), (("ar1", 0.8), "pair_p_value")])
def test_a_planted_non_exchangeable_network_is_rejected(family, statistic):
    # diag: the coordinates' bias variances differ (the marginals); ar1: equal marginals, the pair laws differ
    net, _ = _network(cov_b=family)
    r = exchangeability_test(net, 199, _rng("planted", family))
    assert r["p_value"] < ALPHA and r[statistic] < ALPHA, r


def test_one_coordinate_with_a_larger_scale_is_rejected():
    net, _ = _network()
    planted = net.copy()
    planted[:, 0, :] *= 1.25  # coordinate 1 only: a different scale
    assert exchangeability_test(net, 199, _rng("one"))["p_value"] >= ALPHA
    assert exchangeability_test(planted, 199, _rng("one"))["p_value"] < ALPHA


# ------------------------------------------------------------------------------------------ claim (9): not Gaussian
@pytest.mark.parametrize("activation", ["tanh", "swish"])
def test_the_pair_of_outputs_is_not_gaussian_but_gaussian_draws_of_its_covariance_are(activation):
    net, sde = _network(width=4, depth=32, draws=1500, sde_factor=2, activation=activation)
    for values in (net, sde):
        pair = values[:, 0, :]
        assert mardia_test(pair)["p_value"] < ALPHA
        gaussian = pair.mean(axis=0) + _rng("gaussian", activation).standard_normal(pair.shape) @ np.linalg.cholesky(
            np.cov(pair.T)).T
        assert mardia_test(gaussian)["p_value"] >= ALPHA


def test_the_departure_from_gaussian_shrinks_with_the_width():
    # given ‖x‖²/D's path each coordinate is Gaussian; ‖x‖²/D concentrates as D grows (the wide GP limit)
    excess = {}
    for width in (4, 32):
        pair = simulate_gram(get_activation("tanh"), Z, width, 32, 6000, mode="sde", dtype=torch.float64)[:, 0]
        excess[width] = mardia_test(pair.numpy())["b2"] - 8
    assert excess[4] > 3 * excess[32] > 0


# ------------------------------------------------------------------------------------------ the figure
def test_the_figure_passes_and_a_wrong_level_fails():
    settings = figures.SMOKE["pf-qualitative"]
    result = figures.run("pf-qualitative", **settings)
    assert result.verdict == "PASS", [c for c in result.checks if not c["passed"]]
    assert len(result.checks) == 11
    kinds = {(m["model"], m["kind"]) for m in result.numbers["models"]}
    assert ("SC_tanh", "sde") in kinds and ("SC_swish", "resnet") in kinds
    # at level 0.999 every exchangeability check on the models rejects and the Gaussian control is rejected
    wrong = figures.run("pf-qualitative", **{**settings, "alpha": 0.999})
    assert wrong.verdict == "FAIL" and wrong.exit_code == 1
    failed = [c["check"] for c in wrong.checks if not c["passed"]]
    assert sum("exchangeable" in name for name in failed) == 4 and any("Gaussian draws" in name for name in failed)


def test_the_figure_refuses_a_bad_level_and_an_odd_sde_factor():
    from validation.core.settings import SettingsError

    with pytest.raises(SettingsError, match="alpha"):
        figures.run("pf-qualitative", **{**figures.SMOKE["pf-qualitative"], "alpha": 1.0})
    with pytest.raises(SettingsError, match="power of two"):
        figures.run("pf-qualitative", **{**figures.SMOKE["pf-qualitative"], "sde_factor": 3})
