"""Scratch: one pf study, per-sample errors saved, fits from several starting depths, tail diagnostics."""
import time, argparse
import numpy as np, torch
torch.set_num_threads(1)
from limits import ModelConfig, get_pair
from validation.core.one_pass import study_errors
from validation.core.rate_fit import fit_rate

p = argparse.ArgumentParser()
p.add_argument("--phi", default="swish"); p.add_argument("--sw", type=float, default=1.0)
p.add_argument("--sb", type=float, default=1.0); p.add_argument("--seed", type=int, default=0)
p.add_argument("--maxdepth", type=int, default=1024); p.add_argument("--ref", type=int, default=32768)
p.add_argument("--samples", type=int, default=1000); p.add_argument("--tag", default="")
a = p.parse_args()
depths = [2**k for k in range(3, int(np.log2(a.maxdepth)) + 1)]
cfg = ModelConfig(width=6, activation=a.phi, options={"sigma_w": str(a.sw), "sigma_b": str(a.sb)})
pair = get_pair("pf")(cfg, a.samples, seed=a.seed, dtype=torch.float64, device="cpu")
t0 = time.perf_counter()
e = study_errors(pair, depths, reference_steps=a.ref, seed=a.seed)
tag = a.tag or f"{a.phi}_sw{a.sw}_s{a.seed}_L{a.maxdepth}"
np.savez(f"{tag}.npz", depths=depths, final=e.final_sq, second=e.final_sq_second, succ=e.successive_sq)
sq = e.final_sq
rms = np.sqrt(sq.mean(0)); mn = np.sqrt(sq).mean(0)
print(f"== {tag}: phi={a.phi} d1={pair.activation.d1} d2={pair.activation.d2} sw=sb={a.sw},{a.sb} N={a.samples} ref={a.ref} ({time.perf_counter()-t0:.0f}s)")
print("L      rms     rms*sqrtL  mean*sqrtL  top1%share  kurt(|e|)  succ*sqrtL")
for j, L in enumerate(depths):
    s = np.sort(sq[:, j])[::-1]
    top = s[: max(1, len(s)//100)].sum() / s.sum()
    ae = np.sqrt(sq[:, j]); k = np.mean((ae-ae.mean())**4)/np.var(ae)**2
    sc = np.sqrt(e.successive_sq[:, j].mean())*np.sqrt(L) if j < len(depths)-1 else float('nan')
    print(f"{L:5d}  {rms[j]:.4f}  {rms[j]*np.sqrt(L):.3f}     {mn[j]*np.sqrt(L):.3f}      {top:.3f}       {k:.1f}     {sc:.3f}")
for ff in (32, 64, 128, 256):
    if sum(d >= ff for d in depths) < 3: continue
    out = []
    for m in ("rms", "mean"):
        f = fit_rate(depths, sq, m, fit_from=ff, resamples=1000, seed=a.seed)
        out.append(f"{m} {f.rate:.3f} [{f.ci[0]:.3f},{f.ci[1]:.3f}]")
    sd = depths[:-1]
    f = fit_rate(sd, e.successive_sq, "rms", fit_from=ff, resamples=1000, seed=a.seed)
    out.append(f"succ {f.rate:.3f} [{f.ci[0]:.3f},{f.ci[1]:.3f}]")
    print(f"fit from {ff}: " + "; ".join(out))
# trimmed: drop the 1% of paths with the largest error at the deepest depth... use worst over all depths
worst = sq.max(1); keep = worst <= np.quantile(worst, 0.99)
f = fit_rate(depths, sq[keep], "rms", fit_from=32, resamples=1000, seed=a.seed)
print(f"rms fit from 32 without the 1% worst paths: {f.rate:.3f} [{f.ci[0]:.3f},{f.ci[1]:.3f}]")
