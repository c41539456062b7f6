"""Deliberately wrong pairs for the verdict tests, written as a user's own pairs (docs/howto/own_model.md): res-1's
network against an SDE whose noise scale is 5% or 30% too large, and the damped ODE example's network against its
limit with the damping drift left out. Their errors against those limits do not vanish, so no honest rate fit may
PASS them:

    python -m validation.convergence --model tests/wrong_noise_scale.py:NoiseScale105
    python -m validation.convergence --model tests/wrong_noise_scale.py:NoiseScale130
    python -m validation.convergence --model tests/wrong_noise_scale.py:DriftMissing

the README's other convergence commands against a limit that is wrong in one term (the calibration's alternatives,
``benchmarks/calibrate.py``): ``Res2FieldScale110``, ``CohenODEFieldScale110`` (a vector field 10% too large) and
``PFDriftMissing`` (Peluchetti–Favaro's SDE without its drift ½ φ''(0) …, the Itô term of Thm 3.1) and
``CohenItoMissing`` (Cohen et al.'s SDE without its Itô correction, still claimed at rate ½ — the shipped
``cohen-sde-naive`` pair claims the opposite, that the error does *not* vanish, so its PASS is the rejection), and
``Kutta3ClaimedAsRK4`` (res2-rk4's claim of rate 4 for blocks that are Kutta's order-3 step: the competing rate),
``NaiveClaimOnTheCorrectedSDE`` (``cohen-sde-naive``'s claim, no convergence, made where the error does vanish);
and two wrong pairs built the way a user extends a shipped limit, by a subclass that overrides one primary method
(the closed forms it inherits are withdrawn, :mod:`limits.closed_forms`): ``DriftOverride``, ``NoiseOverride``.
"""

import importlib.util
from pathlib import Path

import torch

from limits.cohen import CohenODE, CohenSDE, CohenSDENaive
from limits.peluchetti_favaro import PFLimit, PFPair
from limits.res_ode import Res2ODE
from limits.res_sde import Res1Limit, Res1SDE
from limits.rk_resnets import Res2RK4

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


class _DriftLimit(Res1Limit):
    """res-1's limit with a drift −H/2 of its own: a subclass that overrides ``f`` and inherits ``drift_free``."""

    def f(self, t, y):
        return -y / 2


class DriftOverride(Res1SDE):
    """res-1's network, paired with a subclass of its limit that overrides the drift (−H/2, which the network does
    not have). The inherited ``drift_free`` flag once made the engine skip the override: the pair PASSed."""

    name = "res1-drift-override"
    description = "res-1 network  <->  its SDE with a drift -H/2 added by a subclass (deliberately wrong)"

    def limit_sde(self) -> Res1Limit:
        return _DriftLimit(self.activation, self.scale, self.width)


class _NoiseLimit(Res1Limit):
    """res-1's limit with its noise 1.15× the network's, by an override of ``g_prod`` alone (the inherited closed forms
    — diffusion matrix, its derivative, the Stratonovich correction — restate the unscaled noise)."""

    def g_prod(self, t, y, v):
        return 1.15 * super().g_prod(t, y, v)


class NoiseOverride(Res1SDE):
    """res-1's network, paired with a subclass of its limit whose ``g_prod`` is 1.15× the network's noise. The schemes
    that read the inherited diffusion matrix once integrated the unscaled SDE: the solver study's reference was the
    right SDE, not this one, and its network row PASSed."""

    name = "res1-noise-override"
    description = "res-1 network  <->  its SDE with g_prod scaled by 1.15 in a subclass (deliberately wrong)"

    def limit_sde(self) -> Res1Limit:
        return _NoiseLimit(self.activation, self.scale, self.width)


class ExitsMidRun(Res1SDE):
    """res-1 whose network calls ``sys.exit(0)`` halfway through: a model cannot forge a PASS by its exit status."""

    name = "res1-exits"

    def network_step(self, h, t, dt, dW):
        if t >= 0.5:
            import sys

            sys.exit(0)
        return super().network_step(h, t, dt, dW)


class Res2FieldScale110(Res2ODE):
    """res-2's network (smooth weights), paired with dH/dt = 1.1 V_t σ(H): the ODE's field 10% too large."""

    name = "res2-ode-field-x1.1"
    description = "res-2 network  <->  neural ODE with a 10% too large field (deliberately wrong)"

    def limit_field(self, t, h):
        return 1.1 * super().limit_field(t, h)


class CohenODEFieldScale110(CohenODE):
    """Cohen et al.'s ODE-regime network, paired with its linear ODE's field 10% too large."""

    name = "cohen-ode-field-x1.1"
    description = "Cohen et al.'s ODE-regime network  <->  its linear ODE with a 10% too large field (deliberately wrong)"

    def limit_field(self, t, h):
        return 1.1 * super().limit_field(t, h)


class _PFDriftFreeLimit(PFLimit):
    """Peluchetti–Favaro's limit without its drift: an override of ``f`` alone (Thm 3.1's ½ φ''(0) term left out)."""

    def f(self, t, y):
        return torch.zeros_like(y)


class PFDriftMissing(PFPair):
    """Peluchetti–Favaro's network (swish, φ''(0) = ½), paired with its SDE less the drift."""

    name = "pf-drift-missing"
    description = "Peluchetti-Favaro network  <->  its SDE without the drift (deliberately wrong)"

    def limit_sde(self) -> PFLimit:
        return _PFDriftFreeLimit(self.block, self.horizon)


class CohenItoMissing(CohenSDE):
    """Cohen et al.'s network against the SDE without the Itô correction ½ σ''(0) Q dt, claimed, as ``cohen-sde``
    claims its own limit, to converge at rate ½ (``cohen-sde-naive`` is the same limit with the opposite claim)."""

    name = "cohen-sde-ito-missing"
    description = "Cohen et al.'s network  <->  its SDE without the Ito correction, claimed at rate 1/2 (deliberately wrong)"
    corrected = False


class Kutta3ClaimedAsRK4(Res2RK4):
    """res2-rk4's claim (rate 4) made for a network whose blocks are Kutta's third-order step of the same ODE:

        k₁ = F(t_k, h_k),  k₂ = F(t_k + Δ/2, h_k + (Δ/2) k₁),  k₃ = F(t_k + Δ, h_k − Δ k₁ + 2Δ k₂),
        h_{k+1} = h_k + (Δ/6)(k₁ + 4k₂ + k₃),

    a scheme of order 3: the competing rate, 20 δ from the claim (Hairer, Nørsett & Wanner, Table II.1.1)."""

    name = "res2-kutta3-claimed-4"
    description = "res-2 network with Kutta's order-3 block  <->  its neural ODE, claimed at rate 4 (deliberately wrong)"
    scheme = "Kutta's third-order scheme (claimed as order 4)"
    evaluations_per_layer = 3

    def network_step(self, h, t, dt, weights):
        half = dt * 0.5
        k1 = self.block(h, weights)
        k2 = self.block(h + half * k1, self._weights_at(t + half))
        k3 = self.block(h + dt * (2 * k2 - k1), self._weights_at(t + dt))
        return h + (k1 + 4 * k2 + k3) * dt * (1 / 6)


class NaiveClaimOnTheCorrectedSDE(CohenSDENaive):
    """``cohen-sde-naive``'s claim — the error does not vanish (rate 0, ½ excluded) — made for the network against the
    Itô-corrected SDE it does converge to at ½: the alternative that claim must reject."""

    name = "cohen-sde-naive-claim-on-corrected"
    description = ("cohen-sde network  <->  its Ito-corrected SDE, claimed not to converge (deliberately wrong: the "
                   "error vanishes at 1/2)")
    corrected = True
