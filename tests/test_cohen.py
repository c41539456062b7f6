"""Cohen et al. pairs: the Itô correction, the ablation, the ODE regime's rates, and bad input."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
import torchsde

from limits.activations import get_activation
from limits.brownian import BrownianGrid
from limits import ModelConfig, PairError, get_pair, ito_correction, run_network
from limits.cohen import CohenODE, CohenSDE, CohenSDENaive, ode_rate, third_derivative_at_zero
from validation.core.one_pass import study_errors
from validation.core.rate_fit import fit_rate, verdict


def _sde(cls=CohenSDE, samples=4, width=3, **kw):
    opts = kw.pop("options", {})
    return cls(ModelConfig(width=width, options=opts, **kw), samples, seed=1)


def test_registered():
    assert get_pair("cohen-sde") is CohenSDE
    assert get_pair("cohen-sde-naive") is CohenSDENaive
    assert get_pair("cohen-ode") is CohenODE


@pytest.mark.parametrize("act", ["shifted-softplus", "swish", "tanh"])
def test_ito_correction_matches_monte_carlo_over_one_step(act):
    """E[σ(M)] − σ'(0) E[M] over one step, M = ΔW^A h + ΔW^b (no trend), equals ½σ''(0) Q(h) dt + O(dt²).

    200 000 draws of one step of the network from a fixed h; σ'(0)M is subtracted as a control variate
    (E M = 0 exactly). The relative Monte-Carlo error is ~0.3% and the O(dt) bias ~0.1%, so a 2%
    tolerance separates ½σ''(0) from, e.g., σ''(0) or from no correction at all.
    """
    torch.manual_seed(0)
    d, n, dt = 4, 200_000, 1e-3
    pair = _sde(samples=n, width=d, activation=act, options={"trend": "zero", "s_a": 0.9, "s_b": 0.6})
    h = torch.tensor([0.7, -1.2, 0.4, 1.5], dtype=torch.float64).expand(n, d)
    gen = torch.Generator().manual_seed(123)
    dW = torch.randn((n, pair.noise_dim), generator=gen, dtype=torch.float64) * math.sqrt(dt)
    m = pair.preactivation(h, 0.0, dt, dW)
    increment = pair.network_step(h, 0.0, dt, dW) - h
    assert torch.allclose(increment, pair.activation(m))
    residual = (increment - pair.activation.d1 * m).mean(0) / dt  # (d,)
    expected = pair.correction(h[:1])[0]
    q = 0.81 / d * float((h[0] ** 2).sum()) + 0.36
    assert torch.allclose(pair.quadratic_variation(h[:1])[0], torch.full((d,), q, dtype=torch.float64))
    assert torch.allclose(expected, torch.full((d,), 0.5 * pair.activation.d2 * q, dtype=torch.float64))
    if pair.activation.d2 == 0:
        se = (increment - pair.activation.d1 * m).std(0) / math.sqrt(n) / dt
        assert torch.all(residual.abs() < 4 * se + 0.02 * q)
    else:
        assert torch.allclose(residual, expected, rtol=0.02), (residual, expected)


def test_derivatives_come_from_the_activation():
    h = torch.tensor([[1.0, 2.0, -1.0]], dtype=torch.float64)
    unit = _sde(samples=1, options={"trend": "zero", "s_a": 1.0, "s_b": 1.0})
    q = unit.quadratic_variation(h)[0, 0].item()
    assert q == pytest.approx(6.0 / 3 + 1.0)
    for name, d1, d2 in [("shifted-softplus", 1.0, 0.5), ("swish", 0.5, 0.5), ("tanh", 1.0, 0.0)]:
        act = get_activation(name)
        assert (act.d1, act.d2) == (d1, d2)
        assert ito_correction(act.d2, unit.quadratic_variation(h))[0, 0].item() == pytest.approx(0.5 * d2 * q)
        # the limit's drift and diffusion scale with σ'(0) and ½σ''(0) of the chosen activation
        pair = _sde(samples=1, activation=name, options={"trend": "zero"})
        sde = pair.limit_sde()
        v = torch.randn(1, pair.noise_dim, dtype=torch.float64)
        assert torch.allclose(sde.g_prod(0.0, h, v), d1 * pair.noise(v, h))
        assert torch.allclose(sde.f(0.0, h), torch.full_like(h, 0.5 * d2 * pair.quadratic_variation(h)[0, 0]))
        naive = _sde(CohenSDENaive, samples=1, options={"trend": "zero"}).limit_sde() if d2 else None
        if naive is not None:
            assert torch.all(naive.f(0.0, h) == 0)
    # σ'''(0): tanh −2, shifted softplus 0 (2·s(1−s)(1−2s) at s = ½), identity 0
    assert third_derivative_at_zero(get_activation("tanh")) == pytest.approx(-2.0)
    assert third_derivative_at_zero(get_activation("shifted-softplus")) == pytest.approx(0.0, abs=1e-12)
    assert third_derivative_at_zero(get_activation("identity")) == 0.0


def test_network_and_limit_read_the_same_path_and_trend():
    """With σ = identity the block h + (A_k h + b_k) IS the Euler step of the limit (no correction, σ'(0) = 1),
    so the network must equal torchsde's Euler with dt = 1/L on the same path, smooth trend included."""
    pair = _sde(samples=5, width=3, activation="identity", options={"trend": "smooth"})
    path = BrownianGrid(5, pair.noise_dim, 64, seed=3)
    h0 = pair.initial_state()
    net = run_network(pair, 16, driver=path, h0=h0)
    ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
    euler = torchsde.sdeint(pair.limit_sde(), h0, ts, bm=path, method="euler", dt=1 / 16)[-1]
    assert torch.allclose(net, euler, rtol=1e-12, atol=1e-12)


def test_smooth_trend_is_one_function_of_time():
    pair = _sde(samples=3, width=2, options={"trend": "smooth"})
    t = torch.tensor([0.25, 0.5], dtype=torch.float64)
    a, b = pair.trend.values(t)
    a1, b1 = pair.trend.at(0.5)
    assert torch.equal(a[1], a1) and torch.equal(b[1], b1)
    assert a.shape == (2, 3, 2, 2) and b.shape == (2, 3, 2)
    const = _sde(samples=3, width=2, options={"trend": "constant"})
    assert torch.equal(const.trend.at(0.1)[0], const.trend.at(0.9)[0])


def test_corrected_passes_and_naive_fails_at_small_size():
    depths = [16, 32, 64, 128, 256]
    fits = {}
    for cls in (CohenSDE, CohenSDENaive):
        pair = cls(ModelConfig(width=4), 300, seed=0)
        errors = study_errors(pair, depths, reference_steps=2048, seed=0)
        fits[cls.name] = fit_rate(depths, errors.final_sq, fit_from=32, resamples=500)
    corrected, naive = fits["cohen-sde"], fits["cohen-sde-naive"]
    assert verdict(corrected, 0.5, 0.1) == "PASS", corrected
    assert corrected.ci[0] <= 0.5 <= corrected.ci[1]
    # the naive limit: its own check passes (no decay) and it fails the rate check of a convergent pair
    assert verdict(naive, 0.0, 0.1, excluded=0.5) == "PASS", naive
    assert verdict(naive, 0.5, 0.1) == "FAIL"
    assert naive.errors[-1] > 0.8 * naive.errors[0]  # the error does not vanish
    assert naive.errors[-1] > 5 * corrected.errors[-1]


@pytest.mark.parametrize("act,beta,rate", [("shifted-softplus", 0.3, 0.3), ("tanh", 0.3, 0.6),
                                           ("shifted-softplus", 0.6, 0.6)])
def test_cohen_ode_rate(act, beta, rate):
    pair = CohenODE(ModelConfig(width=4, activation=act, beta=beta), 20, seed=0)
    assert pair.theory_rate == pytest.approx(rate)
    depths = [2**k for k in range(8, 15)]
    errors = study_errors(pair, depths, reference_steps=0, seed=0)
    fit = fit_rate(depths, errors.final_sq, fit_from=1024, resamples=300)
    assert abs(fit.rate - rate) < 0.1, fit
    assert verdict(fit, pair.theory_rate, 0.1) == "PASS"


def test_cohen_ode_theory_rate_is_computed():
    assert ode_rate(get_activation("tanh"), 0.3) == pytest.approx(0.6)
    assert ode_rate(get_activation("tanh"), 0.7) == 1.0
    assert ode_rate(get_activation("shifted-softplus"), 0.3) == pytest.approx(0.3)
    assert ode_rate(get_activation("swish"), 0.45) == pytest.approx(0.45)
    assert ode_rate(get_activation("identity"), 0.2) == 1.0
    assert CohenODE(ModelConfig(width=2), 2).beta == 0.3  # documented default


def test_cohen_ode_exact_limit_matches_torchdiffeq():
    pair = CohenODE(ModelConfig(width=3, beta=0.5), 4, seed=2)
    h0 = pair.initial_state()
    times = torch.linspace(0, 1, 9, dtype=torch.float64)
    exact = pair.solve_limit(h0, times, 1e-10, 1e-10)
    from torchdiffeq import odeint

    numeric = odeint(pair.limit_field, h0, times, rtol=1e-11, atol=1e-11)
    assert torch.allclose(exact, numeric, rtol=1e-8, atol=1e-9)
    uneven = times[[0, 1, 5, 8]]
    assert torch.allclose(pair.solve_limit(h0, uneven, 1e-10, 1e-10), exact[[0, 1, 5, 8]], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("beta", [1.0, 1.5, -0.2, float("nan")])
def test_cohen_ode_rejects_beta_outside_unit_interval(beta):
    with pytest.raises(PairError, match=r"β = .* out of range .*0 ≤ β < 1"):
        CohenODE(ModelConfig(width=2, beta=beta), 2)


def test_cohen_parametrisations_at_the_edges_of_theorem_4_4():
    """β = 0 (α = 1): the network is the Euler step of the neural ODE dH = σ(Ā H + b̄) dt — the same function;
    cohen-sde with β > 1 drops the trend from its limit; cohen-ode-noise's limit is the noise-free ODE."""
    from limits.cohen import CohenODENoise

    euler = CohenODE(ModelConfig(width=3, beta=0.0), 4, seed=1)
    h = torch.randn(4, 3, dtype=torch.float64)
    weights = tuple(w[0] for w in euler.weights(torch.tensor([0.25], dtype=torch.float64)))   # (Ā, b̄) at t = 0.25
    step = euler.network_step(h, 0.25, 0.01, weights)
    torch.testing.assert_close(step, h + 0.01 * euler.limit_field(0.25, h))
    assert euler.theory_rate == 1.0 and euler.next_order == 1.0
    deep = _sde(beta=2.0)
    y = torch.randn(deep.samples, deep.width, dtype=torch.float64)
    assert deep.theory_rate == 0.5 and deep.next_order == 0.5
    torch.testing.assert_close(deep.limit_sde().f(0.3, y), deep.correction(y))       # no trend term at β > 1
    assert _sde(beta=1.25).theory_rate == 0.25
    noisy = CohenODENoise(ModelConfig(width=3), 5)
    assert (noisy.beta, noisy.alpha) == (0.7, pytest.approx(0.3)) and noisy.theory_rate == pytest.approx(0.3)
    z = torch.randn(5, 3, dtype=torch.float64)
    limit = noisy.limit_sde()
    torch.testing.assert_close(limit.f(0.3, z), noisy.activation.d1 * noisy.trend(0.3, z))
    assert limit.g_prod(0.3, z, torch.randn(5, noisy.noise_dim, dtype=torch.float64)).abs().max() == 0


@pytest.mark.parametrize("options,match", [
    ({"s_a": "-1"}, "s_a=-1.0 is out of range"),
    ({"s_b": -0.5}, "s_b=-0.5 is out of range"),
    ({"a_bar": "x"}, "not a number"),
    ({"trend": "wiggly"}, "trend='wiggly' unknown"),
    ({"colour": "1"}, "has no setting 'colour'"),
])
def test_cohen_sde_rejects_bad_settings(options, match):
    with pytest.raises(PairError, match=match):
        _sde(options=options)


def test_cohen_rejects_bad_activations_and_knobs():
    with pytest.raises(PairError, match="C³"):
        _sde(activation="relu")
    with pytest.raises(PairError, match="C³"):
        CohenODE(ModelConfig(width=2, activation="relu"), 2)
    with pytest.raises(PairError, match="nothing to ablate"):
        _sde(CohenSDENaive, activation="tanh")
    with pytest.raises(PairError, match="cohen-ode or cohen-ode-noise for 0 ≤ β < 1"):
        _sde(beta=0.5)
    with pytest.raises(PairError, match="weight-var"):
        _sde(weight_var=2.0)
    with pytest.raises(PairError, match="weight-var"):
        _sde(weight_var=1.0)  # given is given: a field a pair does not read is refused, whatever its value


def test_cli_bad_beta_is_one_line_exit_2():
    proc = subprocess.run([sys.executable, "-m", "validation.convergence", "--model", "cohen-ode", "--beta", "1.5"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "0 ≤ β < 1" in proc.stderr


def test_ablation_cli_small_run(tmp_path):
    import json

    from validation import ablation

    out = tmp_path / "ablation.json"
    code = ablation.main(["--width", "3", "--samples", "60", "--depths", "4:32", "--reference-steps", "256",
                          "--fit-from", "8", "--bootstrap", "200", "--quiet", "--json", str(out)])
    data = json.loads(out.read_text())
    result = data["result"]
    assert code == {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 4}[result["verdict"]]
    assert result["verdict"] == "INCONCLUSIVE"  # 60 samples: too few to decide, not wrong
    for label in ("corrected", "naive"):
        check = result[label]["check"]
        if check["verdict"] == "INCONCLUSIVE":  # the interval straddles, or the window rule cannot test its move
            assert (check["samples_needed"] or 0) > 60 and "samples would PASS" in check["detail"] or \
                "cannot test whether that is noise" in check["detail"] and "these are 60" in check["detail"]
    assert {"seed", "versions", "command"} <= set(data["run"])
    for label in ("corrected", "naive"):
        assert len(result[label]["fit"]["errors"]) == 4 and len(result[label]["fit"]["ci"]) == 2
    assert result["naive"]["fit"]["errors"][-1] > 1.5 * result["corrected"]["fit"]["errors"][-1]


@pytest.mark.parametrize("argv,message", [
    (["--reference-steps", "100"], "power of two"),
    (["--activation", "tanh"], "nothing to ablate"),
    (["--set", "s_a=-1"], "out of range"),
    (["--set", "s_a"], "NAME=VALUE"),
    (["--weight-var", "2"], "unrecognized arguments: --weight-var"),   # the weight scales are --set s_a, s_b
    (["--rtol", "1e-6"], "unrecognized arguments: --rtol"),             # SDE references only
    (["--depths", "4,8,12"], "power of two"),                           # checked as the convergence study does
])
def test_ablation_cli_bad_input_exit_2(argv, message, capsys):
    from validation import ablation

    assert ablation.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_time_varying_fluctuation_scale_is_an_ito_process_the_limit_must_follow():
    """Cohen et al. eqs. (11)–(12): W^A = ∫ λ(t)(s_A/√d) dB with λ(t) = A + (B − A)t — Σ^A_t = λ(t)² s_A²/d (here 0.5 → 1.5). The limit's
    diffusion carries λ(t) and its Itô drift λ(t)²; the network converges to it at rate ½, and NOT to the limit that
    forgets the profile (a planted wrong limit)."""
    from validation.core.one_pass import study_errors
    from validation.core.rate_fit import fit_rate

    pair = _sde(samples=300, width=3, options={"s_profile": "linear:0.5:1.5"})
    flat = _sde(samples=300, width=3)
    y = torch.randn(300, 3, dtype=torch.float64)
    v = torch.randn(300, pair.noise_dim, dtype=torch.float64)
    lam = 0.5 + 1.0 * 0.4
    torch.testing.assert_close(pair.limit_sde().g_prod(0.4, y, v), lam * flat.limit_sde().g_prod(0.4, y, v))
    torch.testing.assert_close(pair.correction(y, 0.4), lam**2 * flat.correction(y, 0.4))
    depths = [8, 16, 32, 64, 128]
    good = fit_rate(depths, study_errors(pair, depths, reference_steps=1024, seed=0).final_sq, resamples=300)
    assert abs(good.rate - 0.5) < 0.1, good

    class Forgetful(CohenSDE):                    # the network with the profile against the limit without it
        def limit_sde(self):
            return flat.limit_sde()

    wrong = Forgetful(ModelConfig(width=3, options={"s_profile": "linear:0.5:1.5"}), 300, seed=1)
    bad = fit_rate(depths, study_errors(wrong, depths, reference_steps=1024, seed=0).final_sq, resamples=300)
    assert bad.rate < 0.2, bad
    with pytest.raises(PairError, match="s_profile='linear:0:1' is out of range"):
        _sde(options={"s_profile": "linear:0:1"})


def test_ablation_settings_are_those_that_apply_and_resolve_like_the_convergence_studys():
    """The ablation declares the settings it takes — none hidden — and both its runs see exactly them."""
    import dataclasses

    from validation import ablation
    from validation.core.settings import SettingsError

    names = {f.name for f in dataclasses.fields(ablation.AblationSettings)}
    assert not names & {"weight_var", "beta", "rtol", "atol"} and {"lengthscale", "options", "metric"} <= names
    with pytest.raises(SettingsError, match="weight_var: no such setting"):
        ablation.run(weight_var=2.0)
    settings = ablation.AblationSettings(samples=40, depths=(4, 8))
    both = settings.convergence_settings()
    assert all(getattr(both, name) == getattr(settings, name) for name in names)
    assert both.weight_var is None and both.beta is None
