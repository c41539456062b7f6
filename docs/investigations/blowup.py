"""Blow-up of the Itô-corrected limits: does the limit SDE explode, or only Euler–Maruyama? (docs/results/blowup.md)

Three measurements, each on seeded Brownian paths shared by every scheme and step count:

1. **Exploded fraction against Δt** (part ``exploded``). For ``cohen-sde`` at s_A = s_b = 1, ā = b̄ = 1 and for
   ``pf`` with swish at σ_w = σ_b = 1.4 (both width 6), one pass over a :class:`~limits.brownian.BrownianGrid` of
   2^kmax fine steps steps Euler–Maruyama, tamed Euler and drift-implicit Euler (limits/schemes) at every
   Δt = 2^-k, k = 3…kmax; a scheme at step count n reads the increments ``path(t, t + 1/n)`` (the same dyadic
   tree sums every depth of the convergence study reads; checked bit for bit in ``--quick``). Per path it
   records max_k ‖H_k‖ over the grid, the first grid time ‖H‖ passes each level R, and for the implicit scheme
   whether the implicit equation had no solution (checked against the closed-form discriminant of these
   drifts). A path is **lost** when ‖H‖ passes 1e8 (``EXPLODED_NORM``) or turns non-finite on the grid; for the
   implicit scheme an **unsolvable** step is counted apart. Fractions come with Clopper–Pearson 95% intervals.
2. **The deterministic part alone** (part ``riccati``). The noise-free drift ODE dH/dt = f(t, H) from the same
   inputs and trends (RK4, 2^kmax steps), and the trend-free Riccati blow-up times.
3. **The rate with a reference that does not explode** (part ``rate``). cohen-sde at s_A = s_b = 1,
   ā = b̄ = 1, the study's defaults otherwise (1000 paths, depths 8…512, the engine's path): the network and
   the limit at 8192 steps by each scheme on the same path; the RMS rate by ``validation.core.rate_fit.fit_rate``
   (fit from L = 32).

Runs of separate cases, schemes or k lists on the same paths (same seed, samples, kmax and budget) combine
with ``--combine``; ``--states`` keeps the schemes' H_1 at ``--compare-k`` to compare them there. Writes
``<out>.json`` and the figure ``<out>.png`` (default docs/figures/blowup). ``--quick``: 500 paths, k ≤ 7,
about 12 s on a CPU, written to the temporary folder. The page's numbers: see its "Reproduce" section (an
H100 for parts 1–2, a CPU for part 3 and for the agreement of the schemes).

    python docs/investigations/blowup.py --quick
    python docs/investigations/blowup.py --device cuda --samples 100000 --kmax 13 --implicit-ks 3:12
    python docs/investigations/blowup.py --parts rate --rate-seeds 0,1,2 --out rate
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.stats import binomtest

from limits import make_pair
from limits.brownian import BrownianGrid, default_block_steps, dyadic_levels
from limits.pairs import SDEPair
from limits.schemes.base import PathIncrement, SDEScheme
from limits.schemes.drift_implicit_euler import DriftImplicitEuler
from limits.schemes.euler_maruyama import EulerMaruyama
from limits.schemes.tamed_euler import TamedEuler

EXPLODED_NORM = 1e8
LEVELS = (10.0, 30.0, 100.0, 300.0, 1e3, 1e4, 1e6, 1e8)
SCHEMES: dict[str, type[SDEScheme]] = {"euler": EulerMaruyama, "tamed_euler": TamedEuler,
                                       "drift_implicit_euler": DriftImplicitEuler}
CASES: dict[str, dict[str, Any]] = {
    "cohen-sde": {"model": "cohen-sde", "width": 6, "options": {"s_a": 1.0, "s_b": 1.0, "a_bar": 1.0, "b_bar": 1.0}},
    "pf-swish-1.4": {"model": "pf", "width": 6, "activation": "swish", "options": {"sigma_w": 1.4, "sigma_b": 1.4}},
}


# ----------------------------------------------------------------------------------------------- statistics
def clopper_pearson(count: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval of count/total."""
    if total < 1:
        return (float("nan"), float("nan"))
    ci = binomtest(int(count), int(total)).proportion_ci(confidence_level=confidence, method="exact")
    return (float(ci.low), float(ci.high))


def fraction(count: int, total: int) -> dict[str, Any]:
    low, high = clopper_pearson(count, total)
    return {"count": int(count), "total": int(total), "fraction": count / total, "ci95": [low, high]}


# ----------------------------------------------------------------------------------------------- the drift
@dataclass
class QuadraticDrift:
    """f(t, X) = A X + a + c (α ‖X‖² + β) 1 at one time: A (N, d, d), a (N, d), scalars c, α, β."""

    A: torch.Tensor
    a: torch.Tensor
    c: float
    alpha: float
    beta: float


def quadratic_drift(pair: SDEPair, t: float) -> QuadraticDrift:
    """The Itô-corrected drift of cohen-sde or of pf (fully i.i.d., ψ = identity) in the form above."""
    n, d = pair.samples, pair.width
    if pair.name == "cohen-sde":
        a_t, b_t = pair.trend.at(t)
        return QuadraticDrift(pair.activation.d1 * a_t, pair.activation.d1 * b_t, 0.5 * pair.activation.d2,
                              pair.s_a**2 / d, pair.s_b**2)
    if pair.name == "pf" and pair.block.iid and pair.psi.name == "identity":
        block = pair.block
        eye = torch.eye(d, dtype=pair.dtype, device=pair.device).expand(n, d, d)
        return QuadraticDrift(pair.activation.d1 * block.mu_w * eye,
                              torch.full((n, d), pair.activation.d1 * block.mu_b, dtype=pair.dtype, device=pair.device),
                              0.5 * pair.activation.d2, block.sigma_w**2 / d, block.sigma_b**2)
    raise ValueError(f"no closed-form quadratic drift for {pair.name} with these settings")


def implicit_discriminant(drift: QuadraticDrift, dt: float, rhs: torch.Tensor) -> torch.Tensor:
    """The discriminant of the scalar quadratic whose roots λ give the roots X = u + λ v of
    X − Δt f(X) = rhs (limits/schemes/drift_implicit_euler.py); < 0: no real solution. Shape (N,)."""
    d = rhs.shape[1]
    m = torch.eye(d, dtype=rhs.dtype, device=rhs.device) - dt * drift.A
    both = torch.linalg.solve(m, torch.stack([rhs + dt * drift.a, torch.ones_like(rhs)], dim=-1))
    u, v = both[..., 0], both[..., 1]
    ca = dt * drift.c * drift.alpha
    qa = ca * (v * v).sum(-1)
    qb = 2.0 * ca * (u * v).sum(-1) - 1.0
    qc = dt * drift.c * (drift.alpha * (u * u).sum(-1) + drift.beta)
    return qb * qb - 4.0 * qa * qc


# ----------------------------------------------------------------------------------------------- one pass
@dataclass
class Tracker:
    """One scheme at one step count, stepped along the shared path; per-path records of its run."""

    label: str
    steps: int
    fine_per_step: int
    advance: Callable[[float, float, torch.Tensor, torch.Tensor, Any], tuple[torch.Tensor, Any]]
    h: torch.Tensor
    state: Any = None
    k: int = 0
    sup: torch.Tensor | None = None
    first_passage: dict[float, torch.Tensor] = field(default_factory=dict)
    nonfinite_step: torch.Tensor | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.h.shape[0]
        self.sup = _norms(self.h)
        self.nonfinite_step = torch.full((n,), -1, dtype=torch.int64, device=self.h.device)
        self.first_passage = {level: torch.full((n,), -1, dtype=torch.int64, device=self.h.device)
                              for level in LEVELS}

    def step(self, increment: torch.Tensor) -> None:
        dt = 1.0 / self.steps
        self.h, self.state = self.advance(self.k * dt, dt, self.h, increment, self.state)
        self.k += 1
        norms = _norms(self.h)
        self.sup = torch.maximum(self.sup, norms)
        for level, first in self.first_passage.items():  # torch.where: no host sync on a GPU
            self.first_passage[level] = torch.where((first < 0) & (norms > level), self.k, first)
        fresh = (self.nonfinite_step < 0) & ~torch.isfinite(self.h).all(dim=1)
        self.nonfinite_step = torch.where(fresh, self.k, self.nonfinite_step)


def _norms(h: torch.Tensor) -> torch.Tensor:
    """‖h‖ per row, +inf where h is not finite."""
    norms = torch.linalg.vector_norm(h, dim=1)
    return torch.where(torch.isfinite(norms), norms, torch.full_like(norms, float("inf")))


class _BlockTree:
    """Sums of aligned groups of 2^j consecutive blocks, by the same pairwise tree as
    :meth:`BrownianGrid.dyadic_increment` (left + right at every level), in O(log) memory."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, torch.Tensor]] = []

    def push(self, total: torch.Tensor) -> list[tuple[int, torch.Tensor]]:
        """Add the next block's total; returns the (level j ≥ 1, sum) groups completed by it."""
        done = []
        level, node = 0, total
        while self.stack and self.stack[-1][0] == level:
            _, left = self.stack.pop()
            level, node = level + 1, left + node
            done.append((level, node))
        self.stack.append((level, node))
        return done


def one_pass(grid: BrownianGrid, trackers: list[Tracker], progress: bool = False) -> None:
    """Step every tracker along the grid's path: tracker with r fine steps per step reads the tree sum of
    each aligned group of r fine increments — exactly ``grid(t, t + r/n)``."""
    block = grid.block_steps
    tree = _BlockTree()
    for b in range(grid.num_blocks):
        levels = dyadic_levels(grid.block(b))
        for tracker in trackers:
            r = tracker.fine_per_step
            if r <= block:
                increments = levels[r.bit_length() - 1]
                for i in range(block // r):
                    tracker.step(increments[i])
        for level, total in tree.push(levels[-1][0]):
            for tracker in trackers:
                if tracker.fine_per_step == block << level:
                    tracker.step(total)
        if progress and (b + 1) % max(1, grid.num_blocks // 8) == 0:
            print(f"    block {b + 1}/{grid.num_blocks}", flush=True)


def scheme_advance(scheme: SDEScheme) -> Callable:
    def advance(t, dt, h, dw, state):
        return scheme.step(t, dt, h, PathIncrement(dw), state)
    return advance


def implicit_advance(scheme: DriftImplicitEuler, pair: SDEPair, tracker_extra: dict[str, Any]) -> Callable:
    """The implicit step, with the closed-form discriminant checked against the scheme's own verdict."""
    sde = scheme.sde
    tracker_extra.update(predicted_unsolvable=0, agree=0, root_missed_by_newton=0,
                         solved_where_no_root=0, wrong_branch=0)

    def advance(t, dt, h, dw, state):
        rhs = h + sde.g_prod(t, h, dw)
        active = torch.isfinite(rhs).all(dim=1)
        disc = implicit_discriminant(quadratic_drift(pair, t + dt), dt, rhs)
        predicted = active & (disc < 0)
        step_index = state.steps if state is not None else 0
        h_new, state = scheme.step(t, dt, h, PathIncrement(dw), state)
        failed_now = state.first_failure_step == step_index
        wrong_now = failed_now & state.wrong_branch
        no_root_now = failed_now & state.no_solution
        for key, mask in (("predicted_unsolvable", predicted), ("agree", predicted & no_root_now),
                          ("root_missed_by_newton", ~predicted & active & no_root_now),
                          ("solved_where_no_root", predicted & ~failed_now), ("wrong_branch", wrong_now)):
            tracker_extra[key] = tracker_extra[key] + mask.sum()  # a tensor: no host sync per step
        return h_new, state

    return advance


def build_pair(case: str, samples: int, seed: int, device: str) -> SDEPair:
    spec = dict(CASES[case])
    model = spec.pop("model")
    return make_pair(model, samples=samples, seed=seed, dtype=torch.float64, device=device, **spec)


def block_steps_for(samples: int, channels: int, steps: int, budget: int) -> int:
    block = 1
    while block * 2 <= steps and block * 2 * samples * channels <= budget:
        block *= 2
    return max(block, 2)


# ----------------------------------------------------------------------------------------------- study 1
def exploded_study(case: str, samples: int, ks_by_scheme: dict[str, list[int]], fine_k: int, seed: int,
                   device: str, budget: int, check_path: bool = False, compare_k: int | None = None,
                   states_dir: Path | None = None) -> dict[str, Any]:
    """Study 1 for the schemes in ``ks_by_scheme`` (name → its k list) on the path of 2^fine_k fine steps (the
    path depends on fine_k and the block length only, so runs of different schemes can be combined)."""
    pair = build_pair(case, samples, seed, device)
    fine = 2**fine_k
    grid = BrownianGrid(samples, pair.noise_dim, fine, seed=seed, dtype=torch.float64, device=device,
                        block_steps=block_steps_for(samples, pair.noise_dim, fine, budget))
    h0 = pair.initial_state()
    limit = pair.limit_sde()
    trackers: list[Tracker] = []
    implicit_schemes: dict[int, DriftImplicitEuler] = {}
    for name, ks in ks_by_scheme.items():
        cls = SCHEMES[name]
        for k in ks:
            if not 3 <= k <= fine_k:
                raise ValueError(f"k={k} for {name} is outside 3…{fine_k}")
            scheme = cls(limit, pair.noise_type)
            tracker = Tracker(f"{name}@{k}", 2**k, fine // 2**k, None, h0.clone())  # type: ignore[arg-type]
            if name == "drift_implicit_euler":
                tracker.advance = implicit_advance(scheme, pair, tracker.extra)
                implicit_schemes[k] = scheme
            else:
                tracker.advance = scheme_advance(scheme)
            trackers.append(tracker)
    start = time.perf_counter()
    one_pass(grid, trackers, progress=samples >= 20000)
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"case": case, "model": pair.describe(), "samples": samples, "seed": seed,
                           "device": "cuda" if str(device).startswith("cuda") else str(device),
                           "fine_steps": fine, "block_steps": grid.block_steps, "seconds": seconds,
                           "exploded_norm": EXPLODED_NORM, "levels": list(LEVELS), "schemes": {}}
    compared: dict[str, torch.Tensor] = {}
    compare_k = compare_k if compare_k is not None else min(max(ks) for ks in ks_by_scheme.values())
    for tracker in trackers:
        name, k = tracker.label.split("@")
        k = int(k)
        exploded = (tracker.sup > EXPLODED_NORM) | (tracker.nonfinite_step >= 0)
        row: dict[str, Any] = {"k": k, "dt": 2.0**-k}
        unsolvable = torch.zeros_like(exploded)
        if name == "drift_implicit_euler":
            log = tracker.state
            unsolvable = log.failed
            row["solver"] = log.summary()
            row["discriminant_check"] = {key: int(value) for key, value in tracker.extra.items()}
        grown = exploded & ~unsolvable
        row["exploded"] = fraction(int(grown.sum()), samples)
        row["unsolvable"] = fraction(int(unsolvable.sum()), samples)
        row["lost"] = fraction(int(exploded.sum()), samples)
        row["exceed"] = {f"{level:g}": int((tracker.sup > level).sum()) for level in LEVELS}
        row["exceed_and_lost"] = {f"{level:g}": int(((tracker.sup > level) & exploded).sum()) for level in LEVELS}
        passage = tracker.first_passage
        row["first_passage_median_t"] = {
            f"{level:g}": (float(passage[level][passage[level] > 0].double().median()) / tracker.steps
                           if (passage[level] > 0).any() else None) for level in LEVELS}
        out["schemes"].setdefault(name, []).append(row)
        if k == compare_k:
            compared[name] = tracker.h
            row["lost_paths"] = torch.nonzero(exploded).flatten().tolist()[:1000]
    out["compare_k"] = compare_k
    if states_dir is not None:
        states_dir.mkdir(parents=True, exist_ok=True)
        for name, h in compared.items():
            torch.save(h.cpu(), states_dir / f"{case}.{name}.k{compare_k}.pt")
    if len(compared) > 1:
        out["agreement"] = agreement({name: h.cpu() for name, h in compared.items()}, compare_k)
    if check_path:
        k = min(ks)
        direct = EulerMaruyama(limit, pair.noise_type).integrate(h0, grid, 2**k)
        tracked = next(t for t in trackers if t.label == f"euler@{k}").h
        out["path_check"] = {"steps": 2**k, "bit_identical": bool(torch.equal(direct, tracked))}
    return out


def agreement(states: dict[str, torch.Tensor], k: int) -> dict[str, Any]:
    """The schemes' H_1 at Δt = 2^-k against each other, on the paths none of them lost."""
    keep = None
    for h in states.values():
        ok = torch.isfinite(h).all(dim=1) & (_norms(h) <= EXPLODED_NORM)
        keep = ok if keep is None else keep & ok
    names = list(states)
    base = states["drift_implicit_euler"] if "drift_implicit_euler" in states else states[names[0]]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    quantiles = torch.tensor([0.5, 0.99, 0.999], dtype=torch.float64)

    def relative(a: str, b: str) -> list[float]:
        """Quantiles of ‖H^a − H^b‖ / (1 + ‖H^b‖) over the kept paths (the RMS is carried by a few huge paths)."""
        gap = (states[a] - states[b])[keep].norm(dim=1) / (1 + states[b][keep].norm(dim=1))
        return [float(x) for x in torch.quantile(gap, quantiles)]

    return {"k": k, "paths": int(keep.sum()),
            "rms_norm": float(base[keep].pow(2).sum(1).mean().sqrt()),
            "median_norm": float(base[keep].norm(dim=1).median()),
            "rms_distance": {f"{a} - {b}": float((states[a] - states[b])[keep].pow(2).sum(1).mean().sqrt())
                             for a, b in pairs},
            "relative_distance_quantiles_50_99_99.9": {f"{a} - {b}": relative(a, b) for a, b in pairs}}


# ----------------------------------------------------------------------------------------------- study 2
def riccati_check(case: str, samples: int, fine: int, seed: int, device: str) -> dict[str, Any]:
    """The noise-free drift ODE from the same inputs and trends (RK4), and the trend-free Riccati times."""
    pair = build_pair(case, samples, seed, device)
    f = pair.limit_sde().f
    h = pair.initial_state()
    h0 = h.clone()
    dt = 1.0 / fine
    sup = _norms(h)
    for k in range(fine):
        t = k * dt
        k1 = f(t, h)
        k2 = f(t + dt / 2, h + dt / 2 * k1)
        k3 = f(t + dt / 2, h + dt / 2 * k2)
        k4 = f(t + dt, h + dt * k3)
        h = h + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        sup = torch.maximum(sup, _norms(h))
    drift = quadratic_drift(pair, 0.0)
    d = pair.width
    # trend-free drift: p' = κ (p² + m²), p = 1ᵀH/√d, κ = c α √d, m² = ‖q‖² + β/α (module docs of the page)
    kappa = drift.c * drift.alpha * math.sqrt(d)
    p0 = h0.sum(1) / math.sqrt(d)
    q2 = (h0 * h0).sum(1) - p0 * p0
    m = torch.sqrt(q2 + drift.beta / drift.alpha)
    t_star = (math.pi / 2 - torch.atan(p0 / m)) / (kappa * m)
    return {"case": case, "samples": samples, "rk4_steps": fine,
            "ode_exceeds": {f"{level:g}": int((sup > level).sum()) for level in LEVELS},
            "ode_sup_norm_max": float(sup.max()), "ode_sup_norm_median": float(sup.median()),
            "kappa": kappa, "trend_free_blowup_time_min": float(t_star.min()),
            "trend_free_blowup_time_median": float(t_star.median()),
            "trend_free_blowup_before_1": int((t_star < 1).sum())}


# ----------------------------------------------------------------------------------------------- study 3
def rate_study(samples: int, depths: list[int], reference_steps: int, seed: int, device: str,
               resamples: int) -> dict[str, Any]:
    from validation.core.rate_fit import fit_rate

    pair = build_pair("cohen-sde", samples, seed, device)
    # the block length of validation.core.one_pass.sde_pass: on the same device, the same path as the convergence study
    block = max(2, default_block_steps(samples, pair.noise_dim, reference_steps, 1 << 23))
    grid = BrownianGrid(samples, pair.noise_dim, reference_steps, seed=seed, dtype=torch.float64, device=device,
                        block_steps=block)
    h0 = pair.initial_state()
    limit = pair.limit_sde()
    networks = [Tracker(f"network@{L}", L, reference_steps // L,
                        lambda t, dt, h, dw, s: (pair.network_step(h, t, dt, dw), s), h0.clone()) for L in depths]
    references = []
    for name, cls in SCHEMES.items():
        scheme = cls(limit, pair.noise_type)
        references.append(Tracker(name, reference_steps, 1, scheme_advance(scheme), h0.clone()))
    start = time.perf_counter()
    one_pass(grid, networks + references)
    out: dict[str, Any] = {"model": pair.describe(), "samples": samples, "seed": seed, "depths": depths,
                           "reference_steps": reference_steps, "fit_from": 32, "seconds": time.perf_counter() - start,
                           "references": {}}
    for ref in references:
        lost = int(((ref.sup > EXPLODED_NORM) | (ref.nonfinite_step >= 0)).sum())
        sq = torch.stack([(net.h - ref.h).pow(2).sum(1) for net in networks], dim=1).cpu().numpy()
        fit = fit_rate(depths, sq, "rms", fit_from=32, resamples=resamples, seed=seed)
        worst = np.sort(sq[:, -1])[::-1]
        out["references"][ref.label] = {
            "rate": float(fit.rate), "ci95": [float(x) for x in fit.ci], "finite": bool(fit.finite),
            "interval_method": getattr(fit, "method", None),
            "rms_error": [float(x) for x in fit.errors], "local_slopes": [float(x) for x in fit.local],
            "lost_paths": lost, "sup_norm_max": float(ref.sup.max()),
            "top1pct_share_of_mse_at_deepest": float(worst[: max(1, samples // 100)].sum() / worst.sum())
            if np.isfinite(worst).all() and worst.sum() > 0 else None,
            "within_0.5±0.1": bool(fit.finite and 0.4 <= fit.ci[0] and fit.ci[1] <= 0.6),
            "within_0.5±0.05": bool(fit.finite and 0.45 <= fit.ci[0] and fit.ci[1] <= 0.55),
            "contains_0.5": bool(fit.finite and fit.ci[0] <= 0.5 <= fit.ci[1]),
        }
    return out


# ----------------------------------------------------------------------------------------------- figure
COLOURS = {"euler": "C3", "tamed_euler": "C0", "drift_implicit_euler": "C2"}
NAMES = {"euler": "Euler–Maruyama", "tamed_euler": "tamed Euler", "drift_implicit_euler": "drift-implicit Euler"}


def _curve(ax, dts, counts, total, colour, marker, style, label) -> None:
    """Fractions with Clopper–Pearson bands on log axes; a zero count is drawn as an open triangle at its
    upper 95% bound."""
    counts = np.asarray(counts)
    cis = np.array([clopper_pearson(int(c), total) for c in counts])
    floor = 0.3 / total
    seen = counts > 0
    ax.fill_between(dts, np.maximum(cis[:, 0], floor), cis[:, 1], where=seen, color=colour, alpha=0.15, linewidth=0)
    ax.plot(dts, np.where(counts > 0, counts / total, np.nan), style, marker=marker, ms=4, color=colour, label=label)
    zero = counts == 0
    if zero.any():
        ax.plot(dts[zero], cis[zero, 1], "v", ms=5, color=colour, mfc="none")


def plot(result: dict[str, Any], path: Path) -> None:
    """Row 1: paths lost (‖H‖ > 1e8 or non-finite; the implicit scheme's unsolvable steps) against Δt; row 2:
    paths with sup_t ‖H_t‖ > 100; one column per case, 95% Clopper–Pearson bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = result["exploded"]
    fig, axes = plt.subplots(2, len(cases), figsize=(5.4 * len(cases), 7.6), squeeze=False, sharex="col")
    for column, (case, study) in enumerate(cases.items()):
        total = study["samples"]
        top, bottom = axes[0][column], axes[1][column]
        for name, rows in study["schemes"].items():
            dts = np.array([r["dt"] for r in rows])
            what = "equation unsolvable" if name == "drift_implicit_euler" else r"$\|H\| > 10^8$ or NaN"
            _curve(top, dts, [r["lost"]["count"] for r in rows], total, COLOURS[name], "o", "-",
                   f"{NAMES[name]}: {what}")
            _curve(bottom, dts, [r["exceed"]["100"] for r in rows], total, COLOURS[name], "s", "-", NAMES[name])
        finest = {name: rows[-1] for name, rows in study["schemes"].items()}
        if "euler" in finest and "drift_implicit_euler" in finest:
            low = clopper_pearson(finest["euler"]["lost"]["count"], total)[0]
            high = clopper_pearson(finest["drift_implicit_euler"]["lost"]["count"], total)[1]
            top.axhspan(max(low, 0.3 / total), high, color="0.6", alpha=0.25, linewidth=0,
                        label="limit: between the two at the finest $\\Delta t$")
        top.set_title(f"{case}: {total:,} paths, lost before $t = 1$")
        bottom.set_title(r"paths with $\max_{t_k \leq 1} \|H_{t_k}\| > 100$")
        for ax in (top, bottom):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_ylim(0.3 / total, 1)
            ax.set_ylabel("fraction of paths")
            ax.grid(True, which="major", alpha=0.3)
        bottom.set_xlabel(r"step $\Delta t$")
        top.legend(fontsize=7, loc="upper right")
        bottom.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------------------------------------- main
PARTS = ("exploded", "riccati", "rate")


def _beside(stem: Path, suffix: str) -> Path:
    """<stem><suffix> (not Path.with_suffix, which would eat the '.4' of a stem like pf-swish-1.4_euler)."""
    return stem.parent / (stem.name + suffix)


def _write(result: dict[str, Any], stem: Path) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    _beside(stem, ".json").write_text(json.dumps(result, indent=1))


def _k_list(text: str) -> list[int]:
    if ":" in text:
        low, high = (int(x) for x in text.split(":"))
        return list(range(low, high + 1))
    return [int(x) for x in text.split(",")]


def _path_set(study: dict[str, Any]) -> tuple:
    """What fixes the Brownian paths of a study: runs with equal tuples read the same paths."""
    return (study["seed"], study["samples"], study["fine_steps"], study["block_steps"], study.get("device", "unknown"))


def combine(files: list[Path], stem: Path, states_dir: Path | None) -> dict[str, Any]:
    """One result from runs of separate cases or schemes on the same paths (same seed, samples, kmax, budget)."""
    result: dict[str, Any] = {"script": "docs/investigations/blowup.py", "exploded": {}, "riccati": {}, "rate": [],
                              "runs": {}, "combined_from": [p.name for p in files]}
    for path in files:
        part = json.loads(path.read_text())
        run_devices = {run.get("device") for run in part.get("runs", {}).values()}
        for case, study in part.get("exploded", {}).items():
            if "device" not in study and run_devices:  # files written before studies recorded their device
                study["device"] = "cpu" if run_devices == {"cpu"} else "cuda"
            if case not in result["exploded"]:
                result["exploded"][case] = study
                continue
            mine = result["exploded"][case]
            if _path_set(study) != _path_set(mine):  # another path set: kept beside, not merged
                label = f"{case}@seed{study['seed']},N={study['samples']},{study.get('device', 'unknown')}"
                other = result.setdefault("exploded_other_seeds", {}).setdefault(label, study)
                if other is not study:
                    other["schemes"].update(study["schemes"])
                continue
            for name, rows in study["schemes"].items():
                merged = {row["k"]: row for row in mine["schemes"].get(name, [])}
                merged.update({row["k"]: row for row in rows})
                mine["schemes"][name] = [merged[k] for k in sorted(merged)]
            mine["seconds"] = max(mine["seconds"], study["seconds"])
        for key, study in part.get("exploded_other_seeds", {}).items():
            result.setdefault("exploded_other_seeds", {})[key] = study
        result["riccati"].update(part.get("riccati", {}))
        result["rate"] = part.get("rate") or result["rate"]
        result["runs"].update({f"{path.name}:{k}": v for k, v in part.get("runs", {}).items()})
    if states_dir is not None:
        for case, study in result["exploded"].items():
            k = min(max(r["k"] for r in rows) for rows in study["schemes"].values())
            states = {name: torch.load(states_dir / f"{case}.{name}.k{k}.pt") for name in study["schemes"]
                      if (states_dir / f"{case}.{name}.k{k}.pt").exists()}
            if len(states) > 1:
                study["agreement"] = agreement(states, k)
    _write(result, stem)
    if result["exploded"]:
        plot(result, _beside(stem, ".png"))
    print(f"combined {len(files)} files into {_beside(stem, '.json')}")
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="seconds-long run: 500 paths, k = 3…7, parts exploded and riccati only")
    parser.add_argument("--parts", default="exploded,riccati", help=f"comma-separated, from {', '.join(PARTS)}")
    parser.add_argument("--samples", type=int, default=20000, help="paths per case (default 20000)")
    parser.add_argument("--kmax", type=int, default=13, help="finest step 2^-kmax (default 13)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {', '.join(CASES)}")
    parser.add_argument("--rate-samples", type=int, default=1000)
    parser.add_argument("--rate-seeds", default="0,1,2")
    parser.add_argument("--budget", type=int, default=1 << 24, help="fine increments generated at once (elements)")
    parser.add_argument("--schemes", default=",".join(SCHEMES), help=f"comma-separated, from {', '.join(SCHEMES)}")
    parser.add_argument("--implicit-ks", default=None,
                        help="the k of the drift-implicit scheme, A:B or a comma list (default 3:kmax; the path "
                             "stays 2^-kmax, so runs with different lists combine)")
    parser.add_argument("--compare-k", type=int, default=None,
                        help="k at which the schemes' H_1 are compared (default: the largest implicit k)")
    parser.add_argument("--states", default=None, help="folder for the schemes' H_1 at the common finest k (.pt)")
    parser.add_argument("--combine", nargs="+", default=None,
                        help="combine the JSON files of runs of separate cases/schemes (and --states) into --out")
    parser.add_argument("--merge", default=None, help="a JSON of an earlier run: keep its parts not run now")
    parser.add_argument("--out", default=None,
                        help="output stem: <out>.json and <out>.png (default docs/figures/blowup; with --quick "
                             "blowup_quick in the temporary folder, so a quick run never overwrites the figure)")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if args.quick:
        args.samples, args.kmax, parts = min(args.samples, 500), min(args.kmax, 7), ["exploded", "riccati"]
    if args.samples < 1 or not 3 <= args.kmax <= 20:
        parser.error(f"--samples={args.samples} must be ≥ 1 and --kmax={args.kmax} within 3…20")
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for name, chosen, allowed in (("--parts", parts, PARTS), ("--cases", cases, tuple(CASES))):
        for item in chosen:
            if item not in allowed:
                parser.error(f"{name}: {item!r} unknown (allowed: {', '.join(allowed)})")
    schemes = [c.strip() for c in args.schemes.split(",") if c.strip()]
    for item in schemes:
        if item not in SCHEMES:
            parser.error(f"--schemes: {item!r} unknown (allowed: {', '.join(SCHEMES)})")
    if args.device == "cpu":
        torch.set_num_threads(1)  # a shared machine: one thread
    if args.out is None:
        args.out = str(Path(tempfile.gettempdir()) / "blowup_quick") if args.quick else "docs/figures/blowup"
    stem = Path(args.out)
    if args.combine:
        return combine([Path(p) for p in args.combine], stem, Path(args.states) if args.states else None)
    implicit_ks = _k_list(args.implicit_ks) if args.implicit_ks else list(range(3, args.kmax + 1))
    if not all(3 <= k <= args.kmax for k in implicit_ks):
        parser.error(f"--implicit-ks={args.implicit_ks} must lie within 3…kmax={args.kmax}")
    compare_k = args.compare_k if args.compare_k is not None else max(implicit_ks)
    ks_by_scheme = {name: implicit_ks if name == "drift_implicit_euler" else list(range(3, args.kmax + 1))
                    for name in schemes}
    run_info = {"args": vars(args), "torch": torch.__version__,
                "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu"}
    result: dict[str, Any] = {"script": "docs/investigations/blowup.py", "exploded": {}, "riccati": {}, "rate": [],
                              "runs": {}}
    if args.merge:
        result.update(json.loads(Path(args.merge).read_text()))
    for part in parts:
        result["runs"][part] = run_info
    if "exploded" in parts or "riccati" in parts:
        for case in cases:
            if "exploded" in parts:
                print(f"== {case}: {args.samples} paths, Δt = 2^-3 … 2^-{args.kmax}", flush=True)
                study = exploded_study(case, args.samples, ks_by_scheme, args.kmax, args.seed, args.device,
                                       args.budget, check_path=args.quick and "euler" in schemes,
                                       compare_k=compare_k,
                                       states_dir=Path(args.states) if args.states else None)
                result["exploded"][case] = study
                for name, rows in study["schemes"].items():
                    text = "  ".join(f"k={r['k']}:{r['lost']['count']}" + (f"({r['unsolvable']['count']}u)"
                                                                           if r["unsolvable"]["count"] else "")
                                     for r in rows)
                    print(f"  {name:22s} lost {text}", flush=True)
                for name, rows in study["schemes"].items():
                    print(f"  {name:22s} finest exceed " + ", ".join(f"{k}:{v}" for k, v in rows[-1]["exceed"].items()))
                print(f"  ({study['seconds']:.0f} s) agreement: {study.get('agreement')}", flush=True)
            if "riccati" in parts:
                result["riccati"][case] = riccati_check(case, args.samples, 2 ** args.kmax, args.seed, args.device)
                print(f"  noise-free ODE: {result['riccati'][case]}", flush=True)
            _write(result, stem)
    if "rate" in parts:
        result["rate"] = []
        for seed in (int(s) for s in args.rate_seeds.split(",")):
            rate = rate_study(args.rate_samples, [8, 16, 32, 64, 128, 256, 512], 8192, seed, args.device,
                              resamples=2000)
            result["rate"].append(rate)
            for name, ref in rate["references"].items():
                print(f"  rate seed {seed} reference {name}: {ref['rate']:.3f} [{ref['ci95'][0]:.3f}, "
                      f"{ref['ci95'][1]:.3f}] lost {ref['lost_paths']} sup {ref['sup_norm_max']:.3g} "
                      f"({rate['seconds']:.0f} s)", flush=True)
            _write(result, stem)
    _write(result, stem)
    if result["exploded"]:
        plot(result, _beside(stem, ".png"))
    print(f"wrote {_beside(stem, '.json')}" + (f" and {_beside(stem, '.png')}" if result["exploded"] else ""))
    return result


if __name__ == "__main__":
    main()
