"""Chizat §3.1, the backward pass (limits.chizat, the chizat-backward figure): autograd is the chain rule of the
2LP blocks, the simplified backward meets its closed form, and the figure's checks can fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from limits.chizat import (
    _draw_block_weights, chizat_backward_spread, chizat_constant, chizat_expected_spread,
    chizat_frozen_backward_spread,
)
from validation.figures import study as figures

SIZE = dict(width=5, hidden=6, layers=12, sigma_u=1 / math.sqrt(5), sigma_v=1.0)


def test_autograd_is_the_backward_recursion_of_the_real_forward_pass():
    """b^{ℓ−1} = b^ℓ + α Σ_j ρ'(u_jᵀ h^{ℓ−1}) (v_jᵀ b^ℓ) u_j from b^L = h^L − y, written out by hand on the same
    draws, equals autograd's ∂loss/∂h^ℓ at every layer."""
    alpha, n = 0.3, 7
    spread = chizat_backward_spread([alpha], networks=n, seed=3, **SIZE)[0]      # (L + 1, n)
    d, m, layers = SIZE["width"], SIZE["hidden"], SIZE["layers"]
    x, y, U, V = _draw_block_weights(3, ("chizat-backward",), 0, n, d, m, layers, SIZE["sigma_u"], SIZE["sigma_v"],
                                     torch.float64, torch.device("cpu"))
    states = [x]
    for ell in range(layers):
        states.append(states[-1] + alpha * torch.bmm(V[ell], torch.relu(torch.bmm(U[ell], states[-1]))))
    b, g = states[-1] - y, x - y
    by_hand = [b]
    for ell in reversed(range(layers)):
        slope = (torch.bmm(U[ell], states[ell]) > 0).double()
        b = b + alpha * torch.bmm(U[ell].transpose(1, 2), slope * torch.bmm(V[ell].transpose(1, 2), b))
        by_hand.append(b)
    by_hand.reverse()
    expected = torch.stack([(b - g).square().sum(1)[:, 0] / g.square().sum(1)[:, 0] for b in by_hand])
    torch.testing.assert_close(spread, expected, rtol=1e-10, atol=1e-14)
    # α = 0: the backward pass is the identity, exactly
    assert torch.equal(chizat_backward_spread([0.0], networks=3, **SIZE), torch.zeros(1, layers + 1, 3,
                                                                                    dtype=torch.float64))


@pytest.mark.parametrize("layers", [1, 12])
def test_the_simplified_backward_meets_its_closed_form(layers):
    """E S_b^ℓ = (1 + cα²M)^{L−ℓ} − 1 for the backward with the forward frozen at x (docs/theory.md, Chizat
    §3.1): the Monte Carlo mean of 4000 networks within 4 standard errors at every layer — and a closed form with
    c halved is rejected by the same test."""
    size = {**SIZE, "layers": layers}
    alpha, n = 0.25, 4000
    frozen = chizat_frozen_backward_spread([alpha], networks=n, seed=0, **size)[0].numpy()   # (L + 1, n)
    c = chizat_constant(size["width"], size["sigma_u"], size["sigma_v"])
    for constant, should_hold in ((c, True), (c / 2, False)):
        exact = chizat_expected_spread(alpha, size["hidden"], layers, constant).flip(0).numpy()
        z = (frozen[:-1].mean(axis=1) - exact[:-1]) / (frozen[:-1].std(axis=1, ddof=1) / math.sqrt(n))
        assert bool(np.all(np.abs(z) < 4)) == should_hold, z
    assert np.all(frozen[-1] == 0)  # b^L = ∇loss(y, x) itself


def test_the_figure_passes_at_its_default_and_refuses_bad_input(capsys):
    result = figures.run("chizat-backward", networks=600, resamples=300)
    assert result.verdict == "PASS", result.table()
    real = result.numbers["fits"]["real"]
    assert real["ci95"][0] <= real["exponent"] <= real["ci95"][1]
    assert figures.main(["--figure", "chizat-backward", "--exponent-tolerance", "0", "--quiet"]) == 2
    assert "--exponent-tolerance" in capsys.readouterr().err
    assert figures.main(["--figure", "chizat-maximal", "--exponent-tolerance", "0.1", "--quiet"]) == 2
    assert "does not apply to the chizat-maximal figure" in capsys.readouterr().err
    assert figures.main(["--figure", "chizat-backward", "--kappas", "0.1,-1", "--quiet"]) == 2


def test_two_kappas_give_no_exponent_verdict():
    result = figures.run("chizat-backward", **{**figures.SMOKE["chizat-backward"], "kappas": (0.1, 0.2)})
    assert result.checks[1]["verdict"] == "INCONCLUSIVE" and result.verdict != "PASS"


def test_with_one_layer_the_tangent_kernel_is_the_shallow_kernel_to_rounding():
    """Chizat §3.3 at L = 1: h^1 = x + α Σ_j φ(x, z_j), so the tangent kernel is α² Σ_j D₂φ D₂φᵀ exactly — autograd's
    kernel and the closed form agree to rounding, and dropping either term of D₂φ D₂φᵀ breaks the agreement."""
    from limits.chizat import chizat_kernel_errors, shallow_tangent_kernel

    alpha = 0.4
    errors = chizat_kernel_errors([alpha], width=4, hidden=5, layers=1, networks=6, inputs=3, sigma_u=0.5, sigma_v=1.0)
    assert float(errors["kernel"].max()) < 1e-12
    torch.manual_seed(0)
    U, V, X = torch.randn(1, 2, 5, 4, dtype=torch.float64), torch.randn(1, 2, 4, 5, dtype=torch.float64), \
        torch.randn(2, 4, 3, dtype=torch.float64)
    full = shallow_tangent_kernel(U, V, X, alpha)
    no_slopes = shallow_tangent_kernel(U, torch.zeros_like(V), X, alpha)           # only the ρ ρ I_d term
    torch.testing.assert_close(full, full.transpose(1, 2), rtol=1e-12, atol=1e-12)
    assert (full - no_slopes).abs().max() > 0.1
    # the L = 1 gradient is eq. (5) exactly only when the forward is the identity: α → 0 makes the error vanish
    small = chizat_kernel_errors([1e-6], width=4, hidden=5, layers=1, networks=6, inputs=2, sigma_u=0.5, sigma_v=1.0)
    assert float(small["gradient"].max()) < 1e-4


def test_the_kernel_figure_passes_at_a_small_size():
    result = figures.run("chizat-kernel", networks=48, resamples=300)
    assert result.verdict == "PASS", result.table()
    fits = result.numbers["fits"]
    assert 0.4 < fits["kernel"]["exponent"] < 0.6 and fits["gradient_u"]["exponent"] < fits["gradient_v"]["exponent"]
    two = figures.run("chizat-kernel", **{**figures.SMOKE["chizat-kernel"], "kappas": (0.1, 0.2)})
    assert all(c["verdict"] == "INCONCLUSIVE" for c in two.checks)


def test_the_phase_diagram_separates_lazy_ode_from_local_feature_learning():
    """Chizat §3, Fig. 1 at a small size: depth-μP (β = ½, γ = 0) is lazy ODE (the local share of the features'
    change vanishes with L while the predictor moves), CompleteP (β = 1, γ = 1) local feature learning; below the
    line γ = 2β − 1 the predictor's change vanishes (trivial). A tolerance too tight to call any exponent 'of order
    1' FAILs the predictor checks; a grid without the two cells cannot decide."""
    size = dict(depths=(8, 32, 128), betas=(0.5, 1.0), gammas=(0.0, 1.0), networks=32, resamples=200)
    result = figures.run("chizat-phase", **size)
    classes = {(c["beta"], c["gamma"]): c["class"] for c in result.numbers["cells"]}
    assert classes[(0.5, 0.0)] == "lazy ODE" and classes[(1.0, 1.0)] == "local feature learning", classes
    assert classes[(1.0, 0.0)] == "trivial" and classes[(0.5, 1.0)] == "unstable", classes
    assert result.verdict == "PASS", result.table()
    assert figures.run("chizat-phase", **{**size, "exponent_tolerance": 1e-4}).verdict == "FAIL"
    lacking = figures.run("chizat-phase", **{**size, "gammas": (0.5,)})
    assert lacking.verdict == "INCONCLUSIVE"


@pytest.mark.parametrize("argv, needle", [
    (["--figure", "chizat-phase", "--depths", "32,8"], "--depths"),
    (["--figure", "chizat-phase", "--betas", "-1,0.5"], "every β must be ≥ 0"),
    (["--figure", "chizat-phase", "--gammas", "0,0"], "gives 0 twice"),
    (["--figure", "chizat-phase", "--steps", "0"], "--steps"),
    (["--figure", "chizat-phase", "--eta0", "0"], "--eta0"),
    (["--figure", "chizat-kernel", "--inputs", "1"], "--inputs"),
    (["--figure", "chizat-kernel", "--steps", "2"], "does not apply to the chizat-kernel figure"),
    (["--figure", "pf-2d", "--inputs", "1"], "--inputs"),
    (["--figure", "pf-2d", "--data", "0:1"], "does not apply to the pf-2d figure"),
])
def test_the_new_figures_refuse_bad_input_in_one_line(argv, needle, capsys):
    assert figures.main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_eq2_gradient_formula_is_autograd_on_every_block_weight():
    """Chizat §1.2 eq. (2): ∇_{z^{j,ℓ}} loss = α D₂φ(h^{ℓ−1}, z^{j,ℓ})ᵀ b^ℓ with b^ℓ from eq. (3). For φ = v ρ(uᵀh):
    ∇_u = α ρ'(uᵀh^{ℓ−1}) (vᵀb^ℓ) h^{ℓ−1} and ∇_v = α ρ(uᵀh^{ℓ−1}) b^ℓ — written out by hand against autograd."""
    alpha, n = 0.3, 4
    d, m, layers = SIZE["width"], SIZE["hidden"], SIZE["layers"]
    x, y, U, V = _draw_block_weights(5, ("eq2",), 0, n, d, m, layers, SIZE["sigma_u"], SIZE["sigma_v"],
                                     torch.float64, torch.device("cpu"))
    U, V = U.clone().requires_grad_(True), V.clone().requires_grad_(True)
    states = [x]
    for ell in range(layers):
        states.append(states[-1] + alpha * torch.bmm(V[ell], torch.relu(torch.bmm(U[ell], states[-1]))))
    loss = 0.5 * (states[-1] - y).square().sum()
    grad_u, grad_v = torch.autograd.grad(loss, (U, V))
    with torch.no_grad():
        b = states[-1] - y                                                  # b^L = ∇loss
        by_hand_u, by_hand_v = torch.empty_like(U), torch.empty_like(V)
        for ell in reversed(range(layers)):
            h, pre = states[ell], torch.bmm(U[ell], states[ell])            # h^{ℓ−1} (0-based ell), u_jᵀ h
            vb = torch.bmm(V[ell].transpose(1, 2), b)                       # (v_jᵀ b^ℓ)_j
            by_hand_u[ell] = alpha * torch.bmm((pre > 0).double() * vb, h.transpose(1, 2))   # eq. (2), u part
            by_hand_v[ell] = alpha * torch.bmm(b, torch.relu(pre).transpose(1, 2))          # eq. (2), v part
            b = b + alpha * torch.bmm(U[ell].transpose(1, 2), (pre > 0).double() * vb)       # eq. (3)
    torch.testing.assert_close(grad_u, by_hand_u, rtol=1e-10, atol=1e-13)
    torch.testing.assert_close(grad_v, by_hand_v, rtol=1e-10, atol=1e-13)
    assert grad_u.abs().max() > 1e-3 and grad_v.abs().max() > 1e-3          # not a comparison of zeros
