"""The presets of ``python -m validation.regimes``: each a paper's values for one kind of run, in one line of
:data:`PRESETS` (the kinds: :mod:`~validation.regimes.sweep`, :mod:`~validation.regimes.distribution`,
:mod:`~validation.regimes.assumptions`, :mod:`~validation.regimes.chizat`).

Paper settings: Marion et al. App. E, Table 2; Chizat's lecture §2. Every value is a setting.
"""

from validation.core.catalogue import Catalogue
from validation.regimes.assumptions import AssumptionsPreset
from validation.regimes.chizat import ChizatPreset
from validation.regimes.distribution import Distribution
from validation.regimes.preset import Preset
from validation.regimes.sweep import Sweep

__all__ = ["PRESETS", "PAPER_DEPTHS"]

#: the depths of Marion et al.'s sweeps
PAPER_DEPTHS = (10, 20, 50, 100, 200, 500, 1000)

#: every preset by name (``fig3`` and ``fig5`` are ``fig1`` and ``fig4``, whose second figures they are)
PRESETS: Catalogue[Preset] = Catalogue("preset", (
    Sweep("fig1", "Fig. 1 & 3: res-3, i.i.d. U(−√(3/d), √(3/d)), d = 40", regime="iid", law="uniform", block="res3",
          betas=(0.25, 0.5, 1.0), depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
          rejects={"i.i.d. weights of variance 1.3/d, moving res-3's exact E r² by about 30%":
                   "tests/test_regimes.py::test_props_2_6_exact_mean_check_fails_on_inflated_weights"}),
    Sweep("fig4", "Fig. 4 & 5: res-3, smooth RBF weights (ℓ = 0.1), d = 40", regime="smooth", lengthscale=0.1,
          block="res3", betas=(0.5, 1.0, 2.0), depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
          rejects={"i.i.d. weights, critical β ½, where smooth weights with critical β 1 are claimed":
                   "tests/test_regimes.py::test_fig4_fails_iid_weights_in_place_of_smooth_ones"}),
    Distribution("fig2", "Fig. 2: res-3, i.i.d. uniform, β = 1/2, L = 1000, d = 100", regime="iid", law="uniform",
                 block="res3", betas=(0.5,), depths=(1000,), width=100, n_in=64, samples=10_000, inputs=1,
                 rejects={"norm ratios twice as large, their upper quartile above Prop. 3's bound 2.06 (planted)":
                          "tests/test_regimes.py::test_fig2_quantile_bounds_fail_on_inflated_ratios"}),
    Sweep("prop13", "Prop. 13: linear res-1, smooth RBF weights (ℓ = 0.1), d = 40: max_k ‖h_k − h_0‖/‖h_0‖",
          regime="smooth", lengthscale=0.1, block="res1", activation="identity", betas=(0.25, 0.5, 0.75, 1.0, 2.0),
          depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1, max_over_layers=True,
          rejects={"initial weights 𝒱(0) − 2I, whose positive real eigenvalues are rarer than a Gaussian matrix's":
                   "tests/test_regimes.py::test_prop13_condition_is_on_v0_and_fails_on_shifted_eigenvalues"}),
    Sweep("prop3", "Prop. 3: res-3, i.i.d. uniform, d = 64, L ≥ 1024 (where its lower bound (i) applies)",
          regime="iid", law="uniform", block="res3", betas=(0.4, 0.45, 0.5, 0.6), depths=(1024, 2048, 4096), width=64,
          n_in=64, samples=50, inputs=1,
          rejects={"i.i.d. weights of variance 0.4/d (E m₂ = 0.08, below (A₂)'s ½), r_h² under Prop. 3's lower bound (i)":
                   "tests/test_regimes_plants.py::test_prop3_lower_bound_fails_on_weights_of_variance_0_4_over_d"}),
    AssumptionsPreset("assumptions", "Marion et al. (A₂), (A₄): Props. 1 and 5, Lemma 16, the eighth moment",
                      width=40, samples=20_000,
                      rejects={"a symmetric Rademacher draw in place of the centred two-point law: E m₂ ½, not p = 0.1":
                               "tests/test_regimes.py::test_centred_two_point_counterexample_is_measured_and_fails_on_a_symmetric_draw"}),
    ChizatPreset("chizat", "Chizat Prop. 2.1: ResNet with ReLU 2LP blocks", width=40, hidden=16, layers=100,
                 kappas=(0.25, 1.0, 4.0), betas=(0.25, 0.5, 1.0), depths=PAPER_DEPTHS, samples=1000, sweep_samples=100,
                 hiddens=(4, 16, 64), hidden_samples=400, sigma_u=None, sigma_v=1.0,
                 rejects={"u_j of variance 1.3/d in place of σ_u² = 1/d: c = 0.65, not dσ_v²σ_u²/2 = ½":
                          "tests/test_regimes_plants.py::test_chizat_exact_spread_fails_on_a_wrong_sigma_u",
                          "a mean-field output scale, v_j of variance σ_v²·16/M: the spread set by Lα², not MLα²":
                          "tests/test_regimes_plants.py::test_chizat_hidden_sweep_fails_on_a_mean_field_output_scale"}),
), aliases={"fig3": "fig1", "fig5": "fig4"})
