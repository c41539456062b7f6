"""The data sets of the training experiments, all available offline.

* ``digits`` — scikit-learn's bundled handwritten digits (1797 images of 8×8 pixels, 10 classes), the
  stand-in for MNIST: no download, ever. Pixels are scaled to [0, 1] and centred by the training mean.
* ``cohen-synthetic`` — Cohen et al. (2021) §3.1's synthetic regression set, generated from their
  description: x ~ U([−1, 1]^10), then K = 100 steps of
  z_k = z_{k−1} + K^{−1/2} tanh(sin(5kπ/K) z_{k−1} + cos(5kπ/K) 𝟙), and the target y = z_K/‖z_K‖
  (the paper's phase index k = 1, …, K; the authors' code uses k = 0, …, K − 1).
* ``digits-25`` — Cohen et al.'s low-dimensional digits: each image projected to d = 25 by a fixed
  random (untrained, seeded) linear map, as their untrained convolutional projection of MNIST does, with
  the one-hot class in the first 10 of 25 target coordinates (a regression target, squared loss).

For these two, ``load_dataset(..., unit_norm=True)`` scales every input x to unit Euclidean norm, as the
authors' code (instadeepai/scaling-resnets, ``generate_dataset.py``) does — after the synthetic target has been
computed from the raw x, so the targets are the same. The Cohen experiment asks for it; by default (and for
every other experiment) the inputs are left as described above.
* ``mnist``, ``fashion-mnist``, ``cifar10`` — only from local files in ``--data-dir``; nothing is downloaded at
  run time, and without the files the run stops with one line saying which files were looked for (exit status 2).
  ``mnist`` and ``fashion-mnist`` are read from the first layout present:

  1. the four IDX files of LeCun's MNIST distribution (Fashion-MNIST uses the same names and format; Debian's
     package ``dataset-fashion-mnist`` installs them in ``/usr/share/datasets/fashion-mnist``):
     ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
     ``t10k-labels-idx1-ubyte``, each plain or gzip (``.gz``, or recognised by the gzip magic bytes);
  2. the Keras layout: ``mnist.npz`` / ``fashion-mnist.npz`` with arrays ``x_train, y_train, x_test, y_test``.

  ``cifar10`` is read from the first present of

  1. ``cifar10.npz`` (Keras layout: ``x_train`` (N, 32, 32, 3) uint8, ``y_train`` (N, 1), ``x_test``, ``y_test``);
  2. the CIFAR-10 binary version (``cifar-10-binary.tar.gz``): ``data_batch_1.bin`` … ``data_batch_5.bin`` and
     ``test_batch.bin``, in ``--data-dir`` itself or in its ``cifar-10-batches-bin/`` (the folder the tarball
     extracts to), all six required. Each file is records of exactly 3073 bytes: one label byte (0…9), then
     3072 pixel bytes — 1024 red, 1024 green, 1024 blue, each a 32×32 image row by row. They are read with
     :func:`read_cifar10_bin` and transposed to the Keras layout, so both sources give identical tensors.

  The pickled Python version (``cifar-10-batches-py/``, ``data_batch_1`` without extension) is never read: a folder
  holding only it is refused in one line naming the binary version. Every file is untrusted input
  (:func:`read_idx`, :func:`read_cifar10_bin`, :func:`_read_arrays`): nothing is unpickled, headers or files that
  promise more than 10^9 bytes are refused before any allocation, and a truncated, corrupt or inconsistent file is
  one line naming the file, never a traceback. Pixels are scaled to [0, 1] and centred by the training mean, the
  same for every layout (identical tensors); :meth:`Dataset.describe` records which files were read.

Every split and every random draw comes from :func:`limits.seeding.generator` streams of the run's seed.
"""

from __future__ import annotations

import gzip
import math
import struct
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from limits.seeding import generator

from ..core import runtime
from ..core.settings import SettingsError

__all__ = ["Dataset", "DATASETS", "load_dataset", "cohen_synthetic", "read_idx", "read_cifar10_bin", "find_images",
           "SYSTEM_FOLDERS", "UNIT_NORM_DATASETS"]

#: the data sets and what they are
DATASETS = {
    "digits": "scikit-learn digits, 8×8 images, 10 classes (offline stand-in for MNIST)",
    "digits-25": "digits projected to d = 25 by a fixed random map, one-hot targets in R^25 (Cohen et al.'s "
                 "low-dimensional MNIST, offline)",
    "cohen-synthetic": "Cohen et al. (2021) §3.1 synthetic regression, d = 10 (generated)",
    "mnist": "MNIST from <data_dir>: its four IDX files (.gz or plain) or mnist.npz (never downloaded)",
    "fashion-mnist": "Fashion-MNIST, 28×28 images, 10 classes, from <data_dir>: its four IDX files (.gz or plain) or "
                     "fashion-mnist.npz (never downloaded)",
    "cifar10": "CIFAR-10, 32×32×3 images, 10 classes, from <data_dir>: cifar10.npz or the binary version's "
               "data_batch_1.bin … data_batch_5.bin, test_batch.bin (there or in cifar-10-batches-bin/; never "
               "downloaded, the pickled Python version never read)",
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
        source: for a data set read from files, which: ``{"layout": "idx" | "npz" | "cifar10-binary", "files":
            [names relative to the data folder]}``; None for the bundled and generated sets.
        image_shape: for images, (height, width, channels), the order in which each row of ``x_*`` holds the
            pixels; None for vectors (and for an .npz whose images are stored flattened).
    """

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    task: str
    n_in: int
    n_out: int
    source: dict[str, object] | None = None
    image_shape: tuple[int, int, int] | None = None

    def to(self, dtype: torch.dtype, device: torch.device | str) -> "Dataset":
        def move(t: torch.Tensor) -> torch.Tensor:
            return t.to(device=device, dtype=dtype if t.is_floating_point() else t.dtype)

        return replace(self, x_train=move(self.x_train), y_train=move(self.y_train), x_test=move(self.x_test),
                       y_test=move(self.y_test))

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "description": DATASETS[self.name], "task": self.task,
                                  "n_in": self.n_in, "n_out": self.n_out, "train": int(self.x_train.shape[0]),
                                  "test": int(self.x_test.shape[0])}
        if self.source is not None:
            out["source"] = self.source
        return out


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


def cohen_synthetic(count: int, seed: int, label: str = "train", dim: int = 10, steps: int = 100, *,
                    unit_norm: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` pairs (x, y) of Cohen et al.'s synthetic set (module docstring), float64.

    ``unit_norm``: return x/‖x‖ instead of x (the authors' code); the target is computed from the raw x either
    way, so it does not change."""
    gen = generator(seed, "data", "cohen-synthetic", label)
    x = torch.rand((count, dim), generator=gen, dtype=torch.float64) * 2 - 1
    z = x.clone()
    for k in range(1, steps + 1):
        phase = 5 * k * math.pi / steps
        z = z + math.sqrt(1.0 / steps) * torch.tanh(math.sin(phase) * z + math.cos(phase))
    return (_unit_rows(x) if unit_norm else x), z / z.norm(dim=1, keepdim=True)


def _unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Each row of ``x`` divided by its Euclidean norm."""
    return x / x.norm(dim=1, keepdim=True)


#: the data sets whose inputs ``load_dataset(..., unit_norm=True)`` scales to unit norm
UNIT_NORM_DATASETS = ("cohen-synthetic", "digits-25")


#: the IDX files of the MNIST layout (Fashion-MNIST uses the same), by the array each holds: name and dimensions
_IDX_FILES = {"x_train": ("train-images-idx3-ubyte", 3), "y_train": ("train-labels-idx1-ubyte", 1),
              "x_test": ("t10k-images-idx3-ubyte", 3), "y_test": ("t10k-labels-idx1-ubyte", 1)}
#: the data sets that may come as IDX files (besides their .npz); their labels are the classes 0…9
_IDX_DATASETS = ("mnist", "fashion-mnist")
#: the most data bytes an IDX header may promise (MNIST's training images are 47 MB)
_IDX_MAX_BYTES = 10**9
_KEYS = ("x_train", "y_train", "x_test", "y_test")
#: bytes the loader holds at its peak per value of a file, beyond the file's own: its float64 copy scaled to [0, 1]
#: and the centred float64 copy (--train-size keeps the first examples only after both)
_LOADER_COPIES_BYTES = 16


def _refuse_beyond_memory(path: Path, values: int, itemsize: int) -> None:
    """Refuse (bad input, before anything is read) a file whose ``values`` of ``itemsize`` bytes the loader cannot
    hold in the memory this process may still use (:func:`validation.core.runtime.available_memory_mb`: the
    machine's, its cgroup's and its address-space limit): the file's bytes and two float64 copies."""
    needed = values * (itemsize + _LOADER_COPIES_BYTES)
    available = runtime.available_memory_mb() * 2**20
    if needed > available:
        raise SettingsError("data_dir", f"{path}: its {values:,} values need about {needed / 2**30:.2f} GiB to load "
                                        f"(the data and two float64 copies), more than the "
                                        f"{available / 2**30:.2f} GiB this process may still use")


def read_idx(path: Path | str, ndim: int) -> np.ndarray:
    """The uint8 array of one IDX file (LeCun's MNIST format), plain or gzip, checked as untrusted input.

    The file is a magic number — two zero bytes, the type code 0x08 (unsigned byte), the number of dimensions,
    which must be ``ndim`` (3 for images, 1 for labels) — then ``ndim`` big-endian 32-bit sizes, then exactly
    their product of bytes. It is read as gzip when its name ends in ``.gz`` or it starts with the gzip magic bytes.
    A wrong magic number, a header promising more than 10^9 bytes or more than this process's memory can load
    (refused before anything is allocated), a truncated file, trailing bytes or a corrupt gzip stream raise
    :class:`SettingsError` naming the file.
    """
    if ndim not in (1, 2, 3):
        raise ValueError(f"ndim must be 1, 2 or 3, not {ndim!r}")
    path = Path(path)
    expected = 0x0800 | ndim
    try:
        with path.open("rb") as raw:
            zipped = path.suffix == ".gz" or raw.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if zipped else path.open("rb")) as stream:
            magic = stream.read(4)
            if len(magic) == 4 and magic != expected.to_bytes(4, "big"):
                raise SettingsError("data_dir", f"{path}: magic number 0x{magic.hex()}, expected 0x{expected:08x} (an "
                                                f"IDX file of unsigned bytes with {ndim} dimension"
                                                f"{'s' if ndim > 1 else ''})")
            sizes = stream.read(4 * ndim)
            if len(magic) < 4 or len(sizes) < 4 * ndim:
                raise SettingsError("data_dir", f"{path} is truncated: {len(magic) + len(sizes)} bytes, shorter than "
                                                f"an IDX header of {4 + 4 * ndim}")
            shape = struct.unpack(f">{ndim}I", sizes)
            count = math.prod(shape)
            if count > _IDX_MAX_BYTES:
                raise SettingsError("data_dir", f"{path}: the header promises {'×'.join(map(str, shape))} = {count} "
                                                f"bytes, more than the {_IDX_MAX_BYTES} accepted")
            _refuse_beyond_memory(path, count, 1)
            body = stream.read(count)
            if len(body) < count:
                raise SettingsError("data_dir", f"{path} is truncated: the header promises {'×'.join(map(str, shape))}"
                                                f" = {count} bytes of data, the file holds {len(body)}")
            if stream.read(1):
                raise SettingsError("data_dir", f"{path} has trailing bytes after the {count} bytes of data its header "
                                                "promises")
    except SettingsError:
        raise
    except (OSError, EOFError, zlib.error) as exc:   # corrupt gzip stream, unreadable file
        raise SettingsError("data_dir", f"{path} cannot be read ({type(exc).__name__}: {exc}); it must be an IDX file, "
                                        "plain or gzip") from None
    return np.frombuffer(body, dtype=np.uint8).reshape(shape).copy()


def _find_idx(folder: Path, stem: str) -> Path | None:
    """``folder/stem.gz`` or ``folder/stem``, whichever is a file (the first), else None."""
    return next((p for p in (folder / f"{stem}.gz", folder / stem) if p.is_file()), None)


#: the CIFAR-10 binary version (cifar-10-binary.tar.gz): its record, files and the folder the tarball extracts to
_CIFAR_RECORD = 3073
_CIFAR_TRAIN = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
_CIFAR_TEST = "test_batch.bin"
_CIFAR_SUBFOLDER = "cifar-10-batches-bin"
_CIFAR_BINARY = "CIFAR-10 binary version, cifar-10-binary.tar.gz: data_batch_1.bin … data_batch_5.bin, test_batch.bin"


def read_cifar10_bin(path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """The images (N, 32, 32, 3) uint8 (Keras layout) and labels (N,) uint8 of one file of the CIFAR-10 binary
    version, checked as untrusted input.

    The file is N ≥ 1 records of exactly 3073 bytes: one label byte (0…9), then 3072 pixel bytes — the 1024 red,
    then the 1024 green, then the 1024 blue values of the 32×32 image, each row by row. Channel-first records are
    transposed to channel-last, ``images[n, row, col, channel] = record[n][1 + 1024·channel + 32·row + col]``.
    An empty file, a size that is not a multiple of 3073 bytes (truncated, or another record length such as
    CIFAR-100's 3074), a file over 10^9 bytes (refused before anything is read) or a label byte above 9 raise
    :class:`SettingsError` naming the file. Nothing is unpickled.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size == 0:
            raise SettingsError("data_dir", f"{path} is empty; it must hold records of {_CIFAR_RECORD} bytes "
                                            f"({_CIFAR_BINARY})")
        if size % _CIFAR_RECORD:
            raise SettingsError("data_dir", f"{path}: truncated or wrong record length: {size} bytes is not a multiple "
                                            f"of the {_CIFAR_RECORD}-byte record (1 label byte, 3072 pixel bytes) of "
                                            "the CIFAR-10 binary version")
        if size > _IDX_MAX_BYTES:
            raise SettingsError("data_dir", f"{path}: {size} bytes, more than the {_IDX_MAX_BYTES} accepted")
        _refuse_beyond_memory(path, size, 1)
        raw = np.fromfile(path, dtype=np.uint8)
    except SettingsError:
        raise
    except (OSError, ValueError) as exc:   # unreadable file
        raise SettingsError("data_dir", f"{path} cannot be read ({type(exc).__name__}: {exc}); it must be a file of "
                                        f"the {_CIFAR_BINARY}") from None
    if raw.size != size:                   # changed while being read
        raise SettingsError("data_dir", f"{path}: read {raw.size} bytes of the {size} its size promised")
    records = raw.reshape(-1, _CIFAR_RECORD)
    labels = records[:, 0].copy()
    bad = np.flatnonzero(labels > 9)
    if bad.size:
        first = int(bad[0])
        raise SettingsError("data_dir", f"{path}: record {first} (counting from 0) has label {int(labels[first])}; "
                                        f"CIFAR-10 labels are 0…9 ({bad.size} record{'s' if bad.size > 1 else ''} "
                                        "out of range; the CIFAR-100 binary version is not read)")
    images = np.ascontiguousarray(records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return images, labels


def _read_cifar10_binary(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, object]] | None:
    """The four arrays of the CIFAR-10 binary version in ``folder`` or ``folder/cifar-10-batches-bin`` (the first
    that holds any of its six files), in the Keras layout of ``cifar10.npz`` (x (N, 32, 32, 3) uint8, y (N, 1)
    uint8; training batches 1…5 in order), checked by :func:`_check_arrays`, and the files read; None when neither
    holds any. Some but not all six files is one line naming the missing ones."""
    names = (*_CIFAR_TRAIN, _CIFAR_TEST)
    for where in (folder, folder / _CIFAR_SUBFOLDER):
        present = [name for name in names if (where / name).is_file()]
        if not present:
            continue
        missing = [name for name in names if name not in present]
        if missing:
            raise SettingsError("data_dir", f"{where}: the CIFAR-10 binary version is incomplete, missing "
                                            f"{', '.join(missing)} (all six are required: {', '.join(names)})")
        train = [read_cifar10_bin(where / name) for name in _CIFAR_TRAIN]
        x_test, y_test = read_cifar10_bin(where / _CIFAR_TEST)
        arrays = {"x_train": np.concatenate([x for x, _ in train]),
                  "y_train": np.concatenate([y for _, y in train]).reshape(-1, 1),
                  "x_test": x_test, "y_test": y_test.reshape(-1, 1)}
        files = [("" if where == folder else f"{_CIFAR_SUBFOLDER}/") + name for name in names]
        _check_arrays(arrays, str(folder), {key: f"{files[0]} … {files[4]}" if key.endswith("train") else files[5]
                                            for key in _KEYS}, _CIFAR_BINARY, max_label=9)
        return arrays, {"layout": "cifar10-binary", "files": files}
    return None


def _refuse_cifar10_pickled(folder: Path) -> None:
    """Refuse, in one line, a folder holding the pickled Python version of CIFAR-10 (``data_batch_1`` without
    extension, or ``cifar-10-batches-py/``): it is never unpickled."""
    for candidate in (folder / "data_batch_1", folder / "cifar-10-batches-py"):
        if candidate.exists():
            raise SettingsError("data_dir", f"{candidate} is the pickled Python version of CIFAR-10, which is never "
                                            f"read (unpickling runs code); use the {_CIFAR_BINARY} (in {folder} or "
                                            f"{folder / _CIFAR_SUBFOLDER}), or cifar10.npz")


def _read_local(name: str, folder: Path) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """The four arrays of the local data set ``name`` in ``folder`` and which files they came from: the IDX files,
    for the MNIST-like sets, else ``<name>.npz``, else (``cifar10``) the CIFAR-10 binary version."""
    npz = folder / f"{name}.npz"
    if name not in _IDX_DATASETS:
        if npz.is_file():
            return _read_arrays(npz), {"layout": "npz", "files": [npz.name]}
        if name == "cifar10":
            binary = _read_cifar10_binary(folder)
            if binary is not None:
                return binary
            _refuse_cifar10_pickled(folder)
            where = f"{folder} is not a folder" if not folder.is_dir() else f"no cifar10 files in {folder}"
            raise SettingsError("data_dir", f"{where} (looked for {npz.name}, not found, and the {_CIFAR_BINARY}, "
                                            f"there or in {_CIFAR_SUBFOLDER}/; nothing is downloaded)")
        raise SettingsError("data_dir", f"{npz} not found ({name!r} is read from <data_dir>/{name}.npz with "
                                        "arrays x_train, y_train, x_test, y_test; nothing is downloaded)")
    found = {key: _find_idx(folder, stem) for key, (stem, _) in _IDX_FILES.items()}
    if all(found.values()):
        paths = {key: path for key, path in found.items() if path is not None}
        arrays = {key: read_idx(path, _IDX_FILES[key][1]) for key, path in paths.items()}
        names = {key: path.name for key, path in paths.items()}
        shapes = {split: arrays[f"x_{split}"].shape[1:] for split in ("train", "test")}
        if shapes["train"] != shapes["test"]:
            raise SettingsError("data_dir", f"{folder}: train images are {'×'.join(map(str, shapes['train']))} "
                                            f"({names['x_train']}), test images {'×'.join(map(str, shapes['test']))} "
                                            f"({names['x_test']}); they must match")
        _check_arrays(arrays, str(folder), names, "four IDX files of unsigned bytes: N×rows×cols images and N labels "
                                                  "(at least one each)", max_label=9)
        return arrays, {"layout": "idx", "files": [names[key] for key in _KEYS]}
    if npz.is_file():
        return _read_arrays(npz), {"layout": "npz", "files": [npz.name]}
    where = f"{folder} is not a folder" if not folder.is_dir() else f"no {name} files in {folder}"
    have = [path.name for path in found.values() if path is not None]
    raise SettingsError("data_dir", f"{where} (looked for {', '.join(s + '[.gz]' for s, _ in _IDX_FILES.values())}, "
                                    f"or {npz.name}{'; found only ' + ', '.join(have) if have else ''}; nothing is "
                                    "downloaded)")


def _local(name: str, data_dir: str | None) -> tuple[tuple[torch.Tensor, ...], dict[str, object],
                                                    tuple[int, int, int] | None]:
    """The tensors (x_train, y_train, x_test, y_test) of a data set read from files, pixels scaled to [0, 1] and
    centred by the training mean, which files were read, and the images' (height, width, channels) (None when the
    file stores them flattened)."""
    if data_dir is None:
        files = (f"its four IDX files or {name}.npz" if name in _IDX_DATASETS
                 else f"{name}.npz (arrays x_train, y_train, x_test, y_test) or the {_CIFAR_BINARY}"
                 if name == "cifar10" else f"{name}.npz (arrays x_train, y_train, x_test, y_test)")
        raise SettingsError("dataset", f"{name!r} is not shipped with the package and is never downloaded at run "
                                       f"time; put {files} in a folder and pass --data-dir, or use the offline "
                                       "'digits'")
    arrays, source = _read_local(name, Path(data_dir))
    x_train, x_test = (torch.as_tensor(arrays[k].reshape(len(arrays[k]), -1), dtype=torch.float64) / 255.0
                       for k in ("x_train", "x_test"))
    y_train, y_test = (torch.as_tensor(arrays[k].reshape(-1), dtype=torch.long) for k in ("y_train", "y_test"))
    mean = x_train.mean(dim=0)
    shape = arrays["x_train"].shape[1:]
    image_shape = (*shape, 1) if len(shape) == 2 else tuple(shape) if len(shape) == 3 else None
    return (x_train - mean, y_train, x_test - mean, y_test), source, image_shape


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """The four arrays of a local data file, checked as untrusted input: a readable .npz (no pickled objects),
    numeric images with one row per label, at least one example each, the same pixels per image, and integer
    labels in 0…99. Anything else is bad input (one line naming the file and what it must hold), never a crash."""
    wanted = "an .npz with numeric arrays x_train, x_test (one image per row) and integer labels y_train, y_test in 0…99"
    _check_npz_headers(path, wanted)
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = set(_KEYS) - set(archive.files)
            if missing:
                raise SettingsError("data_dir", f"{path} lacks the arrays {', '.join(sorted(missing))}")
            arrays = {key: np.asarray(archive[key]) for key in _KEYS}
    except SettingsError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:   # pickled objects, not a zip, truncated
        raise SettingsError("data_dir", f"{path} cannot be read ({type(exc).__name__}: {exc}); it must be "
                                        f"{wanted}") from None
    _check_arrays(arrays, str(path), {key: key for key in _KEYS}, wanted, max_label=99)
    return arrays


def _check_npz_headers(path: Path, wanted: str) -> None:
    """Read each wanted member's .npy header before loading it: refuse (bad input) a member whose declared shape and
    dtype need more than :data:`_IDX_MAX_BYTES` (the archive's members together too), or more bytes than the member
    holds — numpy would otherwise allocate what the header claims (a 10¹²-element shape) before finding the data
    short. Unreadable archives are left to :func:`_read_arrays`'s own refusal."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        return
    total = values = largest = 0
    with archive:
        for key in _KEYS:
            try:
                info = archive.getinfo(f"{key}.npy")
            except KeyError:
                continue
            try:
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read(member)
                    header = member.tell()
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
                raise SettingsError("data_dir", f"{path}: {key} has an unreadable header ({exc}); it must be "
                                                f"{wanted}") from None
            declared = math.prod(shape) * dtype.itemsize
            total += declared
            if declared > info.file_size - header or total > _IDX_MAX_BYTES:
                raise SettingsError("data_dir", f"{path}: {key} declares shape {shape} of {dtype} ({declared:,} "
                                                f"bytes) but holds {max(0, info.file_size - header):,}; at most "
                                                f"{_IDX_MAX_BYTES:,} bytes in all are accepted")
            values += math.prod(shape)
            largest = max(largest, dtype.itemsize)
    _refuse_beyond_memory(path, values, largest)


def _check_arrays(arrays: dict[str, np.ndarray], where: str, names: dict[str, str], wanted: str, *,
                  max_label: int) -> None:
    """Refuse (one line: ``where``, the array's name in ``names``, what is wrong) arrays that are not numeric
    and non-empty, images and labels of different counts, non-finite pixels, labels that are not integers in
    0…``max_label``, or train and test images of different sizes."""
    for key, value in arrays.items():
        if value.dtype.kind not in "biuf" or value.size == 0 or value.ndim == 0:
            raise SettingsError("data_dir", f"{where}: {names[key]} has dtype {value.dtype} and shape {value.shape}; "
                                            f"it must be {wanted}")
    for split in ("train", "test"):
        x, y = arrays[f"x_{split}"], arrays[f"y_{split}"].reshape(-1)
        if len(x) != len(y):
            raise SettingsError("data_dir", f"{where}: {names[f'x_{split}']} has {len(x)} images but "
                                            f"{names[f'y_{split}']} {len(y)} labels")
        if not np.all(np.isfinite(x)):
            raise SettingsError("data_dir", f"{where}: {names[f'x_{split}']} has non-finite values")
        if not (np.all(y == np.round(y)) and y.min() >= 0 and y.max() <= max_label):
            raise SettingsError("data_dir", f"{where}: {names[f'y_{split}']} holds labels from {y.min():g} to "
                                            f"{y.max():g}; they must be integers in 0…{max_label} (class indices)")
    if arrays["x_train"][0].size != arrays["x_test"][0].size:
        raise SettingsError("data_dir", f"{where}: train images have {arrays['x_train'][0].size} values, test images "
                                        f"{arrays['x_test'][0].size}; they must match")


#: where operating-system packages install a data set (Debian's ``dataset-fashion-mnist``)
SYSTEM_FOLDERS = {"fashion-mnist": Path("/usr/share/datasets/fashion-mnist")}


def _present(name: str, folder: Path) -> bool:
    """Whether ``folder`` holds the files of ``name`` (checked for presence only; reading them checks the rest)."""
    if (folder / f"{name}.npz").is_file():
        return True
    if name == "cifar10":
        return any((where / f).is_file() for where in (folder, folder / _CIFAR_SUBFOLDER)
                   for f in (*_CIFAR_TRAIN, _CIFAR_TEST))
    return name in _IDX_DATASETS and all(_find_idx(folder, stem) for stem, _ in _IDX_FILES.values())


def find_images(data_dir: str | None) -> tuple[str, str | None]:
    """The data set ``--dataset auto`` stands for, and the folder to read it from: CIFAR-10 if ``data_dir`` holds
    it, else Fashion-MNIST from ``data_dir`` or from its system folder (:data:`SYSTEM_FOLDERS`), else the bundled
    8×8 digits (no folder)."""
    folders = [] if data_dir is None else [Path(data_dir)]
    if folders and _present("cifar10", folders[0]):
        return "cifar10", data_dir
    for folder in [*folders, SYSTEM_FOLDERS["fashion-mnist"]]:
        if _present("fashion-mnist", folder):
            return "fashion-mnist", str(folder)
    return "digits", None


def load_dataset(name: str, seed: int, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
                 data_dir: str | None = None, train_size: int | None = None, unit_norm: bool = False) -> Dataset:
    """The data set ``name`` (see :data:`DATASETS`), split and drawn from streams of ``seed``.

    Args:
        train_size: keep only the first this many training examples (None: all).
        unit_norm: scale every input (training and test) to unit Euclidean norm, as Cohen et al.'s code does;
            only for :data:`UNIT_NORM_DATASETS` (module docstring).
    """
    if name not in DATASETS:
        raise SettingsError("dataset", f"{name!r} unknown (allowed: {', '.join(DATASETS)})")
    if unit_norm and name not in UNIT_NORM_DATASETS:
        raise SettingsError("dataset", f"{name!r}: unit-norm inputs are Cohen et al.'s, only for "
                                       f"{', '.join(UNIT_NORM_DATASETS)}")
    if name == "cohen-synthetic":
        x_train, y_train = cohen_synthetic(1024, seed, "train", unit_norm=unit_norm)
        x_test, y_test = cohen_synthetic(256, seed, "test", unit_norm=unit_norm)
        data = Dataset(name, x_train, y_train, x_test, y_test, "regression", 10, 10)
    elif name in ("digits", "digits-25"):
        x_train, y_train, x_test, y_test = _digits(seed)
        if name == "digits":
            data = Dataset(name, x_train, y_train, x_test, y_test, "classification", 64, 10, image_shape=(8, 8, 1))
        else:
            projection = torch.randn((64, 25), generator=generator(seed, "data", "digits-25"),
                                     dtype=torch.float64) / math.sqrt(64 / 4)
            eye = torch.eye(25, dtype=torch.float64)[:10]
            x_train, x_test = x_train @ projection, x_test @ projection
            if unit_norm:
                x_train, x_test = _unit_rows(x_train), _unit_rows(x_test)
            data = Dataset(name, x_train, eye[y_train], x_test, eye[y_test], "regression", 25, 25)
    else:
        (x_train, y_train, x_test, y_test), source, image_shape = _local(name, data_dir)
        data = Dataset(name, x_train, y_train, x_test, y_test, "classification", int(x_train.shape[1]),
                       int(max(y_train.max(), y_test.max())) + 1, source, image_shape)
    if train_size is not None:
        data = replace(data, x_train=data.x_train[:train_size], y_train=data.y_train[:train_size])
    return data.to(dtype, device)
