"""``python -m validation.gradients``: the backward pass of a depth-L ResNet against the gradients of its limit.

For a pair (``--model``) and a loss ℓ of the last state (``--loss``), on the convergence study's weights and Brownian
path of the same seed (the same samples, block by block), the study measures (docs/theory.md §7):

* **the network's gradients against the limit's**, at every depth L, with a rate, a 95% paired-bootstrap interval and
  a verdict each: the input gradient ∂ℓ/∂h_0 against the limit's a(0); the backward state p(s) = ∂ℓ/∂h_{sL} at each
  time s of ``--backward-times`` against the adjoint a(s); the gradient with respect to the residual branch's
  multiplier θ (h_{k+1} = h_k + θ Δ_k(h_k), dH = θ (f dt + g dB), at θ = 1). The theory's rate is the pair's forward
  rate (½ for res-1 and the Itô-corrected pairs, 1 for the ODE pairs); the forward error h_L − H_1 is shown beside
  them. The network's gradients are exact (backpropagation's, carried forward as tangents: memory flat in L); the
  limit's are those of the convergence study's reference solve (discretise-then-optimise), with the second
  reference as the floor.
* **the limit's gradient computed other ways** (``--methods``), each at step 1/L on the same path, against that
  reference: torchsde's stochastic adjoint (``sdeint_adjoint``: Euler–Maruyama on the Itô form, the midpoint scheme
  and reversible Heun with its algebraic reverse on the Stratonovich form) for SDE pairs, torchdiffeq's
  ``odeint_adjoint`` (fixed-step rk4, adaptive dopri5) for ODE pairs — rates reported, and reversible Heun checked to
  equal autograd through its own forward solve to rounding (Kidger et al. 2021);
* **the backsolve adjoint** (Sander, Ablin & Peyré 2022): backpropagation with the states rebuilt backwards,
  h̃_k = h̃_{k+1} − Δ_k(h̃_{k+1}), against exact backpropagation. Close to an ODE (an ODE pair) its error falls like
  1/L; with i.i.d. weights (an SDE pair) it does not fall at all (checked: a rate within 0 ± tolerance).

PASS when every check passes (three-valued, docs/theory.md §6); a deliberately wrong limit (``cohen-sde-naive``)
PASSes when its gradients do *not* converge to that limit's.

Python: ``validation.gradients.run("res1", samples=100)`` returns a :class:`GradientResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from limits.pairs import Pair
from limits.registry import get_pair
from validation.core import cli, runtime
from validation.core.checks import FAIL, Check, check_line, combine
from validation.core.one_pass import FLOOR_FACTORS, SAMPLE_BLOCK, block_seed
from validation.gradients.adjoints import ADJOINT_METHODS, ode_adjoint_gradient, sde_adjoint_gradient, sde_autograd_gradient
from validation.gradients.backsolve import BacksolveErrors, backsolve_errors
from validation.gradients.tangents import LOSSES, QUANTITIES, GradientErrors, gradient_errors, merge_gradient_errors
from validation.gradients.weights import add_weight_gradients, has_weight_gradient
from validation.core.pair_study import (KIND_DEFAULTS, PairSettings, RateFitSettings, ReferenceSettings, SampleBlock,
                                   ShardingSettings, add_model_arguments, block_fields, build_pair, check_instance_runs_here,
                                   estimate_mb as pair_estimate_mb, run_sample_blocks,
                                   list_models, model_spec,
                                   pair_class)
from validation.core.plots import Curve, draw_error_curves, new_grid
from validation.core.results import RunInfo, StudyResult, rows_from_columns, utc_now
from validation.core.settings import (SettingsError, check_choice, check_int, distinct_names, make_settings,
                                      optional_torch_dtype, parse_float_list, resolve_device, setting, torch_dtype)
from validation.core.rate_fit import RateFit, fit_rate, measured_rate_check, verdict_rule

__all__ = ["GradientSettings", "GradientResult", "MethodErrors", "SDE_METHODS", "ODE_METHODS", "run", "main"]

#: the limit's gradient computed other ways, by the pair's kind (torchsde's adjoint methods; torchdiffeq's)
SDE_METHODS: dict[str, str] = {name: spec.description for name, spec in ADJOINT_METHODS.items()}
ODE_METHODS: dict[str, str] = {
    "rk4": "torchdiffeq odeint_adjoint, classical Runge-Kutta at step 1/L forwards and backwards",
    "dopri5": "torchdiffeq odeint_adjoint, adaptive dopri5 at the study's tolerances (one value, not a rate)",
}
#: methods run only when named in --methods: torchsde's Itô adjoint for general noise loops over the m noise channels
#: at every step (27 s for 60 samples of res-1 at d = 10, depths 4…64, against 0.6 s for the midpoint scheme)
ON_REQUEST = frozenset({"euler"})
#: SDE pairs: the reference's steps per step of the deepest depth (the convergence study takes 32): the tangents make
#: a reference step several times dearer than a plain one (about 30× without the pair's closed-form tangents), and at
#: 16× the two references' gap stays below a third of the deepest depth's gradient error (res-1: 0.038 against 0.145)
REFERENCE_FACTOR = 16
#: SDE pairs: the least default number of samples — the gradients' errors vary more from sample to sample than the
#: forward error's (res-1's branch-multiplier rate at the convergence study's 500: 0.506 [0.459, 0.552], INCONCLUSIVE;
#: at 1000: 0.518 [0.484, 0.545], PASS, but INCONCLUSIVE on 5 seeds of 20 (benchmarks/calibrate.py, gradients-res1;
#: seed 13: 0.482 [0.450, 0.511], and 0.503 [0.487, 0.519] at 4000): 2000 halve the interval's reach below ½)
SDE_DEFAULT_SAMPLES = 2000
#: a reversible-Heun adjoint gradient within this relative distance of autograd's through the same solve is "exact"
EXACT_TOLERANCE = 1e-9


def _check_times(times: Any) -> tuple[float, ...]:
    try:
        values = tuple(float(s) for s in times)
    except (TypeError, ValueError):
        raise SettingsError("backward_times", f"{times!r} is not a list of numbers") from None
    for s in values:
        if not (0 < s < 1) or s * 2**20 != int(s * 2**20):
            raise SettingsError("backward_times", f"{s:g} is out of range (allowed: dyadic times in (0, 1) such as 0.25, "
                                                  "0.5, 0.75; the input gradient, time 0, is always measured)")
    return tuple(sorted(set(values)))


def _parse_methods(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class GradientSettings(ShardingSettings, RateFitSettings, ReferenceSettings, PairSettings):
    """Settings of the gradient study (the pair, its size, the rate fit, and what is differentiated); ``None`` means
    the model's default (see ``--list``: the convergence study's size, so its very samples and path; SDE pairs at
    least :data:`SDE_DEFAULT_SAMPLES`)."""

    samples: int | None = setting(None, "number N of independent weight draws (paths)", parse=int,
                                  default_text=f"the model's; at least {SDE_DEFAULT_SAMPLES} for an SDE pair (the "
                                               "convergence study's count otherwise)")
    reference_steps: int | None = setting(None, "SDE pairs: steps of the fine Euler reference on the same path; a "
                                                "power of two finer than the deepest depth; a second reference "
                                                "uses half", parse=int,
                                          default_text=f"{REFERENCE_FACTOR} × the deepest depth")
    loss: str = setting("half-square", "the loss of the last state: half-square = ½‖h_L‖², sum = Σ_i h_L,i",
                        choices=tuple(LOSSES), group="gradients")
    backward_times: tuple[float, ...] = setting((0.5,), "times s of the backward states p(s) = ∂ℓ/∂h_sL compared "
                                                        "with the adjoint a(s); dyadic, in (0, 1), as '0.25,0.5'",
                                                parse=parse_float_list, group="gradients")
    methods: tuple[str, ...] | None = setting(None, "the limit's gradient computed other ways: SDE pairs "
                                                    f"{', '.join(SDE_METHODS)}; ODE pairs {', '.join(ODE_METHODS)}; "
                                                    "'none' for none", parse=_parse_methods, group="gradients",
                                              default_text="every method of the pair's kind but euler (slow: run when named)")
    method_samples: int = setting(64, "samples the methods of --methods run on; drawn from the seed as a study of that "
                                      "size draws them, against their own reference on the same path (their rates are "
                                      "reported, not judged; torchsde's adjoints cost about 0.1 s per sample)",
                                  parse=int, group="gradients")
    backsolve: bool = setting(True, "leave out the backsolve adjoint (Sander et al. 2022)", flag="--no-backsolve",
                              action="store_false", group="gradients")

    def check(self) -> None:
        super().check()
        check_choice("loss", self.loss, tuple(LOSSES))
        self._set("backward_times", _check_times(self.backward_times))
        if self.methods is not None:
            self._set("methods", distinct_names("methods", self.methods))
        self._set("method_samples", check_int("method_samples", self.method_samples, 2))


# ------------------------------------------------------------------------------------------------ result
@dataclass
class MethodErrors:
    """One way of computing the limit's input gradient, against the study's reference, per sample and step count.

    Attributes:
        name, description: the method.
        steps: the step counts (the depths; one entry, 0, for an adaptive method).
        squared: ‖g_method − g_reference‖² per sample and step count, (N, len(steps)).
        seconds: wall time of all its solves.
        exact_gap: reversible Heun only: the largest relative distance to autograd through the same forward solve.
    """

    name: str
    description: str
    steps: list[int]
    squared: np.ndarray
    seconds: float
    exact_gap: float | None = None


@dataclass(repr=False)  # StudyResult's short repr
class GradientResult(StudyResult):
    """The gradient study's result.

    Attributes:
        model: the pair's description; theory_rate, theory_source, converges: what the pair predicts.
        errors: the network's gradients against the limit's (:class:`validation.gradients.tangents.GradientErrors`).
        fits: key → the rate fit of each quantity (``state``, ``input``, ``backward@s``, ``branch``).
        methods: the limit's gradient computed other ways (:class:`MethodErrors`), with their fits in ``method_fits``.
        backsolve: the backsolve adjoint's errors (None with ``--no-backsolve``), its fit in ``backsolve_fit``.
        checks: every judged statement; the verdict is their :func:`~validation.core.checks.combine`.
    """

    model: dict[str, Any] = dataclasses.field(default_factory=dict)
    model_spec: str = ""
    theory_rate: float = math.nan
    theory_source: str = ""
    converges: bool = True
    excluded_rate: float | None = None
    errors: GradientErrors | None = dataclasses.field(default=None, repr=False)
    fits: dict[str, RateFit] = dataclasses.field(default_factory=dict)
    methods: list[MethodErrors] = dataclasses.field(default_factory=list)
    method_fits: dict[str, RateFit | None] = dataclasses.field(default_factory=dict)
    backsolve: BacksolveErrors | None = dataclasses.field(default=None, repr=False)
    backsolve_fit: RateFit | None = None
    backsolve_theory: float | None = None
    checks: list[Check] = dataclasses.field(default_factory=list)
    reference_text: str = ""

    study = "gradients"

    @property
    def depths(self) -> list[int]:
        return list(self.settings.depths)

    @property
    def verdict(self) -> str:
        return combine(self.checks)

    def rms(self, key: str) -> np.ndarray:
        """(E‖network − limit‖²)^½ of quantity ``key`` at every depth."""
        return np.sqrt(self.errors.squared[key].mean(axis=0))

    def summary(self) -> dict[str, Any]:
        errors = self.errors
        quantities = {}
        for key in errors.keys:
            fit = self.fits[key]
            scale = math.sqrt(float(np.mean(errors.scale[key])))
            quantities[key] = {
                "description": _describe(key), "rms_errors": self.rms(key),
                "relative_rms_errors": self.rms(key) / scale if scale > 0 else None,
                "rms_scale": scale, "fit": fit.to_dict(),
                "reference_rms_gap": math.sqrt(float(np.mean(errors.reference_gap[key]))),
                "successive_differences": np.sqrt(errors.successive[key].mean(axis=0)),
                "nonfinite_network": errors.nonfinite_network[key], "nonfinite_reference": errors.nonfinite_reference[key],
            }
        methods = {m.name: {"description": m.description, "steps": m.steps,
                            "rms_errors": np.sqrt(m.squared.mean(axis=0)), "seconds": m.seconds,
                            "fit": self.method_fits[m.name].to_dict() if self.method_fits.get(m.name) else None,
                            "exact_gap": m.exact_gap} for m in self.methods}
        backsolve = None
        if self.backsolve is not None:
            backsolve = {"rms_errors": np.sqrt(self.backsolve.gradient_sq.mean(axis=0)),
                         "rms_reconstruction": np.sqrt(self.backsolve.reconstruction_sq.mean(axis=0)),
                         "rms_gradient": np.sqrt(self.backsolve.gradient_scale.mean(axis=0)),
                         "fit": self.backsolve_fit.to_dict(), "theory_rate": self.backsolve_theory}
        return {
            "model": self.model, "model_spec": self.model_spec,
            "theory": {"rate": self.theory_rate, "source": self.theory_source, "converges": self.converges,
                       "excluded_rate": self.excluded_rate},
            "loss": self.settings.loss, "depths": self.depths, "reference": self.errors.reference,
            "quantities": quantities, "methods": methods, "backsolve": backsolve,
            "checks": [c.to_dict() for c in self.checks],
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        columns: dict[str, Any] = {"depth": self.depths}
        for key in self.errors.keys:
            columns[f"rms_{key}"] = self.rms(key)
        for m in self.methods:
            if len(m.steps) == len(self.depths):
                columns[f"rms_method_{m.name}"] = np.sqrt(m.squared.mean(axis=0))
        if self.backsolve is not None:
            columns["rms_backsolve"] = np.sqrt(self.backsolve.gradient_sq.mean(axis=0))
        return rows_from_columns(columns)

    def table(self) -> str:
        s, errors = self.settings, self.errors
        m = self.model
        lines = [f"model {m['name']}: {m['description']}",
                 f"width {m['width']}{', activation ' + m['activation'] if m.get('activation') else ''}, samples "
                 f"{s.samples}, depths {self.depths}, seed {s.seed}, {s.dtype} on {self.run_info.device}; loss "
                 f"{s.loss}; reference: {self.reference_text}", ""]
        keys = errors.keys
        header = f"{'depth':>7} " + " ".join(f"{_short(k):>12}" for k in keys)
        lines += ["RMS error, network against limit (same weights, same path)", header, "-" * len(header)]
        for j, depth in enumerate(self.depths):
            lines.append(f"{depth:7d} " + " ".join(f"{self.rms(k)[j]:12.4e}" for k in keys))
        lines.append(f"{'|limit|':>7} " + " ".join(f"{math.sqrt(float(np.mean(errors.scale[k]))):12.4e}" for k in keys))
        lines.append(f"{'floor':>7} " + " ".join(
            f"{math.sqrt(float(np.mean(errors.reference_gap[k]))):12.4e}" for k in keys) + "   (RMS gap of the two references)")
        if self.methods or self.backsolve is not None:
            lines += ["", "the limit's input gradient computed other ways, RMS distance to the reference "
                          "(step 1/L); the backsolve adjoint against the network's exact backpropagation"]
            names = [mm.name for mm in self.methods if len(mm.steps) == len(self.depths)]
            names += ["backsolve"] if self.backsolve is not None else []
            header = f"{'L':>7} " + " ".join(f"{n:>16}" for n in names)
            lines += [header, "-" * len(header)]
            for j, depth in enumerate(self.depths):
                row = [np.sqrt(mm.squared[:, j].mean()) for mm in self.methods if len(mm.steps) == len(self.depths)]
                if self.backsolve is not None:
                    row.append(np.sqrt(self.backsolve.gradient_sq[:, j].mean()))
                lines.append(f"{depth:7d} " + " ".join(f"{v:16.4e}" for v in row))
            for mm in self.methods:
                fit = self.method_fits.get(mm.name)
                rate = (f"rate {fit.rate:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]" if fit is not None and fit.finite
                        else f"RMS {math.sqrt(float(mm.squared.mean())):.3e}" if fit is None else "no rate")
                gap = f"; distance to autograd through its own solve {mm.exact_gap:.1e}" if mm.exact_gap is not None else ""
                lines.append(f"  {mm.name:16s} {rate}; {mm.seconds:.1f} s{gap} — {mm.description}")
        lines += ["", "rates (fitted as the convergence study's, docs/theory.md §6) and checks:"]
        level = int(round(100 * s.confidence))
        for key in keys:
            fit = self.fits[key]
            text = (f"{fit.rate:6.3f}   {level}% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]" if fit.finite
                    else f"not fitted ({fit.method.removeprefix('not fitted: ')})")
            lines.append(f"  rate [{_short(key):>12}]  {text}")
        if self.backsolve_fit is not None:
            fit = self.backsolve_fit
            text = f"{fit.rate:6.3f}   {level}% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]" if fit.finite else "not fitted"
            lines.append(f"  rate [{'backsolve':>12}]  {text}")
        if self.converges:
            lines.append(f"theory rate {self.theory_rate:g} for every gradient ({self.theory_source}); tolerance "
                         f"±{s.tolerance:g}")
        else:
            lines.append(f"this limit is deliberately wrong: its gradients must NOT converge at rate "
                         f"{self.excluded_rate:g} ({self.theory_source})")
        lines += [check_line(c) for c in self.checks]
        lines.append(f"verdict: {self.verdict}")
        lines.append(f"time {self.run_info.wall_time_s:.1f} s")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        fig, axes = new_grid(1, 2, ax, figsize=(11.5, 4.6))
        s = self.settings
        styles = {"state": "s:", "input": "o-", "branch": "^--"}
        curves = [Curve(_describe_short(k), self.depths, self.rms(k), rate=self.fits[k].rate, fitted=self.fits[k].fitted,
                        style=styles.get(k, "d-.")) for k in self.errors.keys]
        subtitle = f"d={self.model['width']}, N={s.samples}, seed={s.seed}, loss {s.loss}"
        draw_error_curves(axes[0, 0], curves, title=f"{self.model['name']}: network gradients vs the limit's",
                          subtitle=subtitle, theory_rate=self.theory_rate if self.converges else None,
                          ylabel="RMS error (same weights)")
        right = []
        for mm in self.methods:
            if len(mm.steps) == len(self.depths):
                fit = self.method_fits.get(mm.name)
                right.append(Curve(f"adjoint {mm.name}", self.depths, np.sqrt(mm.squared.mean(axis=0)),
                                   rate=fit.rate if fit is not None and fit.finite else None, style="o-"))
        if self.backsolve is not None and self.backsolve_fit is not None:
            right.append(Curve("backsolve vs backprop", self.depths, np.sqrt(self.backsolve.gradient_sq.mean(axis=0)),
                               rate=self.backsolve_fit.rate if self.backsolve_fit.finite else None, style="x--"))
        if right:
            draw_error_curves(axes[0, 1], right, title="the limit's gradient other ways; the backsolve adjoint",
                              subtitle="steps 1/L on the same path; backsolve: rebuilt states (Sander et al.)",
                              ylabel="RMS distance")
        else:
            axes[0, 1].set_axis_off()
        return fig


def _describe(key: str) -> str:
    if key.startswith("backward@"):
        return f"the backward state p(s) = ∂ℓ/∂h_sL at s = {key.split('@')[1]} against the adjoint a(s)"
    if key.startswith("weights@"):
        return (f"the scaled weight gradient L·∂ℓ/∂V_sL at s = {key.split('@')[1]} against the limit's δℓ/δV(s) = "
                "a(s) g(H_s)ᵀ")
    return QUANTITIES.get(key, key)


def _short(key: str) -> str:
    return {"state": "h_L", "input": "∂ℓ/∂h_0", "branch": "∂ℓ/∂θ"}.get(
        key, key.replace("backward@", "p@").replace("weights@", "L·∂ℓ/∂V@"))


def _describe_short(key: str) -> str:
    return {"state": "forward state h_L", "input": "input gradient dl/dh_0",
            "branch": "branch multiplier dl/dtheta"}.get(
        key, key.replace("backward@", "backward state p(").replace("weights@", "weight gradient L dl/dV(") + ")")


# ------------------------------------------------------------------------------------------------ run
@dataclass(frozen=True)
class GradientBlock(SampleBlock):
    """One block of samples of the gradient study (a task of :func:`validation.core.workers.run_tasks`): the convergence
    study's block, and what is differentiated."""

    loss: str = "half-square"
    backward_times: tuple[float, ...] = (0.0,)
    backsolve: bool = True
    keep_path: bool = False


def _block_work(pair: Pair, task: GradientBlock) -> tuple[GradientErrors, BacksolveErrors | None]:
    """The gradient pass of one block (and its backsolve adjoint, on the path the pass recorded)."""
    part = gradient_errors(pair, list(task.depths), seed=pair.seed, loss=task.loss, backward_times=task.backward_times,
                           reference_steps=task.reference_steps or None, rtol=task.rtol, atol=task.atol,
                           noise_dtype=optional_torch_dtype(task.noise_dtype), record_path=task.backsolve or task.keep_path,
                           progress=task.progress)
    if has_weight_gradient(pair):
        # at the backward times s > 0 (at s = 0 the error is so regular that the corrected fit's window rule keeps
        # two depths only: res2-ode's default run measured 1.000 [0.999, 1.000] on L = 512, 1024)
        add_weight_gradients(part, pair, tuple(s for s in task.backward_times if s > 0), loss=task.loss,
                             rtol=task.rtol, atol=task.atol)
    backsolve = (backsolve_errors(pair, list(task.depths), seed=pair.seed, loss=task.loss,
                                  reference_steps=task.reference_steps or None, path=part.path)
                 if task.backsolve else None)
    if not task.keep_path:
        part.path = None                      # a block's recorded path is not sent back
    return part, backsolve


def gradient_block(task: GradientBlock) -> tuple[GradientErrors, BacksolveErrors | None]:
    """The errors of one block of samples, here or on a worker (the pair drawn from the block's streams)."""
    cls = get_pair(task.model) if isinstance(task.model, str) else task.model
    pair = cls(task.config, task.size, seed=block_seed(task.seed, task.index), dtype=torch_dtype(task.dtype),
               device=resolve_device(task.device))
    return _block_work(pair, task)


def _methods(pair: Pair, settings: GradientSettings) -> tuple[str, ...]:
    table = SDE_METHODS if pair.kind == "sde" else ODE_METHODS
    if settings.methods is None:
        return tuple(name for name in table if name not in ON_REQUEST)
    if settings.methods == ("none",):
        return ()
    for name in settings.methods:
        if name not in table:
            raise SettingsError("methods", f"{name!r} is not a method for {pair.name}, an {pair.kind.upper()} pair "
                                           f"(allowed: {', '.join(table)}, or none)")
    return settings.methods


def _method_errors(pair: Pair, name: str, settings: GradientSettings, reference: torch.Tensor,
                   path: Any) -> MethodErrors:
    """The limit's input gradient by method ``name`` at step 1/L for every depth (adaptive: once), per sample; an SDE
    pair's adjoints read ``path``, the gradient pass's recorded path (the increments the networks read)."""
    h0 = pair.initial_state()
    clock = time.perf_counter()
    exact_gap = None
    if pair.kind == "sde":
        grads = [sde_adjoint_gradient(pair, path, h0, L, loss=settings.loss, method=name) for L in settings.depths]
        steps = list(settings.depths)
        if name == "reversible_heun":
            deepest = settings.depths[-1]
            auto = sde_autograd_gradient(pair, path, h0, deepest, loss=settings.loss, method=name)
            exact_gap = float(((grads[-1] - auto).norm(dim=1) / auto.norm(dim=1).clamp_min(1e-300)).max())
    elif name == "dopri5":
        grads = [ode_adjoint_gradient(pair, h0, loss=settings.loss, method="dopri5", rtol=settings.rtol, atol=settings.atol)]
        steps = [0]
    else:
        grads = [ode_adjoint_gradient(pair, h0, loss=settings.loss, method=name, steps=L) for L in settings.depths]
        steps = list(settings.depths)
    squared = torch.stack([(g - reference).square().sum(1) for g in grads], dim=1)
    description = (SDE_METHODS if pair.kind == "sde" else ODE_METHODS)[name]
    return MethodErrors(name, description, steps, squared.detach().double().cpu().numpy(), time.perf_counter() - clock,
                        exact_gap)


def _all_method_errors(pair: Pair, methods: tuple[str, ...], settings: GradientSettings,
                       errors: GradientErrors | None, progress: bool) -> list[MethodErrors]:
    """Every method's errors on the first ``--method-samples`` samples: the run's own pass when it was one block of
    no more samples (``errors``, with its recorded path), else the pair drawn again with that many samples from the
    same seed (its own inputs and path, as a study of that size would draw them) and its own reference input
    gradient from a pass of its own (the input gradient only)."""
    if errors is None or errors.path is None and pair.kind == "sde" or pair.samples > settings.method_samples:
        size = min(pair.samples, settings.method_samples)
        pair = type(pair)(pair.config, size, seed=pair.seed, dtype=pair.dtype, device=pair.device)
        errors = gradient_errors(pair, list(settings.depths), seed=pair.seed, loss=settings.loss, backward_times=(0.0,),
                                 reference_steps=settings.reference_steps, rtol=settings.rtol or 1e-10,
                                 atol=settings.atol or 1e-10, noise_dtype=settings.torch_noise_dtype,
                                 record_path=True, progress=progress)
    reference = torch.as_tensor(errors.reference_input, dtype=pair.dtype, device=pair.device)
    return [_method_errors(pair, name, settings, reference, errors.path) for name in methods]


def _rate_check(name: str, fit: RateFit, values: np.ndarray, margin: tuple[float, float], settings: GradientSettings,
                nonfinite: bool) -> Check:
    if nonfinite:
        return Check(name, FAIL, "non-finite (NaN/inf) values: no rate is fitted through them")
    return measured_rate_check(name, fit, margin, values, "rms", resamples=settings.resamples, seed=settings.seed,
                               what=f"the {int(round(100 * settings.confidence))}% interval")


def run(model: str | type[Pair] | Pair = "res1", settings: GradientSettings | None = None, /, *,
        progress: bool = False, threads: int | None = 1, command_line: str | None = None,
        **overrides: Any) -> GradientResult:
    """Measure how fast the gradients of the depth-L network of ``model`` converge to its limit's.

    Args:
        model: a shipped pair's name, ``"package.module:ClassName"``, a :class:`~limits.Pair` subclass, or a Pair
            instance (which fixes samples, width, seed, dtype and device).
        settings: a :class:`GradientSettings`; None for the defaults (the command line's).
        progress: show progress bars.
        threads: torch intra-op threads for the run (default 1); None leaves torch alone.
        command_line: the command as typed, recorded in the result.
        **overrides: settings by name, e.g. ``samples=100, depths=(4, 8, 16, 32), loss="sum"``.

    Returns:
        A :class:`GradientResult`: ``.verdict``, ``.fits``, ``.methods``, ``.backsolve``, ``.table()``, ``.plot()``,
        ``.to_dict()``, ``.save(path)``.

    Raises:
        SettingsError, PairError, ActivationError: a bad setting (the message names it and the allowed range).
    """
    settings = make_settings(GradientSettings, settings, overrides)
    if settings.samples is None and not isinstance(model, Pair) and pair_class(model).kind == "sde":
        default = {**KIND_DEFAULTS["sde"], **pair_class(model).default_study}["samples"]
        settings = dataclasses.replace(settings, samples=max(default, SDE_DEFAULT_SAMPLES))
    if settings.reference_steps is None and pair_class(model).kind == "sde":
        depths = settings.depths or {**KIND_DEFAULTS["sde"], **pair_class(model).default_study}["depths"]
        settings = dataclasses.replace(settings, reference_steps=REFERENCE_FACTOR * depths[-1])
    pair, settings = build_pair(model, settings)
    if not pair.activation.smooth and "activation" in pair.config_fields:
        raise SettingsError("activation", f"{pair.activation.name} is not differentiable at 0, where the gradient is "
                                          "asked (allowed: a smooth activation such as tanh, swish, shifted-softplus "
                                          "or identity)")
    methods = _methods(pair, settings)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        check_instance_runs_here(model, settings)
        one_block = (isinstance(model, Pair) or settings.samples <= settings.sample_block) \
            and pair.samples <= settings.method_samples
        common = dict(block_fields(settings), loss=settings.loss, backward_times=(0.0, *settings.backward_times),
                      backsolve=settings.backsolve, keep_path=bool(methods) and one_block)
        if isinstance(model, Pair):
            results = [_block_work(pair, GradientBlock(type(pair), pair.config, 0, pair.samples, progress=progress,
                                                       **common))]
        else:
            results = run_sample_blocks(model, pair, settings, gradient_block,
                                        lambda reference, index, size, shown: GradientBlock(
                                            reference, pair.config, index, size, progress=shown, **common), progress)
        parts = [part for part, _ in results]
        backsolve_parts = [b for _, b in results if b is not None]
        method_results = (_all_method_errors(pair, methods, settings, parts[0] if one_block else None, progress)
                          if methods else [])
        errors = merge_gradient_errors(parts)
        errors.path = None
        backsolve = None
        if backsolve_parts:
            backsolve = BacksolveErrors(list(settings.depths),
                                        *(np.concatenate([getattr(b, n) for b in backsolve_parts]) for n in
                                          ("gradient_sq", "reconstruction_sq", "gradient_scale")))
        result = _judge(pair, model, settings, errors, method_results, backsolve)
        wall = time.perf_counter() - clock
        result.run_info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=pair.device, started=started,
                                          wall_time_s=wall, command=command_line)
    return result


def _judge(pair: Pair, model: Any, settings: GradientSettings, errors: GradientErrors, methods: list[MethodErrors],
           backsolve: BacksolveErrors | None) -> GradientResult:
    """Every fit and check of a finished run."""
    depths = list(settings.depths)
    order = float(pair.next_order) if settings.fit_model == "corrected" else None
    options = dict(fit_from=settings.fit_from, resamples=settings.resamples, confidence=settings.confidence,
                   seed=settings.seed, tolerance=settings.tolerance)
    # the references: SDE, Euler with n and n/2 steps; ODE, dopri5 on the limit and its variational equation, and
    # the same 100× looser (whatever the pair's own forward reference)
    floor_factor = FLOOR_FACTORS["brownian-halved" if pair.kind == "sde" else "adaptive-loosened"]
    fits, checks = {}, []
    margin = verdict_rule(pair.theory_rate, settings.tolerance, None if pair.converges else pair.excluded_rate)
    for key in errors.keys:
        floor = math.sqrt(float(np.mean(errors.reference_gap[key])))
        fits[key] = fit_rate(depths, errors.squared[key], "rms", correction_order=order,
                             floor=floor if math.isfinite(floor) and order is not None else None,
                             floor_factor=floor_factor, **options)
        if key == "state":
            continue  # the forward error is the convergence study's: shown, judged there
        nonfinite = any(errors.nonfinite_network[key]) or errors.nonfinite_reference[key] > 0
        checks.append(_rate_check(f"rate of {_describe(key)}", fits[key], errors.squared[key], margin, settings,
                                  nonfinite))
    method_fits: dict[str, RateFit | None] = {}
    for m in methods:
        if len(m.steps) == len(depths):
            # above the floor of the reference they are measured against (rk4's adjoint reaches dopri5's by L = 256)
            floor = math.sqrt(float(np.mean(errors.reference_gap["input"])))
            method_fits[m.name] = fit_rate(depths, m.squared, "rms", floor=floor if math.isfinite(floor) else None,
                                           floor_factor=floor_factor, **options)
        else:
            method_fits[m.name] = None
        if m.exact_gap is not None:
            checks.append(Check.of(f"{m.name}: its adjoint is the exact gradient of its forward solve", m.exact_gap <=
                                   EXACT_TOLERANCE, f"largest relative distance to autograd through the same solve "
                                                    f"{m.exact_gap:.1e} (must be ≤ {EXACT_TOLERANCE:g})"))
    backsolve_fit, backsolve_theory = None, None
    if backsolve is not None:
        backsolve_fit = fit_rate(depths, backsolve.gradient_sq, "rms", **options)
        # Sander et al.: close to an ODE the rebuilt states err by O(1/L); with i.i.d. weights by O(1) (theory §7)
        # for SDE pairs the plateau is of order s²/d (theory §7): at d = 10 it is reached only beyond L = 1024, so the
        # rate is reported, not judged (the results page shows the plateau at d = 4, s² = 4)
        backsolve_theory = 1.0 if pair.kind == "ode" and pair.theory_rate == 1.0 else None
        if backsolve_theory is not None:
            checks.append(_rate_check("backsolve adjoint against backpropagation: the error falls like 1/L (close to an "
                                      "ODE)", backsolve_fit,
                                      backsolve.gradient_sq, verdict_rule(backsolve_theory, settings.tolerance),
                                      settings, not np.all(np.isfinite(backsolve.gradient_sq))))
    if pair.kind == "sde":
        reference_text = (f"Euler–Maruyama of the limit and its first variation on the same path, "
                          f"{settings.reference_steps} steps (second: {settings.reference_steps // 2})")
    else:
        reference_text = f"dopri5 on the limit and its variational equation, rtol {settings.rtol:g} (second: 100× looser)"
    return GradientResult(
        settings=settings, run_info=None, model=pair.describe(), model_spec=model_spec(model),  # type: ignore[arg-type]
        theory_rate=pair.theory_rate, theory_source=f"docs/theory.md §7; forward: {pair.theory_source}",
        converges=pair.converges, excluded_rate=None if pair.converges else pair.excluded_rate, errors=errors,
        fits=fits, methods=methods, method_fits=method_fits, backsolve=backsolve, backsolve_fit=backsolve_fit,
        backsolve_theory=backsolve_theory, checks=checks, reference_text=reference_text)


# ------------------------------------------------------------------------------------------------ CLI
EPILOG = """\
examples:
  python -m validation.gradients --model res1
  python -m validation.gradients --model res2-ode --plot res2-ode-gradients.png --json res2-ode-gradients.json
  python -m validation.gradients --model cohen-sde
  python -m validation.gradients --model res1 --loss sum --backward-times 0.25,0.5,0.75 --methods reversible_heun
  python -m validation.gradients --list
"""



def _estimate_seconds(model: str | type[Pair] | Pair, settings: GradientSettings) -> float:
    """A rough estimate: the tangent columns cost about 2·10⁻⁷ s per sample, column and fine step (SDE)."""
    cls = pair_class(model)
    if cls.kind != "sde" or settings.reference_steps is None:
        return 0.0
    width = settings.width or 10
    columns = 1 + width * (1 + len(settings.backward_times))
    return 2e-7 * (settings.samples or SAMPLE_BLOCK) * columns * settings.reference_steps * 1.5


#: the gradient study's working memory per process over the arrays the pair study counts (a block of the path's
#: normals and a chunk of increments): the backward passes' saved states and the tangents, which now dominate it
#: (``benchmarks/bench_memory.py --sizes --only gradients``, res1 at 250 and 500 paths, reference 2048 steps: 486 MiB
#: in one process, 739 with two forked workers; the ratio per process, 5.7 and 6.1). It was 1.9 while the pass held
#: its block in float64 with its dyadic levels, three times the arrays counted now
GRADIENT_WORKING_FACTOR = 6.0


def estimate_mb(model: str | type[Pair] | Pair, settings: GradientSettings) -> float:
    """The pair study's memory estimate with the gradient passes' working memory (:data:`GRADIENT_WORKING_FACTOR`)."""
    return pair_estimate_mb(model, settings, working_factor=GRADIENT_WORKING_FACTOR)


COMMAND = cli.Command(
    prog="python -m validation.gradients",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=GradientSettings,
    run=run,
    positional=("model",),
    add_arguments=add_model_arguments,
    listing=list_models,
    estimate_mb=estimate_mb,
    estimate_seconds=_estimate_seconds,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
