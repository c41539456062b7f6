"""The weak (in-law) study: the two-sample tests, the weak-rate fit, the coupled pass, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torchsde

from limits.brownian import BrownianGrid
from limits.pairs import ModelConfig, run_network
from limits.peluchetti_favaro import PFPair
from validation.core.rate_fit import fit_rate
from validation.weak import coupled_outputs, energy_test, main


def test_energy_test_accepts_equal_laws_and_rejects_different_ones():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(800, 2))
    y = rng.normal(size=(800, 2))
    _, p_same = energy_test(x, y, permutations=200, seed=1)
    assert p_same > 0.05
    # same marginals, different dependence: only a joint test sees it
    y_corr = np.c_[y[:, 0], 0.6 * y[:, 0] + 0.8 * y[:, 1]]
    stat, p_diff = energy_test(x, y_corr, permutations=200, seed=1)
    assert p_diff < 0.01 and stat > 0


def test_weak_fit_recovers_a_known_rate():
    rng = np.random.default_rng(3)
    depths = [4, 8, 16, 32, 64]
    mean = 2.0 / np.asarray(depths, float)
    diffs = mean + rng.normal(size=(4000, len(depths))) * 0.2 / np.sqrt(depths)
    fit = fit_rate(depths, diffs, "abs-mean", seed=0, resamples=500, method="percentile")
    assert abs(fit.rate - 1.0) < 0.1 and fit.ci[0] < 1.0 < fit.ci[1]
    assert np.allclose(fit.errors, np.abs(diffs.mean(0)))


def test_coupled_pass_matches_the_network_and_torchsde():
    """The weak study's one-pass reader: the network of every depth equals the layer-by-layer network on
    the same path, and its Euler reference equals torchsde's Euler (both to rounding)."""
    pair = PFPair(ModelConfig(width=3, activation="tanh", options={"x0": "1"}), 6, seed=0)
    depths, n = [2, 4, 16], 64
    res = coupled_outputs(pair, depths, n, seed=9, block_steps=8)  # layers of depth 2 and 4 span several blocks
    path = BrownianGrid(6, pair.noise_dim, n, seed=9, block_steps=8)
    for L in depths:
        assert torch.allclose(res["network"][L], run_network(pair, L, driver=path), rtol=1e-12, atol=1e-12)
    ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
    h0 = pair.initial_state()
    ref = torchsde.sdeint(pair.limit_sde(), h0, ts, bm=path, method="euler", dt=1 / n)[-1]
    assert torch.allclose(res["reference"], ref, rtol=1e-12, atol=1e-12)
    coarse = torchsde.sdeint(pair.limit_sde(), h0, ts, bm=path, method="euler", dt=1 / 4)[-1]
    assert torch.allclose(res["euler"][4], coarse, rtol=1e-12, atol=1e-12)


def test_cli_small_run_writes_json(tmp_path):
    out = tmp_path / "weak.json"
    plot = tmp_path / "weak.png"
    code = main(["--models", "swish", "--draws", "300", "--width", "20", "--depth", "20",
                              "--sde-steps", "20", "--weak-draws", "400", "--weak-depths", "2:8",
                              "--weak-reference", "64", "--weak-fit-from", "2", "--permutations", "50",
                              "--quiet", "--json", str(out), "--plot", str(plot)])
    assert code in (0, 1)
    data = json.loads(out.read_text())
    result = data["result"]
    assert result["verdict"] in ("PASS", "FAIL") and result["verdict"] == ("PASS" if code == 0 else "FAIL")
    assert {"seed", "versions", "command", "started_utc"} <= set(data["run"])
    assert data["run"]["dtypes"] == {"sc_checks": "float32", "weak_error": "float64"}
    assert set(result["p_values"]) == {"SC_swish ks_z0", "SC_swish ks_z1", "SC_swish energy_joint"}
    weak = result["models"]["swish"]["weak"]["functions"]
    assert set(weak) == {"sqnorm", "cos"} and len(weak["cos"]["network"]["errors"]) == 3
    assert plot.stat().st_size > 10_000


@pytest.mark.parametrize("argv,message", [
    (["--weak-reference", "100"], "power of two"),
    (["--weak-depths", "2:8", "--weak-reference", "8"], "finer than"),
    (["--weak-fit-from", "256"], "fewer than two"),
])
def test_cli_bad_input_is_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--inputs", "0"], ["--models", "relu"], ["--draws", "5"], ["--alpha", "2"]])
def test_cli_bad_arguments_exit_2(argv):
    assert main(argv) == 2


@pytest.mark.slow
def test_sc_checks_pass_at_moderate_size():
    """SC_tanh and SC_swish at D = L = 200 with 4000 draws: no two-sample test rejects at 1%."""
    assert main(["--draws", "4000", "--width", "200", "--depth", "200", "--sde-steps", "200",
                              "--no-weak", "--quiet"]) == 0
