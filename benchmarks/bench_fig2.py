"""Timing: Marion et al.'s Fig. 2 at the paper's size (10⁴ networks, L = 1000, d = 100), budget 15 minutes on 2 cores.

    python benchmarks/bench_fig2.py                                  # float32, 2 workers, 10 000 networks
    python benchmarks/bench_fig2.py --dtype float64 --workers 1 --samples 500      # the earlier way, fewer networks

Each run is :func:`validation.regimes.run` with the ``fig2`` preset, timed end to end (drawing 2·10⁷ uniform weights
per network, the forward and backward passes, the summaries). The networks are shared out in blocks of
``validation.regimes.FIG2_BLOCK`` to ``--workers`` single-threaded processes; each network draws from its own
streams, so the numbers do not depend on the workers. Results go to ``benchmarks/results/bench_fig2.json`` with
the quartiles, the budget check, the machine and versions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation.regimes import study as regimes  # noqa: E402
from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402

BUDGET_S = 900.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10_000, help="networks (default: the paper's 10 000)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32", help="dtype of the run")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2: the 2 cores)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (then --workers 1)")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_fig2.json"),
                        help="where the timing is written")
    args = parser.parse_args(argv)
    started = utc_now()
    clock = time.perf_counter()
    result = regimes.run("fig2", samples=args.samples, dtype=args.dtype, workers=args.workers, device=args.device)
    seconds = time.perf_counter() - clock
    forward = result.numbers["forward"]
    print(f"fig2, {args.samples} networks, {args.dtype}, {args.workers} worker(s), {args.device}: {seconds:.0f} s "
          f"(budget {BUDGET_S:g} s: {'ok' if seconds <= BUDGET_S else 'OVER'}); quartiles of ||h_L||/||h_0|| "
          f"{', '.join(f'{q:.3f}' for q in forward['quartiles'])}; verdict {result.verdict}")
    info = RunInfo.capture(seed=0, dtype=args.dtype, device=args.device, started=started, wall_time_s=seconds,
                           command=" ".join(sys.argv))
    write_json(args.json, {"benchmark": "bench_fig2", "budget_s": BUDGET_S, "samples": args.samples,
                           "workers": args.workers, "seconds": seconds, "within_budget": seconds <= BUDGET_S,
                           "quartiles": forward["quartiles"], "verdict": result.verdict,
                           "checks": result.numbers["checks"], "run": info.to_dict()})
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
