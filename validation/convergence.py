"""``python -m validation.convergence``: how fast a depth-L ResNet approaches its continuous-depth limit.

For the chosen model (a *pair*, see ``--list``; or your own, ``--model package.module:ClassName``) the
study draws N weight processes, runs the network at every depth L and the limit on the same weights in
one pass, and reports

* a table: depth, RMS error (E‖h_L − H_1‖²)^½, mean-norm error E‖h_L − H_1‖, sup-over-grid error
  (E max_k ‖h_k − H_{k/L}‖²)^½, local slope, the RMS error against a second, coarser reference, and the
  successive difference (E‖h_L − h_{2L}‖²)^½;
* the fitted rate r with a 95% paired-bootstrap interval: e(L) = C L^-r (1 + c L^-q) fitted in log space,
  q being the pair's next order (``Pair.next_order``), on every depth whose error is at least a multiple
  of the reference floor (the two references' RMS gap), the shallowest depth dropped while keeping it moves
  the rate by a resolved amount above a quarter of the tolerance (docs/theory.md §6; ``--fit-model power-law`` for a straight line in log–log);
* the theory's rate and a verdict: PASS when the whole interval lies within ±tolerance of the theory (an
  equivalence test, default ±0.05), FAIL when it lies wholly outside, INCONCLUSIVE when it straddles an
  edge (with the sample count estimated to settle it) or the rate stands on fewer than 3 depths; beside it
  the distance to theory, r − θ as a fraction of the tolerance, and whether the interval resolves it (reported,
  not part of the verdict). For a deliberately wrong limit
  (``cohen-sde-naive``) PASS means the error does not decay: the interval lies within
  [−tolerance, 1/2 − tolerance] and no error is NaN/inf.

The successive differences need no reference: they show that the network converges to *something* at the
measured rate, not that it converges to the limit (a network paired with a wrong limit still has them).

The samples are drawn in blocks of at most --sample-block, each from its own streams (block 0 from the seed's);
--workers N local processes or a Dask cluster (--scheduler) share the blocks out with the numbers of one process
(docs/howto/scale.md). SDE pairs draw the Brownian path in float32 and read it in --dtype (--noise-dtype).

Python: ``validation.convergence.run("res1", samples=200)`` returns a :class:`ConvergenceResult`.

Exit status: 0 PASS, 1 FAIL (also when errors are NaN/inf: no rate is fitted through them), 2 bad input,
3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from limits.pairs import Pair
from validation.core import cli, runtime
from validation.core.checks import FAIL, Check
from validation.core.one_pass import FLOOR_FACTORS, StudyErrors, reference_kind
from validation.core.one_pass import reference_text as engine_reference_text
from validation.core.pair_study import (
    PairSettings, RateFitSettings, ReferenceSettings, ShardingSettings, add_model_arguments, build_pair, estimate_mb, estimate_seconds, fit_processes,
    list_models,
    model_spec, pair_class, study_errors_in_blocks,
)
# imported from here before 0.4; they live in validation.core.pair_study now
from validation.core.pair_study import FIT_MODELS, KIND_DEFAULTS, SampleBlock, block_errors  # noqa: F401
from validation.core.plots import Curve, draw_error_curves, new_axes
from validation.core.results import RunInfo, StudyResult, rows_from_columns, utc_now
from validation.core.settings import SettingsError, check_choice, make_settings, setting
from validation.core.stats import METRIC_HELP, depth_intervals
from validation.core.workers import run_tasks
from validation.core.rate_fit import (
    RateFit, contains_theory, distance_line, fit_rate, measured_rate_check, theory_distance, verdict_rule,
)

__all__ = ["ConvergenceSettings", "ConvergenceResult", "run", "main"]



@dataclass(frozen=True)
class ConvergenceSettings(ShardingSettings, RateFitSettings, ReferenceSettings, PairSettings):
    """Settings of the convergence study (the pair, its size, the rate fit, the blocks of samples, and the
    verdict's metric); ``None`` means the model's default (see ``--list``)."""

    metric: str = setting("rms", "error the verdict is based on: " + "; ".join(f"{k} = {v}" for k, v in
                                                                             METRIC_HELP.items()),
                          choices=("rms", "mean", "sup"), group="fit and verdict")
    compile_steps: bool = setting(False, "SDE pairs: compile each step of the pass (the network's layer, the "
                                         "references' Euler step) with torch.compile; on CUDA one graph launch per "
                                         "step (CUDA graphs) instead of one per operation. The numbers agree with the "
                                         "eager pass to rounding, not bit for bit; compiling takes seconds to tens "
                                         "of seconds", action="store_true", flag="--compile", group="run and output")

    def check(self) -> None:
        super().check()
        check_choice("metric", self.metric, ("rms", "mean", "sup"))


# ------------------------------------------------------------------------------------------------ result
@dataclass(repr=False)  # StudyResult's short repr
class ConvergenceResult(StudyResult):
    """The convergence study's result: errors at every depth, the fitted rates, the verdict.

    Attributes:
        model: the pair's description (``Pair.describe()``).
        theory_rate, theory_source, converges, excluded_rate: what the pair predicts.
        errors: the per-sample squared errors (:class:`validation.core.one_pass.StudyErrors`).
        fits: the rate fits by metric: ``rms``, ``mean``, ``sup``, ``second_reference`` (the verdict metric
            against the second reference) and ``successive`` (‖h_L − h_2L‖; None with fewer than 3 depths).
        reference_text: how the reference was computed, in words.
        next_order: q of the corrected rate model (the pair's ``next_order``; None for ``--fit-model power-law``).
    """

    model: dict[str, Any] = dataclasses.field(default_factory=dict)
    model_spec: str = ""
    theory_rate: float = math.nan
    theory_source: str = ""
    converges: bool = True
    excluded_rate: float | None = None
    errors: StudyErrors | None = dataclasses.field(default=None, repr=False)
    fits: dict[str, RateFit | None] = dataclasses.field(default_factory=dict)
    reference_text: str = ""
    next_order: float | None = None

    study = "convergence"

    @property
    def depths(self) -> list[int]:
        return list(self.settings.depths)

    @property
    def fit(self) -> RateFit:
        """The fit of the verdict's metric."""
        return self.fits[self.settings.metric]

    @property
    def rate(self) -> float:
        """The fitted rate of the verdict's metric."""
        return self.fit.rate

    @property
    def rate_ci(self) -> tuple[float, float]:
        return self.fit.ci

    @functools.cached_property
    def check(self) -> Check:
        """The verdict's check: the equivalence test of the verdict metric's rate interval against
        :func:`~validation.core.rate_fit.verdict_rule` (:func:`validation.core.rate_fit.measured_rate_check`: an INCONCLUSIVE
        says how many samples would settle it); FAIL on NaN/inf errors."""
        s = self.settings
        name = f"rate [{s.metric}] of {self.model.get('name', self.model_spec)}"
        if any(self.errors.nonfinite_network) or self.errors.nonfinite_reference:
            return Check(name, FAIL, "non-finite (NaN/inf) errors: no rate is fitted through them")
        margin = verdict_rule(self.theory_rate, s.tolerance, None if self.converges else self.excluded_rate)
        values = self.errors.sup_sq if s.metric == "sup" else self.errors.final_sq
        return measured_rate_check(name, self.fit, margin, values, s.metric, resamples=s.resamples, seed=s.seed,
                                   what=f"the {int(round(100 * s.confidence))}% interval")

    @property
    def verdict(self) -> str:
        """``PASS``, ``FAIL`` or ``INCONCLUSIVE`` (:attr:`check`)."""
        return self.check.verdict

    @property
    def contains_theory(self) -> bool:
        """The verdict metric's interval contains the theory rate (the distance to theory is not resolved)."""
        return contains_theory(self.fit, self.theory_rate)

    @property
    def successive_differences(self) -> np.ndarray:
        """(E‖h_L − h_2L‖²)^½ for consecutive depths."""
        return np.sqrt(self.errors.successive_sq.mean(axis=0))

    @property
    def reference_gap(self) -> float:
        """RMS distance between the two references."""
        return math.sqrt(float(np.mean(self.errors.reference_gap_sq)))

    def summary(self) -> dict[str, Any]:
        low, high = verdict_rule(self.theory_rate, self.settings.tolerance,
                                 None if self.converges else self.excluded_rate)
        return {
            "model": self.model,
            "model_spec": self.model_spec,
            "theory": {"rate": self.theory_rate, "source": self.theory_source, "converges": self.converges,
                       "excluded_rate": self.excluded_rate},
            "depths": self.depths,
            "fits": {name: (fit.to_dict() if fit is not None else None) for name, fit in self.fits.items()},
            "verdict_metric": self.settings.metric,
            "verdict_interval": [low, high],
            "verdict_check": self.check.to_dict(),
            "contains_theory": self.contains_theory,
            "theory_distance": theory_distance(self.fit, self.theory_rate, self.settings.tolerance),
            "fit_rule": self.fit.rule,
            "successive_differences": self.successive_differences,
            "reference": {**self.errors.reference, "rms_gap": self.reference_gap},
            "nonfinite": {"network_per_depth": self.errors.nonfinite_network,
                          "reference": self.errors.nonfinite_reference, "second_reference": self.errors.nonfinite_second,
                          "samples": self.errors.samples},
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        fits = self.fits
        return rows_from_columns({
            "depth": self.depths, "rms_error": fits["rms"].errors, "mean_norm_error": fits["mean"].errors,
            "sup_grid_error": fits["sup"].errors, "local_slope_rms": [None, *fits["rms"].local],
            "rms_error_second_reference": fits["second_reference"].errors,
            "successive_difference": self.successive_differences,
            "nonfinite_network": self.errors.nonfinite_network,
        })

    def table(self) -> str:
        s, fits, chosen = self.settings, self.fits, self.fit
        depths = self.depths
        lines = [
            f"model {self.model['name']}: {self.model['description']}",
            f"width {self.model['width']}{_model_words(self.model, ', activation ', ', ')}, samples {s.samples}, depths "
            f"{depths}, seed {s.seed}, {s.dtype}"
            f"{f' (path drawn in {s.noise_dtype})' if s.noise_dtype not in (None, s.dtype) else ''} on "
            f"{self.run_info.device}; reference: {self.reference_text}",
            "",
        ]
        header = (f"{'depth':>7} {'RMS error':>11} {'mean-norm':>11} {'sup-grid':>11} {'local slope':>11} "
                  f"{'RMS vs 2nd ref':>14} {'‖h_L−h_2L‖':>11}")
        lines += [header, "-" * len(header)]
        successive = self.successive_differences
        rms = fits["rms"]
        for j, depth in enumerate(depths):
            local = f"{rms.local[j - 1]:11.3f}" if j > 0 else f"{'':11}"
            succ = f"{successive[j]:11.4e}" if j < len(successive) else f"{'':11}"
            marker = "" if rms.fitted[j] else "  (not fitted)"
            lines.append(f"{depth:7d} {rms.errors[j]:11.4e} {fits['mean'].errors[j]:11.4e} "
                         f"{fits['sup'].errors[j]:11.4e} {local} {fits['second_reference'].errors[j]:14.4e} "
                         f"{succ}{marker}")
        lines.append("")
        errors = self.errors
        if any(errors.nonfinite_network) or errors.nonfinite_reference or errors.nonfinite_second:
            per_depth = ", ".join(f"L={L}: {n}" for L, n in zip(depths, errors.nonfinite_network) if n)
            lines.append(f"non-finite (NaN/inf) samples (of {errors.samples}): network {per_depth or 'none'}; reference "
                         f"{errors.nonfinite_reference}, second reference {errors.nonfinite_second} — no rate is "
                         "fitted through them")
        elif not chosen.finite:
            lines.append("errors are exactly zero at some depth (the network equals its limit, e.g. zero weights): "
                         "no rate can be fitted" if "zero" in chosen.method else
                         f"no rate can be fitted: {chosen.method.removeprefix('not fitted: ')}")
        level = int(round(100 * s.confidence))
        fitted_depths = chosen.fitted_depths
        lines.append(f"fit: {chosen.rule}")
        for L, why in zip(depths, chosen.exclusions):
            if why is not None:
                lines.append(f"  L = {L} not fitted: {why}")
        if chosen.finite:
            correction = (f"; correction c = {chosen.correction:+.3g} (share {chosen.correction * fitted_depths[0] ** -chosen.correction_order:+.3f} at "
                          f"L = {fitted_depths[0]})" if chosen.correction is not None else "")
            lines.append(f"fitted on depths {fitted_depths[0]}…{fitted_depths[-1]} ({len(fitted_depths)} depths){correction}, "
                         f"{level}% intervals by {chosen.method}, {s.resamples} resamples")
        shown = [("rms", "rms"), ("mean", "mean"), ("sup", "sup"), ("second_reference", "rms vs 2nd ref"),
                 ("successive", "successive")]
        for key, name in shown:
            fit = fits.get(key)
            if fit is None:
                continue
            mark = "  <- verdict" if key == s.metric else ""
            if fit.finite:
                lines.append(f"  rate [{name:>14}]  {fit.rate:6.3f}   {level}% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]"
                             f"{mark}")
            else:
                lines.append(f"  rate [{name:>14}]  not fitted ({fit.method.removeprefix('not fitted: ')}){mark}")
        shift = fits["second_reference"].rate - fits["rms"].rate
        lines.append(f"  reference check: RMS gap between the two references {self.reference_gap:.3e}; "
                     f"rate shift vs 2nd ref {f'{shift:+.3f}' if math.isfinite(shift) else 'n/a (no rate fitted)'}")
        check = self.check
        if not chosen.finite:
            lines.append(f"theory rate {self.theory_rate:g} ({self.theory_source})")
            lines.append(f"verdict: {check.verdict} — {check.detail}")
        else:
            if self.converges:
                lines.append(f"theory rate {self.theory_rate:g} ({self.theory_source}); tolerance ±{s.tolerance:g}")
            else:
                lines.append(f"this limit is deliberately wrong: the check is that the error does NOT decay at rate "
                             f"{self.excluded_rate:g} and does not grow ({self.theory_source})")
            lines.append(f"verdict: {check.verdict} — {check.detail}")
            if self.converges:  # a deliberately wrong limit has no theory value to be near
                lines.append(distance_line(self.fit, self.theory_rate, s.tolerance))
        lines.append(f"time {self.run_info.wall_time_s:.1f} s")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        fig, ax = new_axes(ax)
        fits, s = self.fits, self.settings
        depths = self.depths
        band = depth_intervals(self.errors.final_sq, "rms", s.confidence, seed=s.seed)
        curves = [
            Curve("RMS error", depths, fits["rms"].errors, band=band, rate=fits["rms"].rate, rate_ci=fits["rms"].ci,
                  fitted=fits["rms"].fitted, style="o-"),
            Curve("mean-norm error", depths, fits["mean"].errors, rate=fits["mean"].rate,
                  fitted=fits["mean"].fitted, style="s--"),
            Curve("sup-over-grid error", depths, fits["sup"].errors, rate=fits["sup"].rate,
                  fitted=fits["sup"].fitted, style="^:"),
            Curve("RMS vs 2nd reference", depths, fits["second_reference"].errors,
                  rate=fits["second_reference"].rate, fitted=fits["second_reference"].fitted, style="x-"),
        ]
        if fits.get("successive") is not None:
            curves.append(Curve("successive diff. ||h_L - h_2L||", depths[:-1], fits["successive"].errors,
                                rate=fits["successive"].rate, fitted=fits["successive"].fitted, style="d-."))
        subtitle = (f"d={self.model['width']}{_model_words(self.model, ', σ=', ', ')}, N={s.samples}, seed={s.seed}; "
                    f"verdict metric {s.metric}; band: 95% bootstrap interval of the RMS error")
        draw_error_curves(ax, curves, title=f"{self.model['name']}: {self.model['description']}", subtitle=subtitle,
                          theory_rate=self.theory_rate if self.converges else None, theory_label="theory",
                          ylabel="error (same weights)")
        return fig


def _model_words(model: dict[str, Any], activation_prefix: str, separator: str) -> str:
    """The activation (only when the pair reads one) and the ``--set`` options given, as the pair read them."""
    words = f"{activation_prefix}{model['activation']}" if model.get("activation") else ""
    options = model.get("options_given") or {}
    if options:
        words += separator + ", ".join(f"{key}={value}" for key, value in options.items())
    return words


# ------------------------------------------------------------------------------------------------ run
def run(model: str | type[Pair] | Pair = "res1", settings: ConvergenceSettings | None = None, /, *,
        progress: bool = False, threads: int | None = 1, command_line: str | None = None,
        **overrides: Any) -> ConvergenceResult:
    """Measure how fast the depth-L network of ``model`` converges to its limit.

    Args:
        model: a shipped pair's name (``limits.pair_names()``), ``"package.module:ClassName"``, a
            :class:`~limits.Pair` subclass, or a Pair instance (which fixes samples, width, seed, dtype and
            device).
        settings: a :class:`ConvergenceSettings`; None for the defaults (the command line's).
        progress: show progress bars.
        threads: torch intra-op threads for the run, restored after (default 1, as on the command line: the
            per-step tensors are small, and a second thread mostly synchronises); None leaves torch alone.
        command_line: the command as typed, recorded in the result (the CLI passes it).
        **overrides: settings by name, e.g. ``samples=200, depths=(4, 8, 16, 32)``.

    Returns:
        A :class:`ConvergenceResult`: ``.verdict``, ``.rate``, ``.rate_ci``, ``.fits``, ``.table()``,
        ``.plot()``, ``.to_dict()``, ``.save(path)``.

    Raises:
        SettingsError, PairError, ActivationError: a bad setting (the message names it and the allowed range).

    Example:
        >>> from validation import convergence
        >>> result = convergence.run("res1", samples=100, depths=(4, 8, 16, 32), reference_steps=512)
        >>> result.verdict, round(result.rate, 2)   # doctest: +SKIP
        ('PASS', 0.5)
    """
    settings = make_settings(ConvergenceSettings, settings, overrides)
    _refuse_tolerances_of_a_fixed_reference(pair_class(model), settings)
    pair, settings = build_pair(model, settings, first_block=True)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        errors = study_errors_in_blocks(model, pair, settings, progress)
        wall = time.perf_counter() - clock
        next_order = float(pair.next_order) if settings.fit_model == "corrected" else None
        fits = _fit_all(errors, settings, next_order, reference_kind(pair))
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=pair.device, started=started,
                               wall_time_s=wall, command=command_line)
    if pair.kind == "sde":
        reference_text = (f"Euler on the same path, {settings.reference_steps} steps (second: "
                          f"{settings.reference_steps // 2})")
    else:
        reference_text = engine_reference_text(errors.reference)
    return ConvergenceResult(
        settings=settings, run_info=info, model=pair.describe(), model_spec=model_spec(model),
        theory_rate=pair.theory_rate,
        theory_source=pair.theory_source, converges=pair.converges,
        excluded_rate=None if pair.converges else pair.excluded_rate, errors=errors, fits=fits,
        reference_text=reference_text, next_order=next_order,
    )


def _refuse_tolerances_of_a_fixed_reference(cls: type, settings: ConvergenceSettings) -> None:
    """--rtol and --atol tune an adaptive reference; a pair that declares a fixed-step one would ignore them."""
    if getattr(cls, "reference_refinement", None) is None:
        return
    for name in ("rtol", "atol"):
        if getattr(settings, name) is not None:
            raise SettingsError(name, f"does not apply to {cls.name}: it measures against a fixed-step reference "
                                      f"({cls.reference_method} with {cls.reference_refinement} steps per layer of the "
                                      "deepest depth, docs/theory.md §6), which has no tolerance")


def _fit_all(errors: StudyErrors, settings: ConvergenceSettings, next_order: float | None,
             reference: str) -> dict[str, RateFit | None]:
    """Every error measure's rate fit, with the same rule, bootstrap settings and seed. The errors against a
    reference are fitted above its floor (the two references' RMS gap times ``FLOOR_FACTORS[reference]``, the
    reference's kind: :data:`validation.core.one_pass.FLOOR_FACTORS`); the successive differences need no reference, so
    have no floor. The fits are independent, so they run side by side in the study's local worker processes
    (each fit's numbers are its own: the same whatever the workers)."""
    floor = math.sqrt(float(np.mean(errors.reference_gap_sq))) if settings.fit_model == "corrected" else None
    if floor is not None and not math.isfinite(floor):
        floor = None  # a reference blew up: nothing is fitted anyway (the non-finite errors are reported)
    options = dict(fit_from=settings.fit_from, resamples=settings.resamples, confidence=settings.confidence,
                   seed=settings.seed, correction_order=next_order, tolerance=settings.tolerance)
    above_floor = dict(options, floor=floor, floor_factor=FLOOR_FACTORS[reference])
    depths = errors.depths
    jobs: dict[str, tuple[Any, ...]] = {
        "rms": (depths, errors.final_sq, "rms", above_floor),
        "mean": (depths, errors.final_sq, "mean", above_floor),
        "sup": (depths, errors.sup_sq, "sup", above_floor),
        "second_reference": (depths, errors.final_sq_second, settings.metric if settings.metric != "sup" else "rms",
                             above_floor),
    }
    successive_depths = depths[:-1]
    succ_from = settings.fit_from if settings.fit_from is not None and \
        sum(L >= settings.fit_from for L in successive_depths) >= 2 else None
    if len(successive_depths) >= 2:
        jobs["successive"] = (successive_depths, errors.successive_sq, "rms", {**options, "fit_from": succ_from})
    fitted = dict(zip(jobs, run_tasks(_fit_job, list(jobs.values()), fit_processes(settings, len(jobs)))))
    return {name: fitted.get(name) for name in ("rms", "mean", "sup", "second_reference", "successive")}


def _fit_job(job: tuple[Any, ...]) -> RateFit:
    """One fit of :func:`_fit_all` (a worker's task): ``fit_rate(depths, values, metric, **options)``."""
    depths, values, metric, options = job
    return fit_rate(depths, values, metric, **options)


# ------------------------------------------------------------------------------------------------ CLI
EPILOG = """\
examples:
  python -m validation.convergence --model res1
  python -m validation.convergence --model res1 --activation relu --weight-var 2 --plot res1.png --json res1.json
  python -m validation.convergence --model res2-ode --depths 8:2048 --samples 100
  python -m validation.convergence --model cohen-ode --beta 0.3 --activation tanh
  python -m validation.convergence --model my_pairs:LeakyRes1          # your own pair (module in this folder)
  python -m validation.convergence --list
"""



COMMAND = cli.Command(
    prog="python -m validation.convergence",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=ConvergenceSettings,
    run=run,
    positional=("model",),
    add_arguments=add_model_arguments,
    listing=list_models,
    estimate_mb=functools.partial(estimate_mb, fits_in_workers=True),
    estimate_seconds=estimate_seconds,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)


if __name__ == "__main__":
    cli.run_command_line(main)
