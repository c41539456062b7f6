"""float32 against float64 arithmetic in res-1's default strong-error study, over seeds: how much of a rate's change
is rounding and how much is another sample (docs/theory.md §6, "Computing in float32").

For each seed, three runs of ``validation.convergence.run`` at the default sizes:

* ``float64``: the default study;
* ``float32``: ``dtype="float32"`` as shipped — its inputs h_0 are drawn by ``torch.randn`` in float32, other
  numbers than the float64 draw of the same seed (the path is the same float32 draw in both);
* ``float32, same samples``: float32 arithmetic on the float64 study's very inputs (drawn in float64 and cast),
  so that only the rounding differs.

Printed per seed and summarised (mean and standard deviation of the rate differences, the largest relative change
of an RMS error); ``--json`` writes every number.

Usage: ``python benchmarks/float32_same_samples.py [--seeds 20] [--json benchmarks/results/float32_same_samples.json]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from limits.res_sde import Res1SDE
from limits.seeding import generator
from validation import convergence
from validation.core.results import RunInfo, utc_now


class SameInputRes1(Res1SDE):
    """res-1 whose inputs are drawn in float64 and cast to the study's dtype."""

    name = "res1-same-input"

    def initial_state(self) -> torch.Tensor:
        gen = generator(self.seed, "input", device=self.device)
        return torch.randn((self.samples, self.width), generator=gen, dtype=torch.float64,
                           device=self.device).to(self.dtype)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0 … N−1 (default 20)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    started = utc_now()
    rows = []
    for seed in range(args.seeds):
        runs = {"float64": convergence.run("res1", seed=seed),
                "float32": convergence.run("res1", seed=seed, dtype="float32"),
                "float32, same samples": convergence.run(SameInputRes1, seed=seed, dtype="float32")}
        base = np.asarray(runs["float64"].fit.errors)
        row = {"seed": seed}
        for name, result in runs.items():
            row[name] = {"rate": result.rate, "ci": list(result.fit.ci), "verdict": result.verdict,
                         "study_seconds": result.run_info.wall_time_s,
                         "largest_relative_error_change": float(np.max(np.abs(np.asarray(result.fit.errors) / base - 1)))}
        rows.append(row)
        print(f"seed {seed:2d}: " + "  ".join(f"{name} {row[name]['rate']:.5f}" for name in runs), flush=True)
    summary = {}
    for name in ("float32", "float32, same samples"):
        differences = np.array([row[name]["rate"] - row["float64"]["rate"] for row in rows])
        summary[name] = {"mean_rate_difference": float(differences.mean()),
                         "sd_rate_difference": float(differences.std(ddof=1)) if len(rows) > 1 else 0.0,
                         "largest_abs_rate_difference": float(np.abs(differences).max()),
                         "largest_relative_error_change": max(row[name]["largest_relative_error_change"] for row in rows),
                         "median_study_seconds": float(np.median([row[name]["study_seconds"] for row in rows]))}
        print(f"{name:22s} minus float64: rate {summary[name]['mean_rate_difference']:+.6f} on average "
              f"(sd {summary[name]['sd_rate_difference']:.6f}, largest {summary[name]['largest_abs_rate_difference']:.2e}); "
              f"RMS errors change by at most {summary[name]['largest_relative_error_change']:.1e} relative")
    print(f"median study seconds: float64 {np.median([r['float64']['study_seconds'] for r in rows]):.2f}, "
          f"float32 {summary['float32']['median_study_seconds']:.2f}")
    if args.json is not None:
        payload = {"benchmark": "float32_same_samples", "seeds": args.seeds, "rows": rows, "summary": summary,
                   "run": RunInfo.capture(seed=0, dtype="float64/float32", device="cpu", started=started,
                                          wall_time_s=(utc_now() - started).total_seconds(),
                                          command=" ".join(sys.argv)).to_dict()}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
