"""Tamed Euler and drift-implicit Euler (limits/schemes): orders on known solutions, agreement with
Euler–Maruyama on small steps, the implicit solve and its failures, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from limits import make_pair
from limits.brownian import BrownianGrid
from limits.ito import ItoLimit, SDEForm
from limits.schemes.base import PathIncrement, SchemeError
from limits.schemes.drift_implicit_euler import DriftImplicitEuler
from limits.schemes.euler_maruyama import EulerMaruyama
from limits.schemes.tamed_euler import TamedEuler


class LinearDiagonal(ItoLimit):
    """dX = a(t) X dt + b X ⊙ dB (coordinate-wise geometric Brownian motion; a may depend on t)."""

    def __init__(self, a, b: float, width: int) -> None:
        super().__init__()
        self.a, self.b = (a if callable(a) else (lambda t, a=a: a)), b
        self.noise_channels = width

    def f(self, t, y):
        return self.a(float(t)) * y

    def g_prod(self, t, y, v):
        return self.b * y * v


class ScalarRiccati(ItoLimit):
    """dX = c X² dt (no noise), width 1: blows up at t = 1/(c X_0)."""

    noise_channels = 1

    def __init__(self, c: float) -> None:
        super().__init__()
        self.c = c

    def f(self, t, y):
        return self.c * y * y

    def g_prod(self, t, y, v):
        return torch.zeros_like(y)


def _slope(steps, errors) -> float:
    return -float(np.polyfit(np.log(steps), np.log(errors), 1)[0])


def test_both_schemes_converge_at_order_one_half_to_the_exact_solution():
    """Geometric Brownian motion, X_1 = X_0 exp((a − b²/2) + b B_1) on the same path: strong order 1/2.

    A mild drift (a = 0.3): the taming perturbs each step by up to Δt²‖f‖², an O(Δt) term whose constant grows
    with the drift's fourth moment; at a = 0.8 it still steepens tamed Euler's slope to 0.62 over n = 16…256."""
    a, b, width, samples = 0.3, 0.9, 2, 3000
    limit = LinearDiagonal(a, b, width)
    grid = BrownianGrid(samples, width, 1024, seed=11)
    x0 = torch.ones(samples, width)
    exact = x0 * torch.exp(torch.tensor(a - b * b / 2) + b * grid(0.0, 1.0))
    steps = [16, 32, 64, 128, 256]
    for cls in (EulerMaruyama, TamedEuler, DriftImplicitEuler):
        scheme = cls(limit)
        errors = [float((scheme.integrate(x0, grid, n) - exact).pow(2).sum(1).mean().sqrt()) for n in steps]
        assert 0.4 <= _slope(steps, errors) <= 0.6, (cls.name, errors)


def test_tamed_and_implicit_approach_euler_maruyama_at_order_one():
    """On the quadratic cohen-sde drift, both differ from Euler–Maruyama on the same path by O(Δt).

    At s_A = s_b = 0.5: the taming's gap is carried by the paths with the largest ‖f‖, and at the default 0.7
    its local slope is still 0.85–0.93 at n = 256…1024 (the implicit scheme's is 1.0 from n = 32)."""
    pair = make_pair("cohen-sde", samples=200, width=3, seed=2, options={"trend": "constant", "s_a": 0.5, "s_b": 0.5})
    limit = pair.limit_sde()
    grid = BrownianGrid(200, pair.noise_dim, 1024, seed=2)
    h0 = pair.initial_state()
    steps = [64, 128, 256, 512, 1024]
    euler = [EulerMaruyama(limit).integrate(h0, grid, n) for n in steps]
    for cls in (TamedEuler, DriftImplicitEuler):
        gaps = [float((cls(limit).integrate(h0, grid, n) - e).pow(2).sum(1).mean().sqrt())
                for n, e in zip(steps, euler)]
        assert gaps[-1] < 0.05 * float(euler[-1].pow(2).sum(1).mean().sqrt())
        assert 0.85 <= _slope(steps, gaps) <= 1.15, (cls.name, gaps, _slope(steps, gaps))


def test_tamed_euler_is_euler_maruyama_when_the_drift_is_small():
    pair = make_pair("cohen-sde", samples=50, width=3, seed=4)
    limit = pair.limit_sde()
    h = pair.initial_state()
    dw = torch.randn(50, pair.noise_dim, generator=torch.Generator().manual_seed(0)) * 0.1
    dt = 1e-4
    tamed, _ = TamedEuler(limit).step(0.3, dt, h, PathIncrement(dw), None)
    euler, _ = EulerMaruyama(limit).step(0.3, dt, h, PathIncrement(dw), None)
    drift_norm = SDEForm(limit).f(0.3, h).norm(dim=1)
    gap = (tamed - euler).norm(dim=1)
    assert torch.all(gap <= dt * dt * drift_norm**2 * (1 + 1e-9) + 1e-15)
    assert float((dt * drift_norm).max()) < 1e-2 and float(gap.max()) < 1e-6
    # with no drift at all the two steps are the same numbers
    zero = LinearDiagonal(0.0, 0.5, 3)
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    v = torch.randn(5, 3, generator=torch.Generator().manual_seed(2))
    assert torch.equal(TamedEuler(zero).step(0.0, 0.1, x, PathIncrement(v), None)[0],
                       EulerMaruyama(zero).step(0.0, 0.1, x, PathIncrement(v), None)[0])


def test_tamed_drift_increment_is_below_one_however_large_the_drift():
    limit = ScalarRiccati(1.0)
    x = torch.tensor([[1e3], [1e6], [-1e9]])
    out, _ = TamedEuler(limit).step(0.0, 0.5, x, PathIncrement(torch.zeros(3, 1)), None)
    assert torch.all((out - x).abs() <= 1.0)  # Δt‖f‖/(1 + Δt‖f‖) < 1, = 1 after rounding for huge ‖f‖


def test_implicit_step_satisfies_its_equation_and_reads_the_drift_at_the_step_end():
    """X − Δt f(t + Δt, X) = h + g(t, h) ΔB to the stated tolerance; for the linear drift a(t) X the step is
    (h + g ΔB)/(1 − Δt a(t + Δt)) — the drift is read at the end of the step."""
    a = lambda t: 1.0 + 3.0 * t
    limit = LinearDiagonal(a, 0.7, 3)
    h = torch.randn(20, 3, generator=torch.Generator().manual_seed(3))
    dw = torch.randn(20, 3, generator=torch.Generator().manual_seed(4)) * 0.2
    t, dt = 0.25, 0.05
    out, log = DriftImplicitEuler(limit).step(t, dt, h, PathIncrement(dw), None)
    rhs = h + 0.7 * h * dw
    torch.testing.assert_close(out, rhs / (1 - dt * a(t + dt)), rtol=1e-13, atol=1e-13)
    assert log.summary()["no_solution"] == 0 and log.steps == 1

    pair = make_pair("cohen-sde", samples=200, width=4, seed=5, options={"s_a": 1, "s_b": 1})
    limit = pair.limit_sde()
    scheme = DriftImplicitEuler(limit)
    h = 3 * pair.initial_state()
    dw = torch.randn(200, pair.noise_dim, generator=torch.Generator().manual_seed(6)) * 0.25
    out, log = scheme.step(0.5, 1 / 16, h, PathIncrement(dw), None)
    solved = torch.isfinite(out).all(dim=1)
    assert int(solved.sum()) + log.summary()["no_solution"] + log.summary()["wrong_branch"] == 200
    assert solved.sum() > 150
    rhs = h + limit.g_prod(0.5, h, dw)
    fx = limit.f(0.5 + 1 / 16, out)
    residual = (out - fx / 16 - rhs)[solved].abs().amax(dim=1)
    scale = 1 + out[solved].abs().amax(1) + rhs[solved].abs().amax(1) + (fx[solved] / 16).abs().amax(1)
    assert torch.all(residual <= 1000 * torch.finfo(torch.float64).eps * scale)
    assert log.max_scaled_residual <= 1000 * torch.finfo(torch.float64).eps


def test_implicit_scheme_reports_where_the_quadratic_has_no_root():
    """x − Δt c x² = y has a real root iff 1 − 4 Δt c y ≥ 0; the scheme finds the near root where it exists and
    reports (and NaNs) the others — never hides them."""
    c, dt = 1.0, 0.1
    y = torch.tensor([[-5.0], [0.0], [1.0], [2.4], [2.6], [40.0]])  # 1/(4 Δt c) = 2.5
    scheme = DriftImplicitEuler(ScalarRiccati(c))
    out, log = scheme.step(0.0, dt, y, PathIncrement(torch.zeros(6, 1)), None)
    has_root = (1 - 4 * dt * c * y).squeeze(1) >= 0
    assert torch.equal(log.no_solution, ~has_root) and not log.wrong_branch.any()
    near = (1 - torch.sqrt(1 - 4 * dt * c * y[has_root])) / (2 * dt * c)
    torch.testing.assert_close(out[has_root], near, rtol=1e-12, atol=1e-14)
    assert torch.isnan(out[~has_root]).all()
    assert log.first_failure_step.tolist() == [-1, -1, -1, -1, 0, 0]
    # a NaN sample is carried, not counted again; the others go on
    out2, log = scheme.step(dt, dt, out, PathIncrement(torch.zeros(6, 1)), log)
    # y = 2.4 went to x = 4 > 2.5: its second equation has no root
    assert log.no_solution.tolist() == [False, False, False, True, True, True]
    assert log.first_failure_step.tolist() == [-1, -1, -1, 1, 0, 0]
    torch.testing.assert_close(out2[:3], (1 - torch.sqrt(1 - 4 * dt * c * out[:3])) / (2 * dt * c))
    with pytest.raises(SchemeError, match="no solution.*2 of 6 samples"):
        DriftImplicitEuler(ScalarRiccati(c), on_failure="raise").step(0.0, dt, y, PathIncrement(torch.zeros(6, 1)),
                                                                       None)


def test_implicit_scheme_needs_the_step_to_shrink_near_a_blow_up():
    """dX = X² dt from X_0 = 1 blows up at t = 1: with 4 steps the implicit equation becomes unsolvable before
    t = 1; far from the blow-up (X_0 = 0.25, exact X_1 = 1/3) it converges at order 1 (no noise)."""
    limit = ScalarRiccati(1.0)
    scheme = DriftImplicitEuler(limit)
    grid = BrownianGrid(1, 1, 1024, seed=0)
    out = scheme.integrate(torch.ones(1, 1), grid, 4)
    assert torch.isnan(out).all() and scheme.log.summary()["no_solution"] == 1
    errors = [abs(float(scheme.integrate(torch.full((1, 1), 0.25), grid, n)) - 1 / 3) for n in (32, 64, 128, 256)]
    assert 0.95 <= _slope([32, 64, 128, 256], errors) <= 1.05


def test_bad_input_gives_clear_errors():
    limit = LinearDiagonal(0.5, 0.5, 2)
    h = torch.ones(3, 2)
    increment = PathIncrement(torch.zeros(3, 2))
    for cls in (TamedEuler, DriftImplicitEuler):
        with pytest.raises(ValueError, match="dt=0.*> 0"):
            cls(limit).step(0.0, 0.0, h, increment, None)
        with pytest.raises(SchemeError, match="Itô limit"):
            cls(SDEForm(limit, "stratonovich"))
    with pytest.raises(SchemeError, match="tol=0.*0 < tol < 1"):
        DriftImplicitEuler(limit, tol=0.0)
    with pytest.raises(SchemeError, match="max_iterations=0.*≥ 1"):
        DriftImplicitEuler(limit, max_iterations=0)
    with pytest.raises(SchemeError, match="on_failure='ignore'.*nan, raise"):
        DriftImplicitEuler(limit, on_failure="ignore")
    with pytest.raises(SchemeError, match=r"shape \(N, d\)"):
        DriftImplicitEuler(limit).init_state(0.0, torch.ones(2))


def test_declared_abilities():
    limit = LinearDiagonal(0.5, 0.5, 2)
    for cls in (TamedEuler, DriftImplicitEuler):
        scheme = cls(limit)
        assert scheme.strong_order == 0.5 and scheme.sde_type == "ito" and cls.supports("general")
    assert math.isclose(DriftImplicitEuler(limit).evaluations, 3)
