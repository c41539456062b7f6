"""Chizat, *The hidden width of deep ResNets* (arXiv 2509.10167), the residual scale α: complete feature learning at
α = Θ(1), the lazy ODE as α → ∞ — a phase diagram along α = (M/M₀)^a.

**The claims, and which version states them.** With the residual scale α/(LM) (and the maximal-local-update learning
rates, which move every unit by O(1/α)), after a bounded number of steps:

* at α = Θ(1) the error between the trained network and its limit is O(1/L + 1/√(LM)) and the limit is genuinely
  non-linearly parametrised (complete feature learning) — v1 (12 Sep 2025) and v2 (2 Mar 2026; v2's abstract names
  it "maximal local feature updates"): the a = 0 sweep;
* for any α the error is O(1/L + α/√(LM)), tight — v1 only; v2 states the bound at α = Θ(1) and gives the lazy
  regime a rate of its own, which the package has not read (its text was not available): the a > 0 sweeps' width
  checks are v1's, and named so;
* as α → ∞ the limit is linearly parametrised (the lazy ODE) — both versions: the a > 0 sweeps' regime checks.

**The diagram.** Along α = (M/M₀)^a for a in ``--alpha-exponents`` (M₀ the smallest of ``--hiddens``, so that α
grows with the width as M^a, i.e. as (LM)^a at fixed L), the same model, task and training as
``chaintron2026-linear`` (:mod:`limits.embedded_resnet`), for M in ``--hiddens`` at L = ``--depth``,
D = ``--width``, three exponents in M, each a least-squares slope of the replicates' mean log with a paired
bootstrap interval — the diagnostics of ``chizat-phase`` (the lecture's Figure 1) carried to this model:

* the **finite-width error** (embedding space, after :data:`~validation.training.chaintron2026.CHECKED_STEP` steps):
  the network against the same network at M = ∞ (exact, identity blocks) or at 2M (nested units, other activations),
  at the same α. The bound's term α/√(LM) ∝ M^(a − 1/2): **checked**, its exponent of decay within 1/2 − a ± 0.1
  (a = 1/2: no convergence), fitted where LM ≥ 64·D and √(LM) ≥ 8α (the term 8 × the next order α²/(LM));
* the **nonlinear share** of the blocks' change over the K training steps
  (:func:`limits.embedded_resnet.nonlinear_share`: the part of each block map's change that is not first order in
  its units' change): of order 1 when the units learn features, vanishing when training is linear in them.
  **Checked**, three-valued (τ = 0.1): at a = 0 (α fixed) complete feature learning — the limit's share is positive
  and the finite networks' shares approach it, the gap between them falling with an exponent in M below −τ; at
  a > 0 (α → ∞ with M) the lazy ODE — the limit's share itself falls, an exponent in M below −τ
  (:meth:`ChizatAlpha._regime_check`; a share that stays of order one at a = 0 passes for any positive share, which
  is why the a = 0 rule reads the gap to the limit's, not the finite share alone);
* the **predictor's change** ‖f_K − f_0‖ over training: reported (stable and non-trivial when its exponent is near 0,
  as the α-scaled learning rates intend).

**Nonlinear blocks** (tanh): the limit's share is that of the network at M = ∞ in its n-dimensional form
(:func:`limits.embedded_resnet.reduced_embedding`) with :data:`LIMIT_UNITS` Monte-Carlo units, at the same α. A
plain share of drawn units is biased upward (E‖r‖² = ‖E r‖² + Var/M), so the limit's uses the cross product of
two independent halves of its units (:func:`limits.embedded_resnet.share_cross_halves`), unbiased; it can be
negative on one replicate where the share is below the noise, so the shares of nonlinear blocks are **pooled over
the replicates** (share² = Σ_r numerator / Σ_r denominator) — the finite networks' too, from
:func:`~limits.embedded_resnet.nonlinear_share`'s parts — and their exponents' intervals come from a paired bootstrap
over replicates of the pooled values. The checks are the identity blocks' on those pooled shares.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from limits.embedded_resnet import (EmbeddedResNet, InfiniteWidthResNet, dealt_units, infinite_nonlinear_share,
                                    nonlinear_share, reduced_embedding, share_cross_halves)

from ..core.checks import FAIL, INCONCLUSIVE, Check, bound_check, check_line, combine
from ..core.settings import SettingsError
from ..core.stats import paired_bootstrap, slope
from .chaintron2026 import DOMINANCE, REDUCED_DIM, ChaintronLinear, Sweep, UnitDraws, replicate_megabytes, compare
from .experiment import power_fit

__all__ = ["ChizatAlpha", "TAU", "LIMIT_UNITS", "pooled_share_fit"]

#: an exponent of the nonlinear share below −τ reads as the lazy ODE, at or above it as feature learning
TAU = 0.1
#: Monte-Carlo units of the limit's n-dimensional form for nonlinear blocks. Its pooled share (tanh, L = D = 16,
#: 16 replicates) at 2¹⁶ and 2¹⁸ units: 0.0139 and 0.0136 at α = 1, 0.00163 and 0.00149 at α = 2.83, 0.000161 and
#: 0.000181 at α = 8 (measured)
LIMIT_UNITS = 2**19
#: the quantities of the shares' parts recorded for nonlinear blocks (numerators and denominators, per replicate)
SHARE_PARTS = ("share_remainder", "share_change", "limit_share_remainder", "limit_share_change")


def _pooled(remainders: list[np.ndarray], changes: list[np.ndarray], axis: int = -1) -> np.ndarray:
    """The pooled share √(Σ_r remainder / Σ_r change) at each size (last axis), NaN where it is not positive."""
    ratio = np.stack([r.sum(axis=axis) for r in remainders], axis=-1) / np.stack([c.sum(axis=axis) for c in changes],
                                                                                  axis=-1)
    return np.sqrt(np.where(ratio > 0, ratio, np.nan))


def pooled_share_fit(sizes: list[int], remainder: np.ndarray, change: np.ndarray, *, confidence: float,
                     resamples: int, seed: int, limit: tuple[np.ndarray, np.ndarray] | None = None,
                     one_limit: bool = False) -> dict[str, Any]:
    """The exponent in M of the pooled share (``remainder``, ``change``: size × replicate), or with ``limit`` (its
    parts, size × replicate) of the gap |pooled share − the limit's pooled share|: the least-squares slope on log M,
    with a paired bootstrap interval over replicates (the same replicates at every size). ``defined`` is False when a
    pooled value is not positive (then no slope). ``one_limit``: the values are one limit's at every size (α fixed),
    so the slope is 0 by construction, not fitted."""
    k = len(sizes)
    log_m = np.log(np.asarray(sizes, dtype=float))
    columns = [*remainder, *change] + ([*limit[0], *limit[1]] if limit is not None else [])

    def values(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
        share = _pooled(list(cols[:k]), list(cols[k:2 * k]), axis=axis)
        if limit is not None:
            share = np.abs(share - _pooled(list(cols[2 * k:3 * k]), list(cols[3 * k:]), axis=axis))
        return share

    def statistic(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return slope(log_m, np.log(values(*cols, axis=axis)))

    point = values(*columns)
    out: dict[str, Any] = {"depths": list(map(int, sizes)), "geometric_mean": point.tolist(), "slope": None,
                           "ci": [None, None], "method": None, "defined": bool(np.all(np.isfinite(point) & (point > 0)))}
    if not out["defined"]:
        return out
    if one_limit:
        out.update(slope=0.0, ci=[0.0, 0.0], method="one limit at every size")
        return out
    low, high, how = paired_bootstrap(columns, statistic, resamples=resamples, confidence=confidence, seed=seed)
    out.update(slope=float(statistic(*columns)), ci=[low if np.isfinite(low) else None,
                                                      high if np.isfinite(high) else None], method=how)
    return out


def _alpha(settings: Any, exponent: float, hidden: int) -> float:
    """α = (M/M₀)^a, M₀ the smallest width of the sweep."""
    return (hidden / min(settings.hiddens)) ** exponent


def _term(exponent: float) -> str:
    """The bound's term a sweep checks, with the version of arXiv 2509.10167 that states it: at α fixed (a = 0) the
    1/√(LM) of v1 and v2 (v2's bound for α = Θ(1)); as α grows with M, v1's α/√(LM), which v2 does not state in
    that form (docs/papers.md, "Which version of each paper")."""
    return "1/√(LM) at α fixed (v1, v2)" if exponent == 0 else "α/√(LM) (v1)"


def _sweep(exponent: float) -> Sweep:
    return Sweep(f"a={exponent:g}", "M", 0.5 - exponent, _term(exponent), f"α = (M/M₀)^{exponent:g}",
                 f"LM ≥ {DOMINANCE**2}·D and √(LM) ≥ {DOMINANCE}α", lambda s: s.hiddens,
                 lambda s, m, a=exponent: (s.depth * m >= DOMINANCE**2 * s.width
                                           and (s.depth * m) ** 0.5 >= DOMINANCE * _alpha(s, a, m)),
                 lambda s, held=False: replicate_megabytes(
                     s, s.depth * s.width * max(s.hiddens) * (1 if s.activation == "identity" else 2)
                     + (0 if s.activation == "identity" else REDUCED_DIM * LIMIT_UNITS),     # the limit's units
                     s.depth * s.width, held=held))


class ChizatAlpha(ChaintronLinear):
    name = "chizat2025-alpha"
    title = "the residual scale α: complete feature learning at α = Θ(1), the lazy ODE as α → ∞"
    paper = ("Chizat (arXiv 2509.10167 v1, 12 Sep 2025; v2, 2 Mar 2026, for the bound at α = Θ(1)), the residual "
             "scale α/(LM)")
    claim = ("with residual scale α/(LM): at α = Θ(1) the error to the limit is O(1/L + 1/√(LM)) and the limit learns "
             "features (v1 and v2); for any α the error is O(1/L + α/√(LM)), tight (v1); as α → ∞ the limit is the "
             "lazy ODE (linearly parametrised; v1 and v2)")
    smoke = dict(hiddens=(8, 16, 32), depth=4, width=4, epochs=6, replicates=3, resamples=200,
                 alpha_exponents=(0.0, 0.5))
    rejects = {
        "a limit whose nonlinear share ignores α, one fixed value at every width and exponent":
            "tests/test_embedded_resnet.py::test_the_alpha_entry_reads_feature_learning_at_fixed_alpha_and_the_lazy_ode_as_it_grows",
        "a tanh limit whose pooled share has its α dependence removed, so it never turns lazy":
            "tests/test_embedded_resnet.py::test_with_tanh_blocks_the_alpha_entry_reads_the_regimes_on_the_limits_pooled_share",
        "a residual scale α/L without the width M, so wider networks do not approach the limit":
            "tests/test_embedded_resnet.py::test_a_residual_scale_without_the_width_fails_the_alpha_entrys_width_checks",
    }
    defaults = dict(hiddens=(64, 128, 256, 512, 1024, 2048, 4096), depth=16, width=16, epochs=15,
                    learning_rates=(0.1,), replicates=16, activation="identity", dtype="float64",
                    alpha_exponents=(0.0, 0.25, 0.5))
    measured = ("hidden_error", "output_error", "nonlinear_share", "reference_share", "predictor_change")
    increasing = ("hiddens",)
    nested_depths = False

    def sweeps_of(self, settings):
        return tuple(_sweep(a) for a in settings.alpha_exponents)

    def measured_of(self, key, settings):
        return self.measured + (() if settings.activation == "identity" else SHARE_PARTS)

    def configurations(self, settings):
        exponents = settings.alpha_exponents
        if not exponents or len(set(exponents)) != len(exponents) or not all(0 <= a <= 1 for a in exponents):
            raise SettingsError("alpha_exponents", f"{list(exponents)}: give distinct exponents in [0, 1]")
        if settings.activation != "identity" and settings.width < REDUCED_DIM:
            raise SettingsError("width", f"{settings.width}: nonlinear blocks need an embedding dimension of at least "
                                         f"n = {REDUCED_DIM} (the limit's n-dimensional form)")
        return self._configurations(settings)

    def _networks(self, configuration):
        return len(configuration.params["sizes"])

    def _errors(self, s, key, replicates, device, progress, shared=None):
        exponent = next(0.5 - sweep.exponent for sweep in self.sweeps_of(s) if sweep.key == key)
        draws = UnitDraws(self.name, s, key, replicates, device)
        w_e, w_u = draws.embedding(s.width)
        exact = s.activation == "identity"
        u, v = draws.units(s.depth, max(s.hiddens) * (1 if exact else 2), "units")
        if not exact:   # the limit's n-dimensional form: its Monte-Carlo units, dealt to the blocks
            reduced = reduced_embedding(w_e, w_u)
            drawn = draws.units(1, LIMIT_UNITS, "mean-field", dim=REDUCED_DIM)
            limit_units = tuple(dealt_units(t, s.depth) for t in drawn)
        hidden, output, share, reference_share, change = [], [], [], [], []
        parts: list[tuple[torch.Tensor, ...]] = []
        for m in s.hiddens:
            alpha = _alpha(s, exponent, m)
            network = EmbeddedResNet(w_e, w_u, u[..., :m], v[..., :m], alpha=alpha, activation=s.activation)
            trained = draws.train(network)
            if exact:
                wide = InfiniteWidthResNet(w_e, w_u, s.depth, s.epochs, alpha=alpha)
            else:
                wide = EmbeddedResNet(w_e, w_u, u[..., :2 * m], v[..., :2 * m], alpha=alpha, activation=s.activation)
            reference = draws.train(wide)
            e_h, e_f = compare(trained, reference)
            hidden.append(e_h)
            output.append(e_f)
            # the share's parts once: its value here, and for nonlinear blocks the pooled shares of the summary
            finite_parts = nonlinear_share(network, u[..., :m], v[..., :m], network.forward(draws.x)[0], parts=True)
            share.append((finite_parts[0] / finite_parts[1]).sqrt())
            reference_share.append(
                infinite_nonlinear_share(wide, s.learning_rates[0], wide.forward(draws.x)[0]) if exact
                else nonlinear_share(wide, u[..., :2 * m], v[..., :2 * m], wide.forward(draws.x)[0]))
            change.append((trained.output[-1] - trained.output[0]).norm(dim=-1))
            if not exact:
                limit = EmbeddedResNet(reduced.w_e, reduced.w_u, *limit_units, alpha=alpha, activation=s.activation)
                draws.train(limit)
                parts.append((*finite_parts, *share_cross_halves(limit, *limit_units, limit.forward(draws.x)[0])))
            progress()
        quantities = [hidden, output, share, reference_share, change]
        quantities += [[p[i] for p in parts] for i in range(len(SHARE_PARTS))] if not exact else []
        return tuple(torch.stack(q) for q in quantities)

    # ---------------------------------------------------------------------------------------------- summary
    def summarise(self, settings, records):
        numbers = super().summarise(settings, records)
        regime_checks = []
        for sweep in self.sweeps_of(settings):
            record, entry = records[sweep.key], numbers["sweeps"][sweep.key]
            exponent = 0.5 - sweep.exponent
            share, reference = (np.asarray(record[name], dtype=float) for name in ("nonlinear_share", "reference_share"))
            fits = {"nonlinear_share": share, "reference_share": reference, "share_gap": np.abs(share - reference),
                    "predictor_change": np.asarray(record["predictor_change"], dtype=float)}
            for name, values in fits.items():                                    # size × replicate
                if name == "reference_share" and exponent == 0 and settings.activation == "identity":
                    # α does not move with M: one limit, the same share at every width (no slope to fit)
                    entry[name + "_exponent"] = {
                        "depths": list(record["sizes"]), "slope": 0.0, "ci": [0.0, 0.0], "method": "exact",
                        "defined": bool(np.all(values > 0)),
                        "geometric_mean": np.exp(np.log(np.maximum(values, 1e-300)).mean(axis=1)).tolist()}
                    continue
                entry[name + "_exponent"] = power_fit(record["sizes"], values, confidence=settings.confidence,
                                                      resamples=settings.resamples, seed=settings.seed)
            entry["alpha"] = [_alpha(settings, exponent, m) for m in record["sizes"]]
            if settings.activation != "identity":   # the pooled shares: the finite networks', the limit's, their gap
                finite, limit = ((np.asarray(record[a], dtype=float), np.asarray(record[b], dtype=float))
                                 for a, b in (SHARE_PARTS[:2], SHARE_PARTS[2:]))
                options = dict(confidence=settings.confidence, resamples=settings.resamples, seed=settings.seed)
                entry["pooled_share_exponent"] = pooled_share_fit(record["sizes"], *finite, **options)
                entry["limit_share_exponent"] = pooled_share_fit(record["sizes"], *limit, **options, one_limit=exponent == 0)
                entry["pooled_gap_exponent"] = pooled_share_fit(record["sizes"], *finite, limit=limit, **options)
                regime_checks.append(self._regime_check(sweep, exponent, entry["pooled_gap_exponent"],
                                                        entry["limit_share_exponent"], "pooled over the replicates"))
            else:
                regime_checks.append(self._regime_check(sweep, exponent, entry["share_gap_exponent"],
                                                        entry["reference_share_exponent"]))
        numbers["regimes"] = {sweep.key: "complete feature learning" if sweep.exponent == 0.5 else "lazy ODE"
                              for sweep in self.sweeps_of(settings)}
        numbers["tau"] = TAU
        numbers["checks"] = numbers["checks"] + [c.to_dict() for c in regime_checks]
        numbers["verdict"] = combine(numbers["checks"])
        return numbers

    @staticmethod
    def _regime_check(sweep: Sweep, exponent: float, gap: dict[str, Any], limit: dict[str, Any],
                      over: str = "geometric mean over replicates") -> Check:
        """a = 0: the finite networks' shares approach the limit's (``gap``: their gap's fit, exponent of decay > τ),
        which is positive: complete feature learning. a > 0: the limit's share along α = (M/M₀)^a (``limit``: its
        fit) falls, exponent < −τ: the lazy ODE."""
        if exponent == 0:
            name = (f"{sweep.key}: complete feature learning at fixed α — the finite shares approach the limit's "
                    f"(exponent of the gap < −{TAU:g}), which is positive")
            fit, at_most = gap, True
            if not limit["defined"]:
                return Check(name, FAIL, "the limit's share is not positive: the limit is linearly parametrised")
        else:
            name = f"{sweep.key}: the lazy ODE as α → ∞ — the limit's nonlinear share falls, exponent in M < −{TAU:g}"
            fit, at_most = limit, True
        if not fit["defined"]:
            return Check(name, FAIL, "a share is not finite and positive: no power law to fit")
        if None in fit["ci"]:
            return Check(name, INCONCLUSIVE, "the bootstrap interval is not finite")
        detail = f"exponent {fit['slope']:.3f}, interval [{fit['ci'][0]:.3f}, {fit['ci'][1]:.3f}]"
        if exponent == 0:
            detail += f"; the limit's share {limit['geometric_mean'][-1]:.3e} ({over})"
        return bound_check(name, tuple(fit["ci"]), -TAU, at_most=at_most, detail=detail)

    # ------------------------------------------------------------------------------------------------ report
    def table(self, result):
        s, n = result.settings, result.numbers
        step = n["checked_step"]
        lines = [f"{s.activation} blocks, L = {s.depth}, D = {s.width}, α = (M/{min(s.hiddens)})^a, {s.epochs} gradient "
                 f"steps at η₀ = {s.learning_rates[0]:g}, {s.replicates} replicates; width error after {step} steps "
                 f"against M = {'∞' if s.activation == 'identity' else '2M'}", ""]
        reference = "limit (M = ∞)" if s.activation == "identity" else "network at 2M"
        for sweep in self.sweeps_of(s):
            entry, record = n["sweeps"][sweep.key], result.records[sweep.key]
            error = np.asarray(record["hidden_error"], dtype=float)[:, :, step].mean(axis=1)
            share = np.asarray(record["nonlinear_share"], dtype=float).mean(axis=1)
            limit_share = np.asarray(record["reference_share"], dtype=float).mean(axis=1)
            change = np.asarray(record["predictor_change"], dtype=float).mean(axis=1)
            lines.append(f"{sweep.key} (expected: {n['regimes'][sweep.key]}; width error ∝ M^-{sweep.exponent:.3g})")
            lines.append(f"  {'M':>6}  {'α':>6}  {'width error':>12}  {'nonlinear share':>15}  {'its limit':>10}  "
                         f"{'‖f_K − f_0‖':>12}  fitted")
            for size, alpha, e, sh, sl, c in zip(entry["sizes"], entry["alpha"], error, share, limit_share, change):
                lines.append(f"  {size:>6}  {alpha:>6.3g}  {e:>12.3e}  {sh:>15.3e}  {sl:>10.3e}  {c:>12.3e}  "
                             f"{'yes' if size in entry['fitted_sizes'] else ''}")
            lines.append(f"  exponents in M: width error {self._cell(entry['hidden_exponents'][step])}, "
                         f"nonlinear share {self._slope(entry['nonlinear_share_exponent'])}, "
                         f"the {reference}'s {self._slope(entry['reference_share_exponent'])}, "
                         f"predictor change {self._slope(entry['predictor_change_exponent'])}")
            if "limit_share_exponent" in entry:   # nonlinear blocks: the shares pooled over replicates
                pooled, limit = entry["pooled_share_exponent"], entry["limit_share_exponent"]
                lines.append(f"  pooled over replicates: share {'  '.join(f'{v:.3e}' for v in pooled['geometric_mean'])}")
                lines.append(f"  the limit's (M = ∞, n-dim. form, {LIMIT_UNITS} units): "
                             f"{'  '.join(f'{v:.3e}' for v in limit['geometric_mean'])}")
                lines.append(f"  exponents in M: pooled share {self._slope(pooled)}, the limit's {self._slope(limit)}, "
                             f"their gap {self._slope(entry['pooled_gap_exponent'])}")
            lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    @staticmethod
    def _slope(fit: dict[str, Any]) -> str:
        if fit["slope"] is None:
            return "—"
        low, high = fit["ci"]
        return f"{fit['slope']:.3f} [{'—' if low is None else f'{low:.3f}'}, {'—' if high is None else f'{high:.3f}'}]"

    def plot(self, result, figure):
        s, n = result.settings, result.numbers
        step = n["checked_step"]
        if hasattr(figure, "set_layout_engine"):
            figure.set_layout_engine("constrained")
        sweeps = self.sweeps_of(s)
        error_ax, share_ax, diagram = figure.subplots(1, 3)
        exponents, measured_error, error_ci, measured_share, share_ci = [], [], [], [], []
        for i, sweep in enumerate(sweeps):
            entry, record = n["sweeps"][sweep.key], result.records[sweep.key]
            sizes = np.asarray(entry["sizes"], dtype=float)
            colour = f"C{i}"
            error = np.asarray(record["hidden_error"], dtype=float)[:, :, step]
            share = np.asarray(record["nonlinear_share"], dtype=float)
            error_ax.loglog(sizes, np.exp(np.log(error).mean(axis=1)), "o-", color=colour, label=sweep.key)
            limit = np.asarray(record["reference_share"], dtype=float)
            share_ax.loglog(sizes, np.exp(np.log(share).mean(axis=1)), "o-", color=colour, label=sweep.key)
            share_ax.loglog(sizes, np.exp(np.log(limit).mean(axis=1)), "--", color=colour, lw=1)
            if "limit_share_exponent" in entry:   # nonlinear blocks: the limit's pooled share, dotted
                share_ax.loglog(sizes, entry["limit_share_exponent"]["geometric_mean"], ":", color=colour, lw=1.5)
            exponents.append(0.5 - sweep.exponent)
            fit = entry["hidden_exponents"][step]
            measured_error.append(np.nan if fit is None or fit["slope"] is None else -fit["slope"])
            error_ci.append([np.nan, np.nan] if fit is None or None in fit["ci"] else [-fit["ci"][1], -fit["ci"][0]])
            fit = entry["reference_share_exponent" if s.activation == "identity" else "limit_share_exponent"]
            measured_share.append(np.nan if fit["slope"] is None else fit["slope"])
            share_ci.append([np.nan, np.nan] if None in fit["ci"] else list(fit["ci"]))
        error_ax.set(xlabel="M", ylabel=f"width error after {step} steps", title="finite-width error, α = (M/M₀)^a")
        share_ax.set(xlabel="M", ylabel="nonlinear share of the blocks' change",
                     title="feature learning or lazy (dashed: " + ("the limit, M = ∞)" if s.activation == "identity"
                                                                   else "the network at 2M; dotted: M = ∞)"))
        a = np.asarray(exponents)
        grid = np.linspace(0, max(1.0, a.max()), 50)
        diagram.plot(grid, 0.5 - grid, "k--", lw=1, label="paper: the width error decays as M^-(1/2 − a)")
        diagram.errorbar(a, measured_error, yerr=np.abs(np.asarray(error_ci).T - measured_error), fmt="o", color="C0",
                         capsize=3, label="measured: −(exponent of the width error)")
        diagram.errorbar(a, measured_share, yerr=np.abs(np.asarray(share_ci).T - measured_share), fmt="s", color="C3",
                         capsize=3, label="measured: exponent of the limit's nonlinear share")
        diagram.axhspan(-TAU, 10, color="C2", alpha=0.08, lw=0)
        diagram.axhline(-TAU, color="C2", lw=0.8)
        diagram.text(grid[-1], -TAU + 0.02, "feature learning above, lazy ODE below", ha="right", fontsize=7, color="C2")
        diagram.set(xlabel="a  (α = (M/M₀)^a)", ylabel="exponent in M", title="the phase diagram in a",
                    ylim=(min(-1.5, np.nanmin(measured_share) - 0.2), 0.8))
        for ax in (error_ax, share_ax, diagram):
            ax.title.set_fontsize(9)
            ax.legend(fontsize=7)
        figure.set_size_inches(14, 4.4)

    def estimate_seconds(self, settings):
        s = settings
        # nonlinear blocks also train the limit's n-dimensional form at each width: 4.4e-8 s per step, replicate and
        # unit (the mean-field sweeps of chaintron2026-nonlinear, without their N/2 networks)
        limit = 0.0 if s.activation == "identity" else 4.4e-8 * LIMIT_UNITS
        return (s.epochs * s.replicates * len(s.alpha_exponents) * len(s.hiddens)
                * (6.0e-8 * s.depth * s.width * sum(s.hiddens) / len(s.hiddens) + limit) + 2.0)
