"""Scaling regimes at initialisation: Marion et al. Fig. 1–5 and Chizat Prop. 2.1, one command each.

    python -m validation.regimes --preset fig1     # Fig. 1 + 3: i.i.d. U(−√(3/d), √(3/d)), β ∈ {¼, ½, 1}
    python -m validation.regimes --preset fig2 --dtype float32 --workers 2   # Fig. 2: β = ½, L = 1000, d = 100,
                                                   # 10⁴ draws: 10 min, 2 cores
    python -m validation.regimes --preset fig4     # Fig. 4 + 5: smooth weights, β ∈ {½, 1, 2}
    python -m validation.regimes --preset prop13   # Prop. 13: linear res-1, smooth weights, max_k over the layers
    python -m validation.regimes --preset assumptions   # Props. 1, 5, Lemma 16: (A₂), (A₄) block by block
    python -m validation.regimes --preset prop3    # Prop. 3's bounds where they apply (d = 64, L ≤ 4096)
    python -m validation.regimes --preset chizat   # Chizat Prop. 2.1, 2LP blocks
    python -m validation.regimes --preset fig1 --regime fractional --hurst 0.8 --betas 0.6,0.8,1

Every preset setting can be overridden by its flag; a flag that does not apply to the preset (or to the
chosen regime) is an error naming the ones that do. Each run prints a table, classifies every β as
explosion / non-trivial / identity (rule: :mod:`validation.core.regime_rule`) and checks the theory:

* the critical β (the interpolated zero of the slope) lies within ``--critical-tolerance`` of the
  prediction: ½ for i.i.d. weights, 1 for smooth ones, max(H, ½) for fractional ones, ½ for Chizat's
  α = (ML)^-β;
* every β at least 0.2 away from the prediction is classified as the theory says (explosion below,
  identity above), and β at the prediction as non-trivial;
* the Lemma 14 / Prop. 7 bounds hold, for i.i.d. weights (Bonferroni-corrected, family-wise 1%);
* Props. 2 / 6 for i.i.d. weights at β ≥ ½: P(r² ≤ 2Lα²/δ) ≥ 1 − δ at every depth and δ of ``--deltas``
  (Clopper–Pearson intervals of the exceedance probability, three-valued; :mod:`validation.core.hypothesis`);
* Prop. 3 (i)/(ii) for i.i.d. weights at every (β, L, δ) where its conditions hold (C estimated; the prop3
  preset reaches (i), which needs d ≥ 64 and L in the thousands);
* ``--max-over-layers`` (the prop13 preset): Prop. 13, max_k ‖h_k − h_0‖/‖h_0‖ explodes at every β ≤ 0.8 for linear
  res-1 with smooth weights, over the networks whose V_0 has a positive real eigenvalue;
* assumptions: (A₂) and (A₄) of every block in Props. 1 and 5's class (:mod:`validation.regimes.assumptions`);
* fig2: the paper's quartile bounds, at the paper's size; chizat: the exact spread at every layer, and E h^ℓ = x
  (Hotelling's test at every layer).

The gradient ratio r_p is checked like r_h, except with fractional weights (H ≠ ½), where its critical β
lags H at finite depth and width (measured in docs/results/regimes.md) and the paper claims nothing; it is
reported there, not checked. PASS when every check passes.

Python: ``validation.regimes.run("fig1", samples=20)`` returns a :class:`RegimesResult`.

Exit status: 0 PASS, 1 FAIL, 4 INCONCLUSIVE, 2 bad input, 3 internal error.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from limits.activations import get_activation
from limits.fractional import check_hurst
from limits.initialisation import IID_LAWS, SMOOTH_CONVENTIONS
from limits.smooth import LENGTHSCALE_RANGE
from validation.core import cli, runtime
from validation.core.checks import check_line, combine
from validation.core.results import RunInfo, StudyResult, LONG_CSV_HELP, long_rows, utc_now
from validation.core.settings import (
    CommonSettings, SettingsError, check_choice, check_depths, check_float, check_int, make_settings,
    parse_float_list, parse_int_list, resolve_device, setting,
)
from validation.core.workers import check_workers
from validation.regimes.catalogue import PRESETS
from validation.regimes.distribution import FIG2_BLOCK
from validation.regimes.preset import predicted_critical_beta

__all__ = ["PRESETS", "RegimesSettings", "RegimesResult", "run", "main", "predicted_critical_beta"]





@dataclass(frozen=True)
class RegimesSettings(CommonSettings):
    """Settings of the regimes study; ``None`` means the preset's value."""

    regime: str | None = setting(None, "weight regime: iid entries, smooth RBF Gaussian processes read at k/L, or "
                                       "fractional Gaussian noise of Hurst index --hurst along the layers",
                                 choices=("iid", "smooth", "fractional"), group="model")
    law: str | None = setting(None, "law of √d·V_ij for --regime iid (unit variance)", choices=IID_LAWS, group="model")
    lengthscale: float | None = setting(None, "RBF length-scale ℓ for --regime smooth, 0.01 to 1000", parse=float, group="model")
    smooth_weights: str | None = setting(None, "how --regime smooth reads its Gaussian processes: 'values', V_k = "
                                               "𝒱(k/L) (Marion et al.'s text), or 'increments', 𝒱(k/L) − 𝒱((k−1)/L) "
                                               "normalised to entry variance 1/d (the authors' code; docs/results/"
                                               "regimes.md, 'Against the authors' code')",
                                         choices=SMOOTH_CONVENTIONS, group="model")
    hurst: float | None = setting(None, "Hurst index H ∈ (0, 1) for --regime fractional", parse=float, group="model",
                                  default_text="none; required with --regime fractional")
    block: str | None = setting(None, "residual block (Marion et al. Table 1)", choices=("res1", "res2", "res3"),
                                group="model")
    activation: str | None = setting(None, "σ for res1/res2 (e.g. relu, tanh, prelu:0.8); res3 is ReLU",
                                     group="model")
    betas: tuple[float, ...] | None = setting(None, "scalings β (α_L = L^-β), comma list, each ≥ 0",
                                              parse=parse_float_list)
    depths: tuple[int, ...] | None = setting(None, "depths L, increasing comma list, each ≥ 1 (at least 3 for a "
                                                   "sweep; one for fig2)", parse=parse_int_list)
    width: int | None = setting(None, "width d", parse=int)
    n_in: int | None = setting(None, "input dimension n_in (h_0 = A x)", parse=int)
    samples: int | None = setting(None, "independent networks (each with its own weights, input layer and input)",
                                  parse=int)
    inputs: int | None = setting(None, "inputs per network (samples = networks × inputs)", parse=int)
    sweep_samples: int | None = setting(None, "chizat: networks per depth in the β sweep", parse=int)
    hidden: int | None = setting(None, "chizat: hidden units M per block", parse=int)
    hiddens: tuple[int, ...] | None = setting(None, "chizat: hidden widths M of the M sweep (§2.1: the spread depends "
                                                    "on MLα² alone), comma list, each ≥ 1", parse=parse_int_list)
    hidden_samples: int | None = setting(None, "chizat: networks per M in the M sweep", parse=int)
    layers: int | None = setting(None, "chizat: depth L of the per-layer curves", parse=int)
    kappas: tuple[float, ...] | None = setting(None, "chizat: α = κ/√(ML) for the per-layer curves, each ≥ 0",
                                               parse=parse_float_list)
    sigma_u: float | None = setting(None, "chizat: std of u_j", parse=float, default_text="1/√d")
    sigma_v: float | None = setting(None, "chizat: std of v_j", parse=float)
    tau: float | None = setting(None, "classification threshold on the log-log slope", parse=float,
                                group="checks")
    critical_tolerance: float | None = setting(None, "the critical-β check: |estimate − prediction| ≤ this",
                                               parse=float, group="checks")
    deltas: tuple[float, ...] | None = setting(None, "i.i.d. sweep: the δ values of Props. 2 and 6, P(r² ≤ 2Lα²/δ) ≥ "
                                                     "1 − δ, checked at every β ≥ ½ and depth (comma list, each in "
                                                     "(0, 1); with N draws and no exceedance a cell settles once "
                                                     "N ≥ ln(level/2)/ln(1 − δ))", parse=parse_float_list,
                                               group="checks")
    noise_dtype: str | None = setting(None, "i.i.d. and fractional weights: the type they are drawn in, then cast to "
                                            "--dtype (float32 draws faster; another draw for the seed). Unlike the "
                                            "strong-error studies (float32 by default: network and limit read the same "
                                            "increments, so the error does not depend on the draw's precision), the "
                                            "ratios here are statistics of the draw itself, so float32 is opt-in",
                                      choices=("float32", "float64"), group="model", default_text="as --dtype")
    chunk_mb: float | None = setting(None, "memory budget per chunk of networks, MiB", parse=float,
                                     group="run and output")
    workers: int | None = setting(None, "fig2: processes (each single-threaded) sharing the networks in blocks of "
                                        f"{FIG2_BLOCK}; every network draws from its own streams, so the numbers do "
                                        "not depend on it", parse=int, group="run and output")
    scheduler: str | None = setting(None, "fig2: run the blocks on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler)",
                                    group="run and output", default_text="none: --workers local processes")
    max_over_layers: bool | None = setting(None, "sweep: also measure max_k ‖h_k − h_0‖/‖h_0‖ over the layers and the "
                                                 "largest real eigenvalue of each network's V_0 (Marion et al. Prop. "
                                                 "13; checked for linear res-1 with smooth weights)",
                                           action="store_true", group="model")
    # resolved from the preset (not flags)
    preset: str = setting("fig1", "the paper setting", cli=False)
    kind: str = setting("sweep", "sweep, distribution or chizat (from the preset)", cli=False)
    title: str = setting("", "the figure's title (from the preset)", cli=False)

    def check(self) -> None:
        super().check()
        ints = {"width": 1, "n_in": 1, "samples": 2, "inputs": 1, "sweep_samples": 2, "hidden": 1, "layers": 1,
                "hidden_samples": 2}
        if self.hiddens is not None:
            hiddens = tuple(check_int("hiddens", m, 1, 100_000) for m in self.hiddens)
            if not hiddens:
                raise SettingsError("hiddens", "give at least one M")
            self._set("hiddens", hiddens)
        check_workers(self)
        if self.noise_dtype is not None:
            check_choice("noise_dtype", self.noise_dtype, ("float32", "float64"))
        for name, minimum in ints.items():
            if getattr(self, name) is not None:
                self._set(name, check_int(name, getattr(self, name), minimum, 10_000_000))
        if self.lengthscale is not None:
            self._set("lengthscale", check_float("lengthscale", self.lengthscale, *LENGTHSCALE_RANGE))
        for name in ("sigma_u", "sigma_v", "tau", "critical_tolerance", "chunk_mb"):
            if getattr(self, name) is not None:
                self._set(name, check_float(name, getattr(self, name), 0, strict_min=True))
        if self.hurst is not None:
            try:
                self._set("hurst", check_hurst(self.hurst))
            except ValueError:
                raise SettingsError("hurst", f"H={self.hurst!r} is out of range (allowed: 0 < H < 1)") from None
        if self.regime is not None:
            check_choice("regime", self.regime, ("iid", "smooth", "fractional"))
        if self.law is not None:
            check_choice("law", self.law, IID_LAWS)
        if self.block is not None:
            check_choice("block", self.block, ("res1", "res2", "res3"))
        if self.activation is not None:
            try:
                get_activation(self.activation)
            except ValueError as exc:
                raise SettingsError("activation", str(exc)) from None
        if self.betas is not None:
            betas = tuple(float(b) for b in self.betas)
            if not betas:
                raise SettingsError("betas", "at least one β is needed")
            for b in betas:
                if not (math.isfinite(b) and b >= 0):
                    raise SettingsError("betas", f"β={b:g} is out of range (allowed: finite β ≥ 0)")
            self._set("betas", betas)
        if self.deltas is not None:
            deltas = tuple(float(x) for x in self.deltas)
            if not deltas or any(not 0 < x < 1 for x in deltas):
                raise SettingsError("deltas", f"{list(deltas)}: each δ must lie in (0, 1) (at least one)")
            self._set("deltas", deltas)
        if self.kappas is not None:
            kappas = tuple(float(k) for k in self.kappas)
            if not kappas or any(not (math.isfinite(k) and k >= 0) for k in kappas):
                raise SettingsError("kappas", f"{list(kappas)}: each κ must be finite and ≥ 0 (at least one)")
            self._set("kappas", kappas)
        if self.depths is not None:
            try:
                self._set("depths", check_depths("depths", self.depths, powers_of_two=False, at_least=1,
                                                 maximum=1_000_000))
            except SettingsError as exc:
                raise SettingsError("depths", exc.message.replace("depth ", "depth L=")) from None


def _resolve(preset: str, settings: RegimesSettings) -> RegimesSettings:
    """The preset's values where a setting is None, after refusing settings that do not apply and checking the
    preset's own constraints (:meth:`validation.regimes.preset.Preset.check_values`)."""
    entry, values, given = PRESETS.resolve_values(preset, settings)
    entry.check_values(values, given)
    return dataclasses.replace(settings, **values, preset=entry.name, kind=entry.kind, title=entry.title_for(values))


def estimate_mb(preset: str, settings: RegimesSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB (the preset's kind's own; 0 when refused)."""
    try:
        return PRESETS[preset].estimate_mb(_resolve(preset, settings))
    except SettingsError:
        return 0.0  # the run itself reports the bad setting


def estimate_seconds(preset: str, settings: RegimesSettings) -> float:
    """A rough run time on the 2-core reference (the preset's kind's own; 0 when not estimated or refused)."""
    try:
        return PRESETS[preset].estimate_seconds(_resolve(preset, settings))
    except SettingsError:
        return 0.0


# ------------------------------------------------------------------------------------------------ result
@dataclass(repr=False)  # StudyResult's short repr
class RegimesResult(StudyResult):
    """The regimes study's result: ``numbers`` (the ``result`` section of the JSON: per-β slopes and classes,
    critical β, bounds, checks), and ``data`` (the per-sample ratios behind the figure, not written to JSON)."""

    numbers: dict[str, Any] = dataclasses.field(default_factory=dict)
    data: dict[str, np.ndarray] = dataclasses.field(default_factory=dict, repr=False)

    study = "regimes"

    @property
    def checks(self) -> list[dict[str, Any]]:
        """Every check of the run, as :meth:`validation.core.checks.Check.to_dict` gives it: ``{"check", "verdict",
        "passed", "detail", "samples_needed"}``; the verdict combines them."""
        return self.numbers["checks"]

    @property
    def critical_beta(self) -> dict[str, float | None] | float | None:
        """The estimated critical β (the zero of the slope in β): ``{"r_h": …, "r_p": …}`` for a sweep, one
        number for chizat, None for fig2 (a single β)."""
        return self.numbers.get("critical_beta_estimate")

    @property
    def predicted_critical_beta(self) -> float | None:
        return self.numbers.get("predicted_critical_beta")

    @property
    def verdict(self) -> str:
        return combine(self.checks)

    def summary(self) -> dict[str, Any]:
        return dict(self.numbers)

    def csv_rows(self) -> list[dict[str, Any]]:
        """The CSV, in the long format every preset shares: one row per number of the JSON's ``result`` (the
        presets' results differ in shape).

        Columns (:func:`validation.core.results.long_rows`): ``entry`` (the preset), ``section`` (the top-level key
        of the JSON's ``result``: ``per_beta``, ``bounds``, ``forward``, ``per_alpha``, …), ``record`` (the path
        below it to the object holding the number, a list element as ``[i]`` with its naming fields, e.g.
        ``per_beta``, ``[0](beta=0.25)/r_h``, quantity ``median``, index 2: the median r_h of β = 0.25 at the third
        depth), ``quantity`` (the number's key), ``index`` (its position in a list of numbers, empty for a single
        number) and ``value`` (empty where the JSON has ``null``).
        Text, flags and verdicts stay in the JSON."""
        return long_rows(self.settings.preset, self.summary())

    def table(self) -> str:
        text = PRESETS[self.settings.preset].table(self.numbers)
        lines = [text, "", "checks:"]
        lines += [check_line(c) for c in self.checks]
        lines += [f"verdict: {self.verdict}", f"wall time {self.run_info.wall_time_s:.1f} s"]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        return PRESETS[self.settings.preset].plot(self.numbers, self.data, ax)












def run(preset: str = "fig1", settings: RegimesSettings | None = None, /, *, progress: bool = False,
        threads: int | None = 1, command_line: str | None = None, **overrides: Any) -> RegimesResult:
    """Run a scaling-regime preset (``fig1``/``fig3``, ``fig2``, ``fig4``/``fig5``, ``chizat``).

    Args:
        preset: the paper setting; every other setting overrides one of its values.
        settings: a :class:`RegimesSettings`; None for the preset's values.
        progress, threads, command_line: as for :func:`validation.convergence.run`.
        **overrides: settings by name, e.g. ``samples=20, depths=(10, 100, 1000)``.
    """
    settings = _resolve(preset, make_settings(RegimesSettings, settings, overrides))
    device = resolve_device(settings.device)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        numbers, data = PRESETS[settings.preset].compute(settings, device, progress)
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=device, started=started,
                               wall_time_s=time.perf_counter() - clock, command=command_line)
    return RegimesResult(settings=settings, run_info=info, numbers=numbers, data=data)


EPILOG = """\
examples:
  python -m validation.regimes --preset fig1 --plot fig1.png --json fig1.json
  python -m validation.regimes --preset fig2 --dtype float32 --workers 2
  python -m validation.regimes --preset fig1 --regime fractional --hurst 0.8 --betas 0.6,0.8,1
"""


def listing() -> str:
    """The ``--list`` text: every preset, its title and the flags it takes, then the aliases."""
    aliases = ", ".join(f"{alias} = {target}" for alias, target in PRESETS.aliases.items())
    return PRESETS.listing("presets (python -m validation.regimes --preset NAME):") + f"\n  aliases: {aliases}"


def _add_arguments(group: cli.ArgumentGroup) -> None:
    # not argparse's required=True: it would refuse --list, which needs no preset
    group.add_argument("--preset", default=None, choices=PRESETS.choices(),
                       help="paper settings: fig1 (= fig3), fig2, fig4 (= fig5), chizat (required unless --list)")
    group.add_argument("--list", action="store_true", help="list the presets and the settings each takes, and exit")


def _run_command(preset: str | None, settings: RegimesSettings, /, **kwargs: Any) -> RegimesResult:
    if preset is None:
        raise SettingsError("preset", f"required (one of {', '.join(PRESETS.choices())}; see --list)")
    return run(preset, settings, **kwargs)


COMMAND = cli.Command(
    prog="python -m validation.regimes",
    description=__doc__.split("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=RegimesSettings,
    run=_run_command,
    positional=("preset",),
    catalogue=PRESETS,
    add_arguments=_add_arguments,
    listing=listing,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
    csv_help=LONG_CSV_HELP,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
