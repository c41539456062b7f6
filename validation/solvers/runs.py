"""The solver study's runs: every scheme integrated on the same weights (an SDE pair's Brownian path, an exactly
solvable problem's, an ODE pair's smooth weights) at every step count, its squared errors against the reference,
its rate fit, and its cost (drift/diffusion or field evaluations counted, wall time by :func:`timed`)."""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from limits.brownian import DyadicPath, record_path
from limits.ito import ItoLimit
from limits.pairs import ODEPair, Pair, SDEPair, run_network
from limits.problems import Problem
from limits.schemes import ODE_ADAPTIVE_SCHEMES, ODE_FIXED_SCHEMES, SDE_SCHEMES, get_sde_scheme, sde_schemes_for
from validation.core.checks import MIN_FIT_DEPTHS, Check
from validation.core.one_pass import FLOOR_FACTORS, sde_pass
from validation.core.settings import SettingsError
from validation.core.rate_fit import RateFit, fit_rate, measured_rate_check, verdict_rule
from validation.solvers.settings import SolversSettings


#: an extrapolated step count beyond this is reported as out of reach (``inf``), not as a number
MAX_EXTRAPOLATED_STEPS = 1e12


@dataclass(frozen=True)
class SharedPath:
    """What every scheme of an SDE comparison reads, computed once per process (:func:`sde_inputs`,
    :func:`problem_inputs`): the limit, the recorded path, the initial states, the reference with its floor (the RMS
    gap of the two references; 0 against an exact solution) and how to fit and check the schemes' rates.

    Attributes:
        network_states: the network's final states at every depth from the engine's pass (general noise without
            Lévy areas), else None (the network is then run on ``path``).
        exact_solution: the reference is a closed form (a scheme exact to rounding is reported so, not fitted).
        one_sided: each order is checked as a lower bound (:attr:`SchemeRun.at_least`; a problem's).
        info: the reference's description (the result's ``reference``)."""

    limit: Any
    noise_type: str
    path: DyadicPath
    h0: torch.Tensor
    reference: torch.Tensor
    floor: float
    next_order: float | None
    info: dict[str, Any]
    network_states: list[torch.Tensor] | None = None
    t1: float = 1.0
    exact_solution: bool = False
    one_sided: bool = False


#: ``run_schemes(shared, names, settings)``: :func:`scheme_runs` of ``names``, here or on workers (the study's runner)
SchemeRunner = Callable[[SharedPath, Sequence[str], SolversSettings], list["SchemeRun"]]


@dataclass
class SchemeRun:
    """One scheme at every step count: per-sample squared errors, the fit, and its cost.

    Attributes:
        name, description: the scheme.
        theory_order: its strong (SDE) or classical (ODE) order for this model; None: reported, not checked.
        depths: the step counts L (for an adaptive scheme: the tolerances' accepted step counts are in
            ``evaluations``; ``depths`` is empty).
        squared_errors: (N, number of depths) ‖X_L − H_1‖² against the reference.
        evaluations: drift + diffusion (SDE) or field (ODE) evaluations of one solve of the batch, per depth
            (or per tolerance); the network counts its residual branches, ``Pair.evaluations_per_layer`` per
            layer (2 for the midpoint block, 4 for the RK4 block).
        seconds: wall time of one solve of the batch, per depth (or per tolerance).
        fit: the rate fit (None for an adaptive scheme).
        tolerances: the adaptive scheme's tolerances (empty for a fixed-step scheme).
    """

    name: str
    description: str
    theory_order: float | None
    depths: list[int]
    squared_errors: np.ndarray
    evaluations: list[int]
    seconds: list[float]
    fit: RateFit | None = None
    tolerances: list[float] = dataclasses.field(default_factory=list)
    exact_to_rounding: bool = False
    at_least: bool = False

    @property
    def errors(self) -> np.ndarray:
        """RMS error per depth (or tolerance)."""
        return np.sqrt(np.mean(self.squared_errors, axis=0))

    def check(self, tolerance: float, *, resamples: int = 2000, seed: int = 0) -> Check | None:
        """The equivalence test of the rate against the theory order ± ``tolerance``
        (:func:`validation.core.rate_fit.measured_rate_check`, with the bootstrap's ``resamples`` and ``seed``); None when
        there is none to check. A scheme exact to rounding against an exact solution satisfies any order: PASS."""
        if self.exact_to_rounding and self.theory_order is not None:
            worst = float(np.max(self.errors))
            return Check(f"rate of {self.name} at least {self.theory_order:g}", "PASS",
                         f"exact to rounding: RMS error ≤ {worst:.1e} at every step count (no rate to fit)")
        if self.fit is None or self.theory_order is None:
            return None
        fit, low = self.fit, self.theory_order - tolerance
        if self.at_least:
            # against an exact solution the order is a guarantee, not a prediction: a problem may show more (additive
            # noise this small leaves the drift's deterministic error, of the scheme's ODE order, dominant)
            name = f"rate of {self.name} at least {self.theory_order:g} − {tolerance:g}"
            if fit.finite and fit.ci[0] >= low and len(fit.fitted_depths) >= MIN_FIT_DEPTHS:
                faster = " — faster than its order on this problem" if fit.ci[0] > self.theory_order + tolerance else ""
                return Check(name, "PASS", f"the interval [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}] lies ≥ {low:.3f}{faster}")
            return measured_rate_check(name, fit, (low, max(fit.ci[1], self.theory_order + tolerance)),
                                       self.squared_errors, "rms", resamples=resamples, seed=seed)
        return measured_rate_check(f"rate of {self.name} within {self.theory_order:g} ± {tolerance:g}", fit,
                                   verdict_rule(self.theory_order, tolerance), self.squared_errors, "rms",
                                   resamples=resamples, seed=seed)

    def verdict(self, tolerance: float) -> str | None:
        """PASS, FAIL or INCONCLUSIVE against the theory order; None when there is none to check."""
        check = self.check(tolerance)
        return None if check is None else check.verdict

    def to_dict(self, tolerance: float, check: Check | None = None) -> dict[str, Any]:
        """The JSON form; ``check``: its :meth:`check` when already made."""
        check = check if check is not None else self.check(tolerance)
        return {
            "name": self.name, "description": self.description, "theory_order": self.theory_order,
            "depths": self.depths, "tolerances": self.tolerances, "rms_errors": self.errors,
            "evaluations": self.evaluations, "seconds": self.seconds,
            "fit": self.fit.to_dict() if self.fit is not None else None,
            "verdict": None if check is None else check.verdict, "check": None if check is None else check.to_dict(),
            "exact_to_rounding": self.exact_to_rounding,
        }


def steps_to_reach(run: SchemeRun, target: float) -> float | None:
    """The step count L at which the scheme's RMS error reaches ``target``: interpolated log–log between the
    measured depths, extrapolated from the fitted rate beyond the deepest one when the fit is finite (computed in
    logs: ``inf`` beyond :data:`MAX_EXTRAPOLATED_STEPS`); None when the fit is absent or its rate is not
    positive."""
    errors, depths = run.errors, np.asarray(run.depths, dtype=float)
    if not len(depths) or not np.all(np.isfinite(errors)) or np.any(errors <= 0):
        return None
    if errors[0] <= target:
        return float(depths[0])
    for j in range(1, len(depths)):
        if errors[j] <= target:
            u = (math.log(target) - math.log(errors[j - 1])) / (math.log(errors[j]) - math.log(errors[j - 1]))
            return float(math.exp(math.log(depths[j - 1]) + u * (math.log(depths[j]) - math.log(depths[j - 1]))))
    fit = run.fit
    if fit is None or not fit.finite or not fit.rate > 0:
        return None
    log_steps = math.log(depths[-1]) + (math.log(errors[-1]) - math.log(target)) / fit.rate  # checked in logs: no
    if log_steps > math.log(MAX_EXTRAPOLATED_STEPS):                                            # overflow
        return math.inf
    return float(depths[-1] * (errors[-1] / target) ** (1.0 / fit.rate))


def converges(run: SchemeRun) -> bool:
    """Whether the scheme's error is shown to decay: a finite rate fit whose interval lies above 0."""
    return run.fit is not None and run.fit.finite and run.fit.ci[0] > 0


#: against an exact solution, a scheme whose RMS errors are all within this many machine epsilons (times the
#: solution's size) integrates the problem exactly: reported as exact, not fitted (levy-area with Lévy areas)
ROUNDING_FACTOR = 1000.0


#: depths whose RMS error is below this multiple of the reference floor (the two references' RMS gap) are not
#: fitted: the engine's table (:data:`validation.core.one_pass.FLOOR_FACTORS`) for this study's references — ODE: rk4 and
#: rk4 at half the steps (``fixed-halved``); SDE: Euler, or the best scheme, at n and n/2 steps (``brownian-halved``)
SCHEME_FLOOR_FACTORS: Mapping[str, float] = {"ode": FLOOR_FACTORS["fixed-halved"],
                                             "sde": FLOOR_FACTORS["brownian-halved"]}


#: ODE pairs: the reference is rk4 with this many times the deepest step count (second: half as many). An
#: adaptive reference does not reach far enough: dopri8 at rtol = atol = 1e-13 stays ~1e-9 from the converged rk4
#: solution on res2-ode (d = 10, ℓ = 0.1), which is where rk4's own errors are at L ≈ 512
REFERENCE_FACTOR = 4


#: the timed runs of a solve after its warm-up: at most ``timing_repeats``, and no more than fit in this many seconds
#: at the warm-up's pace (at least one)
TIMING_BUDGET_S = 0.5


class _Counted:
    """Counts the calls of a callable (the cost axis of the work–precision diagram)."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        self.fn, self.calls = fn, 0

    def __call__(self, *args: Any) -> torch.Tensor:
        self.calls += 1
        return self.fn(*args)


class _CountedLimit:
    """An Itô limit whose f and g_prod calls are counted (the rest passes through)."""

    def __init__(self, limit: Any) -> None:
        self._limit = limit
        self.f_calls = self.g_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._limit, name)

    def f(self, t, y):
        self.f_calls += 1
        return self._limit.f(t, y)

    def g_prod(self, t, y, v):
        self.g_calls += 1
        return self._limit.g_prod(t, y, v)

    def f_and_g_prod(self, t, y, v):
        return self.f(t, y), self.g_prod(t, y, v)

    def diffusion_matrix(self, t, y):
        self.g_calls += 1
        return self._limit.diffusion_matrix(t, y)

    def stratonovich_correction(self, t, y):
        return self._limit.stratonovich_correction(t, y)

    def diffusion_derivative(self, t, y, v):
        """A closed form counts as one evaluation of g; the generic one runs here, so that its d evaluations of g
        (differentiated) are counted."""
        if type(self._limit).diffusion_derivative is ItoLimit.diffusion_derivative:
            return ItoLimit.diffusion_derivative(self, t, y, v)  # type: ignore[arg-type]
        self.g_calls += 1
        return self._limit.diffusion_derivative(t, y, v)


def timed(solve: Callable[[], Any], repeats: int, after_warm_up: Callable[[], None] | None = None
          ) -> tuple[Any, float]:
    """A work–precision point: ``solve()`` once (the warm-up: first calls pay for allocation and caches; its result
    is returned, and ``after_warm_up()`` is called, e.g. to read evaluation counters), then ``repeats`` timed runs
    (no more than fit in :data:`TIMING_BUDGET_S` at the warm-up's pace, at least one), and their median wall time.
    A warm-up that takes :data:`TIMING_BUDGET_S` or longer is its own timing: its first-call costs (milliseconds)
    are below 1% of it, and running it again would double the study's time for a few per cent of precision. With
    ``repeats`` 0 the warm-up itself is timed. Returns (the warm-up's result, seconds)."""
    clock = time.perf_counter()
    result = solve()
    seconds = [time.perf_counter() - clock]
    if after_warm_up is not None:
        after_warm_up()
    if repeats and seconds[0] < TIMING_BUDGET_S:
        # as many as fit in TIMING_BUDGET_S (at least one): a short solve's timing varies by up to 2x
        repeats = max(1, min(repeats, math.ceil(TIMING_BUDGET_S / max(seconds[0], 1e-9))))
        seconds = []
        for _ in range(repeats):
            clock = time.perf_counter()
            solve()
            seconds.append(time.perf_counter() - clock)
    return result, float(np.median(seconds))


def _final_state(odeint: Callable[..., torch.Tensor], field: Any, h0: torch.Tensor, span: torch.Tensor,
                 options: Mapping[str, Any]) -> torch.Tensor:
    with torch.no_grad():
        return odeint(field, h0, span, **options)[-1]


def _squared(h: torch.Tensor, reference: torch.Tensor) -> np.ndarray:
    return ((h - reference) ** 2).sum(-1).cpu().double().numpy()


def _fit(depths: Sequence[int], squared: np.ndarray, floor: float, settings: SolversSettings, kind: str,
         next_order: float | None) -> RateFit:
    """The convergence study's rate fit (:func:`validation.core.rate_fit.fit_rate`, docs/theory.md §6): the corrected
    model of order ``next_order`` (None: a straight line, ``--fit-model power-law``) on the depths ≥ ``fit_from``
    whose RMS error is at least SCHEME_FLOOR_FACTORS[kind] × the reference floor — never through the floor; no rate
    (FAIL) when fewer than two such depths are left."""
    return fit_rate(depths, squared, "rms", fit_from=settings.fit_from, resamples=settings.resamples,
                    confidence=settings.confidence, seed=settings.seed, correction_order=next_order,
                    floor=floor, floor_factor=SCHEME_FLOOR_FACTORS[kind], tolerance=settings.tolerance)


def _next_order(pair: Pair, settings: SolversSettings) -> float | None:
    """q of the corrected rate model, the pair's ``next_order`` (every scheme is fitted with it: the relative
    correction of a one-step scheme's global error is O(1/L) on ODEs and O(L^-1/2) at worst on SDEs), or None
    for ``--fit-model power-law``."""
    return float(pair.next_order) if settings.fit_model == "corrected" else None


def default_sde_schemes(noise_type: str, *, on_a_pair: bool) -> list[str]:
    """The SDE schemes a comparison runs when ``--schemes`` names none: every scheme valid for ``noise_type`` but those
    declared to run only when named (:attr:`limits.schemes.SDEScheme.on_request`), those too costly on general noise
    (``costly_on_general_noise``: on a pair only; a problem has at most 5 channels), and on a pair those that read
    Lévy areas (``needs_levy_area``: m² entries per step and sample, m = d² for res-1; a problem's are few)."""
    def named_only(name: str) -> bool:
        scheme = get_sde_scheme(name)
        return scheme.on_request or (on_a_pair and (scheme.needs_levy_area or (
            noise_type == "general" and scheme.costly_on_general_noise)))

    return [name for name in sde_schemes_for(noise_type) if not named_only(name)]


def sde_scheme_names(pair: SDEPair, settings: SolversSettings) -> list[str]:
    noise = pair.noise_type
    if settings.schemes is None:
        return default_sde_schemes(noise, on_a_pair=True)
    for name in settings.schemes:
        if name not in SDE_SCHEMES:
            raise SettingsError("schemes", f"{name} is not an SDE scheme ({pair.name} is an SDE pair; SDE schemes: "
                                           f"{', '.join(SDE_SCHEMES)})")
        if not get_sde_scheme(name).supports(noise):
            raise SettingsError("schemes", f"{name} needs {', '.join(sorted(get_sde_scheme(name).noise_types))} "
                                           f"noise; {pair.name} at width {pair.width} has {noise} noise (valid: "
                                           f"{', '.join(sde_schemes_for(noise))})")
    return list(settings.schemes)


def _best_scheme(limit: Any, noise_type: str, levy_areas: bool) -> str:
    """The highest-order scheme valid for ``noise_type`` (on a path with Lévy areas when ``levy_areas``): the reference
    at the fine step count, where Euler's own error (order 1/2) would floor an order-1 scheme. Ties go to a scheme
    that reads the Lévy areas, then to the first in the table."""
    candidates = [name for name in sde_schemes_for(noise_type) if not get_sde_scheme(name).on_request
                  and (levy_areas or not get_sde_scheme(name).needs_levy_area)]
    return max(candidates, key=lambda name: (
        get_sde_scheme(name)(limit, noise_type, levy_areas=levy_areas).strong_order or 0.0,
        get_sde_scheme(name).needs_levy_area, -candidates.index(name)))


def scheme_runs(shared: SharedPath, names: Sequence[str], settings: SolversSettings) -> list[SchemeRun]:
    """Each named scheme at every depth on the shared path, against its reference: errors, evaluations, timings, rate
    fit. Against an exact solution, a scheme whose errors are all at rounding level is reported as exact
    (:func:`_exact_to_rounding`) instead of fitted. A scheme's numbers depend on the shared path and the settings
    only, so the schemes can run in any process (the study's ``--workers``, ``--scheduler``)."""
    depths, runs = list(settings.depths), []
    levy_areas = shared.path.levy_areas is not None
    for name in names:
        cls = get_sde_scheme(name)
        counted = _CountedLimit(shared.limit)
        scheme = cls(counted, shared.noise_type, levy_areas=levy_areas)
        squared, evaluations, seconds = [], [], []
        for L in depths:
            counted.f_calls = counted.g_calls = 0
            h, time_taken = timed(functools.partial(scheme.integrate, shared.h0, shared.path, L, shared.t1),
                                  settings.timing_repeats,
                                  lambda out=evaluations, c=counted: out.append(c.f_calls + c.g_calls))
            seconds.append(time_taken)
            squared.append(_squared(h, shared.reference))
        values = np.stack(squared, axis=1)
        exact = shared.exact_solution and _exact_to_rounding(values, shared.reference)
        runs.append(SchemeRun(name, cls.description, scheme.strong_order, depths, values, evaluations, seconds,
                              None if exact else _fit(depths, values, shared.floor, settings, "sde",
                                                      shared.next_order),
                              exact_to_rounding=exact, at_least=shared.one_sided))
    return runs


def _exact_to_rounding(squared: np.ndarray, reference: torch.Tensor) -> bool:
    """Whether every depth's RMS error is within :data:`ROUNDING_FACTOR` machine epsilons of the solution's RMS size
    (a scheme that integrates the problem exactly: its errors are rounding, not a rate)."""
    scale = 1.0 + math.sqrt(float((reference.double() ** 2).sum(-1).mean()))
    epsilon = torch.finfo(reference.dtype).eps
    return bool(np.all(np.sqrt(np.mean(squared, axis=0)) <= ROUNDING_FACTOR * epsilon * scale))


def sde_inputs(pair: SDEPair, settings: SolversSettings, progress: bool = False) -> SharedPath:
    """The path every scheme reads and its reference. Three paths, by what the schemes need:

    * general noise: the engine's pass records the increments at the deepest depth (and the space-time areas of
      the piecewise-linear fine path where a scheme reads them); the reference is the pass's Euler at n steps;
    * commutative noise: recorded at n steps; the reference is the best scheme at n steps (:func:`_best_scheme`);
    * a scheme that reads Lévy areas (``milstein_levy_area``): the path is recorded at n steps with exact space-time
      areas and Lévy areas (:func:`limits.brownian.record_path`, ``areas="levy"``), and the reference is the best
      scheme on it; the network reads that same path (:func:`limits.pairs.run_network`).
    """
    depths, n = list(settings.depths), settings.reference_steps
    names = sde_scheme_names(pair, settings)
    classes = {name: get_sde_scheme(name) for name in names}
    limit = pair.limit_sde()
    if getattr(limit, "noise_channels", 1) < 1:
        # a user's limit that does not say m (limits.ito.ItoLimit.noise_channels): the path's channels are its
        # noise channels, which the Stratonovich schemes need to assemble g
        limit.noise_channels = pair.noise_dim
    levy_areas = any(cls.needs_levy_area for cls in classes.values())
    commutative = pair.noise_type != "general"
    reference_scheme = _best_scheme(limit, pair.noise_type, levy_areas) if commutative or levy_areas else None
    h0 = pair.initial_state()
    if levy_areas:
        record = n
        coarse = record_path(pair.samples, pair.noise_dim, n, settings.seed, areas="levy", dtype=pair.dtype,
                             device=pair.device, noise_dtype=settings.torch_noise_dtype)
        network_states = None
        levy_text = ("Levy areas of the path: exact space-time areas and Davie-Foster Levy areas (exact conditional "
                     f"mean and variance) on each of the {n} fine steps, merged by Chen's relation")
    else:
        record = n if commutative else depths[-1]
        needs_area = any(cls.needs_space_time_area for cls in classes.values()) or (
            reference_scheme is not None and get_sde_scheme(reference_scheme).needs_space_time_area)
        passed = sde_pass(pair, depths, n, settings.seed, progress=progress, record_steps=record,
                          record_areas=needs_area, noise_dtype=settings.torch_noise_dtype)
        coarse = DyadicPath(passed.recorded, passed.recorded_areas)
        network_states = passed.states["network"]
        levy_text = "E[A | W, H] (space-time area of the piecewise-linear fine path)" if needs_area else None
    exact = limit.exact_solution(h0, coarse)
    if exact is not None:
        # the limit's closed form on the same path (res-1 at width 1 with σ = id: geometric Brownian motion)
        reference, second, reference_scheme = exact, exact, "exact"
        text = "the limit's closed form on the same path (exact)"
    elif reference_scheme is not None:
        scheme = get_sde_scheme(reference_scheme)(limit, pair.noise_type, levy_areas=levy_areas)
        reference, second = scheme.integrate(h0, coarse, n), scheme.integrate(h0, coarse, n // 2)
        text = f"{reference_scheme} (order {scheme.strong_order:g}) on the same path, {n} steps (second: {n // 2})"
    else:
        reference, second = passed.reference, passed.second
        text = f"Euler-Maruyama on the same path, {n} steps (second: {n // 2})"
    gap = math.sqrt(float(np.mean(_squared(second, reference))))
    info = {"text": text, "steps": n, "second_steps": n // 2, "scheme": reference_scheme or "euler",
            "rms_gap": gap, "recorded_steps": record, "levy_area": levy_text}
    return SharedPath(limit, pair.noise_type, coarse, h0, reference, gap, _next_order(pair, settings), info,
                      network_states, exact_solution=exact is not None)


def sde_runs(pair: SDEPair, settings: SolversSettings, shared: SharedPath,
             run_schemes: SchemeRunner | None = None) -> tuple[list[SchemeRun], dict[str, Any]]:
    """The network and every scheme on the pair's shared path (:func:`sde_inputs`); the schemes by ``run_schemes``
    (:func:`scheme_runs` here when None)."""
    depths = list(settings.depths)
    # the network: its states from the pass (bit for bit the stand-alone network on this path), or from the timed run
    timed_networks = [timed(functools.partial(run_network, pair, L, shared.path, shared.h0), settings.timing_repeats)
                      for L in depths]
    states = shared.network_states if shared.network_states is not None else [h for h, _ in timed_networks]
    network = np.stack([_squared(h, shared.reference) for h in states], axis=1)
    runs = [SchemeRun("network", f"the ResNet of depth L ({pair.name})", pair.theory_rate, depths, network,
                      [pair.evaluations_per_layer * L for L in depths], [seconds for _, seconds in timed_networks],
                      _fit(depths, network, shared.floor, settings, pair.kind, shared.next_order))]
    runs += (run_schemes or scheme_runs)(shared, sde_scheme_names(pair, settings), settings)
    return runs, shared.info


def problem_scheme_names(problem: Problem, settings: SolversSettings) -> list[str]:
    """The schemes of a ``--problem`` run: those named (each must support its noise), else every default one."""
    names = list(settings.schemes) if settings.schemes is not None else default_sde_schemes(problem.noise_type,
                                                                                           on_a_pair=False)
    for name in names:
        if not get_sde_scheme(name).supports(problem.noise_type):
            raise SettingsError("schemes", f"{name} needs {', '.join(sorted(get_sde_scheme(name).noise_types))} noise; "
                                           f"{problem.name} has {problem.noise_type} noise (valid: "
                                           f"{', '.join(sde_schemes_for(problem.noise_type))})")
    return names


def problem_inputs(problem: Problem, settings: SolversSettings) -> SharedPath:
    """One path, recorded at ``reference_steps`` fine steps with exact space-time areas and Lévy areas
    (:func:`limits.brownian.record_path`), and the problem's exact solution on it
    (:meth:`limits.problems.Problem.exact`). No floor: every depth is fitted; each order is a lower bound."""
    n, samples = settings.reference_steps, settings.samples
    dtype = settings.torch_dtype
    path = record_path(samples, problem.channels, n, settings.seed, areas="levy", t1=problem.t1, dtype=dtype,
                       device=settings.device, noise_dtype=settings.torch_noise_dtype)
    h0 = problem.initial_state(samples, dtype, settings.device)
    info = {"text": f"the exact solution on the same path ({problem.solution_reads}), {n} recorded steps",
            "steps": n, "second_steps": None, "scheme": "exact", "rms_gap": 0.0, "recorded_steps": n,
            "levy_area": "exact space-time areas and Davie-Foster Levy areas (exact conditional mean and variance) "
                         f"on each of the {n} fine steps, merged by Chen's relation"}
    return SharedPath(problem.limit_sde(), problem.noise_type, path, h0, problem.exact(h0, path), 0.0,
                      None if settings.fit_model != "corrected" else 1.0, info, t1=problem.t1, exact_solution=True,
                      one_sided=True)


def problem_runs(problem: Problem, settings: SolversSettings, shared: SharedPath,
                 run_schemes: SchemeRunner | None = None) -> tuple[list[SchemeRun], dict[str, Any]]:
    """Every applicable scheme against the problem's exact solution on the shared path (:func:`problem_inputs`)."""
    return (run_schemes or scheme_runs)(shared, problem_scheme_names(problem, settings), settings), shared.info


def ode_runs(pair: ODEPair, settings: SolversSettings) -> tuple[list[SchemeRun], list[SchemeRun], dict[str, Any]]:
    from torchdiffeq import odeint

    depths = list(settings.depths)
    next_order = _next_order(pair, settings)
    names = list(settings.schemes) if settings.schemes is not None else [*ODE_FIXED_SCHEMES, *ODE_ADAPTIVE_SCHEMES]
    for name in names:
        if name not in ODE_FIXED_SCHEMES and name not in ODE_ADAPTIVE_SCHEMES:
            raise SettingsError("schemes", f"{name} is not an ODE scheme ({pair.name} is an ODE pair; ODE schemes: "
                                           f"{', '.join([*ODE_FIXED_SCHEMES, *ODE_ADAPTIVE_SCHEMES])})")
    h0 = pair.initial_state()
    span = torch.tensor([0.0, 1.0], dtype=pair.dtype, device=pair.device)
    rtol, atol = settings.rtol, settings.atol
    fine = REFERENCE_FACTOR * depths[-1]
    with torch.no_grad():
        reference = odeint(pair.limit_field, h0, span, method="rk4", options={"step_size": 1.0 / fine})[-1]
        second = odeint(pair.limit_field, h0, span, method="rk4", options={"step_size": 2.0 / fine})[-1]
        adaptive_check = odeint(pair.limit_field, h0, span, rtol=rtol, atol=atol, method="dopri8")[-1]
    gap = math.sqrt(float(np.mean(_squared(second, reference))))
    network_runs = [timed(functools.partial(run_network, pair, L), settings.timing_repeats) for L in depths]
    network = np.stack([_squared(h, reference) for h, _ in network_runs], axis=1)
    runs = [SchemeRun("network", f"the ResNet of depth L ({pair.name})", pair.theory_rate, depths, network,
                      [pair.evaluations_per_layer * L for L in depths], [seconds for _, seconds in network_runs],
                      _fit(depths, network, gap, settings, pair.kind, next_order))]
    adaptive = []
    for name in names:
        field = _Counted(pair.limit_field)
        squared, evaluations, seconds = [], [], []
        keys = depths if name in ODE_FIXED_SCHEMES else list(settings.tolerances)
        for key in keys:
            options = dict(method=name, options={"step_size": 1.0 / key}) if name in ODE_FIXED_SCHEMES \
                else dict(method=name, rtol=key, atol=key)
            field.calls = 0
            h, time_taken = timed(functools.partial(_final_state, odeint, field, h0, span, options),
                                  settings.timing_repeats,
                                  lambda out=evaluations, c=field: out.append(c.calls))
            seconds.append(time_taken)
            squared.append(_squared(h, reference))
        values = np.stack(squared, axis=1)
        if name in ODE_FIXED_SCHEMES:
            order = ODE_FIXED_SCHEMES[name]
            runs.append(SchemeRun(name, f"torchdiffeq fixed-grid {name}", order, depths, values, evaluations, seconds,
                                  _fit(depths, values, gap, settings, "ode", next_order)))
        else:
            adaptive.append(SchemeRun(name, f"torchdiffeq adaptive {name}", None, [], values, evaluations, seconds,
                                      tolerances=keys))
    info = {"text": f"rk4 with {fine} steps (second: {fine // 2})", "steps": fine, "second_steps": fine // 2,
            "scheme": "rk4", "rms_gap": gap,
            "dopri8_check": {"rtol": rtol, "atol": atol,
                             "rms_gap": math.sqrt(float(np.mean(_squared(adaptive_check, reference))))}}
    return runs, adaptive, info
