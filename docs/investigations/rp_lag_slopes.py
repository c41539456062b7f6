"""Slopes of log10 median r_h, r_p vs log10 L at fixed β (full nonlinear res-3, d=40), bootstrap over networks."""
import sys, time, numpy as np, torch
torch.set_num_threads(1)
from limits.initialisation import Block, FractionalRegime, measure_ratios
hursts = [float(x) for x in sys.argv[1].split(",")]
betas = [float(x) for x in sys.argv[2].split(",")]
depths = [int(x) for x in sys.argv[3].split(",")]
nets, inputs, width = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]) if len(sys.argv) > 6 else 40
rng = np.random.default_rng(1)
out = {}
for H in hursts:
    logs = {}
    for L in depths:
        t = time.time()
        res = measure_ratios(FractionalRegime(H), L, betas, nets, inputs, width, 64, Block("res3"), seed=7,
                             label=("rp_lag", L), dtype=torch.float32)
        for key in ("r_h", "r_p"):
            r = getattr(res, key).double().numpy()  # (β, nets, inputs)
            logs[(key, L)] = np.log10(np.where(np.isfinite(r), r, np.inf))
        print(f"H={H} L={L} {time.time()-t:.1f}s", file=sys.stderr, flush=True)
    B = 300
    for key in ("r_h", "r_p"):
        for bi, b in enumerate(betas):
            meds = {L: np.median(logs[(key, L)][bi]) for L in depths}
            boots = {L: np.array([np.median(logs[(key, L)][bi][rng.integers(0, nets, nets)]) for _ in range(B)]) for L in depths}
            row = []
            for L0, L1 in zip(depths, depths[1:]):
                s = (meds[L1] - meds[L0]) / np.log10(L1 / L0)
                sb = (boots[L1] - boots[L0]) / np.log10(L1 / L0)
                sb = sb[np.isfinite(sb)]
                row.append(f"{L0}->{L1}: {s:+.3f}±{np.std(sb):.3f}")
            print(f"H={H} {key} β={b:.2f} log10med " + " ".join(f"{meds[L]:+.2f}" for L in depths) + " | slope " + "  ".join(row), flush=True)
