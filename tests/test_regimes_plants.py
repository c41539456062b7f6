"""Planted alternatives of the regimes presets ``prop3`` and ``chizat`` (``Entry.rejects``, tests/test_alternatives.py).

Each test runs the preset at reduced sizes, asserts that it PASSes there unplanted, then plants the wrong claim as a
perturbation of the model's weights (never of the verdict: tolerances, levels and margins are the preset's) and
asserts that the named checks FAIL.
"""

from __future__ import annotations

import math

import pytest
import torch

from planted_entries import DeflatedWeights
from validation.regimes import chizat as regime_chizat
from validation.regimes import study as regimes
from validation.regimes import sweep

torch.set_num_threads(1)


def _verdicts(result: regimes.RegimesResult) -> dict[str, str]:
    return {c["check"]: c["verdict"] for c in result.numbers["checks"]}


def _starting(result: regimes.RegimesResult, prefix: str) -> dict[str, str]:
    found = {name: verdict for name, verdict in _verdicts(result).items() if name.startswith(prefix)}
    assert found, f"no check named {prefix!r}: {sorted(_verdicts(result))}"
    return found


# ------------------------------------------------------------------------------------------------ prop3

#: prop3 at β = 0.4 alone — the preset's one β at which Prop. 3's lower bound (i) applies (α² = L^-0.8 ≤ 2/((5√C +
#: 16) d) only at L = 4096, and its bound is positive there) — on the preset's depths (1024, 2048, 4096) and d = 64,
#: with 40 networks in float32: about 15–20 s a run on one core (the preset: 50 networks, 4 β, float64, ~45 s)
PROP3_SIZES = dict(betas=(0.4,), samples=40, dtype="float32")

@pytest.mark.slow   # about 40 s: the preset's depths 1024 … 4096 at d = 64
def test_prop3_lower_bound_fails_on_weights_of_variance_0_4_over_d(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the networks' i.i.d. weights drawn with variance 0.4/d instead of 1/d (the eighth-moment C of the
    bound's conditions is still the claimed law's). Res-3's E m₂ = E‖g(h, θ)‖²/‖h‖² is then 0.4²/2 = 0.08, below the
    ½ of (A₂) on which Prop. 3's lower bound (i), P(r_h² > e^(3Lα²/8 − √(11Lα²/(dδ))) − 1) ≥ 1 − δ, rests: at β = 0.4,
    L = 4096 (Lα² = 5.3) r_h² is about e^(0.08 Lα²) − 1 ≈ 0.5, under the δ = ½ bound 0.88 in every draw, so the
    "Prop. 3 bounds" check must FAIL on that (i) cell — and only there: the upper bounds (ii) still hold. Unplanted
    the median r_h² there is ≈ 11, far above the bound, and every check PASSes."""
    right = regimes.run("prop3", **PROP3_SIZES)
    assert right.verdict == "PASS", right.checks
    lower = [c for c in right.numbers["prop3_bounds"]["cells"] if c["bound_kind"] == "(i) lower"]
    assert {(c["beta"], c["depth"]) for c in lower} == {(0.4, 4096)} and len(lower) == 2, lower
    assert all(c["verdict"] == "PASS" and c["exceedances"] == 0 for c in lower), lower

    monkeypatch.setattr(sweep, "regime_of", lambda values: DeflatedWeights("uniform"))
    wrong = regimes.run("prop3", **PROP3_SIZES)
    assert _starting(wrong, "Prop. 3 bounds") == {"Prop. 3 bounds": "FAIL"}
    cells = wrong.numbers["prop3_bounds"]["cells"]
    failed = [c for c in cells if c["verdict"] == "FAIL"]
    assert [(c["bound_kind"], c["depth"], c["delta"]) for c in failed] == [("(i) lower", 4096, 0.5)], failed
    assert failed[0]["quantile"] < failed[0]["bound"] and failed[0]["interval"][0] > 0.5, failed
    assert all(c["verdict"] == "PASS" for c in cells if c["bound_kind"] == "(ii) upper")


# ----------------------------------------------------------------------------------------------- chizat

#: chizat on its own d = 40, M = 16, L = 100, 1000 networks, κ's, β's and M's (4, 16, 64), with the depth sweep to
#: 200 (not 1000) and 200 networks per M (not 400): about 10 s a run on one core. (Not fewer networks for the exact
#: spread: at 400 the heavy-tailed spread at κ = 4 puts an unplanted mean 4.4 s.e. off its exact value.)
CHIZAT_SIZES = dict(depths=(10, 20, 50, 100, 200), hidden_samples=200)


def _planted_spread(monkeypatch: pytest.MonkeyPatch, scale_u, scale_v) -> None:
    """The 2LP blocks' weights drawn with σ_u · scale_u(M), σ_v · scale_v(M) — the model only: c = dσ_v²σ_u²/2 and
    the exact values the checks compare with are still the preset's."""
    original = regime_chizat.chizat_spread

    def planted(alphas, *args, **kwargs):
        hidden = kwargs["hidden"]
        kwargs["sigma_u"] = kwargs["sigma_u"] * scale_u(hidden)
        kwargs["sigma_v"] = kwargs["sigma_v"] * scale_v(hidden)
        return original(alphas, *args, **kwargs)

    monkeypatch.setattr(regime_chizat, "chizat_spread", planted)


def test_chizat_exact_spread_fails_on_a_wrong_sigma_u(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the blocks' u_j drawn with variance 1.3/d in place of σ_u² = 1/d, so the true constant is
    c = dσ_v²σ_u²/2 = 0.65, not the stated ½. Prop. 2.1's E‖h^ℓ − x‖²/‖x‖² = (1 + cα²M)^ℓ − 1 is then wrong by about
    40% at ℓ = L (κ = 1), and the M-free value (1 + c/L)^L − 1 of §2.1 too: the three exact-spread checks and the
    hidden sweep's must FAIL. The plant keeps E h^ℓ = x and the regimes (c does not move the critical β), so those
    checks still PASS — the rejection is the constant's."""
    assert regimes.run("chizat", **CHIZAT_SIZES).verdict == "PASS"
    _planted_spread(monkeypatch, lambda m: math.sqrt(1.3), lambda m: 1.0)
    wrong = regimes.run("chizat", **CHIZAT_SIZES)
    assert set(_starting(wrong, "exact spread").values()) == {"FAIL"}
    assert set(_starting(wrong, "§2.1").values()) == {"FAIL"}
    assert set(_starting(wrong, "E h^ℓ = x").values()) == {"PASS"}
    assert set(_starting(wrong, "class of β").values()) | set(_starting(wrong, "critical β").values()) == {"PASS"}


#: the hidden width at which the planted mean-field scale agrees with the preset's σ_v (the preset's M)
CHIZAT_HIDDEN = 16


def test_chizat_hidden_sweep_fails_on_a_mean_field_output_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the blocks' v_j drawn with variance σ_v² · 16/M — a mean-field 1/M output scale, equal to the preset's
    at its own M = 16. Then the spread at ℓ = L is (1 + 16cα²)^L − 1: it depends on Lα² alone, not on MLα² as §2.1
    states, and at α = 1/√(ML) it is (1 + 8/(ML))^L − 1: 6.2 at M = 4 and 0.13 at M = 64, not (1 + c/L)^L − 1 ≈ 0.65
    at every M. The hidden sweep's check must FAIL; the exact-spread checks, run at M = 16 where the plant changes
    nothing, still PASS — only the M sweep can reject this alternative."""
    assert regimes.run("chizat", **CHIZAT_SIZES).verdict == "PASS"
    _planted_spread(monkeypatch, lambda m: 1.0, lambda m: math.sqrt(CHIZAT_HIDDEN / m))
    wrong = regimes.run("chizat", **CHIZAT_SIZES)
    assert set(_starting(wrong, "§2.1").values()) == {"FAIL"}
    assert set(_starting(wrong, "exact spread").values()) == {"PASS"}
    rows = {r["hidden"]: r["ml"] for r in wrong.numbers["hidden_sweep"]["rows"]}
    assert rows[4]["z"] > 0 > rows[64]["z"], rows                 # too large at small M, too small at large M
