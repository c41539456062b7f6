"""Issue 47: the heavy catalogues shared out — training's configurations, the solver study's schemes, a figure's
draws — on local processes and on a Dask cluster give the JSON of one process; a worker killed mid-run changes
nothing (Dask runs its task again elsewhere), and a resumed training run on a cluster trains only what is left."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import cloudpickle
import numpy as np
import pytest
import torch

from limits.activations import get_activation
from limits.peluchetti_favaro import PFBlock
from limits.res_sde import Res1SDE
from validation import figures, solvers, training
from validation.core.settings import SettingsError
from validation.core.workers import task_runner
from validation.figures.pf_models import block_outputs, draw_spans, homogeneous_outputs
from validation.training.sweep import Configuration

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the Dask workers cannot import this test module

TRAINING = ("cohen-scaling", training.EXPERIMENTS["cohen-scaling"].smoke)


def _records(result) -> str:
    return json.dumps([result.records, result.numbers], sort_keys=True)


@dataclasses.dataclass(frozen=True)
class DiesOnce(Configuration):
    """A configuration whose first training, in a process other than ``parent``, kills that process (os._exit)
    before it answers, once (the ``marker`` file remembers it)."""

    parent: int = 0
    marker: str = ""

    def __getattribute__(self, name: str):
        if name == "params" and os.getpid() != object.__getattribute__(self, "parent"):
            marker = Path(object.__getattribute__(self, "marker"))
            if not marker.exists():
                marker.touch()
                os._exit(1)
        return object.__getattribute__(self, name)


def test_training_on_a_local_cluster_gives_the_records_of_one_process_and_resumes(tmp_path):
    name, tiny = TRAINING
    serial = training.run(name, checkpoint_dir=None, workers=1, **tiny)
    cluster = training.run(name, checkpoint_dir=str(tmp_path), scheduler="local:2", **tiny)
    assert _records(cluster) == _records(serial) and len(serial.records) > 2
    files = sorted(tmp_path.glob("*/*.json"))
    for file in files[:2]:
        file.unlink()
    resumed = training.run(name, checkpoint_dir=str(tmp_path), resume=True, scheduler="local:2", **tiny)
    assert resumed.resumed == len(files) - 2 and _records(resumed) == _records(serial)


def test_a_worker_killed_while_training_loses_nothing(tmp_path, monkeypatch):
    name, tiny = TRAINING
    serial = training.run(name, checkpoint_dir=None, workers=1, **tiny)
    experiment = type(training.EXPERIMENTS[name])
    configurations = experiment.configurations
    marker = tmp_path / "died-once"

    def planted(self, settings):
        first, *rest = configurations(self, settings)
        return [DiesOnce(first.key, first.params, parent=os.getpid(), marker=str(marker)), *rest]

    monkeypatch.setattr(experiment, "configurations", planted)
    cluster = training.run(name, checkpoint_dir=None, scheduler="local:2", **tiny)
    assert marker.exists()  # a worker did die while training
    assert _records(cluster) == _records(serial)


SOLVERS = dict(samples=60, width=3, depths=(4, 8, 16, 32), reference_steps=256, resamples=200, timing_repeats=0)


def _solver_numbers(result) -> str:
    """The result's JSON less the wall times and the sharing settings."""
    out = result.to_dict()
    for run in [*out["result"]["schemes"], *out["result"]["adaptive"]]:
        run.pop("seconds")
    for key in ("workers", "scheduler"):
        out["settings"].pop(key)
    return json.dumps([out["settings"], out["result"]], sort_keys=True)


def test_the_solver_study_shared_out_gives_the_numbers_of_one_process():
    schemes = ("euler", "midpoint", "milstein_levy_area")  # the Lévy-area path too
    single = solvers.run("res1", schemes=schemes, **SOLVERS)
    assert _solver_numbers(solvers.run("res1", schemes=schemes, workers=2, **SOLVERS)) == _solver_numbers(single)
    assert _solver_numbers(solvers.run("res1", schemes=schemes, scheduler="local:2", **SOLVERS)) == \
        _solver_numbers(single)
    problem = dict(problem="gbm", samples=200, depths=(4, 8, 16), resamples=200, timing_repeats=0)
    assert _solver_numbers(solvers.run(None, workers=2, **problem)) == _solver_numbers(solvers.run(None, **problem))


class MidpointDiesOnce(Res1SDE):
    """res-1 whose limit's drift kills the first process other than ``RESNET_LIMITS_PARENT`` that evaluates it
    (os._exit), once (the marker file of ``RESNET_LIMITS_DIE_ONCE`` remembers it)."""

    def limit_sde(self):
        limit = super().limit_sde()
        drift = limit.f

        def dying(t, y):
            marker = Path(os.environ["RESNET_LIMITS_DIE_ONCE"])
            if str(os.getpid()) != os.environ["RESNET_LIMITS_PARENT"] and not marker.exists():
                marker.touch()
                os._exit(1)
            return drift(t, y)

        limit.f = dying
        return limit


def test_a_worker_killed_while_running_a_scheme_loses_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "died-once"
    monkeypatch.setenv("RESNET_LIMITS_DIE_ONCE", str(marker))  # before the cluster starts: its workers inherit it
    monkeypatch.setenv("RESNET_LIMITS_PARENT", str(os.getpid()))
    schemes = ("euler", "midpoint", "euler_heun")
    single = solvers.run(MidpointDiesOnce, schemes=schemes, **SOLVERS)
    cluster = solvers.run(MidpointDiesOnce, schemes=schemes, scheduler="local:2", **SOLVERS)
    assert marker.exists()  # a worker did die mid-run
    assert _solver_numbers(cluster).replace("MidpointDiesOnce", "") == _solver_numbers(single).replace(
        "MidpointDiesOnce", "")


def _figure_numbers(result) -> str:
    out = result.to_dict()
    for key in ("workers", "scheduler"):
        out["settings"].pop(key)
    return json.dumps([out["settings"], out["result"]], sort_keys=True)


def test_a_figure_s_draws_shared_out_give_the_numbers_of_one_process():
    """pf-function-space at a width where the draws come in 4 chunks (each chunk's streams its own): the same JSON
    from 2 forked workers and from a local Dask cluster as from one process; a figure that does not share its
    draws refuses the flags."""
    size = dict(width=128, depth=4, sde_factor=4, inputs=10, draws=200, eoc_width=8, eoc_depth=4, resamples=50)
    assert len(draw_spans(200, max(1, (1 << 22) // (4 * (128**2 + 128) + 4 * 10 * 128)))) == 4
    single = figures.run("pf-function-space", **size)
    assert _figure_numbers(figures.run("pf-function-space", workers=2, **size)) == _figure_numbers(single)
    assert _figure_numbers(figures.run("pf-function-space", scheduler="local:2", **size)) == _figure_numbers(single)
    with pytest.raises(SettingsError, match="workers: does not apply to the chizat-maximal figure"):
        figures.run("chizat-maximal", workers=2)


def test_every_shared_p_and_f_model_gives_its_arrays_in_spans():
    """The chunked models read each chunk's own stream: spans of chunks computed apart, joined, are the arrays of one
    call (block_outputs and homogeneous_outputs at 3 chunks, a short last one included)."""
    runner = lambda function, tasks: [function(task) for task in tasks]  # noqa: E731 - spans, in this process
    block = PFBlock(get_activation("tanh"), get_activation("identity"), 3, dtype=torch.float64)
    common = dict(seed=0, labels=("test",), chunk=4)
    whole = block_outputs(block, [0.0, 1.0], 4, 10, 2, **common)
    parts = block_outputs(block, [0.0, 1.0], 4, 10, 2, runner=runner, **common)
    assert all(np.array_equal(a, b) for a, b in zip(whole, parts)) and whole[0].shape == (10, 3, 2)
    kwargs = dict(sigma_w=1.0, sigma_b=1.0, seed=0, labels=("test",), chunk=4)
    one = homogeneous_outputs(("relu",), (0.5, 1.0), "tanh", 0.5, 3, 4, 10, **kwargs)
    spans = homogeneous_outputs(("relu",), (0.5, 1.0), "tanh", 0.5, 3, 4, 10, runner=runner, **kwargs)
    assert one.keys() == spans.keys() and all(np.array_equal(one[k], spans[k]) for k in one)
    assert draw_spans(10, 4) == [(0, 4), (4, 8), (8, 10)] and draw_spans(10, 4, tasks=2) == [(0, 4), (4, 10)]


class DyingBlock(PFBlock):
    """A P&F block whose drift kills the first process other than ``RESNET_LIMITS_PARENT`` that evaluates it
    (os._exit), once (the marker file of ``RESNET_LIMITS_DIE_ONCE`` remembers it)."""

    def drift(self, x):
        marker = Path(os.environ["RESNET_LIMITS_DIE_ONCE"])
        if str(os.getpid()) != os.environ["RESNET_LIMITS_PARENT"] and not marker.exists():
            marker.touch()
            os._exit(1)
        return super().drift(x)


def test_a_worker_killed_while_drawing_a_span_loses_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "died-once"
    monkeypatch.setenv("RESNET_LIMITS_DIE_ONCE", str(marker))  # before the cluster starts: its workers inherit it
    monkeypatch.setenv("RESNET_LIMITS_PARENT", str(os.getpid()))
    block = DyingBlock(get_activation("tanh"), get_activation("identity"), 3, dtype=torch.float64)
    common = dict(seed=0, labels=("test",), chunk=4)
    whole = block_outputs(block, [0.0, 1.0], 4, 10, 2, **common)
    with task_runner(1, "local:2") as runner:
        parts = block_outputs(block, [0.0, 1.0], 4, 10, 2, runner=runner, **common)
    assert marker.exists()  # a worker did die mid-run
    assert all(np.array_equal(a, b) for a, b in zip(whole, parts))
