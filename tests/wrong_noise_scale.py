"""Deliberately wrong pairs for the verdict tests, written as a user's own pairs (docs/howto/own_model.md): res-1's
network against an SDE whose noise scale is 5% or 30% too large, and the damped ODE example's network against its
limit with the damping drift left out. Their errors against those limits do not vanish, so no honest rate fit may
PASS them:

    python -m validation.convergence --model tests/wrong_noise_scale.py:NoiseScale105
    python -m validation.convergence --model tests/wrong_noise_scale.py:NoiseScale130
    python -m validation.convergence --model tests/wrong_noise_scale.py:DriftMissing
"""

import importlib.util
from pathlib import Path

from limits.res_sde import Res1Limit, Res1SDE

_spec = importlib.util.spec_from_file_location(
    "damped_res1_ode", Path(__file__).resolve().parents[1] / "docs/examples/damped_res1_ode.py")
_damped = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_damped)


class NoiseScale105(Res1SDE):
    """res-1's network, paired with dH = 1.05 (s/√d) dB σ(H)."""

    name = "res1-noise-x1.05"
    description = "res-1 network  <->  neural SDE with a 5% too large noise scale (deliberately wrong)"

    def limit_sde(self) -> Res1Limit:
        return Res1Limit(self.activation, 1.05 * self.scale, self.width)


class NoiseScale130(Res1SDE):
    """res-1's network, paired with dH = 1.3 (s/√d) dB σ(H)."""

    name = "res1-noise-x1.3"
    description = "res-1 network  <->  neural SDE with a 30% too large noise scale (deliberately wrong)"

    def limit_sde(self) -> Res1Limit:
        return Res1Limit(self.activation, 1.3 * self.scale, self.width)


class DriftMissing(_damped.DampedRes1ODE):
    """The damped ODE example's network (damping λ = 1), paired with dH/dt = 𝒱_t σ(H): the −λ H drift is missing."""

    name = "damped-res1-ode-drift-missing"
    description = "damped res-1 network  <->  neural ODE without the damping drift (deliberately wrong)"

    def limit_field(self, t, h):
        return super().limit_field(t, h) + self.damping * h
