"""validation.figures: each figure at a tiny size — reproducible, schema-valid, checks that can fail, CLI exit codes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from limits.activations import get_activation
from limits.chizat import chizat_spread
from limits.fractional import estimate_hurst
from limits.peluchetti_favaro import PFBlock
from limits.seeding import generator
from validation.figures import study as figures
from validation.figures import pf_models
from validation.core.plots import overlapping_tick_labels
from validation.core.results import validate
from validation.core.settings import SettingsError

TINY = figures.SMOKE


@pytest.fixture(scope="module")
def tiny_results():
    return {name: figures.run(name, **settings) for name, settings in TINY.items()}


@pytest.mark.parametrize("name", list(TINY))
def test_same_seed_same_numbers_and_schema_valid_json(name, tiny_results):
    first = tiny_results[name]
    again = figures.run(name, **TINY[name])
    assert json.dumps(first.summary(), default=str) == json.dumps(again.summary(), default=str)
    other = figures.run(name, **{**TINY[name], "seed": 1})
    assert json.dumps(first.summary(), default=str) != json.dumps(other.summary(), default=str)
    payload = first.to_dict()
    validate(payload)
    assert payload["study"] == "figures"
    assert payload["result"]["figure"] == name and first.summary()["figure"] == name
    assert payload["result"]["verdict"] in ("PASS", "FAIL", "INCONCLUSIVE")
    assert payload["settings"]["figure"] == name
    json.loads(first.to_json())  # no NaN left in the text
    text = first.table()
    assert "verdict:" in text and "checks:" in text


@pytest.mark.parametrize("name", list(TINY))
def test_plot_draws_every_panel(name, tiny_results, tmp_path):
    fig = tiny_results[name].plot()
    assert len(fig.axes) >= 2
    assert all(ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>")
    assert overlapping_tick_labels(fig) == []
    path = tiny_results[name].save_plot(tmp_path / f"{name}.png")
    assert path.stat().st_size > 5_000


@pytest.mark.parametrize("name, wrong", [
    ("pf-function-space", dict(sde_tolerance=1e-6)),
    ("pf-function-space", dict(resnet_max_pc=0.01)),
    ("pf-function-space", dict(eoc_min_pc=1.0)),
    ("pf-correlation", dict(resnet_max_correlation=-1.0)),
    ("pf-correlation", dict(eoc_min_correlation=1.0)),
    ("marion-fbm", dict(hurst_tolerance=1e-9)),
    ("chizat-maximal", dict(doob_constant=1.0)),
    ("chizat-maximal", dict(tail_constant=0.01)),
    ("chizat-backward", dict(exponent_tolerance=1e-4)),
    ("pf-2d", dict(resnet_max_pc=0.01)),
    ("pf-qualitative", dict(alpha=0.999)),
    ("pf-relu", dict(exponent_tolerance=0.01)),
    ("pf-sizes", dict(scale_tolerance=0.001)),
])
def test_a_wrong_rule_fails(name, wrong):
    result = figures.run(name, **{**TINY[name], **wrong})
    assert result.verdict == "FAIL"
    assert result.exit_code == 1
    assert any(not c["passed"] for c in result.checks)


def test_the_paper_claims_hold_at_moderate_size():
    # fBm: the pooled estimate recovers H; chizat: Doob's bounds hold (both cheap at the default sizes)
    assert figures.run("marion-fbm", realisations=100, resamples=50).verdict == "PASS"
    assert figures.run("chizat-maximal", networks=300, layers=30, resamples=100).verdict == "PASS"


def test_pf_noise_is_the_blocks_noise_for_each_input():
    d, n, k = 5, 3, 4
    block = PFBlock(get_activation("tanh"), get_activation("identity"), d, sigma_w=1.3, sigma_b=0.7)
    gen = generator(0, "test-noise")
    dW = torch.randn((n, d * d + d), generator=gen, dtype=torch.float64)
    y = torch.randn((n, k, d), generator=gen, dtype=torch.float64)
    batched = pf_models.pf_noise(block, dW, y)
    for j in range(k):
        torch.testing.assert_close(batched[:, j], block.noise(dW, y[:, j]))
    # one ResNet layer on K inputs = PFBlock.network_step on each
    x = y
    step = x + block.phi(0.25 * block.mean_drift(block.psi(x)) + pf_models.pf_noise(block, dW, block.psi(x)))
    for j in range(k):
        torch.testing.assert_close(step[:, j], block.network_step(x[:, j], 0.25, dW))


def test_resnet_and_sde_read_the_same_path():
    # on a fine SDE grid the Euler scheme and the ResNet agree better at larger depth (strong convergence)
    gaps = []
    for depth in (2, 32):
        r = figures.run("pf-function-space", **{**TINY["pf-function-space"], "depth": depth, "sde_factor": 4})
        gaps.append(r.numbers["models"][0]["sde"]["relative_gap"])
    assert gaps[1] < gaps[0]


def test_eoc_parameters():
    assert pf_models.eoc_sigma_w("relu", 0.0) == pytest.approx(math.sqrt(2))
    sigma_b = 0.2
    sigma_w = pf_models.eoc_sigma_w("tanh", sigma_b)
    nodes, weights = np.polynomial.hermite_e.hermegauss(101)
    weights = weights / weights.sum()
    q = 1.0
    for _ in range(5000):
        q = sigma_w**2 * np.sum(weights * np.tanh(math.sqrt(q) * nodes) ** 2) + sigma_b**2
    chi = sigma_w**2 * np.sum(weights * (1 - np.tanh(math.sqrt(q) * nodes) ** 2) ** 2)
    assert chi == pytest.approx(1.0, abs=1e-6)


def test_first_pc_fraction_is_one_for_perfectly_correlated_outputs():
    rng = np.random.default_rng(0)
    shape = np.linspace(-2, 2, 7) ** 2 + 1
    assert pf_models.top_pc_fraction(rng.normal(size=(50, 1)) * shape) == pytest.approx(1.0)
    assert pf_models.top_pc_fraction(rng.normal(size=(500, 7))) < 0.4


def test_hurst_estimate_is_the_packages_estimator(tiny_results):
    r = figures.run("marion-fbm", hursts=(0.3,), length=128, realisations=30, resamples=20)
    entry = r.numbers["per_hurst"][0]
    from limits.fractional import FractionalNoise

    fgn = FractionalNoise(0.3, 128).sample(30, generator(0, "figures", "marion-fbm", 0.3))
    assert entry["estimate"] == pytest.approx(estimate_hurst(fgn), abs=1e-12)
    lo, hi = entry["estimate_ci95"]
    assert lo <= entry["estimate"] <= hi


def test_settings_that_do_not_apply_are_refused():
    with pytest.raises(SettingsError) as info:
        figures.run("marion-fbm", width=8)
    assert info.value.name == "width" and "--hursts" in info.value.message
    with pytest.raises(SettingsError) as info:
        figures.run("chizat-maximal", hursts=(0.3,))
    assert info.value.name == "hursts"
    with pytest.raises(SettingsError):
        figures.run("no-such-figure")
    with pytest.raises(SettingsError):
        figures.run("marion-fbm", hursts=(0.5, 1.2))
    with pytest.raises(SettingsError):
        figures.run("pf-correlation", draws=2)
    with pytest.raises(SettingsError) as info:  # past 100 the states overflow: it was an internal error (issue 46)
        figures.run("pf-2d", sigma_w=1e6)
    assert info.value.name == "sigma_w" and "≤ 100" in info.value.message


def test_cli_exit_codes(tmp_path, capsys):
    args = ["--figure", "marion-fbm", "--length", "64", "--realisations", "40", "--resamples", "20", "--quiet"]
    out = tmp_path / "fbm.json"
    assert figures.main([*args, "--hurst-tolerance", "0.2", "--json", str(out), "--plot", str(tmp_path / "fbm.svg")]) == 0
    validate(json.loads(out.read_text()))
    assert (tmp_path / "fbm.svg").exists()
    assert figures.main([*args, "--hurst-tolerance", "1e-9"]) == 1
    capsys.readouterr()
    assert figures.main(["--figure", "marion-fbm", "--width", "8"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --width") and "\n" not in err
    assert figures.main(["--figure", "marion-fbm", "--hursts", "0.5,1.5"]) == 2
    assert figures.main(["--figure", "nope"]) == 2
    assert figures.main([]) == 2
    capsys.readouterr()
    assert figures.main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in figures.FIGURES)


def test_abc_prefers_the_flat_prior_on_a_constant_and_refuses_bad_data(capsys):
    """P&F App. B.1's check can fail for a real reason: on three points of one constant, the nearly constant
    EO_tanh draws lie closer than SR_tanh's (log ratio > 0 with its whole interval: FAIL)."""
    size = dict(draws=300, inputs=20, resamples=200)  # the default networks (32 × 64; EO 48 × 100)
    flat = figures.run("pf-abc", **size, data=((-1.5, 0.3), (0.0, 0.3), (1.5, 0.3)))
    assert flat.verdict == "FAIL" and flat.numbers["log_distance_ratio"]["value"] > 0, flat.table()
    sr, eo = flat.numbers["models"]
    assert sr["model"] == "SR_tanh" and len(sr["posterior"]) == 10 and len(sr["posterior"][0]) == 20
    assert sr["threshold"] >= sr["mean_accepted_distance"] and eo["threshold"] >= eo["mean_accepted_distance"]
    for argv, needle in ((["--data", "1:2,foo"], "must look like z:y"), (["--data", "3:0"], "must lie in [-2, 2]"),
                         (["--accepted", "100", "--draws", "50"], "more than the 50 draws")):
        assert figures.main(["--figure", "pf-abc", *argv, "--quiet"]) == 2
        assert needle in capsys.readouterr().err


@pytest.mark.slow
def test_abc_prefers_the_flexible_prior_on_the_default_bump():
    """The paper's claim at the default run (2000 draws, 30 s): SR_tanh's posterior lies closer to the bump."""
    result = figures.run("pf-abc")
    assert result.verdict == "PASS", result.table()


def test_chizat_maximal_exact_mean_fails_on_a_wrong_weight_scale(monkeypatch):
    """Doob's bounds hold for any plausible implementation; the exact E[S^L] does not: blocks whose output weights
    have variance 1.15× too large (σ_v √1.15) FAIL it (z ≈ 9), while both Doob checks still PASS (at 1.5× the
    tail check fails too, at κ = 2 only)."""
    import validation.figures.catalogue.chizat_maximal as figures_module

    def wrong_scale(alphas, **kwargs):
        return chizat_spread(alphas, **{**kwargs, "sigma_v": kwargs["sigma_v"] * math.sqrt(1.15)})

    monkeypatch.setattr(figures_module, "chizat_spread", wrong_scale)
    result = figures.run("chizat-maximal", networks=300, layers=30, resamples=100)
    verdicts = {c["check"]: c["verdict"] for c in result.checks}
    exact = [v for k, v in verdicts.items() if "(exact)" in k]
    assert exact and all(v == "FAIL" for v in exact), verdicts
    assert all(v == "PASS" for k, v in verdicts.items() if "(exact)" not in k), verdicts


def test_too_few_draws_decide_nothing(monkeypatch):
    """pf-relu on 4 networks per depth: bootstrap intervals over 4 draws put the identity's bounded drift outside
    ± 0.1 and said FAIL. Below MIN_VERDICT_SAMPLES every check is INCONCLUSIVE, saying why (planted: the minimum at 2
    gives the FAIL back)."""
    from validation.core import checks

    few = {**TINY["pf-relu"], "draws": 4}
    result = figures.run("pf-relu", **few)
    assert result.verdict == "INCONCLUSIVE" and result.exit_code == 4
    assert all(c["verdict"] == "INCONCLUSIVE" for c in result.checks)
    assert any("4 networks per depth, fewer than" in c["detail"] for c in result.checks)
    monkeypatch.setattr(checks, "MIN_VERDICT_SAMPLES", 2)
    assert figures.run("pf-relu", **few).verdict == "FAIL"


def test_a_missed_rejection_without_power_is_not_a_fail(monkeypatch):
    """pf-qualitative on 50 draws: Mardia's tests leave the non-Gaussian pairs unrejected (no power at that size), which
    read FAIL. Below POWER_DRAWS (the size the tests' power was measured at) an expected rejection that does not come
    is INCONCLUSIVE (planted: POWER_DRAWS at 50 gives the FAIL back)."""
    from validation.figures.catalogue import pf_qualitative

    few = {**TINY["pf-qualitative"], "draws": 50}
    result = figures.run("pf-qualitative", **few)
    missed = [c for c in result.checks if "not rejected on 50 draws" in c["detail"]]
    assert missed and all(c["verdict"] == "INCONCLUSIVE" for c in missed) and result.verdict == "INCONCLUSIVE"
    monkeypatch.setattr(pf_qualitative, "POWER_DRAWS", 50)
    assert figures.run("pf-qualitative", **few).verdict == "FAIL"


#: pf-function-space at a size (under a second) where the SC models' checks do not FAIL unplanted
FUNCTION_SPACE = dict(width=16, depth=32, inputs=12, draws=100, sde_factor=4, eoc_width=16, eoc_depth=30, resamples=100)


def _sc_checks(result, words):
    return [c["verdict"] for c in result.checks if c["check"].startswith("SC_") and words in c["check"]]


def test_pf_function_space_fails_an_sde_with_twice_the_bias_scale(monkeypatch):
    """Planted: the limit misstated — the SDE integrated on the network's own Brownian path but with σ_b doubled.
    The ResNet ≈ SDE check of both SC models FAILs (RMS gap / SD about 0.8); unplanted neither FAILs."""
    import dataclasses

    from validation.figures.catalogue import pf_function_space

    assert "FAIL" not in _sc_checks(figures.run("pf-function-space", **FUNCTION_SPACE), "its SDE")
    original = pf_function_space.resnet_outputs

    def wrong_limit(s, activation, z, draws, sde_factor, *rest, **keywords):
        net, _ = original(s, activation, z, draws, sde_factor, *rest, **keywords)
        _, sde = original(dataclasses.replace(s, sigma_b=2 * s.sigma_b), activation, z, draws, sde_factor, *rest,
                          **keywords)
        return net, sde

    monkeypatch.setattr(pf_function_space, "resnet_outputs", wrong_limit)
    assert _sc_checks(figures.run("pf-function-space", **FUNCTION_SPACE), "its SDE") == ["FAIL", "FAIL"]


def test_pf_function_space_fails_resnet_samples_that_are_constant_in_z(monkeypatch):
    """Planted records: every ResNet draw replaced by the constant function of its value at z = −2 — degenerate
    function samples, as the EOC networks'. The "not degenerate" check of both SC models FAILs; unplanted both PASS."""
    from validation.figures.catalogue import pf_function_space

    assert _sc_checks(figures.run("pf-function-space", **FUNCTION_SPACE), "not degenerate") == ["PASS", "PASS"]
    original = pf_function_space.resnet_outputs

    def constant_in_z(*args, **keywords):
        return tuple(np.repeat(x[:, :1], x.shape[1], axis=1) for x in original(*args, **keywords))

    monkeypatch.setattr(pf_function_space, "resnet_outputs", constant_in_z)
    assert _sc_checks(figures.run("pf-function-space", **FUNCTION_SPACE), "not degenerate") == ["FAIL", "FAIL"]


def _constant_network_draws(resnet_outputs):
    """A plant: ``resnet_outputs`` with every network draw replaced by the constant function of its first value (the
    SDE's draws kept) — degenerate samples over the inputs."""

    def constant(*args, **keywords):
        values, sde = resnet_outputs(*args, **keywords)
        return np.repeat(values[:, :1], values.shape[1], axis=1), sde

    return constant


def _checks_of(result, prefix):
    return [c["verdict"] for c in result.checks if c["check"].startswith(prefix)]


#: pf-correlation at a size (under a second) where no check FAILs unplanted
CORRELATION = dict(width=16, depth=32, inputs=12, draws=100, eoc_width=32, eoc_depth=60, resamples=100)


def test_pf_correlation_fails_resnet_samples_that_are_constant_in_z(monkeypatch):
    """Planted records: every ResNet draw replaced by the constant function of its first value — outputs perfectly
    correlated across inputs, as the EOC networks' degenerate limit. "correlations far from 1" FAILs for both SC
    models; unplanted both PASS."""
    from validation.figures.catalogue import pf_correlation

    assert _checks_of(figures.run("pf-correlation", **CORRELATION), "SC_") == ["PASS", "PASS"]
    monkeypatch.setattr(pf_correlation, "resnet_outputs", _constant_network_draws(pf_correlation.resnet_outputs))
    assert _checks_of(figures.run("pf-correlation", **CORRELATION), "SC_") == ["FAIL", "FAIL"]


def test_pf_correlation_fails_eoc_outputs_independent_across_inputs(monkeypatch):
    """Planted records: each input's EOC outputs permuted over the draws on their own, so the outputs at two inputs
    are independent (ρ ≈ 0), not the near-1 correlation of the edge of chaos: "all close to 1" FAILs for both EOC
    networks; unplanted neither FAILs."""
    from validation.figures.catalogue import pf_correlation

    assert "FAIL" not in _checks_of(figures.run("pf-correlation", **CORRELATION), "EO_")
    original = pf_correlation.eoc_outputs

    def independent(*args, **keywords):
        out, params = original(*args, **keywords)
        rng = np.random.default_rng(0)
        return np.stack([rng.permutation(column) for column in out.T], axis=1), params

    monkeypatch.setattr(pf_correlation, "eoc_outputs", independent)
    assert _checks_of(figures.run("pf-correlation", **CORRELATION), "EO_") == ["FAIL", "FAIL"]


@pytest.mark.parametrize("name, sizes, check", [("pf-correlation", CORRELATION, "EO_tanh"),
                                                 ("pf-function-space", FUNCTION_SPACE, "EO_tanh")])
def test_eoc_checks_fail_tanh_networks_ten_percent_into_the_chaotic_phase(name, sizes, check, monkeypatch):
    """Planted (tests/planted_entries.py eoc-tanh-chaotic-110): EO_tanh drawn at 1.1× its edge-of-chaos σ_w, where the
    edge is claimed. Its outputs decorrelate across inputs, and the EOC check FAILs at the default EOC sizes and
    thresholds (only the ResNets and the draws are small); unplanted it PASSes."""
    import planted_entries

    monkeypatch.setattr(pf_models, "eoc_sigma_w", pf_models.eoc_sigma_w)   # restored after the plant replaces it
    sizes = {**sizes, "eoc_width": 48, "eoc_depth": 100, "draws": 300}
    assert _checks_of(figures.run(name, **sizes), check) == ["PASS"]
    planted_entries._eoc_tanh_chaotic()
    assert _checks_of(figures.run(name, **sizes), check) == ["FAIL"]


#: pf-2d at a size (under a second) where both checks PASS unplanted
PF_2D = dict(width=16, depth=32, inputs=6, draws=100, resamples=100)


def test_pf_2d_fails_resnet_samples_that_are_constant_over_the_plane(monkeypatch):
    """Planted records: every ResNet draw replaced by the constant function of its value at the grid's first point —
    degenerate samples over z ∈ [−2, 2]². The non-degeneracy check FAILs for both SC models; unplanted both PASS."""
    from validation.figures.catalogue import pf_2d

    assert _checks_of(figures.run("pf-2d", **PF_2D), "SC_") == ["PASS", "PASS"]
    monkeypatch.setattr(pf_2d, "resnet_outputs", _constant_network_draws(pf_2d.resnet_outputs))
    assert _checks_of(figures.run("pf-2d", **PF_2D), "SC_") == ["FAIL", "FAIL"]


def test_marion_fbm_fails_noise_drawn_with_a_hurst_index_off_by_a_twentieth(monkeypatch):
    """Planted: the fractional noise drawn with H + 0.05 where H is claimed — the nearest wrong model, 2.5 times the
    0.02 tolerance. Every "H recovered" check FAILs; unplanted every one PASSes (n = 256, 100 realisations)."""
    from validation.figures.catalogue import marion_fbm

    size = dict(length=256, realisations=100, resamples=100)
    assert [c["verdict"] for c in figures.run("marion-fbm", **size).checks] == ["PASS"] * 3
    original = marion_fbm.FractionalNoise
    monkeypatch.setattr(marion_fbm, "FractionalNoise", lambda hurst, *rest, **keywords: original(
        hurst + 0.05, *rest, **keywords))
    assert [c["verdict"] for c in figures.run("marion-fbm", **size).checks] == ["FAIL"] * 3
