"""Why SRK measures 1.387 on geometric Brownian motion (res-1 at width 1, σ = id, seed 4): the reference, or tails?

    python docs/investigations/gbm_srk_tails.py SAMPLES SEED      # e.g. 4000 4, then 40000 4 and 40000 5

SRK (torchsde, order 1.5) on dH = s H dB against the closed form H_1 = H_0 exp(s W_1 − s²/2) on the same path
(limits.brownian.record_path, 2048 fine steps with exact space-time areas), at L = 4 … 1024. Prints the RMS error per
depth and its fitted slope (all depths, and L ≥ 32), the slopes of the median and the 90% quantile of |error| and of
the RMS relative error, and the share of the mean square carried by the worst 1% of paths at L = 256.
Write-up: docs/results/solvers.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from limits import make_pair  # noqa: E402
from limits.brownian import record_path  # noqa: E402
from limits.schemes import get_sde_scheme  # noqa: E402

DEPTHS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def main(samples: int, seed: int) -> None:
    pair = make_pair("res1", samples=samples, width=1, activation="identity")
    limit, h0 = pair.limit_sde(), pair.initial_state()
    path = record_path(samples, 1, 2048, seed=seed, areas="space-time")
    exact = limit.exact_solution(h0, path)
    srk = get_sde_scheme("srk")(limit, "scalar")
    errors = np.array([(srk.integrate(h0, path, L) - exact).abs().squeeze(-1).numpy() for L in DEPTHS])
    logs = np.log(DEPTHS)

    def slope(values, start=0):
        return -np.polyfit(logs[start:], np.log(values[start:]), 1)[0]

    rms = np.sqrt((errors**2).mean(1))
    relative = np.sqrt(((errors / np.abs(exact.squeeze(-1).numpy())) ** 2).mean(1))
    print(f"samples {samples}, seed {seed}")
    print("RMS error by L:", " ".join(f"{L}: {e:.2e}" for L, e in zip(DEPTHS, rms)))
    print(f"RMS slope {slope(rms):.3f} (L >= 32: {slope(rms, 3):.3f}); median |e| {slope(np.median(errors, 1)):.3f}; "
          f"90% quantile {slope(np.quantile(errors, 0.9, 1)):.3f}; RMS relative error {slope(relative):.3f}")
    worst = np.sort(errors[DEPTHS.index(256)] ** 2)[::-1]
    print(f"share of the mean square at L = 256 from the worst 1% of paths: {worst[: samples // 100].sum() / worst.sum():.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000, int(sys.argv[2]) if len(sys.argv) > 2 else 4)
