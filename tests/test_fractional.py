"""Fractional Gaussian noise: covariance, H = ½ is i.i.d., Hurst recovery, seeding, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from limits.fractional import (
    FractionalNoise,
    FractionalNoiseError,
    davies_harte_eigenvalues,
    estimate_hurst,
    fgn_autocovariance,
)
from limits.seeding import generator


def test_autocovariance_formula() -> None:
    gamma = fgn_autocovariance(0.7, 4)
    h2 = 1.4
    expected = [1.0] + [0.5 * ((k + 1) ** h2 - 2 * k**h2 + (k - 1) ** h2) for k in (1, 2, 3)]
    np.testing.assert_allclose(gamma, expected, rtol=1e-14)
    np.testing.assert_allclose(fgn_autocovariance(0.5, 5), [1, 0, 0, 0, 0], atol=1e-15)


@pytest.mark.parametrize("hurst", [0.05, 0.2, 0.5, 0.8, 0.97])
def test_eigenvalues_nonnegative(hurst: float) -> None:
    lam = davies_harte_eigenvalues(hurst, 1000)
    assert lam.shape == (2000,)
    assert lam.min() >= 0.0


def _autocovariance_z(noise: FractionalNoise, hurst: float, n: int = 256, count: int = 2000) -> list[float]:
    """(empirical γ(k) − γ(k)) / its standard error for k = 0…5, over ``count`` sequences of length ``n``."""
    x = noise.sample(count, generator(11, "acov", hurst))
    assert x.shape == (count, n)
    gamma = fgn_autocovariance(hurst, 6)
    scores = []
    for k in range(6):
        prod = (x[:, : n - k] * x[:, k:]).mean(dim=1)  # one estimate per sequence
        scores.append((prod.mean().item() - gamma[k]) / (prod.std().item() / math.sqrt(count)))
    return scores


@pytest.mark.parametrize("hurst", [0.2, 0.5, 0.75, 0.95])
def test_empirical_autocovariance(hurst: float) -> None:
    """Empirical γ(k), k ≤ 5, over 2000 sequences of length 256 within 5 standard errors."""
    scores = _autocovariance_z(FractionalNoise(hurst, 256), hurst)
    assert all(abs(z) < 5 for z in scores), (hurst, scores)


@pytest.mark.parametrize("hurst", [0.75, 0.95])
def test_the_autocovariance_check_catches_a_wrong_last_eigen_coefficient(hurst: float) -> None:
    """The error found in the authors' Davies–Harte generator (the N-th eigen-component scaled by √(λ₀/2N), not
    √(λ_N/2N): an alternating (−1)^k ξ of variance (λ₀ − λ_N)/2N on every sequence), injected into the package's
    sampler: the check above fails at every lag, with alternating signs (|z| 13–22 here)."""
    noise = FractionalNoise(hurst, 256)
    noise._scale = noise._scale.clone()
    noise._scale[256] = noise._scale[0]
    scores = _autocovariance_z(noise, hurst)
    assert all(abs(z) > 5 for z in scores), scores
    assert all(a * b < 0 for a, b in zip(scores, scores[1:])), scores     # the sign alternates with the lag


def test_half_is_iid() -> None:
    """H = ½: lag correlations vanish and the marginal is N(0, 1) (mean, variance, kurtosis)."""
    x = FractionalNoise(0.5, 512).sample(400, generator(3, "iid")).reshape(-1)
    n = x.numel()
    assert abs(x.mean().item()) < 5 / math.sqrt(n)
    assert abs(x.var().item() - 1) < 5 * math.sqrt(2 / n)
    y = FractionalNoise(0.5, 512).sample(400, generator(3, "iid"))
    for k in (1, 2, 7):
        c = (y[:, :-k] * y[:, k:]).mean().item()
        assert abs(c) < 5 / math.sqrt(y[:, k:].numel())
    kurt = ((x - x.mean()) ** 4).mean().item() / x.var().item() ** 2
    assert abs(kurt - 3) < 5 * math.sqrt(24 / n)


@pytest.mark.parametrize("hurst", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_hurst_estimate_recovers_h(hurst: float) -> None:
    x = FractionalNoise(hurst, 1024).sample(300, generator(5, "hurst", hurst))
    assert abs(estimate_hurst(x) - hurst) < 0.02


def test_seeded_and_independent() -> None:
    noise = FractionalNoise(0.8, 64)
    a = noise.sample((3, 2), generator(1, "s"))
    b = noise.sample((3, 2), generator(1, "s"))
    c = noise.sample((3, 2), generator(2, "s"))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    # real and imaginary parts of one FFT are independent sequences: their cross-correlation is ~0
    pairs = noise.sample(4000, generator(9, "pairs"))
    cross = (pairs[0::2] * pairs[1::2]).mean().item()
    assert abs(cross) < 5 * math.sqrt(1 / 2000) * 3  # variance of the mean of fGn products ≲ 3/2000


def test_float32_and_odd_count() -> None:
    x = FractionalNoise(0.3, 100, dtype=torch.float32).sample(5, generator(0, "odd"))
    assert x.dtype == torch.float32 and x.shape == (5, 100)
    assert torch.isfinite(x).all()


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_bad_hurst(bad: float) -> None:
    with pytest.raises(FractionalNoiseError, match="allowed: 0 < H < 1"):
        FractionalNoise(bad, 10)


def test_bad_length() -> None:
    with pytest.raises(FractionalNoiseError, match="integer ≥ 1"):
        FractionalNoise(0.5, 0)


def test_negative_eigenvalue_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A covariance row whose embedding is not positive must raise, not fall back silently."""
    import limits.fractional as fr

    fr._eigenvalues.cache_clear()
    monkeypatch.setattr(fr, "fgn_autocovariance", lambda h, n: np.r_[1.0, 2.0, np.zeros(int(n) - 2)])
    with pytest.raises(FractionalNoiseError, match="not a covariance"):
        fr.davies_harte_eigenvalues(0.61, 8)
    fr._eigenvalues.cache_clear()
