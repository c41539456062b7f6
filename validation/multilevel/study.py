"""``python -m validation.multilevel``: weak errors across depths — Talay–Tubaro extrapolation and multilevel Monte
Carlo on the coupled depths L and 2L of one path (docs/theory.md §8).

For an SDE pair (default res1 at width 2) and a test function φ (default φ(x) = mean_j cos x_j; or ‖x‖²), level ℓ has depth
L_ℓ = L_0 2^ℓ (``--depths``: L_0 … L_max, consecutive doublings). A level sample solves depth L_ℓ and depth L_ℓ/2
on the same Brownian path — the coarse solve reads the fine steps merged, as every depth of the package does — and
returns Y_ℓ = φ(h_{L_ℓ}) − φ(h_{L_ℓ/2}), the MLMC coupling of Giles (2008). Two solvers (``--schemes``):

* ``network``: the pair's ResNet of depth L (for res1: Euler–Maruyama of the limit, strong order ½ on its
  non-commutative noise, so the variance rate β = 1);
* ``milstein_levy_area``: Milstein with the path's Lévy areas (Davie–Foster at the fine step, merged by Chen's
  relation for the coarse one): strong order 1, β = 2. Its merged coarse areas have the law of areas drawn at the
  coarse step only in their first two conditional moments, so its telescoping sum carries a small bias (each level's
  telescoping gap is reported with its interval; docs/theory.md §8);
* ``antithetic_milstein`` (on request): Giles & Szpruch's antithetic estimator — truncated Milstein (no Lévy areas),
  the fine solve averaged with the solve on its twin path whose two increments in each coarse step are swapped:
  β = 2 with no area drawn, and a telescoping sum that is exact (the coarse solve reads Brownian increments only).

It reports, per solver:

1. **The complexity test** (``--samples`` level samples per level): E and Var of P_ℓ and of Y_ℓ, the cost and wall
   time per sample, the kurtosis of Y_ℓ, Giles's consistency statistic, and the rates with bootstrap intervals:
   α (|E Y_ℓ| ∝ 2^{−αℓ}, the weak order: theory 1), β (Var Y_ℓ ∝ 2^{−βℓ}: twice the strong order), γ (cost ∝ 2^{γℓ}:
   1, from the evaluation counts; the wall-time γ is reported beside it).
2. **Talay–Tubaro extrapolation**: 2E[φ(h_2L)] − E[φ(h_L)] cancels the 1/L term of the weak error; its successive
   differences E[Y_ℓ] − 2E[Y_{ℓ+1}] decay at rate 2 (theory), against α for the plain estimate.
3. **The MLMC estimator** of E[φ(H_1)] at each accuracy ε of ``--accuracies`` (Giles's adaptive algorithm: root-
   mean-square error ε, θ = ¼ of the MSE for the bias), its cost against plain Monte Carlo at the same ε, and the
   figure of ε² × cost against ε with the theory lines (Euler: ε^-2 (log ε)²; Milstein with areas: ε^-2; plain MC:
   ε^-3).

Verdict: PASS when each solver's β has its interval within ±``--tolerance`` of 2 × its strong order, every level
is consistent (Giles's statistic ≤ 1: the coarse solve of level ℓ has the law of the fine solve of level ℓ − 1 to 3
standard errors) and the pair check below PASSes; FAIL when an interval lies wholly outside or a level is
inconsistent; INCONCLUSIVE when an interval straddles an edge. The weak-error rates (α = 1, the extrapolated rate 2) get the same three-valued checks, printed and
stored; they decide the verdict only with ``--strict-weak``: res-1's weak error is about 10⁻³ at L = 2 and its
extrapolated residual below Monte Carlo noise at 10⁵ samples per level, so a mean not resolved at 3 levels is
INCONCLUSIVE, never a wrong rate. The cost ratio is reported, not judged: it depends on the problem's constants.
β and consistency hold for whatever SDE a solver solves, so they alone would PASS a pair whose limit is wrong (res-1
against a noise 1.3× too large did, on 4 seeds of 5). The **pair check** judges the pair: the network's MLMC
estimate of E[φ(H_1)] (its depth L → ∞) against each limit solver's, at the finest accuracy ε. Their difference has
the interval d ± (z √(V_net + V_lim) + |b_net| + |b_lim|), V the estimators' variances and b their bias estimates;
PASS iff it lies within ±``--agreement`` ε, FAIL iff wholly outside, INCONCLUSIVE otherwise (or when an estimator
did not reach its bias at ``--max-levels``). Under a right pair the half-width is about 3.4 ε and |d| has a
root-mean-square of at most √2 ε, so the default 6 ε PASSes it on nearly every seed, and a limit whose E φ(H_1) is
about 10 ε or more off FAILs (res-1 with a 1.3× noise: 0.037 at ε = 10⁻³; 1.05×: 0.007, INCONCLUSIVE).

Python: ``validation.multilevel.run("res1")`` returns a :class:`MultilevelResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from limits.pairs import Pair, SDEPair
from limits.schemes import EulerMaruyama, get_sde_scheme
from validation.core import cli, runtime
from validation.core.checks import FAIL, INCONCLUSIVE, PASS, Check, combine, interval_check
from validation.multilevel.mlmc import (
    THETA, BatchDrawer, BatchSums, LevelBatch, LevelRate, LevelSamples, MLMCEstimate, SumsDrawer, complexity_samples,
    consistency,
    level_rate, mlmc_estimate, serial, serial_sums, telescoping_gaps,
)
from validation.core.pair_study import FIT_MODELS, PairSettings, add_model_arguments, build_pair, list_models, model_spec, pair_class
from validation.core.plots import new_grid
from validation.core.results import RunInfo, StudyResult, utc_now
from validation.core.workers import TaskRunner, check_workers, run_memory_mb, task_runner
from validation.multilevel.samplers import (
    ANTITHETIC, LEVEL_SCHEMES, SOLVERS, batch_size, level_sampler, path_transient, per_sample_numbers,
)
from validation.core.settings import (MIN_CONFIDENCE,
    SettingsError, check_choice, check_float, check_int, make_settings, parse_float_list, parse_name_list,
    parse_power_of_two_list, setting,
)
from validation.core.observables import TEST_FUNCTIONS

__all__ = ["MultilevelSettings", "MultilevelResult", "SchemeLevels", "run", "main", "TEST_FUNCTIONS", "LEVEL_SCHEMES", "SOLVERS",
           "level_sampler"]


#: the rates that measure a weak error (their checks decide the verdict only with --strict-weak)
WEAK_RATES = ("alpha", "extrapolated")
#: the weak order of the pair's network, α's theory: the network is the Euler–Maruyama scheme of its limit
NETWORK_WEAK_ORDER = EulerMaruyama.weak_order
#: the study's own defaults for the pair settings it reads
DEFAULT_DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128)
DEFAULT_SAMPLES = 100_000
DEFAULT_WIDTH = 2
#: the MLMC runs' root-mean-square accuracies ε
DEFAULT_ACCURACIES = (4e-3, 2e-3, 1e-3)


@dataclass(frozen=True)
class MultilevelSettings(PairSettings):
    """Settings of the multilevel study: the pair, the levels' depths (``depths``), the complexity test's samples per
    level (``samples``), the solvers, φ, the accuracies of the MLMC runs, and the verdict."""

    width: int | None = setting(None, "width d of the hidden state", parse=int, group="model",
                                default_text=str(DEFAULT_WIDTH))
    depths: tuple[int, ...] | None = setting(None, "the levels' depths L_0 … L_max: powers of two, consecutive "
                                                   "doublings, as '1,2,4' or a range '1:128'",
                                             parse=parse_power_of_two_list,
                                             default_text=f"{DEFAULT_DEPTHS[0]}:{DEFAULT_DEPTHS[-1]}")
    samples: int | None = setting(None, "level samples per level of the complexity test", parse=int,
                                  default_text=f"{DEFAULT_SAMPLES}")
    schemes: tuple[str, ...] = setting(("network", "milstein_levy_area"), "solvers of the levels, comma-separated: "
                                       + ", ".join(LEVEL_SCHEMES), parse=parse_name_list)
    function: str = setting("cos", "the test function φ: " + "; ".join(f"{k}: {v[1]}" for k, v in
                                                                      TEST_FUNCTIONS.items()),
                            choices=tuple(TEST_FUNCTIONS))
    accuracies: tuple[float, ...] = setting(DEFAULT_ACCURACIES, "root-mean-square accuracies ε of the MLMC estimator, "
                                            "each in (0, 1), comma-separated", parse=parse_float_list)
    max_levels: int = setting(12, "the MLMC estimator's most levels (its deepest depth is L_0 2^(max_levels − 1)); "
                                  "2 to 20", parse=int)
    fit_model: str = setting("corrected", "rate model of β: corrected = c 2^-rl (1 + c' 2^-l), the next term of the "
                                          "expansion in 1/L; power-law = c 2^-rl (the means are always fitted by the "
                                          "power law)", choices=FIT_MODELS,
                             group="fit and verdict")
    fit_from_level: int = setting(2, "fit the rates on levels ≥ this (level 0 is P_0, not a difference; level 1 "
                                     "compares one layer with two)", parse=int, group="fit and verdict")
    tolerance: float = setting(0.15, "δ of the equivalence tests of α, β and the extrapolated rate: PASS iff the "
                                     "interval lies within theory ± δ", parse=float, group="fit and verdict")
    confidence: float = setting(0.95, "level of the bootstrap intervals, 0.5 ≤ c < 1", parse=float,
                                group="fit and verdict")
    resamples: int = setting(1000, "bootstrap resamples of every interval (100 to 100000)", parse=int,
                             group="fit and verdict")
    workers: int | None = setting(None, "processes (each single-threaded) sharing the levels' batches of samples, in "
                                        "the complexity test and in each round of the MLMC runs; the numbers never "
                                        "depend on it (each batch reads its own streams)", parse=int,
                                  group="run and output", default_text="1: one batch held at a time")
    scheduler: str | None = setting(None, "run the batches on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler)",
                                    group="run and output", default_text="none: --workers local processes")
    agreement: float = setting(6.0, "the pair check's margin, in units of the finest accuracy ε: PASS iff the "
                                    "interval of the difference between the network's and a limit solver's MLMC "
                                    "estimates of E φ(H_1) lies within ± agreement × ε (> 0)", parse=float,
                               group="fit and verdict")
    strict_weak: bool = setting(False, "let the weak-error checks (α and the Talay-Tubaro rate) decide the exit status "
                                       "too; without it they are printed and stored, and the verdict rests on β and "
                                       "the consistency of the levels", action="store_true", group="fit and verdict")

    def check(self) -> None:
        super().check()
        names = tuple(self.schemes) if not isinstance(self.schemes, str) else parse_name_list(self.schemes)
        for name in names:
            if name not in LEVEL_SCHEMES:
                raise SettingsError("schemes", f"unknown solver {name!r} (allowed: {', '.join(LEVEL_SCHEMES)})")
        if len(set(names)) != len(names):
            raise SettingsError("schemes", f"{', '.join(names)} names a solver twice")
        self._set("schemes", names)
        check_choice("function", self.function, tuple(TEST_FUNCTIONS))
        check_choice("fit_model", self.fit_model, FIT_MODELS)
        accuracies = tuple(check_float("accuracies", value, MIN_ACCURACY, 1, strict_max=True)
                           for value in self.accuracies)
        self._set("accuracies", tuple(sorted(set(accuracies), reverse=True)))
        self._set("max_levels", check_int("max_levels", self.max_levels, 2, 20))
        if self.depths is not None:
            depths = tuple(self.depths)
            if len(depths) < MIN_TEST_LEVELS or any(b != 2 * a for a, b in zip(depths, depths[1:])):
                raise SettingsError("depths", f"{list(depths)}: the levels' depths must double from one to the next "
                                              f"(e.g. 1:128), at least {MIN_TEST_LEVELS} of them")
        levels = len(self.depths if self.depths is not None else DEFAULT_DEPTHS)
        self._set("fit_from_level", check_int("fit_from_level", self.fit_from_level, 1, levels - 2))
        self._set("tolerance", check_float("tolerance", self.tolerance, 0, strict_min=True))
        self._set("agreement", check_float("agreement", self.agreement, 0, strict_min=True))
        self._set("confidence", check_float("confidence", self.confidence, MIN_CONFIDENCE, 1, strict_max=True))
        self._set("resamples", check_int("resamples", self.resamples, 100, 100_000))
        check_workers(self)


#: levels of the complexity test, at least (a rate needs 3 levels ≥ 1)
MIN_TEST_LEVELS = 4
#: the smallest accuracy ε: below it ε² underflows the sample counts' arithmetic long before any run could end
MIN_ACCURACY = 1e-8


# ------------------------------------------------------------------------------------------------ the levels


# ------------------------------------------------------------------------------------------------ result
@dataclass
class SchemeLevels:
    """One solver's levels: the complexity test's samples, the rates, the MLMC runs.

    Attributes:
        solver: ``network`` or a scheme name; ``strong_order``: its theory strong order (β's theory is twice it).
        levels: the complexity test's :class:`~validation.multilevel.mlmc.LevelSamples`, level 0 … .
        rates: ``alpha`` (|E Y_ℓ|), ``beta`` (Var Y_ℓ), ``extrapolated`` (|E Y_ℓ − 2 E Y_{ℓ+1}|), each a
            :class:`~validation.multilevel.mlmc.LevelRate`.
        gamma: the cost rate from the evaluation counts (exact); ``gamma_time``: from the wall time per sample, with
            ``gamma_time_interval`` (the regression's t interval over levels).
        consistency: Giles's statistic per level ≥ 1.
        estimates: the MLMC runs, one per accuracy.
        telescoping: per level ≥ 1, the bias of the telescoping sum with its interval, (gap, low, high):
            E P_{ℓ−1} of level ℓ−1's fine solves minus that of level ℓ's coarse solves
            (:func:`~validation.multilevel.mlmc.telescoping_gaps`; exactly 0 where the coupling telescopes).
    """

    solver: str
    description: str
    strong_order: float | None
    levels: list[LevelSamples]
    depths: list[int]
    rates: dict[str, LevelRate]
    gamma: float
    gamma_time: float
    gamma_time_interval: tuple[float, float]
    consistency: list[float]
    estimates: list[MLMCEstimate]
    telescoping: list[tuple[float, float, float]] = dataclasses.field(default_factory=list)
    #: the scheme's weak order (its declared ``weak_order``; the network's is Euler–Maruyama's): α's theory
    weak_order: float = 1.0

    @property
    def beta_theory(self) -> float | None:
        return None if self.strong_order is None else 2.0 * self.strong_order

    def theory(self, rate: str) -> float | None:
        """The theory value of ``alpha`` (the weak order), ``beta`` (2 × strong order), ``extrapolated`` (2 × the weak
        order, after one Richardson step)."""
        return {"alpha": self.weak_order, "beta": self.beta_theory, "extrapolated": 2.0 * self.weak_order}[rate]

    def checks(self, tolerance: float, confidence: float) -> list[tuple[Check, bool]]:
        """Each check with whether it judges a weak-error rate (:data:`WEAK_RATES`): the rates' equivalence tests
        against their theory values, then the consistency of the levels."""
        out = []
        for key, rate in self.rates.items():
            theory = self.theory(key)
            name = f"{_RATE_WORDS[key]} of {self.solver}"
            if theory is None:
                continue
            if not rate.judged:
                check = Check(name, INCONCLUSIVE, f"not judged: {rate.why or 'no finite rate'}")
            else:
                check = interval_check(name, rate.rate, rate.interval, (theory - tolerance, theory + tolerance),
                                       self.levels[0].samples, what=f"the {round(100 * confidence)}% interval",
                                       confidence=confidence)
            out.append((check, key in WEAK_RATES))
        worst = max(self.consistency) if self.consistency else 0.0
        name = f"consistency of the levels of {self.solver}"
        if worst <= 1.0:
            check = Check(name, PASS, f"every level's statistic ≤ 1 (largest {worst:.2f}): the coarse solves have the "
                                      "law of the level below, to 3 standard errors")
        else:
            bad = [level + 1 for level, value in enumerate(self.consistency) if value > 1.0]
            check = Check(name, FAIL, f"level(s) {bad}: statistic {worst:.2f} > 1 — the coarse solve of a level and "
                                      "the fine solve of the level below differ beyond 3 standard errors (the "
                                      "telescoping sum is biased)")
        return out + [(check, False)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "solver": self.solver, "description": self.description, "strong_order": self.strong_order,
            "depths": self.depths,
            "levels": [{"level": s.level, "depth": d, "samples": s.samples, "mean_p": float(np.mean(s.fine)),
                        "var_p": float(np.var(s.fine)), "mean_y": float(np.mean(s.differences)),
                        "var_y": float(np.var(s.differences)), "cost_per_sample": s.cost_per_sample,
                        "seconds_per_sample": s.seconds_per_sample, "kurtosis": s.kurtosis()}
                       for s, d in zip(self.levels, self.depths)],
            "rates": {key: {**rate.to_dict(), "theory": self.theory(key)} for key, rate in self.rates.items()},
            "gamma": self.gamma, "gamma_time": self.gamma_time, "gamma_time_interval": list(self.gamma_time_interval),
            "consistency": self.consistency,
            "telescoping_gaps": [{"level": j + 1, "gap": gap, "interval": [low, high]}
                                 for j, (gap, low, high) in enumerate(self.telescoping)],
            "estimates": [estimate.to_dict() for estimate in self.estimates],
        }


def _finest(estimates: Sequence[MLMCEstimate]) -> MLMCEstimate:
    return min(estimates, key=lambda estimate: estimate.accuracy)


def agreement_check(network: MLMCEstimate, limit: MLMCEstimate, solver: str, agreement: float,
                    confidence: float) -> Check:
    """The pair check: do the network and the limit have the same E φ(H_1)?

    d = network.value − limit.value, the two estimators independent. Its interval is d ± (z σ_d + |b_net| + |b_lim|),
    z the normal quantile of ``confidence``, σ_d² = V_net + V_lim (each estimator's Σ V_ℓ / N_ℓ) and b each
    estimator's estimate of its remaining bias (Giles: the last level's mean over 2^α − 1). PASS iff the interval
    lies within ± ``agreement`` ε, ε the coarser of the two accuracies; FAIL iff wholly outside; INCONCLUSIVE if it
    straddles an edge, or if an estimator stopped at ``--max-levels`` with its bias not reached.
    """
    from statistics import NormalDist

    name = f"pair: the network's E φ(H_1) against {solver}'s"
    accuracy = max(network.accuracy, limit.accuracy)
    margin = agreement * accuracy
    difference = network.value - limit.value
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    half = z * math.sqrt(network.variance + limit.variance) + abs(network.bias_estimate) + abs(limit.bias_estimate)
    low, high = difference - half, difference + half
    shown = (f"difference {difference:+.2e}, its {round(100 * confidence)}% interval with the bias estimates "
             f"[{low:+.2e}, {high:+.2e}], against ± {agreement:g} ε = ± {margin:.1e} (ε = {accuracy:g})")
    if not (network.converged and limit.converged):
        which = " and ".join(n for n, e in (("the network's", network), (f"{solver}'s", limit)) if not e.converged)
        return Check(name, INCONCLUSIVE, f"{shown}; {which} estimate did not reach its bias at --max-levels")
    if -margin <= low and high <= margin:
        return Check(name, PASS, f"{shown}: within — the network's deep limit has the SDE's E φ(H_1)")
    if high < -margin or low > margin:
        return Check(name, FAIL, f"{shown}: wholly outside — the network and this limit disagree (a wrong pair)")
    return Check(name, INCONCLUSIVE, f"{shown}: straddles an edge; a smaller ε (--accuracies) narrows it")


_RATE_WORDS = {"alpha": "α (weak rate, |E Y_l|)", "beta": "β (variance rate, Var Y_l)",
               "extrapolated": "Talay-Tubaro rate (|E Y_l - 2 E Y_l+1|)"}


@dataclass(repr=False)  # StudyResult's short repr
class MultilevelResult(StudyResult):
    """The multilevel study's result: per solver a :class:`SchemeLevels`; ``.verdict``, ``.table()``, ``.plot()``."""

    model: dict[str, Any] = dataclasses.field(default_factory=dict)
    model_spec: str = ""
    solvers: list[SchemeLevels] = dataclasses.field(default_factory=list)

    study = "multilevel"

    @functools.cached_property
    def _marked_checks(self) -> list[tuple[Check, bool]]:
        """Every check with whether it judges a weak-error rate (:meth:`SchemeLevels.checks`), then the pair checks
        (:meth:`pair_checks`), made once."""
        s = self.settings
        return ([marked for solver in self.solvers for marked in solver.checks(s.tolerance, s.confidence)]
                + [(check, False) for check in self.pair_checks()])

    def pair_checks(self) -> list[Check]:
        """Per limit solver, the network's MLMC estimate of E φ(H_1) against that solver's, at the finest accuracy
        (:func:`agreement_check`); none without the ``network`` solver or a limit solver beside it."""
        network = next((solver for solver in self.solvers if solver.solver == "network"), None)
        if network is None or not network.estimates:
            return []
        s = self.settings
        return [agreement_check(_finest(network.estimates), _finest(limit.estimates), limit.solver, s.agreement,
                                s.confidence)
                for limit in self.solvers if limit is not network and limit.estimates]

    @property
    def checks(self) -> list[Check]:
        """Every check: per solver α, β, the Talay-Tubaro rate and the consistency of the levels; then the pair
        checks, the network's E φ(H_1) against each limit solver's."""
        return [check for check, _ in self._marked_checks]

    @property
    def deciding_checks(self) -> list[Check]:
        """The checks the verdict combines: β, consistency and the pair checks; also α and the Talay-Tubaro rate with
        ``--strict-weak`` (a weak error needs far more samples than a variance: res-1's is about 10⁻³ at L = 2)."""
        return [check for check, weak in self._marked_checks if self.settings.strict_weak or not weak]

    @property
    def verdict(self) -> str:
        return combine(self.deciding_checks)

    def summary(self) -> dict[str, Any]:
        return {"model": self.model, "model_spec": self.model_spec, "function": TEST_FUNCTIONS[self.settings.function][1],
                "theta": THETA, "solvers": [solver.to_dict() for solver in self.solvers],
                "checks": [check.to_dict() for check in self.checks],
                "deciding_checks": [check.name for check in self.deciding_checks], "verdict": self.verdict}

    def csv_rows(self) -> list[dict[str, Any]]:
        rows = []
        for solver in self.solvers:
            extrapolated = solver.rates["extrapolated"].values
            for j, (levels, depth) in enumerate(zip(solver.levels, solver.depths)):
                rows.append({"solver": solver.solver, "level": levels.level, "depth": depth, "samples": levels.samples,
                             "mean_p": float(np.mean(levels.fine)), "var_p": float(np.var(levels.fine)),
                             "mean_y": float(np.mean(levels.differences)), "var_y": float(np.var(levels.differences)),
                             "extrapolated_difference": extrapolated[j] if j < len(extrapolated) else None,
                             "cost_per_sample": levels.cost_per_sample,
                             "seconds_per_sample": levels.seconds_per_sample, "kurtosis": levels.kurtosis(),
                             "consistency": solver.consistency[j - 1] if j > 0 else None})
        return rows

    def table(self) -> str:
        s = self.settings
        level = round(100 * s.confidence)
        lines = [f"model {self.model['name']}: {self.model['description']}",
                 f"width {self.model['width']}, activation {self.model.get('activation')}, "
                 f"{TEST_FUNCTIONS[s.function][1]}, levels' depths {list(s.depths)}, {s.samples} samples per level, "
                 f"seed {s.seed}, {s.dtype} on {self.run_info.device}", ""]
        for solver in self.solvers:
            lines.append(f"== {solver.solver}: {solver.description}")
            header = (f"{'level':>5} {'L':>6} {'E P_l':>10} {'Var P_l':>10} {'E Y_l':>11} {'± s.e.':>9} "
                      f"{'Var Y_l':>10} {'TT diff':>10} {'cost/sample':>11} {'µs/sample':>10} {'kurt':>6} {'consist':>7}")
            lines += [header, "-" * len(header)]
            extrapolated = solver.rates["extrapolated"].values
            for j, (samples, depth) in enumerate(zip(solver.levels, solver.depths)):
                y = samples.differences
                tt = f"{extrapolated[j]:10.3e}" if j < len(extrapolated) and j >= 1 else f"{'':10}"
                consist = f"{solver.consistency[j - 1]:7.2f}" if j > 0 else f"{'':7}"
                lines.append(f"{j:5d} {depth:6d} {np.mean(samples.fine):10.5f} {np.var(samples.fine):10.3e} "
                             f"{np.mean(y):+11.3e} {np.std(y) / math.sqrt(len(y)):9.1e} {np.var(y):10.3e} {tt} "
                             f"{samples.cost_per_sample:11.1f} {1e6 * samples.seconds_per_sample:10.2f} "
                             f"{samples.kurtosis():6.1f} {consist}")
            for key, rate in solver.rates.items():
                theory = solver.theory(key)
                shown = (f"{rate.rate:6.3f}  {level}% CI [{rate.interval[0]:.3f}, {rate.interval[1]:.3f}] on levels "
                         f"{rate.levels[0]}…{rate.levels[-1]}" if rate.judged else f"  —    not judged: {rate.why}")
                lines.append(f"  {_RATE_WORDS[key]:<44} {shown}"
                             + (f"   (theory {theory:g})" if theory is not None else ""))
            if solver.telescoping:
                gaps = ", ".join(f"{j + 1}: {gap:+.1e} [{low:+.1e}, {high:+.1e}]"
                                 for j, (gap, low, high) in enumerate(solver.telescoping))
                lines.append(f"  telescoping bias E P_l-1 (own) - E P_l-1 (coarse of level l), {level}% intervals, "
                             f"by level: {gaps}")
            low, high = solver.gamma_time_interval
            lines.append(f"  {'γ (cost rate)':<44} {solver.gamma:6.3f}  from the evaluation counts (exact); wall time: "
                         f"{solver.gamma_time:.3f} [{low:.3f}, {high:.3f}]")
            lines.append("  MLMC estimator of E[φ(H_1)] (Giles's algorithm, θ = 1/4):")
            lines.append(f"  {'ε':>8} {'estimate':>10} {'levels':>6} {'deepest L':>9} {'MLMC cost':>11} "
                         f"{'MC cost':>11} {'ratio':>7} {'seconds':>8}  samples per level")
            for estimate in solver.estimates:
                deepest = s.depths[0] * 2 ** (estimate.levels - 1)
                note = "" if estimate.converged else "  (bias not reached at --max-levels)"
                lines.append(f"  {estimate.accuracy:8.1e} {estimate.value:10.5f} {estimate.levels:6d} {deepest:9d} "
                             f"{estimate.cost:11.3e} {estimate.mc_cost:11.3e} {estimate.cost_ratio:6.1f}× "
                             f"{estimate.seconds:8.1f}  {estimate.samples}{note}")
            lines.append("")
        lines.append("checks" + ("" if s.strict_weak else " (the weak-error ones, marked *, are reported; --strict-weak "
                                                            "lets them decide)") + ":")
        for check, weak in self._marked_checks:
            mark = "*" if weak and not s.strict_weak else " "
            lines.append(f" {mark}{check.verdict}: {check.name} — {check.detail}")
        if not self.pair_checks():
            lines.append("(no pair check: it compares the network's E φ(H_1) with a limit solver's; run both)")
        lines.append(f"verdict: {self.verdict}")
        lines.append(f"time {self.run_info.wall_time_s:.1f} s")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        fig, axes = new_grid(2, 2, ax, figsize=(11, 8.5))
        (variance_ax, mean_ax), (samples_ax, cost_ax) = axes
        colours = ("C0", "C3", "C2", "C4")
        for solver, colour in zip(self.solvers, colours):
            levels = np.arange(len(solver.levels))
            var_p = [np.var(s.fine) for s in solver.levels]
            var_y = [np.var(s.differences) for s in solver.levels]
            variance_ax.plot(levels, np.log2(var_p), ":", color=colour, marker="x", label=f"{solver.solver}: P_l")
            variance_ax.plot(levels[1:], np.log2(var_y[1:]), "-", color=colour, marker="o",
                             label=f"{solver.solver}: Y_l = P_l - P_l-1 (β = {solver.rates['beta'].rate:.2f})")
            mean_y = np.abs([np.mean(s.differences) for s in solver.levels])
            mean_ax.plot(levels[1:], np.log2(mean_y[1:]), "-", color=colour, marker="o",
                         label=f"{solver.solver}: |E Y_l| (α = {solver.rates['alpha'].rate:.2f})"
                         if solver.rates["alpha"].judged else f"{solver.solver}: |E Y_l| (α not resolved)")
            extrapolated = np.asarray(solver.rates["extrapolated"].values)
            mean_ax.plot(levels[1:len(extrapolated)], np.log2(np.maximum(extrapolated[1:], 1e-300)), "--",
                         color=colour, marker="s", mfc="none",
                         label=f"{solver.solver}: |E Y_l - 2 E Y_l+1| (Talay-Tubaro; "
                               + (f"{solver.rates['extrapolated'].rate:.2f})" if solver.rates["extrapolated"].judged
                                  else "not resolved)"))
            for estimate, marker in zip(solver.estimates, "os^vD<>"):
                samples_ax.semilogy(range(estimate.levels), estimate.samples, "-", color=colour, marker=marker,
                                    mfc="none", label=f"{solver.solver}, ε = {estimate.accuracy:g}")
            eps = np.array([e.accuracy for e in solver.estimates])
            if len(eps):
                mlmc = eps**2 * np.array([e.cost for e in solver.estimates])
                mc = eps**2 * np.array([e.mc_cost for e in solver.estimates])
                cost_ax.loglog(eps, mlmc, "-", color=colour, marker="o", label=f"{solver.solver}: MLMC")
                cost_ax.loglog(eps, mc, "--", color=colour, marker="x", label=f"{solver.solver}: plain MC")
                theory = _cost_theory(solver.beta_theory, eps)
                # the theory lines through the smallest ε's point (the most asymptotic one)
                if theory is not None:
                    cost_ax.loglog(eps, mlmc[-1] * theory / theory[-1], ":", color=colour, lw=1,
                                   label=f"{solver.solver}: theory {'ε^-2' if solver.beta_theory > 1 else 'ε^-2 (log ε)²'}")
                cost_ax.loglog(eps, mc[-1] * eps[-1] / eps, ":", color="0.5", lw=1)
        variance_ax.set(xlabel="level l (depth L_0 2^l)", ylabel="log2 variance", title="variance of P_l and of Y_l")
        mean_ax.set(xlabel="level l", ylabel="log2 |mean|", title="weak error: plain and extrapolated differences")
        samples_ax.set(xlabel="level l", ylabel="N_l", title="MLMC samples per level")
        cost_ax.set(xlabel="accuracy ε", ylabel="ε² × cost (evaluations)",
                    title="cost: MLMC against plain Monte Carlo (grey dotted: ε^-3)")
        for axis in axes.flat:
            axis.legend(fontsize=7)
            axis.grid(True, which="both", alpha=0.3)
        fig.suptitle(f"{self.model['name']} (d = {self.model['width']}), {TEST_FUNCTIONS[self.settings.function][1]}: "
                     f"multilevel Monte Carlo over depth", fontsize=11)
        return fig


def _cost_theory(beta: float | None, eps: np.ndarray) -> np.ndarray | None:
    """ε² × the theory cost of MLMC with γ = 1: (log ε)² when β = 1, constant when β > 1 (None: no theory)."""
    if beta is None:
        return None
    return np.log(eps) ** 2 if abs(beta - 1.0) < 1e-9 else np.ones_like(eps)


# ------------------------------------------------------------------------------------------------ run
def _with_defaults(settings: MultilevelSettings) -> MultilevelSettings:
    return dataclasses.replace(settings, depths=settings.depths or DEFAULT_DEPTHS,
                               samples=settings.samples or DEFAULT_SAMPLES, width=settings.width or DEFAULT_WIDTH)


def _gamma(levels: Sequence[LevelSamples], first: int, per_sample: Callable[[LevelSamples], float],
           confidence: float) -> tuple[float, tuple[float, float]]:
    """The slope of log2 cost per sample on levels ≥ ``first``, with the regression's t interval. Not the core
    bootstrap fit (``validation.core.stats.slope_fit``) nor :mod:`~validation.multilevel.mlmc`'s rate fits: a
    level's cost is one measured number (seconds or operations per sample), not a sample to resample, so the
    interval is the regression's own."""
    from scipy import stats

    x = np.array([s.level for s in levels[first:]], float)
    y = np.log2([per_sample(s) for s in levels[first:]])
    fit = stats.linregress(x, y)
    half = stats.t.ppf(0.5 + confidence / 2, len(x) - 2) * fit.stderr if len(x) > 2 else math.inf
    return float(fit.slope), (float(fit.slope - half), float(fit.slope + half))


def _drawer(model: str | type[Pair] | Pair, pair: SDEPair, solver: str, settings: MultilevelSettings,
            phase: str, runner: TaskRunner | None, sums: bool = False) -> BatchDrawer | SumsDrawer:
    """How the batches of ``solver``'s level sampler of ``phase`` are computed: here, or by the run's ``runner``
    (:func:`validation.core.workers.task_runner`: its workers or Dask cluster; each worker builds the pair from its
    name or path and the resolved settings). ``sums``: each batch reduced to its :class:`BatchSums` where it was
    drawn (the MLMC rounds keep nothing else)."""
    if runner is None:
        sampler = level_sampler(pair, solver, settings.function, settings.depths[0], settings.seed, phase,
                                settings.torch_noise_dtype)
        return serial_sums(sampler) if sums else serial(sampler)
    spec = model_spec(model)   # the settings pickle (PairSettings sends its options as a plain dict)
    return lambda calls: runner(_draw_batch, [(spec, settings, solver, phase, call, sums) for call in calls])


def _draw_batch(task: tuple[str, MultilevelSettings, str, str, tuple[int, int, int], bool]) -> LevelBatch | BatchSums:
    """One batch of level samples in a worker (reduced to its sums when asked), from the pair built anew (a few
    milliseconds; a batch takes tenths of a second), its large arrays unmapped when freed as in the run's process."""
    spec, settings, solver, phase, call, sums = task
    pair, settings = build_pair(spec, settings)
    sampler = level_sampler(pair, solver, settings.function, settings.depths[0], settings.seed, phase,
                            settings.torch_noise_dtype)
    with runtime.large_blocks_unmapped():
        batch = sampler(*call)
    return BatchSums.of(batch) if sums else batch


def _solver_levels(model: str | type[Pair] | Pair, pair: SDEPair, solver: str, settings: MultilevelSettings,
                   progress: bool, runner: TaskRunner | None
                   ) -> SchemeLevels:
    depths = list(settings.depths)
    depth0 = depths[0]
    batch = batch_size(pair, solver, depth0)
    bar = tqdm(total=len(depths), desc=f"{solver}: complexity test", disable=not progress, leave=False)
    test = complexity_samples(None, len(depths), settings.samples, batch, progress=lambda level: bar.update(),
                              draw=_drawer(model, pair, solver, settings, "test", runner))
    bar.close()
    ys = [s.differences for s in test]
    first = settings.fit_from_level
    options = dict(corrected=settings.fit_model == "corrected", resamples=settings.resamples,
                   confidence=settings.confidence, seed=settings.seed)
    rates = {"alpha": level_rate("alpha", "mean", ys, first, **options),
             "beta": level_rate("beta", "variance", ys, first, **options),
             "extrapolated": level_rate("extrapolated", "extrapolated", ys, first, **options)}
    gamma, _ = _gamma(test, first, lambda s: s.cost_per_sample, settings.confidence)
    gamma_time, gamma_interval = _gamma(test, first, lambda s: s.seconds_per_sample, settings.confidence)
    if solver == "network":
        description, strong_order = f"the ResNet of depth L ({pair.name})", float(pair.theory_rate)
        per_step, weak_order = pair.evaluations_per_layer, NETWORK_WEAK_ORDER
    elif solver == ANTITHETIC:
        scheme = get_sde_scheme("milstein_truncated")(pair.limit_sde(), pair.noise_type)
        # the order of ½(X^f + X^a) − X^c (Giles & Szpruch 2014): O(1/L), so β = 2 though X^f alone is order ½
        description, strong_order, per_step = ("Giles-Szpruch antithetic MLMC: truncated Milstein (no Levy areas), "
                                               "fine solve averaged with its increment-swapped twin"), 1.0, scheme.evaluations
        weak_order = scheme.weak_order
    else:
        scheme = get_sde_scheme(solver)(pair.limit_sde(), pair.noise_type)
        description, strong_order, per_step = scheme.description, scheme.strong_order, scheme.evaluations
        weak_order = scheme.weak_order
    # the estimator's bias test extrapolates with the theory weak order (a measured α this noisy would steer it: at
    # α = 0.5 it adds levels until --max-levels); a new level's variance is guessed with the measured β
    beta = rates["beta"].rate if rates["beta"].finite else (2.0 * strong_order if strong_order else 1.0)

    fine_solves = 2 if solver == ANTITHETIC else 1

    def cost_per_sample(level: int) -> float:
        depth = depth0 * 2**level
        return float((fine_solves * depth + depth // 2) * per_step if level else depth * per_step)

    estimates = []
    for accuracy in tqdm(settings.accuracies, desc=f"{solver}: MLMC", disable=not progress, leave=False):
        estimate = mlmc_estimate(None, accuracy, alpha=weak_order, beta=beta, cost_per_sample=cost_per_sample,
                                 max_levels=settings.max_levels, batch=batch,
                                 draw=_drawer(model, pair, solver, settings, f"mlmc-{accuracy:g}", runner, sums=True))
        finest = estimate.levels - 1
        var_p = float(np.var(test[min(finest, len(test) - 1)].single_solve))  # plain MC draws one solve
        estimate.mc_cost = var_p * depth0 * 2**finest * per_step / ((1 - THETA) * accuracy**2)
        estimates.append(estimate)
    return SchemeLevels(solver, description, strong_order, test, depths, rates, gamma, gamma_time, gamma_interval,
                        consistency(test), estimates, telescoping_gaps(test, settings.confidence), weak_order)


def run(model: str | type[Pair] | Pair = "res1", settings: MultilevelSettings | None = None, /, *,
        progress: bool = False, threads: int | None = 1, command_line: str | None = None,
        **overrides: Any) -> MultilevelResult:
    """Measure the weak rates, the Talay–Tubaro extrapolation and the MLMC complexity of ``model`` (an SDE pair).

    Args:
        model: a shipped SDE pair's name, ``"package.module:ClassName"``, an :class:`~limits.SDEPair` subclass or
            instance (an instance's samples are ignored: each level draws its own).
        settings: a :class:`MultilevelSettings`; None for the defaults (the command line's).
        progress: show progress bars. threads: torch intra-op threads for the run (default 1).
        command_line: the command as typed, recorded in the result.
        **overrides: settings by name, e.g. ``samples=5000, accuracies=(1e-2,)``.

    Returns:
        A :class:`MultilevelResult`.

    Raises:
        SettingsError: a bad setting, or an ODE pair (the message names it and the allowed range).

    Example:
        >>> from validation import multilevel
        >>> result = multilevel.run("res1", samples=2000, schemes=("network",), accuracies=(1e-2,))  # doctest: +SKIP
    """
    settings = make_settings(MultilevelSettings, settings, overrides)
    if pair_class(model).kind != "sde":
        raise SettingsError("model", f"{pair_class(model).name} is an ODE pair; the multilevel study couples Brownian "
                                     "paths across depths (an SDE pair: see --list)")
    if isinstance(model, Pair) and ((settings.workers or 1) > 1 or settings.scheduler is not None):
        raise SettingsError("workers", "a Pair instance runs here; pass its class or name to share the batches out "
                                       "to workers")
    pair, settings = build_pair(model, _with_defaults(settings))
    with runtime.threads(threads), runtime.large_blocks_unmapped():   # a peak that does not depend on the heap's history
        started, clock = utc_now(), time.perf_counter()
        sharing = (settings.workers or 1) > 1 or settings.scheduler is not None
        with task_runner(settings.workers or 1, settings.scheduler) as runner:   # one pool for every round
            solvers = [_solver_levels(model, pair, solver, settings, progress, runner if sharing else None)
                       for solver in settings.schemes]
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=pair.device, started=started,
                               wall_time_s=time.perf_counter() - clock, command=command_line)
    return MultilevelResult(settings=settings, run_info=info, model=pair.describe(), model_spec=model_spec(model),
                            solvers=solvers)


def _mlmc_cost(accuracy: float) -> float:
    """Giles's cost of an MLMC estimate at root-mean-square accuracy ε when the level variances fall as fast as the
    level costs grow (β = γ, the network's and Euler's coupling): ε⁻² (log₂ 1/ε)², in units of its value at
    ε = 10⁻³ (a faster coupling, β > γ, costs ε⁻², less: an upper estimate then)."""
    return (1e-3 / accuracy) ** 2 * (math.log2(1 / accuracy) / math.log2(1e3)) ** 2


def estimate_seconds(model: str | type[Pair] | Pair, settings: MultilevelSettings) -> float:
    """A rough estimate: the complexity test's sample-steps at ~0.2 µs (network) or ~2 µs (a scheme) each, and the
    MLMC runs as long again at the default accuracies (measured on 2 cores: the default takes about 45 s), scaled by
    :func:`_mlmc_cost` for others: ``--accuracies 1e-4`` costs about 140 times the default's MLMC part, 1e-8 about
    10¹⁰ times (the command line warns before such a run)."""
    settings = _with_defaults(settings)
    steps = settings.samples * sum(1.5 * L for L in settings.depths)
    scale = sum(map(_mlmc_cost, settings.accuracies)) / sum(map(_mlmc_cost, DEFAULT_ACCURACIES))
    return sum(steps * (1 + scale) * (2e-7 if solver == "network" else 2e-6) for solver in settings.schemes)


def estimate_mb(model: str | type[Pair] | Pair, settings: MultilevelSettings) -> float:
    """The interpreter (:data:`~validation.core.workers.PROCESS_MB`: the MLMC runs follow the fits, which import
    scipy), the kept level samples (three numbers per sample and level), and per process
    (:func:`~validation.core.workers.run_memory_mb`) the largest batch's arrays alive at once, at the deepest level: the recorded path (at most :data:`~validation.multilevel.samplers.PATH_BUDGET`
    numbers, but never less than one sample's: a wide network's single path can be far larger)
    :func:`path_transient` times over, and the scheme's working arrays. An upper bound where the MLMC runs need
    only small batches (a large ε): the complexity test's full batches come before scipy's import. The run unmaps
    large arrays when they are freed (:func:`validation.core.runtime.large_blocks_unmapped`), so its peak is what
    is alive, not the heap's history."""
    pair, settings = build_pair(model, _with_defaults(settings))
    deepest = settings.depths[-1]
    largest = 0.0
    for solver in (settings.schemes if isinstance(pair, SDEPair) else ()):   # an ODE pair: refused by the run
        per_step, working = per_sample_numbers(pair, solver)
        size = batch_size(pair, solver, settings.depths[0])(len(settings.depths) - 1)
        largest = max(largest, size * (path_transient(pair, solver) * deepest * per_step + working))
    kept = 8 * 3 * settings.samples * len(settings.depths) * len(settings.schemes)
    return run_memory_mb(8 * largest / 2**20, settings.workers or 1, settings.scheduler) + kept / 2**20


EPILOG = """\
examples:
  python -m validation.multilevel                                  # res1, d = 2: network and Milstein with areas
  python -m validation.multilevel --schemes network --accuracies 1e-3 --plot mlmc.png --json mlmc.json
  python -m validation.multilevel --function sqnorm --activation identity --samples 50000   # E‖H_1‖² = e^(s²) E‖h_0‖²
  python -m validation.multilevel --schemes milstein_levy_area,antithetic_milstein --accuracies 1e-3,5e-4,2.5e-4
  python -m validation.multilevel --list
"""

COMMAND = cli.Command(
    prog="python -m validation.multilevel",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=MultilevelSettings,
    run=run,
    positional=("model",),
    add_arguments=add_model_arguments,
    listing=list_models,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
