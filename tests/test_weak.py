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
                              "--weak-reference", "64", "--weak-fit-from", "2", "--permutations", "400",
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


def test_energy_test_batches_are_the_one_by_one_permutations():
    """The permutations are evaluated 64 at a time as one matrix product; the p-value is the count of the same
    permutations, drawn in the same order, evaluated one by one (the test as it was written first). Planted: the
    within-sample term of the second sample taken as the first's changes the count."""
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(300, 2)), rng.normal(size=(250, 2)) + [0.15, 0.0]
    stat, p = energy_test(x, y, permutations=150, seed=4)

    def one_by_one(planted=False):
        draw = np.random.default_rng(4)
        pooled = np.concatenate([x, y])
        dist = np.sqrt(((pooled[:, None] - pooled[None]) ** 2).sum(-1))
        n, m = len(x), len(y)

        def energy(labels):
            a = labels.astype(float)
            b = 1 - a
            within_b = a @ dist @ a if planted else b @ dist @ b
            return 2 * (a @ dist @ b) / (n * m) - (a @ dist @ a) / n**2 - within_b / m**2

        labels = np.r_[np.ones(n, bool), np.zeros(m, bool)]
        observed = energy(labels)
        exceed = sum(energy(draw.permutation(labels)) >= observed for _ in range(150))
        return observed, (1 + exceed) / 151

    assert (stat, p) == pytest.approx(one_by_one(), rel=1e-12, abs=0)
    assert p != pytest.approx(one_by_one(planted=True)[1], rel=1e-12, abs=0)


def test_too_few_permutations_to_reject_is_bad_input(capsys):
    """At the Bonferroni threshold alpha / (3 × models) = 0.01/6, 500 permutations (the old default) give a smallest
    p-value 1/501 = 0.0020: the energy test could never reject, so the run is refused, naming the least count; with
    one model (threshold 0.01/3) 500 are enough."""
    assert main(["--permutations", "500"]) == 2
    assert "use at least 600" in capsys.readouterr().err
    small = ["--no-weak", "--draws", "20", "--width", "2", "--depth", "2", "--sde-steps", "2", "--quiet"]
    assert main(["--permutations", "600", *small]) in (0, 1)
    assert main(["--permutations", "500", "--models", "tanh", *small]) in (0, 1)


def test_the_sde_without_its_ito_drift_fails(tmp_path):
    """The calibration's planted alternative of the weak study (tests/planted_entries.py
    ``weak-sde-without-ito-drift``): the limit SDE sampled without ½ φ''(0) q dt, at small sizes; SC_swish's
    tests reject it (the energy test too, at its default permutations), SC_tanh's (φ''(0) = 0) do not."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "tests" / "planted_entries.py"), "weak-sde-without-ito-drift",
                          "--no-weak", "--draws", "1000", "--width", "100", "--depth", "100", "--sde-steps", "100",
                          "--workers", "1", "--quiet", "--json", str(tmp_path / "r.json")], capture_output=True, text=True,
                         cwd=root)
    assert out.returncode == 1, out.stderr[-2000:]
    tests = json.loads((tmp_path / "r.json").read_text())["result"]["models"]
    assert all(t["p_value"] < 0.01 / 6 for t in tests["swish"]["tests"].values())
    assert all(t["p_value"] > 0.01 / 6 for t in tests["tanh"]["tests"].values())


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
