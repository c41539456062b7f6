"""Scaling regimes at initialisation: Marion et al. Fig. 1–5 and Chizat Prop. 2.1, one command each.

    python -m validation.regimes --preset fig1     # Fig. 1 + 3: i.i.d. U(−√(3/d), √(3/d)), β ∈ {¼, ½, 1}
    python -m validation.regimes --preset fig2 --dtype float32 --workers 2   # Fig. 2: β = ½, L = 1000, d = 100,
                                                   # 10⁴ draws, about 10 min on 2 cores
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

import argparse
import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from limits.activations import get_activation
from limits.chizat import chizat_constant, chizat_expected_spread, chizat_spread
from limits.fractional import check_hurst
from limits.initialisation import (
    IID_LAWS, SMOOTH_CONVENTIONS, Block, FractionalRegime, IIDRegime, Regime, SmoothRegime, largest_real_eigenvalue,
    measure_ratios,
)
from validation.regimes import assumptions as regime_assumptions
from validation.core import cli, runtime
from validation.core.workers import check_workers, run_tasks
from limits.regime_theory import (
    fractional_critical_beta, lemma14_bounds, positive_eigenvalue_probability, prop3_norm_bounds,
)
from validation.core.hypothesis import (
    binomial_consistency, bounds_check, exact_mean_check, exceedance_check, family_z, finite_or_inf,
    hotelling_zero_mean, lognormal_summary, quantile_bound_check,
)
from validation.core.regime_rule import TAU, classify, critical_beta, fit_slope
from validation.core.checks import Check, check_line, combine
from validation.core.results import RunInfo, StudyResult, utc_now
from validation.core.settings import (
    CommonSettings, SettingsError, check_choice, check_depths, check_float, check_int, make_settings,
    optional_torch_dtype, parse_float_list, parse_int_list, refuse_inapplicable, resolve_device, setting, settings_given,
)

__all__ = ["PRESETS", "RegimesSettings", "RegimesResult", "run", "main", "predicted_critical_beta"]

PAPER_DEPTHS = (10, 20, 50, 100, 200, 500, 1000)

#: Paper settings (Marion et al. App. E, Table 2; Chizat lecture §2). Every key is a setting.
PRESETS: dict[str, dict[str, Any]] = {
    "fig1": dict(kind="sweep", regime="iid", law="uniform", block="res3", betas=(0.25, 0.5, 1.0),
                 depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
                 title="Fig. 1 & 3: res-3, i.i.d. U(−√(3/d), √(3/d)), d = 40"),
    "fig4": dict(kind="sweep", regime="smooth", lengthscale=0.1, block="res3", betas=(0.5, 1.0, 2.0),
                 depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
                 title="Fig. 4 & 5: res-3, smooth RBF weights (ℓ = 0.1), d = 40"),
    "fig2": dict(kind="distribution", regime="iid", law="uniform", block="res3", betas=(0.5,), depths=(1000,),
                 width=100, n_in=64, samples=10_000, inputs=1,
                 title="Fig. 2: res-3, i.i.d. uniform, β = 1/2, L = 1000, d = 100"),
    "prop13": dict(kind="sweep", regime="smooth", lengthscale=0.1, block="res1", activation="identity",
                   betas=(0.25, 0.5, 0.75, 1.0, 2.0), depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
                   max_over_layers=True,
                   title="Prop. 13: linear res-1, smooth RBF weights (ℓ = 0.1), d = 40: max_k ‖h_k − h_0‖/‖h_0‖"),
    "prop3": dict(kind="sweep", regime="iid", law="uniform", block="res3", betas=(0.4, 0.45, 0.5, 0.6),
                  depths=(1024, 2048, 4096), width=64, n_in=64, samples=50, inputs=1,
                  title="Prop. 3: res-3, i.i.d. uniform, d = 64, L ≥ 1024 (where its lower bound (i) applies)"),
    "assumptions": dict(kind="assumptions", width=40, samples=20_000,
                        title="Marion et al. (A₂), (A₄): Props. 1 and 5, Lemma 16, the eighth moment"),
    "chizat": dict(kind="chizat", width=40, hidden=16, layers=100, kappas=(0.25, 1.0, 4.0),
                   betas=(0.25, 0.5, 1.0), depths=PAPER_DEPTHS, samples=1000, sweep_samples=100, hiddens=(4, 16, 64),
                   hidden_samples=400, sigma_u=None,
                   sigma_v=1.0, title="Chizat Prop. 2.1: ResNet with ReLU 2LP blocks"),
}
ALIASES = {"fig3": "fig1", "fig5": "fig4"}
#: networks per task of a fig2 run (the unit that --workers shares out)
FIG2_BLOCK = 250
PAPER_FIG2 = {"bound_q1": 0.87, "bound_q3": 2.06, "empirical_q1": 1.21, "width": 100, "depth": 1000, "beta": 0.5}

#: which settings apply to each kind of preset (the rest are refused when given)
APPLIES = {
    "sweep": {"regime", "law", "lengthscale", "smooth_weights", "hurst", "block", "activation", "betas", "depths", "width", "n_in",
              "samples", "inputs", "tau", "chunk_mb", "critical_tolerance", "noise_dtype", "deltas", "max_over_layers"},
    "distribution": {"regime", "law", "lengthscale", "smooth_weights", "hurst", "block", "activation", "betas", "depths", "width",
                     "n_in", "samples", "inputs", "chunk_mb", "workers", "scheduler", "noise_dtype"},
    "assumptions": {"width", "samples"},
    "chizat": {"width", "hidden", "layers", "kappas", "betas", "depths", "samples", "sweep_samples", "hiddens",
               "hidden_samples", "sigma_u",
               "sigma_v", "tau", "critical_tolerance"},
}
#: settings that apply only to one weight regime
REGIME_ONLY = {"law": "iid", "lengthscale": "smooth", "smooth_weights": "smooth", "hurst": "fractional"}
#: the δ values of Props. 2 and 6 checked by default (decided by 50 draws per cell: see validation.core.hypothesis)
QUANTILE_DELTAS = (0.25, 0.5)
#: β at least this far from the predicted critical β has a predicted class that is checked
CLASS_MARGIN = 0.2


@dataclass(frozen=True)
class RegimesSettings(CommonSettings):
    """Settings of the regimes study; ``None`` means the preset's value."""

    regime: str | None = setting(None, "weight regime: iid entries, smooth RBF Gaussian processes read at k/L, or "
                                       "fractional Gaussian noise of Hurst index --hurst along the layers",
                                 choices=("iid", "smooth", "fractional"), group="model", default_text="the preset's")
    law: str | None = setting(None, "law of √d·V_ij for --regime iid (unit variance)", choices=IID_LAWS, group="model",
                              default_text="uniform")
    lengthscale: float | None = setting(None, "RBF length-scale ℓ > 0 for --regime smooth", parse=float, group="model",
                                        default_text="0.1")
    smooth_weights: str | None = setting(None, "how --regime smooth reads its Gaussian processes: 'values', V_k = "
                                               "𝒱(k/L) (Marion et al.'s text), or 'increments', 𝒱(k/L) − 𝒱((k−1)/L) "
                                               "normalised to entry variance 1/d (the authors' code; docs/results/"
                                               "regimes.md, 'Against the authors' code')",
                                         choices=SMOOTH_CONVENTIONS, group="model", default_text="values")
    hurst: float | None = setting(None, "Hurst index H ∈ (0, 1) for --regime fractional", parse=float, group="model",
                                  default_text="none; required with --regime fractional")
    block: str | None = setting(None, "residual block (Marion et al. Table 1)", choices=("res1", "res2", "res3"),
                                group="model", default_text="the preset's")
    activation: str | None = setting(None, "σ for res1/res2 (e.g. relu, tanh, prelu:0.8); res3 is ReLU",
                                     group="model", default_text="relu")
    betas: tuple[float, ...] | None = setting(None, "scalings β (α_L = L^-β), comma list, each ≥ 0",
                                              parse=parse_float_list, default_text="the preset's")
    depths: tuple[int, ...] | None = setting(None, "depths L, increasing comma list, each ≥ 1 (at least 3 for a "
                                                   "sweep; one for fig2)", parse=parse_int_list,
                                             default_text="the preset's")
    width: int | None = setting(None, "width d", parse=int, default_text="the preset's")
    n_in: int | None = setting(None, "input dimension n_in (h_0 = A x)", parse=int, default_text="64")
    samples: int | None = setting(None, "independent networks (each with its own weights, input layer and input)",
                                  parse=int, default_text="the preset's")
    inputs: int | None = setting(None, "inputs per network (samples = networks × inputs)", parse=int,
                                 default_text="1")
    sweep_samples: int | None = setting(None, "chizat: networks per depth in the β sweep", parse=int,
                                        default_text="100")
    hidden: int | None = setting(None, "chizat: hidden units M per block", parse=int, default_text="16")
    hiddens: tuple[int, ...] | None = setting(None, "chizat: hidden widths M of the M sweep (§2.1: the spread depends "
                                                    "on MLα² alone), comma list, each ≥ 1", parse=parse_int_list,
                                              default_text="4,16,64")
    hidden_samples: int | None = setting(None, "chizat: networks per M in the M sweep", parse=int, default_text="400")
    layers: int | None = setting(None, "chizat: depth L of the per-layer curves", parse=int, default_text="100")
    kappas: tuple[float, ...] | None = setting(None, "chizat: α = κ/√(ML) for the per-layer curves, each ≥ 0",
                                               parse=parse_float_list, default_text="0.25,1,4")
    sigma_u: float | None = setting(None, "chizat: std of u_j", parse=float, default_text="1/√d")
    sigma_v: float | None = setting(None, "chizat: std of v_j", parse=float, default_text="1")
    tau: float | None = setting(None, "classification threshold on the log-log slope", parse=float,
                                group="checks", default_text=str(TAU))
    critical_tolerance: float | None = setting(None, "the critical-β check: |estimate − prediction| ≤ this",
                                               parse=float, group="checks", default_text="0.1")
    deltas: tuple[float, ...] | None = setting(None, "i.i.d. sweep: the δ values of Props. 2 and 6, P(r² ≤ 2Lα²/δ) ≥ "
                                                     "1 − δ, checked at every β ≥ ½ and depth (comma list, each in "
                                                     "(0, 1); with N draws and no exceedance a cell settles once "
                                                     "N ≥ ln(level/2)/ln(1 − δ))", parse=parse_float_list,
                                               group="checks", default_text="0.25,0.5")
    noise_dtype: str | None = setting(None, "i.i.d. and fractional weights: the type they are drawn in, then cast to "
                                            "--dtype (float32 draws faster; another draw for the seed). Unlike the "
                                            "strong-error studies (float32 by default: network and limit read the same "
                                            "increments, so the error does not depend on the draw's precision), the "
                                            "ratios here are statistics of the draw itself, so float32 is opt-in",
                                      choices=("float32", "float64"), group="model", default_text="as --dtype")
    chunk_mb: float | None = setting(None, "memory budget per chunk of networks, MiB", parse=float,
                                     group="run and output", default_text="512")
    workers: int | None = setting(None, "fig2: processes (each single-threaded) sharing the networks in blocks of "
                                        f"{FIG2_BLOCK}; every network draws from its own streams, so the numbers do "
                                        "not depend on it", parse=int, group="run and output", default_text="1")
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
        for name in ("lengthscale", "sigma_u", "sigma_v", "tau", "critical_tolerance", "chunk_mb"):
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
    """The preset's values where a setting is None, after refusing settings that do not apply."""
    name = ALIASES.get(preset, preset)
    if name not in PRESETS:
        raise SettingsError("preset", f"{preset!r} unknown (allowed: {', '.join(sorted([*PRESETS, *ALIASES]))})")
    base = PRESETS[name]
    kind = base["kind"]
    given = settings_given(settings)
    refuse_inapplicable(given, APPLIES[kind], f"the {name} preset ({kind})")
    values = {**{k: v for k, v in base.items() if k not in ("kind", "title")},
              **{k: getattr(settings, k) for k in given}}
    if kind == "assumptions":
        pass
    elif kind != "chizat":
        values.setdefault("law", "uniform")
        values.setdefault("lengthscale", 0.1)
        values.setdefault("smooth_weights", "values")
        values.setdefault("activation", "relu")
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
    else:
        values["sigma_u"] = values.get("sigma_u") or 1.0 / math.sqrt(values["width"])
        if values["samples"] <= values["width"]:
            raise SettingsError("samples", f"{values['samples']} networks for width d={values['width']}: the zero-mean "
                                           f"test (Hotelling's T²) needs more (allowed: samples ≥ {values['width'] + 1})")
    if kind == "distribution":
        if len(values["depths"]) != 1:
            raise SettingsError("depths", f"fig2 studies one depth, got {list(values['depths'])}")
        if len(values["betas"]) != 1:
            raise SettingsError("betas", f"fig2 studies one β, got {list(values['betas'])}")
    elif kind != "assumptions" and len(values["depths"]) < 3:
        raise SettingsError("depths", f"{list(values['depths'])}: a sweep needs at least 3 depths to fit a slope")
    for key, default in (("tau", TAU), ("critical_tolerance", 0.1), ("chunk_mb", 512.0), ("workers", 1),
                         ("deltas", QUANTILE_DELTAS), ("max_over_layers", False)):
        if key in APPLIES[kind]:  # only what applies, so that the resolved settings replay the run
            values.setdefault(key, default)
    title = base["title"]  # the paper's caption, unless a setting it names differs from the paper's
    named = ("regime", "law", "lengthscale", "hurst", "block", "activation", "width", "depths", "betas",
             "max_over_layers")
    if kind not in ("chizat", "assumptions") and any(k in base and values.get(k) != base[k] for k in named):
        title = f"res-{values['block'][-1]}, {_regime_name(values)}, d = {values['width']}"
    if values.get("smooth_weights") == "increments":
        title += "; weights: the processes' normalised increments (the authors' code)"
    return dataclasses.replace(settings, **values, preset=name, kind=kind, title=title)


def _noise_dtype(s: RegimesSettings) -> torch.dtype | None:
    return optional_torch_dtype(s.noise_dtype)


def _regime_name(values: dict[str, Any]) -> str:
    return _regime(values).name


def _regime(values: Any) -> Regime:
    get = values.get if isinstance(values, dict) else (lambda k: getattr(values, k))
    if get("regime") == "iid":
        return IIDRegime(get("law"))
    if get("regime") == "smooth":
        return SmoothRegime(get("lengthscale"), get("smooth_weights") or "values")
    return FractionalRegime(get("hurst"))


def predicted_critical_beta(settings: RegimesSettings) -> float:
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


def estimate_mb(preset: str, settings: RegimesSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB."""
    try:
        s = _resolve(preset, settings)
    except SettingsError:
        return 0.0  # the run itself reports the bad setting
    item = 4 if s.dtype == "float32" else 8
    if s.kind == "assumptions":
        return 3 * regime_assumptions.CHUNK * s.width**2 * item / 2**20 + 300
    if s.kind == "chizat":
        layers = max(s.layers, max(s.depths))
        per_net = 2 * layers * s.hidden * s.width * item
        return min(64, max(s.samples, s.sweep_samples)) * per_net / 2**20 + 300
    depth = max(s.depths)
    columns = len(s.betas) * s.inputs
    per_net = 2 * depth * s.width * s.width * item + depth * s.width * columns * item * 2
    return (max(per_net, s.chunk_mb * 2**20) / 2**20 * 2 + 300) * (s.workers or 1)


def estimate_seconds(preset: str, settings: RegimesSettings) -> float:
    """A rough estimate of a sweep's or fig2's run time: ~9e-9 s per (network, layer, d², weight matrix or
    column) unit in float64 (fig2 at 2000 samples took 558 s on 2 cores), about 0.4 of it in float32, shared by
    fig2's workers; chizat is not estimated (0)."""
    try:
        s = _resolve(preset, settings)
    except SettingsError:
        return 0.0
    if s.kind in ("chizat", "assumptions"):
        return 0.0
    units = s.samples * sum(s.depths) * s.width ** 2 * (2 + len(s.betas) * s.inputs)
    return 9e-9 * units * (0.4 if s.dtype == "float32" else 1.0) / (s.workers or 1)


# ------------------------------------------------------------------------------------------------ the runs
def _bar(total: int, desc: str, progress: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="net", disable=not progress, leave=False)


def _checked_r_p(s: RegimesSettings) -> bool:
    """r_p's critical β and classes are checked except with fractional weights of H ≠ ½ (see the module doc)."""
    return not (s.regime == "fractional" and s.hurst != 0.5)


def _sweep(s: RegimesSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    """r_h, r_p over depths × β; classification, critical β, bounds, checks."""
    regime, block = _regime(s), Block(s.block, s.activation)
    depths, betas = list(s.depths), list(s.betas)
    keys = ("r_h", "r_p", "n_h", "n_p") + (("r_h_max",) if s.max_over_layers else ())
    data = {k: np.empty((len(depths), len(betas), s.samples * s.inputs)) for k in keys}
    if s.max_over_layers:
        data["v0_eigenvalue"] = np.empty((len(depths), s.samples))
    with _bar(len(depths) * s.samples, f"{s.preset} {regime.name}", progress) as bar:
        for i, depth in enumerate(depths):
            res = measure_ratios(regime, depth, betas, s.samples, s.inputs, s.width, s.n_in, block, seed=s.seed,
                                 label=("regimes", s.preset), dtype=s.torch_dtype, device=device,
                                 memory_mb=s.chunk_mb, progress=bar.update, noise_dtype=_noise_dtype(s),
                                 track_max=bool(s.max_over_layers))
            for key in keys:
                data[key][i] = getattr(res, key).reshape(len(betas), -1).double().numpy()
            if s.max_over_layers:
                data["v0_eigenvalue"][i] = res.v0_eigenvalue.numpy()
    critical = predicted_critical_beta(s)
    per_beta = []
    for j, beta in enumerate(betas):
        entry: dict[str, Any] = {"beta": beta, "predicted_class": predicted_class(beta, critical)}
        for key in ("r_h", "r_p"):
            fit = fit_slope(depths, data[key][:, j], seed=s.seed)
            r = data[key][:, j]
            entry[key] = {**fit, "class": classify(fit["slope"], s.tau),
                          "median": np.median(np.where(np.isfinite(r), r, np.inf), axis=1).tolist(),
                          "exploded": (~np.isfinite(r)).sum(axis=1).tolist()}
        per_beta.append(entry)
    estimate = {key: critical_beta(betas, [e[key]["slope"] for e in per_beta]) for key in ("r_h", "r_p")}
    bounds = []
    z = family_z(2 * len(betas) * len(depths))
    if s.regime == "iid" or (s.regime == "fractional" and s.hurst == 0.5):
        for j, beta in enumerate(betas):
            for i, depth in enumerate(depths):
                lo, hi = lemma14_bounds(beta, depth)
                bounds.append({"beta": beta, "depth": depth,
                               **{key: bounds_check(data[key][i, j], lo, hi, z) for key in ("r_h", "r_p")}})
    quantile_bounds = _quantile_bounds(s, data) if bounds else []
    exact_means = _exact_means(s, data) if bounds and _mean_is_exact(s) else []
    prop3 = _prop3_bounds(s, data, block) if bounds else None
    result = {
        "title": s.title, "depths": depths, "betas": betas, "samples": s.samples * s.inputs,
        "rule": f"slope s of log median r on log L over L ≥ L_max/10: explosion if s > {s.tau}, "
                f"identity if s < −{s.tau}, else non-trivial",
        "per_beta": per_beta, "critical_beta_estimate": estimate, "predicted_critical_beta": critical,
        "bounds": bounds, "bounds_z": z, "quantile_bounds": quantile_bounds, "exact_means": exact_means,
        "prop3_bounds": prop3,
        "bounds_note": "Lemma 14 / Prop. 7 apply to i.i.d. symmetric unit-variance weights only"
        if bounds else "no bounds: Lemma 14 / Prop. 7 need weights independent across layers",
    }
    quantities = ("r_h", "r_p") if _checked_r_p(s) else ("r_h",)
    checks = _classification_checks(per_beta, quantities, lambda e, key: e[key]["class"])
    checks += _critical_checks(betas, estimate, critical, s.critical_tolerance, quantities)
    if bounds:
        each = [b[k] for b in bounds for k in ("r_h", "r_p")]
        passed = sum(c["passed"] for c in each)
        uncounted = sum(not c["passed"] and not c["reliable"] for c in each)
        checks.append({"check": "Lemma 14 / Prop. 7 bounds", "passed": passed + uncounted == len(each),
                       "detail": f"{passed}/{len(each)} within z = {z:.2f} s.e."
                                 + (f"; {uncounted} failed but not counted: too few samples for the tail of r² "
                                    "(N < 10 (e^{s²} − 1), s the sd of log r²), where the sample mean is unreliable"
                                    if uncounted else "")})
    if quantile_bounds:
        checks.append(_exceedance_summary("Props. 2 / 6 quantile bounds", quantile_bounds).to_dict())
    if exact_means:
        checks.append(_exact_mean_summary(exact_means))
    if prop3 is not None and prop3["cells"]:
        checks.append(_exceedance_summary("Prop. 3 bounds", prop3["cells"]).to_dict())
    if s.max_over_layers:
        if isinstance(regime, SmoothRegime) and regime.convention == "values":
            data["initial_eigenvalue"] = _initial_eigenvalues(s, regime, device)
        result["max_over_layers"] = _max_over_layers(s, data)
        checks += result["max_over_layers"]["checks"]
    if not _checked_r_p(s):
        result["r_p_note"] = ("r_p not checked: with fractional weights its critical β lags H at finite depth and "
                              "width (docs/results/regimes.md); reported only")
    result["checks"] = checks
    return result, data


def _prop13_applies(s: RegimesSettings) -> bool:
    """Prop. 13 is proved for res-1 with σ = identity and smooth (Lipschitz) weights."""
    return s.regime == "smooth" and s.block == "res1" and get_activation(s.activation).name == "identity"


#: matrices drawn for the probability that a Gaussian d × d matrix has a positive real eigenvalue (Prop. 13)
GINIBRE_DRAWS = 20_000


def _initial_eigenvalues(s: RegimesSettings, regime: SmoothRegime, device: torch.device) -> np.ndarray:
    """The largest real eigenvalue of each network's 𝒱(0) (NaN: none is real); the networks are named as in
    :func:`limits.initialisation.measure_ratios`, so 𝒱 is the process that gives their layers."""
    label = ("regimes", s.preset)
    values = [regime.initial_weights(s.seed, (*label, "net", i), s.width, s.torch_dtype, device)[0]
              for i in range(s.samples)]
    return largest_real_eigenvalue(torch.stack(values)).numpy()


def _max_over_layers(s: RegimesSettings, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Marion et al. Prop. 13: linear res-1, smooth weights, β ∈ (0, 1), 𝒱(0)ᵀ with a positive eigenvalue ⇒
    max_k ‖h_k − h_0‖/‖h_0‖ → ∞ almost surely.

    The condition is the proposition's own: the eigenvalues of 𝒱(0), the process at t = 0, one matrix per network
    and the same at every depth (the layers read 𝒱(k/L), k ≥ 1; with the ``increments`` convention, and for other
    regimes, the first layer's V_1 at every depth stands in, as labelled). Checked:

    * the networks that meet the condition: every β ≤ 1 − 0.2 is an explosion (β ≥ 1 is outside the proposition:
      Prop. 12 bounds it), when the setting is the proposition's;
    * the fraction that meets it against the probability of the same event for a matrix of i.i.d. N(0, 1/d)
      entries — 𝒱(0)'s law — estimated from :data:`GINIBRE_DRAWS` matrices (exact binomial test, level 1%):
      the draw of 𝒱(0) is what it should be. Götze & Jalowy's 1 − 1/d is reported beside it (a bound for d large
      enough, not the probability at this d)."""
    if "initial_eigenvalue" in data:
        eigen = data["initial_eigenvalue"][None, :]
        condition = "𝒱(0) has a positive real eigenvalue"
    else:
        eigen = data["v0_eigenvalue"]
        condition = "the first layer's V_1 has a positive real eigenvalue at every depth (stand-in for 𝒱(0))"
    positive = np.all(np.nan_to_num(eigen, nan=-1.0) > 0, axis=0)                    # per network
    keep = np.repeat(positive, s.inputs)
    per_beta = []
    for j, beta in enumerate(s.betas if positive.sum() >= 2 else ()):
        fit = fit_slope(list(s.depths), data["r_h_max"][:, j][:, keep], seed=s.seed)
        others = finite_or_inf(data["r_h_max"][-1, j][~keep])
        per_beta.append({"beta": beta, **fit, "class": classify(fit["slope"], s.tau),
                         "median": np.median(finite_or_inf(data["r_h_max"][:, j][:, keep]), axis=1).tolist(),
                         "median_at_deepest_without": float(np.median(others)) if others.size else None})
    out: dict[str, Any] = {
        "networks": int(s.samples), "with_positive_eigenvalue": int(positive.sum()), "condition": condition,
        "lower_bound_fraction": 1.0 - 1.0 / s.width,
        "largest_real_eigenvalue_median": float(np.nanmedian(eigen[0])) if np.isfinite(eigen[0]).any() else None,
        "per_beta": per_beta, "applies": _prop13_applies(s), "checks": [],
    }
    if not out["applies"]:
        out["note"] = "Prop. 13 is proved for linear res-1 with smooth weights: reported, not checked"
        return out
    if "initial_eigenvalue" in data:
        p, se = positive_eigenvalue_probability(s.width, GINIBRE_DRAWS, s.seed)
        test = binomial_consistency(int(positive.sum()), s.samples, p)
        out["reference"] = {"probability": p, "se": se, "draws": GINIBRE_DRAWS, **test}
        lo, hi = test["ci95"]
        out["checks"].append(Check.of(
            "Prop. 13's condition: P(𝒱(0) has a positive real eigenvalue)", test["passed"],
            f"{test['count']}/{test['total']} = {test['fraction']:.3f} [{lo:.3f}, {hi:.3f}] against {p:.4f} ± {se:.4f} "
            f"for a Gaussian {s.width} × {s.width} matrix ({GINIBRE_DRAWS} draws); binomial p = {test['p_value']:.3g} "
            f"(level 1%); Götze–Jalowy's bound 1 − 1/d = {1 - 1 / s.width:.3f} holds for d large enough").to_dict())
    if positive.sum() < 2:
        out["checks"].append(Check.of("Prop. 13: max_k ratio explodes for β < 1", False,
                                      f"only {int(positive.sum())} networks meet the condition: {condition}").to_dict())
        return out
    for e in per_beta:
        if e["beta"] <= 1.0 - CLASS_MARGIN and e["beta"] > 0:
            lo, hi = e["ci95"]
            out["checks"].append(Check.of(
                f"Prop. 13: max_k ‖h_k − h_0‖/‖h_0‖ explodes at β = {e['beta']:g}", e["class"] == "explosion",
                f"slope {e['slope']:.3f} [{lo:.3f}, {hi:.3f}] > {s.tau:g}: {e['class']} ({int(positive.sum())}/"
                f"{s.samples} networks where {condition})").to_dict())
    return out


def _mean_is_exact(s: RegimesSettings) -> bool:
    """E r² = (1 + α²/2)^L − 1 exactly for res-3 (ReLU) with i.i.d. symmetric weights (limits.regime_theory.exact_mean_r2)."""
    return s.block == "res3" and (s.regime == "iid" or (s.regime == "fractional" and s.hurst == 0.5))


def _exact_means(s: RegimesSettings, data: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Props. 2 / 6's own quantity, E r² at every β ≥ ½ (Lα² ≤ 1) and depth, against its exact value."""
    cells = [(j, beta, i, depth) for j, beta in enumerate(s.betas) if beta >= 0.5 for i, depth in enumerate(s.depths)]
    z = family_z(2 * len(cells))
    return [{"quantity": key, **exact_mean_check(data[key][i, j], beta, depth, z)}
            for j, beta, i, depth in cells for key in ("r_h", "r_p")]


def _exact_mean_summary(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """One check over the exact-mean cells: FAIL when a reliable cell lies outside its z band."""
    failed = [c for c in cells if not c["passed"] and c["reliable"]]
    uncounted = sum(not c["passed"] and not c["reliable"] for c in cells)
    worst = max(cells, key=lambda c: abs(c["z"]) if math.isfinite(c["z"]) else math.inf)
    detail = (f"{sum(c['passed'] for c in cells)}/{len(cells)} cells with |mean − exact| ≤ z s.e.; largest |z| "
              f"{abs(worst['z']):.2f} ({worst['quantity']} β = {worst['beta']:g}, L = {worst['depth']}: mean r² "
              f"{worst['mean_r2']:.4g} against (1 + α²/2)^L − 1 = {worst['exact']:.4g})")
    if uncounted:
        detail += f"; {uncounted} outside but not counted (too few samples for the tail of r²)"
    return Check.of("Props. 2 / 6: E r² = (1 + α²/2)^L − 1 (res-3, exact)", not failed, detail).to_dict()


def _quantile_bounds(s: RegimesSettings, data: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Props. 2 (r_h) and 6 (r_p) at every β ≥ ½ (Lα² ≤ 1), depth and δ; one Bonferroni family (1%)."""
    cells = [(j, beta, i, depth) for j, beta in enumerate(s.betas) if beta >= 0.5 for i, depth in enumerate(s.depths)]
    level = 0.01 / max(1, 2 * len(cells) * len(s.deltas))
    return [{"quantity": key, **quantile_bound_check(data[key][i, j], beta, depth, delta, level)}
            for j, beta, i, depth in cells for delta in s.deltas for key in ("r_h", "r_p")]


#: the sub-Gaussian constant s of the package's laws of √d V: uniform, normal and Rademacher are strictly
#: sub-Gaussian (variance proxy = variance = 1)
SUB_GAUSSIAN_S = 1.0
#: draws of W for the eighth-moment constant C of Prop. 3's conditions
C_SAMPLES = 4000


def _prop3_applies(C: float, d: int, depth: int, a2: float, delta: float) -> tuple[bool, bool]:
    """Whether Prop. 3's conditions hold at (d, L, α², δ), with s = :data:`SUB_GAUSSIAN_S` and the eighth-moment C:
    (i) d ≥ 64, α² ≤ 2/((√C s⁴ + 4√C + 16 s⁴) d) and 2L exp(−d/(64α²s²)) ≤ δ/11; (ii) α² ≤ 1/(√C (d + 128 s⁴))."""
    root, sg = math.sqrt(C), SUB_GAUSSIAN_S
    lower = (d >= 64 and a2 <= 2.0 / ((root * sg**4 + 4 * root + 16 * sg**4) * d)
             and 2 * depth * math.exp(-d / (64 * a2 * sg**2)) <= delta / 11)
    return lower, a2 <= 1.0 / (root * (d + 128 * sg**4))


def _prop3_bounds(s: RegimesSettings, data: dict[str, np.ndarray], block: Block) -> dict[str, Any]:
    """Marion et al. Prop. 3, at every (β, L, δ) where its conditions hold (Cor. 4 (iii) is its β = ½ case):

    (i)  d ≥ 64, α² ≤ 2/((√C s⁴ + 4√C + 16 s⁴) d) and 2L exp(−d/(64α²s²)) ≤ δ/11 ⇒
         P(r_h² > exp(3Lα²/8 − √(11Lα²/(dδ))) − 1) ≥ 1 − δ;
    (ii) α² ≤ 1/(√C (d + 128 s⁴)) ⇒ P(r_h² < exp(Lα² + √(5Lα²/(dδ))) + 1) ≥ 1 − δ;

    with s = 1 (:data:`SUB_GAUSSIAN_S`) and C estimated by :func:`validation.regimes.assumptions.
    eighth_moment_constant`. Each is checked as an exceedance probability ≤ δ (Clopper–Pearson, Bonferroni over
    the cells, family-wise 1%); a lower bound ≤ 0 says nothing and is skipped."""
    C = regime_assumptions.eighth_moment_constant(block, s.law, s.width, C_SAMPLES, s.seed, s.torch_dtype)
    sg, d = SUB_GAUSSIAN_S, s.width
    planned = []
    for j, beta in enumerate(s.betas):
        for i, depth in enumerate(s.depths):
            a2 = depth ** (-2.0 * beta)
            la2 = depth * a2
            for delta in s.deltas:
                lower_applies, upper_applies = _prop3_applies(C, d, depth, a2, delta)
                if lower_applies:
                    lower = math.expm1(3 * la2 / 8 - math.sqrt(11 * la2 / (d * delta)))
                    if lower > 0:
                        planned.append(("(i) lower", j, i, beta, depth, delta, lower, False))
                if upper_applies:
                    upper = math.exp(la2 + math.sqrt(5 * la2 / (d * delta))) + 1
                    planned.append(("(ii) upper", j, i, beta, depth, delta, upper, True))
    level = 0.01 / max(1, len(planned))
    cells = [{"bound_kind": kind, "beta": beta, "depth": depth,
              **exceedance_check(data["r_h"][i, j] ** 2, bound, delta, level, above=above)}
             for kind, j, i, beta, depth, delta, bound, above in planned]
    return {"C": C, "s": sg, "width": d, "cells": cells,
            "note": "(i) needs d ≥ 64" if d < 64 else ""}


def _exceedance_summary(name: str, cells: list[dict[str, Any]]) -> Check:
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


def _classification_checks(per_beta: list[dict], quantities: Sequence[str], measured) -> list[dict]:
    checks = []
    for entry in per_beta:
        if entry["predicted_class"] is None:
            continue
        for key in quantities:
            got = measured(entry, key)
            checks.append({"check": f"class of β = {entry['beta']:g} ({key})", "passed": got == entry["predicted_class"],
                           "detail": f"measured {got}, predicted {entry['predicted_class']}"})
    return checks


def _critical_checks(betas: Sequence[float], estimate: dict[str, float | None], critical: float, tolerance: float,
                     quantities: Sequence[str]) -> list[dict]:
    if not min(betas) < critical < max(betas) and critical not in betas:
        return [{"check": "critical β", "passed": True, "detail": f"not checked: the β grid [{min(betas):g}, "
                                                                  f"{max(betas):g}] does not bracket {critical:g}"}]
    checks = []
    for key in quantities:
        value = estimate[key] if isinstance(estimate, dict) else estimate
        ok = value is not None and abs(value - critical) <= tolerance
        checks.append({"check": f"critical β ({key})", "passed": bool(ok),
                       "detail": f"estimate {'none' if value is None else f'{value:.3f}'}, predicted {critical:g} "
                                 f"± {tolerance:g}"})
    return checks


def _fig2_block(task: tuple[RegimesSettings, str, int, int]) -> dict[str, np.ndarray]:
    """The ratios of networks first … first + count − 1 of a fig2 run (a task of :func:`validation.core.workers.run_tasks`)."""
    s, device, first, count = task
    with runtime.threads(1 if s.workers > 1 or s.scheduler is not None else None):
        res = measure_ratios(_regime(s), s.depths[0], [s.betas[0]], count, s.inputs, s.width, s.n_in,
                             Block(s.block, s.activation), seed=s.seed, label=("regimes", s.preset),
                             dtype=s.torch_dtype, device=device, memory_mb=s.chunk_mb, first=first,
                             noise_dtype=_noise_dtype(s))
    return {k: getattr(res, k).reshape(-1).double().numpy() for k in ("r_h", "r_p", "n_h", "n_p")}


def _distribution(s: RegimesSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    depth, beta = s.depths[0], s.betas[0]
    tasks = [(s, str(device), first, min(FIG2_BLOCK, s.samples - first)) for first in range(0, s.samples, FIG2_BLOCK)]
    with _bar(s.samples, f"fig2 {_regime(s).name}", progress) as bar:
        blocks = run_tasks(_fig2_block, tasks, s.workers, scheduler=s.scheduler,
                           on_result=lambda block: bar.update(block["r_h"].size // s.inputs))
    data = {k: np.concatenate([block[k] for block in blocks]) for k in ("r_h", "r_p", "n_h", "n_p")}
    paper_size = (s.regime == "iid" and s.block == "res3" and beta == PAPER_FIG2["beta"]
                  and depth == PAPER_FIG2["depth"] and s.width == PAPER_FIG2["width"])
    result = {
        "title": s.title, "beta": beta, "depth": depth, "width": s.width, "samples": int(data["n_h"].size),
        "tasks": len(tasks), "block": FIG2_BLOCK,
        "paper": PAPER_FIG2,
        "forward": lognormal_summary(data["n_h"], (PAPER_FIG2["bound_q1"], PAPER_FIG2["bound_q3"])),
        "backward": lognormal_summary(data["n_p"]),
        "forward_r_h": lognormal_summary(data["r_h"]),
    }
    nonfinite = sum(int((~np.isfinite(v)).sum()) for v in data.values())
    checks = [{"check": "no overflow", "passed": nonfinite == 0, "detail": f"{nonfinite} non-finite values"}]
    if paper_size:
        f = result["forward"]
        checks.append({"check": "paper's Q1 bound", "passed": f["q1_above_bound"],
                       "detail": f"Q1 {f['quartiles'][0]:.3f} ≥ {PAPER_FIG2['bound_q1']}"})
        checks.append({"check": "paper's Q3 bound", "passed": f["q3_below_bound"],
                       "detail": f"Q3 {f['quartiles'][2]:.3f} ≤ {PAPER_FIG2['bound_q3']}"})
    else:
        checks.append({"check": "paper's quartile bounds", "passed": True,
                       "detail": "not checked: they are stated for i.i.d. res-3, β = ½, L = 1000, d = 100"})
    if s.regime == "iid":
        result["quantile_bounds"] = _fig2_quantile_bounds(s, data["n_h"], Block(s.block, s.activation))
        if result["quantile_bounds"]["cells"]:
            checks.append(_exceedance_summary("Prop. 3: each quantile of ‖h_L‖/‖h_0‖ against its own bound",
                                              result["quantile_bounds"]["cells"]).to_dict())
    result["checks"] = checks
    return result, data


#: the tail probabilities q of Fig. 2's quantile bounds: the q-quantile of ‖h_L‖/‖h_0‖ from below (Prop. 3 (i)),
#: the (1 − q)-quantile from above (Prop. 3 (ii)); ¼ gives the paper's quartile bounds
FIG2_TAILS = (0.1, 0.25, 0.5)


def _fig2_quantile_bounds(s: RegimesSettings, ratios: np.ndarray, block: Block) -> dict[str, Any]:
    """Each quantile of ‖h_L‖/‖h_0‖ against the bound at its own tail probability δ (:func:`limits.regime_theory.
    prop3_norm_bounds`), where Prop. 3's conditions hold (the same as in :func:`_prop3_bounds`): the q-quantile is
    at least √exp(3Lα²/8 − √(11Lα²/(dq))), the (1 − q)-quantile at most √exp(Lα² + √(5Lα²/(dq))). Each is an
    exceedance probability ≤ q (Clopper–Pearson, Bonferroni over the cells, family-wise 1%). At q = ¼, d = 100,
    Lα² = 1 they are the paper's 0.87 and 2.06; Cor. 4 (iii) read as two-sided at δ = ¼ would give 0.755, 2.26."""
    depth, beta, d = s.depths[0], s.betas[0], s.width
    a2 = depth ** (-2.0 * beta)
    la2 = depth * a2
    C = regime_assumptions.eighth_moment_constant(block, s.law, d, C_SAMPLES, s.seed, s.torch_dtype)
    squared = np.asarray(ratios, dtype=np.float64) ** 2
    planned = []
    for q in FIG2_TAILS:
        lower, upper = prop3_norm_bounds(la2, d, q)
        lower_applies, upper_applies = _prop3_applies(C, d, depth, a2, q)
        if lower_applies:
            planned.append((f"(i) {q:g}-quantile ≥ {lower:.3f}", lower, q, False))
        if upper_applies:
            planned.append((f"(ii) {1 - q:g}-quantile ≤ {upper:.3f}", upper, q, True))
    level = 0.01 / max(1, len(planned))
    cells = [{"bound_kind": kind, "beta": beta, "depth": depth, **exceedance_check(squared, bound**2, q, level, above=above),
              "bound_ratio": bound, "quantile_ratio": float(np.quantile(ratios, 1 - q if above else q))}
             for kind, bound, q, above in planned]
    return {"C": C, "s": SUB_GAUSSIAN_S, "width": d, "cells": cells, "cor4_two_sided_quarter": [
        math.sqrt(math.exp(3 * la2 / 8 - math.sqrt(22 * la2 / (d * 0.25)))),
        math.sqrt(math.exp(la2 + math.sqrt(10 * la2 / (d * 0.25))))]}


def _chizat(s: RegimesSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    d, m, layers, n = s.width, s.hidden, s.layers, s.samples
    c = chizat_constant(d, s.sigma_u, s.sigma_v)
    alphas = [k / math.sqrt(m * layers) for k in s.kappas]
    common = dict(width=d, hidden=m, networks=n, sigma_u=s.sigma_u, sigma_v=s.sigma_v, seed=s.seed,
                  dtype=s.torch_dtype, device=device)
    spread, first, second = (t.numpy() for t in chizat_spread(alphas, layers=layers, label=("chizat", "curves"),
                                                              moments=True, **common))
    _, mean_p = hotelling_zero_mean(first[:, 1:], second[:, 1:], n)          # (α, ℓ = 1…L)
    mean_level = 0.01 / (len(alphas) * layers)
    z_max = family_z(len(alphas) * layers)
    per_alpha = []
    for i, (kappa, alpha) in enumerate(zip(s.kappas, alphas)):
        expected = chizat_expected_spread(alpha, m, layers, c).numpy()
        mean = spread[i].mean(-1)
        se = spread[i].std(-1, ddof=1) / math.sqrt(n)
        z = np.where(se[1:] > 0, (mean[1:] - expected[1:]) / se[1:], 0.0)
        positive = spread[i, -1][spread[i, -1] > 0]
        sd_log = float(np.log(positive).std(ddof=1)) if positive.size > 1 else math.nan
        worst = float(np.abs(z).max())
        mean_displacement = first[i, -1] / n
        per_alpha.append({"kappa": kappa, "alpha": alpha, "expected": expected.tolist(), "mean": mean.tolist(),
                          "se": se.tolist(), "max_abs_z": worst, "z_at_L": float(z[-1]), "sd_log_at_L": sd_log,
                          "verdict": "pass" if worst <= z_max else "fail",
                          "mean_zero_p": mean_p[i].tolist(), "mean_zero_min_p": float(mean_p[i].min()),
                          "mean_displacement_at_L": float(np.linalg.norm(mean_displacement)),
                          "mean_displacement_null_rms_at_L": float(math.sqrt(max(0.0, np.trace(second[i, -1]) / n
                                                                           - mean_displacement @ mean_displacement)
                                                                       / (n - 1)))})
    hidden_sweep = _chizat_hidden_sweep(s, device)
    depths, betas = list(s.depths), list(s.betas)
    n = s.sweep_samples
    common["networks"] = n
    sweep = np.empty((len(depths), len(betas), n))
    with tqdm(total=len(depths), desc="chizat depths", disable=not progress, leave=False) as bar:
        for i, depth in enumerate(depths):
            a = [(m * depth) ** (-b) for b in betas]
            spread_l = chizat_spread(a, layers=depth, label=("chizat", "sweep", depth), **common)[:, -1, :]
            sweep[i] = np.sqrt(spread_l.numpy())
            bar.update(1)
    critical = predicted_critical_beta(s)
    per_beta = []
    for j, beta in enumerate(betas):
        fit = fit_slope(depths, sweep[:, j], seed=s.seed)
        per_beta.append({"beta": beta, **fit, "class": classify(fit["slope"], s.tau),
                         "predicted_class": predicted_class(beta, critical),
                         "median": np.median(sweep[:, j], axis=1).tolist()})
    estimate = critical_beta(betas, [e["slope"] for e in per_beta])
    checks = [{"check": f"exact spread, α√(ML) = {e['kappa']:g}", "passed": e["verdict"] == "pass",
               "detail": f"max |z| {e['max_abs_z']:.2f} ≤ {z_max:.2f}"} for e in per_alpha]
    checks += [{"check": f"E h^ℓ = x (Prop. 2.1), α√(ML) = {e['kappa']:g}", "passed": e["mean_zero_min_p"] >= mean_level,
                "detail": f"Hotelling's test of E (h^ℓ − x)/‖x‖ = 0 at every layer: smallest p {e['mean_zero_min_p']:.3g} "
                          f"(≥ {mean_level:.2g}: Bonferroni, family-wise 1%); at ℓ = L ‖mean‖ "
                          f"{e['mean_displacement_at_L']:.3g} (its size under E = 0: {e['mean_displacement_null_rms_at_L']:.3g})"}
               for e in per_alpha]
    checks += hidden_sweep["checks"]
    checks += _classification_checks(per_beta, ("r",), lambda e, key: e["class"])
    checks += _critical_checks(betas, {"r": estimate}, critical, s.critical_tolerance, ("r",))
    result = {
        "title": s.title, "width": d, "hidden": m, "layers": layers, "samples": s.samples, "sweep_samples": n,
        "c": c, "sigma_u": s.sigma_u, "sigma_v": s.sigma_v,
        "check_rule": f"|mean − exact| ≤ z s.e. at every layer ℓ and α, z = {z_max:.2f} (Bonferroni over "
                      f"{len(alphas) * layers} checks, family-wise 1%)",
        "per_alpha": per_alpha, "depths": depths, "per_beta": per_beta,
        "rule": f"α = (ML)^-β; slope s of log median ‖h^L − x‖/‖x‖ on log L (top decade): explosion if "
                f"s > {s.tau}, identity if s < −{s.tau}, else non-trivial",
        "critical_beta_estimate": estimate, "predicted_critical_beta": critical, "hidden_sweep": hidden_sweep,
        "checks": checks,
    }
    return result, {"spread": spread, "sweep": sweep}


def _chizat_hidden_sweep(s: RegimesSettings, device: torch.device) -> dict[str, Any]:
    """Chizat §2.1, α = Θ(1/√(ML)): at depth L = ``layers`` and each M of ``hiddens``, two scalings on the same
    networks — α = 1/√(ML), where E‖h^L − x‖²/‖x‖² = (1 + c/L)^L − 1 whatever M is (MLα² = 1), and α = 1/√L,
    which forgets M: (1 + cM/L)^L − 1 ≈ e^{cM} − 1. Checks: with α = 1/√(ML) the mean spread at every M lies within
    z standard errors of the M-free value (z Bonferroni over the M's, family-wise 1%); the contrast is reported."""
    layers, n = s.layers, s.hidden_samples
    c = chizat_constant(s.width, s.sigma_u, s.sigma_v)
    z = family_z(len(s.hiddens))
    rows, worst = [], 0.0
    for m in s.hiddens:
        alphas = [1.0 / math.sqrt(m * layers), 1.0 / math.sqrt(layers)]
        spread = chizat_spread(alphas, width=s.width, hidden=m, layers=layers, networks=n, sigma_u=s.sigma_u,
                               sigma_v=s.sigma_v, seed=s.seed, label=("chizat", "hidden", m), dtype=s.torch_dtype,
                               device=device)[:, -1, :].numpy()                      # (2, n): the spread at ℓ = L
        entry: dict[str, Any] = {"hidden": m}
        for key, column, alpha in (("ml", 0, alphas[0]), ("l_only", 1, alphas[1])):
            exact = float(chizat_expected_spread(alpha, m, layers, c)[-1])
            mean, se = float(spread[column].mean()), float(spread[column].std(ddof=1) / math.sqrt(n))
            entry[key] = {"alpha": alpha, "mean": mean, "se": se, "exact": exact,
                          "z": (mean - exact) / se if se > 0 else 0.0}
        worst = max(worst, abs(entry["ml"]["z"]))
        rows.append(entry)
    m_free = float(chizat_expected_spread(1.0 / math.sqrt(layers), 1, layers, c)[-1])
    hiddens = ", ".join(str(r["hidden"]) for r in rows)
    means = ", ".join(f"{r['ml']['mean']:.4g}" for r in rows)
    check = Check.of("§2.1: at α = 1/√(ML) the spread does not depend on M", worst <= z,
                     f"mean ‖h^L − x‖²/‖x‖² at M = {hiddens}: {means} against (1 + c/L)^L − 1 = {m_free:.4g}; "
                     f"max |z| {worst:.2f} ≤ {z:.2f}")
    return {"layers": layers, "networks": n, "c": c, "m_free": m_free, "z": z, "rows": rows,
            "checks": [check.to_dict()]}


def _assumptions(s: RegimesSettings, device: torch.device, progress: bool) -> tuple[dict, dict]:
    """Marion et al.'s (A₂)/(A₄) block by block (:mod:`validation.regimes.assumptions`; on the CPU)."""
    numbers, data = regime_assumptions.assumptions(s.width, s.samples, s.seed, s.torch_dtype)
    return {**numbers, "title": s.title}, data


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
        """Every check of the run: ``{"check", "passed", "detail"}``; the verdict is PASS when all pass."""
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

    def table(self) -> str:
        kind = self.settings.kind
        text = {"sweep": _sweep_table, "distribution": _distribution_table, "chizat": _chizat_table,
                "assumptions": regime_assumptions.assumptions_table}[kind](self.numbers)
        lines = [text, "", "checks:"]
        lines += [check_line(c) for c in self.checks]
        lines += [f"verdict: {self.verdict}", f"wall time {self.run_info.wall_time_s:.1f} s"]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        from validation.regimes import plots as regime_plots

        if self.settings.kind == "sweep":
            return regime_plots.plot_sweep(self.numbers, self.data, ax)
        if self.settings.kind == "distribution":
            return regime_plots.plot_distribution(self.data["n_h"], self.data["n_p"], self.numbers, ax)
        if self.settings.kind == "assumptions":
            return regime_plots.plot_assumptions(self.numbers, ax)
        return regime_plots.plot_chizat(self.numbers, self.data["spread"], self.data["sweep"], ax)


def _sweep_table(result: dict[str, Any]) -> str:
    lines = [f"{result['title']} — {result['samples']} samples per (β, L)", f"rule: {result['rule']}"]
    head = (f"{'β':>6} | {'slope r_h [95% CI]':>26} {'regime r_h':>12} | {'slope r_p [95% CI]':>26} "
            f"{'regime r_p':>12} | {'median r_h @Lmax':>16}")
    lines += [head, "-" * len(head)]
    for e in result["per_beta"]:
        cells = []
        for key in ("r_h", "r_p"):
            lo, hi = e[key]["ci95"]
            cells.append(f"{e[key]['slope']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] {e[key]['class']:>12}")
        lines.append(f"{e['beta']:>6g} | {cells[0]} | {cells[1]} | {e['r_h']['median'][-1]:>16.4g}")
    crit = result["critical_beta_estimate"]
    lines.append(f"critical β (zero of the slope, interpolated): r_h {_beta_text(crit['r_h'])}, r_p "
                 f"{_beta_text(crit['r_p'])}; predicted {result['predicted_critical_beta']:g}")
    if result["bounds"]:
        lines.append("")
        lines.append(f"Lemma 14 / Prop. 7: (1+α²/2)^L − 1 ≤ E r² ≤ (1+α²)^L − 1 within z = {result['bounds_z']:.2f} "
                     "s.e. (Bonferroni, family-wise 1%); res-3 attains the lower bound exactly, so z(lower) ~ N(0, 1)")
        lines.append(f"{'β':>6} {'L':>6} | {'mean r_h²':>11} {'z(lower)':>9} {'sd log':>7} {'':>6} | "
                     f"{'mean r_p²':>11} {'z(lower)':>9} {'sd log':>7} {'':>6} | {'lower':>10} {'upper':>10}")
        for b in result["bounds"]:
            cells = [f"{b[k]['mean_r2']:>11.4g} {b[k]['z_vs_lower']:>9.2f} {b[k]['sd_log_r2']:>7.2f} "
                     f"{b[k]['verdict'][:6]:>6}" for k in ("r_h", "r_p")]
            lines.append(f"{b['beta']:>6g} {b['depth']:>6} | {cells[0]} | {cells[1]} | {b['r_h']['lower']:>10.4g} "
                         f"{b['r_h']['upper']:>10.4g}")
        checks = [b[k] for b in result["bounds"] for k in ("r_h", "r_p")]
        passed = sum(c["passed"] for c in checks)
        lines.append(f"bounds: {passed}/{len(checks)} checks pass; "
                     f"{sum(not c['reliable'] for c in checks)} with too few samples for their tail (N < 10 (e^{{s²}} − 1), "
                     "s = sd log r²)")
    else:
        lines.append(result["bounds_note"])
    if result.get("quantile_bounds"):
        lines += ["", "Props. 2 / 6: P(r² ≤ 2Lα²/δ) ≥ 1 − δ (Lα² ≤ 1), every depth; slack = 2Lα²/δ over the (1 − δ)-quantile "
                      "of r² (smallest over the depths), exceedances of the bound over all depths"]
        lines += _exceedance_rows(result["quantile_bounds"], "quantity")
    if result.get("exact_means"):
        lines += ["", "Props. 2 / 6's own quantity: E r² against (1 + α²/2)^L − 1, exact for res-3 (Markov's bound above "
                      "cannot fail; this can); z = (mean − exact)/s.e., per β the largest |z| over the depths"]
        for key in ("r_h", "r_p"):
            for beta in sorted({c["beta"] for c in result["exact_means"]}):
                cells = [c for c in result["exact_means"] if c["quantity"] == key and c["beta"] == beta]
                worst = max(cells, key=lambda c: abs(c["z"]))
                lines.append(f"  {key} β = {beta:g}: largest |z| {abs(worst['z']):.2f} at L = {worst['depth']} "
                             f"(mean {worst['mean_r2']:.4g}, exact {worst['exact']:.4g}); "
                             f"{sum(c['passed'] for c in cells)}/{len(cells)} within")
    prop3 = result.get("prop3_bounds")
    if prop3 is not None:
        lines += ["", f"Prop. 3 (Cor. 4 (iii) at β = ½) on r_h², where its conditions hold (C = {prop3['C']:.4g}, the "
                      f"eighth moment of the block, estimated; s = {prop3['s']:g}): (i) P(r² > e^(3Lα²/8 − √(11Lα²/(dδ))) − 1) "
                      "≥ 1 − δ (d ≥ 64), (ii) P(r² < e^(Lα² + √(5Lα²/(dδ))) + 1) ≥ 1 − δ; slack = how far the quantile is "
                      "inside the bound (ratio)"]
        if prop3["cells"]:
            lines += _exceedance_rows(prop3["cells"], "bound_kind")
        else:
            lines.append("no (β, L, δ) meets the conditions" + (f" — {prop3['note']}" if prop3["note"] else ""))
    if "max_over_layers" in result:
        m = result["max_over_layers"]
        reference = m.get("reference")
        expected = (f"{reference['probability']:.4f} for a Gaussian matrix of this size" if reference else
                    f"Götze–Jalowy: at least 1 − 1/d = {m['lower_bound_fraction']:.3f} for d large enough")
        lines += ["", f"max over the layers, max_k ‖h_k − h_0‖/‖h_0‖ (Prop. 13), over the {m['with_positive_eigenvalue']}/"
                      f"{m['networks']} networks where {m.get('condition', 'V_0 has a positive real eigenvalue')} "
                      f"(probability {expected})",
                  f"{'β':>6} | {'slope [95% CI]':>26} | {'regime':>12} | median max_k ratio @Lmax | the others' median"]
        for e in m["per_beta"]:
            lo, hi = e["ci95"]
            others = e["median_at_deepest_without"]
            lines.append(f"{e['beta']:>6g} | {e['slope']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] | {e['class']:>12} | "
                         f"{e['median'][-1]:>24.4g} | {'—' if others is None else f'{others:.4g}'}")
        if "note" in m:
            lines.append(m["note"])
    if "r_p_note" in result:
        lines.append(result["r_p_note"])
    return "\n".join(lines)


def _exceedance_rows(cells: list[dict[str, Any]], kind: str) -> list[str]:
    """Exceedance cells grouped by (kind, β, δ) over the depths: the smallest slack, the exceedances, the verdict."""
    lines = [f"{'':>10} {'β':>5} {'δ':>5} | {'min slack':>9} {'at L':>6} | {'beyond':>6} {'draws':>6} | verdict"]
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c[kind], c["beta"], c["delta"]), []).append(c)
    for (name, beta, delta), group in groups.items():
        tightest = min(group, key=lambda c: c["slack"])
        lines.append(f"{name:>10} {beta:>5g} {delta:>5g} | {tightest['slack']:>9.3g} {tightest['depth']:>6} | "
                     f"{sum(c['exceedances'] for c in group):>6} {sum(c['samples'] for c in group):>6} | "
                     f"{combine(c['verdict'] for c in group)}")
    return lines


def _beta_text(value: float | None) -> str:
    return "none (the slope does not change sign)" if value is None else f"{value:.3f}"


def _distribution_table(result: dict[str, Any]) -> str:
    lines = [f"{result['title']} — {result['samples']} samples",
             f"{'quantity':>16} | {'Q1':>7} {'median':>7} {'Q3':>7} | {'log mean':>8} {'log sd':>7} | "
             f"{'D’Agostino p':>12} {'Shapiro p':>10} {'KS p':>7}"]
    for key, name in (("forward", "‖h_L‖/‖h_0‖"), ("backward", "‖p_0‖/‖p_L‖"), ("forward_r_h", "‖h_L−h_0‖/‖h_0‖")):
        s = result[key]
        q1, q2, q3 = s["quartiles"]
        lines.append(f"{name:>16} | {q1:>7.3f} {q2:>7.3f} {q3:>7.3f} | {s['log_mean']:>8.3f} {s['log_sd']:>7.3f} | "
                     f"{s.get('dagostino_p', math.nan):>12.3g} {s.get('shapiro_p', math.nan):>10.3g} "
                     f"{s.get('ks_p', math.nan):>7.3g}")
    f = result["forward"]
    lines.append(f"paper: Q1 ≥ {PAPER_FIG2['bound_q1']} (bound) — measured {f['quartiles'][0]:.3f}: "
                 f"{'holds' if f['q1_above_bound'] else 'VIOLATED'}; paper's empirical Q1 {PAPER_FIG2['empirical_q1']}")
    lines.append(f"paper: Q3 ≤ {PAPER_FIG2['bound_q3']} (bound) — measured {f['quartiles'][2]:.3f}: "
                 f"{'holds' if f['q3_below_bound'] else 'VIOLATED'}")
    bounds = result.get("quantile_bounds")
    if bounds and bounds["cells"]:
        lo, hi = bounds["cor4_two_sided_quarter"]
        lines.append(f"each quantile of ‖h_L‖/‖h_0‖ against Prop. 3's one-sided bound at its own tail δ (C = "
                     f"{bounds['C']:.4g}, estimated); the paper's 0.87 and 2.06 are the δ = ¼ rows (Cor. 4 (iii) "
                     f"read as two-sided at δ = ¼ gives {lo:.3f} and {hi:.3f})")
        for c in bounds["cells"]:
            lines.append(f"  {c['bound_kind']:>24}: measured {c['quantile_ratio']:.3f}, {c['exceedances']}/{c['samples']} "
                         f"beyond — {c['verdict']}")
    return "\n".join(lines)


def _chizat_table(result: dict[str, Any]) -> str:
    lines = [f"{result['title']}: d = {result['width']}, M = {result['hidden']}, σ_u = {result['sigma_u']:.4g}, "
             f"σ_v = {result['sigma_v']:.4g}, c = dσ_v²σ_u²/2 = {result['c']:.4g}, {result['samples']} networks",
             f"E‖h^ℓ − x‖²/‖x‖² against ((1 + cα²M)^ℓ − 1), ℓ = 1…{result['layers']}; rule: {result['check_rule']}",
             f"{'α√(ML)':>8} {'α':>9} | {'mean @L':>10} {'exact @L':>10} {'z @L':>6} {'max|z|':>7} {'sd log':>7} | "
             "verdict"]
    for e in result["per_alpha"]:
        lines.append(f"{e['kappa']:>8g} {e['alpha']:>9.4g} | {e['mean'][-1]:>10.4g} {e['expected'][-1]:>10.4g} "
                     f"{e['z_at_L']:>6.2f} {e['max_abs_z']:>7.2f} {e['sd_log_at_L']:>7.2f} | {e['verdict']}")
    lines += ["", f"rule: {result['rule']}",
              f"{'β':>6} | {'slope [95% CI]':>26} | {'regime':>12} | median r @Lmax   ({result['sweep_samples']} "
              "networks per depth)"]
    for e in result["per_beta"]:
        lo, hi = e["ci95"]
        lines.append(f"{e['beta']:>6g} | {e['slope']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] | {e['class']:>12} | "
                     f"{e['median'][-1]:.4g}")
    lines.append(f"critical β (zero of the slope): {_beta_text(result['critical_beta_estimate'])}; predicted "
                 f"{result['predicted_critical_beta']:g}")
    h = result.get("hidden_sweep")
    if h is not None:
        lines += ["", f"M sweep at L = {h['layers']} ({h['networks']} networks per M): mean ‖h^L − x‖²/‖x‖² [± s.e.] "
                      "at α = 1/√(ML) (MLα² = 1) and at α = 1/√L (M forgotten), each against its exact value",
                  f"{'M':>6} | {'α = 1/√(ML)':>22} {'exact':>8} {'z':>6} | {'α = 1/√L':>24} {'exact':>10}"]
        for r in h["rows"]:
            ml, lo = r["ml"], r["l_only"]
            lines.append(f"{r['hidden']:>6} | {ml['mean']:>12.4g} ± {ml['se']:<7.2g} {ml['exact']:>8.4g} {ml['z']:>6.2f} | "
                         f"{lo['mean']:>12.4g} ± {lo['se']:<9.2g} {lo['exact']:>10.4g}")
    return "\n".join(lines)


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
        compute = {"sweep": _sweep, "distribution": _distribution, "chizat": _chizat,
                   "assumptions": _assumptions}[settings.kind]
        numbers, data = compute(settings, device, progress)
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=device, started=started,
                               wall_time_s=time.perf_counter() - clock, command=command_line)
    return RegimesResult(settings=settings, run_info=info, numbers=numbers, data=data)


EPILOG = """\
examples:
  python -m validation.regimes --preset fig1 --plot fig1.png --json fig1.json
  python -m validation.regimes --preset fig2 --dtype float32 --workers 2
  python -m validation.regimes --preset fig1 --regime fractional --hurst 0.8 --betas 0.6,0.8,1
"""


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--preset", required=True, choices=sorted([*PRESETS, *ALIASES]),
                        help="paper settings: fig1 (= fig3), fig2, fig4 (= fig5), chizat")


COMMAND = cli.Command(
    prog="python -m validation.regimes",
    description=__doc__.split("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=RegimesSettings,
    run=run,
    positional=("preset",),
    add_arguments=_add_arguments,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
    outputs=("json", "plot"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
