"""Each slow default against its floor: the random numbers, products and sequential steps it cannot avoid.

    python benchmarks/bench_floors.py                 # time the primitives here, print the table, write the JSON
    python benchmarks/bench_floors.py --markdown      # the table as the design page shows it

The counts are ``benchmarks/floor_models*.py``'s (one :class:`floor_models.FloorModel` per default, read from its
settings; the model and its formula are in ``floor_models.py``). This script times the primitives on this machine —
torch's float32 ``randn`` and ``rand`` per number, a batched product of each default's shape per multiply–add, one
dispatched operation, the torch import — and writes, per default, its floor beside the time measured for it (read
from the source each model names, not re-run here: the defaults take minutes to hours together) and their ratio, to
``benchmarks/results/bench_floors.json``. Time the primitives on an idle machine: a busy one inflates them, and the
ratios fall.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_models import FloorModel, Product, Work  # noqa: E402
from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402

#: the modules whose MODELS are tabled, in this order
MODULES = ("floor_models", "floor_models_group_a", "floor_models_group_b")
#: numbers drawn per timing of the generators
DRAW = 1 << 23


def _best(seconds: list[float]) -> float:
    return min(seconds)


def time_generator(fill: str, repeats: int = 5) -> float:
    """Seconds per float32 number of torch's generator filling a reused buffer in place (``normal_`` or
    ``uniform_``: no allocation timed; best of ``repeats`` fills of :data:`DRAW` numbers, one thread)."""
    gen = torch.Generator().manual_seed(0)
    buffer = torch.empty(DRAW // 8, dtype=torch.float32)
    getattr(buffer, fill)(generator=gen)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(8):
            getattr(buffer, fill)(generator=gen)
        times.append(time.perf_counter() - started)
    return _best(times) / DRAW


def _loop_time(call: Any, repeats: int, budget: float) -> float:
    """Best seconds of one ``call()`` over ``repeats`` loops of about ``budget / 4`` seconds each."""
    call()
    started, loops = time.perf_counter(), 0
    while time.perf_counter() - started < budget / 4:
        call()
        loops += 1
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(loops):
            call()
        times.append((time.perf_counter() - started) / loops)
    return _best(times)


def time_product(product: Product, repeats: int = 5, budget: float = 0.2) -> tuple[float, str]:
    """Seconds per multiply–add of the fastest of torch's ways to compute the product at its shape and dtype (one
    thread), and which: ``bmm``; one 2-D ``mm`` per matrix of the batch; and, for matrix–vector products, the
    elementwise product summed (``bmm`` of a (3, 100, 100)·(3, 100, 1) float32 batch took 47–53 µs here, the
    elementwise form 13 µs: the floor is the arithmetic at the best kernel, not at the one a study happens to call)."""
    dtype = getattr(torch, product.dtype)
    left = torch.randn(product.batch, product.m, product.k, dtype=dtype)
    right = torch.randn(product.batch, product.k, product.n, dtype=dtype)
    out = torch.empty(product.batch, product.m, product.n, dtype=dtype)
    ways = {"bmm": lambda: torch.bmm(left, right, out=out)}
    if product.batch <= 64:
        ways["mm per matrix"] = lambda: [torch.mm(left[i], right[i], out=out[i]) for i in range(product.batch)]
    if product.n == 1:
        row = right.transpose(1, 2).contiguous()
        ways["elementwise, summed"] = lambda: torch.sum(left * row, dim=-1)
    timed = {name: _loop_time(call, repeats, budget) for name, call in ways.items()}
    fastest = min(timed, key=timed.__getitem__)
    return timed[fastest] / (product.batch * product.m * product.k * product.n), fastest


def time_step(repeats: int = 5, loops: int = 20000) -> float:
    """Seconds of one dispatched operation on a small tensor: the least cost of a step of a chain."""
    x = torch.zeros(16)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(loops):
            x.add_(1.0)
        times.append((time.perf_counter() - started) / loops)
    return _best(times)


def time_import(repeats: int = 3) -> float:
    """Seconds to start Python and import torch, the part no worker can start before (best of ``repeats``)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - started)
    return _best(times)


def models() -> list[FloorModel]:
    found: list[FloorModel] = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        found.extend(module.MODELS)
    return found


def floor_of(work: Work, cores: int, primitives: dict[str, float], product_rates: dict[Product, float]) -> dict[str, Any]:
    """The floor of one default's work (floor_models's formula), and its parts in seconds."""
    draws = work.normals * primitives["normal_s"] + work.uniforms * primitives["uniform_s"]
    arithmetic = sum(product.madds * product_rates[product] for product in work.products)
    chain = work.chain * primitives["step_s"]
    shared = (draws + arithmetic) / cores
    return {"draws_s": draws, "products_s": arithmetic, "chain_s": chain, "cores": cores,
            "floor_s": primitives["import_s"] + max(shared, chain),
            "bound_by": "the chain" if chain > shared else "the work"}


def run(names: list[str] | None = None) -> dict[str, Any]:
    torch.set_num_threads(1)
    primitives = {"normal_s": time_generator("normal_"), "uniform_s": time_generator("uniform_"),
                  "step_s": time_step(), "import_s": time_import()}
    rows = []
    for model in models():
        if names and not any(name in model.command for name in names):
            continue
        work = model.work()
        timed = {product: time_product(product) for product in work.products}
        rates = {product: seconds for product, (seconds, _) in timed.items()}
        floor = floor_of(work, model.cores, primitives, rates)
        rows.append({"command": model.command, "measured_s": model.measured_seconds,
                     "measured_source": model.measured_source, **floor,
                     "ratio": model.measured_seconds / floor["floor_s"],
                     "normals": work.normals, "uniforms": work.uniforms,
                     "products": [{"count": p.count, "shape": [p.batch, p.m, p.k, p.n], "dtype": p.dtype,
                                   "madds": p.madds, "s_per_madd": rates[p], "fastest_way": timed[p][1]}
                                  for p in work.products],
                     "chain": work.chain, "how": work.how, "notes": model.notes})
    return {"benchmark": "floors of the slow defaults", "primitives": primitives, "rows": rows}


def table(result: dict[str, Any], markdown: bool = False) -> str:
    p = result["primitives"]
    head = (f"primitives (one thread): randn {p['normal_s'] * 1e9:.2f} ns, rand {p['uniform_s'] * 1e9:.2f} ns a "
            f"number; one operation {p['step_s'] * 1e6:.2f} µs; import torch {p['import_s']:.2f} s")
    if markdown:
        lines = [head, "", "| default | measured | floor | × floor | bound by | draws | products | chain |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in result["rows"]:
            lines.append(f"| `{r['command']}` | {r['measured_s']:.1f} s | {r['floor_s']:.2f} s | {r['ratio']:.1f} | "
                         f"{r['bound_by']} | {r['draws_s']:.2f} s | {r['products_s']:.2f} s | {r['chain_s']:.2f} s |")
        return "\n".join(lines)
    lines = [head, f"{'default':60} {'measured':>9} {'floor':>8} {'×':>6}  bound by"]
    for r in result["rows"]:
        lines.append(f"{r['command'][:60]:60} {r['measured_s']:>8.1f}s {r['floor_s']:>7.2f}s {r['ratio']:>6.1f}  "
                     f"{r['bound_by']} (draws {r['draws_s']:.2f} s, products {r['products_s']:.2f} s, chain "
                     f"{r['chain_s']:.2f} s, over {r['cores']} core(s))")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="the defaults whose command contains one of these")
    parser.add_argument("--markdown", action="store_true", help="print the table as the design page shows it")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_floors.json"),
                        help="where the floors are written ('-': not written)")
    args = parser.parse_args(argv)
    started = utc_now()
    clock = time.perf_counter()
    result = run(args.only)
    print(table(result, args.markdown))
    if args.json != "-":
        info = RunInfo.capture(seed=0, dtype="float32", device="cpu", started=started,
                               wall_time_s=time.perf_counter() - clock, command=" ".join(sys.argv))
        write_json(args.json, {**result, "run": info.to_dict()})
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
