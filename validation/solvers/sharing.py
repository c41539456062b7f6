"""The solver study's SDE schemes shared out (``--workers``, ``--scheduler``): one task per scheme.

Every scheme reads the same recorded path and reference (:class:`~validation.solvers.runs.SharedPath`), which are a
function of the model and the settings alone (every draw comes from the seed's streams). So a scheme's errors,
evaluations and fit are those of one process wherever it runs; its wall time is still measured by one
single-threaded process, the scheme's own. The path is computed once per process (:func:`shared_inputs`): forked
local workers start after this process has computed it, and read it from the memory they share with it (copy on
write); a Dask worker computes it once for all the schemes it runs.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from limits.pairs import Pair
from limits.problems import get_problem
from validation.core.pair_study import build_pair
from validation.core.settings import SettingsError, settings_dict
from validation.core.workers import run_tasks
from validation.solvers.runs import SchemeRun, SchemeRunner, SharedPath, problem_inputs, scheme_runs, sde_inputs
from validation.solvers.settings import SolversSettings

__all__ = ["shared_inputs", "forget_inputs", "scheme_runner"]

#: the last (model, settings) computed in this process and its shared path: one entry, emptied after each run
_LAST: dict[tuple[str, str], SharedPath] = {}


def shared_inputs(model: Any, settings: SolversSettings, progress: bool = False,
                  pair: Pair | None = None) -> SharedPath:
    """The path and reference of the run of ``model`` (a pair name, path text or class; ignored for a problem)
    with the resolved ``settings``: :func:`~validation.solvers.runs.problem_inputs` for ``--problem``, else
    :func:`~validation.solvers.runs.sde_inputs` of the pair (``pair``: the one already built from them); computed
    once per process for the same ``model`` and ``settings``."""
    key = (repr(model), json.dumps(settings_dict(settings), sort_keys=True, default=repr))
    if key not in _LAST:
        _LAST.clear()
        if settings.problem is not None:
            _LAST[key] = problem_inputs(get_problem(settings.problem), settings)
        else:
            _LAST[key] = sde_inputs(pair if pair is not None else build_pair(model, settings)[0], settings, progress)
    return _LAST[key]


def forget_inputs() -> None:
    """Let the last shared path go (the end of a run: it can hold gigabytes)."""
    _LAST.clear()


def _scheme_task(task: tuple[Any, SolversSettings, str]) -> SchemeRun:
    """A worker's task: one scheme on the run's shared path."""
    model, settings, name = task
    return scheme_runs(shared_inputs(model, settings), [name], settings)[0]


def scheme_runner(model: Any, settings: SolversSettings) -> SchemeRunner | None:
    """``run_schemes(shared, names, settings)`` on ``settings.workers`` local processes or the Dask
    ``settings.scheduler``, one scheme per task, in the order named; None when the schemes run here. A Pair
    instance runs here (refused with workers: a worker cannot rebuild it)."""
    workers, scheduler = settings.workers or 1, settings.scheduler
    if workers <= 1 and scheduler is None:
        return None
    if isinstance(model, Pair):
        raise SettingsError("workers", "a Pair instance runs here; pass its class or name to share the schemes out "
                                       "to workers")

    def run_schemes(shared: SharedPath, names: Sequence[str], s: SolversSettings) -> list[SchemeRun]:
        return run_tasks(_scheme_task, [(model, s, name) for name in names], min(workers, len(names)),
                         scheduler=scheduler)

    return run_schemes
