"""The interface every regimes preset implements, and what the kinds of preset share.

A preset (``--preset fig1``) is a paper's setting of one *kind* of run: a sweep over depths and β (``sweep``), one
law at one depth (``distribution``, Fig. 2), the assumptions block by block (``assumptions``) or Chizat's 2LP ResNet
(``chizat``). Each kind is one module of this package, a :class:`Preset` subclass holding its compute, checks,
table and plot; each preset is one instance of a kind, with its title and its values, in the registry
(:data:`validation.regimes.catalogue.PRESETS`). The preset is a catalogue entry
(:class:`validation.core.catalogue.Entry`): the study resolves its settings (:meth:`Preset.check_values`, then
:meth:`Preset.title_for`) and calls ``compute(s, device, progress)``, ``table(numbers)`` and
``plot(numbers, data, ax)`` with the resolved settings ``s``.
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar, Mapping, Sequence

import torch
from tqdm.auto import tqdm

from limits.initialisation import Block, FractionalRegime, IIDRegime, Regime, SmoothRegime
from limits.regime_theory import fractional_critical_beta
from validation.core.catalogue import Entry
from validation.core.checks import Check, combine
from validation.core.settings import SettingsError, optional_torch_dtype
from validation.core.workers import run_memory_mb


#: β at least this far from the predicted critical β has a predicted class that is checked
CLASS_MARGIN = 0.2


def noise_dtype_of(s: Any) -> torch.dtype | None:
    """The dtype the weights' normals are drawn in (``--noise-dtype``), None for the run's own."""
    return optional_torch_dtype(s.noise_dtype)


def regime_name(values: dict[str, Any]) -> str:
    """The weight regime's name in words (the generic title's)."""
    return regime_of(values).name


def regime_of(values: Any) -> Regime:
    """The weight regime of resolved settings (a settings object or a dict of values)."""
    get = values.get if isinstance(values, dict) else (lambda k: getattr(values, k))
    if get("regime") == "iid":
        return IIDRegime(get("law"))
    if get("regime") == "smooth":
        return SmoothRegime(get("lengthscale"), get("smooth_weights") or "values")
    return FractionalRegime(get("hurst"))


def predicted_critical_beta(settings: Any) -> float:
    """The theory's critical β: ½ (i.i.d., Chizat's α = (ML)^-β), 1 (smooth), max(H, ½) (fractional)."""
    if settings.kind == "chizat" or settings.regime == "iid":
        return 0.5
    if settings.regime == "smooth":
        return 1.0
    return fractional_critical_beta(settings.hurst)


def predicted_class(beta: float, critical: float) -> str | None:
    """The theory's regime for β, or None within ``CLASS_MARGIN`` of the critical β (ambiguous at finite L)."""
    if abs(beta - critical) < 1e-9:
        return "non-trivial"
    if beta <= critical - CLASS_MARGIN:
        return "explosion"
    if beta >= critical + CLASS_MARGIN:
        return "identity"
    return None


def progress_bar(total: int, desc: str, progress: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="net", disable=not progress, leave=False)


def classification_checks(per_beta: list[dict], quantities: Sequence[str], measured) -> list[dict]:
    checks = []
    for entry in per_beta:
        if entry["predicted_class"] is None:
            continue
        for key in quantities:
            got = measured(entry, key)
            checks.append(Check.of(f"class of β = {entry['beta']:g} ({key})",
                                   got == entry["predicted_class"],
                                   f"measured {got}, predicted {entry['predicted_class']}").to_dict())
    return checks


def critical_checks(betas: Sequence[float], estimate: dict[str, float | None], critical: float, tolerance: float,
                     quantities: Sequence[str]) -> list[dict]:
    if not min(betas) < critical < max(betas) and critical not in betas:
        return [Check.of("critical β",
                         True,
                         f"not checked: the β grid [{min(betas):g}, "
                         f"{max(betas):g}] does not bracket {critical:g}").to_dict()]
    checks = []
    for key in quantities:
        value = estimate[key] if isinstance(estimate, dict) else estimate
        ok = value is not None and abs(value - critical) <= tolerance
        checks.append(Check.of(f"critical β ({key})",
                               bool(ok),
                               f"estimate {'none' if value is None else f'{value:.3f}'}, predicted {critical:g} "
                               f"± {tolerance:g}").to_dict())
    return checks


def exceedance_summary(name: str, cells: list[dict[str, Any]]) -> Check:
    """One check over exceedance cells (:func:`validation.core.hypothesis.exceedance_check`): the worst verdict."""
    verdict = combine(c["verdict"] for c in cells)
    tightest = min(cells, key=lambda c: c["slack"])
    label = lambda c: f"{c.get('quantity') or c.get('bound_kind')} β = {c['beta']:g}, L = {c['depth']}"  # noqa: E731
    detail = (f"{sum(c['verdict'] == 'PASS' for c in cells)}/{len(cells)} cells with the exceedance interval ≤ δ; "
              f"{sum(c['exceedances'] for c in cells)} exceedances in all; tightest: {label(tightest)}, δ = "
              f"{tightest['delta']:g}, quantile of r² {tightest['quantile']:.3g} against the bound {tightest['bound']:.3g}")
    if verdict == "FAIL":
        worst = max(cells, key=lambda c: c["interval"][0] - c["delta"])
        detail += (f"; violated: {label(worst)}, δ = {worst['delta']:g}, {worst['exceedances']}/{worst['samples']} "
                   "beyond the bound")
    needed = [c["samples_needed"] for c in cells if c["verdict"] == "INCONCLUSIVE"]
    settle = max(needed) if needed and None not in needed else None
    if verdict == "INCONCLUSIVE":
        detail += "; more draws would settle it" + (f" (about {settle} per cell)" if settle else "")
    return Check(name, verdict, detail, settle)


def beta_text(value: float | None) -> str:
    return "none (the slope does not change sign)" if value is None else f"{value:.3f}"


#: the sub-Gaussian constant s of the package's laws of √d V: uniform, normal and Rademacher are strictly
#: sub-Gaussian (variance proxy = variance = 1)
SUB_GAUSSIAN_S = 1.0


#: draws of W for the eighth-moment constant C of Prop. 3's conditions
C_SAMPLES = 4000


def prop3_applies(C: float, d: int, depth: int, a2: float, delta: float) -> tuple[bool, bool]:
    """Whether Prop. 3's conditions hold at (d, L, α², δ), with s = :data:`SUB_GAUSSIAN_S` and the eighth-moment C:
    (i) d ≥ 64, α² ≤ 2/((√C s⁴ + 4√C + 16 s⁴) d) and 2L exp(−d/(64α²s²)) ≤ δ/11; (ii) α² ≤ 1/(√C (d + 128 s⁴))."""
    root, sg = math.sqrt(C), SUB_GAUSSIAN_S
    lower = (d >= 64 and a2 <= 2.0 / ((root * sg**4 + 4 * root + 16 * sg**4) * d)
             and 2 * depth * math.exp(-d / (64 * a2 * sg**2)) <= delta / 11)
    return lower, a2 <= 1.0 / (root * (d + 128 * sg**4))


#: the colour of each class in the plots
CLASS_COLOURS = {"explosion": "tab:red", "non-trivial": "black", "identity": "tab:blue"}


class Preset(Entry):
    """One preset of ``python -m validation.regimes`` (module docstring): a kind of run (the subclass) and a paper's
    values for it (the instance)."""

    #: the kind of run, the JSON's ``settings.kind``
    kind: ClassVar[str]
    #: the settings a preset of this kind takes (the others are refused when given)
    applies: ClassVar[frozenset[str]]
    #: the values every preset of this kind starts from (its own values and the flags given override them)
    kind_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, name: str, title: str, *, rejects: Mapping[str, str] | None = None, **values: Any) -> None:
        self.name, self.title = name, title
        if rejects is not None:
            #: what this preset's verdict must reject (:attr:`Entry.rejects`), declared with its paper values: the
            #: presets of one kind check different claims
            self.rejects = dict(rejects)
        #: the paper's values of this preset, as given here (its title names them)
        self.paper_values = dict(values)
        self.defaults = {**self.kind_defaults, **values}

    def takes(self) -> frozenset[str]:
        return self.applies

    def described(self, noun: str) -> str:
        return f"the {self.name} {noun} ({self.kind})"

    def check_values(self, values: dict[str, Any], given: set[str]) -> None:
        """Refuse settings that cannot run together (``values``: every setting resolved; ``given``: the names the
        user gave); may fill derived values in ``values``."""

    def title_for(self, values: dict[str, Any]) -> str:
        """The run's title: the paper's caption by default."""
        return self.title

    @abc.abstractmethod
    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        """The numbers (JSON-ready, with ``title`` and ``checks``) and the arrays behind the plot."""

    @abc.abstractmethod
    def table(self, numbers: dict[str, Any]) -> str:
        """The console table (before the checks and the verdict)."""

    @abc.abstractmethod
    def plot(self, numbers: dict[str, Any], data: dict[str, Any], ax: Any = None) -> Any:
        """Draw the figure on ``ax`` (None: a new figure); returns the Figure."""


#: settings that apply only to one weight regime
REGIME_ONLY = {"law": "iid", "lengthscale": "smooth", "smooth_weights": "smooth", "hurst": "fractional"}


class WeightsPreset(Preset):
    """A preset whose ResNet's weights follow a regime (i.i.d., smooth, fractional): the ``sweep`` and
    ``distribution`` kinds."""

    kind_defaults: ClassVar[dict[str, Any]] = {"law": "uniform", "lengthscale": 0.1, "smooth_weights": "values",
                                               "activation": "relu"}

    def check_values(self, values: dict[str, Any], given: set[str]) -> None:
        for key, regime in REGIME_ONLY.items():
            if key in given and values["regime"] != regime:
                raise SettingsError(key, f"applies to --regime {regime} only (the regime is {values['regime']})")
        if values.get("noise_dtype") is not None and values["regime"] == "smooth":
            raise SettingsError("noise_dtype", "applies to i.i.d. and fractional weights; smooth weights are drawn in "
                                               "--dtype")
        if values["regime"] == "fractional" and values.get("hurst") is None:
            raise SettingsError("hurst", "--regime fractional needs --hurst H (0 < H < 1)")
        if values["regime"] != "iid":
            values["law"] = None
        if values["regime"] != "smooth":
            values["lengthscale"] = values["smooth_weights"] = None
        try:
            Block(values["block"], values["activation"])
        except ValueError as exc:
            raise SettingsError("activation", str(exc)) from None

    def title_for(self, values: dict[str, Any]) -> str:
        """The paper's caption, unless a setting it names differs from the paper's."""
        title = self.title
        named = ("regime", "law", "lengthscale", "hurst", "block", "activation", "width", "depths", "betas",
                 "max_over_layers")
        if any(k in self.paper_values and values.get(k) != self.paper_values[k] for k in named):
            title = f"res-{values['block'][-1]}, {regime_name(values)}, d = {values['width']}"
        if values.get("smooth_weights") == "increments":
            title += "; weights: the processes' normalised increments (the authors' code)"
        return title

    def estimate_mb(self, s: Any) -> float:
        """Per worker a chunk of networks (their weights and states at the deepest depth: all of them, or as many as
        ``--chunk-mb`` holds, at least one) and its temporaries, 1.2 chunks (measured: 816–1004 MiB for the presets'
        512-MiB chunks); the interpreter once (forked workers share it)."""
        item = s.torch_dtype.itemsize
        depth = max(s.depths)
        columns = len(s.betas) * s.inputs
        per_net = 2 * depth * s.width * s.width * item + depth * s.width * columns * item * 2
        chunk = min(per_net * s.samples, max(per_net, s.chunk_mb * 2**20))
        return run_memory_mb(1.2 * chunk / 2**20, s.workers or 1)

    def estimate_seconds(self, s: Any) -> float:
        """~9e-9 s per (network, layer, d², weight matrix or column) unit in float64 (fig2 at 2000 samples took 558 s
        on 2 cores), about 0.4 of it in float32, shared by the workers."""
        units = s.samples * sum(s.depths) * s.width ** 2 * (2 + len(s.betas) * s.inputs)
        return 9e-9 * units * (0.4 if s.dtype == "float32" else 1.0) / (s.workers or 1)
