"""Gradient work–precision: time and peak memory of each way to get ∂ℓ/∂h_0, against depth; the backsolve floor.

    python benchmarks/bench_gradients.py                 # res1, d = 10, N = 250, L = 64 … 4096
    python benchmarks/bench_gradients.py --depths 64 256 # fewer depths

Part 1 (memory, time). Each (method, L) runs in a fresh Python process (``--one``), which reports its wall time and
its peak resident memory above the level it had once the pair, the path and h_0 were made (``ru_maxrss``, Linux
KiB): measured, not asserted. The methods, all on the same res-1 pair and Brownian path:

* ``backprop``: reverse-mode autograd through the depth-L network (every layer's graph kept: grows with L);
* ``tangents``: the gradient study's forward tangents through the network (:class:`validation.gradients.tangents.TangentSystem`);
* ``autograd-sdeint``: autograd through ``torchsde.sdeint`` (reversible Heun at step 1/L; grows with L);
* ``adjoint-reversible-heun``: ``torchsde.sdeint_adjoint`` with ``adjoint_reversible_heun`` (the limit's gradient,
  exact for its discretisation; flat in L).

Part 2 (the backsolve floor, Sander et al.): the backsolve adjoint's RMS gradient error against exact
backpropagation over L, for res2-ode (smooth weights: falls like 1/L) and res-1 at (d, s²) = (10, 1) and (4, 4)
(i.i.d. weights: a floor of order s²/d, reached once L ≳ d²). Results: ``benchmarks/results/bench_gradients.json``
and ``bench_gradients.png`` (both panels).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from limits import make_pair  # noqa: E402
from limits.brownian import BrownianGrid  # noqa: E402
from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402

METHODS = ("backprop", "tangents", "autograd-sdeint", "adjoint-reversible-heun")
RESULTS = Path(__file__).resolve().parent / "results"
#: autograd through torchsde's reversible Heun keeps g (N × d × d²) of every step: 5 GiB at L = 1024, N = 250, d = 10
MAX_AUTOGRAD_SDEINT_DEPTH = 1024


def _one(method: str, depth: int, samples: int, width: int) -> dict:
    """One measurement, in this process (called by the parent with ``--one``), after a warm-up at depth 2."""
    torch.set_num_threads(1)
    pair = make_pair("res1", samples, seed=0, width=width)
    h0 = pair.initial_state()
    _gradient(method, pair, BrownianGrid(samples, pair.noise_dim, 2, seed=1), h0, 2)  # warm-up: lazy imports, caches
    path = BrownianGrid(samples, pair.noise_dim, depth, seed=0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clock = time.perf_counter()
    grad = _gradient(method, pair, path, h0, depth)
    seconds = time.perf_counter() - clock
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"method": method, "depth": depth, "seconds": seconds, "peak_extra_mib": (peak - before) / 1024,
            "gradient_rms": float(grad.square().sum(1).mean().sqrt())}


def _gradient(method: str, pair, path, h0, depth: int) -> torch.Tensor:
    """∂(½‖h_L‖²)/∂h_0 by ``method`` (module docstring)."""
    from validation.gradients.adjoints import sde_adjoint_gradient, sde_autograd_gradient
    from validation.gradients.tangents import TangentSystem, network_input_gradient

    if method == "backprop":
        grad = network_input_gradient(pair, depth, path, h0)
    elif method == "tangents":
        system = TangentSystem(pair, (0.0,))
        x = system.initial_state()
        for k in range(depth):
            x = system.network_step(x, k / depth, 1 / depth, path(k / depth, (k + 1) / depth))
        h, tangents = system.layout.split(x)
        grad = torch.einsum("nij,ni->nj", tangents[:, :, 1:], h)
    elif method == "autograd-sdeint":
        grad = sde_autograd_gradient(pair, path, h0, depth, method="reversible_heun")
    else:
        grad = sde_adjoint_gradient(pair, path, h0, depth, method="reversible_heun")
    return grad


def _backsolve(depths: list[int]) -> dict:
    from validation.gradients.backsolve import backsolve_errors

    torch.set_num_threads(1)
    cases = {"res2-ode d=10": ("res2-ode", 10, 1.0, 100), "res1 d=10 s²=1": ("res1", 10, 1.0, 100),
             "res1 d=4 s²=4": ("res1", 4, 4.0, 200)}
    out = {}
    for label, (model, width, weight_var, samples) in cases.items():
        pair = make_pair(model, samples, seed=0, width=width, weight_var=weight_var)
        errors = backsolve_errors(pair, depths, seed=0)
        out[label] = {"depths": depths, "rms_error": np.sqrt(errors.gradient_sq.mean(0)).tolist(),
                      "rms_gradient": np.sqrt(errors.gradient_scale.mean(0)).tolist(),
                      "rms_reconstruction": np.sqrt(errors.reconstruction_sq.mean(0)).tolist()}
    return out


def _plot(memory: list[dict], backsolve: dict, path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    for method in METHODS:
        rows = [r for r in memory if r["method"] == method and "skipped" not in r]
        left.loglog([r["depth"] for r in rows], [max(r["peak_extra_mib"], 0.1) for r in rows], "o-", label=method)
    left.set_xlabel("depth L (steps 1/L)")
    left.set_ylabel("peak memory above the start (MiB)")
    left.set_title("∂ℓ/∂h_0 of res-1 (d = 10, N = 250): peak memory")
    left.legend(fontsize=8)
    for label, row in backsolve.items():
        right.loglog(row["depths"], np.array(row["rms_error"]) / np.array(row["rms_gradient"]), "o-", label=label)
    right.set_xlabel("depth L")
    right.set_ylabel("RMS backsolve error / RMS gradient")
    right.set_title("backsolve adjoint against backpropagation")
    right.legend(fontsize=8)
    fig.savefig(path, dpi=130)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depths", nargs="+", type=int, default=[64, 256, 1024, 4096], help="depths of part 1")
    parser.add_argument("--samples", type=int, default=250, help="samples of part 1")
    parser.add_argument("--width", type=int, default=10, help="width of part 1")
    parser.add_argument("--backsolve-depths", nargs="+", type=int, default=[4, 16, 64, 256, 1024, 4096])
    parser.add_argument("--one", nargs=2, metavar=("METHOD", "DEPTH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]), args.samples, args.width)))
        return 0
    started, clock = utc_now(), time.perf_counter()
    memory = []
    for depth in args.depths:
        for method in METHODS:
            if method == "autograd-sdeint" and depth > MAX_AUTOGRAD_SDEINT_DEPTH:
                memory.append({"method": method, "depth": depth, "skipped": "the graph would need about 5 GiB per "
                               "1024 steps (measured: 5081 MiB at L = 1024)"})
                continue
            out = subprocess.run([sys.executable, __file__, "--one", method, str(depth), "--samples", str(args.samples),
                                  "--width", str(args.width)], capture_output=True, text=True, check=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            memory.append(row)
            print(f"L={depth:5d} {method:24s} {row['seconds']:8.2f} s {row['peak_extra_mib']:9.1f} MiB", flush=True)
    backsolve = _backsolve(args.backsolve_depths)
    for label, row in backsolve.items():
        print(label, " ".join(f"{e:.3e}" for e in row["rms_error"]))
    RESULTS.mkdir(exist_ok=True)
    _plot(memory, backsolve, RESULTS / "bench_gradients.png")
    info = RunInfo.capture(seed=0, dtype="float64", device="cpu", started=started,
                           wall_time_s=time.perf_counter() - clock, command=" ".join(sys.argv))
    write_json(RESULTS / "bench_gradients.json", {"memory_and_time": memory, "backsolve": backsolve,
                                                   "samples": args.samples, "width": args.width, "run": info.to_dict()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
