"""Chaintron, Chizat & Maass (arXiv 2603.18168, 2026) and Chizat (arXiv 2509.10167, 2025): a trained ResNet with an
embedding against its large-scale limit, one error term at a time (linear blocks).

**The model and its training** are the authors' (``linear_experiments_python``, :mod:`limits.embedded_resnet`): an
input x ∈ R³ embedded in dimension D, L residual blocks of M hidden units with residual scale α/(LM), read out in
R³, and trained by K gradient steps at rate η₀ = 0.1 with the maximal-local-update learning rates (scaled by D) on
one example (x of norm 0.8, y = A x + 0.05 ξ). Their bound on the distance between the trained network and its
limit after a bounded number of steps is

    O(1/L  +  √(D/(LM))  +  1/√D)            (depth, finite width, embedding),

and they call it empirically tight in embedding space.

**One term at a time.** With identity blocks every hidden unit of a block moves by the same linear map, so the
network depends on its units only through their second moments, and the network at M = ∞ (same L, D and
embedding) is computed exactly (:class:`limits.embedded_resnet.InfiniteWidthResNet`). Hence five sweeps, each isolating
one term, on R replicates (own embedding and units each):

* ``width`` — M = ``hiddens`` at L = ``depth``, D = ``width``: the finite network against the M = ∞ network on the
  same embedding. Only the finite-width term is present: exponent ½ in M. The widths are nested (a narrower network
  holds the first units of a wider one), so the sizes differ by units, not by draws.
* ``depth-width`` — L = ``depths`` at M = ``hidden``, D = ``width``, against M = ∞ at each L: the same term as a
  function of L: exponent ½ in L (the term depends on LM jointly).
* ``depth`` — the M = ∞ network at L against 2L (every other hidden state of the deeper one), D = ``width``: the
  depth term alone: exponent 1.
* ``embedding`` — the M = ∞ network at D against 2D on the first D coordinates (a smaller embedding holds the first
  rows of a larger one, the authors' coupling), L = ``depth``: the embedding term alone: exponent ½.
* ``dim-width`` — D = ``widths`` at L = ``depth``, M = :data:`DIM_HIDDEN_FACTOR` × ``hidden``, the finite network
  against M = ∞ at each D: the finite-width term √(D/(LM)) as a function of D, which GROWS as D^½ (exponent −½ in
  the convention error ∝ size^−p). Its √D is the units' scale: U, V have N(0, D) entries, so a block's increment
  α/(LM) Σ_m v_m (u_mᵀh/D) sums LM terms of mean zero (at M = ∞: C = 0 before training) and variance ‖h‖² ≈ D‖x‖²
  per coordinate: a fluctuation of sd ‖x‖√(D/(LM)) per coordinate before training, carried by the training steps
  (written with standard-normal units, the residual scale √D/(LM) of the maximal local update). The alternative it
  must reject (tests/test_chaintron_dim_sweep.py): the residual scale α/(LM) in standard-normal units, i.e. α/(LM√D)
  here, trained by the same gradient descent — its error α/√(LM) does not depend on D (exponent 0: FAIL). Only the
  widths where LM ≥ 64·D are measured (each is fitted; a larger D costs L·M·D per step and would not be); a smaller
  D holds the first rows of the largest embedding and the first coordinates of its units, rescaled to N(0, D). The
  output f = W_uᵀh_L/D averages D coordinates' errors of √(D/(LM)) each: its error is about 1/√(LM), flat in D
  (reported, not checked, as for every sweep).

**The error** is the authors' (``max_hs_track``): the largest over the layers l of the mean over the coordinates d of
|h_{l,d} − h'_{l,d}|, after k gradient steps; at the output, the mean over the outputs of |f − f'|.

**Checked** (fixed before any run): at the step the authors plot (:data:`CHECKED_STEP` = 5), the exponent p of the
embedding-space error ∝ size^−p (p = −½ for ``dim-width``: the error grows with D) — the least-squares slope of the
replicates' mean log error over the fitted sizes, with a paired bootstrap interval over replicates — PASSes when its
interval lies within the paper's exponent ± :data:`MARGIN` (0.1; the budget entry's 1/6 ± :data:`BUDGET_MARGIN` =
1/24, half the way to the 1/12 of a term with half its exponent), FAILs when it lies outside, and is INCONCLUSIVE
otherwise. A size is fitted where the measured term dominates the next order of its own expansion by the factor
:data:`DOMINANCE` = 8 with unit constants: √(D/(LM)) ≥ 8·D/(LM), i.e. LM ≥ 64·D (the three finite-width sweeps);
1/L ≥ 8/L², i.e. L ≥ 8 (depth); 1/√D ≥ 8/D, i.e. D ≥ 64 (embedding). The output-space exponents are reported beside, not checked (the 2026 paper's
tightness claim is about embedding space).

**Sizes.** The authors' grid (15 × 15 × 15 cells of L, M, D from 10 to 500, 5 replicates, K = 15) measures the sum
of the three terms against their correlation-function limit; the sweeps here measure each term on its own, with
K = 15 steps, η₀ = 0.1 and 32 replicates (128 in the embedding sweep), in float64.

:class:`ChaintronNonlinear` (``chaintron2026-nonlinear``) measures the finite-width term of two-layer-perceptron
blocks of any activation, as M against 2M (no exact M = ∞ network there). :class:`ChaintronBudget`
(``chaintron2026-budget``) measures the sum of the three terms against the limit itself (L, M, D → ∞:
:func:`limits.embedded_resnet.depth_limit`) along the shapes that minimise the bound at a budget P = LMD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

from limits.embedded_resnet import (EmbeddedResNet, InfiniteWidthResNet, Trajectory, dealt_units, depth_limit,
                                    embedding_draws, limit_states, one_example_task, reduced_embedding, train,
                                    unit_draws)

from ..core.checks import FAIL, INCONCLUSIVE, Check, check_line, combine, interval_check
from ..core.runtime import large_blocks_unmapped
from ..core.settings import SettingsError
from .experiment import Experiment, number, power_fit
from .sweep import Configuration

__all__ = ["ChaintronLinear", "ChaintronNonlinear", "ChaintronBudget", "SWEEPS", "NONLINEAR_SWEEPS", "BUDGET_SWEEP", "compare", "CHECKED_STEP", "MARGIN", "BUDGET_MARGIN", "DOMINANCE", "hidden_error", "output_error", "UnitDraws", "replicate_megabytes",
           "DIM_HIDDEN_FACTOR", "dim_width_hidden", "dim_width_sizes"]

#: the training step at which the exponents are checked (the authors' plotted step, ``id_train = 5``)
CHECKED_STEP = 5
#: an exponent's interval must lie within the paper's exponent ± this (the budget sweep: :data:`BUDGET_MARGIN`)
MARGIN = 0.1
#: the budget sweep's margin: half the distance from the paper's 1/6 to the nearest wrong exponent a referee would
#: want excluded, 1/12 (one of the three terms with half its exponent: P^(-1/12) along the budget's shapes). With
#: :data:`MARGIN` = 0.1 the band [0.067, 0.267] held 1/12, and a planted 1/12 PASSed (docs/results/calibration.md)
BUDGET_MARGIN = (1 / 6 - 1 / 12) / 2
#: a size is fitted where its term is at least this many times the next order of its expansion (unit constants)
DOMINANCE = 8
#: input and output dimensions (the authors' d_in = d_out = 3)
D_IN = D_OUT = 3
#: the embedding sweep trains this many times ``--replicates`` replicates: its errors spread more from replicate to
#: replicate (sd of log error ≈ 0.5, against ≈ 0.2 for the width sweep, measured) and each costs little
EMBEDDING_FACTOR = 4
#: replicates are trained in chunks of at most about this many MiB (a chunk's draws do not depend on the chunking)
CHUNK_MB = 384
#: what the process holds beside the largest chunk, in MiB: the interpreter with torch (226 measured at the first
#: chunk), the records and the fits. With the chunks' arrays unmapped when freed (``train_one``), the peak is the
#: largest chunk plus this: ``chaintron2026-nonlinear --workers 1`` peaked at 510–551 MiB over 10 runs before its
#: ``dim-width`` sweep (largest chunk 330 estimated: 180–221 beside it), ``chaintron2026-linear`` at 564 (its depth
#: sweep, 381: 183 beside). It was 400 while the heap kept freed blocks, whose peak followed the order blocks came
#: free (600–1151 MiB for one command)
PROCESS_FLOOR_MB = 200.0
#: the chunks' arrays of this many MiB or more are mapped on their own and unmapped when freed (``train_one``). At
#: 4 MiB, the default of :func:`validation.core.runtime.large_blocks_unmapped`, the arrays of 1–4 MiB (a chunk's
#: states and the ``dim-width`` sweep's slices) stayed in the heap, whose holes and resident top depend on the order
#: blocks come free; that order differed from run to run (traced: the heap reached 165 MiB in one run, 224 in the
#: next, the mapped arrays 320 in both), and ``chaintron2026-nonlinear --workers 1`` peaked anywhere in 541–644 MiB
#: over 11 runs. From 1 MiB: 525–546 over 10 runs, in the same time
UNMAPPED_FROM_MB = 1.0


def hidden_error(h: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """max over layers of the mean over coordinates of |h − h'|, for hidden states (…, R, L + 1, D): (…, R)."""
    return (h - reference).abs().mean(-1).amax(-1)


def output_error(f: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """The mean over outputs of |f − f'|, for outputs (…, R, d_out): (…, R)."""
    return (f - reference).abs().mean(-1)


def compare(a: Any, b: Any, layers: slice = slice(None), coordinates: slice = slice(None)
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """The embedding-space and output errors (R, K) of trajectory ``a`` against ``b`` read at ``layers`` and
    ``coordinates`` (a deeper or wider network's matching hidden states)."""
    return hidden_error(a.hidden, b.hidden[..., layers, coordinates]).T, output_error(a.output, b.output).T


class UnitDraws:
    """One sweep's draws on some replicates: the task (x, y), embeddings and units from the streams labelled by the
    experiment and the sweep, moved to the device; ``train`` runs the settings' steps at their rate. Shared by the
    family's entries (this module's, ``chaintron2026_grid``, ``chizat2025``)."""

    def __init__(self, experiment: str, s: Any, key: str, replicates: range, device: Any) -> None:
        self.s, self.replicates, self.device, self.label = s, replicates, device, f"{experiment}/{key}"
        self.x, self.y = (t.to(device) for t in one_example_task(s.seed, D_IN, D_OUT, dtype=s.torch_dtype))

    def embedding(self, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
        drawn = embedding_draws(self.s.seed, self.label, self.replicates, dim, D_IN, D_OUT, dtype=self.s.torch_dtype)
        return tuple(t.to(self.device) for t in drawn)

    def units(self, depth: int, hidden: int, tag: object, dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        drawn = unit_draws(self.s.seed, (self.label, tag), self.replicates, depth, dim or self.s.width, hidden,
                           dtype=self.s.torch_dtype)
        return tuple(t.to(self.device) for t in drawn)

    def train(self, network: Any) -> Any:
        return train(network, self.x, self.y, self.s.epochs, self.s.learning_rates[0])


@dataclass(frozen=True)
class Sweep:
    """One error term measured alone (module docstring): its sizes, the paper's exponent and the fitted sizes."""

    key: str
    symbol: str          # the size swept
    exponent: float      # the paper's exponent of the term in that size
    term: str            # the term, as the paper writes it
    how: str             # what is compared, in words
    rule: str            # where the term dominates (the fitted sizes), in words
    sizes: Callable[[Any], tuple[int, ...]]
    fitted: Callable[[Any, int], bool]
    #: the memory of one replicate, in MiB, from the settings (the run takes replicates in chunks of CHUNK_MB)
    megabytes: Callable[..., float]
    #: this sweep trains ``replicate_factor × --replicates`` replicates
    replicate_factor: int = 1
    #: the exponent's interval must lie within ``exponent ± margin`` (:data:`MARGIN` unless the sweep says otherwise)
    margin: float = MARGIN


#: values per unit coordinate a replicate's chunk is sized with: U, V, their draws' temporaries and the trained copies,
#: as :func:`limits.embedded_resnet.unit_draws` held them before it copied each draw once into place. Kept, so that
#: the chunks — which replicates train together — and with them every number stay as they were
CHUNK_UNIT_VALUES = 6
#: values per unit coordinate held at once now (U, V and their trained copies): what the memory estimate counts
#: (``chaintron2026-nonlinear --workers 1``: 610 MiB measured after the change, 795 before)
HELD_UNIT_VALUES = 4


def replicate_megabytes(settings: Any, units: int, states: int, held: bool = False) -> float:
    """One replicate's memory: ``units`` unit weights (:data:`CHUNK_UNIT_VALUES` values each to size a chunk,
    :data:`HELD_UNIT_VALUES` with ``held``: the estimate) and an M = ∞ network of ``states`` = L·D hidden
    coordinates (its basis, coefficients and three trajectories), in MiB."""
    steps = settings.epochs
    per_unit = HELD_UNIT_VALUES if held else CHUNK_UNIT_VALUES
    values = (per_unit * units + states * (2 * steps + 3 * steps)
              + 3 * (2 * steps) ** 2 * states // max(settings.width, 1))
    return values * settings.torch_dtype.itemsize / 2**20


#: the ``dim-width`` sweep's hidden width M is this many times ``hidden``: at the preset (L = 16, M = 4 × 256) the
#: rule LM ≥ 64·D holds up to D = 256, five embedding dimensions 16 … 256 (p = −0.525, −0.527, −0.538 at seeds 0–2,
#: all PASS; about 25 s alone, one process; the largest chunk one replicate of 136 MiB, below the embedding sweep's).
#: At M = ``hidden`` only D = 16, 32, 64 (seed 0: −0.537 [−0.616, −0.470], INCONCLUSIVE); at 2 × ``hidden``
#: D = 16 … 128 (seed 2: −0.560 [−0.610, −0.495], INCONCLUSIVE)
DIM_HIDDEN_FACTOR = 4


def dim_width_hidden(settings: Any) -> int:
    """The hidden width M of the ``dim-width`` sweep: :data:`DIM_HIDDEN_FACTOR` × ``hidden``."""
    return DIM_HIDDEN_FACTOR * settings.hidden


def dim_width_sizes(settings: Any) -> tuple[int, ...]:
    """The embedding dimensions of the ``dim-width`` sweep: the ``widths`` where the finite-width term dominates
    (L·M ≥ :data:`DOMINANCE`²·D at L = ``depth``, M = :func:`dim_width_hidden`), all of them fitted — a larger D
    costs L·M·D per replicate and step and would not be fitted —, or the smallest width alone where none does (the
    check is then INCONCLUSIVE)."""
    limit = settings.depth * dim_width_hidden(settings)
    return tuple(D for D in settings.widths if limit >= DOMINANCE**2 * D) or tuple(settings.widths[:1])


SWEEPS: tuple[Sweep, ...] = (
    Sweep("width", "M", 0.5, "√(D/(LM))", "finite M against M = ∞", f"LM ≥ {DOMINANCE**2}·D", lambda s: s.hiddens,
          lambda s, m: s.depth * m >= DOMINANCE**2 * s.width,
          lambda s, held=False: replicate_megabytes(s, s.depth * s.width * max(s.hiddens), s.depth * s.width, held=held)),
    Sweep("depth-width", "L", 0.5, "√(D/(LM))", "finite M against M = ∞", f"LM ≥ {DOMINANCE**2}·D", lambda s: s.depths,
          lambda s, L: L * s.hidden >= DOMINANCE**2 * s.width,
          lambda s, held=False: replicate_megabytes(s, max(s.depths) * s.width * s.hidden, max(s.depths) * s.width,
                                           held=held)),
    Sweep("depth", "L", 1.0, "1/L", "M = ∞: L against 2L", f"L ≥ {DOMINANCE}", lambda s: s.depths[:-1],
          lambda s, L: L >= DOMINANCE,
          lambda s, held=False: 2 * replicate_megabytes(s, 0, max(s.depths) * s.width, held=held)),
    Sweep("embedding", "D", 0.5, "1/√D", "M = ∞: D against 2D on the first D coordinates", f"D ≥ {DOMINANCE**2}",
          lambda s: s.widths[:-1], lambda s, D: D >= DOMINANCE**2,
          lambda s, held=False: 2 * replicate_megabytes(s, 0, s.depth * max(s.widths), held=held),
          replicate_factor=EMBEDDING_FACTOR),
    Sweep("dim-width", "D", -0.5, "√(D/(LM))", "finite M against M = ∞, growing as D^½",
          f"LM ≥ {DOMINANCE**2}·D", lambda s: dim_width_sizes(s),
          lambda s, D: s.depth * dim_width_hidden(s) >= DOMINANCE**2 * D,
          lambda s, held=False: replicate_megabytes(s, s.depth * max(dim_width_sizes(s)) * dim_width_hidden(s),
                                                    s.depth * max(dim_width_sizes(s)), held=held)),
)
#: the Monte-Carlo units N of the network at M = ∞ in its n-dimensional form (limits.embedded_resnet.reduced_embedding)
#: for the nonlinear depth and embedding sweeps. Halving N moves the depth sweep's differences (≈ 1e-4, small) by
#: 5–11 % at N = 2¹⁶ and the embedding sweep's by ≤ 1 % (tanh, L = D = 16, measured), hence more units for the first
MEAN_FIELD_UNITS = {"depth": 2**18, "embedding": 2**15}
#: n = d_in + d_out: the dimension of the n-dimensional form
REDUCED_DIM = D_IN + D_OUT


#: values per unit coordinate a mean-field sweep holds: the drawn U, V, their copies dealt to the blocks and the
#: trained networks' own copies
MEAN_FIELD_UNIT_VALUES = 6


def _mean_field_megabytes(settings: Any, key: str, depth: int, dim: int) -> float:
    """One replicate of a mean-field sweep, in MiB: its N units in n dimensions (and the N/2 network's, which reads
    the first half of them) and eight trajectories of hidden states read back in dimension ``dim`` at ``depth``
    (the two networks compared, each with N and with N/2 units, and a comparison's temporaries; the embedding
    sweep's preset: 863 MiB measured against 768 estimated with six)."""
    units = MEAN_FIELD_UNIT_VALUES * 1.5 * REDUCED_DIM * MEAN_FIELD_UNITS[key]
    states = 8 * settings.epochs * (depth + 1) * dim
    return (units + states) * settings.torch_dtype.itemsize / 2**20


#: the nonlinear blocks' sweeps. No exact M = ∞ network: the finite-width term is measured as the difference between a
#: network and the one twice as wide that holds its units (nested), over M and over L; the depth and embedding terms
#: on the network at M = ∞ in its n-dimensional form, with N Monte-Carlo units shared by the networks compared
NONLINEAR_SWEEPS: tuple[Sweep, ...] = (
    Sweep("width", "M", 0.5, "√(D/(LM))", "M against 2M (nested units)", f"LM ≥ {DOMINANCE**2}·D",
          lambda s: s.hiddens[:-1], lambda s, m: s.depth * m >= DOMINANCE**2 * s.width,
          lambda s, held=False: replicate_megabytes(s, s.depth * s.width * max(s.hiddens), 0, held=held)),
    Sweep("depth-width", "L", 0.5, "√(D/(LM))", "M against 2M (nested units)", f"LM ≥ {DOMINANCE**2}·D",
          lambda s: s.depths, lambda s, L: L * s.hidden >= DOMINANCE**2 * s.width,
          lambda s, held=False: replicate_megabytes(s, max(s.depths) * s.width * 2 * s.hidden, 0, held=held)),
    Sweep("depth", "L", 1.0, "1/L", "M = ∞ (n-dim. form): L against 2L, the same N units", f"L ≥ {DOMINANCE}",
          lambda s: s.depths[:-1], lambda s, L: L >= DOMINANCE,
          lambda s, held=False: _mean_field_megabytes(s, "depth", max(s.depths), s.width)),
    Sweep("embedding", "D", 0.5, "1/√D", "M = ∞ (n-dim. form): D against D = ∞, the same N units",
          f"D ≥ {DOMINANCE**2}", lambda s: s.widths, lambda s, D: D >= DOMINANCE**2,
          lambda s, held=False: _mean_field_megabytes(s, "embedding", s.depth, max(s.widths)),
          replicate_factor=EMBEDDING_FACTOR),
    Sweep("dim-width", "D", -0.5, "√(D/(LM))", "M against 2M (nested units), growing as D^½",
          f"LM ≥ {DOMINANCE**2}·D", lambda s: dim_width_sizes(s),
          lambda s, D: s.depth * dim_width_hidden(s) >= DOMINANCE**2 * D,
          lambda s, held=False: replicate_megabytes(s, s.depth * max(dim_width_sizes(s)) * 2 * dim_width_hidden(s), 0,
                                                    held=held)),
)

#: the error along the shapes that minimise the bound at a parameter budget P = LMD: M = L³, D = L², where the three
#: terms are all 1/L = P^(-1/6), so their sum is too, whatever their constants; the next order (1/L², D/(LM), 1/D) is
#: P^(-1/3), at most 1/8 of it where L = P^(1/6) ≥ 8
BUDGET_SWEEP = Sweep("budget", "P", 1 / 6, "1/L + √(D/(LM)) + 1/√D", "(L, M, D) = (L, L³, L²) against the limit",
                     f"P^(1/6) ≥ {DOMINANCE}", lambda s: tuple(L**6 for L in s.depths),
                     lambda s, P: P >= DOMINANCE**6,
                     lambda s, held=False: ((HELD_UNIT_VALUES if held else CHUNK_UNIT_VALUES) * max(s.depths) ** 6
                                            + 4 * s.epochs * max(s.depths) ** 3) * s.torch_dtype.itemsize / 2**20,
                     margin=BUDGET_MARGIN)
#: the reference's depth is extrapolated from 4, 8 and 16 times each depth (limits.embedded_resnet.depth_limit)
REFINEMENT = 8
#: about this many Monte-Carlo units approximate the limit of nonlinear blocks in the budget entry (the errors there
#: are ≥ 0.05; the limit's Monte-Carlo error at 2¹⁸ units was 0.6 % of its coefficients' scale on identity blocks)
BUDGET_LIMIT_UNITS = 2**20


class ChaintronLinear(Experiment):
    name = "chaintron2026-linear"
    title = "a trained ResNet with an embedding against its large-scale limit, one error term at a time"
    paper = ("Chaintron, Chizat & Maass (arXiv 2603.18168, 2026), linear experiments; Chizat (arXiv 2509.10167, "
             "2025)")
    claim = ("after a bounded number of gradient steps a ResNet of depth L, hidden width M and embedding dimension D "
             "is within O(1/L + √(D/(LM)) + 1/√D) of its limit in embedding space, each term tight")
    smoke = dict(depths=(4, 8, 16), hiddens=(8, 16, 32), widths=(4, 8, 16), depth=4, width=4, hidden=8, epochs=6,
                 replicates=3, resamples=200)
    rejects = {
        "a residual scale α/L without the width M, so wider networks do not approach the limit":
            "tests/test_embedded_resnet.py::test_a_residual_scale_without_the_width_fails_the_width_check",
        "a depth error of order L^(-1/2), not 1/L (the M = ∞ network's input embedding scaled by 1 + 1/√L)":
            "tests/test_chaintron_sweep_plants.py::"
            "test_the_depth_check_fails_a_depth_error_of_order_one_over_root_depth",
        "an embedding error of order D^(-0.2), not 1/√D: N(0, 1) embedding rows with long memory (Hurst index 0.9), "
        "whose Gram matrix EᵀE/D escapes the central limit theorem":
            "tests/test_chaintron_sweep_plants.py::"
            "test_the_embedding_check_fails_draws_whose_gram_matrix_escapes_the_central_limit",
        "a finite-width error α/√(LM) that does not grow with D, not √(D/(LM)): the residual scale α/(LM) in "
        "standard-normal units (α/(LM√D) in N(0, D) ones) instead of √D/(LM), trained by the same gradient descent":
            "tests/test_chaintron_dim_sweep.py::test_the_dim_width_check_fails_a_residual_scale_without_the_root_dim",
    }
    defaults = dict(depths=(4, 8, 16, 32, 64, 128, 256), hiddens=(16, 32, 64, 128, 256, 512, 1024, 2048),
                    widths=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192), depth=16, width=16, hidden=256,
                    epochs=15, learning_rates=(0.1,), replicates=32, activation="identity", dtype="float64")

    #: the sweeps this entry runs (module docstring)
    sweeps: tuple[Sweep, ...] = SWEEPS
    #: True when the width sweeps compare with the exact M = ∞ network (identity blocks)
    exact = True
    #: the settings whose lists must hold at least two increasing sizes
    increasing: tuple[str, ...] = ("hiddens", "widths")
    #: True when each depth must divide the next (a sweep reads a shallower network on a deeper one's sub-grid)
    nested_depths = True
    #: the quantities :meth:`_errors` returns, in its order, each (size, replicate, …): the record's keys
    measured: tuple[str, ...] = ("hidden_error", "output_error")

    def measured_of(self, key: str, settings) -> tuple[str, ...]:
        """The quantities sweep ``key``'s :meth:`_errors` returns (:attr:`measured`)."""
        return self.measured

    def sweeps_of(self, settings) -> tuple[Sweep, ...]:
        """The sweeps a run with these settings measures (the class's :attr:`sweeps`)."""
        return self.sweeps

    def sweep(self, key: str, settings) -> Sweep:
        return next(sweep for sweep in self.sweeps_of(settings) if sweep.key == key)

    def datasets(self, settings):
        return []  # the authors' one example (limits.embedded_resnet.one_example_task)

    def configurations(self, settings):
        if settings.activation != "identity":
            raise SettingsError("activation", f"{settings.activation}: {self.name} needs identity blocks (its M = ∞ "
                                              "network is exact for linear blocks only; chaintron2026-nonlinear "
                                              "takes any activation)")
        return self._configurations(settings)

    def _configurations(self, settings):
        """The sweeps' configurations, after the checks every entry of this family shares."""
        self._check_sizes(settings)
        return [Configuration(sweep.key, {"sizes": list(sweep.sizes(settings))})
                for sweep in self.sweeps_of(settings)]

    def _check_sizes(self, settings) -> None:
        """The checks every entry of this family shares: one example, nested depths where the entry compares
        depths on sub-grids, and the :attr:`increasing` lists."""
        if settings.train_size is not None:
            raise SettingsError("train_size", f"{settings.train_size}: {self.name} trains on one example")
        if self.nested_depths and any(b % a for a, b in zip(settings.depths, settings.depths[1:])):
            raise SettingsError("depths", f"{list(settings.depths)}: each depth must divide the next (the depth "
                                          "sweep compares L with the next depth on its sub-grid)")
        for name in self.increasing:
            values = getattr(settings, name)
            if len(values) < 2 or any(b <= a for a, b in zip(values, values[1:])):
                raise SettingsError(name, f"{list(values)}: give at least two increasing sizes")

    def epochs_of(self, settings, configuration):
        """The progress bar's length: every chunk of replicates trains each of the sweep's networks."""
        sweep = self.sweep(configuration.key, settings)
        chunks = math.ceil(settings.replicates * sweep.replicate_factor / self._per_chunk(settings, sweep))
        return chunks * self._networks(configuration)

    def _networks(self, configuration) -> int:
        """The networks one chunk of a sweep trains (the finite ones and their references)."""
        return len(configuration.params["sizes"]) + (configuration.key in ("depth", "embedding"))

    @staticmethod
    def _per_chunk(settings, sweep: Sweep) -> int:
        """Replicates trained together: as many as fit in :data:`CHUNK_MB`, at least one."""
        return max(1, int(CHUNK_MB / max(sweep.megabytes(settings), 1e-9)))

    # ----------------------------------------------------------------------------------------------- training
    def train_one(self, settings, configuration, data, device, progress):
        """One sweep's errors, its replicates trained in chunks of :data:`CHUNK_MB`. The chunks' large arrays (units,
        trajectories: their shapes change from size to size) are unmapped when freed
        (:func:`validation.core.runtime.large_blocks_unmapped`, from :data:`UNMAPPED_FROM_MB`): on the reused heap
        the peak followed the order in which blocks came free (``chaintron2026-nonlinear --workers 1`` peaked at
        600–1151 MiB from run to run with one command); unmapped, it is the arrays alive. The numbers do not
        change."""
        sweep = self.sweep(configuration.key, settings)
        replicates = settings.replicates * sweep.replicate_factor
        per_chunk = self._per_chunk(settings, sweep)
        shared, extras = self._shared(settings, sweep.key)
        with large_blocks_unmapped(UNMAPPED_FROM_MB):
            chunks = [self._errors(settings, sweep.key, range(start, min(start + per_chunk, replicates)), device,
                                   progress, shared) for start in range(0, replicates, per_chunk)]
        # each measured quantity: size × replicate (× step), the chunks' replicates one after the other
        measured = {name: torch.cat([chunk[i] for chunk in chunks], dim=1).tolist()
                    for i, name in enumerate(self.measured_of(sweep.key, settings))}
        return {"sizes": configuration.params["sizes"], **measured, **extras}

    def _shared(self, settings, key: str) -> tuple[Any, dict[str, Any]]:
        """What every chunk of a sweep's replicates uses (none here), and what the sweep's record adds."""
        return None, {}

    def _errors(self, s, key: str, replicates: range, device, progress, shared=None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """The embedding-space and output errors (size, R, K) of one sweep (module docstring) on ``replicates``."""
        draws = UnitDraws(self.name, s, key, replicates, device)
        embedding, units = draws.embedding, draws.units

        def infinite(w_e, w_u, depth):
            return draws.train(InfiniteWidthResNet(w_e, w_u, depth, s.epochs))

        errors: list[tuple[torch.Tensor, torch.Tensor]] = []   # per size: hidden (R, K) and output (R, K) errors
        if key == "width":
            w_e, w_u = embedding(s.width)
            limit = infinite(w_e, w_u, s.depth)
            u, v = units(s.depth, max(s.hiddens), "units")
            for m in s.hiddens:
                errors.append(compare(draws.train(EmbeddedResNet(w_e, w_u, u[..., :m], v[..., :m])), limit))
                progress()
        elif key == "depth-width":
            w_e, w_u = embedding(s.width)
            for depth in s.depths:
                u, v = units(depth, s.hidden, depth)
                errors.append(compare(draws.train(EmbeddedResNet(w_e, w_u, u, v)), infinite(w_e, w_u, depth)))
                progress()
        elif key == "depth":
            w_e, w_u = embedding(s.width)
            previous = None
            for depth in s.depths:
                current = infinite(w_e, w_u, depth)
                if previous is not None:   # layer l of depth L against layer l·(2L/L) of the deeper one
                    errors.append(compare(previous, current, layers=slice(None, None, depth // s.depths[len(errors)])))
                previous = current
                progress()
        elif key == "dim-width":   # finite M against M = ∞ at each D; a smaller D holds the first coordinates
            dims, hidden = list(dim_width_sizes(s)), dim_width_hidden(s)
            w_e, w_u = embedding(max(dims))
            u, v = units(s.depth, hidden, "units", dim=max(dims))
            for dim in dims:         # the first D coordinates of N(0, D_max) units, rescaled to N(0, D)
                scale = math.sqrt(dim / max(dims))
                u_d, v_d = ((u, v) if dim == max(dims) else
                            (u[..., :dim, :] * scale, v[..., :dim, :] * scale))
                w_e_d, w_u_d = w_e[:, :dim], w_u[:, :dim]
                errors.append(compare(draws.train(EmbeddedResNet(w_e_d, w_u_d, u_d, v_d)),
                                      infinite(w_e_d, w_u_d, s.depth)))
                del u_d, v_d
                progress()
        else:  # embedding
            w_e, w_u = embedding(max(s.widths))
            previous = None
            for dim in s.widths:
                current = infinite(w_e[:, :dim], w_u[:, :dim], s.depth)
                if previous is not None:   # the first D coordinates of the larger embedding
                    errors.append(compare(previous, current, coordinates=slice(None, previous.hidden.shape[-1])))
                previous = current
                progress()
        return torch.stack([e[0] for e in errors]), torch.stack([e[1] for e in errors])

    # ---------------------------------------------------------------------------------------------- summary
    def checked_step(self, settings) -> int:
        """The step whose exponents are checked: :data:`CHECKED_STEP`, or the last one of a shorter run."""
        return min(CHECKED_STEP, settings.epochs - 1)

    def summarise(self, settings, records):
        step = self.checked_step(settings)
        sweeps, checks = {}, []
        for sweep in self.sweeps_of(settings):
            record = records[sweep.key]
            sizes = record["sizes"]
            fitted = [i for i, size in enumerate(sizes) if sweep.fitted(settings, size)]
            fits = {}
            for space in ("hidden_error", "output_error"):
                values = np.asarray(record[space], dtype=float)              # size × replicate × step
                fits[space] = [power_fit([sizes[i] for i in fitted], values[fitted, :, k], confidence=settings.confidence,
                                         resamples=settings.resamples, seed=settings.seed)
                               if len(fitted) >= 2 else None for k in range(values.shape[2])]
            sweeps[sweep.key] = {"symbol": sweep.symbol, "exponent": sweep.exponent, "term": sweep.term,
                                 "sizes": sizes, "fitted_sizes": [sizes[i] for i in fitted],
                                 "hidden_exponents": fits["hidden_error"], "output_exponents": fits["output_error"]}
            check = self._check(sweep, fits["hidden_error"][step], len(fitted), settings)
            checks.append(self._reference_check(sweep, record, fitted, step, check, sweeps[sweep.key]))
        margins = {sweep.margin for sweep in self.sweeps_of(settings)}
        return {"checked_step": step, "margin": margins.pop() if len(margins) == 1 else MARGIN,
                "dominance": DOMINANCE, "sweeps": sweeps,
                "checks": [c.to_dict() for c in checks], "verdict": combine(checks)}

    def _reference_check(self, sweep: Sweep, record: dict[str, Any], fitted: list[int], step: int, check: Check,
                         entry: dict[str, Any]) -> Check:
        """The exponent's check, after what the sweep's reference says of itself. An exact reference: as is. A
        reference with Monte-Carlo units (the record has a ``half_units_error``: the same comparison with the first
        N/2 of its N units, nested, so that the change measures about the remainder at N itself): per size, the
        median over replicates of the error's relative change goes to ``entry["monte_carlo"]``, and above
        1/:data:`DOMINANCE` at a fitted size the check is INCONCLUSIVE."""
        if "half_units_error" not in record:
            return check
        full = np.asarray(record["hidden_error"], dtype=float)[:, :, step]
        half = np.asarray(record["half_units_error"], dtype=float)[:, :, step]
        remainder = np.median(np.abs(full - half) / full, axis=1)
        entry["monte_carlo"] = remainder.tolist()
        worst = max((remainder[i] for i in fitted), default=0.0)
        if not worst <= 1 / DOMINANCE:
            return Check(check.name, INCONCLUSIVE, f"the Monte-Carlo remainder of the M = ∞ reference reaches "
                                                   f"{worst:.3f} of the error (at most 1/{DOMINANCE} allowed); "
                                                   f"{check.detail}")
        return check

    @staticmethod
    def _check(sweep: Sweep, fit: dict[str, Any] | None, fitted: int, settings) -> Check:
        name = (f"{sweep.key}: the {sweep.term} term's exponent in {sweep.symbol} ({sweep.how}) within "
                f"{sweep.exponent:.3g} ± {sweep.margin:.3g}")
        if fit is None or fitted < 3:
            return Check(name, INCONCLUSIVE, f"{fitted} fitted sizes (at least 3 needed): add sizes where the term "
                                              f"dominates, {sweep.rule}")
        if not fit["defined"]:
            return Check(name, FAIL, "an error is not finite and positive (a diverged network, or sizes that "
                                     "coincide): no power law to fit")
        if None in fit["ci"]:
            return Check(name, INCONCLUSIVE, "the bootstrap interval is not finite")
        p = -fit["slope"]
        return interval_check(name, p, (-fit["ci"][1], -fit["ci"][0]), (sweep.exponent - sweep.margin, sweep.exponent + sweep.margin),
                              settings.replicates * sweep.replicate_factor, what=f"p = {p:.3f}, the interval",
                              confidence=settings.confidence)

    # ------------------------------------------------------------------------------------------------ report
    def table(self, result):
        s, n = result.settings, result.numbers
        step = n["checked_step"]
        more = [f"{s.replicates * sweep.replicate_factor} in the {sweep.key} sweep" for sweep in self.sweeps_of(s)
                if sweep.replicate_factor > 1]
        lines = [f"{s.activation} blocks, α = 1, d_in = d_out = {D_IN}, one example, {s.epochs} gradient steps at "
                 f"η₀ = {s.learning_rates[0]:g}, {s.replicates} replicates{' (' + ', '.join(more) + ')' if more else ''}; "
                 f"exponents after {step} steps, fitted where the term dominates the next order {DOMINANCE}×", ""]
        for sweep in self.sweeps_of(s):
            entry = n["sweeps"][sweep.key]
            fixed = {"width": f"L = {s.depth}, D = {s.width}",
                     "depth-width": f"M = {s.hidden}{' against ' + str(2 * s.hidden) if not self.exact else ''}, "
                                    f"D = {s.width}",
                     "depth": f"M = ∞, D = {s.width}", "embedding": f"M = ∞, L = {s.depth}",
                     "dim-width": f"L = {s.depth}, M = {dim_width_hidden(s) if s.hidden else None}",
                     "budget": "M = L³, D = L²"}[sweep.key]
            record = result.records[sweep.key]
            hidden = np.asarray(record["hidden_error"], dtype=float)[:, :, step].mean(axis=1)
            output = np.asarray(record["output_error"], dtype=float)[:, :, step].mean(axis=1)
            lines.append(f"{sweep.key}: {sweep.term} in {sweep.symbol}, {sweep.how} ({fixed}); paper: "
                         f"{sweep.exponent:.3g}; fitted where {sweep.rule}"
                         + (f" (p < 0 in error ∝ {sweep.symbol}^−p: the error grows with {sweep.symbol})"
                            if sweep.exponent < 0 else ""))
            column = max(6, *(len(str(size)) for size in entry["sizes"]))
            remainders = entry.get("monte_carlo")     # the mean-field sweeps' Monte-Carlo remainder, per size
            lines.append(f"  {sweep.symbol:>{column}}  {'embedding error':>16}  {'output error':>13}  fitted"
                         + ("  Monte-Carlo remainder" if remainders else ""))
            for i, (size, e_h, e_f) in enumerate(zip(entry["sizes"], hidden, output)):
                lines.append(f"  {size:>{column}}  {e_h:>16.3e}  {e_f:>13.3e}  "
                             f"{'yes' if size in entry['fitted_sizes'] else '   ' if remainders else ''}"
                             + (f"     {remainders[i]:.3f}" if remainders else ""))
            lines.append(f"  exponent: embedding {self._cell(entry['hidden_exponents'][step])}, "
                         f"output {self._cell(entry['output_exponents'][step])}")
            lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    @staticmethod
    def _cell(fit: dict[str, Any] | None) -> str:
        if fit is None or fit["slope"] is None:
            return "—"
        low, high = fit["ci"]
        return (f"{-fit['slope']:.3f} [{number(None if high is None else -high)}, "
                f"{number(None if low is None else -low)}]")

    def plot(self, result, figure):
        from matplotlib.ticker import NullLocator

        n = result.numbers
        step = n["checked_step"]
        if hasattr(figure, "set_layout_engine"):
            figure.set_layout_engine("constrained")
        sweeps = self.sweeps_of(result.settings)
        axes = figure.subplots(1, len(sweeps))
        for ax, sweep in zip(np.atleast_1d(axes), sweeps):
            entry, record = n["sweeps"][sweep.key], result.records[sweep.key]
            sizes = np.asarray(entry["sizes"], dtype=float)
            for space, colour, label in (("hidden_error", "C0", "embedding space"), ("output_error", "C1", "output")):
                values = np.asarray(record[space], dtype=float)[:, :, step]
                ax.loglog(sizes, values, color=colour, alpha=0.15, lw=0.6)
                ax.loglog(sizes, np.exp(np.log(values).mean(axis=1)), "o-", color=colour, lw=1.5, label=label)
            fitted = np.asarray(entry["fitted_sizes"], dtype=float)
            if len(fitted):
                anchor = np.exp(np.log(np.asarray(record["hidden_error"], dtype=float)[:, :, step]).mean(axis=1))
                start = anchor[list(entry["sizes"]).index(int(fitted[0]))]
                ax.loglog(fitted, start * (fitted / fitted[0]) ** -sweep.exponent, "k--", lw=1,
                          label=f"paper: {sweep.symbol}^{-sweep.exponent:.3g}")
            if sizes.max() < 1e5:      # the sizes themselves as ticks (not 4×10⁰, 6×10⁰, …)
                ax.set_xticks(sizes, [str(int(size)) for size in sizes], fontsize=7)
                ax.xaxis.set_minor_locator(NullLocator())
            ax.set(xlabel=sweep.symbol, title=f"{sweep.key}: {sweep.term}\n{sweep.how}")
            ax.title.set_fontsize(9)
            ax.legend(fontsize=7)
        np.atleast_1d(axes)[0].set_ylabel(f"error after {step} steps (thin: replicates)")
        figure.set_size_inches(4.6 * len(sweeps), 4.4)

    def estimate_seconds(self, settings):
        # per sweep, coefficients from the preset's measured times (2-core machine, the other core busy): width 8.5 s,
        # depth-width 39.6 s, depth 8.8 s, embedding 143.6 s; dim-width 25 s (measured alone, one process)
        s = settings
        steps, replicates = s.epochs, s.replicates
        width = 1.7e-8 * steps * replicates * s.depth * s.width * sum(s.hiddens)
        depth_width = 4.0e-8 * steps * replicates * s.width * s.hidden * sum(s.depths)
        depth = 2.3e-6 * steps * replicates * s.width * sum(s.depths)
        embedding = 2.9e-7 * steps * replicates * EMBEDDING_FACTOR * s.depth * sum(s.widths)
        dim_width = (6.5e-9 * steps * replicates * s.depth * dim_width_hidden(s) * sum(dim_width_sizes(s))
                     if any(sweep.key == "dim-width" for sweep in self.sweeps_of(s)) else 0.0)
        return width + depth_width + depth + embedding + dim_width + 2.0

    def estimate_mb(self, settings):
        chunks = [min(settings.replicates * sweep.replicate_factor, self._per_chunk(settings, sweep))
                  * sweep.megabytes(settings, held=True) for sweep in self.sweeps_of(settings)]
        return max(chunks) + PROCESS_FLOOR_MB   # the largest chunk, the interpreter with torch, and the fits


class ChaintronNonlinear(ChaintronLinear):
    """The same model with two-layer-perceptron blocks of any activation (tanh by default). There is no exact M = ∞
    network, so:

    * the finite-width term is measured as the difference between a network and the network twice as wide that
      holds its units, over M (``width``: consecutive widths of ``--hiddens``, each twice the one before) and over L
      (``depth-width``: M = ``--hidden`` against 2M at each depth) and over D (``dim-width``: M =
      :func:`dim_width_hidden` against 2M at each D of :func:`dim_width_sizes`, the error growing as √D: seed 0
      −0.510 [−0.532, −0.489], seed 1 −0.541 [−0.558, −0.522]; the residual scale α/(LM) planted, 0.004
      [−0.018, 0.025], FAIL). On identity blocks this successive difference has the exact comparison's exponent
      (0.50 against 0.50 at L = 16, D = 16, M = 16 … 4096, measured);
    * the depth and embedding terms are measured on the network at M = ∞ in its n-dimensional form
      (:func:`limits.embedded_resnet.reduced_embedding`: exact for any activation; its M = ∞ law is approximated by
      N = :data:`MEAN_FIELD_UNITS` Monte-Carlo units in n = 6 dimensions), as the linear entry's sweeps are: ``depth``,
      L against 2L at D = ``--width`` with the same N units dealt to both depths; ``embedding``, D against the
      limit D = ∞ at L = ``--depth`` with the same N units, on the first D rows of one embedding. The compared
      networks share their units, so their difference carries a Monte-Carlo remainder of relative size about
      √(n/N) only; it is measured (the same comparison with N/2 units, ``monte_carlo`` in the summary) and a check
      whose remainder exceeds 1/8 at a fitted size is INCONCLUSIVE. On identity blocks both sweeps agree with the
      exact ones (tests)."""

    name = "chaintron2026-nonlinear"
    title = "a trained ResNet with 2LP blocks (tanh): the finite-width, depth and embedding terms"
    paper = ("Chaintron, Chizat & Maass (arXiv 2603.18168, 2026); Chizat (arXiv 2509.10167, 2025): two-layer-"
             "perceptron blocks")
    claim = ("after a bounded number of gradient steps a ResNet with two-layer-perceptron blocks is within "
             "O(1/L + √(D/(LM)) + 1/√D) of its limit, each term tight in embedding space")
    smoke = dict(depths=(4, 8, 16), hiddens=(8, 16, 32), widths=(8, 16, 32), depth=4, width=8, hidden=8, epochs=6,
                 replicates=3, resamples=200)
    rejects = {
        "a residual scale α/L without the width M, so wider tanh networks do not approach the limit":
            "tests/test_embedded_resnet.py::test_the_nonlinear_entry_measures_every_term",
        "layer l of depth L matched with layer l, not layer 2l, of depth 2L":
            "tests/test_embedded_resnet.py::test_the_nonlinear_depth_check_fails_on_misread_layers_and_sees_uncoupled_units",
        "a depth error of order L^(-1/2), not 1/L (the M = ∞ network's input embedding scaled by 1 + 1/√L)":
            "tests/test_chaintron_sweep_plants.py::"
            "test_the_nonlinear_depth_check_fails_a_depth_error_of_order_one_over_root_depth",
        "an embedding error of order D^(-0.2), not 1/√D: N(0, 1) embedding rows with long memory (Hurst index 0.9), "
        "whose Gram matrix EᵀE/D escapes the central limit theorem":
            "tests/test_chaintron_sweep_plants.py::"
            "test_the_nonlinear_embedding_check_fails_draws_whose_gram_matrix_escapes_the_central_limit",
        "a finite-width error α/√(LM) that does not grow with D, not √(D/(LM)): the residual scale α/(LM) in "
        "standard-normal units instead of √D/(LM), on tanh blocks":
            "tests/test_chaintron_dim_sweep.py::test_the_nonlinear_dim_width_check_fails_a_residual_scale_without_the_root_dim",
    }
    defaults = dict(depths=(4, 8, 16, 32, 64, 128), hiddens=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
                    widths=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096), depth=16, width=16, hidden=256, epochs=15,
                    learning_rates=(0.1,), replicates=32, activation="tanh", dtype="float64")
    sweeps = NONLINEAR_SWEEPS
    exact = False
    increasing = ("hiddens", "widths")

    def configurations(self, settings):
        if any(b != 2 * a for a, b in zip(settings.hiddens, settings.hiddens[1:])):
            raise SettingsError("hiddens", f"{list(settings.hiddens)}: each width must be twice the one before (the "
                                           "width sweep compares M with 2M)")
        for name, dims in (("width", (settings.width,)), ("widths", settings.widths)):
            if min(dims) < REDUCED_DIM:
                raise SettingsError(name, f"{min(dims)}: the embedding dimension must be at least n = d_in + d_out = "
                                          f"{REDUCED_DIM} (the M = ∞ network's n-dimensional form)")
        units = MEAN_FIELD_UNITS["depth"]
        if any(units % depth for depth in settings.depths):
            raise SettingsError("depths", f"{list(settings.depths)}: each depth must divide {units} (the depth sweep "
                                          f"deals its {units} units evenly to the blocks): powers of two")
        return self._configurations(settings)

    def _networks(self, configuration):
        return len(configuration.params["sizes"]) + (configuration.key not in ("depth-width", "dim-width"))

    def measured_of(self, key, settings):
        return self.measured + (("half_units_error",) if key in MEAN_FIELD_UNITS else ())

    def _shared(self, settings, key):
        return None, ({"mean_field_units": MEAN_FIELD_UNITS[key]} if key in MEAN_FIELD_UNITS else {})

    def _errors(self, s, key, replicates, device, progress, shared=None):
        draws = UnitDraws(self.name, s, key, replicates, device)
        if key in MEAN_FIELD_UNITS:
            return self._mean_field_errors(s, key, draws, progress)
        if key == "dim-width":
            return self._dim_width_errors(s, draws, progress)
        w_e, w_u = draws.embedding(s.width)

        def finite(u, v):
            return draws.train(EmbeddedResNet(w_e, w_u, u, v, activation=s.activation))

        errors = []
        if key == "width":
            u, v = draws.units(s.depth, max(s.hiddens), "units")
            previous = None
            for m in s.hiddens:
                current = finite(u[..., :m], v[..., :m])
                if previous is not None:
                    errors.append(compare(previous, current))
                previous = current
                progress()
        else:  # depth-width
            for depth in s.depths:
                u, v = draws.units(depth, 2 * s.hidden, depth)
                errors.append(compare(finite(u[..., :s.hidden], v[..., :s.hidden]), finite(u, v)))
                progress()
        return torch.stack([e[0] for e in errors]), torch.stack([e[1] for e in errors])

    def _dim_width_errors(self, s, draws: UnitDraws, progress) -> tuple[torch.Tensor, torch.Tensor]:
        """The ``dim-width`` sweep: at each D of :func:`dim_width_sizes`, the network of M = :func:`dim_width_hidden`
        units against the one of 2M that holds them (nested, as the ``width`` sweep), at L = ``--depth``. A smaller
        D holds the first coordinates of the largest one's embedding rows and units, the units rescaled from
        N(0, D_max) to N(0, D) — the linear entry's coupling of D."""
        dims, hidden = list(dim_width_sizes(s)), dim_width_hidden(s)
        w_e, w_u = draws.embedding(max(dims))
        u, v = draws.units(s.depth, 2 * hidden, "units", dim=max(dims))
        errors = []
        for dim in dims:
            scale = math.sqrt(dim / max(dims))
            u_d, v_d = (u, v) if dim == max(dims) else (u[..., :dim, :] * scale, v[..., :dim, :] * scale)
            w_e_d, w_u_d = w_e[:, :dim], w_u[:, :dim]
            small, wide = (draws.train(EmbeddedResNet(w_e_d, w_u_d, u_d[..., :m], v_d[..., :m], activation=s.activation))
                           for m in (hidden, 2 * hidden))
            errors.append(compare(small, wide))
            del u_d, v_d
            progress()
        return torch.stack([e[0] for e in errors]), torch.stack([e[1] for e in errors])

    def _mean_field_errors(self, s, key: str, draws: UnitDraws, progress) -> tuple[torch.Tensor, ...]:
        """The depth or embedding sweep on the network at M = ∞ in its n-dimensional form
        (:func:`limits.embedded_resnet.reduced_embedding`), read back on the replicate's embedding coordinates. The
        two networks of each comparison share the same N Monte-Carlo units (:data:`MEAN_FIELD_UNITS`): dealt to
        L and to 2L blocks (:func:`limits.embedded_resnet.dealt_units`), or given to the embeddings of dimension D
        and D = ∞. Returns the embedding-space and output errors and the embedding-space error with the first N/2
        units, each (size, R, K)."""
        total = MEAN_FIELD_UNITS[key]
        u, v = draws.units(1, total, "mean-field", dim=REDUCED_DIM)

        def trained(embedding, depth: int) -> list[Trajectory]:
            """The network on ``embedding`` at ``depth`` with the N units and with the first N/2 of them."""
            runs = []
            for units in (total, total // 2):
                network = EmbeddedResNet(embedding.w_e, embedding.w_u, dealt_units(u[..., :units], depth),
                                         dealt_units(v[..., :units], depth), activation=s.activation)
                run = draws.train(network)
                runs.append(Trajectory(embedding.states(run.hidden), run.output, run.loss))
            return runs

        errors = []   # per size: the hidden and output errors with N units, the hidden error with N/2
        if key == "depth":
            embedding = reduced_embedding(*draws.embedding(s.width))
            previous = None
            for i, depth in enumerate(s.depths):
                current = trained(embedding, depth)
                if previous is not None:   # layer l of depth L against layer l·(2L/L) of the deeper one
                    layers = slice(None, None, depth // s.depths[i - 1])
                    (hidden, output), (half, _) = (compare(a, b, layers=layers) for a, b in zip(previous, current))
                    errors.append((hidden, output, half))
                previous = current
                progress()
        else:  # embedding: D against D = ∞, on the first D of the largest embedding's coordinates
            w_e, w_u = draws.embedding(max(s.widths))
            limit = trained(reduced_embedding(w_e, w_u, at_infinity=True), s.depth)
            progress()
            for dim in s.widths:
                current = trained(reduced_embedding(w_e[:, :dim], w_u[:, :dim]), s.depth)
                (hidden, output), (half, _) = (compare(a, b, coordinates=slice(None, dim))
                                               for a, b in zip(current, limit))
                errors.append((hidden, output, half))
                progress()
        return tuple(torch.stack([e[i] for e in errors]) for i in range(3))

    def estimate_seconds(self, settings):
        # the mean-field sweeps: 6.6e-8 s per step, replicate, unit and network trained with N and N/2 units (depth
        # 49.7 s, embedding 41.9 s at the preset, one process alone on the 2-core machine)
        s = settings
        mean_field = 6.6e-8 * s.epochs * s.replicates * (MEAN_FIELD_UNITS["depth"] * len(s.depths)
                                                          + EMBEDDING_FACTOR * MEAN_FIELD_UNITS["embedding"]
                                                          * (len(s.widths) + 1))
        dim_width = 3.0e-8 * s.epochs * s.replicates * s.depth * 3 * dim_width_hidden(s) * sum(dim_width_sizes(s))
        return (3.0e-8 * s.epochs * s.replicates * s.width * (s.depth * sum(s.hiddens) + 3 * s.hidden * sum(s.depths))
                + mean_field + dim_width + 2.0)


class ChaintronBudget(ChaintronLinear):
    """The error along the shapes that minimise the bound at a parameter budget P = LMD (Chaintron, Chizat & Maass
    2026, their Corollary: O(P^(-1/6))): the finite network at (L, M, D) = (L, L³, L²) for L in ``--depths``, each
    against the large-scale limit L, M, D → ∞ itself — :func:`limits.embedded_resnet.depth_limit`, the
    D = ∞, M = ∞ network extrapolated in depth from 4L, 8L and 16L layers, read on the replicate's own embedding
    rows (H = [W_e, W_u] c). On these shapes each term of the bound is 1/L = P^(-1/6), so the error's exponent in P
    is 1/6 whatever the terms' constants; it is fitted where P^(1/6) ≥ 8, where the next order is at most 1/8 of it.
    Smaller embeddings hold the first rows of the largest one (the authors' coupling of D); each depth draws its
    own units. The reference's own error (``reference_bias`` in the record, per depth) is measured, not assumed.

    Blocks of any ``--activation``: with identity blocks the limit is exact; otherwise it is the limit's
    n-dimensional form with about :data:`BUDGET_LIMIT_UNITS` Monte-Carlo units
    (:func:`limits.embedded_resnet.mean_field_limit`, every level of the extrapolation dealt the same units), and
    the errors against the limit from the first half of them measure its Monte-Carlo remainder (``monte_carlo``;
    above 1/8 of the error at a fitted size the check is INCONCLUSIVE)."""

    name = "chaintron2026-budget"
    title = "a trained ResNet against its large-scale limit along the shapes that minimise the bound at a budget P"
    paper = "Chaintron, Chizat & Maass (arXiv 2603.18168, 2026), the error at a parameter budget"
    claim = ("at a parameter budget P = LMD the shapes that minimise the bound O(1/L + √(D/(LM)) + 1/√D) give an "
             "error O(P^(-1/6)) after a bounded number of gradient steps")
    smoke = dict(depths=(2, 3, 4), epochs=6, replicates=3, resamples=200)
    rejects = {
        "an extra error term of order P^(-1/12), half the bound's exponent (input embedding scaled by 1 + 1/√L)":
            "tests/test_embedded_resnet.py::test_the_budget_check_fails_a_planted_term_with_half_its_exponent",
        "a residual scale α/L without the width M along the budget's shapes":
            "tests/test_embedded_resnet.py::test_the_budget_entry_fits_the_error_against_the_limit_along_the_shapes",
    }
    defaults = dict(depths=(4, 5, 6, 8, 10, 12, 16), epochs=15, learning_rates=(0.1,), replicates=32,
                    activation="identity", dtype="float64")
    sweeps = (BUDGET_SWEEP,)
    increasing = ("depths",)
    nested_depths = False

    def configurations(self, settings):
        return self._configurations(settings)

    def _networks(self, configuration):
        return len(configuration.params["sizes"])

    def measured_of(self, key, settings):
        return self.measured + (() if settings.activation == "identity" else ("half_units_error",))

    @staticmethod
    def limit_units(depth: int) -> int:
        """The Monte-Carlo units of a nonlinear limit at ``depth``: the largest multiple of 2·2·REFINEMENT·L up to
        :data:`BUDGET_LIMIT_UNITS`, so that every level of the extrapolation, with N units and with N/2, deals them
        evenly."""
        block = 4 * REFINEMENT * depth
        return BUDGET_LIMIT_UNITS // block * block

    def _shared(self, settings, key):
        """The limit on each depth's layers, computed once for every chunk of replicates (it does not depend on
        the draws): a tuple of the limits by depth, and for nonlinear blocks also the limits from the first half of
        their units."""
        s = settings
        x, y = one_example_task(s.seed, D_IN, D_OUT, dtype=s.torch_dtype)
        options = dict(refinement=REFINEMENT, activation=s.activation)
        if s.activation == "identity":
            limits = {depth: depth_limit(x, y, depth, s.epochs, s.learning_rates[0], **options) for depth in s.depths}
            return (limits,), {"reference_bias": [limits[depth].bias for depth in s.depths]}
        limits, halves = {}, {}
        for depth in s.depths:
            total = self.limit_units(depth)
            u, v = unit_draws(s.seed, (self.name, "limit", depth), range(1), 1, REDUCED_DIM, total, dtype=s.torch_dtype)
            limits[depth] = depth_limit(x, y, depth, s.epochs, s.learning_rates[0], units=(u, v), **options)
            halves[depth] = depth_limit(x, y, depth, s.epochs, s.learning_rates[0],
                                        units=(u[..., :total // 2], v[..., :total // 2]), **options)
        return (limits, halves), {"reference_bias": [limits[depth].bias for depth in s.depths],
                                  "mean_field_units": [self.limit_units(depth) for depth in s.depths]}

    def _errors(self, s, key, replicates, device, progress, shared=None):
        draws = UnitDraws(self.name, s, key, replicates, device)
        w_e, w_u = draws.embedding(max(s.depths) ** 2)
        errors = []   # per depth: the hidden and output errors (and the hidden error against the half limit)
        for depth in s.depths:
            dim = depth**2
            u, v = draws.units(depth, depth**3, depth, dim=dim)
            finite = draws.train(EmbeddedResNet(w_e[:, :dim], w_u[:, :dim], u, v, activation=s.activation))
            del u, v
            measured = []
            for limits in shared:          # the limits (and, for nonlinear blocks, those from half the units)
                limit = limits[depth]
                states = limit_states(limit.hidden.to(device), w_e[:, :dim], w_u[:, :dim])
                reference = Trajectory(states, limit.output.to(device).expand(-1, len(replicates), -1), finite.loss)
                measured.append(compare(finite, reference))
            errors.append((*measured[0], *(hidden for hidden, _ in measured[1:])))
            progress()
        return tuple(torch.stack([e[i] for e in errors]) for i in range(len(errors[0])))

    def estimate_seconds(self, settings):
        s = settings
        # a nonlinear limit: three levels, each with N and N/2 units, at the mean-field sweeps' 6.6e-8 s per step,
        # unit and network with its half
        limits = (0.0 if s.activation == "identity" else
                  6.6e-8 * s.epochs * 3 * sum(self.limit_units(depth) for depth in s.depths))
        return (1.0e-8 * s.epochs * s.replicates * sum(L**6 for L in s.depths) + 2.0e-4 * s.epochs * 28 * sum(s.depths)
                + limits + 2.0)
