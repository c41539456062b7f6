"""The res-1 strong-error study as a user writes it first with torchsde — the peer that
``benchmarks/bench_whole_process.py`` times against ``python -m validation.convergence --model res1``.

Self-contained (torch, torchsde, numpy, scipy; nothing from this package), the same sizes as the package's default
study: N = 500 inputs of width d = 10, tanh, the network h_{k+1} = h_k + V_{k+1} tanh(h_k)/√d with V_{k+1} the
increment of one d×d Brownian path B over [k/L, (k+1)/L], depths L = 4 … 256, and the limit dH = dB tanh(H)/√d by
``torchsde.sdeint(method="euler", dt=1/8192)``. Every depth and the reference read **one shared**
``torchsde.BrownianInterval`` (the documented way to couple solves on one path), torch on 2 threads. The RMS error
of h_L against H_1 is fitted by a log-log line with a paired bootstrap interval (scipy, 2000 resamples).

Usage: ``python benchmarks/straightforward_res1.py [--samples 500] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
import torchsde
from scipy import stats


class Res1Limit(torchsde.SDEIto):
    """dH = dB tanh(H)/√d, B a d×d Brownian matrix read as d² channels (general noise, only g·dB)."""

    def __init__(self, width: int) -> None:
        super().__init__(noise_type="general")
        self.width = width

    def f(self, t, y):
        return torch.zeros_like(y)

    def g_prod(self, t, y, v):
        return torch.bmm(v.view(-1, self.width, self.width), torch.tanh(y).unsqueeze(-1)).squeeze(-1) / math.sqrt(self.width)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--width", type=int, default=10)
    parser.add_argument("--reference-steps", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    n, d, depths = args.samples, args.width, [4, 8, 16, 32, 64, 128, 256]
    h0 = torch.randn(n, d, dtype=torch.float64)
    h0 = h0 / h0.norm(dim=1, keepdim=True)
    path = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(n, d * d), dtype=torch.float64, halfway_tree=True,
                                     tol=1e-12, entropy=0)
    limit = Res1Limit(d)
    ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
    reference = torchsde.sdeint(limit, h0, ts, bm=path, method="euler", dt=1.0 / args.reference_steps)[-1]
    squared = []
    for depth in depths:
        h = h0
        for k in range(depth):
            h = h + limit.g_prod(None, h, path(k / depth, (k + 1) / depth))
        squared.append(((h - reference) ** 2).sum(-1).numpy())
    squared = np.stack(squared, axis=1)
    log_depths = np.log(depths)

    def rate(*columns, axis=-1):
        rms = np.sqrt(np.stack([np.mean(c, axis=axis) for c in columns], axis=-1))
        return -np.polyfit(log_depths, np.log(rms).reshape(-1, len(depths)).T, 1)[0].reshape(rms.shape[:-1])

    interval = stats.bootstrap(tuple(squared.T), rate, paired=True, vectorized=True, n_resamples=2000,
                               random_state=np.random.default_rng(0)).confidence_interval
    print(f"rate {float(rate(*squared.T)):.3f}  95% CI [{interval.low:.3f}, {interval.high:.3f}]")


if __name__ == "__main__":
    main()
