"""Chaintron, Chizat & Maass (arXiv 2603.18168, 2026): the authors' grid — every cell (L, M, D) of a grid of depths,
hidden widths and embedding dimensions trained and measured against the large-scale limit, and the bound fitted to
all cells at once (``linear_experiments_python/exp_cvg_rate.ipynb`` and ``plt_cvg_rate.ipynb``).

**The cells.** For each depth L of ``--depths``, each embedding dimension D of ``--widths`` and each hidden width M
of ``--hiddens``, R replicates (``--replicates``) of the linear network of :mod:`validation.training.chaintron2026`
are trained for K steps at η₀ (the authors' model, task and learning rates), and each is compared with the limit
L, M, D → ∞ (:func:`limits.embedded_resnet.depth_limit`, read on the replicate's own embedding rows) in embedding
space (the authors' ``max_hs_track``: the largest over layers of the mean over coordinates of |h − H|) and at the
output. Coupling, as the authors': a replicate's smaller embeddings are the first rows of its largest one (shared by
every depth), and its narrower networks the first units of its widest one at the same (L, D).

**The authors' analysis, reproduced** (reported): at step 5 (their ``id_train``) the replicates' mean error of each
cell, the model e = √(α·D/(LM) + β/D + γ/L²) — the bound's three terms in quadrature with the paper's exponents —
fitted by unweighted least squares with α, β, γ ≥ 0 (``scipy.optimize.curve_fit``, their start [0.85, 2.4, 0.001]),
on their cells L > 50, M > 10, D > 10. Their own grid also drops its largest M and averages 13 embedding draws × 5
unit draws; here each replicate draws both.

**Checked** (fixed before any run of this entry): the exponents themselves, free. The model

    e(L, M, D) = √( c_L²·L^(−2p) + c_W²·(D/(LM))^(2q) + c_D²·D^(−2r) )

is fitted to the replicates' mean log error (the cells' errors span decades; a relative fit weighs them alike) on
the cells where every term of the bound with unit constants is at most 1/:data:`~validation.training.chaintron2026.DOMINANCE`
(1/L, √(D/(LM)), 1/√D ≤ 1/8: the next order of each term at most 1/8 of it, as the single-term sweeps require),
with a bootstrap over replicates (the same replicate indices in every cell) for 95 % intervals of p, q, r. A term is
**resolved** when, with the fitted constants, it is the largest of the three in at least :data:`LEADING_CELLS` = 3
fitted cells whose own size (L; D/(LM); D) spans a factor of at least :data:`LEADING_SPAN` = 4. Each resolved term's
exponent PASSes when its interval lies within the paper's exponent (1, ½, ½) ± 0.1, FAILs when it lies outside, and
is INCONCLUSIVE otherwise; a term the grid does not resolve is reported as such, with the sizes that would resolve
it, not as a failed exponent (the bound is a sum: each exponent shows only where its term leads). No term resolved:
INCONCLUSIVE.

**Sizes.** The default grid (L = 8 … 64, M = 256 … 2048, D = 64, 128; 32 replicates; about 5 minutes on 2 cores)
resolves the finite-width term. The embedding term needs D to span ×4 where 1/√D leads (LM ≳ D², D up to about
1000), and the depth term needs 1/L to lead: with the constants measured on the default grid (c_L below 10⁻⁵ of the
others) neither fits this machine — the single-term sweeps of ``chaintron2026-linear`` measure both. The authors'
grid is ``--depths 10,13,17,23,30,40,53,70,93,123,163,216,285,378,499``, the same values for ``--widths``,
``--hiddens`` without 499 and ``--replicates 5`` (docs/results/training_chaintron2026.md: the command and its time,
estimated from measured cells).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch

from limits.embedded_resnet import EmbeddedResNet, Trajectory, depth_limit, limit_states, one_example_task

from ..core.checks import FAIL, INCONCLUSIVE, Check, check_line, combine, interval_check
from ..core.settings import SettingsError
from .chaintron2026 import (CHUNK_MB, CHUNK_UNIT_VALUES, D_IN, D_OUT, DOMINANCE, HELD_UNIT_VALUES, MARGIN, REFINEMENT,
                            ChaintronLinear, UnitDraws, compare)
from .experiment import number
from .sweep import Configuration

__all__ = ["ChaintronGrid", "fit_bound", "authors_fit", "TERMS", "LEADING_CELLS", "LEADING_SPAN"]

#: the bound's terms: (key, the size each is a power of, the paper's exponent, the term as the paper writes it)
TERMS: tuple[tuple[str, str, float, str], ...] = (
    ("depth", "L", 1.0, "1/L"),
    ("width", "D/(LM)", 0.5, "√(D/(LM))"),
    ("embedding", "D", 0.5, "1/√D"),
)
#: a term is resolved when it leads in at least this many fitted cells …
LEADING_CELLS = 3
#: … whose own size spans at least this factor
LEADING_SPAN = 4.0
#: the authors' cells for their fit (plt_cvg_rate.ipynb: mins=(10, 10, 50) read as (D, M, L)): L > 50, M > 10, D > 10
AUTHORS_MINIMA = {"L": 50, "M": 10, "D": 10}
#: the step the authors analyse (id_train)
AUTHORS_STEP = 5


def _sizes(L: np.ndarray, M: np.ndarray, D: np.ndarray) -> np.ndarray:
    """The three terms' own sizes per cell, as powers: (L, D/(LM), D) with the sign that makes each term size^−e."""
    return np.stack([np.asarray(L, float), np.asarray(L, float) * np.asarray(M, float) / np.asarray(D, float),
                     np.asarray(D, float)])


def _log_model(theta: np.ndarray, log_sizes: np.ndarray) -> np.ndarray:
    """log e for θ = (log c_L, log c_W, log c_D, p, q, r): ½ log Σ_i c_i² size_i^(−2 e_i) (sizes as in :func:`_sizes`)."""
    parts = 2 * theta[:3, None] - 2 * theta[3:, None] * log_sizes
    top = parts.max(axis=0)
    return 0.5 * (top + np.log(np.exp(parts - top).sum(axis=0)))


def _fit_once(log_sizes: np.ndarray, target: np.ndarray, start: np.ndarray) -> np.ndarray:
    from scipy.optimize import least_squares

    low = np.array([-40.0, -40.0, -40.0, 0.0, 0.0, 0.0])
    high = np.array([10.0, 10.0, 10.0, 3.0, 3.0, 3.0])
    solution = least_squares(lambda theta: _log_model(theta, log_sizes) - target, np.clip(start, low, high),
                             bounds=(low, high), method="trf", x_scale=1.0)
    return solution.x


def _best_fit(log_sizes: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The least-squares θ from two starts at the paper's exponents, the better one kept: constants from a linear fit
    of the squared terms (each at least 1 % of the largest), and constants that give every term the same share of
    the geometric-mean cell. A term started near zero has no gradient to grow back from, so one start alone can
    stop in a local minimum that drops a term (a planted q = 0.8 read 0.66 from the first start alone)."""
    exponents = np.array([1.0, 0.5, 0.5])
    basis = np.exp(-2 * exponents[:, None] * log_sizes).T
    squares, *_ = np.linalg.lstsq(basis, np.exp(2 * target), rcond=None)
    linear = 0.5 * np.log(np.maximum(squares, 1e-2 * max(float(squares.max()), 1e-300)))
    centre = log_sizes.mean(axis=1)
    equal = target.mean() - 0.5 * np.log(3) + exponents * centre
    fits = [_fit_once(log_sizes, target, np.concatenate([constants, exponents])) for constants in (linear, equal)]
    return min(fits, key=lambda theta: float(np.sum((_log_model(theta, log_sizes) - target) ** 2)))


def fit_bound(L: np.ndarray, M: np.ndarray, D: np.ndarray, log_errors: np.ndarray, *, confidence: float = 0.95,
              resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The bound with free exponents (module docstring) fitted to cells × replicates ``log_errors``.

    Returns per term (:data:`TERMS`) its constant, exponent, percentile bootstrap interval (replicates resampled, the
    same indices in every cell), the cells where it leads and whether it is resolved; and the fit's residuals (the
    cells' mean log error minus the model's)."""
    log_errors = np.asarray(log_errors, dtype=float)
    log_sizes = np.log(_sizes(L, M, D))
    target = log_errors.mean(axis=1)
    theta = _best_fit(log_sizes, target)
    rng = np.random.default_rng(seed)
    replicates = log_errors.shape[1]
    draws = np.array([_fit_once(log_sizes, log_errors[:, rng.integers(0, replicates, replicates)].mean(axis=1), theta)
                      for _ in range(resamples)])
    tail = (1 - confidence) / 2
    parts = 2 * theta[:3, None] - 2 * theta[3:, None] * log_sizes
    leader = parts.argmax(axis=0)
    terms = {}
    for i, (key, symbol, exponent, term) in enumerate(TERMS):
        leads = np.flatnonzero(leader == i)
        own = np.exp(log_sizes[i, leads])
        span = float(own.max() / own.min()) if len(leads) else 1.0
        low, high = np.quantile(draws[:, 3 + i], [tail, 1 - tail])
        terms[key] = {"symbol": symbol, "paper": exponent, "term": term, "constant": float(np.exp(theta[i])),
                      "exponent": float(theta[3 + i]), "ci": [float(low), float(high)],
                      "leading_cells": [int(c) for c in leads], "span": span,
                      "resolved": bool(len(leads) >= LEADING_CELLS and span >= LEADING_SPAN * (1 - 1e-9))}
    return {"terms": terms, "residuals": (target - _log_model(theta, log_sizes)).tolist(), "resamples": resamples}


def authors_fit(L: np.ndarray, M: np.ndarray, D: np.ndarray, errors: np.ndarray) -> dict[str, Any]:
    """The authors' fit (module docstring): α, β, γ of e = √(α·D/(LM) + β/D + γ/L²) by unweighted least squares on the
    cells' mean errors ``errors``, α, β, γ ≥ 0, from their start (0.85, 2.4, 0.001); None where it cannot run."""
    from scipy.optimize import curve_fit

    L, M, D, errors = (np.asarray(a, dtype=float) for a in (L, M, D, errors))
    if len(errors) < 3 or not np.all(np.isfinite(errors)):
        return {"alpha": None, "beta": None, "gamma": None, "cells": int(len(errors))}

    def model(_, alpha, beta, gamma):
        return np.sqrt(alpha * D / (M * L) + beta / D + gamma / L**2)

    try:
        (alpha, beta, gamma), _ = curve_fit(model, None, errors, p0=[0.85, 2.4, 0.001], bounds=(0, np.inf))
    except (RuntimeError, ValueError):
        return {"alpha": None, "beta": None, "gamma": None, "cells": int(len(errors))}
    return {"alpha": float(alpha), "beta": float(beta), "gamma": float(gamma), "cells": int(len(errors))}


@functools.lru_cache(maxsize=None)
def _limit(seed: int, depth: int, steps: int, eta: float, dtype: torch.dtype) -> Any:
    """The limit at one depth, computed once per process: every (L, D) configuration of a depth reads it (the
    authors' grid has 15 dimensions per depth; the limit is a few hundred numbers per layer and step)."""
    x, y = one_example_task(seed, D_IN, D_OUT, dtype=dtype)
    return depth_limit(x, y, depth, steps, eta, refinement=REFINEMENT)


class ChaintronGrid(ChaintronLinear):
    """The authors' grid of shapes against the limit, the bound fitted to every cell (module docstring): one
    configuration per (L, D), each training every width M of the grid on its replicates."""

    name = "chaintron2026-grid"
    title = "a trained ResNet against its large-scale limit on a grid of (L, M, D), the bound fitted to every cell"
    paper = "Chaintron, Chizat & Maass (arXiv 2603.18168, 2026), the authors' grid (linear experiments)"
    claim = ("after a bounded number of gradient steps the error in embedding space is O(1/L + √(D/(LM)) + 1/√D), "
             "each term tight: fitted jointly over a grid of shapes, each term's exponent is the paper's where the "
             "term leads")
    smoke = dict(depths=(8, 16), hiddens=(64, 256), widths=(64, 128), epochs=6, replicates=4, resamples=200)
    rejects = {
        "a residual scale α/L without the width M, M times too large, under which training diverges":
            "tests/test_chaintron_grid.py::test_the_grid_entry_measures_every_cell_against_the_limit_and_a_planted_scale_fails",
    }
    defaults = dict(depths=(8, 16, 32, 64), hiddens=(256, 512, 1024, 2048), widths=(64, 128), epochs=15,
                    learning_rates=(0.1,), replicates=32, activation="identity", dtype="float64")
    sweeps = ()
    increasing = ("depths", "hiddens", "widths")
    nested_depths = False
    measured = ("hidden_error", "output_error")

    # ----------------------------------------------------------------------------------------------- the grid
    def configurations(self, settings):
        if settings.activation != "identity":
            raise SettingsError("activation", f"{settings.activation}: {self.name} needs identity blocks (its limit "
                                              "is computed for linear blocks only)")
        self._check_sizes(settings)
        cells = sorted(((depth, dim) for depth in settings.depths for dim in settings.widths),
                       key=lambda cell: -cell[0] * cell[1])   # the costliest first: workers finish together
        return [Configuration(self.key(depth, dim), {"depth": depth, "dim": dim}) for depth, dim in cells]

    @staticmethod
    def key(depth: int, dim: int) -> str:
        """The configuration (and checkpoint) of depth L and embedding dimension D: every width M of the grid."""
        return f"L{depth}-D{dim}"

    def _replicate_mb(self, settings, depth: int, dim: int, held: bool = False) -> float:
        """One replicate's memory at (L, D), in MiB: U and V drawn at the widest M, the widest cell's trained copies
        and their step's temporaries (:data:`~validation.training.chaintron2026.CHUNK_UNIT_VALUES` values per unit
        coordinate to size a chunk, :data:`~validation.training.chaintron2026.HELD_UNIT_VALUES` with ``held``: the
        estimate), and the hidden states of the trained network and of the limit read on its embedding
        (2 · K · (L + 1) · D)."""
        units = depth * dim * max(settings.hiddens)
        states = (depth + 1) * dim
        per_unit = HELD_UNIT_VALUES if held else CHUNK_UNIT_VALUES
        return (per_unit * units + 2 * settings.epochs * states) * settings.torch_dtype.itemsize / 2**20

    def _chunk(self, settings, depth: int, dim: int) -> int:
        """Replicates trained together: as many as fit in CHUNK_MB, at least one (a chunk's draws do not depend on
        the chunking)."""
        return max(1, int(CHUNK_MB / max(self._replicate_mb(settings, depth, dim), 1e-9)))

    def epochs_of(self, settings, configuration):
        depth, dim = configuration.params["depth"], configuration.params["dim"]
        return math.ceil(settings.replicates / self._chunk(settings, depth, dim)) * len(settings.hiddens)

    def train_one(self, settings, configuration, data, device, progress):
        s, depth, dim = settings, configuration.params["depth"], configuration.params["dim"]
        limit = _limit(s.seed, depth, s.epochs, s.learning_rates[0], s.torch_dtype)
        per_chunk = self._chunk(s, depth, dim)
        chunks = []
        for start in range(0, s.replicates, per_chunk):
            replicates = range(start, min(start + per_chunk, s.replicates))
            draws = UnitDraws(self.name, s, "grid", replicates, device)
            # the replicate's embedding at the largest D (every depth's and dimension's first rows), its units at the
            # widest M for this (L, D)
            w_e, w_u = (w[:, :dim] for w in draws.embedding(max(s.widths)))
            u, v = draws.units(depth, max(s.hiddens), ("units", depth, dim), dim=dim)
            states = limit_states(limit.hidden.to(device), w_e, w_u)
            hidden, output = [], []
            for m in s.hiddens:
                finite = draws.train(EmbeddedResNet(w_e, w_u, u[..., :m], v[..., :m]))
                reference = Trajectory(states, limit.output.to(device).expand(-1, len(replicates), -1), finite.loss)
                errors = compare(finite, reference)
                hidden.append(errors[0])
                output.append(errors[1])
                progress()
            del u, v
            chunks.append((torch.stack(hidden), torch.stack(output)))
        # each width M × replicate × step
        return {"depth": depth, "dim": dim, "hiddens": list(s.hiddens),
                "hidden_error": torch.cat([c[0] for c in chunks], dim=1).tolist(),
                "output_error": torch.cat([c[1] for c in chunks], dim=1).tolist(), "reference_bias": limit.bias}

    # ---------------------------------------------------------------------------------------------- summary
    @staticmethod
    def cells(settings, records) -> dict[str, np.ndarray]:
        """Every cell's sizes and errors: L, M, D (cells) and hidden_error, output_error (cells × replicates × steps)."""
        L, M, D, hidden, output = [], [], [], [], []
        for depth in settings.depths:
            for dim in settings.widths:
                record = records[ChaintronGrid.key(depth, dim)]
                for m in record["hiddens"]:
                    L.append(depth)
                    M.append(m)
                    D.append(dim)
                hidden.append(np.asarray(record["hidden_error"], dtype=float))
                output.append(np.asarray(record["output_error"], dtype=float))
        return {"L": np.array(L), "M": np.array(M), "D": np.array(D), "hidden_error": np.concatenate(hidden),
                "output_error": np.concatenate(output)}

    @staticmethod
    def fitted_cells(L: np.ndarray, M: np.ndarray, D: np.ndarray) -> np.ndarray:
        """The cells where every unit-constant term is at most 1/DOMINANCE (module docstring)."""
        return (L >= DOMINANCE) & (L * M >= DOMINANCE**2 * D) & (D >= DOMINANCE**2)

    def summarise(self, settings, records):
        step = self.checked_step(settings)
        grid = self.cells(settings, records)
        L, M, D = grid["L"], grid["M"], grid["D"]
        fitted = self.fitted_cells(L, M, D)
        values = grid["hidden_error"][:, :, step]
        usable = fitted & np.all(np.isfinite(values) & (values > 0), axis=1)
        checks, fit = [], None
        diverged = int((fitted & ~usable).sum())
        if diverged:   # a network that does not stay near its limit is no rate to fit: the claim fails there
            checks.append(Check("the bound's exponents, fitted jointly", FAIL,
                                f"an error is not finite and positive in {diverged} of {int(fitted.sum())} fitted "
                                "cells (a diverged network, or a cell equal to its limit)"))
        elif usable.sum() >= 6 and settings.replicates >= 2:
            fit = fit_bound(L[usable], M[usable], D[usable], np.log(values[usable]), confidence=settings.confidence,
                            resamples=settings.resamples, seed=settings.seed)
            for key, _, _, _ in TERMS:
                check = self._term_check(key, fit["terms"][key], settings)
                if check is not None:
                    checks.append(check)
        if not checks:
            reason = (f"{int(usable.sum())} fitted cells with finite errors (at least 6 needed for 6 parameters)"
                      if fit is None else "no term leads in enough fitted cells")
            checks.append(Check("the bound's exponents, fitted jointly", INCONCLUSIVE,
                                f"{reason}: add cells where a term leads (module docstring, Sizes)"))
        authors = self._authors(grid, step=min(AUTHORS_STEP, settings.epochs - 1))
        return {"checked_step": step, "margin": MARGIN, "dominance": DOMINANCE,
                "fitted_cells": [int(i) for i in np.flatnonzero(usable)], "fit": fit, "authors_fit": authors,
                "reference_bias": [records[self.key(depth, settings.widths[0])]["reference_bias"]
                                   for depth in settings.depths],
                "checks": [c.to_dict() for c in checks], "verdict": combine(checks)}

    @staticmethod
    def _term_check(key: str, term: dict[str, Any], settings) -> Check | None:
        """The exponent check of a resolved term (None: not resolved, reported in the table instead)."""
        if not term["resolved"]:
            return None
        name = f"{key}: the {term['term']} term's exponent in {term['symbol']} within {term['paper']:.3g} ± {MARGIN:g}"
        p = term["exponent"]
        return interval_check(name, p, tuple(term["ci"]), (term["paper"] - MARGIN, term["paper"] + MARGIN),
                              settings.replicates, what=f"p = {p:.3f}, the interval", confidence=settings.confidence)

    @staticmethod
    def _authors(grid: dict[str, np.ndarray], step: int) -> dict[str, Any]:
        L, M, D = grid["L"], grid["M"], grid["D"]
        mask = (L > AUTHORS_MINIMA["L"]) & (M > AUTHORS_MINIMA["M"]) & (D > AUTHORS_MINIMA["D"])
        errors = grid["hidden_error"][:, :, step].mean(axis=1)
        return {"step": step, **authors_fit(L[mask], M[mask], D[mask], errors[mask])}

    # ------------------------------------------------------------------------------------------------ report
    def table(self, result):
        s, n = result.settings, result.numbers
        step = n["checked_step"]
        grid = self.cells(s, result.records)
        L, M, D = grid["L"], grid["M"], grid["D"]
        hidden = np.exp(np.log(grid["hidden_error"][:, :, step]).mean(axis=1))
        output = np.exp(np.log(grid["output_error"][:, :, step]).mean(axis=1))
        fitted = set(n["fitted_cells"])
        lines = [f"identity blocks, α = 1, d_in = d_out = {D_IN}, one example, {s.epochs} gradient steps at "
                 f"η₀ = {s.learning_rates[0]:g}, {s.replicates} replicates per cell; errors after {step} steps "
                 f"(geometric mean over replicates) against the limit L, M, D → ∞", ""]
        if len(L) <= 120:
            lines.append(f"  {'L':>5} {'M':>6} {'D':>6}  {'embedding error':>15}  {'output error':>12}  fitted")
            for i in range(len(L)):
                lines.append(f"  {L[i]:>5} {M[i]:>6} {D[i]:>6}  {hidden[i]:>15.3e}  {output[i]:>12.3e}  "
                             f"{'yes' if i in fitted else ''}")
        else:
            lines.append(f"  {len(L)} cells (every one in the JSON record), {len(fitted)} fitted")
        lines.append("")
        fit = n["fit"]
        if fit is not None:
            lines.append(f"the bound with free exponents, fitted on {len(fitted)} cells where every term ≤ 1/{DOMINANCE} "
                         f"(unit constants); intervals over {s.replicates} replicates, {fit['resamples']} resamples:")
            for key, _, _, _ in TERMS:
                term = fit["terms"][key]
                status = ("resolved" if term["resolved"] else
                          f"not resolved: leads in {len(term['leading_cells'])} cells spanning ×{term['span']:.3g} "
                          f"(needs {LEADING_CELLS} spanning ×{LEADING_SPAN:g})")
                lines.append(f"  {key:>9}: {term['term']:<10} c = {term['constant']:.3g}, exponent "
                             f"{term['exponent']:.3f} [{term['ci'][0]:.3f}, {term['ci'][1]:.3f}] (paper "
                             f"{term['paper']:.3g}); {status}")
            lines.append(f"  residuals of the cells' mean log error: rms {float(np.sqrt(np.mean(np.square(fit['residuals'])))):.3f}")
        authors = n["authors_fit"]
        lines.append(f"the authors' fit (step {authors['step']}, the paper's exponents, cells L > 50, M > 10, D > 10: "
                     f"{authors['cells']}): α = {number(authors['alpha'])}, β = {number(authors['beta'])}, "
                     f"γ = {number(authors['gamma'])}")
        lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    def plot(self, result, figure):
        s, n = result.settings, result.numbers
        step = n["checked_step"]
        grid = self.cells(s, result.records)
        L, M, D = grid["L"], grid["M"], grid["D"]
        hidden = np.exp(np.log(grid["hidden_error"][:, :, step]).mean(axis=1))
        from matplotlib.ticker import NullFormatter

        if hasattr(figure, "set_layout_engine"):
            figure.set_layout_engine("constrained")
        axes = figure.subplots(1, 4)
        fit = n["fit"]

        def model(l, m, d):
            if fit is None:
                return None
            t = fit["terms"]
            sizes = _sizes(l, m, d)
            return np.sqrt(sum(t[key]["constant"] ** 2 * sizes[i] ** (-2 * t[key]["exponent"])
                               for i, (key, _, _, _) in enumerate(TERMS)))

        panels = (("D", D, "M", M, L == L.max(), f"L = {L.max()}"), ("L", L, "M", M, D == D.max(), f"D = {D.max()}"),
                  ("M", M, "D", D, L == L.max(), f"L = {L.max()}"))
        for ax, (xname, xs, series_name, series, keep, title) in zip(axes, panels):
            for j, value in enumerate(np.unique(series[keep])):
                cells = keep & (series == value)
                order = np.argsort(xs[cells])
                ax.loglog(xs[cells][order], hidden[cells][order], "o", color=f"C{j % 10}", ms=4,
                          label=f"{series_name} = {value}")
                curve = model(L[cells][order], M[cells][order], D[cells][order])
                if curve is not None:
                    ax.loglog(xs[cells][order], curve, "--", color=f"C{j % 10}", lw=1)
            ax.set(xlabel=xname, title=f"{title} (dashed: the fitted bound)")
            ax.title.set_fontsize(9)
            ax.legend(fontsize=6)
        budget = L * M * D
        axes[3].loglog(budget, hidden, ".", color="C0", ms=4, label="every cell")
        order = np.argsort(budget)
        anchor = hidden.min() * budget[np.argmin(hidden)] ** (1 / 6)
        axes[3].loglog(budget[order], anchor * budget[order] ** (-1 / 6), "k--", lw=1, label="P^(-1/6)")
        axes[3].set(xlabel="P = LMD", title="every cell against the budget")
        axes[3].title.set_fontsize(9)
        axes[3].legend(fontsize=7)
        axes[0].set_ylabel(f"embedding-space error after {step} steps")
        for ax, (_, xs, _, _, keep, _) in zip(axes, panels):   # the grid's own sizes (a log axis over less than a
            sizes = np.unique(xs[keep])                           # decade labels colliding minor ticks)
            every = math.ceil(len(sizes) / 8)                     # at most 8 labels (the authors' grid has 15 sizes)
            ax.set_xticks(sizes, [str(int(size)) if i % every == 0 else "" for i, size in enumerate(sizes)])
            ax.xaxis.set_minor_formatter(NullFormatter())
        axes[3].xaxis.set_minor_formatter(NullFormatter())
        figure.set_size_inches(18, 4.4)

    # --------------------------------------------------------------------------------------------- resources
    def estimate_seconds(self, settings):
        """One process's time, from the default's measured configurations (32 replicates, single-threaded workers
        on the 2-core machine, 8–126 s each): per (L, D), R·L·D·(6.6e-9·K·ΣM + 5e-8·max M) — the training of every
        width and the drawing of the widest units — and the limit, 0.02 s per layer; then the bootstrap's fits, about
        25 ms each. On the authors' grid it says 34 minutes on 2 workers; the run took 89, beside other jobs at lower
        priority (docs/results/training_chaintron2026.md). Alone, four of its configurations (L, D ∈ {216, 285}, the
        14 widths, 5 replicates) took 191 s in one process against 284 s estimated: the estimate is high there, not
        low."""
        s = settings
        per_cell = 6.6e-9 * s.epochs * sum(s.hiddens) + 5.0e-8 * max(s.hiddens)
        return (sum(s.replicates * L * D * per_cell + 0.02 * L for L in s.depths for D in s.widths)
                + 0.025 * s.resamples + 2.0)

    def estimate_mb(self, settings):
        largest = max(self._replicate_mb(settings, depth, dim, held=True) * min(settings.replicates,
                                                                                self._chunk(settings, depth, dim))
                      for depth in settings.depths for dim in settings.widths)
        return largest + 400.0
