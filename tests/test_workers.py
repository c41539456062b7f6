"""Monte-Carlo tasks on a Dask cluster: the numbers of a single process, whatever the workers; a worker killed
mid-run loses nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cloudpickle
import pytest

from limits.res_sde import Res1SDE
from validation import convergence, weak
from validation.phase import study as phase
from validation.regimes import study as regimes
from validation.core.workers import check_scheduler, run_tasks

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


SMALL_CONVERGENCE = dict(samples=50, sample_block=20, depths=(4, 8, 16, 32), reference_steps=512, bootstrap=200)


def _errors(result) -> list:
    e = result.errors
    return [e.final_sq.tolist(), e.final_sq_second.tolist(), e.sup_sq.tolist(), e.successive_sq.tolist(),
            e.reference_gap_sq.tolist()]


def test_convergence_blocks_give_the_same_numbers_here_in_processes_and_on_a_local_cluster():
    single = convergence.run("res1", **SMALL_CONVERGENCE)
    pool = convergence.run("res1", workers=2, **SMALL_CONVERGENCE)
    cluster = convergence.run("res1", scheduler="local:2", **SMALL_CONVERGENCE)
    assert single.errors.final_sq.shape == (50, 4) and single.errors.reference["sample_blocks"] == 3
    assert _errors(single) == _errors(pool) == _errors(cluster)
    assert single.rate == pool.rate == cluster.rate and single.fit.ci == cluster.fit.ci
    # block 0 draws from the seed's own streams: a study of one block is the unsharded study
    alone = convergence.run("res1", **{**SMALL_CONVERGENCE, "samples": 20})
    assert alone.errors.final_sq.tolist() == single.errors.final_sq[:20].tolist()


class DiesOnce(Res1SDE):
    """res-1, but the first worker to step a network of a block other than block 0 dies (os._exit) before
    answering, once (a marker file, named by the environment, remembers it)."""

    def network_step(self, h, t, dt, dW):
        marker = Path(os.environ["RESNET_LIMITS_DIE_ONCE"])
        if self.seed != 0 and not marker.exists():
            marker.touch()
            os._exit(1)
        return super().network_step(h, t, dt, dW)


def test_a_worker_killed_during_a_convergence_run_loses_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "died-once"
    monkeypatch.setenv("RESNET_LIMITS_DIE_ONCE", str(marker))  # before the cluster starts: its workers inherit it
    single = convergence.run("res1", **SMALL_CONVERGENCE)
    cluster = convergence.run(DiesOnce, scheduler="local:2", **SMALL_CONVERGENCE)
    assert marker.exists()  # a worker did die mid-run
    assert _errors(cluster) == _errors(single) and cluster.errors.reference["sample_blocks"] == 3
    assert cluster.rate == single.rate


def test_the_weak_study_shared_out_gives_the_numbers_of_one_process():
    small = dict(models=("tanh",), draws=120, width=8, depth=8, sde_steps=8, chunk=50, weak_draws=weak.WEAK_BATCH + 30,
                 weak_width=2, weak_depths=(4, 8, 16), weak_reference=64, weak_fit_from=4, permutations=600,
                 energy_points=60)
    assert len(weak.weak_tasks(weak.WeakSettings(**small))) == 3 + 3 + 2

    def numbers(result) -> str:
        out = result.to_dict()["result"]
        for model in out["models"].values():
            model.pop("simulation_seconds")
            model["weak"].pop("seconds")
        return json.dumps(out, sort_keys=True, default=str)

    assert numbers(weak.run(**small)) == numbers(weak.run(scheduler="local:2", **small))


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


def test_a_scheduler_without_dask_is_refused_naming_the_extra(monkeypatch, capsys):
    """Issue 67: Dask is an optional extra. Without it, --scheduler is bad input (exit 2) in one line that names the
    extra to install, before anything is computed; without --scheduler nothing asks for Dask."""
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else found(name, *a))
    with pytest.raises(ValueError, match=r"resnet-limits\[dask\]"):
        check_scheduler("local:2")
    assert check_scheduler(None) is None
    assert phase.main(["--scheduler", "local:2", "--hursts", "0.5", "--quiet"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "resnet-limits[dask]" in lines[0], lines


def test_a_pair_instance_is_one_block_run_here():
    from limits import ModelConfig
    from validation.core.settings import SettingsError

    pair = Res1SDE(ModelConfig(width=4), 30, seed=0)
    small = dict(depths=(4, 8, 16), reference_steps=64, bootstrap=100, sample_block=10)
    assert convergence.run(pair, **small).errors.reference["sample_blocks"] == 1
    with pytest.raises(SettingsError, match="Pair instance"):
        convergence.run(pair, workers=2, **small)


def test_the_default_workers_follow_the_cores_and_the_numbers_do_not(monkeypatch):
    """Without --workers a study uses every core this process may run on, at most one per block (3 here), and its
    numbers are those of one process whatever the core count."""
    import validation.core.pair_study as pair_study
    from validation.core.workers import default_workers

    used = []
    real = pair_study.run_tasks
    monkeypatch.setattr(pair_study, "run_tasks", lambda *a, **k: used.append(a[2]) or real(*a, **k))
    runs = {}
    for cores in (1, 2, 4):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid, count=cores: set(range(count)))
        assert default_workers() == cores == default_workers("auto") and default_workers("cuda") == 1
        result = convergence.run("res1", **SMALL_CONVERGENCE)
        assert result.settings.workers is None
        runs[cores] = (_errors(result), result.rate, result.fit.ci)
    assert used == [1, 2, 3]
    assert runs[1] == runs[2] == runs[4]


def test_a_local_cluster_listens_on_the_loopback_interface_only(monkeypatch, tmp_path):
    """``--scheduler local:N``: the scheduler's and the dashboard's bound sockets are on 127.0.0.1 (read from the
    sockets themselves, no traffic sent); Dask's default dashboard listened on every interface."""
    from dask.distributed import LocalCluster

    from validation.core import workers

    bound = {}
    original = LocalCluster.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        http = self.scheduler.http_server
        bound["dashboard"] = {sock.getsockname()[0] for sock in http._sockets.values()}
        bound["scheduler"] = {urlparse(address).hostname for address in [self.scheduler.address]}

    from urllib.parse import urlparse

    monkeypatch.setattr(LocalCluster, "__init__", spy)
    tasks = [(2, str(tmp_path / "unused")), (4, str(tmp_path / "unused"))]
    assert run_tasks(_square_or_die, tasks, workers=1, scheduler="local:1") == [4, 16]
    assert bound["dashboard"] == {workers.LOOPBACK} and bound["scheduler"] == {workers.LOOPBACK}, bound


def test_a_tls_scheduler_address_is_accepted():
    """``tls://HOST:PORT``: a scheduler with TLS (docs/howto/scale.md), its certificates from Dask's configuration."""
    assert check_scheduler("tls://10.0.0.5:8786") == "tls://10.0.0.5:8786"
    with pytest.raises(ValueError, match="tls://HOST:PORT"):
        check_scheduler("udp://10.0.0.5:8786")
