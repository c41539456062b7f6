"""The variance of torchsde's Lévy-area approximations against the exact conditional moments.

    python docs/investigations/torchsde_levy_area_variance.py

For a 2-D Brownian motion over [0, 1] with increment W and space-time area H, the Lévy area A = ½(∫W¹dW² − ∫W²dW¹)
has E[A | W, H] = H₁W₂ − W₁H₂, conditional variance 1/20 + (H₁² + H₂²)/5 (mean 1/12) and variance 1/4. The script
regresses the squared residual A − E[A | W, H] on H₁² + H₂² for torchsde's BrownianInterval (``davie``, ``foster``)
and for the package's ``limits.brownian.record_path(..., areas="levy")`` on one step, 200000 samples each.
Write-up: docs/results/solvers.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torchsde

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from limits.brownian import levy_area_matrix, record_path  # noqa: E402

SAMPLES = 200_000


def moments(w: torch.Tensor, h: torch.Tensor, a: torch.Tensor) -> str:
    residual = a - (h[:, 0] * w[:, 1] - w[:, 0] * h[:, 1])
    design = torch.stack([torch.ones_like(residual), h[:, 0] ** 2 + h[:, 1] ** 2], 1)
    constant, slope = torch.linalg.lstsq(design, (residual**2).unsqueeze(1)).solution.squeeze().tolist()
    return (f"Var A {a.var().item():.4f} (exact 0.25); residual variance {residual.var().item():.4f} (exact 0.0833); "
            f"conditional variance ≈ {constant:.4f} + {slope:.4f}(H1² + H2²) (exact 0.05 + 0.2(…))")


def main() -> None:
    for approximation in ("davie", "foster"):
        bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(SAMPLES, 2), dtype=torch.float64, entropy=1,
                                       levy_area_approximation=approximation)
        w, u, a = bm(0.0, 1.0, return_U=True, return_A=True)
        print(f"torchsde {approximation:7s}", moments(w, u - 0.5 * w, a[:, 0, 1]))
    path = record_path(SAMPLES, 2, 1, seed=1, areas="levy")
    w, h = path.increments[0], path.areas[0]
    print("package record_path", moments(w, h, levy_area_matrix(path.levy_areas[0], 2)[:, 0, 1]))


if __name__ == "__main__":
    main()
