"""The ``dim-width`` sweep of chaintron2026-linear: the finite-width term √(D/(LM)) as a function of the embedding
dimension D (finite M against the exact M = ∞ network at fixed L and M), which GROWS as D^½ — exponent −½ in the
entry's convention error ∝ size^−p — and a planted alternative it must reject (``Entry.rejects``).

A referee's point: the ``width`` and ``depth-width`` sweeps vary M and L at one D, so the √D of √(D/(LM)) — the units'
N(0, D) scale, the maximal-local-update residual scale √D/(LM) in standard-normal units — is never tested. The
plant is the residual scale α/(LM) in standard-normal units instead, i.e. α/(LM√D) in the entry's N(0, D) units,
trained by the same gradient descent (rate η·D·LM, as the unplanted network with α = 1): its finite-width error is
Chizat's α/√(LM), the same at every D (exponent 0). It is built through the names the entry builds its networks with
(both the finite network and the M = ∞ one: the plant is a model, not a mismatch between the two).

The plant first tried, the entry's own ``alpha`` set to 1/√D (the residual scale α/(LM) with the learning rates the
authors tie to α, so that the unit updates grow by √D), does not FAIL on the exponent: its M = ∞ network diverges at
large D (losses 1e9 to 1e37 by step 4 at D = 64 and 256 for seeds 1 and 2), so the fit is undefined; at seed 0,
where it trains, p = −0.162 [−0.204, −0.128] (the preset's sizes, 6 steps).

Each test runs the ``dim-width`` sweep alone (the other sweeps are left out of the run) at the preset's L = 16,
M = 4 × 256 and D = 16 … 256 (the widths where LM ≥ 64·D), with 6 steps instead of 15: the checked step 5 is the
preset's own; about 20 s each on one core.
"""

from __future__ import annotations

import math

import pytest

from limits.embedded_resnet import EmbeddedResNet, InfiniteWidthResNet
from validation.training import chaintron2026, run
from validation.training.catalogue import EXPERIMENTS

EXPERIMENT = "chaintron2026-linear"
#: the preset's L, M (4 × ``hidden``) and widths up to the largest fitted D = 256, 6 steps, 32 replicates
SIZES = dict(depth=16, hidden=256, widths=(16, 32, 64, 128, 256), epochs=6, replicates=32, resamples=300, workers=1,
             checkpoint_dir="none")


class FiniteAlphaOverLM(EmbeddedResNet):
    """The plant's finite network: the residual scale α/(LM) in standard-normal units — α/(LM√D) in N(0, D) ones —
    trained by the unplanted gradient descent (rate η·D·LM): in :class:`EmbeddedResNet`'s update, whose rate is
    η·D·LM/α², the residual scale α/√D with the rate η/D."""

    def __init__(self, w_e, w_u, u, v, *, alpha: float = 1.0, activation="identity") -> None:
        super().__init__(w_e, w_u, u, v, alpha=alpha / math.sqrt(u.shape[2]), activation=activation)

    def step(self, x, y, eta):
        return super().step(x, y, eta / self.dim)


class InfiniteAlphaOverLM(InfiniteWidthResNet):
    """The plant's network at M = ∞ (the same model and optimiser as :class:`FiniteAlphaOverLM`)."""

    def __init__(self, w_e, w_u, depth, steps, *, alpha: float = 1.0) -> None:
        super().__init__(w_e, w_u, depth, steps, alpha=alpha / math.sqrt(w_e.shape[1]))

    def step(self, x, y, eta):
        return super().step(x, y, eta / self.dim)


def _dim_width(monkeypatch) -> tuple[str, float, tuple[float, float], tuple[float, float], list[int]]:
    """The ``dim-width`` check run alone at :data:`SIZES`: its verdict, the exponent p (error ∝ D^−p), its interval,
    the band the paper's exponent allows and the fitted sizes."""
    entry = type(EXPERIMENTS[EXPERIMENT])          # its class holds the sweeps (restored after the test)
    monkeypatch.setattr(entry, "sweeps", tuple(sweep for sweep in entry.sweeps if sweep.key == "dim-width"))
    result = run(EXPERIMENT, **SIZES)
    (check,) = result.numbers["checks"]
    sweep = EXPERIMENTS[EXPERIMENT].sweep("dim-width", result.settings)
    entry_numbers = result.numbers["sweeps"]["dim-width"]
    fit = entry_numbers["hidden_exponents"][result.numbers["checked_step"]]
    assert fit["defined"], check          # an error that is not finite and positive: no exponent to judge
    low, high = -fit["ci"][1], -fit["ci"][0]
    return (check["verdict"], -fit["slope"], (low, high), (sweep.exponent - sweep.margin, sweep.exponent + sweep.margin),
            entry_numbers["fitted_sizes"])


def test_the_dim_width_check_passes_an_error_growing_as_root_dim(monkeypatch):
    """L = 16, M = 1024, fitted D = 16 … 256, 32 replicates, after 5 steps: p = −0.525 [−0.554, −0.501] PASS
    (seed 0; −0.527 [−0.564, −0.487] and −0.538 [−0.572, −0.504] at seeds 1 and 2): the error grows as D^½."""
    verdict, p, (low, high), (lowest, highest), fitted = _dim_width(monkeypatch)
    assert fitted == [16, 32, 64, 128, 256]                    # LM = 16 384 ≥ 64·D up to D = 256
    assert verdict == "PASS" and lowest <= low <= high <= highest and p < 0     # growing in D


def test_the_dim_width_check_fails_a_residual_scale_without_the_root_dim(monkeypatch):
    """The residual scale α/(LM) in standard-normal units (α/(LM√D) here), the same gradient descent: p = −0.010
    [−0.039, 0.017] FAIL (seed 0; 0.024 [−0.011, 0.058] and 0.031 [0.001, 0.061] at seeds 1 and 2): an error
    α/√(LM) that does not grow with D, its interval far above the band −½ ± 0.1."""
    monkeypatch.setattr(chaintron2026, "EmbeddedResNet", FiniteAlphaOverLM)
    monkeypatch.setattr(chaintron2026, "InfiniteWidthResNet", InfiniteAlphaOverLM)
    verdict, p, (low, _), (_, highest), _ = _dim_width(monkeypatch)
    assert verdict == "FAIL" and low > highest and abs(p) < 0.15


NONLINEAR = "chaintron2026-nonlinear"


def _nonlinear_dim_width(monkeypatch) -> tuple[str, float, tuple[float, float], tuple[float, float]]:
    """The nonlinear entry's ``dim-width`` check run alone at :data:`SIZES` (tanh): M = 1024 against 2M = 2048
    nested units at each D (no exact M = ∞ network for tanh blocks); verdict, p, its interval and the band."""
    entry = type(EXPERIMENTS[NONLINEAR])
    monkeypatch.setattr(entry, "sweeps", tuple(sweep for sweep in entry.sweeps if sweep.key == "dim-width"))
    result = run(NONLINEAR, **SIZES)
    (check,) = result.numbers["checks"]
    sweep = EXPERIMENTS[NONLINEAR].sweep("dim-width", result.settings)
    fit = result.numbers["sweeps"]["dim-width"]["hidden_exponents"][result.numbers["checked_step"]]
    assert fit["defined"], check
    assert result.numbers["sweeps"]["dim-width"]["fitted_sizes"] == [16, 32, 64, 128, 256]
    return (check["verdict"], -fit["slope"], (-fit["ci"][1], -fit["ci"][0]),
            (sweep.exponent - sweep.margin, sweep.exponent + sweep.margin))


@pytest.mark.slow
def test_the_nonlinear_dim_width_check_passes_an_error_growing_as_root_dim(monkeypatch):
    """tanh blocks, L = 16, M = 1024 against 2048, D = 16 … 256, 32 replicates, after 5 steps: p = −0.510
    [−0.532, −0.489] PASS at seed 0 (−0.541 [−0.558, −0.522] at seed 1); about 100 s on one busy core."""
    verdict, p, (low, high), (lowest, highest) = _nonlinear_dim_width(monkeypatch)
    assert verdict == "PASS" and lowest <= low <= high <= highest and p < 0


@pytest.mark.slow
def test_the_nonlinear_dim_width_check_fails_a_residual_scale_without_the_root_dim(monkeypatch):
    """The same plant as the linear entry's (the residual scale α/(LM) in standard-normal units), on tanh blocks:
    p = 0.004 [−0.018, 0.025] FAIL at seed 0 — an error that does not grow with D."""
    monkeypatch.setattr(chaintron2026, "EmbeddedResNet", FiniteAlphaOverLM)
    verdict, p, (low, _), (_, highest) = _nonlinear_dim_width(monkeypatch)
    assert verdict == "FAIL" and low > highest and abs(p) < 0.15
