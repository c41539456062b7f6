"""Peluchetti & Favaro §3.4 "Non-smooth activations" (the pf-relu figure) and SM B.3's function samples over (L, D)
(the pf-sizes figure): the simulators against hand-written recursions and closed forms, the checks on planted
cases that must come out the other way, and each figure at a small size."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from limits.activations import get_activation
from limits.peluchetti_favaro import simulate_gram
from limits.seeding import generator
from validation.figures import study as figures
from validation.figures.catalogue import pf_relu, pf_sizes
from validation.figures.pf_models import homogeneous_ode, homogeneous_outputs
from validation.core.settings import SettingsError

RELU_SMALL = dict(width=6, depths=(16, 64, 256), draws=400, resamples=200)
SIZES_SMALL = dict(depths=(64, 128), widths=(16, 32), draws=200, judged_depth=64, judged_width=16, resamples=200)


@pytest.fixture(scope="module")
def relu_small():
    return figures.run("pf-relu", **RELU_SMALL)


@pytest.fixture(scope="module")
def sizes_small():
    return figures.run("pf-sizes", **SIZES_SMALL)


# ------------------------------------------------------------------------------------------ the simulators
def test_homogeneous_outputs_is_the_recursion_by_hand():
    depth, width, draws, chunk, z = 5, 3, 7, 4, 0.7
    out = homogeneous_outputs(["relu", "identity"], [0.5, 1.0], "tanh", z, width, depth, draws, sigma_w=1.3,
                              sigma_b=0.6, seed=3, labels=("check",), chunk=chunk)
    for c, start in enumerate(range(0, draws, chunk)):
        size = min(chunk, draws - start)
        for phi in ("relu", "identity"):
            for gamma in (0.5, 1.0):
                gen = generator(3, "figures", "check", depth, c)
                x = torch.full((size, width), z, dtype=torch.float64)
                for _ in range(depth):
                    eps = torch.randn((size, width, width + 1), generator=gen, dtype=torch.float64)
                    for i in range(size):  # one network at a time: W (D × D) and b (D)
                        w, b = eps[i, :, :width] * 1.3 / math.sqrt(width), eps[i, :, width] * 0.6
                        h = (1 / depth) ** gamma * (w @ torch.tanh(x[i]) + b)
                        x[i] = x[i] + (torch.relu(h) if phi == "relu" else h)
                assert np.allclose(out[(phi, gamma)][start:start + size], (x - z).numpy(), rtol=1e-12, atol=1e-12)


def test_positive_homogeneity_is_the_scaling_of_one_layer():
    # one layer of depth L: E[φ(Δt^γ h)]/Δt = E[φ(h)] Δt^{γ−1} — exactly, draw by draw, on the same weights
    width, draws = 4, 300
    one = {L: homogeneous_outputs(["relu"], [0.5, 1.0], "tanh", 1.0, width, 1, draws, sigma_w=1.0, sigma_b=1.0,
                                  seed=0, labels=("one-layer",)) for L in (1,)}[1]
    h_plus = one[("relu", 1.0)]                      # φ(h) itself (Δt = 1)
    assert np.allclose(one[("relu", 0.5)], h_plus)
    assert h_plus.mean() == pytest.approx(math.sqrt(1 + math.tanh(1.0) ** 2) / math.sqrt(2 * math.pi), rel=0.1)


def test_the_neural_ode_has_its_closed_forms():
    # σ_w = 0: m' = σ_b/√(2π); ψ = identity: m(t) = (σ_b/σ_w) sinh(σ_w t/√(2π) + asinh(σ_w z/σ_b))
    assert homogeneous_ode("relu", "tanh", 1.0, sigma_w=0.0, sigma_b=1.5) == pytest.approx(1.5 / math.sqrt(2 * math.pi))
    z, sw, sb = 0.4, 1.2, 0.8
    exact = sb / sw * math.sinh(sw / math.sqrt(2 * math.pi) + math.asinh(sw * z / sb)) - z
    assert homogeneous_ode("relu", "identity", z, sigma_w=sw, sigma_b=sb) == pytest.approx(exact, rel=1e-10)
    assert homogeneous_ode("identity", "tanh", 1.0, sigma_w=1.0, sigma_b=1.0) == 0.0


# ------------------------------------------------------------------------------------------ pf-relu
def test_relu_figure_passes_and_measures_the_papers_exponents(relu_small):
    r = relu_small
    assert r.verdict == "PASS", r.table()
    fits = {(m["phi"], m["gamma"]): m for m in r.numbers["models"]}
    assert abs(fits[("relu", 0.5)]["mean_exponent"]["exponent"] - 0.5) < 0.05
    assert abs(fits[("relu", 1.0)]["variance_exponent"]["exponent"] + 1) < 0.05
    assert abs(fits[("identity", 0.5)]["variance_exponent"]["exponent"]) < 0.05
    assert len(r.checks) == 6


def test_relu_checks_come_out_the_other_way_on_swapped_cases(relu_small):
    fits = {(m["phi"], m["gamma"]): m for m in relu_small.numbers["models"]}
    n = RELU_SMALL["draws"]
    # the ReLU network at γ = ½ does not keep a bounded drift; the identity does
    assert pf_relu.bounded_drift_check("relu", fits[("relu", 0.5)]["per_depth"], 0.1, n).verdict == "FAIL"
    assert pf_relu.bounded_drift_check("id", fits[("identity", 0.5)]["per_depth"], 0.1, n).verdict == "PASS"
    # γ = 1 is not a diffusion (variance exponent −1, not 0); γ = ½ is not deterministic (0, not −1)
    assert pf_relu.exponent_check("x", fits[("relu", 1.0)]["variance_exponent"], 0.0, 0.1, n).verdict == "FAIL"
    assert pf_relu.exponent_check("x", fits[("relu", 0.5)]["variance_exponent"], -1.0, 0.1, n).verdict == "FAIL"
    # the ReLU mean at γ = 1 converges: its exponent is 0, not ½
    depths = (16, 32, 64)
    fit = pf_relu.exponent_fit(depths, [_relu_samples(L, 1.0, draws=200) for L in depths],
                                  pf_relu.displacement_mean, 100, np.random.default_rng(0))
    assert pf_relu.exponent_check("x", fit, 0.5, 0.1, n).verdict == "FAIL"


def _relu_samples(depth: int, gamma: float, psi: str = "tanh", draws: int = 300) -> np.ndarray:
    return homogeneous_outputs(["relu"], [gamma], psi, 1.0, 6, depth, draws, sigma_w=1.0, sigma_b=1.0, seed=0,
                               labels=("test-pf-relu", psi))[("relu", gamma)]


def test_an_unbounded_psi_blows_up_faster_than_the_drift():
    # ψ = identity feeds the drift back through ‖x‖: E[x_T − x_0] grows like exp(c√L), so the check of L^{1/2} FAILs
    depths = (16, 64, 256)
    fit = pf_relu.exponent_fit(depths, [_relu_samples(L, 0.5, "identity", 200) for L in depths],
                                  pf_relu.displacement_mean, 100, np.random.default_rng(1))
    assert fit["exponent"] > 1.0 and fit["local_exponents"][1] > fit["local_exponents"][0]
    assert pf_relu.exponent_check("x", fit, 0.5, 0.1, 200).verdict == "FAIL"


def test_relu_figure_refuses_two_depths():
    with pytest.raises(SettingsError, match="at least three depths"):
        figures.run("pf-relu", **{**figures.SMOKE["pf-relu"], "depths": (8, 16)})
    with pytest.raises(SettingsError, match="drift_tolerance"):
        figures.run("pf-relu", **{**figures.SMOKE["pf-relu"], "drift_tolerance": 0.0})


# ------------------------------------------------------------------------------------------ pf-sizes
def test_pooled_statistics_are_the_coordinates_pooled():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 3, 5)) @ rng.standard_normal((5, 5))    # (N, D, K)
    first = torch.as_tensor(x.sum(1))[None]
    second = torch.einsum("ndk,ndl->nkl", torch.as_tensor(x), torch.as_tensor(x))[None]
    cov = pf_sizes.pooled_covariances(first, second, 3)[0].numpy()
    assert np.allclose(cov, np.cov(x.reshape(-1, 5).T), rtol=1e-12)
    grid = np.linspace(-2, 2, 5)
    stats = {k: float(v[0]) for k, v in pf_sizes.size_statistics(torch.as_tensor(cov)[None], grid).items()}
    corr = np.corrcoef(x.reshape(-1, 5).T)
    assert stats["ρ(0, 1)"] == pytest.approx(corr[2, 3]) and stats["ρ(-2, 2)"] == pytest.approx(corr[0, 4])
    assert stats["log SD(2)"] == pytest.approx(0.5 * math.log(cov[4, 4]))
    assert stats["first PC"] == pytest.approx(np.linalg.eigvalsh(cov)[-1] / np.trace(cov))


def test_sizes_figure_reads_simulate_gram():
    r = figures.run("pf-sizes", **figures.SMOKE["pf-sizes"])
    cell = r.numbers["models"][0]["cells"][0]
    s = figures.SMOKE["pf-sizes"]
    grid = np.linspace(-2, 2, s["inputs"])
    x = simulate_gram(get_activation("tanh"), grid, cell["width"], cell["depth"], s["draws"], sigma_w=1.0,
                      sigma_b=1.0, seed=0, stream=f"figures/pf-sizes/tanh/{cell['depth']}/{cell['width']}",
                      dtype=torch.float64, keep=None).numpy()
    cov = np.cov(x.transpose(0, 1, 2).reshape(-1, s["inputs"]).T)
    assert cell["statistics"]["log SD(0)"] == pytest.approx(0.5 * math.log(cov[2, 2]), rel=1e-10)


def test_sizes_figure_passes_where_the_cells_are_deep_and_wide_enough(sizes_small):
    r = sizes_small
    assert r.verdict == "PASS", r.table()
    assert len(r.checks) == 12
    reference = [c for c in r.numbers["models"][0]["cells"] if c["reference"]]
    assert [(c["depth"], c["width"]) for c in reference] == [(128, 32)]


def test_sizes_check_fails_on_a_planted_difference(sizes_small):
    # a cell whose statistic moved by 0.3 (well beyond its interval) must FAIL the agreement
    cells = [dict(c) for c in sizes_small.numbers["models"][0]["cells"]]
    moved = next(c for c in cells if not c["reference"])
    moved["differences"] = {k: dict(v) for k, v in moved["differences"].items()}
    d = moved["differences"]["ρ(0, 1)"]
    d["value"] += 0.3
    d["ci95"] = [d["ci95"][0] + 0.3, d["ci95"][1] + 0.3]
    assert pf_sizes.agreement_check("x", cells, "ρ(0, 1)", 0.1, 200).verdict == "FAIL"
    assert pf_sizes.agreement_check("x", sizes_small.numbers["models"][0]["cells"], "ρ(0, 1)", 0.1,
                                      200).verdict == "PASS"


def test_shallow_tanh_networks_are_measurably_narrower():
    # the real disagreement the default table shows: at L = 16 SC_tanh's spread at |z| = 2 is about 30% smaller than at
    # L = 64 (tanh clips the large pre-activations of the large states) — judged, the scale check FAILs
    r = figures.run("pf-sizes", depths=(16, 64), widths=(16,), draws=300, judged_depth=16, judged_width=16,
                    resamples=200)
    checks = {c["check"].split(" agrees")[0]: c for c in r.checks}
    assert checks["SC_tanh: log SD(2)"]["verdict"] == "FAIL"
    assert checks["SC_tanh: ρ(0, 1)"]["verdict"] == "PASS"
    cell = next(c for c in r.numbers["models"][0]["cells"] if c["depth"] == 16)
    assert cell["differences"]["log SD(2)"]["value"] < -0.2


def test_sizes_figure_refuses_a_grid_with_nothing_to_judge():
    with pytest.raises(SettingsError, match="judged"):
        figures.run("pf-sizes", **{**figures.SMOKE["pf-sizes"], "judged_depth": 8, "judged_width": 8})
    with pytest.raises(SettingsError, match="inputs"):
        figures.run("pf-sizes", **{**figures.SMOKE["pf-sizes"], "inputs": 3})
    with pytest.raises(SettingsError, match="widths"):
        figures.run("pf-sizes", **{**figures.SMOKE["pf-sizes"], "widths": (8, 4)})
    with pytest.raises(SettingsError, match="widths"):
        figures.run("pf-relu", widths=(4, 8))
