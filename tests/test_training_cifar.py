"""Marion et al. Fig. 9 panel (b), CIFAR-10: the data set is never downloaded, so no result ships; the path from a
local ``cifar10.npz`` to the experiment's table is tested on a small random file in CIFAR-10's format."""

from __future__ import annotations

import numpy as np

from validation import training


def test_marion_fig9_runs_on_a_local_cifar10_file(tmp_path):
    rng = np.random.default_rng(0)
    images = lambda n: rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)  # noqa: E731
    np.savez(tmp_path / "cifar10.npz", x_train=images(300), y_train=rng.integers(0, 10, 300),
             x_test=images(100), y_test=rng.integers(0, 10, 100))
    smoke = dict(training.EXPERIMENTS["marion-fig9"].smoke)
    smoke.pop("dataset", None)
    result = training.run("marion-fig9", checkpoint_dir=None, dataset="cifar10", data_dir=str(tmp_path),
                          **{**smoke, "train_size": 300})
    assert result.settings.dataset == "cifar10"
    assert result.verdict in ("PASS", "FAIL", "INCONCLUSIVE") and result.table()
    accuracies = np.array([r["test_accuracy"] for r in result.records.values()], dtype=float)
    assert np.all((accuracies >= 0) & (accuracies <= 1))      # one number per replicate and rate, on the 10 classes
