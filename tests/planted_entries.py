"""Planted alternatives of the catalogue entries' checks: each runs a study's own command on a model changed in one
documented way, so that the check must FAIL (benchmarks/calibrate.py counts how often it does not):

    python tests/planted_entries.py PLANT [STUDY ARGUMENTS ...]

for example ``python tests/planted_entries.py budget-depth-half --experiment chaintron2026-budget --seed 3``.
The perturbation is of the model, never of the verdict; the study, its arguments, its output and its exit status
are the user's command's.

Beside the plants, :func:`cohen_weights` draws weights whose Cohen et al. hypothesis is known (the calibration of
the cohen-scaling decision rule, and its planted test).

Plants:

* ``budget-depth-half`` — Chaintron, Chizat & Maass's bound with one term's exponent halved: the finite network of
  L layers reads its input through an embedding scaled by 1 + c/√L (c = :data:`BUDGET_DEPTH_CONSTANT`), so its
  distance to the limit gains a term of order L^(-1/2) = P^(-1/12) along the budget's shapes (L, L³, L²) — the
  exponent 1/12 the budget check (1/6) must reject. At c = 1 the planted term is about twice the others at L = 4
  and the fitted exponent is 0.098 [0.088, 0.109] (seed 0; 0.092 at c = 2): near 1/12, not an outsized error.
  (A residual scale α = 1 + c/√L was tried first and rejected as a plant: the trained hidden states depend on α
  too weakly, and the fitted exponent *rose*, to 0.160 at c = 0.5 and 0.183 at c = 2.)
* ``fig4-iid`` — ``regimes --preset fig4`` with its weights drawn i.i.d. uniform (critical β ½) where the preset
  claims smooth weights (critical β 1): tests/test_regimes.py's planted test, as a command.
* ``backward-variance-115`` — ``figures --figure chizat-backward`` with its output weights drawn at variance
  1.15 σ_v², a 15% error in the constant of E S_b^0 = (1 + cα²M)^L − 1: tests/test_chizat_plants.py's, as a command.
* ``chizat-variance-115`` — ``regimes --preset chizat`` with its blocks' output weights drawn at variance 1.15 σ_v²
  while its exact values keep σ_v: the constant c of E‖h^ℓ − x‖²/‖x‖² = (1 + cα²M)^ℓ − 1 15% off.
* ``optimiser-does-nothing`` — a training experiment whose optimiser step is a no-op (``marion-fig8``: the trained
  weights are their initialisation): tests/test_training_marion_checks.py's, as a command.
* ``hurst-plus-0.2`` — ``phase`` with its fractional weights drawn at Hurst index H + 0.2 (at most 0.99) where H is
  claimed: the critical β moves with them above H = ½, away from the predicted max(H, ½).
* ``weak-sde-without-ito-drift`` — ``weak`` with the limit SDE's Itô drift ½ φ''(0) (σ_b² + σ_w² |ψ(X)|²/D) dt left
  out of the SDE it samples (Peluchetti & Favaro's Thm 3.1 without its second-order term), while the ResNet keeps
  its own: SC_swish (φ''(0) = ½) no longer agrees in law with its SDE, so the two-sample tests must FAIL it. SC_tanh
  (φ''(0) = 0) is unchanged, and keeps PASSing: the plant is one model's error, as a referee would plant it.
* ``eoc-tanh-chaotic-110`` — ``figures --figure pf-correlation`` or ``pf-function-space`` with EO_tanh's weights
  drawn at 1.1× the edge of chaos's σ_w, 10% into the chaotic phase, where the edge is claimed: its correlation map's
  fixed point falls below 1 and the outputs of distant inputs decorrelate (seed 0: min ρ_τ 0.740 [0.707, 0.774]
  against 0.8; first-PC share 0.786 [0.745, 0.828] against 0.9). EO_ReLU (σ_b = 0: σ_w sets only its scale) is
  unchanged and keeps PASSing.
* ``alpha-without-width`` — ``training --experiment chizat2025-alpha`` (or any Chaintron–Chizat–Maass experiment)
  with its finite networks' residual scale α/L instead of α/(LM): wider networks no longer approach the limit, so
  the width checks must FAIL: tests/test_embedded_resnet.py's, as a command.
* ``ode-layers-in-pairs`` — ``training --experiment trained-ode-convergence`` with the depth-2N network's odd layers
  copying its even ones: the i.i.d. weights at β = ½ lose the independent half of their noise, the trained depths
  converge, and "i.i.d. weights at β = ½ stay apart" must FAIL: tests/test_training_plants.py's, as a command.
* ``prop3-variance-0.4`` — ``regimes --preset prop3`` with its i.i.d. uniform weights drawn at variance 0.4/d
  instead of 1/d: res-3's E m₂ falls to 0.08, below the ½ of (A₂) on which Prop. 3's lower bound (i) rests, so
  its "Prop. 3 bounds" check must FAIL: tests/test_regimes_plants.py's, as a command.
* ``independent-starts`` — ``training --experiment marion2024-fig1`` or ``marion2024-fig2`` with each depth's
  network started from its own W⁰ (constant over the layers, drawn per depth): no common function of t = k/L for
  the trained depths to discretise, so the rate-1 checks must FAIL: tests/test_marion2024.py's, as a command.
* ``gbm-without-ito-term`` — ``solvers --problem gbm`` against the Itô GBM's solution stated without its Itô term,
  X_0 exp(αt + βW_t) (the Stratonovich equation's): every scheme converges to the right solution, so each error
  against the misstated one stops falling, and the orders the check asks must FAIL.
"""

from __future__ import annotations

import math
import sys
from typing import Callable

import torch

from limits.embedded_resnet import EmbeddedResNet
from limits.initialisation import IIDRegime

#: c of the ``budget-depth-half`` plant
BUDGET_DEPTH_CONSTANT = 1


def cohen_weights(depth: int, width: int, beta: float, exponent: float, generator: torch.Generator) -> torch.Tensor:
    """One network's weights A_k = L^-β (Ā(k/L) + L^exponent Z_k / d), k < L: a smooth trend Ā(s) = M (1 +
    cos 2πs) / d with M d×d standard normal, and i.i.d. standard normal Z_k. The cumulative sum is dominated by the
    trend (so Step 2's β̂ ≈ β), the largest increment by the noise (so the β-scaled norm of increments goes as
    about L^exponent, up to the max over L layers' slow √log L)."""
    M = torch.randn((width, width), generator=generator, dtype=torch.float64)
    s = torch.arange(depth, dtype=torch.float64) / depth
    trend = (1 + torch.cos(2 * math.pi * s))[:, None, None] * M / width
    noise = torch.randn((depth, width, width), generator=generator, dtype=torch.float64) / width
    return depth ** -beta * (trend + depth ** exponent * noise)


class OffByRootDepth(EmbeddedResNet):
    """The ``budget-depth-half`` plant's finite network: its input embedding scaled by 1 + c/√L."""

    def __init__(self, w_e, w_u, u, v, *, alpha: float = 1.0, activation="identity") -> None:
        depth = u.shape[1]
        super().__init__(w_e * (1 + BUDGET_DEPTH_CONSTANT / math.sqrt(depth)), w_u, u, v, alpha=alpha,
                         activation=activation)


class ScaledByDepthOnly(EmbeddedResNet):
    """The ``alpha-without-width`` plant's finite network: the residual scale α/L instead of α/(LM)."""

    def forward(self, x):
        hidden = self.hidden
        self.hidden = 1          # the forward's scale α/(L·M) becomes α/L
        try:
            return super().forward(x)
        finally:
            self.hidden = hidden


def pair_the_layers(initialise: Callable[..., None]) -> Callable[..., None]:
    """The ``ode-layers-in-pairs`` plant of ``_PairedNetworks.__init__``: the depth-2N network's odd layers copy its
    even ones (V_{2k+1} = V_{2k}, W_{2k+1} = W_{2k}); the depth-N network still starts from the even layers."""

    def paired_layers(self, V, W, A, w, beta, activation):
        V, W = V.clone(), W.clone()
        V[:, 1::2], W[:, 1::2] = V[:, ::2], W[:, ::2]
        initialise(self, V, W, A, w, beta, activation)

    return paired_layers


#: the weight variance (× 1/d) of the ``prop3-variance-0.4`` plant
PROP3_PLANTED_VARIANCE = 0.4


class DeflatedWeights(IIDRegime):
    """The ``prop3-variance-0.4`` plant's weights: i.i.d. of variance 0.4/d (each of V, W) instead of 1/d."""

    def fill(self, out: torch.Tensor, gen: torch.Generator, scale: float) -> torch.Tensor:
        return super().fill(out, gen, scale * math.sqrt(PROP3_PLANTED_VARIANCE))


def _prop3_variance() -> Callable[[list[str]], int]:
    from validation.regimes import study, sweep

    sweep.regime_of = lambda settings: DeflatedWeights("uniform")     # the sweep builds its weights' regime by this name
    return study.main


def independent_initial_weights(networks: Callable[..., list]) -> Callable[..., list]:
    """The ``independent-starts`` plant of an experiment's ``networks``: each depth's network started from its own
    W⁰ (constant over the layers, drawn per depth from seed 100 + its index)."""

    def independent(self, settings, depths, device):
        built = networks(self, settings, depths, device)
        for index, net in enumerate(built):
            with torch.no_grad():
                draw = torch.Generator().manual_seed(100 + index)
                net.W.copy_(torch.randn(net.W.shape[0], 1, *net.W.shape[2:], generator=draw,
                                        dtype=net.W.dtype).expand_as(net.W))
        return built

    return independent


def _independent_starts() -> Callable[[list[str]], int]:
    from validation.training import marion2024, study

    for experiment in (marion2024.MarionFig1, marion2024.MarionFig2):
        experiment.networks = independent_initial_weights(experiment.networks)
    return study.main


def _alpha_without_width() -> Callable[[list[str]], int]:
    from validation.training import chaintron2026, chizat2025, study

    chaintron2026.EmbeddedResNet = chizat2025.EmbeddedResNet = ScaledByDepthOnly   # what the experiments build
    return study.main


def _ode_layers_in_pairs() -> Callable[[list[str]], int]:
    from validation.training import ode_convergence, study

    ode_convergence._PairedNetworks.__init__ = pair_the_layers(ode_convergence._PairedNetworks.__init__)
    return study.main


def _budget_depth_half() -> Callable[[list[str]], int]:
    from validation.training import chaintron2026, study

    chaintron2026.EmbeddedResNet = OffByRootDepth   # the budget experiment builds its finite networks by this name
    return study.main


def _fig4_iid() -> Callable[[list[str]], int]:
    from limits.initialisation import IIDRegime
    from validation.regimes import study, sweep

    sweep.regime_of = lambda settings: IIDRegime("uniform")     # the sweep builds its weights' regime by this name
    return study.main


def _backward_variance_115() -> Callable[[list[str]], int]:
    from limits import chizat
    from validation.figures import study
    from validation.figures.catalogue import chizat_backward

    for name in ("chizat_backward_spread", "chizat_frozen_backward_spread"):   # the real and the simplified backward
        real = getattr(chizat, name)

        def planted(alphas, real=real, **kwargs):
            return real(alphas, **{**kwargs, "sigma_v": kwargs["sigma_v"] * math.sqrt(1.15)})

        setattr(chizat_backward, name, planted)
    return study.main


def _gbm_without_ito_term() -> Callable[[list[str]], int]:
    from types import MappingProxyType

    import limits.problems as problems
    from limits.problems.gbm import GeometricBrownianMotion
    from validation.solvers import study

    class WithoutItoTerm(GeometricBrownianMotion):
        """The Itô GBM with its solution stated as X_0 exp(αt + βW_t): the −β²t/2 left out."""

        def solution(self, t, w, x0):
            return x0 * torch.exp(self.alpha * t + self.beta * w)

    problems.PROBLEMS = MappingProxyType({**problems.PROBLEMS, "gbm": WithoutItoTerm})   # what get_problem reads
    return study.main


def _chizat_variance_115() -> Callable[[list[str]], int]:
    from limits import chizat
    from validation.regimes import chizat as preset
    from validation.regimes import study

    def planted(alphas, **kwargs):
        return chizat.chizat_spread(alphas, **{**kwargs, "sigma_v": kwargs["sigma_v"] * math.sqrt(1.15)})

    preset.chizat_spread = planted     # the preset draws its networks by this name; its exact values keep σ_v
    return study.main


def _optimiser_does_nothing() -> Callable[[list[str]], int]:
    from validation.training import study
    from validation.training.trainer import BatchedOptimizer

    BatchedOptimizer.step = lambda self, active, factor=1.0: None   # forked workers inherit it
    return study.main


#: the ``hurst-plus-0.2`` plant's shift of the drawn Hurst index
HURST_SHIFT = 0.2


def _hurst_plus() -> Callable[[list[str]], int]:
    from limits.initialisation import FractionalRegime
    from validation.phase import study

    study.FractionalRegime = lambda hurst: FractionalRegime(min(hurst + HURST_SHIFT, 0.99))   # what each column draws
    return study.main


def _weak_sde_without_ito_drift() -> Callable[[list[str]], int]:
    import dataclasses

    from validation import weak

    simulate = weak.simulate_gram

    def planted(phi, *args, mode="network", **kwargs):
        return simulate(dataclasses.replace(phi, d2=0.0) if mode == "sde" else phi, *args, mode=mode, **kwargs)

    weak.simulate_gram = planted       # what each of the study's SDE chunks calls (forked workers inherit it)
    return weak.main


#: the factor on EO_tanh's edge-of-chaos σ_w of the ``eoc-tanh-chaotic-110`` plant
EOC_SIGMA_W_FACTOR = 1.1


def _eoc_tanh_chaotic() -> Callable[[list[str]], int]:
    from validation.figures import pf_models, study

    edge = pf_models.eoc_sigma_w

    def planted(activation: str, sigma_b: float) -> float:
        return edge(activation, sigma_b) * (EOC_SIGMA_W_FACTOR if activation == "tanh" else 1.0)

    pf_models.eoc_sigma_w = planted      # what eoc_outputs reads for each EOC network
    return study.main


PLANTS: dict[str, Callable[[], Callable[[list[str]], int]]] = {
    "budget-depth-half": _budget_depth_half, "fig4-iid": _fig4_iid, "backward-variance-115": _backward_variance_115,
    "gbm-without-ito-term": _gbm_without_ito_term, "chizat-variance-115": _chizat_variance_115,
    "optimiser-does-nothing": _optimiser_does_nothing, "hurst-plus-0.2": _hurst_plus,
    "weak-sde-without-ito-drift": _weak_sde_without_ito_drift, "eoc-tanh-chaotic-110": _eoc_tanh_chaotic,
    "alpha-without-width": _alpha_without_width, "ode-layers-in-pairs": _ode_layers_in_pairs,
    "prop3-variance-0.4": _prop3_variance, "independent-starts": _independent_starts}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in PLANTS:
        print(f"usage: python tests/planted_entries.py PLANT [ARGUMENTS ...]; PLANT one of {', '.join(PLANTS)}",
              file=sys.stderr)
        return 2
    return PLANTS[argv[0]]()(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
