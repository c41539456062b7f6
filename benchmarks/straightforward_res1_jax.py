"""The res-1 strong-error study hand-written in JAX, tuned for speed — the second peer that
``benchmarks/bench_whole_process.py`` times against ``python -m validation.convergence --model res1`` (when JAX is
installed; it is not a dependency of the package).

Self-contained (jax, numpy, scipy; nothing from this package), the sizes of the package's default study: N = 500
inputs of width d = 10 on the unit sphere, tanh, the network h_{k+1} = h_k + ΔB_k tanh(h_k)/√d with ΔB_k the
increment of one d×d Brownian path over [k/L, (k+1)/L], depths L = 4 … 256, and the limit dH = dB tanh(H)/√d by
Euler–Maruyama at 8192 steps **on the same path**. The path is drawn in float32 (as the package draws it) and the
arithmetic is float64.

Tuned as a JAX user would tune it: one ``lax.scan`` over the 256 steps of the deepest network, each drawing its 32
fine increments from the fastest generator (``unsafe_rbg``), taking the reference's 32 Euler steps (an inner scan,
unrolled by 8) and the step of every depth whose step ends there (``lax.cond``: the shallower depths add up the
increments until then); the samples split in two halves on two CPU devices (``pmap``, both cores); compiled once.
The RMS error of h_L against H_1 is fitted by a log-log line with a paired bootstrap interval (scipy, 2000
resamples), as the torchsde peer does.

Usage: ``python benchmarks/straightforward_res1_jax.py [--samples 500] [--devices 2] [--unroll 8]`` with a Python
that has JAX (``pip install jax``; measured with JAX 0.10.2 in a separate virtual environment).
"""

from __future__ import annotations

import argparse
import math
import os
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--width", type=int, default=10)
    parser.add_argument("--reference-steps", type=int, default=8192)
    parser.add_argument("--devices", type=int, default=2, help="CPU devices the samples are split over (cores)")
    parser.add_argument("--unroll", type=int, default=8, help="unrolling of the reference's inner scan (8 was the "
                        "fastest of 1, 4, 8, 32 here: 19.0, 14.8, 13.9, 16.2 s)")
    args = parser.parse_args()
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={args.devices}").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import numpy as np
    from scipy import stats

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_default_prng_impl", "unsafe_rbg")
    n, d, fine = args.samples, args.width, args.reference_steps
    depths = [4, 8, 16, 32, 64, 128, 256]
    deepest = depths[-1]
    per_block = fine // deepest
    if n % args.devices or fine % deepest:
        sys.exit(f"--samples must be a multiple of --devices and --reference-steps of {deepest}")
    scale = 1.0 / math.sqrt(d)

    def step(h, increment):
        """h + ΔB tanh(h)/√d for h (m, d) and ΔB (m, d²)."""
        return h + jnp.einsum("mij,mj->mi", increment.reshape(-1, d, d), jnp.tanh(h)) * scale

    def errors(key, h0):
        """Squared errors (m, depths) of every depth against the reference, for one device's m samples."""
        m = h0.shape[0]

        def block(carry, index):
            reference, states, sums = carry
            draws = jax.random.normal(jax.random.fold_in(key, index), (per_block, m, d * d), jnp.float32)
            draws = draws.astype(jnp.float64) * math.sqrt(1.0 / fine)
            reference, _ = jax.lax.scan(lambda h, dw: (step(h, dw), None), reference, draws, unroll=args.unroll)
            total = draws.sum(axis=0)
            new_states, new_sums = [], []
            for depth, h, acc in zip(depths, states, sums):
                acc = acc + total
                ends = (index + 1) % (deepest // depth) == 0
                h = jax.lax.cond(ends, lambda h, acc: step(h, acc), lambda h, acc: h, h, acc)
                new_states.append(h)
                new_sums.append(jnp.where(ends, 0.0, acc))
            return (reference, tuple(new_states), tuple(new_sums)), None

        zeros = jnp.zeros((m, d * d), jnp.float64)
        start = (h0, tuple(h0 for _ in depths), tuple(zeros for _ in depths))
        (reference, states, _), _ = jax.lax.scan(block, start, jnp.arange(deepest))
        return jnp.stack([((h - reference) ** 2).sum(-1) for h in states], axis=1)

    key = jax.random.key(0)
    h0 = jax.random.normal(jax.random.fold_in(key, 1), (n, d), jnp.float64)
    h0 = h0 / jnp.linalg.norm(h0, axis=1, keepdims=True)
    keys = jax.random.split(jax.random.fold_in(key, 2), args.devices)
    squared = jax.pmap(errors)(keys, h0.reshape(args.devices, n // args.devices, d))
    squared = np.asarray(squared).reshape(n, len(depths))
    log_depths = np.log(depths)

    def rate(*columns, axis=-1):
        rms = np.sqrt(np.stack([np.mean(c, axis=axis) for c in columns], axis=-1))
        return -np.polyfit(log_depths, np.log(rms).reshape(-1, len(depths)).T, 1)[0].reshape(rms.shape[:-1])

    interval = stats.bootstrap(tuple(squared.T), rate, paired=True, vectorized=True, n_resamples=2000,
                               random_state=np.random.default_rng(0)).confidence_interval
    print(f"rate {float(rate(*squared.T)):.3f}  95% CI [{interval.low:.3f}, {interval.high:.3f}]")


if __name__ == "__main__":
    main()
