"""``python -m validation.solvers``: which scheme reaches a given error at the least cost, on the same weights.

For the chosen model the study draws N weight processes once and integrates the pair's limit with several
numerical schemes at the step counts L (the ResNet depths), every scheme reading the same weights:

* **SDE pairs** (res1, cohen-sde, pf, …): one Brownian path per sample. The network (a ResNet of depth L)
  and the schemes — Euler–Maruyama (which res-1 *is*), torchsde's Stratonovich schemes (midpoint,
  euler_heun, reversible_heun; log_ode_midpoint on request) on the limit's Stratonovich form, and where
  the noise is commutative (res1 at ``--width 1``) Milstein and SRK — read the same dyadic tree sums of
  the path (docs/theory.md §5); on commutative noise the default is 4000 paths (:data:`COMMUTATIVE_SAMPLES`).
  The reference is Euler with ``--reference-steps`` steps of the same path
  (general noise), or the highest-order valid scheme at that step count (commutative noise, where an
  order-1 scheme would otherwise meet Euler's own error).
* **Lévy areas** (``--schemes …,milstein_levy_area``): the path is recorded with each step's Lévy areas, merged across
  resolutions by Chen's relation, and Milstein (and the log-ODE scheme) reach order 1 on general noise.
* **Exact solutions** (``--problem NAME``; ``--list-problems``): instead of a pair's limit, an exactly solvable SDE of
  :mod:`limits.problems`; every applicable scheme against its exact solution on the same path, each order checked
  as a lower bound.
* **ODE pairs** (res1-ode, res2-ode, …): the smooth weights are functions of t; the fixed-step schemes
  euler (the ResNet itself), midpoint, heun3, rk4 and explicit_adams of torchdiffeq at each L, and the
  adaptive dopri5 and dopri8 across tolerances; the reference is rk4 at 4× the deepest step count (second: half
  of that), with dopri8 at ``--rtol`` as a side check.

It reports each scheme's strong error at each L, its rate with a 95% paired-bootstrap interval against
the scheme's theory order (fitted only above the reference floor — 10× the two references' RMS gap for ODEs,
3× for SDEs), the
drift/diffusion (or field) evaluations and wall time per solve, the step count each scheme needs to reach
an error ε, and a work–precision figure (error against evaluations, and against wall time).

PASS when every scheme with a theory order has its whole rate interval within ±tolerance of it; FAIL when one
lies wholly outside; INCONCLUSIVE when one straddles an edge (the sample count to settle it is printed) or a
rate stands on fewer than 3 depths.

Python: ``validation.solvers.run("res1", samples=200)`` returns a :class:`SolversResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from limits.brownian import default_block_steps
from limits.pairs import Pair, SDEPair
from limits.problems import PROBLEMS, Problem, get_problem
from limits.schemes import SDE_SCHEMES, SchemeError, get_sde_scheme
from validation.core import cli, runtime
from validation.core.workers import LEAN_PROCESS_MB, PROCESS_MB
from validation.core.checks import FAIL, Check, combine
from validation.core.pair_study import (
    build_pair, estimate_mb as pair_estimate_mb,
    estimate_seconds as pair_estimate_seconds, model_spec, pair_class, resolve_sizes,
)
from validation.core.plots import decade_ticks, new_figure
from validation.core.results import RunInfo, StudyResult, rows_from_columns, utc_now
from validation.core.settings import SettingsError, make_settings, refuse_inapplicable, settings_given
from validation.solvers.runs import (
    MAX_EXTRAPOLATED_STEPS, SCHEME_FLOOR_FACTORS, TIMING_BUDGET_S, SchemeRun, ode_runs, problem_runs, sde_runs,
    sde_scheme_names, converges, steps_to_reach,
)
from validation.solvers.sharing import forget_inputs, scheme_runner, shared_inputs
from validation.solvers.settings import SolversSettings


#: the default sample count on commutative (scalar/diagonal) noise: the order-1 schemes' errors vary more from
#: path to path than Euler's, and 500 paths leave intervals ±0.07 wide (res1 --width 1: Milstein 0.998
#: [0.938, 1.076]); 4000 paths give ±0.025 (1.013 [0.991, 1.038]) in about 35 s
COMMUTATIVE_SAMPLES = 4000
#: the error levels of the steps-to-ε table
TARGETS: tuple[float, ...] = (1e-1, 1e-2, 1e-3, 1e-4, 1e-6)


# ------------------------------------------------------------------------------------------------ result


def _steps_text(steps: float | None) -> str:
    if steps is None:
        return "-"
    return f">{MAX_EXTRAPOLATED_STEPS:.0e}" if math.isinf(steps) else format(steps, ".3g")


@dataclass(repr=False)  # StudyResult's short repr
class SolversResult(StudyResult):
    """The solver study's result: every scheme's errors, rate and cost on the same weights.

    Attributes:
        model: the pair's description; kind: ``sde`` or ``ode``; noise_type: the SDE's noise structure.
        runs: the fixed-step schemes (the network first), in order; adaptive: the adaptive ODE schemes.
        reference: how the reference was computed, and ``rms_gap``, its floor (the two references' gap).
    """

    model: dict[str, Any] = dataclasses.field(default_factory=dict)
    model_spec: str = ""
    kind: str = "sde"
    noise_type: str = "general"
    runs: list[SchemeRun] = dataclasses.field(default_factory=list)
    adaptive: list[SchemeRun] = dataclasses.field(default_factory=list)
    reference: dict[str, Any] = dataclasses.field(default_factory=dict)

    study = "solvers"

    @property
    def depths(self) -> list[int]:
        return list(self.settings.depths)

    def run_named(self, name: str) -> SchemeRun:
        """The scheme run called ``name``."""
        for run in [*self.runs, *self.adaptive]:
            if run.name == name:
                return run
        raise KeyError(f"no scheme {name!r} in this result (have: {', '.join(r.name for r in self.runs)})")

    @property
    def rates(self) -> dict[str, float]:
        """Each fixed-step scheme's fitted rate."""
        return {run.name: run.fit.rate for run in self.runs if run.fit is not None}

    @functools.cached_property
    def scheme_checks(self) -> dict[str, Check | None]:
        """Each fixed-step scheme's rate check (None for a scheme without a theory order), made once."""
        s = self.settings
        return {run.name: run.check(s.tolerance, resamples=s.resamples, seed=s.seed) for run in self.runs}

    @property
    def checks(self) -> list[Check]:
        """Every fixed-step scheme's rate check (those with a theory order), and the reference's."""
        gap = self.reference.get("rms_gap", math.nan)
        return [Check.of("the reference is finite", math.isfinite(gap), f"RMS gap of the two references {gap:.3e}"),
                *(c for c in self.scheme_checks.values() if c is not None)]

    @property
    def verdict(self) -> str:
        """FAIL if a scheme's rate is off its order (or the reference is not finite), else INCONCLUSIVE if one is
        not settled, else PASS (:func:`validation.core.checks.combine`); FAIL when no scheme has an order to check."""
        checks = self.checks
        return combine(checks) if len(checks) > 1 else FAIL

    def steps_table(self) -> dict[str, list[float | None]]:
        """The step count each fixed-step scheme needs for each error level of :data:`TARGETS` (``inf``: beyond
        :data:`MAX_EXTRAPOLATED_STEPS`, written as null in JSON; the table prints a scheme that does not converge
        as such)."""
        return {run.name: [steps_to_reach(run, eps) for eps in TARGETS] for run in self.runs}

    def summary(self) -> dict[str, Any]:
        tol = self.settings.tolerance
        return {
            "model": self.model, "model_spec": self.model_spec, "kind": self.kind, "noise_type": self.noise_type,
            "depths": self.depths, "reference": self.reference, "floor_factor": SCHEME_FLOOR_FACTORS[self.kind],
            "timing": {"warm_up_runs": 1, "timed_runs": self.settings.timing_repeats,
                       "timed_runs_within_s": TIMING_BUDGET_S,
                       "statistic": (f"median of the timed runs; a warm-up of {TIMING_BUDGET_S:g} s or longer is "
                                     "its own timing") if self.settings.timing_repeats else "the warm-up run itself"},
            "schemes": [run.to_dict(tol, self.scheme_checks[run.name]) for run in self.runs],
            "adaptive": [run.to_dict(tol) for run in self.adaptive],
            "steps_to_reach": {"targets": list(TARGETS), "steps": self.steps_table()},
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for run in [*self.runs, *self.adaptive]:
            keys = run.depths if run.depths else run.tolerances
            for j, key in enumerate(keys):
                rows += rows_from_columns({
                    "scheme": [run.name], "depth": [key if run.depths else None],
                    "tolerance": [None if run.depths else key], "rms_error": [run.errors[j]],
                    "evaluations": [run.evaluations[j]], "seconds": [run.seconds[j]],
                    "fitted": [bool(run.fit.fitted[j]) if run.fit is not None else None],
                })
        return rows

    def table(self) -> str:
        s = self.settings
        lines = [f"model {self.model['name']}: {self.model['description']}",
                 f"width {self.model['width']}, samples {s.samples}, {self.kind.upper()} ({self.noise_type} noise), "
                 f"seed {s.seed}, {s.dtype} on {self.run_info.device}",
                 f"reference: {self.reference['text']}" + (
                     "; no floor: every depth is fitted" if self.reference.get("scheme") == "exact" else
                     f"; floor (RMS gap of the two references) {self.reference['rms_gap']:.3e}: depths below "
                     f"{SCHEME_FLOOR_FACTORS[self.kind]:g}× it are not fitted"), ""]
        header = f"{'scheme':18s}" + "".join(f"{L:>10d}" for L in self.depths) + \
            f"{'evals/step':>11} {'rate [95% CI]':>24} {'theory':>7} {'verdict':>13}"
        lines += ["RMS error by step count L:", header, "-" * len(header)]
        for run in self.runs:
            cells = []
            for j, error in enumerate(run.errors):
                mark = "" if run.fit is None or run.fit.fitted[j] else "*"
                cells.append(f"{error:9.2e}{mark or ' '}")
            fit = run.fit
            rate = (f"{fit.rate:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]" if fit is not None and fit.finite
                    else "exact (rounding)" if run.exact_to_rounding else "not fitted")
            theory = f"{run.theory_order:g}" if run.theory_order is not None else "-"
            per_step = run.evaluations[-1] / run.depths[-1]
            lines.append(f"{run.name:18s}" + "".join(cells) + f"{per_step:11.1f} {rate:>24} {theory:>7} "
                         f"{getattr(self.scheme_checks[run.name], 'verdict', None) or 'report':>13}")
        lines.append("(* not fitted: under the reference floor, dropped by the window rule, or below --fit-from; the JSON's "
                     "fit.exclusions says which)")
        if self.adaptive:
            lines += ["", "adaptive schemes (rtol = atol):"]
            for run in self.adaptive:
                lines.append(f"{run.name:18s}" + "  ".join(f"tol {tol:.0e}: {err:.2e} ({n} evals)"
                                                           for tol, err, n in zip(run.tolerances, run.errors,
                                                                                  run.evaluations)))
        lines += ["", "step count L needed for RMS error ε (interpolated; beyond the deepest L from the rate; "
                  f"'-': already at the coarsest L or not estimable; '>{MAX_EXTRAPOLATED_STEPS:.0e}': beyond reach):",
                  f"{'scheme':18s}" + "".join(f"{'ε=' + format(eps, '.0e'):>12}" for eps in TARGETS)]
        for run in self.runs:
            if run.exact_to_rounding:
                lines.append(f"{run.name:18s}  exact to rounding at every step count")
                continue
            if not converges(run):
                rate = f"{run.fit.rate:.3f} [{run.fit.ci[0]:.3f}, {run.fit.ci[1]:.3f}]" if run.fit is not None \
                    and run.fit.finite else "not fitted"
                lines.append(f"{run.name:18s}  does not converge (rate {rate}: no decay shown)")
                continue
            steps = [steps_to_reach(run, eps) for eps in TARGETS]
            lines.append(f"{run.name:18s}" + "".join(f"{_steps_text(n):>12}" for n in steps))
        checks = self.checks
        unsettled = [c for c in checks if c.verdict != "PASS"]
        lines.append("")
        for check in unsettled:
            lines.append(f"{check.verdict}: {check.name}: {check.detail}")
        one_sided = any(run.at_least for run in self.runs)
        lines.append(f"verdict: {self.verdict}" + ("" if unsettled else
                                                    " — every scheme's rate interval lies "
                                                    + ("at or above its order − " if one_sided else
                                                       "within its order ± ") + f"{s.tolerance:g}"))
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The work–precision figure: RMS error against evaluations (left) and wall time (right), one line per
        scheme with its 95% band, theory slopes dashed. ``ax``: a pair of Axes, or None."""
        if ax is None:
            fig = new_figure(figsize=(11, 4.6))
            axes = fig.subplots(1, 2)
        else:
            axes = list(ax)
            fig = axes[0].figure
        s = self.settings
        markers = "osD^v<>ph*"
        for k, run in enumerate([*self.runs, *self.adaptive]):
            errors = run.errors
            bands = _error_bands(run.squared_errors, s)
            for panel, cost in zip(axes, (run.evaluations, run.seconds)):
                cost = np.asarray(cost, dtype=float)
                style = dict(marker=markers[k % len(markers)], linestyle="--" if run.tolerances else "-",
                             label=run.name + (f" (order {run.theory_order:g})" if run.theory_order else ""))
                line, = panel.loglog(cost, errors, **style)
                panel.fill_between(cost, bands[0], bands[1], color=line.get_color(), alpha=0.15, linewidth=0)
                if panel is axes[0] and run.theory_order and run.depths:
                    # theory slope in evaluations: e ∝ L^-p and evaluations ∝ L, through the deepest point
                    x = np.array([cost[0], cost[-1]])
                    panel.loglog(x, errors[-1] * (x / cost[-1]) ** (-run.theory_order), color=line.get_color(),
                                 linestyle=":", linewidth=1)
        axes[0].set_xlabel("drift + diffusion evaluations per solve" if self.kind == "sde"
                           else "vector-field evaluations per solve")
        axes[1].set_xlabel("wall time per solve of the batch (s)")
        decade_ticks(axes[1].xaxis, plain=True)   # seconds often span one decade: 0.02, 0.05, 0.1, not 2×10⁻²3×10⁻²…
        for panel in axes:
            panel.set_ylabel("RMS error vs reference")
            panel.grid(True, which="both", alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{self.model['name']}: work–precision on the same weights (N={s.samples}, d={self.model['width']}, "
                     f"seed {s.seed}); bands: 95% bootstrap; dotted: theory slopes", fontsize=9)
        return fig


def _error_bands(squared: np.ndarray, settings: SolversSettings) -> tuple[np.ndarray, np.ndarray]:
    from validation.core.stats import depth_intervals

    if squared.shape[0] < 2 or not np.all(np.isfinite(squared)):
        errors = np.sqrt(np.mean(squared, axis=0))
        return errors, errors
    return depth_intervals(squared, "rms", settings.confidence, resamples=400, seed=settings.seed)


# ------------------------------------------------------------------------------------------------ run


#: the dopri8 side check's default tolerance in float64: rk4 reaches far below the convergence study's 1e-10
SIDE_CHECK_TOLERANCE = 1e-13


#: the pair settings a problem also takes (its sizes, its path, the fit); the others describe a network
_PROBLEM_SETTINGS = ("samples", "depths", "reference_steps", "noise_dtype", "schemes", "timing_repeats", "problem",
                     "fit_model", "fit_from", "tolerance", "confidence", "resamples", "workers", "scheduler")
#: a problem's default sizes: the pairs' SDE depths, 2000 paths (or the problem's own ``default_samples``, where its
#: errors are heavy-tailed), and a recorded path 4x finer than the deepest depth
#: (the exact solutions that read more than W_T are exact to O(Δt²) there: kps445)
PROBLEM_DEFAULTS: Mapping[str, Any] = {"depths": (4, 8, 16, 32, 64, 128, 256), "samples": 2000, "reference_factor": 4}


def _resolve_problem(settings: SolversSettings) -> tuple[Problem, SolversSettings]:
    """The problem and its settings with the defaults filled in; a pair's setting given with it is refused."""
    given = settings_given(settings, against_defaults=True) - ({"options"} if not settings.options else set())
    refuse_inapplicable(given, _PROBLEM_SETTINGS, "--problem", takes=", ".join(
        "--" + name.replace("_", "-") for name in _PROBLEM_SETTINGS if name != "problem"))
    depths = tuple(settings.depths or PROBLEM_DEFAULTS["depths"])
    n = settings.reference_steps or PROBLEM_DEFAULTS["reference_factor"] * depths[-1]
    if n < depths[-1] or n & (n - 1):
        raise SettingsError("reference_steps", f"{n} must be a power of two ≥ the deepest depth {depths[-1]}")
    if settings.fit_from is not None and sum(L >= settings.fit_from for L in depths) < 2:
        raise SettingsError("fit_from", f"{settings.fit_from} leaves fewer than two of the depths {depths}")
    problem = get_problem(settings.problem)
    samples = settings.samples or problem.default_samples or PROBLEM_DEFAULTS["samples"]
    return problem, dataclasses.replace(settings, depths=depths, samples=samples, reference_steps=n)


def _resolve(model: str | type[Pair] | Pair, settings: SolversSettings) -> tuple[Pair, SolversSettings]:
    """The pair and the resolved settings (the pair-study layer's resolution, with the dopri8 side check at
    :data:`SIDE_CHECK_TOLERANCE` in float64 and :data:`COMMUTATIVE_SAMPLES` on commutative noise)."""
    if settings.rtol is None and settings.atol is None and settings.dtype == "float64" \
            and pair_class(model).kind == "ode":
        settings = dataclasses.replace(settings, rtol=SIDE_CHECK_TOLERANCE, atol=SIDE_CHECK_TOLERANCE)
    requested_samples = settings.samples
    pair, settings = build_pair(model, settings)
    if requested_samples is None and getattr(pair, "noise_type", "general") != "general":
        pair, settings = build_pair(model, dataclasses.replace(settings, samples=COMMUTATIVE_SAMPLES))
    if pair.kind == "sde" and not isinstance(pair, SDEPair):
        raise SettingsError("model", f"{pair.name} is not an SDE pair")
    return pair, settings


#: the recorded path with its areas as the run holds it at its peak, in units of the path: the path and a share of the
#: block being drawn and merged beside it. Measured with the run's large arrays unmapped when freed (:func:`_heap_for`):
#: 1191–1217 MiB at 500 paths (an 844-MiB path; estimate 1266) and 3863 at 2000 (3375; estimate 4066). In the reused
#: heap before, the same command peaked anywhere in 1253–1456 (and 1818 once: counted by a measurement that added a
#: ``git`` child's view of the parent's pages), for which this factor was 1.35
LEVY_PATH_FACTOR = 1.1
#: the same, for a path drawn in one block (``limits.brownian.default_block_steps`` ≥ the steps: few paths, many
#: channels): the fine steps' Lévy areas of the whole path are drawn at once, with about six arrays of the path's
#: size alive in ``limits.brownian.fine_step_areas`` (its areas' conditional mean and deviation from H_i, H_j and the
#: increments, then the draw). Measured at width 16 (m = 272 channels, 512 steps): 2550, 3816 and 7391 MiB at 2, 4
#: and 8 paths, 15.9 GB at 20 (the issue's), against 2021, 3776, 7284 and 17 810 with this factor; the factor
#: 1.35 gave 663, 1058, 1850 and 4224 (ratios down to 0.25: runs were admitted that could not fit)
LEVY_ONE_BLOCK_FACTOR = 6.0


#: an exactly solvable problem's run: the interpreter with torch and the fits (MiB), and the factor on its
#: recorded path's size (twice the K·N·(2m + m(m − 1)/2) numbers). Measured on gbm (m = 1, K = 1024) at 2000, 8000
#: and 16000 paths: 428, 683 and 1033 MiB, kp4446 at 12000: 853 (a line 342 + 1.38 × path); the old 200 + 1 × path
#: gave 262, 450, 700 and 575 (ratios down to 0.61)
PROBLEM_BASE_MB, PROBLEM_PATH_FACTOR = 360.0, 1.45


def _one_process_mb(model: str | type[Pair] | Pair, settings: SolversSettings) -> float:
    """The peak memory in MiB of the run in one process: the pair study's, plus the recorded path (K·N·m numbers,
    twice with the space-time areas)."""
    if settings.problem is not None:
        problem, s = _resolve_problem(settings)
        m = problem.channels
        path = s.reference_steps * s.samples * (2 * m + m * (m - 1) // 2) * 8 * 2 / 2**20
        return PROBLEM_BASE_MB + PROBLEM_PATH_FACTOR * path
    base = pair_estimate_mb(model, settings)
    cls, s = resolve_sizes(model, settings)
    if cls.kind != "sde":
        return base
    channels = s.width * s.width + s.width
    names = s.schemes if s.schemes is not None else sde_scheme_names(build_pair(model, settings)[0], s)
    if any(get_sde_scheme(name).needs_levy_area for name in names if name in SDE_SCHEMES):
        # recorded at the reference's n steps with space-time and Lévy areas: 2m + m(m − 1)/2 numbers per step, held
        # once, and LEVY_PATH_FACTOR for the block being drawn and merged beside it
        per_step = 2 * channels + channels * (channels - 1) // 2
        path = s.reference_steps * s.samples * per_step * 8 / 2**20
        one_block = default_block_steps(s.samples, channels, s.reference_steps) >= s.reference_steps
        return base + (LEVY_ONE_BLOCK_FACTOR if one_block else LEVY_PATH_FACTOR) * path
    record = s.reference_steps if s.width == 1 else s.depths[-1]
    return base + 2 * record * s.samples * channels * 8 / 2**20


#: the memory a process that runs schemes adds, over the one-process run's working memory (the run less the
#: interpreter): measured at the default (res1, width 10, 500 paths; ``benchmarks/bench_memory.py``) as 913–940 MiB
#: with two forked workers and 1608–1667 MiB on a two-worker local Dask cluster, against 672–774 MiB in one process
WORKER_SHARE = 0.3


def estimate_mb(model: str | type[Pair] | Pair, settings: SolversSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB: the run in one process
    (:func:`_one_process_mb`) and, when the SDE schemes are shared out, :data:`WORKER_SHARE` of its working memory
    for each process that runs them (a forked worker reads the path from the memory it shares with this process; a
    Dask worker draws its own), plus the interpreter of each worker of a ``local:N`` cluster."""
    one = _one_process_mb(model, settings)
    workers, scheduler = settings.workers or 1, settings.scheduler
    if scheduler is None and workers <= 1:
        return one
    processes = int(scheduler[6:]) if scheduler and scheduler.startswith("local:") else (0 if scheduler else workers)
    interpreters = processes * PROCESS_MB if scheduler else 0.0
    return one + processes * WORKER_SHARE * max(0.0, one - LEAN_PROCESS_MB) + interpreters


def estimate_seconds(model: str | type[Pair] | Pair, settings: SolversSettings) -> float:
    """The pair study's estimate (the path's random numbers) times 1.5 for the schemes; for a problem, its path's
    normals at the same cost per normal plus the schemes' steps."""
    if settings.problem is not None:
        problem, s = _resolve_problem(settings)
        return 1e-7 * s.reference_steps * s.samples * problem.channels ** 2 + 1e-6 * sum(s.depths) * s.samples
    return 1.5 * pair_estimate_seconds(model, settings)


def _heap_for(pair: SDEPair, settings: SolversSettings) -> contextlib.AbstractContextManager:
    """Large arrays unmapped when freed (:func:`validation.core.runtime.large_blocks_unmapped`) for a run that records
    a path with Lévy areas: that path is drawn in blocks merged by Chen's relation and each scheme coarsens it depth
    by depth, arrays that change shape all the time, and in the reused heap the peak followed the order in which they
    came free (``solvers --model res1 --width 2 --schemes euler,milstein_levy_area --samples 500``: 1253, 1394, 1425,
    1456 MiB from run to run; 1191–1217 unmapped, at the cost of page faults: 12.6 s against 10.1). Other runs keep
    the reused heap; the numbers computed never change."""
    names = settings.schemes if settings.schemes is not None else sde_scheme_names(pair, settings)
    if any(get_sde_scheme(name).needs_levy_area for name in names if name in SDE_SCHEMES):
        return runtime.large_blocks_unmapped()
    return contextlib.nullcontext()


def run(model: str | type[Pair] | Pair = "res1", settings: SolversSettings | None = None, /, *,
        progress: bool = False, threads: int | None = 1, command_line: str | None = None,
        **overrides: Any) -> SolversResult:
    """Compare numerical schemes for ``model``'s limit on the same weights: errors, rates, cost.

    Args:
        model: a pair name, ``"package.module:ClassName"``, a :class:`~limits.Pair` subclass or instance.
        settings: a :class:`SolversSettings`; None for the defaults (the command line's).
        progress: show a progress bar over the path.
        threads: torch intra-op threads for the run (default 1); None leaves torch alone.
        command_line: the command as typed, recorded in the result.
        **overrides: settings by name, e.g. ``samples=200, schemes=("euler", "midpoint")``.

    Returns:
        A :class:`SolversResult`: ``.verdict``, ``.rates``, ``.runs``, ``.steps_table()``, ``.table()``,
        ``.plot()``, ``.to_dict()``, ``.save(path)``.

    Example:
        >>> from validation import solvers
        >>> result = solvers.run("res1", samples=100, depths=(4, 8, 16, 32), reference_steps=512)
        >>> sorted(result.rates)   # doctest: +SKIP
        ['euler', 'euler_heun', 'midpoint', 'network', 'reversible_heun']
    """
    settings = make_settings(SolversSettings, settings, overrides)
    if settings.problem is not None:
        return _run_problem(model, settings, progress=progress, threads=threads, command_line=command_line)
    pair, settings = _resolve(model, settings)
    if pair.kind == "sde":
        try:
            sde_scheme_names(pair, settings)
        except SchemeError as exc:
            raise SettingsError("schemes", str(exc)) from None
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        if isinstance(pair, SDEPair):
            try:
                with _heap_for(pair, settings):
                    shared = shared_inputs(model, settings, progress, pair)
                    runs, info = sde_runs(pair, settings, shared, scheme_runner(model, settings))
            finally:
                forget_inputs()
            adaptive: list[SchemeRun] = []
        else:
            runs, adaptive, info = ode_runs(pair, settings)
        wall = time.perf_counter() - clock
        run_info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=pair.device, started=started,
                                   wall_time_s=wall, command=command_line)
    return SolversResult(settings=settings, run_info=run_info, model=pair.describe(), model_spec=model_spec(model),
                         kind=pair.kind, noise_type=getattr(pair, "noise_type", "none"), runs=runs,
                         adaptive=adaptive, reference=info)


def _run_problem(model: Any, settings: SolversSettings, *, progress: bool, threads: int | None,
                 command_line: str | None) -> SolversResult:
    """``run`` for ``--problem``: the problem's schemes against its exact solution (``model`` must be left out)."""
    if model is not None and model != "res1":
        raise SettingsError("problem", f"give a model or a problem, not both (got model {model!r} and problem "
                                       f"{settings.problem!r})")
    problem, settings = _resolve_problem(settings)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        try:
            runs, info = problem_runs(problem, settings, shared_inputs(model, settings),
                                      scheme_runner(model, settings))
        finally:
            forget_inputs()
        wall = time.perf_counter() - clock
        run_info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=settings.device, started=started,
                                   wall_time_s=wall, command=command_line)
    return SolversResult(settings=settings, run_info=run_info, model=problem.describe(),
                         model_spec=f"problem:{problem.name}", kind="sde", noise_type=problem.noise_type, runs=runs,
                         reference=info)


def list_problems() -> str:
    """``--list-problems``: every problem with its noise, form, source and what its solution reads."""
    lines = [f"{'problem':26s} {'d':>2} {'m':>2} {'noise':12s} {'form':13s} description"]
    for name, cls in PROBLEMS.items():
        lines.append(f"{name:26s} {cls.dimension:>2} {cls.channels:>2} {cls.noise_type:12s} {cls.stated_form:13s} "
                     f"{cls.description}")
        lines.append(f"{'':26s} {'':>2} {'':>2} {'':12s} {'':13s}   source: {cls.source}; solution reads "
                     f"{cls.solution_reads}")
    return "\n".join(lines)


class _ListProblems(argparse.Action):
    """``--list-problems``: print :func:`list_problems` and exit 0 (like ``--version``)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None
                 ) -> None:
        print(list_problems())
        parser.exit(0)


# ------------------------------------------------------------------------------------------------ CLI
EPILOG = """\
examples:
  python -m validation.solvers --model res1                       # EM and torchsde's Stratonovich schemes
  python -m validation.solvers --model res1 --width 1             # commutative noise: Milstein, SRK at order 1
  python -m validation.solvers --model res2-ode --plot wp.png     # euler … rk4 and dopri5/8: work-precision
  python -m validation.solvers --model cohen-sde --schemes euler,midpoint
  python -m validation.solvers --problem gbm                      # every scheme against the exact solution
  python -m validation.solvers --list-problems
  python -m validation.solvers --model res1 --width 2 --schemes euler,milstein_levy_area --samples 2000   # Levy areas

heavy-tailed problems (log-normal solutions; docs/results/solvers.md): gbm and gbm-stratonovich run 16000 paths by
default (2000 left three schemes straddling an edge, 8000 one seed in four), kp4446 runs 12000 (at 2000 Milstein read 0.94 [0.92, 0.96];
at 12000 every scheme PASSes, 52 s); kp4459 (log-variance 5) settles at no feasible count: at 16000
paths its intervals are still about ±0.15 wide (INCONCLUSIVE, never a wrong rate). --model res1 --width 1 is
INCONCLUSIVE at the default 4000 paths (Euler–Heun 1.021 [0.989, 1.058], SRK 1.544 [1.477, 1.625]) and settles at
--samples 24000 (PASS: Euler–Heun 1.008 [0.995, 1.021], SRK 1.487 [1.451, 1.521]; about 8 minutes on 2 cores).
"""


def _add_arguments(group: cli.ArgumentGroup) -> None:
    group.add_argument("--model", default="res1",
                       help="the pair whose limit the schemes integrate: a name from "
                            "`python -m validation.convergence --list`, or package.module:ClassName (default: res1)")
    group.add_argument("--list-problems", action=_ListProblems,
                       help="list the exactly solvable problems of --problem (noise, form, source) and exit")


COMMAND = cli.Command(
    prog="python -m validation.solvers",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=SolversSettings,
    run=run,
    positional=("model",),
    add_arguments=_add_arguments,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)

