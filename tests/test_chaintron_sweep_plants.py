"""Planted alternatives for the ``depth`` and ``embedding`` sweeps of chaintron2026-linear and
chaintron2026-nonlinear (``Entry.rejects``, tests/test_alternatives.py).

A referee's point: the depth sweep (the network at M = ∞, L against 2L) PASSes for any consistent discretisation in
depth (exponent 1), and the embedding sweep (D against 2D, or against D = ∞) for any dynamics that depends on the
embedding E through EᵀE/D with independent rows (exponent ½, the central limit theorem): unless a planted error
makes them FAIL, they confirm little. Each test below runs one sweep alone (the entry's other sweeps are left out
of the run, nothing else changes), first unplanted — it must PASS at those sizes — then with the model or its draws
changed in one documented way, through the name the experiment builds it with, and asserts that the check FAILs
on the fitted exponent itself: its interval lies outside the paper's exponent ± the margin (not a diverged
network). Nothing here touches a verdict rule (margins, intervals, fits, the fitted sizes).

The plants:

* depth — the M = ∞ network of depth L reads its input through an embedding scaled by 1 + c/√L
  (:data:`DEPTH_CONSTANT` c = 1; the budget entry's ``OffByRootDepth`` in tests/planted_entries.py, for the M = ∞
  network): every hidden state, h₀ = (1 + c/√L) W_e x included, gains a term of order L^(-1/2), so the difference
  between L and 2L falls as L^(-1/2), not 1/L;
* embedding — the embedding's entries are still N(0, 1), but each column is a fractional Gaussian noise along the
  coordinates d with Hurst index :data:`HURST` H = 0.9 (correlation ρ(k) ≈ H(2H − 1) k^(2H−2) = 0.72 k^(-0.2) between
  rows k apart, not summable): EᵀE/D still tends to I — the same limit — but its entries fluctuate as
  D^(2H−2) = D^(-0.2) (the non-central limit theorem for long memory: Hermite rank 2, H > ¾), not D^(-1/2). A
  smaller embedding still holds the first rows of a larger one (the factor is lower-triangular).

The plant first tried for the embedding, Student-t entries scaled to unit variance (infinite fourth moment, so
that the diagonal of EᵀE/D fluctuates as D^(2/ν − 1)), does not FAIL robustly on the exponent: at ν = 2.5 (D^(-0.2))
an outsized entry (up to 450 among 128 × 2048 × 6) makes a replicate's training diverge — at seeds 0 and 1 with
the linear embedding test's sizes, so the fit is undefined (a FAIL, but on divergence); at seed 2 p = 0.107
[0.043, 0.183]. At ν = 3 (D^(-1/3)): p = 0.353 [0.296, 0.403] INCONCLUSIVE at seed 0, 0.263 and 0.265 (FAIL) at
seeds 1 and 2, and diverged replicates again at seeds 6 and 11 (widths to 1024).
"""

from __future__ import annotations

import functools
import math

import torch

from limits import embedded_resnet
from limits.embedded_resnet import EmbeddedResNet, InfiniteWidthResNet
from validation.training import chaintron2026, run
from validation.training.catalogue import EXPERIMENTS

#: c of the depth plant: the input embedding of depth L scaled by 1 + c/√L (as ``budget-depth-half``'s)
DEPTH_CONSTANT = 1.0
#: the Hurst index of the embedding plant's rows: their Gram matrix fluctuates as D^(2H−2) = D^(-0.2)
HURST = 0.9


class InfiniteOffByRootDepth(InfiniteWidthResNet):
    """The depth plant's network at M = ∞: its input embedding scaled by 1 + c/√L."""

    def __init__(self, w_e, w_u, depth, steps, *, alpha: float = 1.0) -> None:
        super().__init__(w_e * (1 + DEPTH_CONSTANT / math.sqrt(depth)), w_u, depth, steps, alpha=alpha)


class OffByRootDepth(EmbeddedResNet):
    """The depth plant for the nonlinear entry, whose M = ∞ network is an :class:`EmbeddedResNet` of N Monte-Carlo
    units on the embedding's n-dimensional form: its input embedding scaled by 1 + c/√L (its hidden states, read
    back on the D coordinates, are scaled with it)."""

    def __init__(self, w_e, w_u, u, v, *, alpha: float = 1.0, activation="identity") -> None:
        super().__init__(w_e * (1 + DEPTH_CONSTANT / math.sqrt(u.shape[1])), w_u, u, v, alpha=alpha,
                         activation=activation)


@functools.lru_cache(maxsize=4)
def _long_memory_factor(dim: int) -> torch.Tensor:
    """The lower Cholesky factor of the covariance of fractional Gaussian noise of length ``dim``, Hurst index
    :data:`HURST`: γ(k) = ½(|k + 1|^(2H) − 2|k|^(2H) + |k − 1|^(2H)), γ(0) = 1."""
    k = torch.arange(dim, dtype=torch.float64)
    gamma = 0.5 * ((k + 1) ** (2 * HURST) - 2 * k ** (2 * HURST) + (k - 1).abs() ** (2 * HURST))
    index = torch.arange(dim)
    return torch.linalg.cholesky(gamma[(index[:, None] - index[None, :]).abs()])


def long_memory_draws(*args, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    """The embedding plant's draws: :func:`limits.embedded_resnet.embedding_draws` with each column of W_e and W_u
    (its D independent N(0, 1) rows) mapped to a fractional Gaussian noise by the lower-triangular factor of its
    covariance — entries N(0, 1), columns and replicates independent, the first D rows of a larger draw the draw at
    D, and rows with long memory."""
    w_e, w_u = embedded_resnet.embedding_draws(*args, **kwargs)
    factor = _long_memory_factor(w_e.shape[1]).to(w_e.dtype)
    return torch.einsum("ij,rjk->rik", factor, w_e), torch.einsum("ij,rjk->rik", factor, w_u)


def _sweep(experiment: str, key: str, sizes: dict) -> tuple[str, float, tuple[float, float], tuple[float, float]]:
    """The check of sweep ``key`` (run alone) at ``sizes``: its verdict, the fitted exponent p, its interval and the
    band the paper's exponent allows."""
    result = run(experiment, **sizes)
    (check,) = result.numbers["checks"]
    sweep = EXPERIMENTS[experiment].sweep(key, result.settings)
    fit = result.numbers["sweeps"][key]["hidden_exponents"][result.numbers["checked_step"]]
    assert fit["defined"], check          # an error that is not finite and positive: no exponent to judge
    low, high = -fit["ci"][1], -fit["ci"][0]
    return check["verdict"], -fit["slope"], (low, high), (sweep.exponent - sweep.margin, sweep.exponent + sweep.margin)


def _alone(monkeypatch, experiment: str, key: str) -> None:
    """Run only sweep ``key`` of ``experiment`` (the entry's other sweeps are not measured)."""
    entry = type(EXPERIMENTS[experiment])          # its class holds the sweeps (restored on the class after the test)
    monkeypatch.setattr(entry, "sweeps", tuple(sweep for sweep in entry.sweeps if sweep.key == key))


LINEAR_DEPTH = dict(depths=(4, 8, 16, 32, 64, 128), hiddens=(16, 32), widths=(16, 32), depth=8, width=4, hidden=128,
                    epochs=6, replicates=16, resamples=300, workers=1, checkpoint_dir="none")
LINEAR_EMBEDDING = dict(LINEAR_DEPTH, depths=(4, 8), widths=(64, 128, 256, 512, 1024, 2048), replicates=32)
NONLINEAR_DEPTH = dict(depths=(4, 8, 16, 32, 64), hiddens=(32, 64), widths=(16, 64), depth=8, width=8, hidden=64,
                       epochs=6, replicates=8, resamples=300, workers=1, checkpoint_dir="none")
NONLINEAR_EMBEDDING = dict(NONLINEAR_DEPTH, depths=(4, 8), widths=(64, 128, 256, 512, 1024, 2048), replicates=32)


def test_the_depth_check_fails_a_depth_error_of_order_one_over_root_depth(monkeypatch):
    """chaintron2026-linear, ``depth`` (M = ∞, L against 2L; fitted L = 8, 16, 32, 64; 16 replicates): unplanted
    p = 1.015 [1.010, 1.018] PASS (seed 0; 0.991 [0.979, 1.001] and 1.015 [0.989, 1.054] at seeds 1 and 2); with the
    input embedding scaled by 1 + 1/√L, p = 0.498 [0.493, 0.500] FAIL (0.492 [0.477, 0.502], 0.482 [0.412, 0.536]):
    the planted term, about 80 times the depth error at L = 8 (seed 0), sets the exponent ½."""
    _alone(monkeypatch, "chaintron2026-linear", "depth")
    verdict, _, _, _ = _sweep("chaintron2026-linear", "depth", LINEAR_DEPTH)
    assert verdict == "PASS"
    monkeypatch.setattr(chaintron2026, "InfiniteWidthResNet", InfiniteOffByRootDepth)
    verdict, p, (_, high), (lowest, _) = _sweep("chaintron2026-linear", "depth", LINEAR_DEPTH)
    assert verdict == "FAIL" and high < lowest and 0.4 < p < 0.6


def test_the_embedding_check_fails_draws_whose_gram_matrix_escapes_the_central_limit(monkeypatch):
    """chaintron2026-linear, ``embedding`` (M = ∞, D against 2D on the first D coordinates; fitted D = 64 … 1024;
    4 × 32 replicates): unplanted p = 0.453 [0.414, 0.487] PASS (seed 0; 0.482 [0.447, 0.523] and 0.528
    [0.478, 0.570] at seeds 1 and 2); with rows of long memory (H = 0.9: D^(-0.2)), p = 0.188 [0.134, 0.258] FAIL
    (0.156 [0.100, 0.217], 0.122 [0.060, 0.173])."""
    _alone(monkeypatch, "chaintron2026-linear", "embedding")
    verdict, _, _, _ = _sweep("chaintron2026-linear", "embedding", LINEAR_EMBEDDING)
    assert verdict == "PASS"
    monkeypatch.setattr(chaintron2026, "embedding_draws", long_memory_draws)
    verdict, p, (_, high), (lowest, _) = _sweep("chaintron2026-linear", "embedding", LINEAR_EMBEDDING)
    assert verdict == "FAIL" and high < lowest


def test_the_nonlinear_depth_check_fails_a_depth_error_of_order_one_over_root_depth(monkeypatch):
    """chaintron2026-nonlinear (tanh), ``depth`` (M = ∞ in its n-dimensional form, L against 2L with the same 2¹⁸
    units; fitted L = 8, 16, 32; 8 replicates): unplanted p = 1.012 [0.991, 1.025] PASS (seed 0; 1.011
    [0.984, 1.022] and 0.991 [0.978, 1.007] at seeds 1 and 2); with the input embedding scaled by 1 + 1/√L,
    p = 0.499 [0.497, 0.500] FAIL (0.500 [0.499, 0.500], 0.470 [0.453, 0.485]), its Monte-Carlo remainder ≤ 0.001."""
    _alone(monkeypatch, "chaintron2026-nonlinear", "depth")
    verdict, _, _, _ = _sweep("chaintron2026-nonlinear", "depth", NONLINEAR_DEPTH)
    assert verdict == "PASS"
    monkeypatch.setattr(chaintron2026, "EmbeddedResNet", OffByRootDepth)
    verdict, p, (_, high), (lowest, _) = _sweep("chaintron2026-nonlinear", "depth", NONLINEAR_DEPTH)
    assert verdict == "FAIL" and high < lowest and 0.4 < p < 0.6


def test_the_nonlinear_embedding_check_fails_draws_whose_gram_matrix_escapes_the_central_limit(monkeypatch):
    """chaintron2026-nonlinear (tanh), ``embedding`` (M = ∞ in its n-dimensional form, D against D = ∞ with the same
    2¹⁵ units; fitted D = 64 … 2048; 4 × 32 replicates): unplanted p = 0.493 [0.454, 0.526] PASS (seed 0; 0.502
    [0.470, 0.535] and 0.487 [0.455, 0.518] at seeds 1 and 2); with rows of long memory (H = 0.9: D^(-0.2)),
    p = 0.163 [0.098, 0.225] FAIL (0.224 [0.165, 0.270], 0.254 [0.217, 0.303])."""
    _alone(monkeypatch, "chaintron2026-nonlinear", "embedding")
    verdict, _, _, _ = _sweep("chaintron2026-nonlinear", "embedding", NONLINEAR_EMBEDDING)
    assert verdict == "PASS"
    monkeypatch.setattr(chaintron2026, "embedding_draws", long_memory_draws)
    verdict, p, (_, high), (lowest, _) = _sweep("chaintron2026-nonlinear", "embedding", NONLINEAR_EMBEDDING)
    assert verdict == "FAIL" and high < lowest
