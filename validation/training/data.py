"""The data sets of the training experiments, all available offline.

* ``digits`` — scikit-learn's bundled handwritten digits (1797 images of 8×8 pixels, 10 classes), the
  stand-in for MNIST: no download, ever. Pixels are scaled to [0, 1] and centred by the training mean.
* ``cohen-synthetic`` — Cohen et al. (2021) §3.1's synthetic regression set, generated from their
  description: x ~ U([−1, 1]^10), then K = 100 steps of
  z_k = z_{k−1} + K^{−1/2} tanh(sin(5kπ/K) z_{k−1} + cos(5kπ/K) 𝟙), and the target y = z_K/‖z_K‖.
* ``digits-25`` — Cohen et al.'s low-dimensional digits: each image projected to d = 25 by a fixed
  random (untrained, seeded) linear map, as their untrained convolutional projection of MNIST does, with
  the one-hot class in the first 10 of 25 target coordinates (a regression target, squared loss).
* ``mnist``, ``cifar10`` — only from local files: ``<data_dir>/mnist.npz`` or ``<data_dir>/cifar10.npz``
  with arrays ``x_train, y_train, x_test, y_test`` (the Keras layout). Nothing is downloaded at run time;
  without the file the run stops with a message saying so (exit status 2).

Every split and every random draw comes from :func:`limits.seeding.generator` streams of the run's seed.
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from limits.seeding import generator

from ..settings import SettingsError

__all__ = ["Dataset", "DATASETS", "load_dataset", "cohen_synthetic"]

#: the data sets and what they are
DATASETS = {
    "digits": "scikit-learn digits, 8×8 images, 10 classes (offline stand-in for MNIST)",
    "digits-25": "digits projected to d = 25 by a fixed random map, one-hot targets in R^25 (Cohen et al.'s "
                 "low-dimensional MNIST, offline)",
    "cohen-synthetic": "Cohen et al. (2021) §3.1 synthetic regression, d = 10 (generated)",
    "mnist": "MNIST from <data_dir>/mnist.npz (never downloaded)",
    "cifar10": "CIFAR-10 from <data_dir>/cifar10.npz (never downloaded)",
}


@dataclass(frozen=True)
class Dataset:
    """Training and test tensors of one data set.

    Attributes:
        name: the data set's name (a key of :data:`DATASETS`).
        x_train, x_test: inputs, shape (N, n_in).
        y_train, y_test: class indices (N,) for ``task == "classification"``, targets (N, n_out) for
            ``"regression"``.
        task: ``classification`` (cross-entropy, accuracy) or ``regression`` (mean squared error).
        n_in, n_out: input dimension and number of outputs (classes or target dimension).
    """

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    task: str
    n_in: int
    n_out: int

    def to(self, dtype: torch.dtype, device: torch.device | str) -> "Dataset":
        def move(t: torch.Tensor) -> torch.Tensor:
            return t.to(device=device, dtype=dtype if t.is_floating_point() else t.dtype)

        return Dataset(self.name, move(self.x_train), move(self.y_train), move(self.x_test), move(self.y_test),
                       self.task, self.n_in, self.n_out)

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "description": DATASETS[self.name], "task": self.task, "n_in": self.n_in,
                "n_out": self.n_out, "train": int(self.x_train.shape[0]), "test": int(self.x_test.shape[0])}


def _split(n: int, test_fraction: float, seed: int, label: str) -> tuple[torch.Tensor, torch.Tensor]:
    order = torch.randperm(n, generator=generator(seed, "data", label, "split"))
    n_test = int(round(test_fraction * n))
    return order[n_test:], order[:n_test]


def _digits(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits  # bundled with scikit-learn: no download

    bunch = load_digits()
    x = torch.as_tensor(bunch.data / 16.0, dtype=torch.float64)
    y = torch.as_tensor(bunch.target, dtype=torch.long)
    train, test = _split(len(y), 0.2, seed, "digits")
    mean = x[train].mean(dim=0)
    return x[train] - mean, y[train], x[test] - mean, y[test]


def cohen_synthetic(count: int, seed: int, label: str = "train", dim: int = 10, steps: int = 100
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` pairs (x, y) of Cohen et al.'s synthetic set (module docstring), float64."""
    gen = generator(seed, "data", "cohen-synthetic", label)
    x = torch.rand((count, dim), generator=gen, dtype=torch.float64) * 2 - 1
    z = x.clone()
    for k in range(1, steps + 1):
        phase = 5 * k * math.pi / steps
        z = z + math.sqrt(1.0 / steps) * torch.tanh(math.sin(phase) * z + math.cos(phase))
    return x, z / z.norm(dim=1, keepdim=True)


def _local(name: str, data_dir: str | None) -> tuple[torch.Tensor, ...]:
    if data_dir is None:
        raise SettingsError("dataset", f"{name!r} is not shipped with the package and is never downloaded at run "
                                       f"time; put {name}.npz (arrays x_train, y_train, x_test, y_test) in a folder "
                                       f"and pass --data-dir, or use the offline 'digits'")
    path = Path(data_dir) / f"{name}.npz"
    if not path.is_file():
        raise SettingsError("data_dir", f"{path} not found ({name!r} is read from <data_dir>/{name}.npz with arrays "
                                        "x_train, y_train, x_test, y_test; nothing is downloaded)")
    arrays = _read_arrays(path)
    x_train, x_test = (torch.as_tensor(arrays[k].reshape(len(arrays[k]), -1), dtype=torch.float64) / 255.0
                       for k in ("x_train", "x_test"))
    y_train, y_test = (torch.as_tensor(arrays[k].reshape(-1), dtype=torch.long) for k in ("y_train", "y_test"))
    mean = x_train.mean(dim=0)
    return x_train - mean, y_train, x_test - mean, y_test


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """The four arrays of a local data file, checked as untrusted input: a readable .npz (no pickled objects),
    numeric images with one row per label, at least one example each, the same pixels per image, and integer
    labels in 0…99. Anything else is bad input (one line naming the file and what it must hold), never a crash."""
    wanted = "an .npz with numeric arrays x_train, x_test (one image per row) and integer labels y_train, y_test in 0…99"
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = {"x_train", "y_train", "x_test", "y_test"} - set(archive.files)
            if missing:
                raise SettingsError("data_dir", f"{path} lacks the arrays {', '.join(sorted(missing))}")
            arrays = {key: np.asarray(archive[key]) for key in ("x_train", "y_train", "x_test", "y_test")}
    except SettingsError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:   # pickled objects, not a zip, truncated
        raise SettingsError("data_dir", f"{path} cannot be read ({type(exc).__name__}: {exc}); it must be "
                                        f"{wanted}") from None
    for key, value in arrays.items():
        if value.dtype.kind not in "biuf" or value.size == 0 or value.ndim == 0:
            raise SettingsError("data_dir", f"{path}: {key} has dtype {value.dtype} and shape {value.shape}; it must "
                                            f"be {wanted}")
    for split in ("train", "test"):
        x, y = arrays[f"x_{split}"], arrays[f"y_{split}"].reshape(-1)
        if len(x) != len(y):
            raise SettingsError("data_dir", f"{path}: x_{split} has {len(x)} images but y_{split} {len(y)} labels")
        if not np.all(np.isfinite(x)):
            raise SettingsError("data_dir", f"{path}: x_{split} has non-finite values")
        if not (np.all(y == np.round(y)) and y.min() >= 0 and y.max() <= 99):
            raise SettingsError("data_dir", f"{path}: y_{split} holds labels from {y.min():g} to {y.max():g}; they "
                                            "must be integers in 0…99 (class indices)")
    if arrays["x_train"][0].size != arrays["x_test"][0].size:
        raise SettingsError("data_dir", f"{path}: train images have {arrays['x_train'][0].size} values, test images "
                                        f"{arrays['x_test'][0].size}; they must match")
    return arrays


def load_dataset(name: str, seed: int, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
                 data_dir: str | None = None, train_size: int | None = None) -> Dataset:
    """The data set ``name`` (see :data:`DATASETS`), split and drawn from streams of ``seed``.

    Args:
        train_size: keep only the first this many training examples (None: all).
    """
    if name not in DATASETS:
        raise SettingsError("dataset", f"{name!r} unknown (allowed: {', '.join(DATASETS)})")
    if name == "cohen-synthetic":
        x_train, y_train = cohen_synthetic(1024, seed, "train")
        x_test, y_test = cohen_synthetic(256, seed, "test")
        data = Dataset(name, x_train, y_train, x_test, y_test, "regression", 10, 10)
    elif name in ("digits", "digits-25"):
        x_train, y_train, x_test, y_test = _digits(seed)
        if name == "digits":
            data = Dataset(name, x_train, y_train, x_test, y_test, "classification", 64, 10)
        else:
            projection = torch.randn((64, 25), generator=generator(seed, "data", "digits-25"),
                                     dtype=torch.float64) / math.sqrt(64 / 4)
            eye = torch.eye(25, dtype=torch.float64)[:10]
            data = Dataset(name, x_train @ projection, eye[y_train], x_test @ projection, eye[y_test],
                           "regression", 25, 25)
    else:
        x_train, y_train, x_test, y_test = _local(name, data_dir)
        data = Dataset(name, x_train, y_train, x_test, y_test, "classification", int(x_train.shape[1]),
                       int(max(y_train.max(), y_test.max())) + 1)
    if train_size is not None:
        data = Dataset(data.name, data.x_train[:train_size], data.y_train[:train_size], data.x_test, data.y_test,
                       data.task, data.n_in, data.n_out)
    return data.to(dtype, device)
