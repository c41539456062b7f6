"""The ``sweep`` kind of regimes preset: r_h and r_p over depths × β, each β classified (explosion, non-trivial,
identity), the critical β estimated, and the theory's bounds checked (Marion et al. Fig. 1, 3, 4, 5; Lemma 14 /
Prop. 7, Props. 2, 3, 6 and 13); the presets ``fig1``, ``fig4``, ``prop13`` and ``prop3``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from limits.activations import get_activation
from limits.initialisation import Block, SmoothRegime, largest_real_eigenvalue, measure_ratios
from limits.regime_theory import lemma14_bounds, positive_eigenvalue_probability
from validation.core.checks import Check, combine
from validation.core.hypothesis import (
    binomial_consistency, bounds_check, exact_mean_check, exceedance_check, family_z, finite_or_inf,
    quantile_bound_check,
)
from validation.core.plots import new_grid
from validation.core.regime_rule import TAU, classify, critical_beta, fit_slope
from validation.core.settings import SettingsError
from validation.regimes import assumptions as regime_assumptions

from validation.regimes.preset import (
    C_SAMPLES, CLASS_COLOURS, CLASS_MARGIN, SUB_GAUSSIAN_S, WeightsPreset, beta_text, classification_checks,
    critical_checks, exceedance_summary, noise_dtype_of, predicted_class, predicted_critical_beta, progress_bar,
    prop3_applies, regime_of,
)


def _checked_r_p(s: Any) -> bool:
    """r_p's critical β and classes are checked except with fractional weights of H ≠ ½ (see the module doc)."""
    return not (s.regime == "fractional" and s.hurst != 0.5)


def _sweep(s: Any, device: torch.device, progress: bool) -> tuple[dict, dict]:
    """r_h, r_p over depths × β; classification, critical β, bounds, checks."""
    regime, block = regime_of(s), Block(s.block, s.activation)
    depths, betas = list(s.depths), list(s.betas)
    keys = ("r_h", "r_p", "n_h", "n_p") + (("r_h_max",) if s.max_over_layers else ())
    data = {k: np.empty((len(depths), len(betas), s.samples * s.inputs)) for k in keys}
    if s.max_over_layers:
        data["v0_eigenvalue"] = np.empty((len(depths), s.samples))
    with progress_bar(len(depths) * s.samples, f"{s.preset} {regime.name}", progress) as bar:
        for i, depth in enumerate(depths):
            res = measure_ratios(regime, depth, betas, s.samples, s.inputs, s.width, s.n_in, block, seed=s.seed,
                                 label=("regimes", s.preset), dtype=s.torch_dtype, device=device,
                                 memory_mb=s.chunk_mb, progress=bar.update, noise_dtype=noise_dtype_of(s),
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
    checks = classification_checks(per_beta, quantities, lambda e, key: e[key]["class"])
    checks += critical_checks(betas, estimate, critical, s.critical_tolerance, quantities)
    if bounds:
        each = [b[k] for b in bounds for k in ("r_h", "r_p")]
        passed = sum(c["passed"] for c in each)
        uncounted = sum(not c["passed"] and not c["reliable"] for c in each)
        checks.append(Check.counted("Lemma 14 / Prop. 7 bounds", len(each) - passed - uncounted, uncounted,
                                    f"{passed}/{len(each)} within z = {z:.2f} s.e."
                                    + (f"; {uncounted} outside but not counted: too few samples for a z band "
                                       "(N < max(30, 10 (e^{s²} − 1)), s the sd of log r²)" if uncounted else ""
                                       )).to_dict())
    if quantile_bounds:
        checks.append(exceedance_summary("Props. 2 / 6 quantile bounds", quantile_bounds).to_dict())
    if exact_means:
        checks.append(_exact_mean_summary(exact_means))
    if prop3 is not None and prop3["cells"]:
        checks.append(exceedance_summary("Prop. 3 bounds", prop3["cells"]).to_dict())
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


def _prop13_applies(s: Any) -> bool:
    """Prop. 13 is proved for res-1 with σ = identity and smooth (Lipschitz) weights."""
    return s.regime == "smooth" and s.block == "res1" and get_activation(s.activation).name == "identity"


#: matrices drawn for the probability that a Gaussian d × d matrix has a positive real eigenvalue (Prop. 13)
GINIBRE_DRAWS = 20_000


def _initial_eigenvalues(s: Any, regime: SmoothRegime, device: torch.device) -> np.ndarray:
    """The largest real eigenvalue of each network's 𝒱(0) (NaN: none is real); the networks are named as in
    :func:`limits.initialisation.measure_ratios`, so 𝒱 is the process that gives their layers."""
    label = ("regimes", s.preset)
    values = [regime.initial_weights(s.seed, (*label, "net", i), s.width, s.torch_dtype, device)[0]
              for i in range(s.samples)]
    return largest_real_eigenvalue(torch.stack(values)).numpy()


def _max_over_layers(s: Any, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Marion et al. Prop. 13: linear res-1, smooth weights, β ∈ (0, 1), 𝒱(0)ᵀ with a positive eigenvalue ⇒
    max_k ‖h_k − h_0‖/‖h_0‖ → ∞ almost surely.

    The condition is the proposition's own: the eigenvalues of 𝒱(0), the process at t = 0, one matrix per network
    and the same at every depth (the layers read 𝒱(k/L), k ≥ 1). With the ``increments`` convention, and for other
    regimes, no layer reads 𝒱(0): the first layer's V_1 at every depth stands in, as labelled, and the proposition's
    checks are reported, not judged (the stand-in is not its condition). Checked:

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
    if "initial_eigenvalue" not in data:   # the increments convention: no layer reads 𝒱(0) itself
        out["note"] = ("Prop. 13's condition is on 𝒱(0), which no layer reads under the increments convention: the "
                       "stand-in (the first layer's V_1 at every depth) is not the proposition's, so reported, not "
                       "checked")
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


def _mean_is_exact(s: Any) -> bool:
    """E r² = (1 + α²/2)^L − 1 exactly for res-3 (ReLU) with i.i.d. symmetric weights (limits.regime_theory.exact_mean_r2)."""
    return s.block == "res3" and (s.regime == "iid" or (s.regime == "fractional" and s.hurst == 0.5))


def _exact_means(s: Any, data: dict[str, np.ndarray]) -> list[dict[str, Any]]:
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
        detail += f"; {uncounted} outside but not counted (too few samples for a z band: more would settle it)"
    return Check.counted("Props. 2 / 6: E r² = (1 + α²/2)^L − 1 (res-3, exact)", len(failed), uncounted,
                         detail).to_dict()


def _quantile_bounds(s: Any, data: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Props. 2 (r_h) and 6 (r_p) at every β ≥ ½ (Lα² ≤ 1), depth and δ; one Bonferroni family (1%)."""
    cells = [(j, beta, i, depth) for j, beta in enumerate(s.betas) if beta >= 0.5 for i, depth in enumerate(s.depths)]
    level = 0.01 / max(1, 2 * len(cells) * len(s.deltas))
    return [{"quantity": key, **quantile_bound_check(data[key][i, j], beta, depth, delta, level)}
            for j, beta, i, depth in cells for delta in s.deltas for key in ("r_h", "r_p")]


def _prop3_bounds(s: Any, data: dict[str, np.ndarray], block: Block) -> dict[str, Any]:
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
                lower_applies, upper_applies = prop3_applies(C, d, depth, a2, delta)
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
    lines.append(f"critical β (zero of the slope, interpolated): r_h {beta_text(crit['r_h'])}, r_p "
                 f"{beta_text(crit['r_p'])}; predicted {result['predicted_critical_beta']:g}")
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


def plot_sweep(result: dict[str, Any], samples: dict[str, np.ndarray], ax: Any = None) -> Any:
    """Rows r_h, r_p; one column per β; samples, median, RMS ± 2 s.e. and √(Lemma 14 bounds)."""
    depths = np.asarray(result["depths"], dtype=float)
    betas = result["betas"]
    names = (("r_h", r"$\|h_L-h_0\|/\|h_0\|$"), ("r_p", r"$\|p_0-p_L\|/\|p_L\|$"))
    fig, axes = new_grid(2, len(betas), ax, figsize=(4.2 * len(betas), 7.2))
    for row, (key, label) in enumerate(names):
        data = samples[key]  # (depths, betas, samples)
        for col, beta in enumerate(betas):
            ax = axes[row, col]
            r = data[:, col, :]
            finite = np.where(np.isfinite(r), r, np.nan)
            jitter = np.exp(np.random.default_rng(col).uniform(-0.04, 0.04, r.shape[1]))
            for i, depth in enumerate(depths):
                ax.scatter(depth * jitter, finite[i], s=4, color="0.6", alpha=0.5, lw=0,
                           label="samples" if i == 0 else None)
            ax.plot(depths, np.nanmedian(finite, axis=1), "o-", color="tab:orange", ms=4, label="median")
            rms = np.sqrt(np.nanmean(finite**2, axis=1))
            se = np.nanstd(finite**2, axis=1, ddof=1) / np.sqrt(np.isfinite(finite).sum(1)) / (2 * rms)
            ax.errorbar(depths, rms, yerr=2 * se, fmt="s", color="tab:green", ms=4, capsize=2,
                        label=r"RMS $\sqrt{\mathbb{E}r^2}$ ± 2 s.e.")
            info = result["per_beta"][col][key]
            if result.get("bounds"):
                lo = np.array([b[key]["lower"] for b in result["bounds"] if b["beta"] == beta])
                hi = np.array([b[key]["upper"] for b in result["bounds"] if b["beta"] == beta])
                ax.fill_between(depths, np.sqrt(lo), np.sqrt(hi), color="tab:purple", alpha=0.2,
                                label="Lemma 14 / Prop. 7 bounds on RMS")
            exploded = int((~np.isfinite(r)).sum())
            title = f"β = {beta:g}: {info['class']} (slope {info['slope']:.2f})"
            if exploded:
                title += f"\n{exploded} overflowed samples"
            ax.set_title(title, color=CLASS_COLOURS.get(info["class"], "black"), fontsize=10)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("depth L")
            ax.set_ylabel(label)
            ax.grid(True, which="major", alpha=0.3)
            if row == 0 and col == 0:
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{result['title']}  (α_L = L^-β, {result['samples']} samples per point)", fontsize=11)
    return fig


#: the δ values of Props. 2 and 6 checked by default (decided by 50 draws per cell: see validation.core.hypothesis)
QUANTILE_DELTAS = (0.25, 0.5)


class Sweep(WeightsPreset):
    """A sweep over depths × β (module docstring)."""

    kind = "sweep"
    applies = frozenset({"regime", "law", "lengthscale", "smooth_weights", "hurst", "block", "activation", "betas",
                         "depths", "width", "n_in", "samples", "inputs", "tau", "chunk_mb", "critical_tolerance",
                         "noise_dtype", "deltas", "max_over_layers"})
    kind_defaults = {**WeightsPreset.kind_defaults, "tau": TAU, "critical_tolerance": 0.1, "chunk_mb": 512.0,
                     "deltas": QUANTILE_DELTAS, "max_over_layers": False}

    def check_values(self, values: dict[str, Any], given: set[str]) -> None:
        super().check_values(values, given)
        if len(values["depths"]) < 3:
            raise SettingsError("depths", f"{list(values['depths'])}: a sweep needs at least 3 depths to fit a slope")

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        return _sweep(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return _sweep_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[str, Any], ax: Any = None) -> Any:
        return plot_sweep(numbers, data, ax)
