"""How often the verdicts are wrong: each check run over many seeds under the null (the package's own, right model)
and under planted alternatives (a wrong model the check must reject), with exact binomial intervals.

A verdict is a statistical test. Its **size** is how often it FAILs a right model (false FAIL); its **power** how
often it FAILs a wrong one — here reported as its complement, the false-PASS rate under each alternative. Both are
measured, with Clopper–Pearson 95% intervals and the K seeds behind them, and the rules of docs/theory.md §6 are
applied to them:

* no check may show a false-FAIL or a false-PASS rate whose interval lies wholly above 10%;
* the INCONCLUSIVE rate under the null should be below 20% for the commands in the README's tables.

Two kinds of rows:

* **command rows** (:data:`COMMANDS`): ``python -m validation.STUDY ARGS --seed S`` as a user types it, the verdict
  read from its exit status (0 PASS, 1 FAIL, 4 INCONCLUSIVE; anything else is recorded as an error and counts as
  none of them). The alternatives are real perturbations of the model (tests/wrong_noise_scale.py: a noise 1.3×,
  a drift −H/2 added by a subclass, a damping drift left out), not of the verdict;
* **draw rows** (:func:`fig1_bounds`): a check's rule evaluated on the draws of the preset it belongs to, under the
  null and under claims stated with a misstated parameter (Lemma 14's bounds with the weight variance 1.15× too
  large or 0.45× too small), for the rules before and after a change.

The results go to ``benchmarks/results/calibration.json`` (written whole after every run, so a stopped
calibration resumes where it stopped: runs already there are not repeated) and, with ``--page``, to
docs/results/calibration.md.

    python benchmarks/calibrate.py --list                  # the rows, their K and the estimated time
    python benchmarks/calibrate.py --workers 2             # run what is missing (resumable)
    python benchmarks/calibrate.py --only convergence --workers 2
    python benchmarks/calibrate.py --page                  # the table, printed and written to the results page
    python benchmarks/calibrate.py --smoke                 # the smoke calibration of CI: planted alternatives FAIL
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "calibration.json"
PAGE = ROOT / "docs" / "results" / "calibration.md"
PLANTS = "tests/wrong_noise_scale.py"
#: the script that runs a catalogue entry's command on a planted model (``python tests/planted_entries.py PLANT …``)
PLANTED_ENTRIES = "tests/planted_entries.py"
#: the rules (docs/theory.md §6)
MAX_WRONG_RATE, MAX_NULL_INCONCLUSIVE = 0.10, 0.20
VERDICTS = {0: "PASS", 1: "FAIL", 4: "INCONCLUSIVE"}


@dataclass(frozen=True)
class Hypothesis:
    """One model a check is run on: the null (the right model: the check must PASS) or an alternative (a wrong
    one: it must FAIL). ``args`` are added to the command's."""

    name: str
    args: tuple[str, ...]
    null: bool
    seeds: int
    #: a plant of tests/planted_entries.py that changes the model the study runs (None: the study's own)
    plant: str | None = None
    #: an alternative the check must FAIL at its defaults, so the smoke calibration asserts it (False: a nearer one,
    #: run to measure the check's power where it is expected to end INCONCLUSIVE)
    must_fail: bool = True


@dataclass(frozen=True)
class CommandCheck:
    """A command's verdict, calibrated: its command line, what it claims, and its hypotheses."""

    key: str
    study: str
    args: tuple[str, ...]
    claim: str
    hypotheses: tuple[Hypothesis, ...]
    #: seconds one run takes on the 2-core development machine (for --list's estimate)
    seconds: float
    in_readme: bool = False
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: the statistic behind the verdict, read from the run's result JSON and kept with the run (None: not kept)
    measured: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: the verdict the rule before a change would have given, from ``measured``: (the rule in words, the verdict)
    before: tuple[str, Callable[[dict[str, Any]], str]] | None = None

    def command(self, hypothesis: Hypothesis, seed: int) -> list[str]:
        study = ([PLANTED_ENTRIES, hypothesis.plant] if hypothesis.plant else ["-m", f"validation.{self.study}"])
        return [*study, *self.args, *hypothesis.args, "--seed", str(seed)]


def _budget_exponent(result: dict[str, Any]) -> dict[str, Any]:
    """chaintron2026-budget's exponent in P at the checked step and its interval."""
    fit = result["result"]["sweeps"]["budget"]["hidden_exponents"][result["result"]["checked_step"]]
    return {"exponent": -fit["slope"], "ci": [-fit["ci"][1], -fit["ci"][0]]}


def _within(centre: float, margin: float) -> Callable[[dict[str, Any]], str]:
    """The verdict of a kept interval against centre ± margin, by the checks' own equivalence rule
    (:func:`validation.core.checks.interval_check`)."""
    from validation.core.checks import interval_check

    def verdict(measured: dict[str, Any]) -> str:
        low, high = measured["ci"]
        estimate = measured.get("exponent", (low + high) / 2)
        return interval_check("the rule before", estimate, (low, high), (centre - margin, centre + margin), 1).verdict

    return verdict


COMMANDS: tuple[CommandCheck, ...] = (
    CommandCheck(
        "convergence-res1", "convergence", ("--workers", "1"),
        "res-1's strong rate in L is 1/2 (the README's main command)",
        (Hypothesis("null: res1", ("--model", "res1"), True, 20),
         Hypothesis("noise scale 1.3x in the limit", ("--model", f"{PLANTS}:NoiseScale130"), False, 10),
         Hypothesis("noise scale 1.05x in the limit", ("--model", f"{PLANTS}:NoiseScale105"), False, 10),
         Hypothesis("a drift -H/2 in a subclass of the limit", ("--model", f"{PLANTS}:DriftOverride"), False, 10)),
        seconds=5.5, in_readme=True),
    CommandCheck(
        "convergence-damped-ode", "convergence", ("--workers", "1"),
        "the damped res-1 ODE example's strong rate in L is 1 (docs/howto/own_model.md)",
        (Hypothesis("null: the damped example", ("--model", "docs/examples/damped_res1_ode.py:DampedRes1ODE"), True,
                    20),
         Hypothesis("the damping drift left out of the limit", ("--model", f"{PLANTS}:DriftMissing"), False, 10)),
        seconds=6.0),
    CommandCheck(
        "convergence-res2-ode", "convergence", ("--workers", "1"),
        "res-2's (smooth weights) strong rate in L is 1 against its neural ODE (a README command)",
        (Hypothesis("null: res2-ode", ("--model", "res2-ode"), True, 20),
         Hypothesis("the ODE's field 10% too large", ("--model", f"{PLANTS}:Res2FieldScale110"), False, 10)),
        seconds=8.0, in_readme=True),
    CommandCheck(
        "convergence-res2-rk4", "convergence", ("--workers", "1"),
        "blocks that are RK4 steps of the ODE converge at rate 4 (a README command)",
        (Hypothesis("null: res2-rk4", ("--model", "res2-rk4"), True, 20),
         Hypothesis("Kutta's order-3 blocks claimed at rate 4 (the competing rate)",
                    ("--model", f"{PLANTS}:Kutta3ClaimedAsRK4"), False, 10)),
        seconds=11.0, in_readme=True,
        notes="the rows marked 'before fit_from 128' ran when the window rule alone chose the fitted depths"),
    CommandCheck(
        "convergence-cohen-sde", "convergence", ("--workers", "1"),
        "Cohen et al.'s network converges at 1/2 to the Itô-corrected SDE (a README command)",
        (Hypothesis("null: cohen-sde", ("--model", "cohen-sde"), True, 20),
         Hypothesis("the SDE without the Itô correction, claimed at rate 1/2", ("--model", f"{PLANTS}:CohenItoMissing"),
                    False, 10)),
        seconds=15.0, in_readme=True,
        notes="the shipped cohen-sde-naive pair is not this alternative: it claims the error does not vanish, and "
              "PASSes on that claim (10 of 10 when first run here by mistake)"),
    CommandCheck(
        "convergence-cohen-sde-naive", "convergence", ("--workers", "1"),
        "Cohen et al.'s network does not converge to the SDE without the Itô correction: the error neither decays "
        "at 1/2 nor grows (a README command)",
        (Hypothesis("null: cohen-sde-naive", ("--model", "cohen-sde-naive"), True, 20),
         Hypothesis("the same claim for the Itô-corrected SDE, to which the error does vanish at 1/2",
                    ("--model", f"{PLANTS}:NaiveClaimOnTheCorrectedSDE"), False, 10)),
        seconds=17.0, in_readme=True),
    CommandCheck(
        "convergence-cohen-ode", "convergence", ("--workers", "1", "--beta", "0.3"),
        "Cohen et al.'s ODE regime at β = 0.3 converges at min(1, β) (a README command)",
        (Hypothesis("null: cohen-ode", ("--model", "cohen-ode"), True, 20),
         Hypothesis("the linear ODE's field 10% too large", ("--model", f"{PLANTS}:CohenODEFieldScale110"), False,
                    10)),
        seconds=25.0, in_readme=True),
    CommandCheck(
        "convergence-pf", "convergence", ("--workers", "1"),
        "Peluchetti & Favaro's block converges at 1/2 to its SDE (a README command)",
        (Hypothesis("null: pf", ("--model", "pf"), True, 20),
         Hypothesis("the SDE without its drift ½ φ''(0) … (Thm 3.1's Itô term)", ("--model", f"{PLANTS}:PFDriftMissing"),
                    False, 10)),
        seconds=15.0, in_readme=True),
    CommandCheck(
        "regimes-fig1", "regimes", ("--preset", "fig1"),
        "Marion et al. Fig. 1/3: the regimes' classes, critical β, Lemma 14 / Prop. 7 bounds, Props. 2/3/6",
        (Hypothesis("null: the preset", (), True, 20),),
        seconds=18.0, in_readme=True,
        notes="alternatives of its bounds check: the draw rows below (fig1-bounds)"),
    CommandCheck(
        "regimes-fig4", "regimes", ("--preset", "fig4"),
        "Marion et al. Fig. 4/5: smooth weights' regimes and critical β 1",
        (Hypothesis("null: the preset", (), True, 20),
         Hypothesis("i.i.d. weights (critical β 1/2) where smooth ones are claimed", (), False, 10, plant="fig4-iid")),
        seconds=28.0),
    CommandCheck(
        "figures-chizat-backward", "figures", ("--figure", "chizat-backward"),
        "Chizat's backward pass: E S_b^0 = (1 + cα²M)^L − 1 and E sup S_b of order (MLα²)^1",
        (Hypothesis("null: the figure", (), True, 20),
         Hypothesis("output weights of variance 1.15 σ_v² (c 15% off)", (), False, 10,
                    plant="backward-variance-115")),
        seconds=10.0),
    CommandCheck(
        "figures-pf-2d", "figures", ("--figure", "pf-2d"),
        "Peluchetti & Favaro App. B.4: 2-D function samples of x_{T,1}(z)",
        (Hypothesis("null: the figure", (), True, 20),), seconds=25.0,
        notes="declared: its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-pf-sizes", "figures", ("--figure", "pf-sizes"),
        "Peluchetti & Favaro SM B.3: function samples of x_{T,1}(z) over (L, D)",
        (Hypothesis("null: the figure", (), True, 20),), seconds=42.0,
        notes="declared: its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-pf-function-space", "figures", ("--figure", "pf-function-space"),
        "Peluchetti & Favaro Figs. 1 and 3: function samples of x_{T,1}(z)",
        (Hypothesis("null: the figure", (), True, 20),
         Hypothesis("EO_tanh drawn at 1.1x its edge-of-chaos sigma_w (the chaotic phase) where the edge is claimed", (),
                    False, 10, plant="eoc-tanh-chaotic-110")), seconds=17.0,
        notes="its checks read Kendall's correlation sin(pi tau/2) since 2026-12-07 (the rows marked 'before' read "
              "Pearson's, undecided on EO_ReLU's heavy tails)"),
    CommandCheck(
        "figures-pf-correlation", "figures", ("--figure", "pf-correlation"),
        "Peluchetti & Favaro Fig. 4: the output correlation against its limit",
        (Hypothesis("null: the figure", (), True, 20),
         Hypothesis("EO_tanh drawn at 1.1x its edge-of-chaos sigma_w (the chaotic phase) where the edge is claimed", (),
                    False, 10, plant="eoc-tanh-chaotic-110")), seconds=20.0,
        notes="its checks read Kendall's correlation sin(pi tau/2) since 2026-12-07 (the rows marked 'before' read "
              "Pearson's, undecided on EO_ReLU's heavy tails)"),
    CommandCheck(
        "figures-marion-fbm", "figures", ("--figure", "marion-fbm"),
        "Marion et al. Fig. 6: fractional Brownian motion's Hurst index recovered",
        (Hypothesis("null: the figure", (), True, 20),), seconds=3.0,
        notes="declared: its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-chizat-maximal", "figures", ("--figure", "chizat-maximal"),
        "Chizat Remark 2.2: Doob's maximal inequality for ‖h^ℓ − x‖²",
        (Hypothesis("null: the figure", (), True, 20),), seconds=7.0,
        notes="declared: its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-chizat-kernel", "figures", ("--figure", "chizat-kernel"),
        "Chizat §3.2–3.3: at initialisation the ResNet is, to first order, a shallow network",
        (Hypothesis("null: the figure", (), True, 20),), seconds=32.0,
        notes="declared: its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-chizat-phase", "figures", ("--figure", "chizat-phase"),
        "Chizat §3, Fig. 1: lazy ODE against local feature learning over (β, γ), each cell's regime read from the run",
        (Hypothesis("null: the figure", (), True, 20),), seconds=12.0,
        notes="declared: its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-pf-relu", "figures", ("--figure", "pf-relu"),
        "Peluchetti & Favaro's ReLU regimes: a diffusion at γ = 1/2, deterministic at γ = 1, the drift's order",
        (Hypothesis("null: the figure", (), True, 20),), seconds=14.0,
        notes="its planted alternatives are test-level (Entry.rejects), not yet commands"),
    CommandCheck(
        "figures-pf-qualitative", "figures", ("--figure", "pf-qualitative"),
        "Peluchetti & Favaro's qualitative figure: the distribution tests of its panels",
        (Hypothesis("null: the figure", (), True, 20),), seconds=15.0,
        notes="no planted alternative declared yet"),
    CommandCheck(
        "figures-chizat-feature-speed", "figures", ("--figure", "chizat-feature-speed"),
        "Chizat's feature speed: of order 1 in depth for the ResNet, vanishing for the MLP",
        (Hypothesis("null: the figure", (), True, 20),), seconds=22.0,
        notes="its planted alternative is test-level (Entry.rejects), not yet a command"),
    CommandCheck(
        "chaintron2026-budget", "training", ("--experiment", "chaintron2026-budget", "--checkpoint-dir", "none"),
        "Chaintron, Chizat & Maass 2026: the error at a parameter budget P falls as P^(-1/6) (within 1/6 ± 1/24)",
        (Hypothesis("null: the experiment", (), True, 10),
         Hypothesis("an input scale off by 1/sqrt(L): a term P^(-1/12)", (), False, 10, plant="budget-depth-half")),
        seconds=66.0, measured=_budget_exponent, before=("margin 0.1 (before)", _within(1 / 6, 0.1)),
        notes="the margin 1/24 is half the distance from 1/6 to the alternative 1/12"),
    CommandCheck(
        "chizat2025-alpha", "training", ("--experiment", "chizat2025-alpha", "--checkpoint-dir", "none",
                                         "--workers", "1"),
        "Chizat 2025: the width error 1/sqrt(LM) at alpha fixed, feature learning at a = 0, the lazy ODE as alpha grows",
        (Hypothesis("null: the experiment", (), True, 20),
         Hypothesis("a residual scale alpha/L without the width M", (), False, 10, plant="alpha-without-width")),
        seconds=17.0),
    CommandCheck(
        "trained-ode-convergence", "training", ("--experiment", "trained-ode-convergence", "--checkpoint-dir",
                                                "none", "--workers", "1"),
        "Marion et al. 2024 / Sander et al. 2022: trained depths converge for smooth weights and stay apart for "
        "i.i.d. ones at beta = 1/2",
        (Hypothesis("null: the experiment", (), True, 20),
         Hypothesis("the depth-2N network's odd layers copying its even ones (no independent half of the noise)", (),
                    False, 10, plant="ode-layers-in-pairs")),
        seconds=71.0),
    CommandCheck(
        "regimes-prop3", "regimes", ("--preset", "prop3"),
        "Marion et al. Prop. 3: the bounds (i) and (ii) on r_h^2 at L >= 1024",
        (Hypothesis("null: the preset", (), True, 20),
         Hypothesis("i.i.d. weights of variance 0.4/d (E m2 = 0.08, below (A2)'s 1/2)", (), False, 10,
                    plant="prop3-variance-0.4")),
        seconds=35.0),
    CommandCheck(
        "marion2024-fig1", "training", ("--experiment", "marion2024-fig1", "--checkpoint-dir", "none",
                                        "--workers", "1"),
        "Marion et al. 2024 Fig. 1: trained weights converge at rate 1 in L to a function of t = k/L",
        (Hypothesis("null: the experiment", (), True, 5),
         Hypothesis("each depth started from its own initial weights (no common function of t)", (), False, 3,
                    plant="independent-starts")),
        seconds=70.0),
    CommandCheck(
        "chaintron2026-nonlinear", "training", ("--experiment", "chaintron2026-nonlinear", "--checkpoint-dir", "none",
                                                "--workers", "1"),
        "Chaintron, Chizat & Maass 2026 with tanh blocks: each error term at its exponent (width, depth, embedding, "
        "D in the width term)",
        (Hypothesis("null: the experiment", (), True, 5),
         Hypothesis("a residual scale alpha/L without the width M", (), False, 3, plant="alpha-without-width")),
        seconds=200.0),
    CommandCheck(
        "figures-pf-abc", "figures", ("--figure", "pf-abc"),
        "Peluchetti & Favaro App. B.1: SR_tanh's ABC posterior lies nearer the data than EO_tanh's (log ratio < 0)",
        (Hypothesis("null: the figure (a bump no constant fits)", (), True, 5),
         Hypothesis("data a constant fits (0.5 at every point): EO's posterior is the nearer",
                    ("--data", "-1.5:0.5,0:0.5,1.5:0.5"), False, 3)),
        seconds=70.0, measured=lambda result: {"ci": result["result"]["log_distance_ratio"]["ci95"],
                                               "value": result["result"]["log_distance_ratio"]["value"]},
        notes="the same statistic over budgets and data sets: benchmarks/results/pf_abc_budgets.json"),
    CommandCheck(
        "cohen-scaling", "training", ("--experiment", "cohen-scaling", "--checkpoint-dir", "none"),
        "Cohen et al. §3.1: trained tanh weights follow Hypothesis 1, ReLU weights Hypothesis 2 (and the checks "
        "beside: App. B's biases, the Remark 2.1 control)",
        (Hypothesis("null: the experiment", (), True, 5),),
        seconds=70.0, notes="alternatives of its decision rule: the draw rows below (cohen-decision)"),
    CommandCheck(
        "gradients-res1", "gradients", ("--workers", "1"),
        "the backward pass of res-1 converges to the limit's adjoint at rate 1/2 (the planted wrong pair must FAIL)",
        (Hypothesis("null: res1", ("--model", "res1"), True, 20),
         Hypothesis("noise scale 1.3x in the limit", ("--model", f"{PLANTS}:NoiseScale130"), False, 10)),
        seconds=50.0, in_readme=True,
        notes="the rows marked 'before 2000 samples' ran at the old least default of 1000 samples"),
    CommandCheck(
        "ablation", "ablation", ("--workers", "1"),
        "the Itô-corrected limit converges at 1/2 and the naive one does not, on one plot (a README command)",
        (Hypothesis("null: the study", (), True, 20),), seconds=35.0, in_readme=True,
        notes="its two halves' alternatives are the convergence rows of cohen-sde and cohen-sde-naive"),
    CommandCheck(
        "solvers-gbm", "solvers", ("--workers", "1", "--problem", "gbm"),
        "every applicable scheme's strong order against geometric Brownian motion's exact solution (a README command)",
        (Hypothesis("null: gbm", (), True, 20),
         Hypothesis("the Itô GBM's solution stated without its Itô term −β²t/2", (), False, 10,
                    plant="gbm-without-ito-term")),
        seconds=30.0, in_readme=True,
        notes="the rows marked 'before 16000 paths' ran at the old default of 8000 paths"),
    CommandCheck(
        "regimes-prop13", "regimes", ("--preset", "prop13"),
        "Marion et al. Prop. 13: linear res-1 with smooth weights, the bound on max_k ‖h_k − h_0‖/‖h_0‖ under 𝒱(0)",
        (Hypothesis("null: the preset", (), True, 20),), seconds=30.0,
        notes="declared: its planted alternatives are test-level, not yet commands"),
    CommandCheck(
        "regimes-assumptions", "regimes", ("--preset", "assumptions"),
        "Marion et al. (A₂), (A₄): Props. 1 and 5, Lemma 16, the eighth moment",
        (Hypothesis("null: the preset", (), True, 20),), seconds=20.0,
        notes="declared: its planted alternatives are test-level, not yet commands"),
    CommandCheck(
        "regimes-chizat", "regimes", ("--preset", "chizat"),
        "Chizat & Netrapalli Prop. 2.1: a ResNet with ReLU two-layer blocks at initialisation (a README command)",
        (Hypothesis("null: the preset", (), True, 20),
         Hypothesis("output weights of variance 1.15 σ_v² (c 15% off)", (), False, 10, plant="chizat-variance-115")),
        seconds=30.0, in_readme=True),
    CommandCheck(
        "weak", "weak", ("--workers", "1"),
        "Peluchetti & Favaro's SC_tanh and SC_swish ResNets agree in law with their SDE limits (two-sample tests at "
        "D = L = 500), and the weak rate in L (a README command)",
        (Hypothesis("null: the study", (), True, 5),
         Hypothesis("the limit SDE sampled without its Itô drift ½ φ''(0) q dt (SC_swish's; SC_tanh has none)", (),
                    False, 3, plant="weak-sde-without-ito-drift")),
        seconds=260.0, in_readme=True,
        notes="before 1000 permutations, the energy test (500) could never reject at alpha/6: its least p-value "
              "was 1/501"),
    CommandCheck(
        "phase", "phase", ("--workers", "1"),
        "Marion et al. Fig. 7: res-3 with fractional weights, the (Hurst index, β) phase diagram (a README command)",
        (Hypothesis("null: the study", (), True, 5),
         Hypothesis("fractional weights drawn at Hurst index H + 0.2 where H is claimed", (), False, 3,
                    plant="hurst-plus-0.2")),
        seconds=210.0, in_readme=True),
    CommandCheck(
        "marion-fig8", "training", ("--experiment", "marion-fig8", "--checkpoint-dir", "none"),
        "Marion et al. Fig. 8: trained weights keep their initialisation's regularity along depth (a README command)",
        (Hypothesis("null: the experiment", (), True, 5),
         Hypothesis("an optimiser step that does nothing (the weights stay at their initialisation)", (), False, 3,
                    plant="optimiser-does-nothing")),
        seconds=120.0, in_readme=True),
    CommandCheck(
        "solvers-res1", "solvers", ("--workers", "1"),
        "every scheme's strong order on res-1's limit, and the network's row: the network converges to the limit at 1/2",
        (Hypothesis("null: res1", ("--model", "res1"), True, 20),
         Hypothesis("noise scale 1.3x in the limit", ("--model", f"{PLANTS}:NoiseScale130"), False, 10)),
        seconds=20.0),
    CommandCheck(
        "multilevel-res1", "multilevel", ("--workers", "1"),
        "multilevel Monte Carlo over depth: each solver's coupling (β, consistency) and the pair check (the "
        "network's MLMC estimate of E φ(H_1) against the limit's, within ± 6 ε)",
        (Hypothesis("null: res1", (), True, 20),
         Hypothesis("noise scale 1.3x in the limit", ("--model", f"{PLANTS}:NoiseScale130"), False, 10),
         Hypothesis("noise scale 1.05x in the limit", ("--model", f"{PLANTS}:NoiseScale105"), False, 5,
                    must_fail=False)),
        seconds=40.0, notes="the rows marked 'before the pair check' ran when β and consistency alone decided"),
    CommandCheck(
        "marion-fig9", "training", ("--experiment", "marion-fig9", "--checkpoint-dir", "none"),
        "Marion et al. Fig. 9: every cell on or above β = max(H, 1/2) trains, some cell 0.2 below it does not "
        "(the shift itself is reported at one depth)",
        (Hypothesis("null: the experiment", (), True, 5),),
        seconds=140.0, notes="its planted alternatives are records-level tests (Entry.rejects)"),
    CommandCheck(
        "pf-sgd", "training", ("--experiment", "pf-sgd", "--checkpoint-dir", "none"),
        "Peluchetti & Favaro Fig. 5: with one common learning rate each, standard gradients end with a higher "
        "worst-cell training loss than reparametrised ones (the accuracy claim is reported)",
        (Hypothesis("null: the experiment", (), True, 5),),
        seconds=200.0, notes="its planted alternative is a records-level test (Entry.rejects)"),
)


# ------------------------------------------------------------------------------------------------ statistics
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval of a rate k/n."""
    from scipy import stats

    if n == 0:
        return 0.0, 1.0
    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.isf(alpha / 2, k + 1, n - k))
    return low, high


def summarise(runs: dict[str, dict[str, Any]], null: bool) -> dict[str, Any]:
    """Counts of PASS / INCONCLUSIVE / FAIL / error over the seeds run, and the wrong-verdict rate with its interval
    (FAIL under the null, PASS under an alternative) and the INCONCLUSIVE rate with its interval."""
    verdicts = [run["verdict"] for run in runs.values()]
    counts = {v: verdicts.count(v) for v in ("PASS", "INCONCLUSIVE", "FAIL", "error")}
    decided = len(verdicts) - counts["error"]
    wrong = counts["FAIL"] if null else counts["PASS"]
    return {"seeds": decided, **{k.lower(): n for k, n in counts.items()}, "wrong": wrong,
            "wrong_rate_ci95": clopper_pearson(wrong, decided),
            "inconclusive_rate_ci95": clopper_pearson(counts["INCONCLUSIVE"], decided)}


def rule_breaks(summary: dict[str, Any], null: bool, in_readme: bool) -> list[str]:
    """The rules (module docstring) this row breaks, in words."""
    broken = []
    if summary["seeds"] and summary["wrong_rate_ci95"][0] > MAX_WRONG_RATE:
        broken.append(f"{'false-FAIL' if null else 'false-PASS'} rate above {MAX_WRONG_RATE:.0%}")
    if null and in_readme and summary["seeds"] and summary["inconclusive_rate_ci95"][0] > MAX_NULL_INCONCLUSIVE:
        broken.append(f"INCONCLUSIVE under the null above {MAX_NULL_INCONCLUSIVE:.0%}")
    return broken


# ------------------------------------------------------------------------------------------------ storage
def load() -> dict[str, Any]:
    if RESULTS.exists():
        return json.loads(RESULTS.read_text())
    return {"about": __doc__.split("\n\n")[0], "commands": {}, "draws": {}}


_LOCK = threading.Lock()


def save(data: dict[str, Any]) -> None:
    """Written whole: a temporary file renamed into place."""
    with _LOCK:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        partial = RESULTS.with_name(RESULTS.name + ".part")
        partial.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.replace(partial, RESULTS)


def _machine() -> dict[str, Any]:
    import platform

    import torch

    return {"python": platform.python_version(), "torch": torch.__version__, "platform": platform.platform(),
            "processor": _processor(), "cores": os.cpu_count()}


def _processor() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor()


# ------------------------------------------------------------------------------------------------ running
def run_one(check: CommandCheck, hypothesis: Hypothesis, seed: int) -> dict[str, Any]:
    """One command run: its verdict from the exit status, and its time."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "r.json"
        command = [sys.executable, *check.command(hypothesis, seed), "--quiet", "--json", str(output)]
        env = {**os.environ, "TQDM_DISABLE": "1"}
        clock = time.perf_counter()
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - clock
        # a verdict is an exit status *and* the result file the run wrote: a process that died before it ran (an
        # import error exits 1, too) is an error, never a FAIL
        verdict = VERDICTS.get(proc.returncode, "error") if output.exists() else "error"
        run = {"verdict": verdict, "exit": proc.returncode, "seconds": round(seconds, 1)}
        if check.measured is not None and verdict != "error":
            run["measured"] = check.measured(json.loads(output.read_text()))
    if verdict == "error":
        run["stderr"] = proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else []
    return run


def run_commands(checks: list[CommandCheck], workers: int, data: dict[str, Any]) -> None:
    todo = []
    for check in checks:
        entry = data["commands"].setdefault(check.key, {})
        entry.update({"study": check.study, "args": list(check.args), "claim": check.claim,
                      "in_readme": check.in_readme, "notes": check.notes})
        for hypothesis in check.hypotheses:
            row = entry.setdefault("hypotheses", {}).setdefault(hypothesis.name, {})
            row.update({"args": list(hypothesis.args), "null": hypothesis.null, "plant": hypothesis.plant,
                        "runs": row.get("runs", {})})
            todo += [(check, hypothesis, seed) for seed in range(hypothesis.seeds) if str(seed) not in row["runs"]]
    data["machine"] = _machine()
    print(f"{len(todo)} runs to do on {workers} worker(s)", flush=True)
    done = [0]

    def task(item: tuple[CommandCheck, Hypothesis, int]) -> None:
        check, hypothesis, seed = item
        run = run_one(check, hypothesis, seed)
        with _LOCK:
            data["commands"][check.key]["hypotheses"][hypothesis.name]["runs"][str(seed)] = run
            done[0] += 1
            print(f"[{done[0]}/{len(todo)}] {check.key} | {hypothesis.name} | seed {seed}: {run['verdict']} "
                  f"({run['seconds']} s)", flush=True)
        save(data)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(task, todo))


# ------------------------------------------------------------------------------------------------ draw rows
#: fig1's bounds check under the null and under claims stated with a misstated weight variance (module docstring)
FIG1_HYPOTHESES = {"null: Lemma 14 / Prop. 7 as stated": (1.0, 1.0),
                   "lower bound stated with 1.15x the weight variance": (1.15, 1.0),
                   "upper bound stated with 0.45x the weight variance": (1.0, 0.45)}
FIG1_SEEDS = 20


def lemma14_with_variance(beta: float, depth: int, variance: float) -> tuple[float, float]:
    """Lemma 14's bounds ((1 + a²/2)^L − 1, (1 + a²)^L − 1) with a² = variance · L^(−2β): at variance 1 the paper's
    (:func:`limits.regime_theory.lemma14_bounds`), otherwise the bounds of a claim that misstates the weights'
    variance."""
    a2 = variance * float(depth) ** (-2 * beta)
    return math.expm1(depth * math.log1p(a2 / 2)), math.expm1(depth * math.log1p(a2))


def fig1_bounds(data: dict[str, Any], seeds: int = FIG1_SEEDS) -> None:
    """The Lemma 14 / Prop. 7 bounds check of ``regimes --preset fig1`` on the preset's own draws (one run per seed),
    under each of :data:`FIG1_HYPOTHESES`, for the rule before (the mean's z band alone) and now (the mean's band or
    Cox's log-normal band, :func:`validation.core.hypothesis.bounds_check`). A seed's check FAILs when a counted
    cell (reliable, outside its bands) exists."""
    entry = data["draws"].setdefault("fig1-bounds", {"claim": "Lemma 14 / Prop. 7: (1 + α²/2)^L − 1 ≤ E r² ≤ "
                                                                "(1 + α²)^L − 1 in every cell of Fig. 1 (42 cells)",
                                                       "command": "python -m validation.regimes --preset fig1",
                                                       "seeds": {}})
    for seed in range(seeds):
        if str(seed) in entry["seeds"]:
            continue
        per = fig1_seed(seed)
        entry["seeds"][str(seed)] = per
        print(f"fig1-bounds seed {seed}: " + "; ".join(f"{k}: {v['failing_cells_before']} / {v['failing_cells_now']}"
                                                       for k, v in per.items()), flush=True)
        save(data)


def fig1_seed(seed: int) -> dict[str, dict[str, int]]:
    """One seed of :func:`fig1_bounds`: per hypothesis, the counted failing cells under the rule before and now."""
    import numpy as np

    from validation import regimes
    from validation.core.hypothesis import bounds_check, family_z

    result = regimes.run("fig1", seed=seed)
    s = result.settings
    z = family_z(2 * len(s.betas) * len(s.depths))
    per: dict[str, dict[str, int]] = {}
    for name, (lower_variance, upper_variance) in FIG1_HYPOTHESES.items():
        before = now = 0
        for j, beta in enumerate(s.betas):
            for i, depth in enumerate(s.depths):
                lower = lemma14_with_variance(beta, depth, lower_variance)[0]
                upper = lemma14_with_variance(beta, depth, upper_variance)[1]
                for key in ("r_h", "r_p"):
                    cell = bounds_check(np.asarray(result.data[key][i, j]), lower, upper, z)
                    before += (not cell["mean_band_passed"]) and cell["reliable"]
                    now += (not cell["passed"]) and cell["reliable"]
        per[name] = {"failing_cells_before": before, "failing_cells_now": now}
    return per


def fig1_summary(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for name in FIG1_HYPOTHESES:
        null = name.startswith("null")
        for rule in ("before", "now"):
            runs = {seed: {"verdict": "FAIL" if per[name][f"failing_cells_{rule}"] else "PASS"}
                    for seed, per in entry["seeds"].items()}
            out[f"{name} | rule {rule}"] = {**summarise(runs, null), "null": null}
    return out


#: Cohen et al.'s Hypothesis 1 / 2 rule on weights whose hypothesis is known (:func:`cohen_decision`): the name, the
#: exponent −ν' of the planted β-scaled increments, and the hypothesis they follow (the scaled increments vanish:
#: Hypothesis 1; they stay of order one or grow: Hypothesis 2)
COHEN_FAMILIES = {"Hypothesis 1, -nu = -0.5 (the paper's tanh)": (-0.5, "Hypothesis 1"),
                  "Hypothesis 1, -nu = -0.25 (a slowly vanishing noise)": (-0.25, "Hypothesis 1"),
                  "Hypothesis 2, -nu = 0 (increments of order one)": (0.0, "Hypothesis 2"),
                  "Hypothesis 2, -nu = +0.2 (the paper's ReLU)": (0.2, "Hypothesis 2")}
COHEN_SEEDS = 20


def cohen_decision(data: dict[str, Any], seeds: int = COHEN_SEEDS) -> None:
    """``cohen-scaling``'s Hypothesis 1 / 2 rule (validation.training.cohen: −ν's interval below −0.1: Hypothesis
    1, above: Hypothesis 2, else undecided) run by the experiment's own procedure, at its depths, replicates,
    confidence and resamples, on planted weights whose hypothesis is known (:data:`COHEN_FAMILIES`, width 10 as the
    synthetic set's, β = 0.3). A decision for the planted hypothesis is a PASS, for the other a FAIL, undecided
    INCONCLUSIVE."""
    from validation.training import cohen

    entry = data["draws"].setdefault("cohen-decision", {
        "claim": "Cohen et al. §2.3 Step 3 as the package's rule: Hypothesis 1 when the interval of −ν lies below "
                 f"−{cohen.DECISION_THRESHOLD:g}, Hypothesis 2 when above",
        "command": "python -m validation.training --experiment cohen-scaling (its decision, on planted weights)",
        "seeds": {}})
    for seed in range(seeds):
        if str(seed) in entry["seeds"]:
            continue
        per = cohen_seed(seed)
        entry["seeds"][str(seed)] = per
        print(f"cohen-decision seed {seed}: " + "; ".join(f"{v['truth'][-1]}@{v['minus_nu']:.2f}: {v['decision']}"
                                                          for v in per.values()), flush=True)
        save(data)


def cohen_seed(seed: int) -> dict[str, dict[str, Any]]:
    """One seed of :func:`cohen_decision`: per family, the rule's decision, the truth, −ν and its interval."""
    sys.path.insert(0, str(ROOT / "tests"))
    from planted_entries import cohen_weights

    from limits.seeding import generator
    from validation.training import cohen
    from validation.training.experiment import power_fit

    settings = cohen.CohenScaling.defaults
    depths, replicates, width, beta = settings["depths"], settings["replicates"], 10, 0.3
    per = {}
    for name, (exponent, truth) in COHEN_FAMILIES.items():
        statistics = [[cohen.weight_statistics(cohen_weights(depth, width, beta, exponent,
                                                       generator(seed, "calibrate-cohen", name, depth, r)))
                       for r in range(replicates)] for depth in depths]
        fit = lambda values, offset, seed=seed: power_fit(depths, values, confidence=0.95,  # noqa: E731
                                                          resamples=2000, seed=seed + offset)
        out = cohen.decision_procedure(statistics, fit)
        per[name] = {"decision": out["decision"], "truth": truth, "minus_nu": out["scaled_increments"]["value"],
                     "ci": out["scaled_increments"]["ci"]}
    return per


def cohen_summary(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, (_, truth) in COHEN_FAMILIES.items():
        runs = {}
        for seed, per in entry["seeds"].items():
            decision = per[name]["decision"]
            runs[seed] = {"verdict": "INCONCLUSIVE" if decision == "undecided" else
                          "PASS" if decision == truth else "FAIL"}
        # under each family the rule must name the planted hypothesis: a wrong decision is a false FAIL of the right
        # claim and, read the other way, a false PASS of the wrong one; the page counts it once, as a wrong verdict
        out[name] = {**summarise(runs, True), "null": True}
    return out


# ------------------------------------------------------------------------------------------------ smoke
#: the smoke calibration CI runs (tests/test_calibration_smoke.py, marked slow): every planted alternative of the rows
#: whose run takes under SMOKE_SECONDS, and of the draw rows, on seeds 0 … SMOKE_SEEDS − 1; each run must FAIL
SMOKE_SEEDS, SMOKE_SECONDS = 3, 60.0
SMOKE_DRAWS = ("fig1-bounds", "cohen-decision")


def smoke_commands() -> list[tuple[CommandCheck, Hypothesis]]:
    """The command rows' alternatives the smoke calibration runs: those that must FAIL, of rows under
    :data:`SMOKE_SECONDS` a run."""
    return [(check, hypothesis) for check in COMMANDS if check.seconds < SMOKE_SECONDS
            for hypothesis in check.hypotheses if not hypothesis.null and hypothesis.must_fail]


def smoke_draw_verdicts(key: str, seed: int) -> dict[str, str]:
    """The verdicts of a draw row's planted alternatives on one seed: for ``fig1-bounds``, the misstated bounds under
    the rule now; for ``cohen-decision``, the claim of the other hypothesis on each planted family (it FAILs when the
    rule names the planted hypothesis, is INCONCLUSIVE when the rule is undecided)."""
    if key == "fig1-bounds":
        return {name: "FAIL" if per["failing_cells_now"] else "PASS" for name, per in fig1_seed(seed).items()
                if not name.startswith("null")}
    if key == "cohen-decision":
        return {f"{name}: the other hypothesis claimed": ("FAIL" if per["decision"] == per["truth"] else
                                                          "INCONCLUSIVE" if per["decision"] == "undecided" else "PASS")
                for name, per in cohen_seed(seed).items()}
    raise ValueError(f"{key!r}: not a draw row (allowed: {', '.join(SMOKE_DRAWS)})")


def smoke() -> int:
    """Run the smoke calibration here and print each run's verdict: 0 when every planted alternative FAILs, else 1."""
    wrong = 0
    for check, hypothesis in smoke_commands():
        for seed in range(SMOKE_SEEDS):
            run = run_one(check, hypothesis, seed)
            wrong += run["verdict"] != "FAIL"
            print(f"{check.key} | {hypothesis.name} | seed {seed}: {run['verdict']} ({run['seconds']} s)", flush=True)
    for key in SMOKE_DRAWS:
        for seed in range(SMOKE_SEEDS):
            for name, verdict in smoke_draw_verdicts(key, seed).items():
                wrong += verdict != "FAIL"
                print(f"{key} | {name} | seed {seed}: {verdict}", flush=True)
    print("every planted alternative FAILed" if not wrong else f"{wrong} run(s) did not FAIL a planted alternative")
    return int(bool(wrong))


# ------------------------------------------------------------------------------------------------ report
def table(data: dict[str, Any]) -> list[str]:
    def rate(summary: dict[str, Any], key: str, count: int) -> str:
        low, high = summary[key]
        return f"{count}/{summary['seeds']} [{low:.2f}, {high:.2f}]"

    lines = ["| check | hypothesis | K | PASS | INCONCLUSIVE | FAIL | wrong verdict (95% CI) | rules |",
             "|---|---|---|---|---|---|---|---|"]
    checks = {check.key: check for check in COMMANDS}
    for key, entry in data["commands"].items():
        before = checks[key].before if key in checks else None
        for name, row in entry.get("hypotheses", {}).items():
            if not row["runs"]:
                continue                                       # declared, not run yet: no row to state
            rules = [("", row["runs"])]
            if before is not None and all("measured" in run for run in row["runs"].values()):
                rules.append((f" — rule {before[0]}", {seed: {"verdict": before[1](run["measured"])}
                                                       for seed, run in row["runs"].items()}))
            for label, runs in rules:
                summary = summarise(runs, row["null"])
                broken = rule_breaks(summary, row["null"], entry.get("in_readme", False))
                kind = "false FAIL" if row["null"] else "false PASS"
                lines.append(f"| `{key}` | {name}{label} | {summary['seeds']} | {summary['pass']} | "
                             f"{summary['inconclusive']} | {summary['fail']} | "
                             f"{kind} {rate(summary, 'wrong_rate_ci95', summary['wrong'])} | "
                             f"{'; '.join(broken) or 'kept'} |")
    summaries = {"fig1-bounds": fig1_summary, "cohen-decision": cohen_summary}
    for key, entry in data.get("draws", {}).items():
        for name, summary in summaries[key](entry).items():
            broken = rule_breaks(summary, summary["null"], True)
            kind = "false FAIL" if summary["null"] else "false PASS"
            lines.append(f"| `{key}` | {name} | {summary['seeds']} | {summary['pass']} | — | {summary['fail']} | "
                         f"{kind} {rate(summary, 'wrong_rate_ci95', summary['wrong'])} | "
                         f"{'; '.join(broken) or 'kept'} |")
    return lines


def alternatives_table() -> list[str]:
    """Every catalogue entry's declared planted alternatives (``Entry.rejects``) and the tests that plant them; an
    entry that declares none yet is listed too (tests/test_alternatives.py names why)."""
    from validation.figures.study import FIGURES
    from validation.regimes.catalogue import PRESETS
    from validation.training.catalogue import EXPERIMENTS

    lines = ["| entry | the wrong claim its verdict must reject | planted in |", "|---|---|---|"]
    for command, catalogue in (("figures --figure", FIGURES), ("training --experiment", EXPERIMENTS),
                               ("regimes --preset", PRESETS)):
        for name, entry in catalogue.items():
            rejects = getattr(entry, "rejects", {}) or {}
            if not rejects:
                lines.append(f"| `{command} {name}` | *none declared yet* | — |")
            for claim, test in rejects.items():
                lines.append(f"| `{command} {name}` | {claim} | `{test.split('::')[-1]}` ({test.split('::')[0]}) |")
    return lines


def _write_block(lines: list[str], start: str, end: str) -> bool:
    text = PAGE.read_text() if PAGE.exists() else ""
    if start not in text or end not in text:
        return False
    head, rest = text.split(start, 1)
    PAGE.write_text(head + start + "\n" + "\n".join(lines) + "\n" + end + rest.split(end, 1)[1])
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the rows, their K and the time they take, and exit")
    parser.add_argument("--only", nargs="*", default=None, help="the rows whose key starts with one of these")
    parser.add_argument("--workers", type=int, default=1, help="command runs side by side (each one process)")
    parser.add_argument("--page", action="store_true", help="print the table and write it into the results page")
    parser.add_argument("--smoke", action="store_true",
                        help=f"the smoke calibration CI runs: every planted alternative of the rows under "
                             f"{SMOKE_SECONDS:g} s a run and of the draw rows, on {SMOKE_SEEDS} seeds, must FAIL "
                             "(exit 1 if one does not); nothing is written")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers {args.workers}: at least 1")
    checks = [c for c in COMMANDS if args.only is None or any(c.key.startswith(p) for p in args.only)]
    draws = args.only is None or any("fig1-bounds".startswith(p) for p in args.only)
    cohen_rows = args.only is None or any("cohen-decision".startswith(p) for p in args.only)
    if args.list:
        total = 0.0
        for check in checks:
            runs = sum(h.seeds for h in check.hypotheses)
            total += runs * check.seconds
            print(f"{check.key:28s} {runs:4d} runs × {check.seconds:5.1f} s: "
                  + ", ".join(f"{h.name} (K = {h.seeds})" for h in check.hypotheses))
        if draws:
            total += FIG1_SEEDS * 18.0
            print(f"{'fig1-bounds':28s} {FIG1_SEEDS:4d} runs × {18.0:5.1f} s: " + ", ".join(FIG1_HYPOTHESES))
        if cohen_rows:
            total += COHEN_SEEDS * 1.5
            print(f"{'cohen-decision':28s} {COHEN_SEEDS:4d} runs × {1.5:5.1f} s: " + ", ".join(COHEN_FAMILIES))
        print(f"about {total / 60 / args.workers:.0f} min on {args.workers} worker(s) (2-core machine)")
        return 0
    if args.smoke:
        return smoke()
    data = load()
    if args.page:
        lines = table(data)
        print("\n".join(lines))
        written = _write_block(lines, "<!-- calibration table -->", "<!-- end of the calibration table -->")
        written &= _write_block(alternatives_table(), "<!-- alternatives table -->",
                                "<!-- end of the alternatives table -->")
        print(f"wrote {PAGE}" if written else f"{PAGE}: its table markers are missing; not written")
        return 0
    run_commands(checks, args.workers, data)
    if draws:
        fig1_bounds(data)
    if cohen_rows:
        cohen_decision(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
