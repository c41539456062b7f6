"""The authors' grid of shapes (validation.training.chaintron2026_grid): the joint fit of the bound recovers planted
exponents and says which terms a grid resolves; the entry measures every cell against the limit, and a planted
residual scale α/L instead of α/(LM) fails its width check."""

from __future__ import annotations

import numpy as np
import pytest

from validation.training.chaintron2026_grid import authors_fit, fit_bound


def _grid(depths, hiddens, dims):
    L, M, D = np.meshgrid(np.asarray(depths, float), np.asarray(hiddens, float), np.asarray(dims, float), indexing="ij")
    return L.ravel(), M.ravel(), D.ravel()


def _planted(L, M, D, constants, exponents, replicates=24, noise=0.05, seed=1):
    """Cells × replicates of log errors from the bound in quadrature with these constants and exponents."""
    (c_l, c_w, c_d), (p, q, r) = constants, exponents
    exact = 0.5 * np.log(c_l**2 * L ** (-2 * p) + c_w**2 * (D / (L * M)) ** (2 * q) + c_d**2 * D ** (-2 * r))
    rng = np.random.default_rng(seed)
    return exact[:, None] + noise * rng.standard_normal((len(L), replicates))


def test_the_joint_fit_recovers_planted_exponents_and_resolves_the_terms_that_lead():
    L, M, D = _grid((8, 16, 32, 64, 128), (64, 256, 1024, 4096, 16384), (64, 256, 1024, 4096))
    logs = _planted(L, M, D, (1.0, 0.5, 0.4), (1.0, 0.5, 0.5))
    fit = fit_bound(L, M, D, logs, resamples=200)
    for key, exponent in (("depth", 1.0), ("width", 0.5), ("embedding", 0.5)):
        term = fit["terms"][key]
        assert term["resolved"], key
        assert abs(term["exponent"] - exponent) < 0.05 and term["ci"][0] < exponent < term["ci"][1], (key, term)
    # a wrong exponent is measured as such (the check can fail): q = 0.8 planted
    wrong = fit_bound(L, M, D, _planted(L, M, D, (1.0, 0.5, 0.4), (1.0, 0.8, 0.5)), resamples=200)
    assert abs(wrong["terms"]["width"]["exponent"] - 0.8) < 0.05 and wrong["terms"]["width"]["ci"][0] > 0.6


def test_a_term_that_never_leads_is_not_resolved():
    L, M, D = _grid((8, 16, 32), (256, 1024, 4096), (64, 128))
    fit = fit_bound(L, M, D, _planted(L, M, D, (1e-3, 0.5, 0.6), (1.0, 0.5, 0.5)), resamples=100)
    assert not fit["terms"]["depth"]["resolved"] and fit["terms"]["depth"]["leading_cells"] == []
    assert fit["terms"]["width"]["resolved"]


def test_the_authors_fit_recovers_their_constants():
    L, M, D = _grid((60, 100, 200), (20, 100, 400), (20, 100, 400))
    errors = np.sqrt(0.9 * D / (M * L) + 2.0 / D + 5.0 / L**2)
    fit = authors_fit(L, M, D, errors)
    assert fit["cells"] == 27
    assert fit["alpha"] == pytest.approx(0.9, rel=1e-6) and fit["beta"] == pytest.approx(2.0, rel=1e-6)
    assert fit["gamma"] == pytest.approx(5.0, rel=1e-5)


GRID = dict(depths=(8, 16, 32), hiddens=(512, 1024, 2048), widths=(64, 128), epochs=6, replicates=6, resamples=100,
            checkpoint_dir="none")


def _width_check(result):
    return next(c["verdict"] for c in result.numbers["checks"] if c["check"].startswith("width"))


def test_the_grid_entry_measures_every_cell_against_the_limit_and_a_planted_scale_fails(monkeypatch):
    from planted_entries import ScaledByDepthOnly
    from validation.training import chaintron2026_grid, run

    result = run("chaintron2026-grid", **GRID)
    records = result.records
    assert sorted(records) == ["L16-D128", "L16-D64", "L32-D128", "L32-D64", "L8-D128", "L8-D64"]
    assert np.asarray(records["L8-D64"]["hidden_error"]).shape == (3, 6, 6)      # M × replicate × step
    assert all(0 < bias < 1e-5 for bias in result.numbers["reference_bias"])
    fit = result.numbers["fit"]
    assert fit is not None and fit["terms"]["width"]["resolved"]
    assert _width_check(result) != "FAIL"
    monkeypatch.setattr(chaintron2026_grid, "EmbeddedResNet", ScaledByDepthOnly)
    planted = run("chaintron2026-grid", **GRID)       # α/L: M times the residual scale, the training diverges
    assert planted.verdict == "FAIL" and "not finite" in planted.numbers["checks"][0]["detail"]


def test_the_grid_entry_refuses_nonlinear_blocks_and_sizes_that_do_not_increase():
    from validation.core.settings import SettingsError
    from validation.training import run

    with pytest.raises(SettingsError) as caught:
        run("chaintron2026-grid", **{**GRID, "activation": "tanh"})
    assert caught.value.name == "activation"
    with pytest.raises(SettingsError) as caught:
        run("chaintron2026-grid", **{**GRID, "widths": (128, 64)})
    assert caught.value.name == "widths"
