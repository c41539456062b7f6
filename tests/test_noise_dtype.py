"""Brownian increments drawn in float32 and read in float64 (``--noise-dtype float32``): the same path for
every reader, the law unchanged up to float32 rounding, the rate unchanged within its interval (seconds)."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from limits import make_pair
from limits.brownian import BrownianGrid
from limits.initialisation import FractionalRegime, IIDRegime, SmoothRegime
from validation import convergence
from validation.core.one_pass import sde_pass

SIZE = dict(samples=200, depths=(4, 8, 16, 32, 64), reference_steps=1024, bootstrap=400)


def test_float32_normals_are_cast_not_resampled():
    """The float64 path with float32 noise is exactly the float32 draw, cast and scaled: its entries are float32
    numbers (a round trip through float32 is exact) and the seed fixes them."""
    grid = BrownianGrid(50, 3, 64, seed=3, noise_dtype=torch.float32)
    again = BrownianGrid(50, 3, 64, seed=3, noise_dtype=torch.float32)
    block = grid.block(0)
    assert block.dtype == torch.float64
    torch.testing.assert_close(block, again.block(0), rtol=0, atol=0)
    normals = block / grid._scale
    torch.testing.assert_close(normals.float().double(), normals, rtol=0, atol=0)
    default = BrownianGrid(50, 3, 64, seed=3)
    assert default.noise_dtype == torch.float64 and not torch.equal(default.block(0), block)


def test_law_of_the_float32_path_matches_to_float32_rounding():
    """Moments of 2^21 increments: mean 0 and variance dt within their sampling error, and the float32
    rounding of each normal is below 2^-24 relative (what changes the law, at the 1e-7 level)."""
    grid = BrownianGrid(512, 4, 1024, seed=0, noise_dtype=torch.float32, block_steps=1024)
    increments = grid.block(0).double()
    dt = grid.dt
    n = increments.numel()
    assert abs(float(increments.mean())) < 5 * (dt / n) ** 0.5
    assert abs(float(increments.var()) / dt - 1) < 5 * (2 / n) ** 0.5
    normals = torch.randn(10_000, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    rounding = ((normals.float().double() - normals).abs() / normals.abs()).max()
    assert rounding <= 2.0**-24


def test_every_reader_sees_the_same_float32_path():
    """The network, the Euler references and a second scheme read one float32-drawn path: res1's network at
    depth L equals its limit's Euler scheme at step 1/L bit for bit, as with float64 noise."""
    pair = make_pair("res1", samples=8, width=3)
    limit = pair.limit_sde()

    def euler(h, t, dt, dW):
        return h + limit.f(t, h) * dt + limit.g_prod(t, h, dW)

    passed = sde_pass(pair, [4, 16], 64, seed=2, schemes={"network": pair.network_step, "euler": euler},
                      noise_dtype=torch.float32)
    for a, b in zip(passed.states["network"], passed.states["euler"]):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)
    assert passed.info["noise_dtype"] == "float32"


def test_rate_with_float32_noise_agrees_with_float64_noise():
    runs = {nd: convergence.run("res1", noise_dtype=nd, **SIZE) for nd in ("float64", "float32")}
    wide, narrow = runs["float64"].fit, runs["float32"].fit
    assert narrow.ci[0] <= wide.rate <= narrow.ci[1] and wide.ci[0] <= narrow.rate <= wide.ci[1]
    # another path: the numbers change, the float64 run is the earlier default bit for bit
    assert not np.array_equal(runs["float64"].errors.final_sq, runs["float32"].errors.final_sq)
    assert runs["float32"].to_dict()["settings"]["noise_dtype"] == "float32"
    again = convergence.run("res1", noise_dtype="float32", **SIZE)
    np.testing.assert_array_equal(again.errors.final_sq, runs["float32"].errors.final_sq)


@pytest.mark.parametrize("argv, message", [
    (["--model", "res1", "--noise-dtype", "float16"], "noise"),
    (["--model", "res1-ode", "--noise-dtype", "float32"], "--noise-dtype: applies to SDE pairs only"),
])
def test_bad_noise_dtype_is_bad_input(argv, message):
    done = subprocess.run([sys.executable, "-m", "validation.convergence", *argv, "--quiet"], capture_output=True,
                          text=True)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("regime", [IIDRegime("uniform"), IIDRegime("normal"), FractionalRegime(0.3)])
def test_weights_drawn_in_float32_are_float32_numbers_read_in_float64(regime):
    """i.i.d. and fractional weights with noise_dtype float32: float64 tensors holding float32 draws (a round trip
    through float32 is exact up to the 1/√d scale, applied after the draw for fGn), fixed by the seed; the default
    is the float64 draw, unchanged."""
    args = (3, ("t", 1), 16, 5, torch.float64, "cpu")
    V, W = regime.network_weights(*args, noise_dtype=torch.float32)
    again, _ = regime.network_weights(*args, noise_dtype=torch.float32)
    assert V.dtype == torch.float64 and torch.equal(V, again)
    unit = V * 5 ** 0.5 if isinstance(regime, FractionalRegime) else V
    if isinstance(regime, IIDRegime):
        assert torch.equal(unit.float().double(), unit)
    default, _ = regime.network_weights(*args)
    explicit, _ = regime.network_weights(*args, noise_dtype=torch.float64)
    assert torch.equal(default, explicit) and not torch.equal(default, V)
    torch.testing.assert_close(V.std(), default.std(), rtol=0.2, atol=0)


def test_smooth_weights_refuse_a_noise_dtype():
    with pytest.raises(ValueError, match="smooth weights"):
        SmoothRegime(0.1).network_weights(0, ("t",), 8, 3, torch.float64, "cpu", noise_dtype=torch.float32)
    assert subprocess.run([sys.executable, "-m", "validation.regimes", "--preset", "fig4", "--noise-dtype", "float32",
                           "--quiet"], capture_output=True).returncode == 2


def test_phase_and_regimes_take_a_float32_draw():
    from validation.phase import study as phase
    from validation.regimes import study as regimes

    small = dict(hursts=(0.3, 0.7), betas=(0.2, 0.6, 1.0), depth=32, networks=2, inputs=2, workers=1,
                 dtype="float64")  # the phase diagram computes in float32 by default: its draw is float32 already
    drawn32 = phase.run(noise_dtype="float32", **small).to_dict()
    assert drawn32["settings"]["noise_dtype"] == "float32"
    grid32, grid64 = drawn32["result"]["grid"], phase.run(**small).to_dict()["result"]["grid"]
    assert grid32.keys() == grid64.keys() and grid32["main_r_h_median_log10"] != grid64["main_r_h_median_log10"]
    tiny = dict(samples=4, depths=(10, 100, 1000))  # regimes computes in float64 by default
    sweep = regimes.run("fig1", noise_dtype="float32", **tiny)
    assert sweep.settings.noise_dtype == "float32" and sweep.verdict in ("PASS", "FAIL", "INCONCLUSIVE")  # 4 draws decide
    # no quantile bound (Props. 2 / 6): with no exceedance they settle only at about 30 draws per cell

    def medians(result):  # per β, per depth: the median ratios r_h and r_p of the JSON's result section
        per_beta = result.to_dict()["result"]["per_beta"]
        return {key: np.array([entry[key]["median"] for entry in per_beta]) for key in ("r_h", "r_p")}

    drawn32, default = medians(sweep), medians(regimes.run("fig1", **tiny))
    drawn64 = medians(regimes.run("fig1", noise_dtype="float64", **tiny))
    for key in ("r_h", "r_p"):
        assert np.array_equal(drawn64[key], default[key])  # float64 weights are the default draw, bit for bit
        assert np.all(np.isfinite(drawn32[key])) and drawn32[key].shape == default[key].shape == (3, 3)
        # the float32 draw is another draw of the weights: the medians move
        assert not np.array_equal(drawn32[key], default[key]), f"{key}: noise_dtype=float32 did not change the draw"
