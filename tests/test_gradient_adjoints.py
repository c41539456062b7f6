"""The limit's input gradient by optimise-then-discretise adjoints (validation.gradients.adjoints)."""

from __future__ import annotations

import math

import pytest
import torch

import limits
from limits.brownian import BrownianGrid, DyadicPath
from limits.ito import ItoLimit
from validation.gradients.adjoints import (
    ADJOINT_METHODS,
    RecordingBrownian,
    ode_adjoint_gradient,
    ode_autograd_gradient,
    sde_adjoint_gradient,
    sde_autograd_gradient,
)
from validation.gradients.tangents import LOSSES


def _sde_setup(name: str, samples: int, steps: int, seed: int = 0):
    pair = limits.make_pair(name, samples, seed=seed, width=3)
    path = BrownianGrid(samples, pair.noise_dim, steps, seed=seed, dtype=pair.dtype, device=pair.device)
    return pair, path, pair.initial_state()


def _rms(x: torch.Tensor) -> float:
    return x.square().sum(1).mean().sqrt().item()


# ------------------------------------------------------------------------------------------------ the path
@pytest.mark.parametrize("method", list(ADJOINT_METHODS))
def test_the_adjoint_reads_the_forward_increments_backwards(method):
    """(a) The backward pass of sdeint_adjoint queries the path only on the grid, each interval once, last first, and
    reads bit for bit the increment the forward pass (and a network of depth `steps`) read there: torchsde's
    ReverseBrownian asks the forward path for path(t_k, t_{k+1}) and does not negate it."""
    steps = 8
    pair, path, h0 = _sde_setup("res1", 4, 16)          # the path's grid is finer: coarse reads are tree sums
    recorder = RecordingBrownian(path)
    sde_adjoint_gradient(pair, recorder, h0, steps, method=method)
    queries = recorder.queries
    assert len(queries) == 2 * steps
    for q in queries:
        assert q.tb is not None
        for t in (q.ta, q.tb):
            assert t * steps == round(t * steps) and 0 <= t <= 1  # a grid point of dt = 1/steps, exactly
    intervals = [(q.ta, q.tb) for q in queries]
    forward = [(k / steps, (k + 1) / steps) for k in range(steps)]
    assert intervals[:steps] == forward
    assert intervals[steps:] == forward[::-1]
    for k in range(steps):
        first, back = queries[k], queries[2 * steps - 1 - k]
        assert torch.equal(first.value, path(k / steps, (k + 1) / steps))
        assert torch.equal(back.value, first.value)


def test_recording_brownian_forwards_everything():
    pair, path, _ = _sde_setup("res1", 4, 8)
    recorder = RecordingBrownian(path)
    assert (recorder.shape, recorder.dtype, recorder.device) == (path.shape, path.dtype, path.device)
    assert recorder.levy_area_approximation == path.levy_area_approximation
    assert torch.equal(recorder(0.5), path(0.0, 0.5))
    assert recorder.queries[-1][:2] == (0.5, None)
    with pytest.raises(TypeError, match="BaseBrownian"):
        RecordingBrownian(lambda a, b: None)


def test_adjoint_on_a_dyadic_path_of_the_same_increments_is_bit_for_bit():
    """The study's DyadicPath of the grid's fine increments is the same path: the same gradient, bit for bit."""
    pair, path, h0 = _sde_setup("res1", 4, 16)
    fine = DyadicPath(torch.stack([path(k / 16, (k + 1) / 16) for k in range(16)]))
    for method in ("euler", "reversible_heun"):
        assert torch.equal(sde_adjoint_gradient(pair, fine, h0, 4, method=method),
                           sde_adjoint_gradient(pair, path, h0, 4, method=method))


# ------------------------------------------------------------------------------------------------ exactness
@pytest.mark.parametrize("name", ["res1", "cohen-sde"])
@pytest.mark.parametrize("loss", list(LOSSES))
def test_reversible_heun_adjoint_is_the_exact_gradient_of_its_solve(name, loss):
    """(b) adjoint_reversible_heun reconstructs the forward solve algebraically: its gradient is autograd's through the
    same reversible Heun solve to rounding (measured: elementwise relative ≤ 2e-15 on res1, ≤ 8e-15 on cohen-sde)."""
    pair, path, h0 = _sde_setup(name, 6, 64)
    adjoint = sde_adjoint_gradient(pair, path, h0, 32, method="reversible_heun", loss=loss)
    autograd = sde_autograd_gradient(pair, path, h0, 32, method="reversible_heun", loss=loss)
    scale = autograd.abs().max().item()
    assert scale > 0.1
    torch.testing.assert_close(adjoint, autograd, rtol=1e-10, atol=1e-12 * scale)


def test_euler_and_midpoint_adjoints_are_other_discretisations():
    """The Euler and midpoint adjoints are not the exact gradients of their forward solves (that difference is what
    reversible Heun removes), yet close to them: at 32 steps relative differences 6.5e-2 and 6.5e-3 are measured."""
    pair, path, h0 = _sde_setup("res1", 6, 32)
    for method, low, high in (("euler", 1e-3, 0.3), ("midpoint", 1e-6, 3e-2)):
        adjoint = sde_adjoint_gradient(pair, path, h0, 32, method=method)
        autograd = sde_autograd_gradient(pair, path, h0, 32, method=method)
        relative = (adjoint - autograd).norm().item() / autograd.norm().item()
        assert low < relative < high, (method, relative)


# ------------------------------------------------------------------------------------------------ convergence
@pytest.mark.parametrize("loss", list(LOSSES))
def test_euler_autograd_gradient_is_gradient_pass_reference(loss):
    """Autograd through torchsde's Euler solve on the path is validation.gradients.tangents's discretise-then-optimise
    reference (forward tangents through the engine's Euler reference on the BrownianGrid of the same seed and steps):
    the same gradient to rounding (measured 1e-15 on res1), so the adjoints below are measured against it."""
    from validation.gradients.tangents import gradient_errors

    pair, path, h0 = _sde_setup("res1", 6, 64, seed=3)
    reference = gradient_errors(pair, [8], seed=3, loss=loss, reference_steps=64, backward_times=(0.0,)).reference_input
    ours = sde_autograd_gradient(pair, path, h0, 64, method="euler", loss=loss)
    torch.testing.assert_close(ours, torch.as_tensor(reference), rtol=1e-12, atol=1e-12)


def test_euler_adjoint_converges_to_the_discretise_then_optimise_gradient():
    """(c) The Euler adjoint at L steps → the exact gradient of Euler–Maruyama at 1024 steps of the same path (the
    gradient validation.gradients.tangents differentiates by forward tangents), at strong order ½: the RMS error over 32
    samples should fall by √8 ≈ 2.83 from 16 to 128 steps.

    Measured (res1, width 3, 32 samples, seed 0): RMS error 0.351 (16 steps), 0.253 (32), 0.125 (128), gradient RMS
    ≈ 2.5; ratio 16→128: 2.81 (seeds 0–9: 1.84–3.66, median 2.8); ratio 32→128: 2.02 (seeds 0–9: 1.65–2.35, too
    noisy for a test at 1.8)."""
    pair, path, h0 = _sde_setup("res1", 32, 1024)
    reference = sde_autograd_gradient(pair, path, h0, 1024, method="euler")
    errors = {steps: _rms(sde_adjoint_gradient(pair, path, h0, steps, method="euler") - reference)
              for steps in (16, 128)}
    assert errors[16] / errors[128] > 1.8, errors     # order ½: √8 ≈ 2.83; measured 2.81
    assert errors[128] < 0.1 * _rms(reference), errors


# ------------------------------------------------------------------------------------------------ ODE pairs
def _linear_pair(activation: str = "identity"):
    """res1-ode with the identity activation: the linear ODE dH/dt = V_t H (smoother weights than the default
    lengthscale 0.1, so that dopri5 takes fewer steps)."""
    return limits.make_pair("res1-ode", 4, seed=0, width=3, activation=activation, lengthscale=0.5)


def _propagator(pair) -> torch.Tensor:
    """Φ (N, d, d) of a linear field, H_1 = Φ h0: dΦ/dt = V_t Φ solved for the d columns at once (dopri5, 1e-11)."""
    from torchdiffeq import odeint

    d, n = pair.width, pair.samples

    def columns_field(t, columns):                       # columns (d, N, d): column j of Φ for every sample
        return torch.stack([pair.limit_field(t, column) for column in columns])

    start = torch.eye(d, dtype=pair.dtype).unsqueeze(1).expand(d, n, d).clone()
    ts = torch.tensor([0.0, 1.0], dtype=pair.dtype)
    return odeint(columns_field, start, ts, rtol=1e-11, atol=1e-11)[-1].permute(1, 2, 0)


def test_linear_ode_adjoint_is_exact():
    """(d) On a linear ODE the dopri5 adjoint's gradient equals autograd's through odeint and the closed forms
    ∂(½‖H_1‖²)/∂h0 = Φᵀ Φ h0, to the tolerance (measured: 6e-10 from autograd, 9e-10 from Φᵀ Φ h0)."""
    pair = _linear_pair()
    h0 = pair.initial_state()
    adjoint, autograd = ode_adjoint_gradient(pair, h0), ode_autograd_gradient(pair, h0)
    assert (adjoint - autograd).abs().max().item() < 1e-8
    phi = _propagator(pair)
    h1 = torch.einsum("nij,nj->ni", phi, h0)
    assert (adjoint - torch.einsum("nij,ni->nj", phi, h1)).abs().max().item() < 1e-8


def test_fixed_step_rk4_adjoint_of_a_linear_ode_is_exact_to_rounding():
    """With fixed-step RK4 (torchdiffeq's 3/8 rule, symmetric nodes) the backward solve of a' = −a V_t is the
    transposed forward propagator: adjoint = autograd to rounding on the linear ODE (measured 4e-14). The nonlinear
    tanh field breaks that identity (measured 1.4e-8), so the check is not vacuous."""
    pair = _linear_pair()
    h0 = pair.initial_state()
    for loss in LOSSES:
        adjoint = ode_adjoint_gradient(pair, h0, steps=32, loss=loss)
        assert (adjoint - ode_autograd_gradient(pair, h0, steps=32, loss=loss)).abs().max().item() < 1e-11
    # ∂(Σ H_1)/∂h0 = Φᵀ 1, up to RK4's own error at 32 steps (measured 1.5e-7)
    assert (adjoint - _propagator(pair).sum(1)).abs().max().item() < 1e-5
    tanh = _linear_pair("tanh")
    h0 = tanh.initial_state()
    assert (ode_adjoint_gradient(tanh, h0, steps=32) - ode_autograd_gradient(tanh, h0, steps=32)).abs().max() > 1e-9


class _BareLimit(ItoLimit):
    """A user's limit: f and g_prod only, no noise_channels, no closed forms (the generic g and correction)."""

    def __init__(self, limit: ItoLimit) -> None:
        super().__init__()
        self.inner = limit

    def f(self, t, y):
        return self.inner.f(t, y)

    def g_prod(self, t, y, v):
        return self.inner.g_prod(t, y, v)


def test_a_limit_with_f_and_g_prod_only(monkeypatch):
    """A limit that sets no noise_channels gets the pair's noise_dim (as validation.solvers does) and the generic g
    assembled from g_prod: the Euler adjoint is the closed-form one to rounding. The Stratonovich methods are refused:
    the generic correction is computed on detached states, so its derivative would be missing from the gradient."""
    pair, path, h0 = _sde_setup("res1", 4, 16)
    closed = sde_adjoint_gradient(pair, path, h0, 16, method="euler")
    real = pair.limit_sde
    monkeypatch.setattr(pair, "limit_sde", lambda: _BareLimit(real()))
    assert pair.limit_sde().noise_channels == 0
    torch.testing.assert_close(sde_adjoint_gradient(pair, path, h0, 16, method="euler"), closed, rtol=1e-12,
                               atol=1e-12)
    with pytest.raises(ValueError, match="no closed-form stratonovich_correction"):
        sde_adjoint_gradient(pair, path, h0, 16, method="reversible_heun")


# ------------------------------------------------------------------------------------------------ bad input
def test_bad_input():
    """(e) Unknown names and the wrong kind of pair are refused with the allowed values named."""
    pair, path, h0 = _sde_setup("res1", 4, 16)
    with pytest.raises(ValueError, match="allowed: euler, midpoint, reversible_heun"):
        sde_adjoint_gradient(pair, path, h0, 8, method="milstein")
    with pytest.raises(ValueError, match="'milstein' unknown"):
        sde_autograd_gradient(pair, path, h0, 8, method="milstein")
    with pytest.raises(ValueError, match="allowed: half-square, sum"):
        sde_adjoint_gradient(pair, path, h0, 8, loss="square")
    with pytest.raises(ValueError, match="steps=3 must divide"):
        sde_adjoint_gradient(pair, path, h0, 3)
    with pytest.raises(ValueError, match="steps=0"):
        sde_adjoint_gradient(pair, path, h0, 0)
    with pytest.raises(ValueError, match=r"h0 of shape \(4, 5\)"):
        sde_adjoint_gradient(pair, path, torch.zeros(4, 5, dtype=pair.dtype), 8)
    with pytest.raises(ValueError, match="does not match"):
        sde_adjoint_gradient(pair, BrownianGrid(4, 3, 16, dtype=pair.dtype), h0, 8)
    with pytest.raises(ValueError, match="t1=1"):
        sde_adjoint_gradient(pair, BrownianGrid(4, pair.noise_dim, 16, t1=2.0, dtype=pair.dtype), h0, 8)
    with pytest.raises(ValueError, match="dtype"):
        sde_adjoint_gradient(pair, BrownianGrid(4, pair.noise_dim, 16, dtype=torch.float32), h0, 8)
    with pytest.raises(TypeError, match="BaseBrownian"):
        sde_adjoint_gradient(pair, lambda a, b: None, h0, 8)
    ode = limits.make_pair("res1-ode", 4, seed=0, width=3)
    with pytest.raises(TypeError, match="ODE pair"):
        sde_adjoint_gradient(ode, path, ode.initial_state(), 8)
    with pytest.raises(TypeError, match="SDE pair"):
        ode_adjoint_gradient(pair, h0)
    with pytest.raises(ValueError, match="allowed without steps: dopri5"):
        ode_adjoint_gradient(ode, ode.initial_state(), method="rk4")
    with pytest.raises(ValueError, match="allowed with steps: euler"):
        ode_autograd_gradient(ode, ode.initial_state(), method="dopri5", steps=8)
    with pytest.raises(ValueError, match="rtol=0"):
        ode_adjoint_gradient(ode, ode.initial_state(), rtol=0)
    assert set(ADJOINT_METHODS) == {"euler", "midpoint", "reversible_heun"}
    assert all(math.isfinite(float(x)) for x in sde_adjoint_gradient(pair, path, h0, 4).flatten())
