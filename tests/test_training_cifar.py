"""Marion et al. Fig. 9 panel (b), CIFAR-10: the data set is never downloaded, so no result ships; the path from a
local ``cifar10.npz`` to the experiment's table is tested on a small random file in CIFAR-10's format."""

from __future__ import annotations

import numpy as np
import pytest

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


def _write(folder, kind: str) -> None:
    """A local mnist.npz that is bad in one way."""
    rng = np.random.default_rng(1)
    good = dict(x_train=rng.integers(0, 255, (20, 4, 4)), y_train=rng.integers(0, 10, 20),
                x_test=rng.integers(0, 255, (5, 4, 4)), y_test=rng.integers(0, 10, 5))
    path = folder / "mnist.npz"
    if kind == "pickled":
        np.savez(path, **{**good, "x_train": np.array([object()] * 20, dtype=object)})
    elif kind == "not a zip":
        path.write_bytes(b"PK\x03\x04 not really a zip archive")
    elif kind == "truncated":
        np.savez(path, **good)
        path.write_bytes(path.read_bytes()[:100])
    elif kind == "negative labels":
        np.savez(path, **{**good, "y_train": np.full(20, -5)})
    elif kind == "fractional labels":
        np.savez(path, **{**good, "y_test": np.full(5, 0.5)})
    elif kind == "fewer labels":
        np.savez(path, **{**good, "y_train": good["y_train"][:7]})
    elif kind == "text":
        np.savez(path, **{**good, "x_test": np.array(["a"] * 5)})
    elif kind == "nan pixels":
        np.savez(path, **{**good, "x_train": np.full((20, 16), np.nan)})
    elif kind == "image sizes":
        np.savez(path, **{**good, "x_test": rng.integers(0, 255, (5, 3, 3))})


@pytest.mark.parametrize("kind, needle", [
    ("pickled", "cannot be read"), ("not a zip", "cannot be read"), ("truncated", "cannot be read"),
    ("negative labels", "labels from -5"), ("fractional labels", "must be integers in 0…99"),
    ("fewer labels", "20 images but y_train 7 labels"), ("text", "x_test has dtype <U1"),
    ("nan pixels", "non-finite values"), ("image sizes", "train images have 16 values, test images 9"),
])
def test_an_untrusted_data_file_is_bad_input_in_one_line(tmp_path, kind, needle):
    """A local data file is untrusted input: every way it can be wrong exits 2 with one line naming the file and
    what it must hold — never an internal error (exit 3) or a traceback."""
    import subprocess
    import sys

    _write(tmp_path, kind)
    proc = subprocess.run([sys.executable, "-m", "validation.training", "--experiment", "marion-fig9", "--dataset",
                           "mnist", "--data-dir", str(tmp_path), "--quiet"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "mnist.npz" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
