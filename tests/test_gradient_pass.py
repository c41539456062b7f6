"""The one-pass gradients (validation.gradients.tangents): the linear limit's gradient is exact, the network's gradients
converge to the limit's at the forward rate — not to a wrong limit's — and bad arguments are refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from limits import make_pair
from validation.gradients.tangents import gradient_errors
from validation.core.rate_fit import fit_rate


def test_the_linear_limit_gradient_is_exact():
    """cohen-ode with a constant trend is linear: [H; 1](1) = exp(σ'(0) G)[h_0; 1], so ∂(½‖H‖²)/∂h_0 =
    exp(σ'(0)Ā)ᵀ H(1); dopri5 on the variational equation meets it to 1e-8."""
    pair = make_pair("cohen-ode", 4, seed=1, width=3)
    h0 = pair.initial_state()
    exact_h = pair.solve_limit(h0, torch.tensor([0.0, 1.0], dtype=torch.float64), rtol=1e-12, atol=1e-12)[-1]
    expo = torch.linalg.matrix_exp(pair.activation.d1 * pair.trend.a_const)
    exact = torch.einsum("nij,ni->nj", expo, exact_h).numpy()
    errors = gradient_errors(pair, [8, 16], seed=0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(errors.reference_input, exact, rtol=1e-8, atol=1e-9)


def test_gradient_rates_and_a_wrong_limit():
    """res2-ode's input gradient converges at rate 1, res-1's at ½ (the forward rates); cohen-sde-naive's network
    gradient does not converge to its (uncorrected) limit's — the error stays."""
    depths = [8, 16, 32, 64]
    ode = gradient_errors(make_pair("res2-ode", 20, seed=0, width=4), depths, seed=0)
    assert abs(fit_rate(depths, ode.squared["input"], resamples=300).rate - 1.0) < 0.15
    sde = gradient_errors(make_pair("res1", 150, seed=0, width=4), depths, seed=0, reference_steps=512)
    assert abs(fit_rate(depths, sde.squared["input"], resamples=300).rate - 0.5) < 0.12
    naive = gradient_errors(make_pair("cohen-sde-naive", 150, seed=0, width=4), depths, seed=0, reference_steps=512)
    assert fit_rate(depths, naive.squared["input"], resamples=300).rate < 0.2
    assert np.all(np.isfinite(naive.squared["input"]))


def test_bad_arguments():
    pair = make_pair("res1", 2, seed=0, width=2)
    with pytest.raises(ValueError, match="loss 'l1' unknown"):
        gradient_errors(pair, [4], reference_steps=8, seed=0, loss="l1")
    with pytest.raises(ValueError, match="backward time 0.3"):
        gradient_errors(pair, [4], reference_steps=8, seed=0, backward_times=(0.3,))
    with pytest.raises(ValueError, match="needs reference_steps"):
        gradient_errors(pair, [4], seed=0)


CLOSED_FORMS = [("res1", {}), ("res1", {"activation": "swish"}), ("cohen-sde", {}),
                ("cohen-sde", {"options": {"s_profile": "linear:0.5:1.5", "trend": "constant"}}),
                ("cohen-sde", {"beta": 1.5}), ("cohen-sde-naive", {}), ("cohen-ode-noise", {})]


@pytest.mark.parametrize("name, config", CLOSED_FORMS, ids=lambda x: str(x))
def test_closed_form_tangents_equal_forward_mode_autodiff(name, config):
    """Every shipped closed-form tangent (the layer's ∂(F − h)·T, the limit's ∂f·T and ∂(g v)·T) equals
    ``torch.func.jvp`` of the map it differentiates, column by column, to rounding — and the study uses it."""
    from torch.func import jvp

    from validation.gradients.tangents import AugmentedLimit, TangentLayout, TangentSystem

    pair = make_pair(name, 5, seed=3, width=3, **config)
    assert TangentSystem(pair, (0.0,)).closed_form
    limit = pair.limit_sde()
    assert AugmentedLimit(limit, TangentLayout(3, (0.0,))).closed_form
    gen = torch.Generator().manual_seed(0)
    h = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    tangents = torch.randn(5, 3, 4, generator=gen, dtype=torch.float64)
    dW = 0.3 * torch.randn(5, pair.noise_dim, generator=gen, dtype=torch.float64)
    t, dt = 0.375, 0.125

    def by_jvp(fn):
        return torch.stack([jvp(fn, (h,), (tangents[:, :, c],))[1] for c in range(4)], dim=2)

    checks = [(pair.network_tangent(h, t, dt, dW, tangents), by_jvp(lambda x: pair.network_step(x, t, dt, dW) - x)),
              (limit.f_tangent(t, h, tangents), by_jvp(lambda x: limit.f(t, x))),
              (limit.g_prod_tangent(t, h, dW, tangents), by_jvp(lambda x: limit.g_prod(t, x, dW)))]
    for closed, auto in checks:
        torch.testing.assert_close(closed, auto, rtol=1e-12, atol=1e-13)


def test_a_subclass_that_changes_the_layer_does_not_inherit_its_tangent():
    """A pair built on res1 that overrides ``network_step`` (here: twice the noise) falls back to autodiff instead of
    using res1's closed form, which would be the wrong tangent; its gradients still match backpropagation."""
    from limits.res_sde import Res1SDE
    from validation.gradients.tangents import TangentSystem, network_input_gradient

    class Doubled(Res1SDE):
        name = "res1-doubled"

        def network_step(self, h, t, dt, dW):
            return h + 2 * (super().network_step(h, t, dt, dW) - h)

    from limits.brownian import BrownianGrid

    pair = Doubled(make_pair("res1", 4, seed=0, width=3).config, 4, seed=0)
    system = TangentSystem(pair, (0.0,))
    assert not system.closed_form
    path, depth = BrownianGrid(4, pair.noise_dim, 16, seed=0), 8
    x = system.initial_state()
    for k in range(depth):
        x = system.network_step(x, k / depth, 1 / depth, path(k / depth, (k + 1) / depth))
    h, tangents = system.layout.split(x)
    tangent_gradient = torch.einsum("nij,ni->nj", tangents[:, :, 1:], h)
    torch.testing.assert_close(tangent_gradient, network_input_gradient(pair, depth, path, pair.initial_state()),
                               rtol=1e-10, atol=1e-12)


def test_the_scaled_weight_gradient_is_backpropagation_through_every_layer():
    """The network's L·∂ℓ/∂V_sL, computed with a graph over the last (1 − s)L layers only, equals L times the
    gradient of backpropagation through the whole network with every layer's weights a leaf."""
    from validation.gradients.weights import _weights_at, weight_gradients

    pair = make_pair("res2-ode", 3, seed=2, width=3)
    depth, s = 16, 0.25
    values = weight_gradients(pair, [depth], s, rtol=1e-8, atol=1e-8)
    layers = [tuple(w.detach().clone().requires_grad_(True) for w in _weights_at(pair, k / depth)) for k in range(depth)]
    h = pair.initial_state()
    for k, weights in enumerate(layers):
        h = pair.network_step(h, k / depth, 1 / depth, weights)
    grads = torch.autograd.grad(h, [w[0] for w in layers], grad_outputs=h.detach())
    expected = depth * grads[int(s * depth)].reshape(3, -1)
    torch.testing.assert_close(values.network[0], expected, rtol=1e-10, atol=1e-12)
    assert values.reference.shape == expected.shape
    # the limit's: a(s) g(H_s)ᵀ, close to the network's at this depth (rate 1: within a few per cent at L = 16)
    assert float((values.network[0] - values.reference).norm() / values.reference.norm()) < 0.2
