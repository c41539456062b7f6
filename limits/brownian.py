"""A seeded Brownian path on a dyadic grid, readable by a ResNet and by ``torchsde.sdeint``.

:class:`BrownianGrid` is a batch of N independent Brownian motions B in R^m on [0, T], known on the
grid t_i = i T / n (n = ``steps``, a power of two). The fine increments

    ΔB_i = B_{t_{i+1}} − B_{t_i} ~ N(0, (T/n) I_m),   i = 0, …, n − 1,

are drawn in blocks of ``block_steps`` consecutive steps, block b from its own generator seeded by
``(seed, "brownian", b)``; any block can be regenerated at any time, so nothing of size n is ever held.

**Dyadic coarsening.** The increment over a dyadic interval of 2^j fine steps is defined as the pairwise
(tree) sum of its two halves, recursively. Every consumer — :meth:`BrownianGrid.__call__` (used by
``sdeint`` and by a ResNet reading increments on the grid k/L) and the one-pass study engine
(:func:`dyadic_levels`) — uses this same tree, so the coarse increment of depth L is *bit for bit* the
same number whoever asks for it, and equals the sum of the fine ones (exactly in real arithmetic, to
rounding in floating point).

It implements torchsde's ``BaseBrownian`` interface, so ``sdeint(sde, y0, ts, bm=grid, dt=T/L)`` reads
the same path as the network. Query times must lie on the grid (as they do for ``dt = T/L`` with L a
power of two dividing n, since dyadic sums are exact in binary floating point).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torchsde import BaseBrownian

from .seeding import generator

__all__ = ["BrownianGrid", "DyadicPath", "PathLevel", "tree_sum", "dyadic_levels", "merge_space_time_areas",
           "merge_levy_areas", "merge_steps", "levy_area_pairs", "levy_area_matrix", "default_block_steps"]


def tree_sum(x: torch.Tensor) -> torch.Tensor:
    """Pairwise sum over dim 0 of a tensor whose leading size is a power of two.

    ``tree_sum(x) == (x[0] + x[1]) + (x[2] + x[3])`` etc.: the canonical dyadic summation order.
    """
    while x.shape[0] > 1:
        x = x[0::2] + x[1::2]
    return x[0]


def dyadic_levels(fine: torch.Tensor) -> list[torch.Tensor]:
    """All dyadic coarsenings of a block of fine increments.

    Returns ``levels`` with ``levels[j]`` of shape (n / 2^j, …): the increments over consecutive groups
    of 2^j fine steps, each computed by the same pairwise tree as :func:`tree_sum`.
    """
    levels = [fine]
    while levels[-1].shape[0] > 1:
        x = levels[-1]
        levels.append(x[0::2] + x[1::2])
    return levels


def merge_space_time_areas(w: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Increments and space-time Lévy areas of consecutive pairs of equal steps, merged (dim 0 halves).

    For [s, u] ∪ [u, t] with u − s = t − u, W = W_1 + W_2 and H = ½(H_1 + H_2) + ¼(W_1 − W_2) (the
    space-time area H_{s,t} = (1/(t−s)) ∫_s^t (B_r − B_s − (r−s)/(t−s) W_{s,t}) dr; Foster 2020, and
    torchsde's ``BrownianInterval``). The sums follow the tree of :func:`tree_sum`.
    """
    w1, w2, h1, h2 = w[0::2], w[1::2], h[0::2], h[1::2]
    return w1 + w2, 0.5 * (h1 + h2) + 0.25 * (w1 - w2)


def default_block_steps(samples: int, size: int, steps: int, budget: int = 1 << 22) -> int:
    """Largest power of two ≤ ``steps`` with block_steps · samples · size ≤ ``budget`` elements (≥ 1)."""
    per_step = max(1, samples * size)
    block = 1
    while block * 2 <= steps and block * 2 * per_step <= budget:
        block *= 2
    return block


def _is_power_of_two(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


class BrownianGrid(BaseBrownian):
    """N independent Brownian motions in R^m on a dyadic grid of [0, T] (see module docstring).

    Args:
        samples: batch size N ≥ 1.
        size: dimension m ≥ 1 of each Brownian motion (torchsde's "noise channels").
        steps: number n of fine steps, a power of two.
        seed: integer seed; (seed, samples, size, steps, block_steps, dtype) fix the path.
        t1: final time T > 0 (the path starts at t0 = 0).
        dtype, device: of the increments.
        block_steps: fine steps per generated block (a power of two ≤ steps); by default the largest
            with block_steps · N · m ≤ 2^22 elements, so a block is 32 MB in float64.
        noise_dtype: the type the normals are *drawn* in (None: ``dtype``). ``torch.float32`` draws them
            about 4× faster and casts them to ``dtype``: every reader (network, limit, references) still
            reads the same increments, so a strong error is unaffected; the path's law changes only by
            the float32 rounding of each normal (relative 6e-8, docs/theory.md §6). Another noise type
            is another path: the seed's numbers change.
    """

    __slots__ = (
        "samples", "channels", "steps", "seed", "t1", "block_steps", "_dtype", "_device",
        "_scale", "_cache_index", "_cache", "_levels", "noise_dtype",
    )

    def __init__(
        self,
        samples: int,
        size: int,
        steps: int,
        seed: int = 0,
        t1: float = 1.0,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
        block_steps: int | None = None,
        noise_dtype: torch.dtype | None = None,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples={samples} must be ≥ 1")
        if size < 1:
            raise ValueError(f"size={size} must be ≥ 1")
        if not _is_power_of_two(steps):
            raise ValueError(f"steps={steps} must be a power of two (1, 2, 4, …)")
        if not t1 > 0:
            raise ValueError(f"t1={t1} must be > 0")
        if block_steps is None:
            block_steps = default_block_steps(samples, size, steps)
        if not _is_power_of_two(block_steps) or block_steps > steps:
            raise ValueError(f"block_steps={block_steps} must be a power of two ≤ steps={steps}")
        self.samples = int(samples)
        self.channels = int(size)
        self.steps = int(steps)
        self.seed = int(seed)
        self.t1 = float(t1)
        self.block_steps = int(block_steps)
        self._dtype = dtype
        self.noise_dtype = dtype if noise_dtype is None else noise_dtype
        self._device = torch.device(device)
        self._scale = math.sqrt(self.t1 / self.steps)
        self._cache_index: int | None = None
        self._cache: torch.Tensor | None = None
        self._levels: list[torch.Tensor] | None = None

    # ------------------------------------------------------------------ torchsde's BaseBrownian API
    @property
    def shape(self) -> tuple[int, int]:
        return (self.samples, self.channels)

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    @property
    def device(self) -> torch.device:
        return self._device

    @property
    def levy_area_approximation(self) -> str:
        return "none"

    def __repr__(self) -> str:
        return (
            f"BrownianGrid(samples={self.samples}, size={self.channels}, steps={self.steps}, seed={self.seed}, "
            f"t1={self.t1}, block_steps={self.block_steps}, dtype={self._dtype}, device={self._device}, "
            f"noise_dtype={self.noise_dtype})"
        )

    def __call__(self, ta, tb=None, return_U: bool = False, return_A: bool = False) -> torch.Tensor:
        """B(tb) − B(ta) for grid times ta ≤ tb (B(ta) − B(0) when tb is None), shape (N, m)."""
        if return_U or return_A:
            raise ValueError("BrownianGrid provides increments only (no space-time or Lévy area)")
        if tb is None:
            ta, tb = 0.0, ta
        start, stop = self.index(ta), self.index(tb)
        if stop < start:
            raise ValueError(f"query times out of order: ta={float(ta)} > tb={float(tb)}")
        return self.increment(start, stop)

    # ------------------------------------------------------------------ grid access
    @property
    def num_blocks(self) -> int:
        return self.steps // self.block_steps

    @property
    def dt(self) -> float:
        """The fine step T / n."""
        return self.t1 / self.steps

    def index(self, t) -> int:
        """The fine-grid index of time ``t``; raises if ``t`` is not on the grid or outside [0, T]."""
        position = float(t) / self.t1 * self.steps
        index = round(position)
        if abs(position - index) > 1e-6 or not 0 <= index <= self.steps:
            raise ValueError(
                f"time {float(t)!r} is not on the grid of {self.steps} steps over [0, {self.t1}]"
            )
        return index

    def block(self, b: int) -> torch.Tensor:
        """Fine increments of block b, shape (block_steps, N, m); the latest block is cached."""
        if self._cache_index != b:  # (normals checks b)
            self._cache = self.scaled(self.normals(b))
            self._cache_index = b
            self._levels = None
        return self._cache

    def normals(self, b: int) -> torch.Tensor:
        """The standard normals of block b as drawn, shape (block_steps, N, m), in ``noise_dtype`` (not cached):
        :meth:`block` is ``scaled(normals(b))``."""
        if not 0 <= b < self.num_blocks:
            raise IndexError(f"block {b} outside 0…{self.num_blocks - 1}")
        gen = generator(self.seed, "brownian", b, device=self._device)
        return torch.randn((self.block_steps, self.samples, self.channels), generator=gen, dtype=self.noise_dtype,
                           device=self._device)

    def scaled(self, normals: torch.Tensor) -> torch.Tensor:
        """Increments √(T/n)·Z of the normals Z of :meth:`normals` (or a slice of them), cast to the path's dtype
        first — in place when Z already has it, so pass normals no one else reads. Entry by entry, so a slice of a
        block's normals scaled alone equals the same slice of :meth:`block`: the one-pass engine scales a block in
        chunks that stay in the processor's cache."""
        return normals.to(self._dtype).mul_(self._scale)

    def levels(self, b: int) -> list[torch.Tensor]:
        """:func:`dyadic_levels` of block b (``levels[j][i]``: the tree sum of fine steps i·2^j … (i+1)·2^j − 1
        of the block), computed once per block and cached with it."""
        fine = self.block(b)
        if self._levels is None:
            self._levels = dyadic_levels(fine)
        return self._levels

    def dyadic_increment(self, start: int, length: int) -> torch.Tensor:
        """Tree sum of the ``length`` (a power of two) fine increments from index ``start``,
        which must be a multiple of ``length`` (an aligned dyadic interval)."""
        if length <= self.block_steps:
            b, offset = divmod(start, self.block_steps)
            return self.levels(b)[length.bit_length() - 1][offset // length]
        half = length // 2
        return self.dyadic_increment(start, half) + self.dyadic_increment(start + half, half)

    def increment(self, start: int, stop: int) -> torch.Tensor:
        """Sum of fine increments start…stop−1, as a left-to-right sum of maximal aligned dyadic blocks
        (for an aligned dyadic interval: exactly its tree sum)."""
        total: torch.Tensor | None = None
        i = start
        while i < stop:
            length = i & -i if i else self.steps
            while i + length > stop:
                length //= 2
            piece = self.dyadic_increment(i, length)
            total = piece if total is None else total + piece
            i += length
        if total is None:
            return torch.zeros(self.shape, dtype=self._dtype, device=self._device)
        return total


class PathLevel(NamedTuple):
    """A :class:`DyadicPath` on one grid: per step its increment W (K', N, m), its space-time area H (K', N, m) or
    None, and its Lévy area A (K', N, m(m−1)/2: the entries i < j, :func:`levy_area_pairs`) or None."""

    increments: torch.Tensor
    areas: torch.Tensor | None
    levy_areas: torch.Tensor | None


def levy_area_pairs(channels: int, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """The index pairs (i, j), i < j, in which a Lévy area is stored compactly: ``torch.triu_indices(m, m, 1)``."""
    rows, columns = torch.triu_indices(channels, channels, 1, device=device)
    return rows, columns


def merge_levy_areas(w: torch.Tensor, h: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Increments, space-time areas and Lévy areas of consecutive pairs of equal steps, merged (dim 0 halves).

    The Lévy area of channels i < j over [s, t] is A_ij = ½ (∫_s^t (B^i_r − B^i_s) dB^j_r − ∫_s^t (B^j_r − B^j_s) dB^i_r)
    (Stratonovich and Itô integrals give the same A). For [s, u] ∪ [u, t], Chen's relation gives it exactly from
    the halves' increments W_1, W_2 and areas:

        A_ij = A_ij(1) + A_ij(2) + ½ (W_1^i W_2^j − W_1^j W_2^i),

    and W and H merge as in :func:`merge_space_time_areas`. Every grid of a :class:`DyadicPath` is merged by this one
    rule, so coarse and fine steps read the areas of one path. ``a`` is compact, (…, m(m−1)/2) in the order of
    :func:`levy_area_pairs`.
    """
    rows, columns = levy_area_pairs(w.shape[-1], w.device)
    w1, w2 = w[0::2], w[1::2]
    merged_a = a[0::2] + a[1::2] + 0.5 * (w1[..., rows] * w2[..., columns] - w1[..., columns] * w2[..., rows])
    merged_w, merged_h = merge_space_time_areas(w, h)
    return merged_w, merged_h, merged_a


def merge_steps(level: PathLevel) -> PathLevel:
    """A path's steps merged in consecutive pairs (dim 0 halves): increments by the tree sum, and whichever areas the
    path carries by :func:`merge_space_time_areas` and :func:`merge_levy_areas` — the one rule every coarser grid of
    :func:`record_path` and :class:`DyadicPath` is formed by."""
    if level.levy_areas is not None:
        return PathLevel(*merge_levy_areas(*level))
    if level.areas is not None:
        return PathLevel(*merge_space_time_areas(level.increments, level.areas), None)
    return PathLevel(level.increments[0::2] + level.increments[1::2], None, None)


def levy_area_matrix(a: torch.Tensor, channels: int) -> torch.Tensor:
    """The antisymmetric (…, m, m) matrix of compact Lévy areas (…, m(m−1)/2)."""
    rows, columns = levy_area_pairs(channels, a.device)
    full = a.new_zeros(*a.shape[:-1], channels, channels)
    full[..., rows, columns] = a
    full[..., columns, rows] = -a
    return full


class DyadicPath(BaseBrownian):
    """A Brownian path known by its increments (and optionally its space-time and Lévy areas) on a grid of K
    equal steps of [0, T], read by torchsde's schemes at any step count dividing K.

    The study engine records the shared path's increments at the resolution of the deepest scheme (the
    same tree sums every network reads), so every scheme at every step count L | K reads the same path:
    a query over an aligned dyadic interval is the :func:`tree_sum` of its recorded steps, bit for bit the
    increment :class:`BrownianGrid` gives. With ``areas`` (H of each recorded step) it also answers
    ``return_U`` (U = Δt(½W + H)) and ``return_A``: with ``levy_areas`` (A of each recorded step, compact), the
    Lévy area of the queried step merged by Chen's relation (:func:`merge_levy_areas`); without, **E[A | W, H] =
    H ⊗ W − W ⊗ H** — the mean of Davie's approximation, without its independent term (drawing that term costs
    m² normals per step and sample); torchsde's log-ODE scheme accepts either. Memory: K·N·m numbers (plus K·N·m
    for H and K·N·m(m−1)/2 for A), at most twice that once every grid has been read (:meth:`level`).

    Args:
        increments: (K, N, m), K a power of two.
        areas: (K, N, m) space-time Lévy areas of the steps, or None.
        t1: the final time T.
        levy_areas: (K, N, m(m−1)/2) Lévy areas of the steps (:func:`levy_area_pairs` order), or None; needs
            ``areas``.
    """

    def __init__(self, increments: torch.Tensor, areas: torch.Tensor | None = None, t1: float = 1.0,
                 levy_areas: torch.Tensor | None = None) -> None:
        steps = increments.shape[0]
        if not _is_power_of_two(steps):
            raise ValueError(f"a DyadicPath needs a power-of-two number of steps; got {steps}")
        if areas is not None and areas.shape != increments.shape:
            raise ValueError(f"areas shape {tuple(areas.shape)} differs from increments {tuple(increments.shape)}")
        if levy_areas is not None:
            m = increments.shape[-1]
            if areas is None:
                raise ValueError("levy_areas need the space-time areas too (the merge of A reads only W, but a "
                                 "scheme reading A reads H)")
            if levy_areas.shape != (*increments.shape[:-1], m * (m - 1) // 2):
                raise ValueError(f"levy_areas shape {tuple(levy_areas.shape)}: expected "
                                 f"{(*increments.shape[:-1], m * (m - 1) // 2)} (the entries i < j of m = {m})")
        self.increments, self.areas, self.levy_areas = increments, areas, levy_areas
        self.steps, self.t1 = steps, float(t1)
        self._levels: dict[int, PathLevel] = {1: PathLevel(increments, areas, levy_areas)}

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.increments.shape[1:])

    @property
    def dtype(self) -> torch.dtype:
        return self.increments.dtype

    @property
    def device(self) -> torch.device:
        return self.increments.device

    @property
    def levy_area_approximation(self) -> str:
        if self.levy_areas is not None:
            return "foster"
        return "none" if self.areas is None else "davie"

    def __repr__(self) -> str:
        return (f"DyadicPath(steps={self.steps}, shape={self.shape}, areas={self.areas is not None}, "
                f"levy_areas={self.levy_areas is not None})")

    def _index(self, t) -> int:
        position = float(t) / self.t1 * self.steps
        index = round(position)
        if abs(position - index) > 1e-6 or not 0 <= index <= self.steps:
            raise ValueError(f"time {float(t)!r} is not on the grid of {self.steps} steps over [0, {self.t1}]")
        return index

    def level(self, length: int) -> PathLevel:
        """The path on the grid of steps of ``length`` recorded steps, a power of two: each step's increment (the
        :func:`tree_sum` of its recorded steps) and areas (merged by :func:`merge_space_time_areas` and
        :func:`merge_levy_areas`), shape (K / length, N, …). Computed once per length and kept, so that a scheme at
        step count L reads its grid at the cost of an index (memory: at most twice the recorded path)."""
        if length not in self._levels:
            if length < 1 or length & (length - 1) or length > self.steps:
                raise ValueError(f"length={length} must be a power of two ≤ {self.steps}")
            self._levels[length] = merge_steps(self.level(length // 2))
        return self._levels[length]

    def step(self, ta, tb) -> tuple[int, PathLevel]:
        """The index k of the aligned dyadic step [ta, tb] on its grid, and that grid (:meth:`level`)."""
        start, stop = self._index(ta), self._index(tb)
        length = stop - start
        if length < 1 or length & (length - 1) or start % length:
            raise ValueError(f"DyadicPath answers aligned dyadic steps only; got [{float(ta)}, {float(tb)}]")
        return start // length, self.level(length)

    def __call__(self, ta, tb=None, return_U: bool = False, return_A: bool = False):
        if tb is None:
            ta, tb = 0.0, ta
        if (return_U or return_A) and self.areas is None:
            raise ValueError("this DyadicPath has no space-time areas (record them to use return_U/return_A)")
        k, grid = self.step(ta, tb)
        w = grid.increments[k]
        if not (return_U or return_A):
            return w
        h = grid.areas[k]
        out = [w]
        if return_U:
            out.append((float(tb) - float(ta)) * (0.5 * w + h))
        if return_A:
            if grid.levy_areas is not None:
                out.append(levy_area_matrix(grid.levy_areas[k], w.shape[-1]))
            else:
                out.append(h.unsqueeze(-1) * w.unsqueeze(-2) - w.unsqueeze(-1) * h.unsqueeze(-2))
        return tuple(out)


#: what :func:`record_path` records of each fine step besides its increment
PATH_AREAS: tuple[str, ...] = ("none", "piecewise-linear", "space-time", "levy")


def fine_step_areas(w: torch.Tensor, dt: float, kind: str, seed: int, block: int
                    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The space-time and Lévy areas of fine steps of length ``dt`` with increments ``w`` (S, N, m), block ``block``
    of the path of ``seed`` (:func:`record_path`'s ``areas``):

    * ``piecewise-linear``: H = 0 (the path linear between the fine points; no Lévy area);
    * ``space-time``: H ~ N(0, Δt/12), independent of W — exact (the space-time area of a Brownian step is
      independent of its increment; Foster 2020) — from the stream (seed, "space-time-area", block);
    * ``levy``: also A_ij = H_i W_j − W_i H_j + λ_ij, i < j, with λ_ij ~ N(0, Δt²/20 + (Δt/5)(H_i² + H_j²))
      independent, from the stream (seed, "levy-area", block). Given (W, H), the Lévy area's conditional mean is
      H ⊗ W − W ⊗ H and its conditional variance Δt²/20 + (Δt/5)(H_i² + H_j²) (Foster's; measured here by
      regression on 10⁵ simulated fine paths: 0.0501, 0.196); its conditional law is not Gaussian, so the fine
      step's area is an approximation with the right first two conditional moments — the Davie–Foster
      approximation with Foster's variance (torchsde's ``foster`` option draws λ with variance
      Δt²/50 + (Δt/5)(H_i² + H_j²), its ``davie`` option with Δt²/6, against the exact average Δt²/12).
    """
    if kind == "none":
        return None, None
    if kind == "piecewise-linear":
        return torch.zeros_like(w), None
    if kind not in PATH_AREAS:
        raise ValueError(f"areas={kind!r} unknown (allowed: {', '.join(PATH_AREAS)})")
    gen = generator(seed, "space-time-area", block, device=w.device)
    h = torch.randn(w.shape, generator=gen, dtype=w.dtype, device=w.device).mul_(math.sqrt(dt / 12.0))
    if kind == "space-time":
        return h, None
    rows, columns = levy_area_pairs(w.shape[-1], w.device)
    h_i, h_j = h[..., rows], h[..., columns]
    mean = h_i * w[..., columns] - w[..., rows] * h_j
    std = (dt * dt / 20.0 + (dt / 5.0) * (h_i * h_i + h_j * h_j)).sqrt()
    gen = generator(seed, "levy-area", block, device=w.device)
    return h, mean + std * torch.randn(mean.shape, generator=gen, dtype=w.dtype, device=w.device)


def record_path(samples: int, channels: int, steps: int, seed: int = 0, *, record_steps: int | None = None,
                areas: str = "none", t1: float = 1.0, dtype: torch.dtype = torch.float64,
                device: torch.device | str = "cpu", block_steps: int | None = None,
                noise_dtype: torch.dtype | None = None) -> DyadicPath:
    """The path of a :class:`BrownianGrid` (same arguments, the same increments) on the grid of K = ``record_steps``
    steps (default: every fine step), with the areas of each recorded step.

    The fine steps' areas are drawn (or set) by :func:`fine_step_areas` according to ``areas`` (one of
    :data:`PATH_AREAS`), then merged exactly up to the recorded grid (:func:`merge_space_time_areas`,
    :func:`merge_levy_areas`); a :class:`DyadicPath` merges them further, by the same rules, for any coarser step.
    So every step count reads the increments and areas of one path, and the only approximation is at the fine
    step (none for ``space-time``; for ``levy`` the fine step's Lévy area law, whose effect on a coarse step of r
    fine steps shrinks as r grows: the merge adds the exact cross terms). The blocks are generated one at a time:
    memory is the recorded path, K·N·(2m + m(m−1)/2) numbers at most.
    """
    if areas not in PATH_AREAS:
        raise ValueError(f"areas={areas!r} unknown (allowed: {', '.join(PATH_AREAS)})")
    record_steps = steps if record_steps is None else record_steps
    if not _is_power_of_two(record_steps) or record_steps > steps:
        raise ValueError(f"record_steps={record_steps} must be a power of two ≤ steps={steps}")
    every = steps // record_steps
    if block_steps is None:
        block_steps = max(every, default_block_steps(samples, channels, steps))
    if block_steps < every:
        raise ValueError(f"block_steps={block_steps} must be ≥ steps / record_steps = {every}")
    grid = BrownianGrid(samples, channels, steps, seed=seed, t1=t1, dtype=dtype, device=device,
                        block_steps=block_steps, noise_dtype=noise_dtype)
    # each block's merged steps are copied into the recorded arrays as they come: the path is held once (gathering
    # the blocks and concatenating them held it twice at the end, 1.9 GB for a 0.8 GB path)
    recorded: list[torch.Tensor | None] = [None, None, None]
    start = 0
    for b in range(grid.num_blocks):
        w = grid.block(b)
        level = PathLevel(w, *fine_step_areas(w, grid.dt, areas, seed, b))
        for _ in range(every.bit_length() - 1):
            level = merge_steps(level)
        if grid.num_blocks == 1:   # one block is the whole path: it is the record (copying it held the path twice)
            return DyadicPath(level.increments, level.areas, t1=t1, levy_areas=level.levy_areas)
        for i, value in enumerate(level):
            if value is not None:
                if recorded[i] is None:
                    recorded[i] = value.new_empty((record_steps, *value.shape[1:]))
                recorded[i][start:start + value.shape[0]] = value
        start += level.increments.shape[0]
    increments, space_time, levy = recorded
    return DyadicPath(increments, space_time, t1=t1, levy_areas=levy)
