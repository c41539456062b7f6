"""Initialisation figures of Peluchetti & Favaro (2020), Marion et al. (2022) and Chizat's lecture, as checks.

    python -m validation.figures --figure pf-function-space   # P&F Fig. 1 + 3: function samples x_{T,1}(z)
    python -m validation.figures --figure pf-correlation      # P&F Fig. 4: output correlation heatmaps
    python -m validation.figures --figure marion-fbm          # Marion et al. Fig. 6: fBm realisations
    python -m validation.figures --figure chizat-maximal      # Chizat Remark 2.2: Doob's maximal inequality
    python -m validation.figures --figure chizat-backward     # Chizat §3.1: the backward pass → the identity
    python -m validation.figures --figure pf-abc              # P&F App. B.1: ABC posteriors of SR and EO priors
    python -m validation.figures --figure pf-2d               # P&F App. B.4: 2-D function samples
    python -m validation.figures --figure pf-qualitative      # P&F §3.4: exchangeable, not Gaussian
    python -m validation.figures --figure pf-relu             # P&F §3.4: ReLU's drift blows up at γ = ½, an ODE at 1
    python -m validation.figures --figure pf-sizes            # P&F SM B.3: function samples over (L, D)
    python -m validation.figures --figure chizat-feature-speed  # Chizat & Netrapalli: the backward–feature angle
    python -m validation.figures --list

Every default run is small (under a minute on 2 cores); the paper's sizes are flags (docs/howto/figures.md).
A flag that does not apply to the chosen figure is an error naming the ones that do. Each run prints a
table with the numbers behind the figure and its checks; PASS when every check passes, FAIL when one fails,
INCONCLUSIVE when a check of an interval against a bound (a)–(c) and the correlations' finds the interval
containing the bound (more draws would settle it: :func:`validation.core.checks.bound_check`):

* ``pf-function-space``: the stable ResNets SC_tanh and SC_swish (x_{k+1} = x_k + φ(ΔW_k x_k + Δb_k),
  ΔW ~ N(0, σ_w²Δt/D), Δb ~ N(0, σ_b²Δt), Δt = 1/L; input copied, x_0 = z·1, the paper's SC models) and
  the Euler scheme of their SDE limit on ``--sde-factor``× finer steps of the SAME Brownian path, beside
  the feed-forward networks EO_tanh and EO_ReLU on the edge of chaos. Checks (95% bootstrap intervals
  over draws):
  (a) the ResNet and its SDE agree: the upper end of RMS(x_net − x_sde)/SD(x_net) ≤ ``--sde-tolerance``;
  (b) the function samples of the EOC networks are degenerate: the first principal component of the
      draws (as vectors over z) explains at least ``--eoc-min-pc`` of their variance (lower end of the
      interval); this is 1 exactly when all outputs are perfectly correlated (constant functions for
      tanh, multiples of one function for ReLU);
  (c) the ResNets' are not: the upper end of that fraction ≤ ``--resnet-max-pc``.
* ``pf-correlation``: ρ[x_{T,1}(z1), x_{T,1}(z2)] over a grid of [−2, 2]² for the four models. Checks:
  the lower end of the minimum correlation of each EOC network ≥ ``--eoc-min-correlation``; the upper
  end of the minimum correlation of each ResNet ≤ ``--resnet-max-correlation``.
* ``marion-fbm``: fractional Brownian motions B^H on [0, 1] (exact Davies–Harte fGn, summed) for each
  ``--hursts``; H estimated from all realisations pooled (variance of partial sums), with a bootstrap
  interval over realisations. Check: |Ĥ − H| ≤ ``--hurst-tolerance`` for every H.
* ``chizat-maximal``: S^ℓ = ‖h^ℓ − x‖²/‖x‖² for the ResNet with ReLU 2LP blocks at α = κ/√(ML) is a
  nonnegative submartingale, so (Doob) P(sup_ℓ S^ℓ ≥ a) ≤ E[S^L]/a with E[S^L] = (1 + cα²M)^L − 1 exactly,
  and E[sup_ℓ S^ℓ] ≤ 4 E[S^L]. Checks (Monte Carlo with 95% bootstrap intervals): for every κ and every
  threshold a = m·E[S^L] (``--thresholds`` lists m), the lower end of the interval of P̂(sup S ≥ a) is at
  most ``--tail-constant``·E[S^L]/a; the lower end of the interval of E[sup S]/E[S^L] is at most
  ``--doob-constant`` (4). A deliberately wrong constant (e.g. ``--doob-constant 1``) FAILs. Doob's bounds are
  loose, so no plausible implementation fails them; the check a wrong one fails is the exact mean: the Monte-Carlo
  mean of S^L within z standard errors of (1 + cα²M)^L − 1 (Bonferroni over κ, family-wise 1%; counted when the
  draws resolve the tail, as in :func:`validation.core.hypothesis.bounds_check`).
* ``pf-abc``: Peluchetti & Favaro's App. B.1, ABC rejection for function regression with the SR_tanh and
  EO_tanh priors on three data points (:mod:`validation.figures.pf_figures`). Check: SR's accepted draws lie closer to
  the data (a bootstrap interval of the log ratio of mean accepted distances, below 0).
* ``pf-2d``: Peluchetti & Favaro's App. B.4, function samples of SC_tanh and SC_swish over z ∈ [−2, 2]², with
  pf-function-space's non-degeneracy check (:mod:`validation.figures.pf_figures`).
* ``pf-qualitative``: Peluchetti & Favaro's §3.4 — with fully i.i.d. parameters the D output coordinates are
  exchangeable (a within-row permutation test, not rejected at ``--alpha``), and the joint law of
  (x_{T,1}(0), x_{T,1}(1)) is not Gaussian (Mardia's tests, rejected), for SC_tanh and SC_swish, ResNet and limit
  SDE; planted controls (non-exchangeable bias covariances, Gaussian draws) must come out the other way
  (:mod:`validation.figures.pf_figures`).
* ``pf-relu``: Peluchetti & Favaro's §3.4, "Non-smooth activations" — the ResNet x + φ(Δt^γ (ε^W tanh(x) + ε^b))
  over ``--depths``: with φ = ReLU at γ = ½ the mean displacement grows like L^{1/2} (the drift blows up), with the
  identity (E φ(h) = 0) it stays bounded; at γ = 1 the spread over networks vanishes like L^-1 and the mean tends to
  the neural ODE's (exponents with bootstrap intervals, three-valued; :mod:`validation.figures.pf_figures`).
* ``pf-sizes``: Peluchetti & Favaro's SM B.3 (Fig. 3) — the function samples of SC_tanh and SC_swish over a grid of
  (L, D): the shape of their law (first-PC fraction, correlations) and its scale (variances) against the largest
  cell's, within stated margins (:mod:`validation.figures.pf_figures`).
* ``chizat-kernel``: the same ResNet's tangent kernel and first gradient at initialisation against the shallow
  network's of M × L units (the lecture's §3.2–3.3); their relative errors must vanish as MLα² → 0.
* ``chizat-phase``: the lecture's Fig. 1 — a few gradient steps at α = L^-β/√M, η = η₀ L^γ over a (β, γ)
  grid; the predictor's change and the local share of the features' change against L classify each cell
  (unstable, trivial, local feature learning, lazy ODE); depth-μP and CompleteP are checked.
* ``chizat-backward``: the same ResNet's backward pass, by autograd and with the forward frozen at x (the
  lecture's §3.1), against the closed form (1 + cα²M)^{L−ℓ} − 1 and the expected exponent 1 of
  E sup_ℓ S_b^ℓ in MLα² (:mod:`validation.figures.chizat_figures`).
* ``chizat-feature-speed``: Chizat & Netrapalli (NeurIPS 2024), the angle θ_ℓ between a gradient step's feature
  update and the backward pass at initialisation, for a ReLU MLP and the lecture's ResNet at α = κ/√(ML): the exponent
  of E cos θ_L in L must be −½ for the MLP (the angle degenerates) and not below 0 for the ResNets (it does not).

Python: ``validation.figures.run("marion-fbm", realisations=200)`` returns a :class:`FiguresResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from limits.chizat import chizat_constant, chizat_expected_spread, chizat_spread
from limits.fractional import FractionalNoise, block_moments, check_hurst, estimate_hurst
from limits.seeding import generator, stream_seed
from validation.figures import chizat_figures
from validation.figures import pf_figures
from validation.core import cli, runtime
from validation.figures.pf_models import eoc_outputs, pc_fractions, resnet_outputs, top_pc_fraction
from validation.core.checks import Check, bound_check, check_line, combine
from validation.core.results import RunInfo, StudyResult, utc_now
from validation.core.hypothesis import bounds_check, family_z
from validation.core.stats import resampled_interval, resampled_interval_batched
from validation.core.settings import (
    CommonSettings, SettingsError, check_choice, check_depths, check_float, check_int, make_settings, parse_float_list,
    parse_int_list,
    refuse_inapplicable, resolve_device, setting, settings_given,
)

__all__ = ["FIGURES", "SMOKE", "FiguresSettings", "FiguresResult", "run", "main", "MODELS"]

#: the four models of Peluchetti & Favaro's Fig. 1, 3 and 4: (kind, activation)
MODELS = {"SC_tanh": ("resnet", "tanh"), "SC_swish": ("resnet", "swish"),
          "EO_tanh": ("eoc", "tanh"), "EO_ReLU": ("eoc", "relu")}

#: each figure's defaults (small) and the paper's sizes; every key but title/paper is a setting
FIGURES: dict[str, dict[str, Any]] = {
    "pf-function-space": dict(
        width=32, depth=64, inputs=100, draws=200, show=5, sigma_w=1.0, sigma_b=1.0, input_layer="copy",
        sde_factor=8, eoc_width=48, eoc_depth=100, eoc_sigma_b=0.2, sde_tolerance=0.25, eoc_min_pc=0.9,
        resnet_max_pc=0.9, resamples=400,
        title="Peluchetti & Favaro (2020) Fig. 1 and 3: function samples of x_{T,1}(z)",
        paper="Fig. 1: EO_tanh, EO_ReLU, 500 layers × 500 units; Fig. 3: SC_tanh, SC_swish, L = D = 500 (and "
              "other L, D in SM B), 400 inputs on [−2, 2], 10 000 draws; 5 draws and the 5/50/95% quantiles shown"),
    "pf-correlation": dict(
        width=32, depth=64, inputs=40, draws=1000, sigma_w=1.0, sigma_b=1.0, input_layer="copy", eoc_width=48,
        eoc_depth=100, eoc_sigma_b=0.2, eoc_min_correlation=0.8, resnet_max_correlation=0.5, resamples=400,
        title="Peluchetti & Favaro (2020) Fig. 4: output correlation ρ[x_{T,1}(z1), x_{T,1}(z2)]",
        paper="Fig. 4: SC_tanh, SC_swish (L = D = 500) far from 1 off the diagonal; EO_tanh, EO_ReLU (500 × 500) "
              "all close to 1"),
    "pf-abc": dict(
        width=32, depth=64, sigma_w=math.sqrt(10.0), sigma_b=math.sqrt(10.0), input_layer="random", eoc_width=48,
        eoc_depth=100, eoc_sigma_b=0.2, inputs=100, draws=2000, accepted=10, data=pf_figures.DEFAULT_DATA, show=10,
        resamples=1000,
        title="Peluchetti & Favaro (2020) Appendix B.1: ABC posterior of SR_tanh against EO_tanh",
        paper="App. B.1, Fig. 1: SR_tanh (σ_w² = σ_b² = 10, T = 1, L = D = 500, x_0 = W_I z) against EO_tanh, 10 000 "
              "simulations, the 10 nearest in l2 to 3 data points; prior and posterior, 10 draws each on [−2, 2]"),
    "pf-2d": dict(
        width=32, depth=64, sigma_w=1.0, sigma_b=1.0, input_layer="copy", inputs=25, draws=200, show=3,
        resnet_max_pc=0.9, resamples=400,
        title="Peluchetti & Favaro (2020) Appendix B.4: 2-D function samples of x_{T,1}(z)",
        paper="App. B.4, Fig. 4: 2-D function samples of x_{T,1} for SC_tanh and SC_swish (L = D = 500), complementing "
              "Fig. 3"),
    "pf-qualitative": dict(
        width=8, depth=64, draws=2000, sigma_w=1.0, sigma_b=1.0, sde_factor=4, alpha=0.01, resamples=499,
        title="Peluchetti & Favaro (2020) §3.4: exchangeable coordinates, a non-Gaussian joint law",
        paper="§3.4 (stated without a figure): with fully i.i.d. parameters the law of the x_{t,d} is exchangeable "
              "across d; p(x_T(z), x_T(z') | x_0) is not Gaussian (the limit is not a Gaussian process)"),
    "pf-relu": dict(
        width=8, depths=(16, 32, 64, 128, 256, 512, 1024), draws=1000, sigma_w=1.0, sigma_b=1.0,
        exponent_tolerance=0.1, drift_tolerance=0.1, ode_tolerance=0.02, resamples=400,
        title="Peluchetti & Favaro (2020) §3.4: non-smooth (positively homogeneous) activations",
        paper="§3.4 (stated without a figure): E[φ(hΔt^γ)/Δt] = E[φ(h)] Δt^{γ−1}, E[φ(hΔt^γ)²/Δt] = E[φ(h)²] "
              "Δt^{2γ−1}: at γ = ½ the drift blows up unless E φ(h) = 0; γ = 1 gives a deterministic limit (the "
              "neural ODE of Chen et al. 2018)"),
    "pf-sizes": dict(
        depths=(16, 64, 256), widths=(8, 32, 128), inputs=9, draws=500, show=3, sigma_w=1.0, sigma_b=1.0,
        shape_tolerance=0.1, scale_tolerance=0.15, judged_depth=64, judged_width=32, resamples=400,
        title="Peluchetti & Favaro (2020) SM B.3: function samples of x_{T,1}(z) over (L, D)",
        paper="SM B.3, Fig. 3: function samples of SC_tanh and SC_swish for several L and D, \"similar dynamics across "
              "different orders of magnitude for both L and D\" (a picture, no numbers)"),
    "marion-fbm": dict(
        hursts=(0.2, 0.5, 0.8), length=1024, realisations=500, show=3, hurst_tolerance=0.02, resamples=400,
        title="Marion et al. (2022) Fig. 6: fractional Brownian motion B^H",
        paper="Fig. 6: three realisations each of B^H on [0, 1] for H = 0.2, 0.5, 0.8 (rougher for smaller H)"),
    "chizat-maximal": dict(
        width=40, hidden=16, layers=100, kappas=(1.0, 2.0), networks=2000, sigma_u=None, sigma_v=1.0,
        thresholds=(1.0, 2.0, 4.0, 8.0, 16.0), doob_constant=4.0, tail_constant=1.0, resamples=1000,
        title="Chizat (lecture 12) Remark 2.2: Doob's maximal inequality for ‖h^ℓ − x‖²",
        paper="Remark 2.2: P(sup_ℓ ‖h^ℓ − x‖ ≥ β‖x‖) ≤ ((1 + cα²M)^L − 1)/β² (stated without a figure)"),
    "chizat-kernel": dict(
        width=10, hidden=16, layers=32, kappas=(0.0625, 0.125, 0.25, 0.5), networks=200, inputs=3, sigma_u=None,
        sigma_v=1.0, resamples=1000,
        title="Chizat (lecture 12) §3.2–3.3: at initialisation the ResNet is, to first order, a shallow network",
        paper="§3.2: the first gradient is α D₂φ(x, z^{j,ℓ})ᵀ ∇loss(y, x) (eq. 5); §3.3: the tangent kernel is "
              "α² Σ_j Σ_ℓ D₂φ(x, z^{j,ℓ}) D₂φ(x', z^{j,ℓ})ᵀ, a shallow network's of M × L units, when MLα² = o(1)"),
    "chizat-phase": dict(
        width=10, hidden=16, depths=(8, 32, 128, 512), betas=(0.5, 0.75, 1.0), gammas=(-0.5, 0.0, 0.5, 1.0, 1.5),
        eta0=0.05, steps=3, networks=16, inputs=4, sigma_u=None, sigma_v=1.0, exponent_tolerance=0.1, resamples=1000,
        title="Chizat (lecture 12) §3, Fig. 1: lazy ODE against local feature learning, over (β, γ)",
        paper="Fig. 1: the phase diagram of the relative speeds of the parameters and the predictor; local feature "
              "learning (the local weight's contribution to its feature's evolution is non-vanishing) against the lazy "
              "ODE regime (it vanishes, the features still move through the layers below); Dey et al. 2025"),
    "chizat-backward": dict(
        width=10, hidden=16, layers=64, kappas=(0.0625, 0.125, 0.25, 0.5), networks=2000, sigma_u=None,
        sigma_v=1.0, exponent_tolerance=0.1, resamples=1000,
        title="Chizat (lecture 12) §3.1: the backward pass is asymptotically the identity when MLα² → 0",
        paper="§3.1: b^{ℓ−1} = b^ℓ + α Σ_j D₁φ(h^{ℓ−1}, Z^{j,ℓ})ᵀ b^ℓ has the forward pass's form, so "
              "sup_ℓ ‖b^ℓ − ∇loss(y, x)‖² = o(1) w.h.p. when MLα² = o(1) (stated without a figure)"),
    "chizat-feature-speed": dict(
        width=128, hidden=128, depths=(4, 8, 16, 32, 64), kappas=(0.5, 1.0, 2.0), networks=32, sigma_u=None,
        sigma_v=1.0, exponent_tolerance=0.1, resamples=1000,
        title="Chizat & Netrapalli (2024): the backward–feature angle θ_ℓ at initialisation, MLP against ResNet",
        paper="NeurIPS 2024, \"The feature speed formula\", §4: in the large width-then-depth limit, cos θ_ℓ = "
              "Θ(1/√ℓ) for ReLU MLPs at i.i.d. initialisation, Θ(1) for ResNets with branch scale O(1/√depth) "
              "(proved from prior work, no figure of the exponent)"),
}

#: each figure at a size that runs in about a second (the tests and ``docs/make_figures.py --quick``)
SMOKE = {
    "pf-function-space": dict(width=4, depth=4, inputs=6, draws=24, sde_factor=2, eoc_width=4, eoc_depth=6,
                              resamples=20, show=3),
    "pf-correlation": dict(width=4, depth=4, inputs=6, draws=40, eoc_width=4, eoc_depth=6, resamples=20),
    "pf-abc": dict(width=4, depth=4, eoc_width=4, eoc_depth=6, inputs=6, draws=60, accepted=5, resamples=50, show=3),
    "pf-2d": dict(width=4, depth=4, inputs=5, draws=24, resamples=20, show=2),
    "pf-qualitative": dict(width=6, depth=16, draws=800, sde_factor=2, resamples=199),
    "pf-relu": dict(width=4, depths=(8, 16, 32), draws=200, resamples=100),
    "pf-sizes": dict(depths=(4, 8), widths=(4, 8), inputs=5, draws=200, judged_depth=4, judged_width=4,
                     resamples=100, show=2),
    "marion-fbm": dict(length=64, realisations=40, resamples=20, show=2),
    "chizat-maximal": dict(width=6, hidden=4, layers=10, networks=60, resamples=50),
    "chizat-backward": dict(width=4, hidden=4, layers=8, networks=60, resamples=50),
    "chizat-kernel": dict(width=3, hidden=3, layers=4, networks=12, inputs=2, resamples=50),
    "chizat-phase": dict(width=3, hidden=3, depths=(4, 8, 16), betas=(0.5, 1.0), gammas=(0.0, 1.0), networks=6,
                         inputs=2, steps=2, resamples=50),
    "chizat-feature-speed": dict(width=32, hidden=8, depths=(2, 4, 8), kappas=(1.0,), networks=6, resamples=50),
}

#: settings a figure takes (others given are refused); the common seed/dtype/device always apply
APPLIES = {name: {k for k in values if k not in ("title", "paper")} for name, values in FIGURES.items()}

INPUT_RANGE = (-2.0, 2.0)


@dataclass(frozen=True)
class FiguresSettings(CommonSettings):
    """Settings of the figures study; ``None`` means the figure's default."""

    width: int | None = setting(None, "P&F: ResNet width D; chizat: width d", parse=int, group="model",
                                default_text="the figure's (32; pf-qualitative, pf-relu 8; chizat 40; "
                                             "chizat-feature-speed 128)")
    widths: tuple[int, ...] | None = setting(None, "pf-sizes: ResNet widths D, comma list, increasing (the grid is "
                                                   "--depths × --widths; the last cell is the reference)",
                                             parse=parse_int_list, group="model", default_text="8,32,128")
    depth: int | None = setting(None, "P&F: ResNet depth L (Δt = 1/L)", parse=int, group="model",
                                default_text="64")
    inputs: int | None = setting(None, "P&F: inputs z equally spaced on [−2, 2] (pf-2d: per axis of [−2, 2]²); "
                                       "chizat-kernel: inputs x ~ N(0, I_d) of the kernel", parse=int, group="model",
                                 default_text="100; pf-correlation 40; pf-2d 25; pf-sizes 9; chizat-kernel 3")
    draws: int | None = setting(None, "P&F: function draws (independent networks; pf-relu, pf-sizes: per depth, per "
                                      "cell)", parse=int, group="model",
                                default_text="200; pf-correlation, pf-relu 1000; pf-sizes 500; pf-qualitative 2000")
    show: int | None = setting(None, "draws (realisations) drawn in each panel", parse=int, group="model",
                               default_text="5; marion-fbm 3")
    sigma_w: float | None = setting(None, "P&F ResNet: σ_w (ΔW ~ N(0, σ_w²Δt/D))", parse=float, group="model",
                                    default_text="1")
    sigma_b: float | None = setting(None, "P&F ResNet: σ_b (Δb ~ N(0, σ_b²Δt))", parse=float, group="model",
                                    default_text="1")
    input_layer: str | None = setting(None, "P&F ResNet input: copy (x_0 = z·1, the paper's SC models) or random "
                                            "(x_0 = W_I z, W_I ~ N(0, I), the paper's SR models)",
                                      choices=("copy", "random"), group="model", default_text="copy")
    sde_factor: int | None = setting(None, "pf-function-space, pf-qualitative: Euler steps of the SDE per ResNet "
                                           "layer, on the same Brownian path (pf-qualitative: a power of two)",
                                     parse=int, group="model", default_text="8; pf-qualitative 4")
    eoc_width: int | None = setting(None, "P&F: width of the edge-of-chaos feed-forward networks", parse=int,
                                    group="model", default_text="48")
    eoc_depth: int | None = setting(None, "P&F: layers of the edge-of-chaos feed-forward networks", parse=int,
                                    group="model", default_text="100")
    eoc_sigma_b: float | None = setting(None, "P&F: bias std σ_b of EO_tanh (σ_w is then solved for χ = 1; "
                                              "EO_ReLU is always σ_w² = 2, σ_b = 0)", parse=float, group="model",
                                        default_text="0.2")
    accepted: int | None = setting(None, "pf-abc: the draws nearest to the data accepted as the posterior sample",
                                   parse=int, group="model", default_text="10")
    data: tuple[tuple[float, float], ...] | None = setting(
        None, "pf-abc: the data set, z:y,z:y,… (z in [−2, 2])", parse=pf_figures.parse_data, group="model",
        metavar="Z:Y,…", default_text="-1.5:-1,0:1,1.5:-1")
    hursts: tuple[float, ...] | None = setting(None, "marion-fbm: Hurst indices, comma list, each in (0, 1)",
                                               parse=parse_float_list, group="model", default_text="0.2,0.5,0.8")
    length: int | None = setting(None, "marion-fbm: steps n of each path on [0, 1] (≥ 16)", parse=int,
                                 group="model", default_text="1024")
    realisations: int | None = setting(None, "marion-fbm: realisations per H for the estimate", parse=int,
                                       group="model", default_text="500")
    hidden: int | None = setting(None, "chizat: hidden units M per block", parse=int, group="model",
                                 default_text="16; chizat-feature-speed 128")
    layers: int | None = setting(None, "chizat: depth L", parse=int, group="model", default_text="100")
    kappas: tuple[float, ...] | None = setting(None, "chizat: α = κ/√(ML), comma list, each > 0 "
                                                     "(chizat-feature-speed: one ResNet per κ)",
                                               parse=parse_float_list, group="model",
                                               default_text="1,2; chizat-feature-speed 0.5,1,2")
    networks: int | None = setting(None, "chizat: independent networks (input x ~ N(0, I_d) each; "
                                         "chizat-feature-speed: per depth and model)", parse=int, group="model",
                                   default_text="2000; chizat-feature-speed 32")
    sigma_u: float | None = setting(None, "chizat: std of u_j", parse=float, group="model", default_text="1/√d")
    sigma_v: float | None = setting(None, "chizat: std of v_j", parse=float, group="model", default_text="1")
    thresholds: tuple[float, ...] | None = setting(None, "chizat: thresholds a as multiples of E[S^L], comma "
                                                         "list, each > 0", parse=parse_float_list, group="model",
                                                   default_text="1,2,4,8,16")
    sde_tolerance: float | None = setting(None, "pf-function-space: RMS(ResNet − SDE)/SD(ResNet) ≤ this",
                                          parse=float, group="checks", default_text="0.25")
    eoc_min_pc: float | None = setting(None, "pf-function-space: the EOC networks' first principal component "
                                             "explains ≥ this fraction", parse=float, group="checks",
                                       default_text="0.9")
    resnet_max_pc: float | None = setting(None, "pf-function-space: the ResNets' first principal component "
                                                "explains ≤ this fraction", parse=float, group="checks",
                                          default_text="0.9")
    eoc_min_correlation: float | None = setting(None, "pf-correlation: each EOC network's minimum correlation "
                                                      "≥ this", parse=float, group="checks", default_text="0.8")
    resnet_max_correlation: float | None = setting(None, "pf-correlation: each ResNet's minimum correlation ≤ "
                                                         "this", parse=float, group="checks", default_text="0.5")
    alpha: float | None = setting(None, "pf-qualitative: the level of its tests (exchangeability not rejected, "
                                        "Gaussianity rejected, and the planted controls the other way)", parse=float,
                                  group="checks", default_text="0.01")
    hurst_tolerance: float | None = setting(None, "marion-fbm: |Ĥ − H| ≤ this", parse=float, group="checks",
                                            default_text="0.02")
    doob_constant: float | None = setting(None, "chizat: the constant of E[sup S] ≤ C E[S^L] (Doob: 4)",
                                          parse=float, group="checks", default_text="4")
    tail_constant: float | None = setting(None, "chizat: P(sup S ≥ a) ≤ C E[S^L]/a is checked with this C "
                                                "(Doob: 1)", parse=float, group="checks", default_text="1")
    exponent_tolerance: float | None = setting(None, "chizat-backward: the exponent of E sup_ℓ S_b^ℓ in MLα² must lie "
                                                     "within 1 ± this; chizat-phase: an exponent in L within ± this is "
                                                     "'of order 1'; pf-relu, chizat-feature-speed: each exponent in L "
                                                     "within theory ± this",
                                               parse=float, group="checks", default_text="0.1")
    drift_tolerance: float | None = setting(None, "pf-relu: the control (φ = identity, γ = ½) keeps |E[x_T − x_0]|/SD(x_T) "
                                                  "≤ this at every depth", parse=float, group="checks",
                                            default_text="0.1")
    ode_tolerance: float | None = setting(None, "pf-relu: at γ = 1 the ReLU network's mean displacement at the deepest "
                                                "depth is within this relative distance of the neural ODE's",
                                          parse=float, group="checks", default_text="0.02")
    shape_tolerance: float | None = setting(None, "pf-sizes: each judged cell's first-PC fraction and correlations "
                                                  "within ± this of the reference cell's", parse=float, group="checks",
                                            default_text="0.1")
    scale_tolerance: float | None = setting(None, "pf-sizes: each judged cell's log SD of x_T,1(z) within ± this of the "
                                                  "reference cell's", parse=float, group="checks", default_text="0.15")
    judged_depth: int | None = setting(None, "pf-sizes: the checks judge the cells with L ≥ this (the others are "
                                             "tabulated, not judged)", parse=int, group="checks", default_text="64")
    judged_width: int | None = setting(None, "pf-sizes: the checks judge the cells with D ≥ this", parse=int,
                                       group="checks", default_text="32")
    depths: tuple[int, ...] | None = setting(None, "chizat-phase, chizat-feature-speed, pf-relu, pf-sizes: depths L, "
                                                   "comma list, increasing", parse=parse_int_list, group="model",
                                             default_text="8,32,128,512; chizat-feature-speed 4,8,…,64; pf-relu "
                                                          "16,32,…,1024; pf-sizes 16,64,256")
    betas: tuple[float, ...] | None = setting(None, "chizat-phase: β of α = L^-β/√M, comma list", parse=parse_float_list,
                                              group="model", default_text="0.5,0.75,1")
    gammas: tuple[float, ...] | None = setting(None, "chizat-phase: γ of the learning rate η = η₀ L^γ, comma list",
                                               parse=parse_float_list, group="model", default_text="-0.5,0,0.5,1,1.5")
    eta0: float | None = setting(None, "chizat-phase: η₀ of the learning rate", parse=float, group="model",
                                 default_text="0.05")
    steps: int | None = setting(None, "chizat-phase: full-batch gradient steps", parse=int, group="model",
                                default_text="3")
    resamples: int | None = setting(None, "bootstrap resamples of every interval; pf-qualitative: permutations of "
                                          "its exchangeability test", parse=int, group="checks",
                                    default_text="400; chizat 1000; pf-qualitative 499")
    # resolved from the figure (not flags)
    figure: str = setting("pf-function-space", "the figure", cli=False)
    title: str = setting("", "the figure's title", cli=False)

    def check(self) -> None:
        super().check()
        ints = {"width": 1, "depth": 1, "inputs": 2, "draws": 3, "show": 0, "sde_factor": 1, "eoc_width": 1,
                "eoc_depth": 1, "length": 16, "realisations": 2, "hidden": 1, "layers": 1, "networks": 3,
                "resamples": 10, "accepted": 1, "steps": 1, "judged_depth": 1, "judged_width": 1}
        for name, minimum in ints.items():
            if getattr(self, name) is not None:
                self._set(name, check_int(name, getattr(self, name), minimum, 10_000_000))
        for name in ("sigma_w", "sigma_b", "eoc_sigma_b"):
            if getattr(self, name) is not None:
                self._set(name, check_float(name, getattr(self, name), 0))
        for name in ("sigma_u", "sigma_v", "sde_tolerance", "hurst_tolerance", "doob_constant", "tail_constant",
                     "exponent_tolerance", "eta0", "drift_tolerance", "ode_tolerance", "shape_tolerance",
                     "scale_tolerance"):
            if getattr(self, name) is not None:
                self._set(name, check_float(name, getattr(self, name), 0, strict_min=True))
        for name in ("eoc_min_pc", "resnet_max_pc"):
            if getattr(self, name) is not None:
                self._set(name, check_float(name, getattr(self, name), 0, 1))
        for name in ("eoc_min_correlation", "resnet_max_correlation"):
            if getattr(self, name) is not None:
                self._set(name, check_float(name, getattr(self, name), -1, 1))
        if self.alpha is not None:
            self._set("alpha", check_float("alpha", self.alpha, 0, 1, strict_min=True, strict_max=True))
        if self.input_layer is not None:
            check_choice("input_layer", self.input_layer, ("copy", "random"))
        if self.depths is not None:
            self._set("depths", check_depths("depths", self.depths, powers_of_two=False, maximum=100_000))
        if self.widths is not None:
            widths = tuple(check_int("widths", w, 1, 4096) for w in self.widths)
            if not widths or any(b <= a for a, b in zip(widths, widths[1:])):
                raise SettingsError("widths", f"{list(widths)}: give strictly increasing widths (at least one)")
            self._set("widths", widths)
        for name in ("betas", "gammas"):
            value = getattr(self, name)
            if value is not None:
                numbers = tuple(float(v) for v in value)
                if not numbers or any(not math.isfinite(v) for v in numbers) or len(set(numbers)) != len(numbers):
                    raise SettingsError(name, f"{list(numbers)}: give distinct finite values (at least one)")
                if name == "betas" and any(v < 0 for v in numbers):
                    raise SettingsError(name, f"{list(numbers)}: every β must be ≥ 0")
                self._set(name, numbers)
        if self.data is not None:
            try:
                points = tuple((float(z), float(y)) for z, y in self.data)
            except (TypeError, ValueError):
                raise SettingsError("data", f"{self.data!r} is not a list of (z, y) points") from None
            if not points or any(not (math.isfinite(z) and math.isfinite(y)) for z, y in points):
                raise SettingsError("data", f"{list(points)}: give at least one point, every z and y finite")
            if any(not INPUT_RANGE[0] <= z <= INPUT_RANGE[1] for z, _ in points):
                raise SettingsError("data", f"{list(points)}: every z must lie in [{INPUT_RANGE[0]:g}, "
                                            f"{INPUT_RANGE[1]:g}]")
            self._set("data", points)
        if self.hursts is not None:
            values = tuple(float(h) for h in self.hursts)
            if not values:
                raise SettingsError("hursts", "at least one Hurst index is needed")
            for h in values:
                try:
                    check_hurst(h)
                except ValueError:
                    raise SettingsError("hursts", f"H={h:g} is out of range (allowed: 0 < H < 1)") from None
            self._set("hursts", values)
        for name in ("kappas", "thresholds"):
            value = getattr(self, name)
            if value is not None:
                numbers = tuple(float(v) for v in value)
                if not numbers or any(not (math.isfinite(v) and v > 0) for v in numbers):
                    raise SettingsError(name, f"{list(numbers)}: each value must be finite and > 0 (at least one)")
                self._set(name, numbers)


def _resolve(figure: str, settings: FiguresSettings) -> FiguresSettings:
    """The figure's defaults where a setting is None, after refusing settings that do not apply."""
    if figure not in FIGURES:
        raise SettingsError("figure", f"{figure!r} unknown (allowed: {', '.join(FIGURES)})")
    base = FIGURES[figure]
    given = settings_given(settings)
    refuse_inapplicable(given, APPLIES[figure], f"the {figure} figure")
    values = {**{k: v for k, v in base.items() if k not in ("title", "paper")},
              **{k: getattr(settings, k) for k in given}}
    if figure.startswith("chizat") and values.get("sigma_u") is None:
        values["sigma_u"] = 1.0 / math.sqrt(values["width"])
    if figure == "pf-qualitative" and values["sde_factor"] & (values["sde_factor"] - 1):
        raise SettingsError("sde_factor", f"{values['sde_factor']} must be a power of two for pf-qualitative (its fine "
                                          "steps are summed pairwise)")
    if figure in ("pf-relu", "chizat-feature-speed") and len(values["depths"]) < 3:
        raise SettingsError("depths", f"{list(values['depths'])}: {figure} fits exponents, give at least three depths")
    if figure == "pf-sizes":
        if values["inputs"] < 5:
            raise SettingsError("inputs", f"{values['inputs']}: pf-sizes needs at least 5 inputs on [−2, 2] (its "
                                          "statistics read z = −2, 0, 1, 2)")
        judged = [(L, D) for L in values["depths"] for D in values["widths"]
                  if L >= values["judged_depth"] and D >= values["judged_width"]]
        if len(judged) < 2:
            raise SettingsError("judged_depth", f"--judged-depth {values['judged_depth']} and --judged-width "
                                                f"{values['judged_width']} leave no cell of --depths × --widths to judge "
                                                "besides the reference (the largest L and D)")
    if figure == "pf-abc" and values["accepted"] > values["draws"]:
        raise SettingsError("accepted", f"{values['accepted']} is more than the {values['draws']} draws")
    if "show" in values:
        limit = values.get("draws", values.get("realisations"))
        values["show"] = min(values["show"], limit)
    return dataclasses.replace(settings, **values, figure=figure, title=base["title"])


def listing() -> str:
    lines = ["figures (python -m validation.figures --figure NAME):"]
    for name, values in FIGURES.items():
        lines.append(f"  {name:18s} {values['title']}")
        lines.append(f"  {'':18s} takes {', '.join('--' + k.replace('_', '-') for k in sorted(APPLIES[name]))}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ helpers
def _rng(seed: int, *labels: object) -> np.random.Generator:
    return np.random.default_rng(stream_seed(seed, "figures", *labels))


def _grid(s: FiguresSettings) -> np.ndarray:
    return np.linspace(*INPUT_RANGE, s.inputs)


def _bar(total: int, desc: str, progress: bool) -> tqdm:
    """A bar that shows only when the run lasts (over 2 s)."""
    return tqdm(total=total, desc=desc, unit="draw", disable=not progress, leave=False, delay=2.0)


def _finite_rows(x: np.ndarray) -> np.ndarray:
    return np.all(np.isfinite(x), axis=1)


def _correlations(x: torch.Tensor) -> torch.Tensor:
    """ρ over draws for every pair of inputs, for each batch x (R, n, K) → (R, K, K); NaN where an input's
    output has zero variance (e.g. EO_ReLU at z = 0, where σ_b = 0 makes the output 0)."""
    centred = x - x.mean(dim=1, keepdim=True)
    sd = centred.square().sum(1, keepdim=True).sqrt()
    scaled = centred / torch.where(sd > 0, sd, torch.full_like(sd, math.nan))
    return (scaled.transpose(1, 2) @ scaled).clamp(-1.0, 1.0)


def _correlation(x: np.ndarray) -> np.ndarray:
    return _correlations(torch.as_tensor(x, dtype=torch.float64)[None])[0].numpy()


def _min_correlations(x: torch.Tensor) -> torch.Tensor:
    c = _correlations(x).flatten(1)
    return torch.where(torch.isnan(c), torch.full_like(c, math.inf), c).min(1).values.where(
        ~torch.isnan(c).all(1), torch.tensor(math.nan, dtype=c.dtype))


# ------------------------------------------------------------------------------------------------ the figures
def _function_space(s: FiguresSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    z = _grid(s)
    models, data, checks = [], {"z": z}, []
    with _bar(4 * s.draws, "pf-function-space", progress) as bar:
        for name, (kind, activation) in MODELS.items():
            if kind == "resnet":
                net, sde = resnet_outputs(s, activation, z, s.draws, s.sde_factor, device, bar)
                params = {"sigma_w": s.sigma_w, "sigma_b": s.sigma_b, "width": s.width, "depth": s.depth}
            else:
                net, params = eoc_outputs(s, activation, z, s.draws, device, bar)
                sde = None
            keep = _finite_rows(net) & (_finite_rows(sde) if sde is not None else True)
            rng = _rng(s.seed, "bootstrap", s.figure, name)
            good = net[keep]
            entry: dict[str, Any] = {"model": name, "kind": kind, "activation": activation, **params,
                                     "nonfinite_draws": int((~keep).sum())}
            entry["quantiles"] = {q: np.quantile(good, q / 100, axis=0).tolist() for q in (5, 50, 95)}
            entry["shown"] = net[: s.show].tolist()
            entry["top_pc_fraction"] = top_pc_fraction(good)
            entry["top_pc_ci95"] = resampled_interval_batched(pc_fractions, good, s.resamples, rng)
            entry["within_function_sd"] = float(np.sqrt(good.var(axis=1).mean()))
            entry["total_sd"] = float(good.std())
            data[name] = net
            if sde is not None:
                sde_good = sde[keep]
                gap = lambda i: float(np.sqrt(((good[i] - sde_good[i]) ** 2).mean()) / good[i].std())  # noqa: E731, B023
                entry["sde"] = {"steps": s.depth * s.sde_factor, "quantiles": {q: np.quantile(sde_good, q / 100,
                                axis=0).tolist() for q in (5, 50, 95)}, "shown": sde[: s.show].tolist(),
                                "rms_gap": float(np.sqrt(((good - sde_good) ** 2).mean())),
                                "relative_gap": gap(np.arange(len(good))),
                                "relative_gap_ci95": resampled_interval(gap, len(good), s.resamples, rng)}
                data[name + "_sde"] = sde
                g_lo, g_hi = entry["sde"]["relative_gap_ci95"]
                checks.append(bound_check(f"{name}: ResNet ≈ its SDE on the same path", (g_lo, g_hi), s.sde_tolerance,
                                          at_most=True, detail=f"RMS gap / SD = {entry['sde']['relative_gap']:.3f} "
                                                               f"[{g_lo:.3f}, {g_hi:.3f}]").to_dict())
            lo, hi = entry["top_pc_ci95"]
            checks.append(bound_check(f"{name}: {'degenerate' if kind == 'eoc' else 'not degenerate'} in z", (lo, hi),
                                      s.eoc_min_pc if kind == "eoc" else s.resnet_max_pc, at_most=kind != "eoc",
                                      detail=f"first PC explains {entry['top_pc_fraction']:.3f} [{lo:.3f}, {hi:.3f}]"
                                      ).to_dict())
            models.append(entry)
    result = {"title": s.title, "paper": FIGURES[s.figure]["paper"], "z": z.tolist(), "draws": s.draws,
              "rule": "first-PC fraction = λ_max/trace of the draws' covariance over z (1 iff all outputs are "
                      f"perfectly correlated): EOC ≥ {s.eoc_min_pc:g} (lower 95% end), ResNet ≤ "
                      f"{s.resnet_max_pc:g} (upper end); ResNet vs SDE: RMS(x_net − x_sde)/SD(x_net) ≤ "
                      f"{s.sde_tolerance:g} (upper end)",
              "models": models, "checks": checks}
    return result, data


def _correlation_figure(s: FiguresSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    z = _grid(s)
    models, data, checks = [], {"z": z}, []
    with _bar(4 * s.draws, "pf-correlation", progress) as bar:
        for name, (kind, activation) in MODELS.items():
            if kind == "resnet":
                net, _ = resnet_outputs(s, activation, z, s.draws, None, device, bar)
                params = {"sigma_w": s.sigma_w, "sigma_b": s.sigma_b, "width": s.width, "depth": s.depth}
            else:
                net, params = eoc_outputs(s, activation, z, s.draws, device, bar)
            keep = _finite_rows(net)
            good = net[keep]
            corr = _correlation(good)
            rng = _rng(s.seed, "bootstrap", s.figure, name)
            low = float(np.nanmin(corr)) if np.isfinite(corr).any() else math.nan
            ci = resampled_interval_batched(_min_correlations, good, s.resamples, rng)
            where = np.unravel_index(np.nanargmin(corr), corr.shape) if np.isfinite(corr).any() else (0, 0)
            off = corr[~np.eye(len(z), dtype=bool)]
            entry = {"model": name, "kind": kind, "activation": activation, **params,
                     "nonfinite_draws": int((~keep).sum()), "min_correlation": low, "min_correlation_ci95": ci,
                     "argmin_z": [float(z[where[0]]), float(z[where[1]])],
                     "mean_offdiagonal": float(np.nanmean(off)), "undefined_inputs": int(np.isnan(np.diag(corr)).sum()),
                     "correlation": corr.tolist()}
            checks.append(bound_check(f"{name}: correlations {'all close to 1' if kind == 'eoc' else 'far from 1'}",
                                      tuple(ci), s.eoc_min_correlation if kind == "eoc" else s.resnet_max_correlation,
                                      at_most=kind != "eoc", detail=f"min ρ = {low:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
                                      ).to_dict())
            models.append(entry)
            data[name] = corr
    result = {"title": s.title, "paper": FIGURES[s.figure]["paper"], "z": z.tolist(), "draws": s.draws,
              "rule": f"minimum over the grid of ρ[x(z1), x(z2)] with a 95% bootstrap interval over draws: EOC lower "
                      f"end ≥ {s.eoc_min_correlation:g}; ResNet upper end ≤ {s.resnet_max_correlation:g}",
              "models": models, "checks": checks}
    return result, data


def _fbm(s: FiguresSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    n = s.length
    t = np.linspace(0.0, 1.0, n + 1)
    per_h, data, checks = [], {"t": t}, []
    for h in s.hursts:
        noise = FractionalNoise(h, n, dtype=s.torch_dtype, device=device)
        fgn = noise.sample(s.realisations, generator(s.seed, "figures", "marion-fbm", h, device=device))
        increments = fgn.double().cpu().numpy()
        estimate = estimate_hurst(increments)
        sizes, moments = block_moments(increments)
        logm = np.log(sizes)

        def pooled(i: np.ndarray) -> float:
            return float(np.polyfit(logm, np.log(moments[i].mean(axis=0)), 1)[0] / 2)  # noqa: B023 (called within this iteration)

        singles = np.polyfit(logm, np.log(moments.T), 1)[0] / 2  # one estimate per realisation
        ci = resampled_interval(pooled, s.realisations, s.resamples, _rng(s.seed, "bootstrap", s.figure, h))
        paths = np.concatenate([np.zeros((s.show, 1)), np.cumsum(increments[: s.show], axis=1)], axis=1) * n ** (-h)
        data[h] = paths
        ok = abs(estimate - h) <= s.hurst_tolerance
        per_h.append({"hurst": h, "estimate": estimate, "estimate_ci95": ci,
                      "per_realisation_mean": float(singles.mean()),
                      "per_realisation_5_95": [float(np.quantile(singles, 0.05)), float(np.quantile(singles, 0.95))],
                      "shown": paths.tolist() if n <= 4096 else None})
        checks.append({"check": f"H = {h:g} recovered", "passed": bool(ok),
                       "detail": f"Ĥ = {estimate:.4f} [{ci[0]:.4f}, {ci[1]:.4f}], |Ĥ − H| = {abs(estimate - h):.4f} "
                                 f"(tolerance {s.hurst_tolerance:g})"})
    result = {"title": s.title, "paper": FIGURES[s.figure]["paper"], "length": n, "realisations": s.realisations,
              "rule": "Ĥ = ½ slope of log E[S_m²] on log m (m = 1, 2, 4, … ≤ n/8; S_m block sums of the unit-variance "
                      f"fGn, pooled over realisations; limits.fractional.estimate_hurst); |Ĥ − H| ≤ {s.hurst_tolerance:g}",
              "per_hurst": per_h, "checks": checks}
    return result, data


def _chizat(s: FiguresSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    d, m, layers, n = s.width, s.hidden, s.layers, s.networks
    c = chizat_constant(d, s.sigma_u, s.sigma_v)
    alphas = [k / math.sqrt(m * layers) for k in s.kappas]
    spread = chizat_spread(alphas, width=d, hidden=m, layers=layers, networks=n, sigma_u=s.sigma_u,
                           sigma_v=s.sigma_v, seed=s.seed, label=("figures", "chizat-maximal"),
                           dtype=s.torch_dtype, device=device).numpy()  # (alphas, L + 1, n)
    per_kappa, checks, data = [], [], {}
    for j, (kappa, alpha) in enumerate(zip(s.kappas, alphas)):
        final = spread[j, -1]
        sup = spread[j].max(axis=0)
        exact = float(chizat_expected_spread(alpha, m, layers, c)[-1])
        rng = _rng(s.seed, "bootstrap", s.figure, kappa)
        ratio = lambda i: float(sup[i].mean() / final[i].mean())  # noqa: E731, B023
        ratio_ci = resampled_interval(ratio, n, s.resamples, rng)
        tails = []
        for multiple in s.thresholds:
            a = multiple * exact
            hits = (sup >= a).astype(float)
            p = float(hits.mean())
            ci = resampled_interval(lambda i: float(hits[i].mean()), n, s.resamples, rng)  # noqa: B023 (called within this iteration)
            bound = s.tail_constant * exact / a
            tails.append({"multiple": multiple, "a": a, "p_sup": p, "p_sup_ci95": ci,
                          "p_final": float((final >= a).mean()), "bound": bound,
                          "passed": bool(ci[0] <= bound)})
        entry = {"kappa": kappa, "alpha": alpha, "exact_mean_final": exact, "mc_mean_final": float(final.mean()),
                 "mc_mean_final_ci95": resampled_interval(lambda i: float(final[i].mean()), n, s.resamples, rng),  # noqa: B023 (called within this iteration)
                 "mc_mean_sup": float(sup.mean()), "ratio_sup_final": ratio(np.arange(n)),
                 "ratio_ci95": ratio_ci, "tails": tails}
        per_kappa.append(entry)
        data[kappa] = {"sup": sup, "final": final}
        worst = max(tails, key=lambda e: e["p_sup_ci95"][0] / e["bound"])
        checks.append({"check": f"κ = {kappa:g}: P(sup S ≥ a) ≤ {s.tail_constant:g}·E[S^L]/a",
                       "passed": all(e["passed"] for e in tails),
                       "detail": f"{sum(e['passed'] for e in tails)}/{len(tails)} thresholds; tightest a = "
                                 f"{worst['multiple']:g}·E[S^L]: P̂ = {worst['p_sup']:.4f} [{worst['p_sup_ci95'][0]:.4f}, "
                                 f"{worst['p_sup_ci95'][1]:.4f}] vs bound {worst['bound']:.4f}"})
        checks.append({"check": f"κ = {kappa:g}: E[sup S] ≤ {s.doob_constant:g}·E[S^L]",
                       "passed": bool(ratio_ci[0] <= s.doob_constant),
                       "detail": f"E[sup S]/E[S^L] = {entry['ratio_sup_final']:.3f} [{ratio_ci[0]:.3f}, "
                                 f"{ratio_ci[1]:.3f}]; lower end ≤ {s.doob_constant:g}"})
        # Doob's bounds cannot fail for any plausible implementation; the exact mean they rest on can
        mean_check = bounds_check(np.sqrt(final), exact, exact, family_z(len(s.kappas)))
        entry["exact_mean_check"] = mean_check
        checks.append(Check.of(
            f"κ = {kappa:g}: E[S^L] = (1 + cα²M)^L − 1 (exact)", mean_check["passed"] or not mean_check["reliable"],
            f"Monte Carlo {mean_check['mean_r2']:.4g} ± {mean_check['se']:.2g} against {exact:.4g}: z = "
            f"{mean_check['z_vs_lower']:.2f}, |z| ≤ {family_z(len(s.kappas)):.2f} (Bonferroni, 1%)"
            + ("" if mean_check["reliable"] else "; not counted: too few samples for the tail of S^L")).to_dict())
    result = {"title": s.title, "paper": FIGURES[s.figure]["paper"], "width": d, "hidden": m, "layers": layers,
              "networks": n, "c": c, "sigma_u": s.sigma_u, "sigma_v": s.sigma_v,
              "rule": "S^ℓ = ‖h^ℓ − x‖²/‖x‖², E[S^L] = (1 + cα²M)^L − 1 exactly (Prop. 2.1); PASS when the lower end of "
                      f"the 95% bootstrap interval of each Monte-Carlo estimate is at most its bound: P(sup S ≥ a) ≤ "
                      f"{s.tail_constant:g}·E[S^L]/a, E[sup S]/E[S^L] ≤ {s.doob_constant:g}; and the mean of S^L is "
                      "within z standard errors of its exact value (the check a wrong implementation fails)",
              "per_kappa": per_kappa, "checks": checks}
    return result, data


def _titled(compute: Any) -> Any:
    """A figure module's compute, with the figure's title and paper added to its numbers."""
    def run_figure(s: FiguresSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
        result, data = compute(s, device, progress)
        return {"title": s.title, "paper": FIGURES[s.figure]["paper"], **result}, data

    return run_figure


COMPUTE = {"pf-function-space": _function_space, "pf-correlation": _correlation_figure,
           "pf-abc": _titled(pf_figures.abc_figure), "pf-2d": _titled(pf_figures.two_d_figure),
           "pf-qualitative": _titled(pf_figures.qualitative_figure), "pf-relu": _titled(pf_figures.relu_figure),
           "pf-sizes": _titled(pf_figures.sizes_figure), "marion-fbm": _fbm,
           "chizat-maximal": _chizat, "chizat-backward": _titled(chizat_figures.backward_pass),
           "chizat-kernel": _titled(chizat_figures.kernel_figure), "chizat-phase": _titled(chizat_figures.phase_figure),
           "chizat-feature-speed": _titled(chizat_figures.feature_speed_figure)}


def estimate_mb(figure: str, settings: FiguresSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB (chunks are bounded at 2^22 numbers)."""
    try:
        s = _resolve(figure, settings)
    except SettingsError:
        return 0.0
    item = 4 if s.dtype == "float32" else 8
    if s.figure == "pf-qualitative":  # a chunk's fine increments; all draws' outputs; a batch of permutations
        chunk = min(500, s.draws) * (s.sde_factor * (s.width**2 + s.width) + 16 * s.width) * item
        return (chunk + 16 * s.draws * s.width * 8 + 4 * 2**22 * 8) / 2**20 + 300
    if s.figure == "pf-relu":  # every displacement (4 models × depths × draws × D) and a batch of resamples
        return (4 * len(s.depths) * s.draws * s.width * 8 + 3 * 2**22 * 8) / 2**20 + 300
    if s.figure == "pf-sizes":  # a chunk's Gram states, every cell's resampled statistics, a batch of resamples
        cells = 2 * len(s.depths) * len(s.widths)
        return (6 * min(1000, s.draws) * s.widths[-1] * s.inputs * item + cells * 8 * s.resamples * 8
                + 4 * 2**23 * 8) / 2**20 + 300
    if s.figure == "marion-fbm":
        return 3 * s.realisations * s.length * item * 4 / 2**20 + 300
    if s.figure == "chizat-maximal":
        return (64 * 2 * s.layers * s.hidden * s.width + len(s.kappas) * (s.layers + 1) * s.networks) * item / 2**20 + 300
    if s.figure == "chizat-phase":  # every network's weights and states at the deepest depth, three times over
        return 4 * s.networks * s.depths[-1] * (2 * s.hidden * s.width + 2 * s.width * s.inputs) * item / 2**20 + 300
    if s.figure == "chizat-kernel":  # a chunk's Jacobian rows (inputs · d of them, each over every block weight)
        params = 2 * s.layers * s.hidden * s.width
        return (3 * s.inputs * s.width * 32 * params + 4 * 32 * s.layers * s.width * s.inputs) * item / 2**20 + 300
    if s.figure == "chizat-feature-speed":  # a chunk of 8 networks' weights, gradients, states and tangents
        per_layer = max(s.width**2, 2 * s.hidden * s.width)
        return 8 * s.depths[-1] * (3 * per_layer + 8 * s.width) * item / 2**20 + 300
    if s.figure == "chizat-backward":  # a chunk's states and gradients, and two spreads (κ, L + 1, n) in float64
        chunk = 64 * len(s.kappas) * s.width * (s.layers + 1) * 6 + 64 * 2 * s.layers * s.hidden * s.width
        return (chunk * item + 2 * len(s.kappas) * (s.layers + 1) * s.networks * 8) / 2**20 + 300
    return (6 * 2**22 * item + 8 * s.draws * s.inputs * 8 + 4 * s.inputs**2 * 8) / 2**20 + 300


def estimate_seconds(figure: str, settings: FiguresSettings) -> float:
    """A rough estimate of the run time on the 2-core reference: ~5e-10 s per multiply-add of the P&F networks
    and ~1.5e-8 s per normal drawn (the default pf runs: 16 s and 22 s measured); the others are fast (0)."""
    try:
        s = _resolve(figure, settings)
    except SettingsError:
        return 0.0
    if s.figure == "chizat-feature-speed":  # per layer and network: its normals and ~8 products (2.9 s at d = M = 128,
        # L = 64, 32 networks measured for one ResNet); the MLP counts as one model
        return 2.5e-10 * sum(s.depths) * s.networks * s.width * (s.width + 2 * s.hidden * len(s.kappas)) * 8
    if s.figure == "pf-qualitative":  # 4 models with sde_factor + 1 passes, 2 planted; ~1e-8 s per permuted value
        passes = 2 * (2 * s.sde_factor + 1) + 2
        return (5e-10 * passes * s.draws * s.depth * 2 * s.width**2 + 1.5e-8 * 4 * s.draws * s.depth * s.sde_factor
                * (s.width**2 + s.width) + 1e-8 * 6 * 2 * s.resamples * s.draws * s.width)
    if s.figure == "pf-relu":  # per layer and draw: D² + D normals, 4 small products and activations
        return 2.5e-8 * sum(s.depths) * s.draws * (s.width**2 + s.width) + 1e-7 * sum(s.depths) * s.draws * s.width
    if s.figure == "pf-sizes":  # per layer and draw: a K × K eigen-decomposition and O(D·K²) products
        layers = 2 * sum(s.depths) * len(s.widths)
        return 1.2e-8 * layers * s.draws * s.inputs**2 * 1.5 + 5e-9 * 2 * sum(s.depths) * sum(s.widths) * s.draws * (
            s.inputs**2 + 3 * s.inputs)
    if s.figure in ("pf-function-space", "pf-correlation", "pf-abc", "pf-2d"):
        factor = (s.sde_factor or 0) + 1 if s.figure == "pf-function-space" else 1
        models = 1 if s.figure == "pf-abc" else 2  # of each kind: SC_tanh and SC_swish, EO_tanh and EO_ReLU
        if s.figure == "pf-2d":  # two ResNets, no edge-of-chaos network
            return 5e-10 * 2 * s.draws * s.depth * s.width**2 * (s.inputs**2 + 2) + 1.5e-8 * 2 * s.draws * s.depth * (
                s.width**2 + s.width)
        points = (s.inputs**2 if s.figure == "pf-2d" else s.inputs) + 2 + (len(s.data) if s.figure == "pf-abc" else 0)
        resnet = models * s.draws * s.depth * factor * s.width**2 * points
        eoc = models * s.draws * s.eoc_depth * s.eoc_width**2 * points
        normals = models * s.draws * (s.depth * max(1, factor - 1) * (s.width**2 + s.width)
                                      + s.eoc_depth * s.eoc_width * (s.eoc_width + 1))
        return 5e-10 * (resnet + eoc) + 1.5e-8 * normals
    return 0.0


# ------------------------------------------------------------------------------------------------ result
@dataclass(repr=False)  # StudyResult's short repr
class FiguresResult(StudyResult):
    """One figure's result: ``numbers`` (the ``result`` section of the JSON: the figure's numbers, its checks)
    and ``data`` (the arrays behind the plot, not written to JSON)."""

    numbers: dict[str, Any] = dataclasses.field(default_factory=dict)
    data: dict[Any, Any] = dataclasses.field(default_factory=dict, repr=False)

    study = "figures"

    @property
    def figure(self) -> str:
        return self.settings.figure

    @property
    def checks(self) -> list[dict[str, Any]]:
        """Every check: ``{"check", "passed", "detail"}``, with ``verdict`` where it has a margin (an interval
        against a bound: :func:`validation.core.checks.bound_check`)."""
        return self.numbers["checks"]

    @property
    def verdict(self) -> str:
        """FAIL if a check fails, else INCONCLUSIVE if one is, else PASS (:func:`validation.core.checks.combine`)."""
        return combine(self.checks)

    def summary(self) -> dict[str, Any]:
        return {"figure": self.figure, **self.numbers}

    def table(self) -> str:
        text = {"pf-function-space": _function_space_table, "pf-correlation": _correlation_table,
                "marion-fbm": _fbm_table, "chizat-maximal": _chizat_table, "pf-abc": pf_figures.abc_table,
                "pf-2d": pf_figures.two_d_table, "pf-qualitative": pf_figures.qualitative_table,
                "pf-relu": pf_figures.relu_table, "pf-sizes": pf_figures.sizes_table,
                "chizat-backward": chizat_figures.backward_table,
                "chizat-kernel": chizat_figures.kernel_table,
                "chizat-phase": chizat_figures.phase_table,
                "chizat-feature-speed": chizat_figures.feature_speed_table}[self.figure](self.numbers)
        lines = [f"{self.numbers['title']}", f"paper: {self.numbers['paper']}", text, "", "checks:"]
        lines += [check_line(c) for c in self.checks]
        lines += [f"verdict: {self.verdict}", f"wall time {self.run_info.wall_time_s:.1f} s"]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        from validation.figures import plots as figure_plots

        return figure_plots.plot(self.figure, self.numbers, self.data, ax)


def _function_space_table(r: dict[str, Any]) -> str:
    lines = [f"{r['draws']} draws, {len(r['z'])} inputs on [−2, 2]; rule: {r['rule']}",
             f"{'model':>9} {'net':>12} | {'first PC [95% CI]':>26} | {'SD within f':>11} {'SD all':>8} | "
             f"{'SDE gap/SD [95% CI]':>26} | {'non-finite':>10}"]
    for e in r["models"]:
        net = f"D={e['width']},L={e['depth']}"
        lo, hi = e["top_pc_ci95"]
        gap = "—"
        if "sde" in e:
            g = e["sde"]
            gap = f"{g['relative_gap']:.3f} [{g['relative_gap_ci95'][0]:.3f}, {g['relative_gap_ci95'][1]:.3f}]"
        lines.append(f"{e['model']:>9} {net:>12} | {e['top_pc_fraction']:>8.3f} [{lo:>6.3f}, {hi:>6.3f}]    | "
                     f"{e['within_function_sd']:>11.4g} {e['total_sd']:>8.4g} | {gap:>26} | {e['nonfinite_draws']:>10}")
    lines.append("EOC parameters: " + "; ".join(f"{e['model']} σ_w = {e['sigma_w']:.4f}, σ_b = {e['sigma_b']:g}"
                                                 for e in r["models"] if e["kind"] == "eoc"))
    return "\n".join(lines)


def _correlation_table(r: dict[str, Any]) -> str:
    lines = [f"{r['draws']} draws, {len(r['z'])}×{len(r['z'])} grid on [−2, 2]²; rule: {r['rule']}",
             f"{'model':>9} {'net':>12} | {'min ρ [95% CI]':>26} {'at (z1, z2)':>16} | {'mean off-diag':>13}"]
    for e in r["models"]:
        lo, hi = e["min_correlation_ci95"]
        at = f"({e['argmin_z'][0]:.2f}, {e['argmin_z'][1]:.2f})"
        lines.append(f"{e['model']:>9} {'D=' + str(e['width']) + ',L=' + str(e['depth']):>12} | "
                     f"{e['min_correlation']:>8.3f} [{lo:>6.3f}, {hi:>6.3f}]    {at:>16} | {e['mean_offdiagonal']:>13.3f}")
    return "\n".join(lines)


def _fbm_table(r: dict[str, Any]) -> str:
    lines = [f"{r['realisations']} realisations of length n = {r['length']} per H; rule: {r['rule']}",
             f"{'H':>5} | {'Ĥ pooled [95% CI]':>28} | {'per-realisation mean [5%, 95%]':>32}"]
    for e in r["per_hurst"]:
        lo, hi = e["estimate_ci95"]
        a, b = e["per_realisation_5_95"]
        lines.append(f"{e['hurst']:>5g} | {e['estimate']:>8.4f} [{lo:>7.4f}, {hi:>7.4f}]      | "
                     f"{e['per_realisation_mean']:>8.4f} [{a:>7.4f}, {b:>7.4f}]")
    return "\n".join(lines)


def _chizat_table(r: dict[str, Any]) -> str:
    lines = [f"d = {r['width']}, M = {r['hidden']}, L = {r['layers']}, σ_u = {r['sigma_u']:.4g}, σ_v = "
             f"{r['sigma_v']:.4g}, c = {r['c']:.4g}, {r['networks']} networks", f"rule: {r['rule']}"]
    for e in r["per_kappa"]:
        lo, hi = e["mc_mean_final_ci95"]
        lines.append(f"κ = {e['kappa']:g} (α = {e['alpha']:.4g}): E[S^L] exact {e['exact_mean_final']:.4g}, Monte "
                     f"Carlo {e['mc_mean_final']:.4g} [{lo:.4g}, {hi:.4g}]; E[sup S] {e['mc_mean_sup']:.4g}; "
                     f"E[sup S]/E[S^L] {e['ratio_sup_final']:.3f} [{e['ratio_ci95'][0]:.3f}, {e['ratio_ci95'][1]:.3f}]")
        lines.append(f"  {'a/E[S^L]':>9} | {'P(sup S ≥ a) [95% CI]':>30} | {'P(S^L ≥ a)':>10} | {'bound':>7}")
        for t in e["tails"]:
            lines.append(f"  {t['multiple']:>9g} | {t['p_sup']:>8.4f} [{t['p_sup_ci95'][0]:>7.4f}, "
                         f"{t['p_sup_ci95'][1]:>7.4f}]      | {t['p_final']:>10.4f} | {t['bound']:>7.4f}")
    return "\n".join(lines)


def run(figure: str = "pf-function-space", settings: FiguresSettings | None = None, /, *, progress: bool = False,
        threads: int | None = 1, command_line: str | None = None, **overrides: Any) -> FiguresResult:
    """Make one figure (``pf-function-space``, ``pf-correlation``, ``pf-abc``, ``pf-2d``, ``pf-qualitative``,
    ``pf-relu``, ``pf-sizes``, ``marion-fbm``, ``chizat-maximal``,
    ``chizat-backward``, ``chizat-kernel``, ``chizat-phase``, ``chizat-feature-speed``).

    Args:
        figure: the figure; every setting overrides one of its defaults.
        settings: a :class:`FiguresSettings`; None for the figure's defaults.
        progress, threads, command_line: as for :func:`validation.convergence.run`.
        **overrides: settings by name, e.g. ``draws=50, width=16``.
    """
    settings = _resolve(figure, make_settings(FiguresSettings, settings, overrides))
    device = resolve_device(settings.device)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        numbers, data = COMPUTE[settings.figure](settings, device, progress)
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=device, started=started,
                               wall_time_s=time.perf_counter() - clock, command=command_line)
    return FiguresResult(settings=settings, run_info=info, numbers=numbers, data=data)


EPILOG = """\
examples:
  python -m validation.figures --list
  python -m validation.figures --figure pf-function-space --plot fig3.png --json fig3.json
  python -m validation.figures --figure pf-correlation --width 500 --depth 500 --eoc-width 500 --eoc-depth 500
  python -m validation.figures --figure marion-fbm --hursts 0.1,0.3,0.7,0.9
  python -m validation.figures --figure chizat-maximal --kappas 0.5,1,2,4 --networks 10000
"""


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--figure", choices=list(FIGURES), default=None,
                       help="the figure: " + ", ".join(FIGURES) + " (required unless --list)")
    group.add_argument("--list", action="store_true", help="list the figures and the settings each takes")


def _run_cli(figure: str | None, settings: FiguresSettings, /, **kwargs: Any) -> FiguresResult:
    if figure is None:
        raise SettingsError("figure", f"is required (allowed: {', '.join(FIGURES)}; or --list)")
    return run(figure, settings, **kwargs)


def _estimate_mb(figure: str | None, settings: FiguresSettings) -> float:
    return 0.0 if figure is None else estimate_mb(figure, settings)


def _estimate_seconds(figure: str | None, settings: FiguresSettings) -> float:
    return 0.0 if figure is None else estimate_seconds(figure, settings)


COMMAND = cli.Command(
    prog="python -m validation.figures",
    description=__doc__.split("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=FiguresSettings,
    run=_run_cli,
    positional=("figure",),
    add_arguments=_add_arguments,
    listing=listing,
    estimate_mb=_estimate_mb,
    estimate_seconds=_estimate_seconds,
    outputs=("json", "plot"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
