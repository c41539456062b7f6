"""``python -m validation.ablation``: the Itô correction, shown (Cohen et al. Thm 4.4, docs/theory.md §3a).

One network, two limits. The ResNet h_{k+1} = h_k + σ(A_k h_k + b_k) with Brownian weights and a smooth
trend (the ``cohen-sde`` pair, σ with σ''(0) ≠ 0, by default σ(x) = 2(softplus(x) − log 2)) is compared,
on the same weight paths and the same samples, with

* the **corrected** limit dH = σ'(0)[dW^A H + dW^b + (Ā_t H + b̄_t) dt] + ½σ''(0) Q(t, H) dt, and
* the **naive** limit read off the recursion, without ½σ''(0) Q(t, H) dt (``cohen-sde-naive``).

Both error curves e(L) = (E‖h_L − H_1‖²)^½ are drawn on one log–log plot with their fitted rates and 95%
paired-bootstrap intervals (the convergence study's corrected fit, docs/theory.md §6). Verdict: PASS when
the corrected rate's interval lies within ±tolerance of 1/2 AND the naive one lies within
[−tolerance, 1/2 − tolerance] with every error finite (its error neither vanishes nor explodes); FAIL when
either side's interval lies wholly outside its range (or an error is NaN/inf); INCONCLUSIVE otherwise (an
interval straddles an edge: the sample count to settle it is printed).

Python: ``validation.ablation.run(samples=200)`` returns an :class:`AblationResult`; each side is a
:class:`~validation.convergence.ConvergenceResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from limits.cohen import CohenSDE
from validation import convergence
from validation.core import cli
from validation.convergence import ConvergenceResult, ConvergenceSettings
from validation.core.checks import combine
from validation.core.pair_study import build_pair, estimate_mb, estimate_seconds
from validation.core.plots import Curve, draw_error_curves, new_axes
from validation.core.results import StudyResult
from validation.core.settings import CommonSettings, make_settings, parse_name_value, parse_power_of_two_list, setting
from validation.core.stats import depth_intervals
from validation.core.rate_fit import distance_line, theory_distance, verdict_rule

__all__ = ["AblationSettings", "AblationResult", "run", "main"]

_DEFAULTS = CohenSDE.default_study


def _as_in_convergence(name: str, default: Any = dataclasses.MISSING) -> Any:
    """The convergence study's setting ``name`` as a field here — its help, flag, parser and group — with its
    default, or ``default``."""
    spec = ConvergenceSettings.__dataclass_fields__[name]
    return dataclasses.field(default=spec.default if default is dataclasses.MISSING else default,
                             metadata=spec.metadata)


@dataclass(frozen=True)
class AblationSettings(CommonSettings):
    """Settings of the ablation: the convergence study's that apply to ``cohen-sde`` and ``cohen-sde-naive``, run
    on both (:meth:`convergence_settings`). Not taken: ``--weight-var`` (the weight scales are ``--set s_a=…,
    s_b=…``), ``--beta`` (this is the β = 1 regime), ``--rtol`` and ``--atol`` (the references are SDE ones).
    ``--lengthscale`` is the smooth trend's."""

    width: int | None = setting(_DEFAULTS["width"], "width d", parse=int, group="model")
    activation: str | None = setting(None, "σ, with σ''(0) ≠ 0 for the ablation to mean anything (shifted-softplus, "
                                           "swish)", group="model", default_text="shifted-softplus")
    lengthscale: float | None = _as_in_convergence("lengthscale")
    input_dim: int | None = _as_in_convergence("input_dim")
    options: Mapping[str, Any] = setting((), "a cohen-sde setting (repeatable): " + ", ".join(
        f"{key} (default {spec.default})" for key, spec in CohenSDE.option_specs.items()), parse=parse_name_value,
        flag="--set", metavar="NAME=VALUE", action="append", group="model", default_text="none")
    depths: tuple[int, ...] | None = setting(tuple(_DEFAULTS["depths"]), "depths L, powers of two ('8,16,32' or "
                                                                         "'8:512')", parse=parse_power_of_two_list)
    samples: int | None = setting(_DEFAULTS["samples"], "independent weight paths N (the same for both limits)",
                                  parse=int)
    noise_dtype: str | None = _as_in_convergence("noise_dtype")
    reference_steps: int | None = setting(_DEFAULTS["reference_steps"], "Euler steps of each limit's reference on "
                                                                         "the same path (power of two; second "
                                                                         "reference: half)", parse=int)
    fit_model: str = _as_in_convergence("fit_model")
    fit_from: int | None = setting(_DEFAULTS.get("fit_from"), "fit only depths ≥ this (pre-asymptotic depths "
                                                              "dropped by hand)", parse=int, group="fit and verdict",
                                   default_text="none: every depth above the reference floor")
    tolerance: float = setting(0.05, "δ: corrected interval within 0.5 ± δ, naive interval within [−δ, 0.5 − δ]",
                               parse=float, group="fit and verdict")
    confidence: float = _as_in_convergence("confidence")
    resamples: int = _as_in_convergence("resamples")
    sample_block: int = _as_in_convergence("sample_block")
    workers: int | None = _as_in_convergence("workers")
    scheduler: str | None = _as_in_convergence("scheduler")
    metric: str = _as_in_convergence("metric")

    def check(self) -> None:
        super().check()
        both = self.convergence_settings()  # every value checked by the study that runs it, under its own name
        for f in dataclasses.fields(self):  # and held as it holds them (e.g. --set as a mapping)
            self._set(f.name, getattr(both, f.name))

    def convergence_settings(self) -> ConvergenceSettings:
        """The convergence study's settings of both runs: these, and nothing else given."""
        return ConvergenceSettings(**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    @classmethod
    def of(cls, resolved: ConvergenceSettings) -> "AblationSettings":
        """These settings as the convergence study resolved them (the model's defaults filled in)."""
        return cls(**{f.name: getattr(resolved, f.name) for f in dataclasses.fields(cls)})


@dataclass(repr=False)  # StudyResult's short repr
class AblationResult(StudyResult):
    """Both sides of the ablation, each a :class:`ConvergenceResult` on the same paths."""

    corrected: ConvergenceResult | None = None
    naive: ConvergenceResult | None = None

    study = "ablation"

    @property
    def verdict(self) -> str:
        """Both sides' checks combined (:func:`validation.core.checks.combine`): FAIL if either FAILs, else
        INCONCLUSIVE if either is, else PASS."""
        return combine([self.corrected.check, self.naive.check])

    @property
    def rates(self) -> dict[str, tuple[float, tuple[float, float]]]:
        """``{"corrected": (rate, (low, high)), "naive": (rate, (low, high))}``."""
        return {"corrected": (self.corrected.rate, self.corrected.rate_ci),
                "naive": (self.naive.rate, self.naive.rate_ci)}

    def _side(self, result: ConvergenceResult) -> dict[str, Any]:
        errors = result.errors
        return {"fit": result.fit.to_dict(), "verdict": result.verdict, "check": result.check.to_dict(),
                "contains_theory": result.contains_theory,
                "theory_distance": theory_distance(result.fit, result.theory_rate, self.settings.tolerance),
                "theory_rate": result.theory_rate,
                "excluded_rate": result.excluded_rate,
                "verdict_interval": list(verdict_rule(result.theory_rate, self.settings.tolerance,
                                                      result.excluded_rate)),
                "reference_rms_gap": result.reference_gap, "seconds": result.run_info.wall_time_s,
                "nonfinite": {"network_per_depth": errors.nonfinite_network, "reference": errors.nonfinite_reference}}

    def summary(self) -> dict[str, Any]:
        return {"model": self.corrected.model, "depths": self.corrected.depths, "metric": self.settings.metric,
                "corrected": self._side(self.corrected), "naive": self._side(self.naive)}

    def csv_rows(self) -> list[dict[str, Any]]:
        c, n = self.corrected.fit, self.naive.fit
        return [{"depth": L, "corrected_error": c.errors[j], "corrected_local_slope": c.local[j - 1] if j else None,
                 "naive_error": n.errors[j], "naive_local_slope": n.local[j - 1] if j else None}
                for j, L in enumerate(self.corrected.depths)]

    def table(self) -> str:
        s = self.settings
        act = self.corrected.model
        depths = self.corrected.depths
        lines = [f"ablation of the Itô correction: {act['description']}",
                 f"width {act['width']}, σ = {act['activation']} (σ'(0) = {act['sigma_d1']:g}, σ''(0) = "
                 f"{act['sigma_d2']:g}), samples {s.samples}, depths {depths}, reference {s.reference_steps} Euler "
                 f"steps on the same path, seed {s.seed}", ""]
        lines.append(f"{'depth':>6s} {'corrected e(L)':>15s} {'local slope':>12s} {'naive e(L)':>12s} "
                     f"{'local slope':>12s}")
        for j, L in enumerate(depths):
            cells = []
            for label, side in (("corrected", self.corrected), ("naive", self.naive)):
                fit = side.fit
                local = f"{fit.local[j - 1]:12.3f}" if j else f"{'':12s}"
                cells.append(f"{fit.errors[j]:{15 if label == 'corrected' else 12}.4e} {local}")
            lines.append(f"{L:6d} " + " ".join(cells))
        lines.append("")
        level = int(round(100 * s.confidence))
        for label, side in (("corrected", self.corrected), ("naive", self.naive)):
            fit = side.fit
            depths_fitted = fit.fitted_depths
            lines.append(f"rate [{label:>9s}] {fit.rate:7.3f}   {level}% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]  "
                         f"(depths {depths_fitted[0]}…{depths_fitted[-1]}, {s.metric}, {fit.method})")
            lines.append(f"      fit: {fit.rule}")
            if side.converges:  # a deliberately wrong limit has no theory value to be near
                lines.append(f"      {distance_line(fit, side.theory_rate, s.tolerance)}")
        low, high = verdict_rule(0.5, s.tolerance)
        lines.append(f"corrected: {self.corrected.verdict} (interval within [{low:.2f}, {high:.2f}])")
        nlow, nhigh = verdict_rule(0.0, s.tolerance, 0.5)
        naive_fit = self.naive.fit
        bad = sum(self.naive.errors.nonfinite_network) + self.naive.errors.nonfinite_reference
        lines.append(f"naive:     {self.naive.verdict} (interval within [{nlow:.2f}, {nhigh:.2f}]: the error neither "
                     f"vanishes nor grows; e({depths[-1]}) / e({depths[0]}) = "
                     f"{naive_fit.errors[-1] / naive_fit.errors[0]:.3f}"
                     + (f"; {bad} non-finite samples" if bad else "") + ")")
        for side in (self.corrected, self.naive):
            if side.verdict == "INCONCLUSIVE":
                lines.append(f"  {side.check.name}: {side.check.detail}")
        lines.append(f"verdict: {self.verdict}")
        lines.append(f"time {self.run_info.wall_time_s:.1f} s (corrected {self.corrected.run_info.wall_time_s:.1f} s, "
                     f"naive {self.naive.run_info.wall_time_s:.1f} s)")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        fig, ax = new_axes(ax)
        s = self.settings
        curves = []
        for side, style, name in ((self.corrected, "o-", "Itô-corrected limit (+½σ''(0)Q dt)"),
                                  (self.naive, "s--", "naive limit (no correction)")):
            fit = side.fit
            values = side.errors.sup_sq if s.metric == "sup" else side.errors.final_sq
            band = depth_intervals(values, s.metric, s.confidence, seed=s.seed)
            curves.append(Curve(name, side.depths, fit.errors, band=band, rate=fit.rate, rate_ci=fit.ci,
                                fitted=fit.fitted, style=style))
        model = self.corrected.model
        draw_error_curves(
            ax, curves, title="The Itô correction: one ResNet h + σ(A_k h + b_k), two candidate limits",
            subtitle=(f"d={model['width']}, σ={model['activation']} (σ''(0)={model['sigma_d2']:g}), N={s.samples}, "
                      f"reference {s.reference_steps} steps, seed={s.seed}; verdict {self.verdict}"),
            theory_rate=0.5, theory_label="theory (corrected)",
            ylabel="RMS error (E||h_L - H_1||^2)^1/2" if s.metric == "rms" else f"{s.metric} error")
        return fig


def run(settings: AblationSettings | None = None, /, *, progress: bool = False, threads: int | None = 1,
        command_line: str | None = None, **overrides: Any) -> AblationResult:
    """Run ``cohen-sde`` and ``cohen-sde-naive`` on the same paths and compare their rates.

    Args:
        settings: an :class:`AblationSettings`; None for the defaults (the command line's).
        progress, threads, command_line: as for :func:`validation.convergence.run`.
        **overrides: settings by name, e.g. ``samples=200, depths=(8, 16, 32, 64)``.

    Returns:
        An :class:`AblationResult` with ``.corrected`` and ``.naive`` (each a ``ConvergenceResult``).
    """
    settings = make_settings(AblationSettings, settings, overrides)
    both = settings.convergence_settings()
    for model in ("cohen-sde", "cohen-sde-naive"):  # both checked before either runs
        build_pair(model, both)
    common = dict(progress=progress, threads=threads, command_line=command_line)
    corrected = convergence.run("cohen-sde", both, **common)
    naive = convergence.run("cohen-sde-naive", both, **common)
    first = corrected.run_info
    info = dataclasses.replace(first, wall_time_s=first.wall_time_s + naive.run_info.wall_time_s)
    return AblationResult(settings=AblationSettings.of(corrected.settings), run_info=info, corrected=corrected,
                          naive=naive)


EPILOG = """\
examples:
  python -m validation.ablation
  python -m validation.ablation --plot ablation_cohen.png --json ablation.json
  python -m validation.ablation --activation swish --samples 400 --depths 8:256 --reference-steps 4096
  python -m validation.ablation --set s_a=1 --set s_b=1 --set trend=zero
"""

COMMAND = cli.Command(
    prog="python -m validation.ablation",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=AblationSettings,
    run=run,
    estimate_mb=lambda settings: estimate_mb("cohen-sde", settings.convergence_settings(), fits_in_workers=True),
    estimate_seconds=lambda settings: 2 * estimate_seconds("cohen-sde", settings.convergence_settings()),
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)


if __name__ == "__main__":
    cli.run_command_line(main)
