"""Issue 62: no shortcut a subclass can silently invalidate (limits.closed_forms).

A closed form (the diffusion matrix, its derivative, the Stratonovich correction, the tangents, an exact ODE solve) or a
shortcut flag (``drift_free``) restates a primary method (``f``, ``g_prod``, ``network_step``, ``limit_field``). A
subclass that overrides the primary method and not the form gets the generic form back when it is defined; a form a
class defines wrongly is refused at a run's start. Planted errors: each test below fails if the rule is removed (the
withdrawal: the drift subclass is stepped without its drift and PASSes; the probe: a wrong diffusion matrix runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from limits import ModelConfig, PairError
from limits.closed_form_probe import check_pair
from limits.closed_forms import ClosedFormError
from limits.cohen import CohenLimit, CohenODE, CohenODELimit, CohenSDE
from limits.ito import ItoLimit
from limits.pairs import ODEPair, SDEPair
from limits.registry import PAIRS, make_pair
from limits.res_sde import Res1Limit, Res1SDE
from validation import convergence, solvers
from validation.core.one_pass import EulerOnIncrements

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import wrong_noise_scale  # noqa: E402

PLANTS = str(ROOT / "tests" / "wrong_noise_scale.py")


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_every_shipped_pair_keeps_its_closed_forms_and_they_agree_with_its_methods(name):
    """The shipped pairs withdraw nothing, and each closed form they have equals the generic form on a probe state at
    two widths (the probe the studies run on a user's pair)."""
    cls = PAIRS[name]
    assert cls.closed_forms_withdrawn == ()
    for width in (2, 5):
        check_pair(make_pair(name, samples=2, width=width))


@pytest.mark.parametrize("base, primary, withdrawn", [
    (Res1Limit, "f", {"drift_free", "f_tangent", "exact_solution"}),
    (Res1Limit, "g_prod", {"g_prod_tangent", "diffusion_matrix", "diffusion_derivative", "stratonovich_correction",
                           "exact_solution"}),
    (Res1Limit, "diffusion_matrix", {"diffusion_derivative", "stratonovich_correction"}),
    (CohenLimit, "f", {"f_tangent"}),
    (CohenLimit, "g_prod", {"g_prod_tangent", "diffusion_matrix", "stratonovich_correction"}),
    (CohenODELimit, "g_prod", {"g_prod_tangent", "diffusion_matrix", "stratonovich_correction"}),
])
def test_a_subclass_that_overrides_a_primary_method_loses_the_forms_that_restate_it(base, primary, withdrawn):
    override = {primary: lambda self, *args: getattr(base, primary)(self, *args)}
    subclass = type(f"Override{primary}", (base,), override)
    assert set(subclass.closed_forms_withdrawn) == withdrawn
    for name in withdrawn:   # each one is the generic form again
        assert getattr(subclass, name) is vars(ItoLimit)[name]
    # a further subclass that overrides nothing keeps what its parent had
    assert type("Again", (subclass,), {}).closed_forms_withdrawn == ()


def test_a_closed_form_given_with_its_override_is_kept():
    class Both(Res1Limit):
        def f(self, t, y):
            return -y

        def f_tangent(self, t, y, tangents):
            return -tangents

    assert Both.closed_forms_withdrawn == ("drift_free", "exact_solution")
    assert Both.drift_free is False and Both.f_tangent is not None


def test_the_engine_steps_a_drift_override_with_its_drift():
    """The inherited drift_free flag made the engine step y + g ΔW without calling the subclass's f."""
    limit = wrong_noise_scale._DriftLimit(make_pair("res1", width=3).activation, 0.5, 3)
    loop = EulerOnIncrements.of(limit, 4, torch.float64, torch.device("cpu"))
    y = torch.ones(2, 3, dtype=torch.float64)
    increments = torch.zeros(1, 2, 9, dtype=torch.float64)
    stepped = loop(y, 0, increments, 1, 0)[-1]
    torch.testing.assert_close(stepped, y - y / 2 / 4)   # y + f Δt with f = −y/2, Δt = 1/4 (no noise)


def test_the_pair_side_tangent_and_the_exact_ode_solve_are_withdrawn_too():
    class Step(Res1SDE):
        def network_step(self, h, t, dt, dW):
            return super().network_step(h, t, dt, dW) - h * dt

    class Field(CohenODE):
        def limit_field(self, t, h):
            return super().limit_field(t, h) - h

    assert Step.closed_forms_withdrawn == ("network_tangent",) and Step.network_tangent is None
    assert Field.closed_forms_withdrawn == ("solve_limit",) and Field.solve_limit is vars(ODEPair)["solve_limit"]
    assert issubclass(Step, SDEPair)


def test_a_wrong_closed_form_defined_with_its_methods_is_refused_naming_it():
    class WrongMatrix(Res1Limit):
        def diffusion_matrix(self, t, y):
            return 1.1 * super().diffusion_matrix(t, y)

    class WrongTangent(CohenSDE):
        def network_tangent(self, h, t, dt, dW, tangents):
            return 2 * super().network_tangent(h, t, dt, dW, tangents)

    class Pair(Res1SDE):
        def limit_sde(self):
            return WrongMatrix(self.activation, self.scale, self.width)

    with pytest.raises(ClosedFormError, match="diffusion_matrix differs"):
        check_pair(Pair(ModelConfig(width=3), 2))
    with pytest.raises(ClosedFormError, match="network_tangent differs"):
        check_pair(WrongTangent(ModelConfig(width=3), 2))
    # through a study's start: bad input (PairError), before anything is computed
    with pytest.raises(PairError, match="diffusion_matrix differs"):
        convergence.run(Pair, samples=20, depths=(4, 8, 16))


def test_a_wrong_drift_free_flag_is_refused():
    class Flagged(Res1Limit):
        drift_free = True

        def f(self, t, y):
            return -y

    class Pair(Res1SDE):
        def limit_sde(self):
            return Flagged(self.activation, self.scale, self.width)

    with pytest.raises(ClosedFormError, match="drift_free differs"):
        check_pair(Pair(ModelConfig(width=2), 2))


def test_the_planted_drift_override_fails_the_main_study():
    """Before: 0.064 at L = 256 and PASS on 6 seeds of 6. The drift −H/2 keeps the error of order one."""
    result = convergence.run(f"{PLANTS}:DriftOverride", samples=100, depths=(4, 8, 16, 32, 64), bootstrap=300)
    assert result.verdict == "FAIL", result.table()


def test_the_planted_noise_override_fails_the_solver_study_in_the_networks_row():
    """Before: Milstein with Lévy areas read the inherited diffusion matrix, so the reference was the unscaled SDE and
    the network's row PASSed (0.502 [0.465, 0.540])."""
    result = solvers.run(f"{PLANTS}:NoiseOverride", width=2, samples=200, schemes=("euler", "milstein_levy_area"),
                         depths=(4, 8, 16, 32, 64))
    assert result.scheme_checks["network"].verdict == "FAIL", result.table()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_model_that_exits_mid_run_is_an_internal_error_naming_its_file(workers, capsys):
    code = convergence.main(["--model", f"{PLANTS}:ExitsMidRun", "--samples", "600", "--depths", "4,8,16",
                             "--workers", str(workers), "--quiet"])
    err = capsys.readouterr().err
    assert code == 3, err
    # the code itself may not survive the trip back from a worker process (it arrives as None there)
    assert "sys.exit(" in err and "was called during the run" in err and "wrong_noise_scale.py" in err
