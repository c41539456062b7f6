"""The level samplers of the multilevel study: for one scheme (the pair's network, a step-rule SDE scheme, or the
antithetic estimator), Y_ℓ = φ(h_{L_ℓ}) − φ(h_{L_ℓ/2}) on the same recorded paths, drawn in batches whose memory
stays within :data:`PATH_BUDGET` (:func:`level_sampler`, read by :mod:`validation.multilevel.study`)."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch

from limits.brownian import DyadicPath, record_path
from limits.pairs import SDEPair, run_network
from limits.schemes import SDE_SCHEMES, SDEScheme, get_sde_scheme
from limits.seeding import stream_seed
from validation.multilevel.mlmc import LevelBatch
from validation.core.observables import TEST_FUNCTIONS


#: Giles & Szpruch's antithetic estimator (docs/theory.md §8): truncated Milstein, the fine solve averaged with its
#: increment-swapped twin, no Lévy areas
ANTITHETIC = "antithetic_milstein"


#: the schemes a level can run (``--schemes``; each is a "solver" of the result): the pair's network, a scheme of
#: limits.schemes with a step rule and a declared weak order (α's theory; torchsde's methods run whole solves and are
#: left out), or the antithetic estimator
LEVEL_SCHEMES: tuple[str, ...] = ("network", *(name for name, cls in SDE_SCHEMES.items()
                                              if cls.integrate is SDEScheme.integrate and cls.weak_order is not None),
                                  ANTITHETIC)
#: the name of :data:`LEVEL_SCHEMES` before it was renamed (it said "solvers", the name of another study)
SOLVERS = LEVEL_SCHEMES


#: samples per sampler call, at most: memory is this × L × the path's numbers per step, capped by PATH_BUDGET
MAX_BATCH = 1 << 16


#: numbers of a recorded path held at once (32 MiB in float64)
PATH_BUDGET = 1 << 22


def level_sampler(pair: SDEPair, solver: str, function: str, depth0: int, seed: int, phase: str,
                  noise_dtype: torch.dtype | None = None) -> Callable[[int, int, int], LevelBatch]:
    """The level sampler of ``solver`` (:data:`LEVEL_SCHEMES`) on ``pair``: ``sampler(level, samples, batch)`` draws
    ``samples`` inputs and Brownian paths from the streams (seed, "multilevel", phase, level, batch) — the pair's own
    input law (its ``initial_state``) and :func:`limits.brownian.record_path` at L = depth0 · 2^level steps, with Lévy
    areas when the solver reads them — and returns φ at depth L and at L/2 on those paths. Every solver given the
    same (seed, phase) reads the same inputs and increments. Cost: (L + L/2) × the solver's evaluations per step, per
    sample. Memory: one batch's path and its coarse grid (:func:`batch_size`); the study runs the samplers with
    large arrays unmapped when freed (:func:`validation.core.runtime.large_blocks_unmapped`), so the batches'
    changing shapes do not fragment the heap."""
    phi = TEST_FUNCTIONS[function][0]
    cls, config = type(pair), pair.config
    antithetic = solver == ANTITHETIC
    if solver == "network":
        scheme, per_step, areas = None, pair.evaluations_per_layer, "none"
    else:
        scheme = get_sde_scheme("milstein_truncated" if antithetic else solver)(pair.limit_sde(), pair.noise_type)
        per_step = scheme.evaluations
        areas = "levy" if scheme.needs_levy_area else ("space-time" if scheme.needs_space_time_area else "none")

    def sample(level: int, samples: int, batch: int) -> LevelBatch:
        depth = depth0 * 2**level
        stream = stream_seed(seed, "multilevel", phase, level, batch)
        clock = time.perf_counter()
        drawn = cls(config, samples, seed=stream, dtype=pair.dtype, device=pair.device)
        h0 = drawn.initial_state()
        path = record_path(samples, drawn.noise_dim, depth, stream, areas=areas, dtype=pair.dtype, device=pair.device,
                           noise_dtype=noise_dtype)

        def solve(steps: int, on: DyadicPath = path) -> np.ndarray:
            h = run_network(drawn, steps, on, h0) if scheme is None else scheme.integrate(h0, on, steps)
            return phi(h).double().cpu().numpy()

        fine = solve(depth)
        if level == 0:
            return LevelBatch(fine, None, float(samples * depth * per_step), time.perf_counter() - clock)
        coarse, single = solve(depth // 2), None
        if antithetic:  # P_ℓ = ½ (φ(X^f) + φ(X^a)): the twin reads each coarse step's two increments swapped
            single, fine = fine, 0.5 * (fine + solve(depth, swapped_halves(path)))
        steps = (2 if antithetic else 1) * depth + depth // 2
        return LevelBatch(fine, coarse, float(samples * steps * per_step), time.perf_counter() - clock, single)

    return sample


def swapped_halves(path: DyadicPath) -> DyadicPath:
    """The antithetic twin of a path recorded at every fine step: within each pair of fine steps (one coarse step)
    the two increments change places. Its law is the path's, and its coarse increments are the path's exactly."""
    w = path.increments
    if path.areas is not None or w.shape[0] % 2:
        raise ValueError("the antithetic twin swaps the increments of an even number of recorded steps, no areas")
    return DyadicPath(torch.stack((w[1::2], w[0::2]), dim=1).reshape(w.shape), t1=path.t1)


def per_sample_numbers(pair: SDEPair, solver: str) -> tuple[int, int]:
    """(numbers of the recorded path per step, numbers of the scheme's working arrays) for one sample."""
    m, d = pair.noise_dim, pair.width
    if solver == "network":
        return m, 0
    if solver == ANTITHETIC:
        return 2 * m, 4 * d * m  # the path and its twin; no areas
    return 2 * m + m * (m - 1) // 2, 4 * d * m


def path_transient(pair: SDEPair, solver: str) -> float:
    """The most numbers a batch holds at once, in multiples of its recorded path's (:func:`per_sample_numbers`): the
    path and its coarse grid (1.5); for the antithetic estimator, whose path counts its twin, the increments, the
    twin and the coarse grid (1.25); for a scheme reading Lévy areas, the drawing of the fine steps' areas
    (:func:`limits.brownian.fine_step_areas`): W and H (2m numbers) beside seven arrays of the a = m(m−1)/2 areas
    at its last operation (the pairs' H twice, the conditional mean and standard deviation, the normals, their
    product, the sum), against the path's 2m + a."""
    if solver == ANTITHETIC:
        return 1.25
    if solver == "network" or not get_sde_scheme(solver).needs_levy_area:
        return 1.5
    m = pair.noise_dim
    areas = m * (m - 1) // 2
    return max(1.5, (2 * m + 7 * areas) / (2 * m + areas))


def batch_size(pair: SDEPair, solver: str, depth0: int) -> Callable[[int], int]:
    """Samples per sampler call at each level: the recorded path (L steps × N samples × its numbers per step) within
    :data:`PATH_BUDGET`, at most :data:`MAX_BATCH`; a scheme's working arrays (g and v: d × m numbers per sample,
    a few of them) within it too."""
    per_step, working = per_sample_numbers(pair, solver)
    cap = MAX_BATCH if not working else min(MAX_BATCH, PATH_BUDGET // working)
    return lambda level: max(1, min(cap, PATH_BUDGET // (depth0 * 2**level * per_step)))
