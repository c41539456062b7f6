"""``python -m validation.convergence``: how fast a depth-L ResNet approaches its continuous-depth limit.

For the chosen model (a *pair*, see ``--list``; or your own, ``--model package.module:ClassName``) the
study draws N weight processes, runs the network at every depth L and the limit on the same weights in
one pass, and reports

* a table: depth, RMS error (E‖h_L − H_1‖²)^½, mean-norm error E‖h_L − H_1‖, sup-over-grid error
  (E max_k ‖h_k − H_{k/L}‖²)^½, local slope, the RMS error against a second, coarser reference, and the
  successive difference (E‖h_L − h_{2L}‖²)^½;
* the fitted rate r with a 95% paired-bootstrap interval: e(L) = C L^-r (1 + c L^-q) fitted in log space,
  q being the pair's next order (``Pair.next_order``), on every depth whose error is at least a multiple
  of the reference floor (the two references' RMS gap), the shallowest depth dropped while the model
  does not fit it (docs/theory.md §6; ``--fit-model power-law`` for a straight line in log–log);
* the theory's rate and a verdict: PASS when the whole interval lies within ±tolerance of the theory (an
  equivalence test, default ±0.05), FAIL otherwise; beside it the stricter line "the interval contains the
  theory value" (reported, not part of the verdict). For a deliberately wrong limit
  (``cohen-sde-naive``) PASS means the error does not decay: the interval lies within
  [−tolerance, 1/2 − tolerance] and no error is NaN/inf.

The successive differences need no reference: they show that the network converges to *something* at the
measured rate, not that it converges to the limit (a network paired with a wrong limit still has them).

The samples are drawn in blocks of at most --sample-block, each from its own streams (block 0 from the seed's);
--workers N local processes or a Dask cluster (--scheduler) share the blocks out with the numbers of one process
(docs/howto/scale.md). SDE pairs draw the Brownian path in float32 and read it in --dtype (--noise-dtype).

Python: ``validation.convergence.run("res1", samples=200)`` returns a :class:`ConvergenceResult`.

Exit status: 0 PASS, 1 FAIL (also when errors are NaN/inf: no rate is fitted through them), 2 bad input,
3 internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
import types
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.activations import ACTIVATION_NAMES, ActivationError, get_activation
from limits.pairs import ModelConfig, Pair
from limits.registry import get_pair, pair_names
from validation import cli, runtime
from validation.engine import SAMPLE_BLOCK, StudyErrors, block_seed, merge_errors, sample_blocks, study_errors
from validation.plots import Curve, draw_error_curves, new_axes
from validation.results import RunInfo, StudyResult, rows_from_columns, utc_now
from validation.settings import (
    CommonSettings, SettingsError, check_choice, check_depths, check_float, check_int, check_power_of_two,
    check_workers, make_settings, parse_name_value, parse_power_of_two_list, resolve_device, setting, torch_dtype,
)
from validation.stats import (
    METRIC_HELP, RateFit, contains_theory, depth_intervals, fit_rate, verdict, verdict_rule,
)
from validation.workers import run_tasks

__all__ = ["ConvergenceSettings", "ConvergenceResult", "run", "main", "KIND_DEFAULTS", "FLOOR_FACTORS", "FIT_MODELS",
           "list_models", "SampleBlock", "block_errors"]

#: study size when neither the settings nor the pair's ``default_study`` say otherwise. No depth is dropped
#: by hand: the corrected fit (docs/theory.md §6) models the pre-asymptotic bend, and drops a shallow depth
#: only when the model does not fit it (``fit_from`` stays available as an explicit override).
KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "sde": {"depths": (4, 8, 16, 32, 64, 128, 256), "samples": 500, "reference_factor": 32, "width": 10},
    "ode": {"depths": (8, 16, 32, 64, 128, 256, 512, 1024), "samples": 200, "width": 10},
}
#: the rate models of ``--fit-model``
FIT_MODELS = ("corrected", "power-law")
#: depths whose error is below this multiple of the reference floor — the RMS gap between the two references —
#: are not fitted. SDE: the references are Euler with M and M/2 steps of the same path, so the gap is about the
#: primary reference's own error, and that error is nested in the network's (e_measured² ≈ e² − e_ref²): at 3×
#: a local slope moves by about r/9 at that one depth (the default studies' deepest depths sit at 5–6×: r/30).
#: ODE: the second reference is 100× looser, so the gap is *its* error, ≥ 20× the primary's (dopri5, measured on
#: res2-rk4: 6e-8 against 3e-9): an error above 0.5× the gap is ≥ 10× the primary reference's error
FLOOR_FACTORS: dict[str, float] = {"sde": 3.0, "ode": 0.5}

#: the tightest ODE tolerance an adaptive solver can meet in float32 (machine epsilon 1.2e-7), and the default
#: in float64
FLOAT32_TOLERANCE = 1e-6
FLOAT64_TOLERANCE = 1e-10
#: the tightest tolerance allowed in float64: below it dopri5 needs more steps than it can finish
FLOAT64_MIN_TOLERANCE = 1e-13
MAX_REFERENCE_STEPS = 1 << 24
MAX_SAMPLES = 10_000_000


@dataclass(frozen=True)
class ConvergenceSettings(CommonSettings):
    """Settings of the convergence study; ``None`` means the model's default (see ``--list``)."""

    width: int | None = setting(None, "width d of the hidden state", parse=int, group="model",
                                default_text="the model's, usually 10")
    activation: str | None = setting(None, f"activation σ: {', '.join(ACTIVATION_NAMES)} (prelu:SLOPE)",
                                     group="model", default_text="the model's")
    weight_var: float | None = setting(None, "s²: i.i.d. weight entries have variance s²/d (res1: 2 is He "
                                             "initialisation, the paper's choice); for the models that read it",
                                       parse=float, group="model", default_text="1")
    lengthscale: float | None = setting(None, "length-scale ℓ of the RBF kernel of smooth weights (ODE pairs, "
                                              "Cohen's smooth trend)", parse=float, group="model",
                                        default_text="0.1")
    input_dim: int | None = setting(None, "add an input layer h_0 = A x with x in R^n (A entries N(0, 1/n))",
                                    parse=int, group="model", default_text="none: h_0 = x ~ N(0, I_d)")
    beta: float | None = setting(None, "β of Cohen et al.'s ODE regime (cohen-ode), in (0, 1)", parse=float,
                                 group="model", default_text="the model's")
    options: Mapping[str, Any] = setting((), "a model-specific setting (repeatable); --list shows each model's",
                                         parse=parse_name_value, flag="--set", metavar="NAME=VALUE",
                                         action="append", group="model", default_text="none")
    depths: tuple[int, ...] | None = setting(None, "depths L: powers of two, increasing, as '4,8,16' or a range "
                                                   "'4:256'", parse=parse_power_of_two_list,
                                             default_text="the model's; SDE 4:256, ODE 8:1024")
    samples: int | None = setting(None, "number N of independent weight draws (paths)", parse=int,
                                  default_text="the model's; SDE 500, ODE 200")
    reference_steps: int | None = setting(None, "SDE pairs: steps of the fine Euler reference on the same path, a "
                                                "power of two finer than the deepest depth; a second reference "
                                                "uses half", parse=int, default_text="32 × the deepest depth")
    noise_dtype: str | None = setting(None, "SDE pairs: the type the Brownian path's normals are drawn in, then cast "
                                            "to --dtype; float32 draws them ~4× faster and leaves the strong error "
                                            "unaffected (network and limit read the same increments), but it is "
                                            "another path: the seed's numbers change (docs/theory.md §6)",
                                      choices=("float32", "float64"),
                                      default_text="float32; float64 repeats the numbers of versions before 0.3")
    rtol: float | None = setting(None, "ODE pairs: relative tolerance of the adaptive dopri5 reference (second "
                                       "reference: 100× looser)", parse=float,
                                 default_text="1e-10 in float64, 1e-6 in float32")
    atol: float | None = setting(None, "ODE pairs: absolute tolerance of the reference", parse=float,
                                 default_text="as --rtol")
    metric: str = setting("rms", "error the verdict is based on: " + "; ".join(f"{k} = {v}" for k, v in
                                                                             METRIC_HELP.items()),
                          choices=("rms", "mean", "sup"), group="fit and verdict")
    fit_model: str = setting("corrected", "rate model: corrected = C L^-r (1 + c L^-q) with q the pair's next order, "
                                          "above the reference floor (docs/theory.md §6); power-law = a straight "
                                          "line in log–log", choices=FIT_MODELS, group="fit and verdict")
    fit_from: int | None = setting(None, "fit only depths ≥ this (pre-asymptotic depths dropped by hand, still "
                                         "shown in the table)", parse=int, group="fit and verdict",
                                   default_text="the model's; none: every depth above the reference floor")
    tolerance: float = setting(0.05, "δ of the equivalence test: PASS iff the whole rate interval lies in "
                                     "[theory − δ, theory + δ]", parse=float, group="fit and verdict")
    confidence: float = setting(0.95, "level of the bootstrap intervals, in (0, 1)", parse=float,
                                group="fit and verdict")
    bootstrap: int = setting(2000, "bootstrap resamples (100 to 100000)", parse=int, group="fit and verdict")
    sample_block: int = setting(SAMPLE_BLOCK, "samples per block: block k draws from its own streams (block 0 from the "
                                              "seed's), so the numbers depend on this, never on --workers or "
                                              "--scheduler", parse=int, group="run and output")
    workers: int = setting(1, "processes (each single-threaded) sharing the blocks of samples", parse=int,
                           group="run and output")
    scheduler: str | None = setting(None, "run the blocks of samples on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler)",
                                    group="run and output", default_text="none: --workers local processes")

    def check(self) -> None:
        super().check()
        self._set("sample_block", check_int("sample_block", self.sample_block, 1, MAX_SAMPLES))
        check_workers(self)
        if self.width is not None:
            self._set("width", check_int("width", self.width, 1))
        if self.activation is not None:
            if not isinstance(self.activation, str):
                raise SettingsError("activation", f"{self.activation!r} is not an activation name")
            try:
                get_activation(self.activation)  # the name is checked here; the model checks what it needs
            except ActivationError as exc:
                raise SettingsError("activation", str(exc)) from None
        if self.weight_var is not None:
            self._set("weight_var", check_float("weight_var", self.weight_var, 0))
        if self.lengthscale is not None:
            self._set("lengthscale", check_float("lengthscale", self.lengthscale, 0, strict_min=True))
        if self.input_dim is not None:
            self._set("input_dim", check_int("input_dim", self.input_dim, 1))
        if self.beta is not None:
            self._set("beta", check_float("beta", self.beta))
        try:
            options = dict(self.options)
        except (TypeError, ValueError):
            raise SettingsError("options", f"{self.options!r} is not a mapping NAME → VALUE") from None
        self._set("options", types.MappingProxyType(options))
        if self.depths is not None:
            self._set("depths", check_depths("depths", self.depths, powers_of_two=True, maximum=MAX_REFERENCE_STEPS))
        if self.samples is not None:
            self._set("samples", check_int("samples", self.samples, 2, MAX_SAMPLES))
        if self.reference_steps is not None:
            self._set("reference_steps", check_power_of_two("reference_steps", self.reference_steps, 2))
            check_int("reference_steps", self.reference_steps, 2, MAX_REFERENCE_STEPS)
        minimum = FLOAT32_TOLERANCE if self.dtype == "float32" else FLOAT64_MIN_TOLERANCE
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if value is not None:
                value = check_float(name, value, 0, 1, strict_min=True)
                if value < minimum:
                    raise SettingsError(name, f"{value:g} is below what {self.dtype} can resolve (must be ≥ "
                                              f"{minimum:g} with --dtype {self.dtype})"
                                              + ("; use --dtype float64" if self.dtype == "float32" else ""))
                self._set(name, value)
        if self.noise_dtype is not None:
            check_choice("noise_dtype", self.noise_dtype, ("float32", "float64"))
        check_choice("metric", self.metric, ("rms", "mean", "sup"))
        check_choice("fit_model", self.fit_model, FIT_MODELS)
        if self.fit_from is not None:
            self._set("fit_from", check_int("fit_from", self.fit_from, 1))
        self._set("tolerance", check_float("tolerance", self.tolerance, 0, strict_min=True))
        self._set("confidence", check_float("confidence", self.confidence, 0, 1, strict_min=True, strict_max=True))
        self._set("bootstrap", check_int("bootstrap", self.bootstrap, 100, 100_000))


def noise_dtype(settings: ConvergenceSettings) -> torch.dtype | None:
    """The torch type the path's normals are drawn in (None: the study's dtype)."""
    return None if settings.noise_dtype is None else torch_dtype(settings.noise_dtype)


def list_models() -> str:
    """Every shipped model with its kind, theory source, default activation and settings (``--list``)."""
    lines = []
    for name in pair_names():
        cls = get_pair(name)
        lines.append(f"{name:18s} [{cls.kind}] {cls.description}")
        reads = ", ".join(["width", *sorted(cls.config_fields)])
        lines.append(f"{'':18s} theory: {cls.theory_source}; default activation {cls.default_activation}; "
                     f"reads {reads}")
        for key, spec in cls.option_specs.items():
            default = "default: none" if spec.default in ("", None) else f"default {spec.default!r}"
            lines.append(f"{'':18s} --set {key}=… ({default}): {spec.help}")
    lines.append("your own pair: --model package.module:ClassName or path/to/file.py:ClassName "
                 "(a subclass of limits.SDEPair or limits.ODEPair; see docs/howto/own_model.md)")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ result
@dataclass
class ConvergenceResult(StudyResult):
    """The convergence study's result: errors at every depth, the fitted rates, the verdict.

    Attributes:
        model: the pair's description (``Pair.describe()``).
        theory_rate, theory_source, converges, excluded_rate: what the pair predicts.
        errors: the per-sample squared errors (:class:`validation.engine.StudyErrors`).
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

    @property
    def verdict(self) -> str:
        if any(self.errors.nonfinite_network) or self.errors.nonfinite_reference:
            return "FAIL"
        return verdict(self.fit, self.theory_rate, self.settings.tolerance,
                       excluded=None if self.converges else self.excluded_rate)

    @property
    def contains_theory(self) -> bool:
        """The stricter line beside the verdict: the verdict metric's interval contains the theory rate."""
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
            "contains_theory": self.contains_theory,
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
            f"width {self.model['width']}, activation {self.model['activation']}, samples {s.samples}, depths "
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
                         f"{level}% intervals by {chosen.method}, {s.bootstrap} resamples")
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
        outcome = self.verdict
        if not chosen.finite:
            lines.append(f"theory rate {self.theory_rate:g} ({self.theory_source})")
            lines.append(f"verdict: {outcome} — no rate could be fitted")
        elif self.converges:
            low, high = verdict_rule(self.theory_rate, s.tolerance)
            lines.append(f"theory rate {self.theory_rate:g} ({self.theory_source}); tolerance ±{s.tolerance:g}")
            lines.append(f"verdict: {outcome} — the {level}% interval [{chosen.ci[0]:.3f}, {chosen.ci[1]:.3f}] "
                         f"{'lies' if outcome == 'PASS' else 'does not lie'} within [{low:.3f}, {high:.3f}]")
            lines.append(self._contains_line(level))
        else:
            low, high = verdict_rule(self.theory_rate, s.tolerance, self.excluded_rate)
            lines.append(f"this limit is deliberately wrong: the check is that the error does NOT decay at rate "
                         f"{self.excluded_rate:g} and does not grow ({self.theory_source})")
            lines.append(f"verdict: {outcome} — the {level}% interval [{chosen.ci[0]:.3f}, {chosen.ci[1]:.3f}] "
                         f"{'lies' if outcome == 'PASS' else 'does not lie'} within [{low:.3f}, {high:.3f}]")
            lines.append(self._contains_line(level))
        lines.append(f"time {self.run_info.wall_time_s:.1f} s")
        return "\n".join(lines)

    def _contains_line(self, level: int) -> str:
        """The stricter line, reported beside the verdict (not part of it)."""
        low, high = self.fit.ci
        return (f"stricter: the {level}% interval {'contains' if self.contains_theory else 'does NOT contain'} the "
                f"theory value {self.theory_rate:g} (reported, not part of the verdict)")

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
        subtitle = (f"d={self.model['width']}, σ={self.model['activation']}, N={s.samples}, seed={s.seed}; "
                    f"verdict metric {s.metric}; band: 95% bootstrap interval of the RMS error")
        draw_error_curves(ax, curves, title=f"{self.model['name']}: {self.model['description']}", subtitle=subtitle,
                          theory_rate=self.theory_rate if self.converges else None, theory_label="theory",
                          ylabel="error (same weights)")
        return fig


# ------------------------------------------------------------------------------------------------ run
def _resolve(cls: type[Pair], settings: ConvergenceSettings) -> ConvergenceSettings:
    """The settings with every model-dependent default filled in, and the checks that need the model."""
    defaults = {**KIND_DEFAULTS[cls.kind], **cls.default_study}
    depths = tuple(settings.depths or defaults["depths"])
    changes: dict[str, Any] = {
        "depths": depths,
        "samples": settings.samples or defaults["samples"],
        "width": settings.width or defaults["width"],
        # a recommended fit_from belongs to the recommended depths: with depths of one's own, the window rule decides
        "fit_from": settings.fit_from if settings.fit_from is not None else
        (defaults.get("fit_from") if not settings.depths else None),
    }
    if cls.kind == "sde":
        for name in ("rtol", "atol"):
            if getattr(settings, name) is not None:
                raise SettingsError(name, f"applies to ODE pairs only; {cls.name} is an SDE pair (use "
                                          "--reference-steps)")
        reference = settings.reference_steps
        if reference is None:
            reference = defaults.get("reference_steps") or defaults["reference_factor"] * depths[-1]
            reference = max(reference, 2 * depths[-1])
            if reference > MAX_REFERENCE_STEPS:
                raise SettingsError("depths", f"the deepest depth {depths[-1]} needs a reference of {reference} Euler "
                                              f"steps by default, more than {MAX_REFERENCE_STEPS}; lower the depths "
                                              f"or give --reference-steps (≤ {MAX_REFERENCE_STEPS})")
        if reference <= depths[-1]:
            raise SettingsError("reference_steps", f"{reference} must be a power of two finer than the deepest "
                                                   f"depth {depths[-1]}")
        changes["reference_steps"] = reference
        # drawn in float32 unless asked otherwise: every reader reads the same increments (docs/theory.md §6)
        changes["noise_dtype"] = settings.noise_dtype or "float32"
    else:
        if settings.reference_steps is not None:
            raise SettingsError("reference_steps", f"applies to SDE pairs only; {cls.name} is an ODE pair (use "
                                                   "--rtol)")
        if settings.noise_dtype is not None:
            raise SettingsError("noise_dtype", f"applies to SDE pairs only; {cls.name} is an ODE pair (its smooth "
                                               "weights are drawn in --dtype)")
        floor = FLOAT32_TOLERANCE if settings.dtype == "float32" else FLOAT64_TOLERANCE
        if settings.dtype != "float32" and defaults.get("rtol") is not None:
            floor = defaults["rtol"]  # a pair whose errors fall fast asks for a tighter reference (float64 only)
        changes["rtol"] = settings.rtol if settings.rtol is not None else floor
        changes["atol"] = settings.atol if settings.atol is not None else changes["rtol"]
    fit_from = changes["fit_from"]
    if fit_from is not None and sum(L >= fit_from for L in depths) < 2:
        raise SettingsError("fit_from", f"{fit_from} leaves fewer than two of the depths {list(depths)}")
    return dataclasses.replace(settings, **changes)


def build_pair(model: str | type[Pair] | Pair, settings: ConvergenceSettings, *,
               first_block: bool = False) -> tuple[Pair, ConvergenceSettings]:
    """The pair and the resolved settings, with every check that needs the model made — nothing is computed.

    A Pair instance brings its own samples, width, seed, dtype and device (settings that contradict it are an
    error). The resolved settings name the values the model chose for the fields it reads (activation, weight
    variance, length-scale, β), so that ``run(model_spec, **settings)`` repeats the run. With ``first_block``
    the pair built is that of the first block of samples (at most ``sample_block`` of them, :func:`run`).
    """
    if isinstance(model, Pair):
        pair = model
        fixed = {"samples": pair.samples, "width": pair.width, "seed": pair.seed,
                 "dtype": str(pair.dtype).replace("torch.", ""), "device": str(pair.device)}
        defaults = ConvergenceSettings()
        for name, value in fixed.items():
            given = getattr(settings, name)
            if given not in (None, getattr(defaults, name), value):
                raise SettingsError(name, f"{given!r} conflicts with the pair object's {name}={value!r} (a Pair "
                                          "instance fixes it; pass the class or its name to choose it here)")
        resolved = _resolve(type(pair), dataclasses.replace(settings, **fixed))
    else:
        cls = get_pair(model)
        config = ModelConfig(width=settings.width or {**KIND_DEFAULTS[cls.kind], **cls.default_study}["width"],
                             activation=settings.activation, weight_var=settings.weight_var,
                             lengthscale=settings.lengthscale, input_dim=settings.input_dim, beta=settings.beta,
                             options=dict(settings.options))
        resolved = _resolve(cls, dataclasses.replace(settings, width=config.width))
        samples = min(resolved.samples, resolved.sample_block) if first_block else resolved.samples
        pair = cls(config, samples, seed=resolved.seed, dtype=resolved.torch_dtype,
                   device=resolve_device(resolved.device))
    chosen = {"activation": pair.activation.name, "weight_var": pair.weight_var, "lengthscale": pair.lengthscale,
              "beta": pair.beta}
    resolved = dataclasses.replace(resolved, **{k: v for k, v in chosen.items() if k in pair.config_fields})
    return pair, resolved


def model_spec(model: str | type[Pair] | Pair) -> str:
    """A text naming the model that :func:`limits.get_pair` accepts: the name or path given, else
    ``module:ClassName`` of its class."""
    if isinstance(model, str):
        return model
    cls = model if isinstance(model, type) else type(model)
    return cls.name if cls.name in pair_names() and get_pair(cls.name) is cls else f"{cls.__module__}:{cls.__qualname__}"


def _sizes(model: str | type[Pair] | Pair, settings: ConvergenceSettings) -> tuple[type[Pair], ConvergenceSettings]:
    """The pair class and the settings resolved for it (every study-level check made; nothing built)."""
    cls = type(model) if isinstance(model, Pair) else get_pair(model)
    if isinstance(model, Pair):
        settings = dataclasses.replace(settings, samples=model.samples, width=model.width)
    width = settings.width or {**KIND_DEFAULTS[cls.kind], **cls.default_study}["width"]
    return cls, _resolve(cls, dataclasses.replace(settings, width=width))


def estimate_mb(model: str | type[Pair] | Pair, settings: ConvergenceSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB (before anything is allocated)."""
    cls, s = _sizes(model, settings)
    # one block of samples is in memory per process; the per-sample results of all of them in the parent
    samples, width, depths = min(s.samples, s.sample_block), s.width, s.depths
    processes = s.workers if s.scheduler is None else 1
    item = 4 if s.dtype == "float32" else 8
    state = samples * width * item * (4 * len(depths) + 8)
    if cls.kind == "sde":
        per_step = samples * (width * width + width)
        block = max(2 * per_step, min(1 << 23, per_step * s.reference_steps))
        work = 3 * block * item
    else:
        terms = 40  # Karhunen–Loève terms of the smooth weights (29 at ℓ = 0.1; more for shorter ℓ)
        per_time = 2 * samples * width * width
        work = (terms + 8) * per_time * item + min(1 << 22, per_time * depths[-1]) * item
    bootstrap = 8 * s.bootstrap * 16 + 8 * min(1 << 23, s.samples * len(depths)) + 5 * 8 * s.samples * len(depths)
    return processes * ((state + work) / 2**20 + 300) + bootstrap / 2**20  # + the Python/torch runtime per process


#: seconds per Brownian normal of an SDE study drawn and computed in float64 (the random-number floor, 35 M
#: normals/s, times the engine's measured 1.3 and the fits' share)
SECONDS_PER_NORMAL = 4e-8


def estimate_seconds(model: str | type[Pair] | Pair, settings: ConvergenceSettings) -> float:
    """A rough estimate of an SDE study's run time (its random numbers); ODE studies are not estimated (0)."""
    cls, s = _sizes(model, settings)
    if cls.kind != "sde":
        return 0.0
    normals = s.samples * s.reference_steps * (s.width * s.width + s.width)
    parallel = min(s.workers, len(sample_blocks(s.samples, s.sample_block))) if s.scheduler is None else 1
    # float32 throughout: a quarter; a float32 path read in float64 (the default): 0.45 (res1: 4.1 s against 9.4 s)
    share = 0.25 if s.dtype == "float32" else 0.45 if s.noise_dtype == "float32" else 1.0
    return normals * SECONDS_PER_NORMAL * share / parallel


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
    pair, settings = build_pair(model, settings, first_block=True)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        errors = _errors(model, pair, settings, progress)
        wall = time.perf_counter() - clock
        next_order = float(pair.next_order) if settings.fit_model == "corrected" else None
        fits = _fit_all(errors, settings, next_order, pair.kind)
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=pair.device, started=started,
                               wall_time_s=wall, command=command_line)
    if pair.kind == "sde":
        reference_text = (f"Euler on the same path, {settings.reference_steps} steps (second: "
                          f"{settings.reference_steps // 2})")
    else:
        reference_text = f"dopri5, rtol {settings.rtol:g}, atol {settings.atol:g} (second: 100× looser)"
    return ConvergenceResult(
        settings=settings, run_info=info, model=pair.describe(), model_spec=model_spec(model),
        theory_rate=pair.theory_rate,
        theory_source=pair.theory_source, converges=pair.converges,
        excluded_rate=None if pair.converges else pair.excluded_rate, errors=errors, fits=fits,
        reference_text=reference_text, next_order=next_order,
    )


@dataclass(frozen=True)
class SampleBlock:
    """Block ``index`` of a study: ``size`` samples of the model (a pair name or ``module:Class`` text, or the
    class itself in this process) with ``config``, drawn from the streams of ``block_seed(seed, index)``."""

    model: str | type[Pair]
    config: ModelConfig
    index: int
    size: int
    seed: int
    dtype: str
    device: str
    depths: tuple[int, ...]
    reference_steps: int
    rtol: float
    atol: float
    noise_dtype: str | None
    progress: bool = False


def block_errors(block: SampleBlock) -> StudyErrors:
    """The errors of one block of samples (a task of :func:`validation.workers.run_tasks`)."""
    cls = get_pair(block.model) if isinstance(block.model, str) else block.model
    pair = cls(block.config, block.size, seed=block_seed(block.seed, block.index), dtype=torch_dtype(block.dtype),
               device=resolve_device(block.device))
    return study_errors(pair, list(block.depths), reference_steps=block.reference_steps, seed=pair.seed,
                        rtol=block.rtol, atol=block.atol, progress=block.progress,
                        noise_dtype=None if block.noise_dtype is None else torch_dtype(block.noise_dtype))


def _errors(model: str | type[Pair] | Pair, pair: Pair, settings: ConvergenceSettings, progress: bool) -> StudyErrors:
    """The study's errors, block by block of samples (engine module docstring), here or on the workers; a Pair
    instance is one block, run here."""
    common = dict(seed=settings.seed, dtype=settings.dtype, device=settings.device, depths=tuple(settings.depths),
                  reference_steps=settings.reference_steps or 0, rtol=settings.rtol or 0.0, atol=settings.atol or 0.0,
                  noise_dtype=settings.noise_dtype)
    if isinstance(model, Pair):
        if settings.workers > 1 or settings.scheduler is not None:
            raise SettingsError("workers", "a Pair instance runs here, as one block; pass its class or name to share "
                                           "blocks of samples out to workers")
        errors = study_errors(pair, list(settings.depths), reference_steps=common["reference_steps"],
                              seed=settings.seed, rtol=common["rtol"], atol=common["atol"], progress=progress,
                              noise_dtype=noise_dtype(settings))
        errors.reference["sample_blocks"] = 1
        return errors
    blocks = sample_blocks(settings.samples, settings.sample_block)
    local = settings.scheduler is None and (settings.workers <= 1 or len(blocks) == 1)
    # here: the class itself; on workers: the name or path text given (a worker imports it), or the class
    reference = model if isinstance(model, str) and not local else type(pair)
    tasks = [SampleBlock(reference, pair.config, index, size, progress=progress and local, **common)
             for index, size in blocks]
    with tqdm(total=len(tasks), desc=f"{pair.name}: blocks of samples", unit="block",
              disable=not progress or len(tasks) == 1, leave=False) as bar:
        parts = run_tasks(block_errors, tasks, 1 if local else settings.workers, on_result=lambda _: bar.update(1),
                          scheduler=settings.scheduler)
    errors = merge_errors(parts)
    errors.reference["sample_blocks"] = len(parts)
    return errors


def _fit_all(errors: StudyErrors, settings: ConvergenceSettings, next_order: float | None,
             kind: str) -> dict[str, RateFit | None]:
    """Every error measure's rate fit, with the same rule, bootstrap settings and seed. The errors against a
    reference are fitted above its floor (the two references' RMS gap); the successive differences need no
    reference, so have no floor."""
    floor = math.sqrt(float(np.mean(errors.reference_gap_sq))) if settings.fit_model == "corrected" else None
    if floor is not None and not math.isfinite(floor):
        floor = None  # a reference blew up: nothing is fitted anyway (the non-finite errors are reported)
    options = dict(fit_from=settings.fit_from, resamples=settings.bootstrap, confidence=settings.confidence,
                   seed=settings.seed, correction_order=next_order)
    above_floor = dict(options, floor=floor, floor_factor=FLOOR_FACTORS[kind])
    depths = errors.depths
    fits: dict[str, RateFit | None] = {
        "rms": fit_rate(depths, errors.final_sq, "rms", **above_floor),
        "mean": fit_rate(depths, errors.final_sq, "mean", **above_floor),
        "sup": fit_rate(depths, errors.sup_sq, "sup", **above_floor),
        "second_reference": fit_rate(depths, errors.final_sq_second,
                                     settings.metric if settings.metric != "sup" else "rms", **above_floor),
    }
    successive_depths = depths[:-1]
    succ_from = settings.fit_from if settings.fit_from is not None and \
        sum(L >= settings.fit_from for L in successive_depths) >= 2 else None
    fits["successive"] = (
        fit_rate(successive_depths, errors.successive_sq, "rms", **{**options, "fit_from": succ_from})
        if len(successive_depths) >= 2 else None
    )
    return fits


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


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--model", default="res1",
                       help="the pair to study: a name from --list, or your own as package.module:ClassName or "
                            "path/to/file.py:ClassName (default: res1)")
    group.add_argument("--list", action="store_true", help="list the models, their theory rates and settings, and exit")


COMMAND = cli.Command(
    prog="python -m validation.convergence",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=ConvergenceSettings,
    run=run,
    positional=("model",),
    add_arguments=_add_arguments,
    listing=list_models,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.cli.execute`)."""
    return cli.execute(COMMAND, argv)


if __name__ == "__main__":
    raise SystemExit(main())
