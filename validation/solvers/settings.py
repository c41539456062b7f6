"""The solver study's settings: the pair and its size, the rate fit, the reference, the schemes, the problem and the
timing protocol (read by :mod:`validation.solvers.study` and :mod:`validation.solvers.runs`)."""

from __future__ import annotations

from dataclasses import dataclass


from limits.problems import PROBLEMS
from limits.schemes import ODE_ADAPTIVE_SCHEMES, ODE_FIXED_SCHEMES, SDE_SCHEMES
from validation.core.pair_study import PairSettings, RateFitSettings, ReferenceSettings
from validation.core.workers import check_workers
from validation.core.settings import SettingsError, check_float, check_int, parse_float_list, parse_name_list, setting


#: timed repeats of every solve after its warm-up (DiffEqDevTools times a work-precision point as the median of
#: repeated runs too): one timing per point made the wall-time curves zig-zag by up to 2x between neighbouring depths
TIMING_REPEATS = 3


@dataclass(frozen=True)
class SolversSettings(RateFitSettings, ReferenceSettings, PairSettings):
    """Settings of the solver study: the pair and its size, the rate fit, the schemes. Each scheme runs on all
    samples in one process (its cost axis is the scheme's wall time in one single-threaded process, which blocks
    of samples spread over workers would not measure); ``workers`` and ``scheduler`` share the SDE schemes out,
    one scheme per task (:mod:`validation.solvers.sharing`)."""

    rtol: float | None = setting(None, "ODE pairs: rtol of the dopri8 side check, reported next to the reference "
                                       "(the reference itself is rk4 at 4× the deepest step count, second: half; "
                                       "--rtol is the same flag)",
                                 parse=float, flag="--check-rtol", aliases=("--rtol",),
                                 default_text="1e-13 in float64, 1e-6 in float32")
    atol: float | None = setting(None, "ODE pairs: atol of the dopri8 side check (--atol is the same flag)",
                                 parse=float, flag="--check-atol", aliases=("--atol",), default_text="as --check-rtol")
    schemes: tuple[str, ...] | None = setting(
        None, "schemes to compare, comma-separated; SDE: " + ", ".join(SDE_SCHEMES) + "; ODE: "
        + ", ".join([*ODE_FIXED_SCHEMES, *ODE_ADAPTIVE_SCHEMES]), parse=parse_name_list,
        default_text="every scheme valid for the model's noise (SDE: log_ode_midpoint only with commutative "
                     "noise; tamed_euler and drift_implicit_euler only when named); ODE: all")
    tolerances: tuple[float, ...] = setting((1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9),
                                            "ODE pairs: rtol = atol of the adaptive schemes", parse=parse_float_list)
    problem: str | None = setting(None, "an exactly solvable SDE instead of a pair's limit: every applicable scheme "
                                        "against its exact solution on the same path (--list-problems lists them; "
                                        "then --model and the pair's settings do not apply)", group="model",
                                  metavar="NAME")
    timing_repeats: int = setting(TIMING_REPEATS, "the wall-time axis: every solve runs once (a warm-up, whose result "
                                  "gives the errors); one shorter than 0.5 s then runs this many timed times (as many "
                                  "as fit in 0.5 s) and their median is reported; a longer one is its own timing (0: "
                                  "every warm-up is its own timing)", parse=int)
    workers: int | None = setting(None, "processes (each single-threaded) running the SDE schemes side by side, one "
                                        "scheme each (an ODE pair's run here); every number but the wall times is "
                                        "that of one process", parse=int, group="run and output",
                                  default_text="1: the schemes one after another")
    scheduler: str | None = setting(None, "run the SDE schemes on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler)",
                                    group="run and output", default_text="none: --workers local processes")

    def check(self) -> None:
        super().check()
        check_workers(self)
        if self.schemes is not None:
            known = {*SDE_SCHEMES, *ODE_FIXED_SCHEMES, *ODE_ADAPTIVE_SCHEMES}
            names = tuple(self.schemes) if not isinstance(self.schemes, str) else parse_name_list(self.schemes)
            for name in names:
                if name not in known:
                    raise SettingsError("schemes", f"unknown scheme {name!r} (known: {', '.join(sorted(known))})")
            if len(set(names)) != len(names):
                raise SettingsError("schemes", f"{', '.join(names)} names a scheme twice")
            self._set("schemes", names)
        tolerances = tuple(check_float("tolerances", value, 1e-13, 1e-1) for value in self.tolerances)
        if not tolerances:
            raise SettingsError("tolerances", "give at least one tolerance")
        self._set("tolerances", tolerances)
        check_int("timing_repeats", self.timing_repeats, 0, 100)
        if self.problem is not None and self.problem not in PROBLEMS:
            raise SettingsError("problem", f"unknown problem {self.problem!r} (known: {', '.join(PROBLEMS)})")
