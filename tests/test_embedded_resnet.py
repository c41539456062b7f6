"""The ResNet with an embedding (Chaintron, Chizat & Maass 2026) and its infinite-width counterpart
(limits.embedded_resnet), and the chaintron2026-linear experiment built on them."""

from __future__ import annotations

import math

import pytest
import torch
from planted_entries import ScaledByDepthOnly

from limits.embedded_resnet import (EmbeddedResNet, InfiniteWidthResNet, MomentResNet, embedding_draws,
                                    one_example_task, train, unit_draws)

D_IN = D_OUT = 3


def _network(replicates=2, depth=5, dim=6, hidden=7, seed=0, label="test"):
    w_e, w_u = embedding_draws(seed, label, range(replicates), dim, D_IN, D_OUT)
    u, v = unit_draws(seed, label, range(replicates), depth, dim, hidden)
    return w_e, w_u, u, v


@pytest.mark.parametrize("activation", ["identity", "tanh"])
def test_a_step_is_gradient_descent_at_the_papers_rate(activation):
    """The authors' update is gradient descent on ½‖f − y‖² at rate η·D·LM/α² (module docstring): compared with
    autograd through the forward pass."""
    x, y = one_example_task(0, D_IN, D_OUT)
    w_e, w_u, u, v = _network()
    alpha, eta = 1.5, 0.1
    network = EmbeddedResNet(w_e, w_u, u, v, alpha=alpha, activation=activation)
    L, D, M = network.depth, network.dim, network.hidden
    U, V = u.clone().requires_grad_(True), v.clone().requires_grad_(True)
    sigma = network.sigma
    h = w_e @ x
    for l in range(L):
        h = h + alpha / (L * M) * torch.einsum("rdm,rm->rd", V[:, l], sigma(torch.einsum("rdm,rd->rm", U[:, l], h) / D))
    f = torch.einsum("rdo,rd->ro", w_u, h) / D
    grad_u, grad_v = torch.autograd.grad(0.5 * (f - y).square().sum(), (U, V))
    _, out, loss = network.step(x, y, eta)
    rate = eta * D * L * M / alpha**2
    assert torch.allclose(out, f.detach(), rtol=0, atol=1e-14)
    assert torch.allclose(network.U, u - rate * grad_u, rtol=1e-12, atol=1e-12)
    assert torch.allclose(network.V, v - rate * grad_v, rtol=1e-12, atol=1e-12)


def test_the_moments_of_drawn_units_are_the_finite_network():
    """With identity blocks the network depends on its units only through their second moments per block: the
    moment network started from M drawn units follows the finite network step for step, to rounding."""
    x, y = one_example_task(1, D_IN, D_OUT)
    w_e, w_u, u, v = _network(hidden=9)
    finite = train(EmbeddedResNet(w_e, w_u, u, v), x, y, 8, 0.1)
    moments = train(MomentResNet.of_units(w_e, w_u, u, v), x, y, 8, 0.1)
    assert (finite.hidden - moments.hidden).abs().max() < 1e-12
    assert (finite.output - moments.output).abs().max() < 1e-12
    assert finite.loss[-1].max() < finite.loss[0].min()        # it trains


def test_the_low_rank_form_is_the_dense_infinite_network():
    x, y = one_example_task(2, D_IN, D_OUT)
    w_e, w_u, _, _ = _network(dim=11)
    dense = train(MomentResNet.infinite(w_e, w_u, 6), x, y, 7, 0.1)
    low_rank = train(InfiniteWidthResNet(w_e, w_u, 6, 7), x, y, 7, 0.1)
    assert (dense.hidden - low_rank.hidden).abs().max() < 1e-12
    assert (dense.output - low_rank.output).abs().max() < 1e-13


def test_after_one_step_the_infinite_network_has_its_closed_form():
    """At M = ∞ and step 0 every hidden state is e = W_e x (C = 0) and b is b₀ = W_u (f₀ − y)/D in every layer.
    One step gives C = −2cD b₀eᵀ (c = η/α) in every block, so h_l = e + β_l b₀ with
    β_{l+1} = ρ β_l − (2cα/L)‖e‖², ρ = 1 − (2cα/L) e·b₀: β_l = −‖e‖² (1 − ρ^l)/(e·b₀)."""
    x, y = one_example_task(3, D_IN, D_OUT)
    w_e, w_u, _, _ = _network(dim=13)
    alpha, eta, L = 0.7, 0.3, 9
    trajectory = train(InfiniteWidthResNet(w_e, w_u, L, 2, alpha=alpha), x, y, 2, eta)
    e = w_e @ x
    assert torch.allclose(trajectory.hidden[0], e[:, None, :].expand(-1, L + 1, -1), rtol=0, atol=1e-15)
    D = e.shape[-1]
    b0 = torch.einsum("rdo,ro->rd", w_u, torch.einsum("rdo,rd->ro", w_u, e) / D - y) / D
    c = eta / alpha
    e_b, e_e = (e * b0).sum(-1, keepdim=True), (e * e).sum(-1, keepdim=True)
    rho = 1 - 2 * c * alpha / L * e_b
    layers = torch.arange(L + 1, dtype=e.dtype)
    beta = -e_e * (1 - rho ** layers) / e_b                               # (R, L + 1)
    expected = e[:, None, :] + beta[..., None] * b0[:, None, :]
    assert torch.allclose(trajectory.hidden[1], expected, rtol=1e-12, atol=1e-13)
    # and step 2 (where the c² terms enter) is the dense network's
    dense = train(MomentResNet.infinite(w_e, w_u, L, alpha=alpha), x, y, 2, eta)
    assert (dense.hidden - trajectory.hidden).abs().max() < 1e-12


def test_nested_draws_do_not_depend_on_the_replicates_drawn_together():
    first = embedding_draws(5, "x", range(0, 4), 8, D_IN, D_OUT)[0]
    chunk = embedding_draws(5, "x", range(2, 4), 8, D_IN, D_OUT)[0]
    assert torch.equal(first[2:], chunk)
    wide = unit_draws(5, "x", range(2), 3, 4, 16)[0]
    assert wide.shape == (2, 3, 4, 16)
    assert math.isclose(float(wide.var()), 4.0, rel_tol=0.25)              # N(0, D) entries, D = 4


def test_the_finite_width_error_shrinks_towards_the_infinite_network():
    x, y = one_example_task(0, D_IN, D_OUT)
    w_e, w_u, u, v = _network(replicates=4, depth=4, dim=4, hidden=1024)
    limit = train(InfiniteWidthResNet(w_e, w_u, 4, 4), x, y, 4, 0.1)
    errors = [(train(EmbeddedResNet(w_e, w_u, u[..., :m], v[..., :m]), x, y, 4, 0.1).hidden - limit.hidden)
              .abs().mean().item() for m in (16, 1024)]
    assert errors[1] < errors[0] / 4            # √(1024/16) = 8 expected; 4 leaves room for the replicates' spread


# ------------------------------------------------------------------------------------------- the experiment
SMALL = dict(depths=(4, 8, 16, 32, 64), hiddens=(16, 32, 64, 128, 256, 512), widths=(16, 32, 64, 128, 256, 512),
             depth=8, width=4, hidden=128, epochs=6, replicates=8, resamples=300, checkpoint_dir="none")


def _checks(result):
    return {c["check"].split(":")[0]: c["verdict"] for c in result.numbers["checks"]}


def test_the_experiment_runs_and_nothing_fails_at_small_sizes():
    from validation.training import run

    result = run("chaintron2026-linear", **SMALL)
    checks = _checks(result)
    assert "FAIL" not in checks.values() and checks["depth"] == "PASS"
    width = result.numbers["sweeps"]["width"]
    assert width["fitted_sizes"] == [32, 64, 128, 256, 512]             # LM ≥ 64·D with L = 8, D = 4
    assert result.numbers["sweeps"]["embedding"]["fitted_sizes"] == [64, 128, 256]
    assert len(result.records["embedding"]["hidden_error"][0]) == 4 * SMALL["replicates"]   # the factor 4
    again = run("chaintron2026-linear", **SMALL)
    assert again.records == result.records


def test_a_residual_scale_without_the_width_fails_the_width_check(monkeypatch):
    from validation.training import chaintron2026, run

    monkeypatch.setattr(chaintron2026, "EmbeddedResNet", ScaledByDepthOnly)
    result = run("chaintron2026-linear", **SMALL)
    checks = _checks(result)
    assert checks["width"] == "FAIL" and checks["depth-width"] == "FAIL"
    assert checks["depth"] == "PASS"                                     # the M = ∞ sweeps are untouched


@pytest.mark.parametrize("overrides, flag", [
    (dict(activation="tanh"), "activation"),
    (dict(depths=(4, 6, 12)), "depths"),
    (dict(hiddens=(32,)), "hiddens"),
])
def test_refusals_name_the_setting(overrides, flag):
    from validation.core.settings import SettingsError
    from validation.training import run

    with pytest.raises(SettingsError) as caught:
        run("chaintron2026-linear", **{**SMALL, **overrides})
    assert caught.value.name == flag


NONLINEAR = dict(depths=(4, 8, 16, 32, 64), hiddens=(32, 64, 128, 256, 512), widths=(16, 64, 128, 256), depth=8,
                 width=8, hidden=64, epochs=6, replicates=8, resamples=300, checkpoint_dir="none")


def test_the_nonlinear_entry_measures_every_term(monkeypatch):
    """The width term as M against 2M; the depth and embedding terms on the M = ∞ network's n-dimensional form,
    with their Monte-Carlo remainder measured. A residual scale α/L instead of α/(LM) FAILs the width checks; its
    depth sweep's networks diverge, so their remainder leaves the depth check INCONCLUSIVE."""
    from validation.training import chaintron2026, run

    result = run("chaintron2026-nonlinear", **NONLINEAR)
    checks = _checks(result)
    assert set(checks) == {"width", "depth-width", "depth", "embedding", "dim-width"} and "FAIL" not in checks.values()
    assert checks["depth"] == "PASS"
    sweeps = result.numbers["sweeps"]
    assert sweeps["width"]["sizes"] == [32, 64, 128, 256]                       # each against the next, twice as wide
    assert sweeps["depth"]["fitted_sizes"] == [8, 16, 32] and sweeps["embedding"]["fitted_sizes"] == [64, 128, 256]
    assert all(0 < r < 1 / 8 for key in ("depth", "embedding") for r in sweeps[key]["monte_carlo"])
    with monkeypatch.context() as patch:
        patch.setattr(chaintron2026, "EmbeddedResNet", ScaledByDepthOnly)
        planted = _checks(run("chaintron2026-nonlinear", **NONLINEAR))
    assert planted["width"] == "FAIL"
    assert planted["depth"] == "INCONCLUSIVE"      # its networks diverge: no M = ∞ reference to judge against


def test_the_nonlinear_depth_check_fails_on_misread_layers_and_sees_uncoupled_units(monkeypatch):
    """Planted: layer l of depth L read against layer l of depth 2L (not 2l) — the difference no longer falls as 1/L
    and the depth check FAILs; the two depths dealt different units — the Monte-Carlo remainder then dominates and
    the check is INCONCLUSIVE, not a PASS."""
    from validation.training import chaintron2026, run

    sizes = dict(NONLINEAR, hiddens=(32, 64), widths=(8, 16), replicates=4)
    compare = chaintron2026.compare
    with monkeypatch.context() as patch:
        patch.setattr(chaintron2026, "compare", lambda a, b, layers=slice(None), coordinates=slice(None):
                      compare(a, b, slice(None, a.hidden.shape[-2]), coordinates))
        assert _checks(run("chaintron2026-nonlinear", **sizes))["depth"] == "FAIL"
    dealt = chaintron2026.dealt_units
    with monkeypatch.context() as patch:
        patch.setattr(chaintron2026, "dealt_units", lambda units, depth: dealt(units.roll(depth, dims=-1), depth))
        assert _checks(run("chaintron2026-nonlinear", **sizes))["depth"] == "INCONCLUSIVE"


def test_on_identity_blocks_the_mean_field_sweeps_are_the_exact_ones():
    """The nonlinear entry's depth and embedding sweeps run with identity blocks give, replicate by replicate, the
    errors of the exact M = ∞ network (InfiniteWidthResNet at D, the limit embedding_limit read on the same rows) to
    their Monte-Carlo remainder: the median relative deviation per size is below 3 % and below 3 times the remainder
    the entry reports (measured: 0.3 % against 5 % reported in depth, 1.1–1.3 % against 0.7–3 % in embedding)."""
    from limits.embedded_resnet import embedding_limit, limit_states
    from validation.training import run

    sizes = dict(NONLINEAR, depths=(4, 8, 16), widths=(16, 256), depth=4, replicates=2, epochs=4)
    result = run("chaintron2026-nonlinear", **{**sizes, "activation": "identity"})
    x, y = one_example_task(0, D_IN, D_OUT)
    step = result.numbers["checked_step"]
    depth = torch.tensor(result.records["depth"]["hidden_error"])[:, :, step]            # size × replicate
    w_e, w_u = embedding_draws(0, "chaintron2026-nonlinear/depth", range(2), 8, D_IN, D_OUT)
    runs = [train(InfiniteWidthResNet(w_e, w_u, L, 4), x, y, 4, 0.1).hidden[step] for L in (4, 8, 16)]
    exact = torch.stack([(a - b[:, ::2]).abs().mean(-1).amax(-1) for a, b in zip(runs, runs[1:])])
    deviation = ((depth - exact).abs() / exact).median(dim=1).values                # per size
    reported = torch.tensor(result.numbers["sweeps"]["depth"]["monte_carlo"])
    assert (deviation < 0.03).all() and (deviation < 3 * reported).all()
    embedding = torch.tensor(result.records["embedding"]["hidden_error"])[:, :, step]
    w_e, w_u = embedding_draws(0, "chaintron2026-nonlinear/embedding", range(8), 256, D_IN, D_OUT)
    limit = limit_states(embedding_limit(x, y, 4, 4, 0.1).hidden, w_e, w_u)[step]
    exact = torch.stack([(train(InfiniteWidthResNet(w_e[:, :D], w_u[:, :D], 4, 4), x, y, 4, 0.1).hidden[step]
                          - limit[..., :D]).abs().mean(-1).amax(-1) for D in (16, 256)])
    deviation = ((embedding - exact).abs() / exact).median(dim=1).values                # per size
    reported = torch.tensor(result.numbers["sweeps"]["embedding"]["monte_carlo"])
    assert (deviation < 0.03).all() and (deviation < 3 * reported).all()


def test_the_nonlinear_width_sweep_needs_doubling_widths():
    from validation.core.settings import SettingsError
    from validation.training import run

    with pytest.raises(SettingsError) as caught:
        run("chaintron2026-nonlinear", **{**NONLINEAR, "hiddens": (32, 64, 96)})
    assert caught.value.name == "hiddens"


# --------------------------------------------------------------------------------- the large-scale limit (D = ∞)
def test_the_limit_has_its_closed_form_before_and_after_one_step():
    """Before any step c_l = (x, 0) and f = 0; after one, c_l = (x, 2η (l/L) ‖x‖² y) and f = 2η ‖x‖² y (module
    docstring of limits.embedded_resnet), at every depth; the correlations are c · c."""
    from limits.embedded_resnet import embedding_limit, limit_correlations

    x, y = one_example_task(4, D_IN, D_OUT)
    eta, L = 0.3, 7
    limit = embedding_limit(x, y, L, 3, eta, alpha=0.6)
    s = torch.arange(L + 1, dtype=x.dtype) / L
    zero = torch.cat([x, torch.zeros_like(y)]).expand(L + 1, -1)
    one = torch.cat([x.expand(L + 1, -1), 2 * eta * s[:, None] * x.square().sum() * y], dim=-1)
    assert torch.allclose(limit.hidden[0, 0], zero, rtol=0, atol=1e-15)
    assert torch.allclose(limit.hidden[1, 0], one, rtol=1e-13, atol=1e-15)
    assert torch.allclose(limit.output[0, 0], torch.zeros_like(y), atol=1e-15)
    assert torch.allclose(limit.output[1, 0], 2 * eta * x.square().sum() * y, rtol=1e-13)
    gamma = limit_correlations(limit.hidden)
    assert torch.allclose(gamma[:, 0, 0], x.square().sum().expand(L + 1), rtol=1e-14)
    assert torch.allclose(gamma[:, 1, 1], x.square().sum() + (2 * eta * s * x.square().sum()) ** 2 * y.square().sum(),
                          rtol=1e-13)


def test_the_infinite_width_network_is_the_limit_network_on_its_own_gram_matrix():
    """The reduction behind the limit: the M = ∞ network at dimension D equals the n-dimensional one with the
    embedding √(n/D)·R, E = QR, read back as E c — to rounding, over several steps and α ≠ 1."""
    x, y = one_example_task(1, D_IN, D_OUT)
    w_e, w_u, _, _ = _network(replicates=3, dim=37)
    full = train(InfiniteWidthResNet(w_e, w_u, 6, 5, alpha=0.7), x, y, 5, 0.2)
    embedding = torch.cat([w_e, w_u], dim=-1)
    _, r = torch.linalg.qr(embedding)
    small = math.sqrt(6 / 37) * r
    reduced = train(MomentResNet.infinite(small[..., :3], small[..., 3:], 6, alpha=0.7), x, y, 5, 0.2)
    coefficients = torch.linalg.solve(small[None, :, None], reduced.hidden[..., None])[..., 0]
    assert (torch.einsum("rdn,krln->krld", embedding, coefficients) - full.hidden).abs().max() < 1e-13
    assert (reduced.output - full.output).abs().max() < 1e-14


def test_the_infinite_width_network_approaches_the_limit_as_the_embedding_grows():
    from limits.embedded_resnet import embedding_limit, limit_states

    x, y = one_example_task(0, D_IN, D_OUT)
    limit = embedding_limit(x, y, 4, 6, 0.1)
    errors = []
    for dim in (16, 1024):
        w_e, w_u = embedding_draws(0, "approach", range(8), dim, D_IN, D_OUT)
        network = train(InfiniteWidthResNet(w_e, w_u, 4, 6), x, y, 6, 0.1)
        errors.append((network.hidden - limit_states(limit.hidden, w_e, w_u)).abs().mean().item())
    assert errors[1] < errors[0] / 4            # √(1024/16) = 8 expected


def test_the_depth_limit_removes_the_first_order_error_and_measures_its_own():
    from limits.embedded_resnet import depth_limit, embedding_limit

    x, y = one_example_task(0, D_IN, D_OUT)
    reference = depth_limit(x, y, 4, 6, 0.1, refinement=8)
    errors = [(embedding_limit(x, y, L, 6, 0.1).hidden[:, :, :: L // 4] - reference.hidden).abs().max().item()
              for L in (4, 8, 16)]
    assert 1.8 < errors[0] / errors[1] < 2.2 and 1.8 < errors[1] / errors[2] < 2.2      # first order in 1/L
    assert 0 < reference.bias < errors[2] / 100
    with pytest.raises(ValueError, match="refinement 3"):
        depth_limit(x, y, 4, 6, 0.1, refinement=3)


# ------------------------------------------------- the M = ∞ network of any activation, in its n-dimensional form
def _spanned(read_back, units):
    """Units of the D-dimensional network that lie in span(E): read_back · (n-dimensional units)."""
    return torch.einsum("rdn,rlnm->rldm", read_back, units)


@pytest.mark.parametrize("activation", ["identity", "tanh"])
def test_the_n_dimensional_form_is_the_network_whose_units_lie_in_the_embeddings_span(activation):
    """The map of limits.embedded_resnet.reduced_embedding, exactly: a D-dimensional network whose units are
    Q/λ times the n-dimensional network's units has the states Q h''/λ and the same outputs, step after step (every
    scaling of p, f, b and the updates checked at once); R's diagonal is positive (λR → √n·I)."""
    from limits.embedded_resnet import reduced_embedding

    x, y = one_example_task(6, D_IN, D_OUT)
    w_e, w_u, _, _ = _network(replicates=3, dim=11)
    reduced = reduced_embedding(w_e, w_u)
    u, v = unit_draws(6, "spanned", range(3), 5, 6, 9)
    small = train(EmbeddedResNet(reduced.w_e, reduced.w_u, u, v, alpha=0.8, activation=activation), x, y, 6, 0.2)
    large = train(EmbeddedResNet(w_e, w_u, _spanned(reduced.read_back, u), _spanned(reduced.read_back, v), alpha=0.8,
                                 activation=activation), x, y, 6, 0.2)
    assert (reduced.states(small.hidden) - large.hidden).abs().max() < 1e-12
    assert (small.output - large.output).abs().max() < 1e-13
    embedding = torch.cat([reduced.w_e, reduced.w_u], dim=-1)
    assert (torch.diagonal(embedding, dim1=-2, dim2=-1) > 0).all()


def test_with_drawn_units_the_n_dimensional_form_approaches_the_exact_infinite_network():
    """Identity blocks, where M = ∞ is exact: N Monte-Carlo units in n = 6 dimensions give the D = 16 network at
    M = ∞ to a remainder that shrinks about as N^(-1/2); a reduction that forgets λ = √(n/D) stays far away."""
    from limits.embedded_resnet import ReducedEmbedding, dealt_units, reduced_embedding

    x, y = one_example_task(0, D_IN, D_OUT)
    w_e, w_u, _, _ = _network(replicates=4, dim=16)
    exact = train(InfiniteWidthResNet(w_e, w_u, 4, 5), x, y, 5, 0.1)
    u, v = unit_draws(0, "monte-carlo", range(4), 1, 6, 2**14)

    def distance(reduced, units):
        network = EmbeddedResNet(reduced.w_e, reduced.w_u, dealt_units(u[..., :units], 4), dealt_units(v[..., :units], 4))
        return (reduced.states(train(network, x, y, 5, 0.1).hidden) - exact.hidden).abs().mean().item()

    reduced = reduced_embedding(w_e, w_u)
    scale = exact.hidden.abs().mean().item()
    coarse, fine = distance(reduced, 2**10), distance(reduced, 2**14)
    assert fine < scale / 50 and fine < coarse / 2.5                             # √16 = 4 expected
    lam = math.sqrt(6 / 16)
    planted = ReducedEmbedding(reduced.w_e / lam, reduced.w_u / lam, reduced.read_back * lam)
    assert distance(planted, 2**14) > 10 * fine


def test_the_finite_tanh_network_approaches_its_n_dimensional_form_as_the_width_grows():
    """tanh blocks, where no closed form exists: the D-dimensional network with M drawn units (orthogonal
    components and all) approaches the n-dimensional form with N ≫ M units, as M^(-1/2)."""
    from limits.embedded_resnet import dealt_units, reduced_embedding

    x, y = one_example_task(0, D_IN, D_OUT)
    w_e, w_u, u, v = _network(replicates=4, depth=4, dim=12, hidden=1024)
    reduced = reduced_embedding(w_e, w_u)
    uu, vv = unit_draws(0, "monte-carlo", range(4), 1, 6, 2**16)
    limit = train(EmbeddedResNet(reduced.w_e, reduced.w_u, dealt_units(uu, 4), dealt_units(vv, 4), activation="tanh"),
                  x, y, 4, 0.1)
    errors = [(train(EmbeddedResNet(w_e, w_u, u[..., :m], v[..., :m], activation="tanh"), x, y, 4, 0.1).hidden
               - reduced.states(limit.hidden)).abs().mean().item() for m in (16, 1024)]
    assert errors[1] < errors[0] / 4            # √(1024/16) = 8 expected


def test_dealt_units_give_each_depth_the_same_units():
    from limits.embedded_resnet import dealt_units

    units = torch.arange(2 * 6 * 16, dtype=torch.float64).reshape(2, 1, 6, 16)
    four, eight = dealt_units(units, 4), dealt_units(units, 8)
    assert four.shape == (2, 4, 6, 4) and eight.shape == (2, 8, 6, 2)
    assert torch.equal(four[:, 1], torch.cat([eight[:, 2], eight[:, 3]], dim=-1))   # block l = blocks 2l, 2l + 1
    with pytest.raises(ValueError, match="16 units cannot be dealt to 3 blocks"):
        dealt_units(units, 3)


BUDGET = dict(depths=(8, 9, 10), epochs=6, replicates=6, resamples=300, checkpoint_dir="none")


def test_the_budget_entry_fits_the_error_against_the_limit_along_the_shapes(monkeypatch):
    from validation.training import chaintron2026, run

    result = run("chaintron2026-budget", **BUDGET)
    entry = result.numbers["sweeps"]["budget"]
    assert entry["sizes"] == [8**6, 9**6, 10**6] and entry["fitted_sizes"] == entry["sizes"]
    assert _checks(result)["budget"] != "FAIL"
    assert all(0 < bias < 1e-5 for bias in result.records["budget"]["reference_bias"])
    monkeypatch.setattr(chaintron2026, "EmbeddedResNet", ScaledByDepthOnly)
    assert _checks(run("chaintron2026-budget", **BUDGET))["budget"] == "FAIL"


def test_the_budget_entry_with_tanh_blocks_measures_its_monte_carlo_limit(monkeypatch):
    """tanh blocks: the limit is the n-dimensional form with Monte-Carlo units, extrapolated in depth; its remainder
    (errors against the limit from half the units) is measured and small, the extrapolation's bias too."""
    from validation.training import chaintron2026, run

    result = run("chaintron2026-budget", **BUDGET, activation="tanh")
    entry, record = result.numbers["sweeps"]["budget"], result.records["budget"]
    assert _checks(result)["budget"] != "FAIL"
    assert all(0 < r < 0.05 for r in entry["monte_carlo"])
    assert all(0 < bias < 1e-4 for bias in record["reference_bias"])
    assert record["mean_field_units"] == [chaintron2026.ChaintronBudget.limit_units(L) for L in (8, 9, 10)]


def test_the_limit_from_monte_carlo_units_is_the_exact_limit_on_identity_blocks():
    from limits.embedded_resnet import depth_limit

    x, y = one_example_task(0, D_IN, D_OUT)
    exact = depth_limit(x, y, 4, 6, 0.1, refinement=4)
    u, v = unit_draws(0, "limit", range(1), 1, 6, 2**16)
    close = depth_limit(x, y, 4, 6, 0.1, refinement=4, units=(u, v))
    coarse = depth_limit(x, y, 4, 6, 0.1, refinement=4, units=(u[..., :2**12], v[..., :2**12]))
    error = (close.hidden - exact.hidden).abs().max().item()
    assert error < 0.02 * exact.hidden.abs().max().item()
    assert error < (coarse.hidden - exact.hidden).abs().max().item() / 2          # √16 = 4 expected
    with pytest.raises(ValueError, match="activation tanh: the limit of nonlinear blocks needs Monte-Carlo units"):
        depth_limit(x, y, 4, 6, 0.1, activation="tanh")


def test_the_budget_entry_refuses_depths_that_do_not_increase():
    from validation.core.settings import SettingsError
    from validation.training import run

    with pytest.raises(SettingsError) as caught:
        run("chaintron2026-budget", **{**BUDGET, "depths": (8, 8, 10)})
    assert caught.value.name == "depths"


# ----------------------------------------------------------------------- the nonlinear share (Chizat 2025, α)
def test_the_units_linear_map_gives_the_dense_networks_moments():
    """At M = ∞ every unit moves by one linear map T per block: D·T_v T_uᵀ is MomentResNet's C, D·T_u T_uᵀ its A."""
    from limits.embedded_resnet import unit_map

    x, y = one_example_task(5, D_IN, D_OUT)
    w_e, w_u, _, _ = _network(replicates=2, dim=7)
    low_rank, dense = InfiniteWidthResNet(w_e, w_u, 5, 4, alpha=1.7), MomentResNet.infinite(w_e, w_u, 5, alpha=1.7)
    train(low_rank, x, y, 4, 0.3)
    train(dense, x, y, 4, 0.3)
    T = unit_map(low_rank, 0.3)
    assert (7 * T[..., 7:, :] @ T[..., :7, :].transpose(-1, -2) - dense.C).abs().max() < 1e-11
    assert (7 * T[..., :7, :] @ T[..., :7, :].transpose(-1, -2) - dense.A).abs().max() < 1e-11


def test_the_finite_share_approaches_the_exact_infinite_width_share():
    from limits.embedded_resnet import infinite_nonlinear_share, nonlinear_share

    x, y = one_example_task(0, D_IN, D_OUT)
    w_e, w_u, u, v = _network(replicates=4, depth=4, dim=6, hidden=8192)
    limit = InfiniteWidthResNet(w_e, w_u, 4, 6)
    train(limit, x, y, 6, 0.2)
    exact = infinite_nonlinear_share(limit, 0.2, limit.forward(x)[0])
    gaps = []
    for m in (64, 8192):
        network = EmbeddedResNet(w_e, w_u, u[..., :m], v[..., :m])
        train(network, x, y, 6, 0.2)
        gaps.append((nonlinear_share(network, u[..., :m], v[..., :m], network.forward(x)[0]) - exact).abs().mean())
    assert gaps[1] < gaps[0] / 4                                          # √(8192/64) ≈ 11 expected
    assert bool((exact > 0).all())


ALPHA = dict(hiddens=(64, 128, 256, 512), depth=8, width=4, epochs=6, replicates=6, resamples=300,
             alpha_exponents=(0.0, 0.5), checkpoint_dir="none")


def test_the_alpha_entry_reads_feature_learning_at_fixed_alpha_and_the_lazy_ode_as_it_grows(monkeypatch):
    from validation.training import chizat2025, run

    result = run("chizat2025-alpha", **ALPHA)
    checks = {c["check"]: c["verdict"] for c in result.numbers["checks"]}
    assert "FAIL" not in checks.values(), checks
    sweeps = result.numbers["sweeps"]
    assert sweeps["a=0"]["reference_share_exponent"]["slope"] == pytest.approx(0, abs=1e-9)   # α fixed: one limit
    assert sweeps["a=0.5"]["reference_share_exponent"]["slope"] < -0.5
    assert sweeps["a=0.5"]["alpha"] == [1.0, 2**0.5, 2.0, 8**0.5]
    # a diagnostic that ignores α (the limit's share held at one value) fails both regime checks
    monkeypatch.setattr(chizat2025, "infinite_nonlinear_share", lambda network, eta, hidden: torch.full(
        (hidden.shape[0],), 0.05, dtype=hidden.dtype))
    planted = [c for c in run("chizat2025-alpha", **ALPHA).numbers["checks"] if "share" in c["check"]]
    assert len(planted) == 2 and all(c["verdict"] == "FAIL" for c in planted), planted


def test_with_tanh_blocks_the_alpha_entry_reads_the_regimes_on_the_limits_pooled_share(monkeypatch):
    """tanh: the limit's share from its n-dimensional form (cross halves of its units, pooled over replicates) is one
    positive value at a = 0 and falls about as α⁻² = M⁻¹ at a = ½; a limit whose share ignores α FAILs the lazy
    check."""
    from validation.training import chizat2025, run

    sizes = {**ALPHA, "width": 8, "activation": "tanh", "replicates": 12}
    result = run("chizat2025-alpha", **sizes)
    checks = {c["check"].split(" —")[0]: c["verdict"] for c in result.numbers["checks"]}
    assert "FAIL" not in checks.values(), checks
    sweeps = result.numbers["sweeps"]
    assert sweeps["a=0"]["limit_share_exponent"]["slope"] == 0 and sweeps["a=0"]["limit_share_exponent"]["defined"]
    assert -1.3 < sweeps["a=0.5"]["limit_share_exponent"]["slope"] < -0.7
    halves = chizat2025.share_cross_halves
    monkeypatch.setattr(chizat2025, "share_cross_halves", lambda network, *rest: [     # share² × α⁴: no α left
        part * (network.alpha if i == 0 else 1.0) ** 4 for i, part in enumerate(halves(network, *rest))])
    planted = {c["check"].split(" —")[0]: c["verdict"] for c in run("chizat2025-alpha", **sizes).numbers["checks"]}
    assert planted["a=0.5: the lazy ODE as α → ∞"] == "FAIL"


def test_a_residual_scale_without_the_width_fails_the_alpha_entrys_width_checks(monkeypatch):
    from validation.training import chizat2025, run

    monkeypatch.setattr(chizat2025, "EmbeddedResNet", ScaledByDepthOnly)
    checks = {c["check"].split(":")[0] + (" share" if "share" in c["check"] else ""): c["verdict"]
              for c in run("chizat2025-alpha", **ALPHA).numbers["checks"]}
    assert checks["a=0"] == "FAIL" and checks["a=0.5"] == "FAIL"


def test_the_alpha_entry_refuses_exponents_out_of_range():
    from validation.core.settings import SettingsError
    from validation.training import run

    with pytest.raises(SettingsError) as caught:
        run("chizat2025-alpha", **{**ALPHA, "alpha_exponents": (0.0, 1.5)})
    assert caught.value.name == "alpha_exponents"


def test_the_budget_check_fails_a_planted_term_with_half_its_exponent(monkeypatch):
    """The alternative the budget check must reject (issue: ±0.1 around 1/6 admitted it): a term of order
    P^(-1/12) planted by tests/planted_entries.py (an input scale off by 1/√L). Its exponent, 0.068 [0.005, 0.116]
    here, lay inside the old band [0.067, 0.267]; the margin 1/24 (half the way to 1/12) FAILs it."""
    import planted_entries
    from validation.training import chaintron2026, run

    assert chaintron2026.BUDGET_SWEEP.margin == pytest.approx(1 / 24)
    monkeypatch.setattr(chaintron2026, "EmbeddedResNet", planted_entries.OffByRootDepth)
    assert _checks(run("chaintron2026-budget", **BUDGET))["budget"] == "FAIL"
