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

from validation import training
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
