"""Side by side with the authors' code of Chaintron, Chizat & Maass (2026): their finite ResNet and their D → ∞
limit, against :mod:`limits.embedded_resnet`, on the same draws.

The authors' repository (``lchizat/2026-resnets-of-all-shapes-and-sizes``) is never vendored, imported by the
package or copied: give a local checkout with ``--authors-dir`` (the folder that holds ``linear_experiments_python``)
and an interpreter with numpy and scipy with ``--authors-python``. Their side runs in that interpreter, as a
subprocess that imports their ``src.resnet.model_with_embedding``, ``src.linear_correlations`` and
``src.linear_simulation`` and calls them as their notebook ``exp_cvg_rate.ipynb`` does; the arrays travel as
``.npy`` files in a temporary folder.

Three comparisons, on the package's one-example task (``limits.embedded_resnet.one_example_task``), K steps at η₀:

* **same** — their ``FiniteResNetWithEmbedding`` (identity blocks, α = 1, learning rates scaled by D as in their
  notebook) and the package's :class:`~limits.embedded_resnet.EmbeddedResNet`, given the *same* W_e, W_u, U, V,
  on the cells ``--cells`` (L, M, D): the largest difference of the hidden states and of the outputs over the K
  steps, relative to the largest hidden state, and the wall time of each side for the K steps (one thread).
* **limit** — their correlation functions (``CorrelationGenerator``, ``num_s`` = ``--grid`` points in s, their
  notebook's 100 by default) and their per-coordinate processes (``simulate_system_batched_optimized``) on the rows
  of one root embedding, against the package's network at M = ∞ (:class:`~limits.embedded_resnet.InfiniteWidthResNet`)
  of depth ``grid − 1`` (layer l at their s_l = l/(grid − 1)) on the first D rows, for D in ``--dims``: the authors'
  error (largest over layers of the mean over coordinates of |h − H|) at every step, per root embedding
  (``--replicates``), and its exponent in D with a bootstrap interval over the replicates. [18] proves this term is
  O(1/√D); the package's experiment measures it as successive differences (0.481 [0.457, 0.505]), so this is an
  independent check of both the package's M = ∞ network and the exponent, against the authors' own limit.
* **own limit** — the package's own limit L, M, D → ∞ (:func:`~limits.embedded_resnet.depth_limit`: the
  n-dimensional M = ∞ network, extrapolated in depth), against theirs on the same layers: the largest difference
  of the outputs over the K steps, of the correlations Γ_H (their ``Gamma_H``) and, per step, the authors' error
  between the per-coordinate states on the root embeddings — two independent computations of one limit, theirs
  by integrating correlation functions in s (``solve_ivp``, rtol 1e-5), the package's by an exact reduction.

Usage::

    python benchmarks/against_chaintron.py --authors-dir ../2026-resnets-of-all-shapes-and-sizes --json /tmp/c.json

Exit 0 when the run completes, 2 when an argument is bad or the checkout or the authors' dependencies are missing
(one line says what) — every argument is checked before the authors' side starts, and the committed
``benchmarks/results/against_chaintron.json`` is replaced only with ``--force`` — and 3 when the authors' side
fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from limits.embedded_resnet import (EmbeddedResNet, InfiniteWidthResNet, depth_limit,  # noqa: E402
                                    embedding_draws, limit_correlations, limit_states, one_example_task, train,
                                    unit_draws)
from validation.training.chaintron2026 import hidden_error, output_error  # noqa: E402
from validation.training.experiment import power_fit  # noqa: E402

COMMITTED_JSON = ROOT / "benchmarks" / "results" / "against_chaintron.json"
D_IN = D_OUT = 3
LABEL = "against-chaintron"

#: the authors' side: reads job.json and the arrays from argv[1], writes results there
AUTHORS_SCRIPT = r'''
import contextlib, io, json, sys, time
import numpy as np
folder = sys.argv[1]
job = json.load(open(folder + "/job.json"))
from src.resnet.model_with_embedding import FiniteResNetWithEmbedding
from src.resnet.activations import linear, linear_der
from src.linear_correlations import CorrelationGenerator
from src.linear_simulation import simulate_system_batched_optimized
x, y = np.load(folder + "/x.npy"), np.load(folder + "/y.npy")
K, eta = job["steps"], job["eta"]
out = {}
for name in job["same"]:
    w_e, w_u = np.load(f"{folder}/{name}_we.npy"), np.load(f"{folder}/{name}_wu.npy")
    U, V = np.load(f"{folder}/{name}_U.npy"), np.load(f"{folder}/{name}_V.npy")
    D, M, L = U.shape
    model = FiniteResNetWithEmbedding(D, M, L, d_in=x.shape[0], d_out=y.shape[0], alpha=1.0, activation=linear,
                                      activation_der=linear_der, seed=0)
    model.U, model.V, model.W_e, model.W_u = U.copy(), V.copy(), w_e, w_u
    hidden, outputs = [], []
    tick = time.perf_counter()
    for k in range(K):
        loss, H, B, o = model.step(x.reshape(-1, 1), y.reshape(-1, 1), eta, D, D, track=True)
        hidden.append(H[:, 0, :].T.copy())
        outputs.append(o[:, 0].copy())
    out[name] = {"seconds": time.perf_counter() - tick}
    np.save(f"{folder}/{name}_hidden.npy", np.stack(hidden))
    np.save(f"{folder}/{name}_output.npy", np.stack(outputs))
tick = time.perf_counter()
generator = CorrelationGenerator(x=x, y=y, sigma_u=1, sigma_v=1, a=1, eta_u=eta, eta_v=eta, sigma_we=1, sigma_wu=1,
                                 K=K, num_s=job["grid"])
with contextlib.redirect_stdout(io.StringIO()):
    generator.run()
out["correlations_seconds"] = time.perf_counter() - tick
np.save(folder + "/limit_f.npy", generator.f)
np.save(folder + "/limit_gamma_h.npy", generator.Gamma_H)
tick = time.perf_counter()
for r in range(job["replicates"]):
    w_e, w_u = np.load(f"{folder}/root{r}_we.npy"), np.load(f"{folder}/root{r}_wu.npy")
    H, B = simulate_system_batched_optimized(w_e, w_u, generator.Gamma_H, generator.Gamma_B, generator.A,
                                             generator.A_tilde, generator.grad_loss_array, generator.x)
    np.save(f"{folder}/root{r}_H.npy", H)
out["limit_seconds"] = time.perf_counter() - tick
import numpy, scipy
out["versions"] = {"numpy": numpy.__version__, "scipy": scipy.__version__, "python": sys.version.split()[0]}
json.dump(out, open(folder + "/authors.json", "w"))
'''


def _parse_cells(text: str) -> list[tuple[int, int, int]]:
    cells = []
    for part in text.split(","):
        sizes = part.strip().split("x")
        if len(sizes) != 3 or not all(s.isdigit() and 1 <= int(s) <= 4096 for s in sizes):
            raise ValueError(f"{part.strip()!r} is not a cell LxMxD of sizes 1 … 4096 (e.g. 10x10x10)")
        cells.append(tuple(int(s) for s in sizes))
    if not cells or len(set(cells)) != len(cells):
        raise ValueError("give at least one cell, each once")
    return cells


def _parse_dims(text: str) -> list[int]:
    dims = [int(s) for s in text.split(",") if s.strip()]
    if len(dims) < 3 or any(b <= a for a, b in zip(dims, dims[1:])) or dims[0] < 1 or dims[-1] > 65536:
        raise ValueError(f"{text!r}: give at least 3 increasing dimensions from 1 to 65536")
    return dims


def _argument_problem(args: argparse.Namespace) -> str | None:
    """One line naming the first bad argument, or None; checked before the authors' side starts."""
    source = args.authors_dir / "linear_experiments_python" / "src" / "resnet" / "model_with_embedding.py"
    if not source.is_file():
        return (f"--authors-dir {args.authors_dir}: no linear_experiments_python/src/resnet/model_with_embedding.py "
                "there; clone lchizat/2026-resnets-of-all-shapes-and-sizes and give its folder")
    if not (1 <= args.steps <= 100):
        return f"--steps {args.steps}: give 1 … 100"
    if not (0 < args.eta <= 10):
        return f"--eta {args.eta}: give a rate in (0, 10]"
    if not (10 <= args.grid <= 10_000):
        return f"--grid {args.grid}: give 10 … 10000 points in s"
    if not (2 <= args.replicates <= 1000):
        return f"--replicates {args.replicates}: give 2 … 1000"
    if not (0 <= args.seed < 2**63):
        return f"--seed {args.seed}: give 0 … 2^63 − 1"
    if args.json.resolve() == COMMITTED_JSON.resolve() and COMMITTED_JSON.exists() and not args.force:
        return f"--json {args.json}: that is the committed result; give --force to replace it"
    if not args.json.parent.is_dir():
        return f"--json {args.json}: the folder {args.json.parent} does not exist"
    probe = subprocess.run([args.authors_python, "-c", "import numpy, scipy"], capture_output=True, text=True)
    if probe.returncode != 0:
        return (f"--authors-python {args.authors_python}: cannot import numpy and scipy (install them: "
                f"{args.authors_python} -m pip install numpy scipy)")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="Exit status: 0 done, 2 bad input, "
                                     "3 the authors' side failed.")
    parser.add_argument("--authors-dir", type=Path, required=True,
                        help="a checkout of lchizat/2026-resnets-of-all-shapes-and-sizes")
    parser.add_argument("--authors-python", default=sys.executable,
                        help="an interpreter with numpy and scipy for the authors' side (default: this one)")
    parser.add_argument("--cells", default="10x10x10,20x50x30,50x100x100",
                        help="cells LxMxD of the same-weights comparison, comma list (default 10x10x10,20x50x30,"
                             "50x100x100)")
    parser.add_argument("--dims", default="16,64,256,1024,4096",
                        help="embedding dimensions D of the limit comparison (default 16,64,256,1024,4096)")
    parser.add_argument("--steps", type=int, default=15, help="gradient steps K (default 15, the authors')")
    parser.add_argument("--eta", type=float, default=0.1, help="η₀ (default 0.1, the authors')")
    parser.add_argument("--grid", type=int, default=100, help="points in s of the authors' limit (default 100, theirs)")
    parser.add_argument("--replicates", type=int, default=16, help="root embeddings of the limit comparison (default 16)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument("--json", type=Path, default=COMMITTED_JSON, help="where to write the result")
    parser.add_argument("--force", action="store_true", help="allow --json to replace the committed result")
    try:
        args = parser.parse_args(argv)
        cells, dims = _parse_cells(args.cells), _parse_dims(args.dims)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.authors_dir = args.authors_dir.resolve()
    problem = _argument_problem(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    x, y = one_example_task(args.seed, D_IN, D_OUT)
    with tempfile.TemporaryDirectory() as folder:
        job = {"steps": args.steps, "eta": args.eta, "grid": args.grid, "replicates": args.replicates, "same": []}
        np.save(f"{folder}/x.npy", x.numpy())
        np.save(f"{folder}/y.npy", y.numpy())
        draws = {}
        for L, M, D in cells:
            name = f"L{L}_M{M}_D{D}"
            w_e, w_u = embedding_draws(args.seed, (LABEL, name), range(1), D, D_IN, D_OUT)
            u, v = unit_draws(args.seed, (LABEL, name), range(1), L, D, M)
            draws[name] = (w_e, w_u, u, v)
            for suffix, array in (("we", w_e[0]), ("wu", w_u[0]), ("U", u[0].permute(1, 2, 0)), ("V", v[0].permute(1, 2, 0))):
                np.save(f"{folder}/{name}_{suffix}.npy", array.contiguous().numpy())
            job["same"].append(name)
        roots = embedding_draws(args.seed, (LABEL, "roots"), range(args.replicates), max(dims), D_IN, D_OUT)
        for r in range(args.replicates):
            np.save(f"{folder}/root{r}_we.npy", roots[0][r].numpy())
            np.save(f"{folder}/root{r}_wu.npy", roots[1][r].numpy())
        Path(folder, "job.json").write_text(json.dumps(job))
        tick = time.perf_counter()
        done = subprocess.run([args.authors_python, "-c", AUTHORS_SCRIPT, folder], capture_output=True, text=True,
                              cwd=args.authors_dir / "linear_experiments_python")
        authors_wall = time.perf_counter() - tick
        if done.returncode != 0 or not Path(folder, "authors.json").is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"error: the authors' side failed (exit {done.returncode}): {last}", file=sys.stderr)
            return 3
        authors = json.loads(Path(folder, "authors.json").read_text())
        same = {}
        for name, (w_e, w_u, u, v) in draws.items():
            tick = time.perf_counter()
            ours = train(EmbeddedResNet(w_e, w_u, u, v), x, y, args.steps, args.eta)
            seconds = time.perf_counter() - tick
            theirs_h = torch.from_numpy(np.load(f"{folder}/{name}_hidden.npy"))
            theirs_f = torch.from_numpy(np.load(f"{folder}/{name}_output.npy"))
            scale = float(ours.hidden.abs().max())
            same[name] = {"hidden_max_relative_difference": float((ours.hidden[:, 0] - theirs_h).abs().max()) / scale,
                          "output_max_difference": float((ours.output[:, 0] - theirs_f).abs().max()),
                          "package_seconds": seconds, "authors_seconds": authors[name]["seconds"],
                          "speed_ratio": authors[name]["seconds"] / seconds}
        limit_f = torch.from_numpy(np.load(f"{folder}/limit_f.npy"))
        their_gamma = torch.from_numpy(np.load(f"{folder}/limit_gamma_h.npy"))          # (num_s, K, K)
        limit_h = torch.stack([torch.from_numpy(np.load(f"{folder}/root{r}_H.npy")) for r in range(args.replicates)])
    # the package at M = ∞, depth grid − 1 (layer l at s = l/(grid − 1)), on the first D rows of each root
    depth = args.grid - 1
    hidden_errors, output_errors, package_seconds = [], [], 0.0
    their_states = limit_h.permute(3, 0, 2, 1)                       # (K, R, num_s, D_max)
    for dim in dims:
        tick = time.perf_counter()
        ours = train(InfiniteWidthResNet(roots[0][:, :dim], roots[1][:, :dim], depth, args.steps), x, y, args.steps,
                     args.eta)
        package_seconds += time.perf_counter() - tick
        hidden_errors.append(hidden_error(ours.hidden, their_states[..., :dim]).T)          # (R, K)
        output_errors.append(output_error(ours.output, limit_f[:, None, :].expand_as(ours.output)).T)
    hidden_errors, output_errors = torch.stack(hidden_errors), torch.stack(output_errors)  # (dims, R, K)
    # the package's own limit (L, M, D → ∞: limits.embedded_resnet.depth_limit) against theirs, on the same layers
    tick = time.perf_counter()
    own = depth_limit(x, y, depth, args.steps, args.eta)
    own_seconds = time.perf_counter() - tick
    own_gamma = limit_correlations(own.hidden)
    own_errors = hidden_error(limit_states(own.hidden, roots[0], roots[1]), their_states).mean(-1)   # (K,)
    fits = {space: [power_fit(dims, values[:, :, k].numpy(), confidence=0.95, resamples=2000, seed=args.seed)
                    for k in range(args.steps)] for space, values in (("hidden", hidden_errors), ("output", output_errors))}
    payload = {
        "what": "Chaintron, Chizat & Maass (2026): the authors' finite ResNet and D → ∞ limit against limits.embedded_resnet",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "settings": {"cells": [list(c) for c in cells], "dims": dims, "steps": args.steps, "eta": args.eta,
                     "grid": args.grid, "replicates": args.replicates, "seed": args.seed, "dtype": "float64",
                     "threads": 1},
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch": torch.__version__,
                    "authors": authors["versions"]},
        "same_weights": same,
        "limit": {"depth": depth, "dims": dims,
                  "hidden_error_mean": hidden_errors.mean(1).T.tolist(),       # step × dim
                  "output_error_mean": output_errors.mean(1).T.tolist(),
                  "hidden_exponent": [{"step": k, "exponent": -f["slope"], "ci": [-f["ci"][1], -f["ci"][0]]}
                                      for k, f in enumerate(fits["hidden"]) if f["slope"] is not None],
                  "output_exponent": [{"step": k, "exponent": -f["slope"], "ci": [-f["ci"][1], -f["ci"][0]]}
                                      for k, f in enumerate(fits["output"]) if f["slope"] is not None],
                  "authors_correlations_seconds": authors["correlations_seconds"],
                  "authors_processes_seconds": authors["limit_seconds"], "package_seconds": package_seconds},
        "own_limit": {"depth": depth, "reference_bias": own.bias, "package_seconds": own_seconds,
                      "authors_correlations_seconds": authors["correlations_seconds"],
                      "output_max_difference": float((own.output[:, 0] - limit_f).abs().max()),
                      "output_scale": float(limit_f.abs().max()),
                      "correlation_max_difference": float((own_gamma - their_gamma).abs().max()),
                      "correlation_scale": float(their_gamma.abs().max()),
                      "hidden_error_mean": own_errors.tolist(),
                      "hidden_scale": float(their_states.abs().mean())},
        "authors_wall_seconds": authors_wall,
    }
    text = json.dumps(payload, indent=1)
    partial = args.json.with_name(args.json.name + ".part")
    partial.write_text(text)
    os.replace(partial, args.json)
    _print_summary(payload)
    print(f"wrote {args.json}")
    return 0


def _print_summary(payload: dict[str, Any]) -> None:
    print("same weights (their FiniteResNetWithEmbedding against EmbeddedResNet, K steps, float64, one thread):")
    for name, cell in payload["same_weights"].items():
        print(f"  {name:>16}: hidden states differ by {cell['hidden_max_relative_difference']:.1e} (relative), "
              f"outputs by {cell['output_max_difference']:.1e}; {cell['authors_seconds']:.3f} s against "
              f"{cell['package_seconds']:.3f} s (×{cell['speed_ratio']:.1f})")
    limit = payload["limit"]
    print(f"their D → ∞ limit against the package's M = ∞ network (depth {limit['depth']}), mean over "
          f"{payload['settings']['replicates']} root embeddings:")
    steps = payload["settings"]["steps"]
    for k in sorted({min(1, steps - 1), min(5, steps - 1), steps - 1}):
        errors = ", ".join(f"{e:.2e}" for e in limit["hidden_error_mean"][k])
        fit = next((f for f in limit["hidden_exponent"] if f["step"] == k), None)
        shown = "—" if fit is None else f"{fit['exponent']:.3f} [{fit['ci'][0]:.3f}, {fit['ci'][1]:.3f}]"
        print(f"  step {k:>2}: errors at D = {limit['dims']}: {errors}; exponent in D {shown} (paper: 0.5)")
    own = payload["own_limit"]
    print(f"the package's own limit (L, M, D → ∞) against theirs: outputs differ by {own['output_max_difference']:.1e} "
          f"(of {own['output_scale']:.2f}), correlations by {own['correlation_max_difference']:.1e} (of "
          f"{own['correlation_scale']:.2f}), per-coordinate states by {max(own['hidden_error_mean']):.1e} at most "
          f"(the authors' error, of {own['hidden_scale']:.2f}); {own['package_seconds']:.1f} s against their "
          f"{own['authors_correlations_seconds']:.1f} s for the correlations")


if __name__ == "__main__":
    sys.exit(main())
