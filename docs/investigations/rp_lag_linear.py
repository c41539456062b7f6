"""First-order (α→0) sums for res-3 at h_k = h_0:
   S_h = Σ_k V_k ReLU(W_k h0),   S_p = Σ_k W_kᵀ D_k V_kᵀ p,  D_k = diag(1{W_k h0 > 0}).
 r_h ≈ α‖S_h‖/‖h0‖, r_p ≈ α‖S_p‖/‖p‖ so the growth exponent of median ‖S‖ in L is the critical β.
 Exact split using the conditional means given h0 (Gaussian rows, var 1/d):
   ReLU(W h0) = m·1 + f,      m = ‖h0‖/√(2πd)          -> S_h = coh_h + inc_h, coh_h = m Σ V_k 1
   W_kᵀ D_k   = ĥ1ᵀ/√(2πd) + F_k                        -> S_p = coh_p + inc_p, coh_p = ĥ 1ᵀ Σ V_kᵀ p /√(2πd)"""
import sys, math, numpy as np, torch
torch.set_num_threads(1)
from limits.initialisation import FractionalRegime
hursts = [float(x) for x in sys.argv[1].split(",")]
depths = [int(x) for x in sys.argv[2].split(",")]
nets = int(sys.argv[3]); widths = [int(x) for x in sys.argv[4].split(",")]
rng = np.random.default_rng(2)
for d in widths:
    for H in hursts:
        res = {}
        for L in depths:
            vals = np.zeros((nets, 6))
            for i in range(nets):
                V, W = FractionalRegime(H).network_weights(11, ("lin", d, L, i), L, d, torch.float32, "cpu")
                g = torch.Generator().manual_seed(1000 * i + L + d)
                h = torch.randn(d, generator=g); p = torch.randn(d, generator=g)
                hn, pn = h.norm(), p.norm()
                pre = W @ h                      # (L, d)
                relu = pre.clamp_min(0)
                m = hn / math.sqrt(2 * math.pi * d)
                Sh = (V @ relu.unsqueeze(-1)).squeeze(-1).sum(0)
                coh_h = m * V.sum(2).sum(0)
                u = (V.transpose(1, 2) @ p) * (pre > 0)          # D V^T p, (L, d)
                Sp = (W.transpose(1, 2) @ u.unsqueeze(-1)).squeeze(-1).sum(0)
                vtp = V.transpose(1, 2) @ p                       # (L, d)
                coh_p = (h / hn) * vtp.sum() / math.sqrt(2 * math.pi * d)
                vals[i] = [Sh.norm() / hn, coh_h.norm() / hn, (Sh - coh_h).norm() / hn,
                           Sp.norm() / pn, coh_p.norm() / pn, (Sp - coh_p).norm() / pn]
            res[L] = np.log10(vals)
        names = ["S_h", "coh_h", "inc_h", "S_p", "coh_p", "inc_p"]
        for j, nm in enumerate(names):
            meds = [np.median(res[L][:, j]) for L in depths]
            sl = []
            for L0, L1 in zip(depths, depths[1:]):
                s = (np.median(res[L1][:, j]) - np.median(res[L0][:, j])) / math.log10(L1 / L0)
                bs = [(np.median(res[L1][rng.integers(0, nets, nets), j]) - np.median(res[L0][rng.integers(0, nets, nets), j])) / math.log10(L1 / L0) for _ in range(300)]
                sl.append(f"{s:.3f}±{np.std(bs):.3f}")
            rms = [0.5 * np.log10(np.mean(10 ** (2 * res[L][:, j]))) for L in depths]
            sr = []
            for L0, L1 in zip(depths, depths[1:]):
                bs = []
                for _ in range(300):
                    a = res[L0][rng.integers(0, nets, nets), j]; b = res[L1][rng.integers(0, nets, nets), j]
                    bs.append((0.5*np.log10(np.mean(10**(2*b))) - 0.5*np.log10(np.mean(10**(2*a)))) / math.log10(L1 / L0))
                s = (rms[depths.index(L1)] - rms[depths.index(L0)]) / math.log10(L1 / L0)
                sr.append(f"{s:.3f}±{np.std(bs):.3f}")
            print(f"d={d} H={H} {nm:6s} log10 med " + " ".join(f"{x:+.2f}" for x in meds) + " | exp(med) " + " ".join(sl)
                  + " | log10 rms " + " ".join(f"{x:+.2f}" for x in rms) + " | exp(rms) " + " ".join(sr), flush=True)
