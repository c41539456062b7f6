"""Planted alternatives of the ``pf-qualitative`` figure (Peluchetti & Favaro §3.4): each test perturbs the SC models
the figure builds — never its tests' levels or rules — and asserts that the check aimed at that claim FAILs, after
the unplanted run at the same sizes PASSes. The entry declares these tests in ``rejects``.
"""

from __future__ import annotations

import functools

import pytest

from validation.figures import study as figures
from validation.figures.catalogue import pf_qualitative

#: the default width, depth and draws (2000: the draws the tests' power was measured at), fewer permutations and SDE
#: steps
SIZES = dict(sde_factor=2, resamples=199)


def _verdicts(result) -> dict[str, str]:
    return {check["check"]: check["verdict"] for check in result.checks}


def _plant(monkeypatch: pytest.MonkeyPatch, **changed) -> None:
    """The SC models (the blocks built with i.i.d. biases; the planted controls name their own ``cov_b``) built with
    ``changed`` in place of their own parameters."""
    real = pf_qualitative.PFBlock

    @functools.wraps(real)
    def planted(*args, **kwargs):
        if "cov_b" not in kwargs:
            kwargs.update(changed)
        return real(*args, **kwargs)

    monkeypatch.setattr(pf_qualitative, "PFBlock", planted)


@pytest.fixture(scope="module")
def honest():
    result = figures.run("pf-qualitative", **SIZES)
    assert result.verdict == "PASS", result.table()
    return _verdicts(result)


def test_pf_qualitative_fails_resnets_whose_bias_variances_differ_across_coordinates(honest, monkeypatch):
    """Planted: the SC ResNets and their limits with bias variances σ_b²·(0.5 … 1.5) across the coordinates (the
    figure's own first control, put in the models' place): the coordinates' marginal laws differ, so §3.4's
    exchangeability is false and its check must FAIL for every model; the non-Gaussian checks are untouched."""
    _plant(monkeypatch, cov_b=("diag", 0.5, 1.5))
    planted = _verdicts(figures.run("pf-qualitative", **SIZES))
    exchangeable = {name: v for name, v in planted.items() if "coordinates exchangeable" in name}
    assert len(exchangeable) == 4 and set(exchangeable.values()) == {"FAIL"}, planted
    assert all(v == "PASS" for name, v in honest.items() if "coordinates exchangeable" in name), honest


def test_pf_qualitative_fails_resnets_whose_blocks_barely_read_the_state(honest, monkeypatch):
    """Planted: the SC models with σ_w = 0.1 in place of 1 — blocks whose weights are ten times too small, so the
    quadratic variation σ_b² + σ_w²‖ψ(x)‖²/D hardly depends on the state and x_T is nearly Gaussian (the wide
    networks' Gaussian-process law that §3.4 says the limit does not have). Measured, seed 0: Mardia's b_2 7.97 and
    8.07–8.20 against 8, p ≥ 0.047 > 0.01, so every "not Gaussian" check must FAIL. (σ_w = 0 is no model: the two
    inputs' outputs then differ by a constant and their pair law is singular.)"""
    _plant(monkeypatch, sigma_w=0.1)
    planted = _verdicts(figures.run("pf-qualitative", **SIZES))
    gaussian = {name: v for name, v in planted.items() if "not Gaussian" in name}
    assert len(gaussian) == 4 and set(gaussian.values()) == {"FAIL"}, planted
    assert all(v == "PASS" for name, v in honest.items() if "not Gaussian" in name), honest
