"""Every study on every device: the same settings on the CPU and on a GPU, side by side.

    python benchmarks/bench_devices.py                      # cpu, and cuda when there is one
    python benchmarks/bench_devices.py --json devices.json --devices cpu,cuda

For each study (convergence on an SDE and an ODE pair, the ablation, the weak study, a regimes preset and
the phase diagram) at a small size, it runs ``run(..., device=D)`` for each device, and prints the verdict,
the main number (a fitted rate or a critical β) and the wall time. The numbers on a GPU are not the CPU's
bit for bit — the random streams are the same generators' on another device, and the kernels sum in
another order — so the check is that every study *runs* on the device it is given, gives the same
verdicts, and numbers of the same size; the table is the evidence for that.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation import ablation, convergence, weak  # noqa: E402
from validation.phase import study as phase
from validation.regimes import study as regimes
from validation.core.results import RunInfo, utc_now, write_json  # noqa: E402

#: name → (run at a device, the main number of its result)
STUDIES: dict[str, tuple[Callable[[str], Any], Callable[[Any], float]]] = {
    "convergence res1": (lambda device: convergence.run("res1", samples=200, depths=(4, 8, 16, 32, 64),
                                                        reference_steps=2048, device=device),
                         lambda r: r.rate),
    "convergence res2-ode": (lambda device: convergence.run("res2-ode", samples=50, depths=(8, 16, 32, 64, 128),
                                                            device=device),
                             lambda r: r.rate),
    "ablation": (lambda device: ablation.run(samples=200, depths=(8, 16, 32, 64, 128), reference_steps=2048,
                                             fit_from=16, device=device),
                 lambda r: r.corrected.rate),
    "weak": (lambda device: weak.run(draws=2000, width=50, depth=50, sde_steps=50, weak_draws=2000,
                                     weak_depths=(4, 8, 16, 32), weak_reference=512, weak_fit_from=8,
                                     device=device),
             lambda r: r.fits["swish"]["sqnorm"]["network"].rate),
    "regimes fig1": (lambda device: regimes.run("fig1", samples=20, depths=(10, 100, 1000), device=device),
                     lambda r: r.numbers["critical_beta_estimate"]["r_h"]),
    "phase": (lambda device: phase.run(hursts=(0.3, 0.6, 0.9), betas=tuple(0.2 + 0.1 * i for i in range(12)),
                                       depth=256, networks=4, inputs=4, workers=1, device=device),
              lambda r: r.numbers["critical_beta"]["depth_r_h"][1]),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="cpu,cuda" if torch.cuda.is_available() else "cpu",
                        help="comma-separated devices (default: cpu, and cuda when available)")
    parser.add_argument("--json", type=Path, default=None, help="write the table as JSON to this file")
    args = parser.parse_args(argv)
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    torch.set_num_threads(1)
    started, clock = utc_now(), time.perf_counter()
    rows = []
    print(f"{'study':22s} {'device':7s} {'verdict':7s} {'number':>9s} {'seconds':>8s}")
    for name, (run, number) in STUDIES.items():
        for device in devices:
            t0 = time.perf_counter()
            result = run(device)
            seconds = time.perf_counter() - t0
            value = number(result)
            rows.append({"study": name, "device": device, "ran_on": result.run_info.device,
                         "verdict": result.verdict, "number": value, "seconds": seconds})
            print(f"{name:22s} {result.run_info.device:7s} {result.verdict:7s} {value:9.4f} {seconds:8.1f}", flush=True)
    if args.json:
        info = RunInfo.capture(seed=0, dtype="float64", device=",".join(devices), started=started,
                               wall_time_s=time.perf_counter() - clock, command=" ".join(sys.argv))
        write_json(args.json, {"benchmark": "every study on every device", "rows": rows, "run": info.to_dict(),
                               "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
