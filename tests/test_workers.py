"""Monte-Carlo tasks on a Dask cluster: the numbers of a single process, whatever the workers; a worker killed
mid-run loses nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cloudpickle
import pytest

from validation import phase, regimes
from validation.workers import check_scheduler, run_tasks

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the Dask workers cannot import this test module

SMALL_PHASE = dict(hursts=(0.3, 0.5, 0.7), betas=(0.2, 0.6, 1.0), depth=32, networks=2, inputs=2)


def _result(result) -> str:
    numbers = {k: v for k, v in result.to_dict()["result"].items()
               if k not in ("wall_time_s", "column_seconds", "workers", "scheduler")}
    return json.dumps(numbers, sort_keys=True)


def test_phase_on_a_two_worker_local_cluster_gives_the_single_process_numbers():
    single = phase.run(workers=1, **SMALL_PHASE)
    cluster = phase.run(scheduler="local:2", **SMALL_PHASE)
    assert _result(single) == _result(cluster)
    assert cluster.to_dict()["result"]["tasks"] == 3 and cluster.to_dict()["result"]["scheduler"] == "local:2"


def test_fig2_on_a_local_cluster_gives_the_single_process_numbers():
    small = dict(samples=regimes.FIG2_BLOCK + 5, width=6, depths=(10,))
    single = regimes.run("fig2", workers=1, **small).to_dict()["result"]
    cluster = regimes.run("fig2", scheduler="local:2", **small).to_dict()["result"]
    assert single == cluster and cluster["tasks"] == 2


def _square_or_die(task: tuple[int, str]) -> int:
    """x² — but the worker that first meets x = 3 dies (os._exit) before answering."""
    x, marker = task
    if x == 3 and not Path(marker).exists():
        Path(marker).touch()
        os._exit(1)
    return x * x


def test_a_worker_killed_mid_run_is_replaced_and_the_result_is_complete(tmp_path):
    marker = str(tmp_path / "died-once")
    tasks = [(x, marker) for x in range(8)]
    collected = []
    results = run_tasks(_square_or_die, tasks, workers=1, scheduler="local:2", on_result=collected.append)
    assert Path(marker).exists()  # a worker did die
    assert results == [x * x for x in range(8)] == collected


@pytest.mark.parametrize("bad", ["local:0", "local:x", "dask", "tcp://host", "local:1000"])
def test_a_bad_scheduler_is_refused(bad):
    with pytest.raises(ValueError, match="not a scheduler"):
        check_scheduler(bad)
    assert phase.main(["--scheduler", bad, "--hursts", "0.5", "--quiet"]) == 2
