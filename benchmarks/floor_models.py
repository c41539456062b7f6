"""The work a default must do, counted from its own settings: the floor model of ``benchmarks/bench_floors.py``.

A default's **floor** is what no implementation on this machine could beat while drawing the same random numbers
and doing the same arithmetic:

    floor = import + max(work / cores, chain),
    work  = normals · t_normal + uniforms · t_uniform + Σ_products madds · t_madd(shape, dtype),
    chain = sequential steps · t_step,

where t_normal, t_uniform are torch's float32 generator's time per number, t_madd the time per multiply–add of a
batched product of the study's shape, t_step the cost of one dispatched operation (a step of a chain that cannot be
shared out costs at least that), and import the time to import torch (the one part no worker can start before).
Each primitive is timed on the machine by ``bench_floors.py``; the counts are this module's, one
:class:`FloorModel` per default, each reading the default's own settings where the package exposes them.

A floor counts only what the default *must* do. What it does beyond (fits and their bootstraps, a second reference,
plots) is the gap the table shows, and the design page says what stands in the way where the gap is over 3×.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Product:
    """``count`` batched products of shape (batch, m, k) · (batch, k, n) in ``dtype`` ("float32" or "float64")."""

    count: float
    batch: int
    m: int
    k: int
    n: int
    dtype: str = "float64"

    @property
    def madds(self) -> float:
        return self.count * self.batch * self.m * self.k * self.n


@dataclass(frozen=True)
class Work:
    """What a default must do: the random numbers it draws, its products, and its longest sequential chain (in
    dispatched operations that depend on one another)."""

    normals: float = 0.0
    uniforms: float = 0.0
    products: tuple[Product, ...] = ()
    chain: float = 0.0
    #: how the counts were read (the settings and the formula), printed beside the floor
    how: str = ""


@dataclass(frozen=True)
class FloorModel:
    """One default: its command, the time measured for it (and where), and its work."""

    command: str
    measured_seconds: float
    measured_source: str
    work: Callable[[], Work]
    #: processes the default uses at its defaults (the cores it can share its work over)
    cores: int = 2
    notes: str = field(default="")


def _main_study() -> Work:
    """``convergence --model res1``: N = 500 paths of d = 10 channels, in two blocks of 250, one float32 normal per
    channel² per reference step (8192 steps: N·8192·d² = 4.096·10⁸ normals); two float64 Euler references (8192
    and 4096 steps) of one 10 × 10 product per path and step; the deepest chain is a block's 12 288 reference steps,
    at least one product each."""
    samples, width, steps = 500, 10, 8192
    block = samples // 2
    return Work(normals=samples * steps * width**2,
                products=(Product(2 * (steps + steps // 2), block, width, width, 1),),
                chain=steps + steps // 2,
                how="N = 500, d = 10, 8192 reference steps (and a 4096-step second reference), 2 blocks of 250")


MODELS: list[FloorModel] = [
    FloorModel("python -m validation.convergence --model res1", 3.67,
               "benchmarks/results/bench_whole_process.json (median of 5, 2026-11-30)", _main_study,
               notes="the design page's bound with every phase parallel: 3.36 s"),
]
