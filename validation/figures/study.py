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
A flag that does not apply to the chosen figure is an error naming the ones that do; ``--list`` lists the figures
and the flags each takes. Each run prints a table with the numbers behind the figure and its checks: PASS when
every check passes, FAIL when one fails, INCONCLUSIVE when a check of an interval against a bound finds the interval
containing the bound (more draws would settle it: :func:`validation.core.checks.bound_check`). What each figure
computes and checks is written in its file, ``validation/figures/catalogue/<name>.py``, and in
docs/howto/figures.md.

Python: ``validation.figures.run("marion-fbm", realisations=200)`` returns a :class:`FiguresResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

from limits.fractional import check_hurst
from validation.core import cli, runtime
from validation.core.checks import check_line, combine
from validation.core.results import RunInfo, StudyResult, LONG_CSV_HELP, long_rows, utc_now
from validation.core.workers import PROCESS_MB, check_workers, run_memory_mb, task_runner
from validation.core.settings import (
    CommonSettings, SettingsError, check_choice, check_depths, check_float, check_int, make_settings, parse_float_list,
    parse_int_list, resolve_device, setting,
)
from validation.figures.catalogue import FIGURES
from validation.figures.catalogue.pf_abc import parse_data
from validation.figures.figure import INPUT_RANGE

__all__ = ["FIGURES", "SMOKE", "FiguresSettings", "FiguresResult", "run", "main"]

#: each figure's settings of a run of about a second, by name (the tests and ``docs/make_figures.py --quick``)
SMOKE: dict[str, Any] = FIGURES.field("smoke")


@dataclass(frozen=True)
class FiguresSettings(CommonSettings):
    """Settings of the figures study; ``None`` means the figure's default."""

    width: int | None = setting(None, "P&F: ResNet width D; chizat: width d", parse=int, group="model")
    widths: tuple[int, ...] | None = setting(None, "pf-sizes: ResNet widths D, comma list, increasing (the grid is "
                                                   "--depths × --widths; the last cell is the reference)",
                                             parse=parse_int_list, group="model")
    depth: int | None = setting(None, "P&F: ResNet depth L (Δt = 1/L)", parse=int, group="model")
    inputs: int | None = setting(None, "P&F: inputs z equally spaced on [−2, 2] (pf-2d: per axis of [−2, 2]²); "
                                       "chizat-kernel: inputs x ~ N(0, I_d) of the kernel", parse=int, group="model")
    draws: int | None = setting(None, "P&F: function draws (independent networks; pf-relu, pf-sizes: per depth, per "
                                      "cell)", parse=int, group="model")
    show: int | None = setting(None, "draws (realisations) drawn in each panel", parse=int, group="model")
    sigma_w: float | None = setting(None, "P&F ResNet: σ_w (ΔW ~ N(0, σ_w²Δt/D)), 0 to 100", parse=float, group="model")
    sigma_b: float | None = setting(None, "P&F ResNet: σ_b (Δb ~ N(0, σ_b²Δt)), 0 to 100", parse=float, group="model")
    input_layer: str | None = setting(None, "P&F ResNet input: copy (x_0 = z·1, the paper's SC models) or random "
                                            "(x_0 = W_I z, W_I ~ N(0, I), the paper's SR models)",
                                      choices=("copy", "random"), group="model")
    sde_factor: int | None = setting(None, "pf-function-space, pf-qualitative: Euler steps of the SDE per ResNet "
                                           "layer, on the same Brownian path (pf-qualitative: a power of two)",
                                     parse=int, group="model")
    eoc_width: int | None = setting(None, "P&F: width of the edge-of-chaos feed-forward networks", parse=int,
                                    group="model")
    eoc_depth: int | None = setting(None, "P&F: layers of the edge-of-chaos feed-forward networks", parse=int,
                                    group="model")
    eoc_sigma_b: float | None = setting(None, "P&F: bias std σ_b of EO_tanh, 0 to 100 (σ_w is then solved for χ = 1; "
                                              "EO_ReLU is always σ_w² = 2, σ_b = 0)", parse=float, group="model")
    accepted: int | None = setting(None, "pf-abc: the draws nearest to the data accepted as the posterior sample",
                                   parse=int, group="model")
    data: tuple[tuple[float, float], ...] | None = setting(
        None, "pf-abc: the data set, z:y,z:y,… (z in [−2, 2])", parse=parse_data, group="model",
        metavar="Z:Y,…")
    hursts: tuple[float, ...] | None = setting(None, "marion-fbm: Hurst indices, comma list, each in (0, 1)",
                                               parse=parse_float_list, group="model")
    length: int | None = setting(None, "marion-fbm: steps n of each path on [0, 1] (≥ 16)", parse=int,
                                 group="model")
    realisations: int | None = setting(None, "marion-fbm: realisations per H for the estimate", parse=int,
                                       group="model")
    hidden: int | None = setting(None, "chizat: hidden units M per block", parse=int, group="model")
    layers: int | None = setting(None, "chizat: depth L", parse=int, group="model")
    kappas: tuple[float, ...] | None = setting(None, "chizat: α = κ/√(ML), comma list, each > 0 "
                                                     "(chizat-feature-speed: one ResNet per κ)",
                                               parse=parse_float_list, group="model")
    networks: int | None = setting(None, "chizat: independent networks (input x ~ N(0, I_d) each; "
                                         "chizat-feature-speed: per depth and model)", parse=int, group="model")
    sigma_u: float | None = setting(None, "chizat: std of u_j", parse=float, group="model", default_text="1/√d")
    sigma_v: float | None = setting(None, "chizat: std of v_j", parse=float, group="model")
    thresholds: tuple[float, ...] | None = setting(None, "chizat: thresholds a as multiples of E[S^L], comma "
                                                         "list, each > 0", parse=parse_float_list, group="model")
    sde_tolerance: float | None = setting(None, "pf-function-space: RMS(ResNet − SDE)/SD(ResNet) ≤ this",
                                          parse=float, group="checks")
    eoc_min_pc: float | None = setting(None, "pf-function-space: the EOC networks' first principal component "
                                             "explains ≥ this fraction", parse=float, group="checks")
    resnet_max_pc: float | None = setting(None, "pf-function-space: the ResNets' first principal component "
                                                "explains ≤ this fraction", parse=float, group="checks")
    eoc_min_correlation: float | None = setting(None, "pf-correlation: each EOC network's minimum correlation "
                                                      "≥ this", parse=float, group="checks")
    resnet_max_correlation: float | None = setting(None, "pf-correlation: each ResNet's minimum correlation ≤ "
                                                         "this", parse=float, group="checks")
    alpha: float | None = setting(None, "pf-qualitative: the level of its tests (exchangeability not rejected, "
                                        "Gaussianity rejected, and the planted controls the other way)", parse=float,
                                  group="checks")
    hurst_tolerance: float | None = setting(None, "marion-fbm: |Ĥ − H| ≤ this", parse=float, group="checks")
    doob_constant: float | None = setting(None, "chizat: the constant of E[sup S] ≤ C E[S^L] (Doob: 4)",
                                          parse=float, group="checks")
    tail_constant: float | None = setting(None, "chizat: P(sup S ≥ a) ≤ C E[S^L]/a is checked with this C "
                                                "(Doob: 1)", parse=float, group="checks")
    exponent_tolerance: float | None = setting(None, "chizat-backward: the exponent of E sup_ℓ S_b^ℓ in MLα² must lie "
                                                     "within 1 ± this; chizat-phase: an exponent in L within ± this is "
                                                     "'of order 1'; pf-relu, chizat-feature-speed: each exponent in L "
                                                     "within theory ± this",
                                               parse=float, group="checks")
    drift_tolerance: float | None = setting(None, "pf-relu: the control (φ = identity, γ = ½) keeps |E[x_T − x_0]|/SD(x_T) "
                                                  "≤ this at every depth", parse=float, group="checks")
    ode_tolerance: float | None = setting(None, "pf-relu: at γ = 1 the ReLU network's mean displacement at the deepest "
                                                "depth is within this relative distance of the neural ODE's",
                                          parse=float, group="checks")
    shape_tolerance: float | None = setting(None, "pf-sizes: each judged cell's first-PC fraction and correlations "
                                                  "within ± this of the reference cell's", parse=float, group="checks")
    scale_tolerance: float | None = setting(None, "pf-sizes: each judged cell's log SD of x_T,1(z) within ± this of the "
                                                  "reference cell's", parse=float, group="checks")
    judged_depth: int | None = setting(None, "pf-sizes: the checks judge the cells with L ≥ this (the others are "
                                             "tabulated, not judged)", parse=int, group="checks")
    judged_width: int | None = setting(None, "pf-sizes: the checks judge the cells with D ≥ this", parse=int,
                                       group="checks")
    depths: tuple[int, ...] | None = setting(None, "chizat-phase, chizat-feature-speed, pf-relu, pf-sizes: depths L, "
                                                   "comma list, increasing", parse=parse_int_list, group="model")
    betas: tuple[float, ...] | None = setting(None, "chizat-phase: β of α = L^-β/√M, comma list", parse=parse_float_list,
                                              group="model")
    gammas: tuple[float, ...] | None = setting(None, "chizat-phase: γ of the learning rate η = η₀ L^γ, comma list",
                                               parse=parse_float_list, group="model")
    eta0: float | None = setting(None, "chizat-phase: η₀ of the learning rate", parse=float, group="model")
    steps: int | None = setting(None, "chizat-phase: full-batch gradient steps", parse=int, group="model")
    resamples: int | None = setting(None, "bootstrap resamples of every interval; pf-qualitative: permutations of "
                                          "its exchangeability test", parse=int, group="checks")
    workers: int | None = setting(None, "P&F figures: processes (each single-threaded) computing the draws' chunks "
                                        "side by side; the numbers never depend on it (each chunk reads its own "
                                        "streams)", parse=int, group="run and output", default_text="1: here")
    scheduler: str | None = setting(None, "P&F figures: compute the draws' chunks on Dask instead: local:N (a local "
                                          "cluster of N single-threaded workers) or tcp://HOST:PORT",
                                    group="run and output", default_text="none: --workers local processes")
    # resolved from the figure (not flags)
    figure: str = setting("pf-function-space", "the figure", cli=False)
    title: str = setting("", "the figure's title", cli=False)

    def check(self) -> None:
        super().check()
        check_workers(self)
        ints = {"width": 1, "depth": 1, "inputs": 2, "draws": 3, "show": 0, "sde_factor": 1, "eoc_width": 1,
                "eoc_depth": 1, "length": 16, "realisations": 2, "hidden": 1, "layers": 1, "networks": 3,
                "resamples": 10, "accepted": 1, "steps": 1, "judged_depth": 1, "judged_width": 1}
        for name, minimum in ints.items():
            if getattr(self, name) is not None:
                self._set(name, check_int(name, getattr(self, name), minimum, 10_000_000))
        for name in ("sigma_w", "sigma_b", "eoc_sigma_b"):  # past 100 the P&F states overflow (1e6: an internal error)
            if getattr(self, name) is not None:
                self._set(name, check_float(name, getattr(self, name), 0, 100))
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
    """The figure's defaults where a setting is None, after refusing settings that do not apply and checking the
    figure's own constraints (:meth:`validation.figures.figure.Figure.check_values`)."""
    entry, values, _ = FIGURES.resolve_values(figure, settings)
    entry.check_values(values)
    if "show" in values:
        values["show"] = min(values["show"], values.get("draws", values.get("realisations")))
    return dataclasses.replace(settings, **values, figure=entry.name, title=entry.title)


def listing() -> str:
    """The ``--list`` text: every figure, its title and the flags it takes."""
    return FIGURES.listing("figures (python -m validation.figures --figure NAME):")


def estimate_mb(figure: str, settings: FiguresSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB (the figure's own; 0 when the settings are refused),
    with its working memory once more in each worker process when its draws are shared out
    (:func:`validation.core.workers.run_memory_mb`)."""
    try:
        resolved = _resolve(figure, settings)
        one = FIGURES[figure].estimate_mb(resolved)
    except SettingsError:
        return 0.0
    if (resolved.workers or 1) <= 1 and resolved.scheduler is None:
        return one
    return one + run_memory_mb(max(0.0, one - PROCESS_MB), resolved.workers or 1, resolved.scheduler) - PROCESS_MB


def estimate_seconds(figure: str, settings: FiguresSettings) -> float:
    """A rough run time on the 2-core reference (the figure's own; 0 when not estimated or refused)."""
    try:
        return FIGURES[figure].estimate_seconds(_resolve(figure, settings))
    except SettingsError:
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
        """Every check, as :meth:`validation.core.checks.Check.to_dict` gives it: ``{"check", "verdict", "passed",
        "detail", "samples_needed"}`` (INCONCLUSIVE where an interval against a bound contains it:
        :func:`validation.core.checks.bound_check`)."""
        return self.numbers["checks"]

    @property
    def verdict(self) -> str:
        """FAIL if a check fails, else INCONCLUSIVE if one is, else PASS (:func:`validation.core.checks.combine`)."""
        return combine(self.checks)

    def summary(self) -> dict[str, Any]:
        return {"figure": self.figure, **self.numbers}

    def csv_rows(self) -> list[dict[str, Any]]:
        """The CSV, in the long format every figure shares: one row per number of the JSON's ``result`` (the
        figures' results differ in shape).

        Columns (:func:`validation.core.results.long_rows`): ``entry`` (the figure), ``section`` (the top-level key
        of the JSON's ``result``: ``per_hurst``, ``checks``, …), ``record`` (the path below it to the object holding
        the number, a list element as ``[i]`` with its naming fields, e.g. ``per_hurst``, ``[0](hurst=0.2)``,
        quantity ``estimate``), ``quantity`` (the number's key), ``index`` (its position in a list of numbers, empty
        for a single number) and ``value`` (empty where the JSON has ``null``).
        Text, flags and verdicts stay in the JSON."""
        return long_rows(self.figure, self.summary())

    def table(self) -> str:
        text = FIGURES[self.figure].table(self.numbers)
        lines = [f"{self.numbers['title']}", f"paper: {self.numbers['paper']}", text, "", "checks:"]
        lines += [check_line(c) for c in self.checks]
        lines += [f"verdict: {self.verdict}", f"wall time {self.run_info.wall_time_s:.1f} s"]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        return FIGURES[self.figure].plot(self.numbers, self.data, ax)


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
        entry = FIGURES[settings.figure]
        sharing = (settings.workers or 1) > 1 or settings.scheduler is not None   # given to a figure that shares
        with task_runner(settings.workers or 1, settings.scheduler) if sharing else contextlib.nullcontext() as runner:
            numbers, data = entry.compute(settings, device, progress, *([runner] if entry.shares_draws else []))
        numbers = {"title": settings.title, "paper": entry.paper, **numbers}
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


def _add_arguments(group: cli.ArgumentGroup) -> None:
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
    catalogue=FIGURES,
    add_arguments=_add_arguments,
    listing=listing,
    estimate_mb=_estimate_mb,
    estimate_seconds=_estimate_seconds,
    csv_help=LONG_CSV_HELP,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
