"""Real images from local files: the IDX files of MNIST / Fashion-MNIST (plain or gzip) and the Keras .npz, read
without downloading anything; every file is untrusted input, refused in one line (exit status 2) when bad. The IDX
files here are small ones written by the tests (5×3 images: the reader must not assume 28×28)."""

from __future__ import annotations

import gzip
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from validation.core.settings import SettingsError
from validation.training.data import load_dataset, read_cifar10_bin, read_idx

NAMES = {"x_train": "train-images-idx3-ubyte", "y_train": "train-labels-idx1-ubyte",
         "x_test": "t10k-images-idx3-ubyte", "y_test": "t10k-labels-idx1-ubyte"}
FASHION = Path("/usr/share/datasets/fashion-mnist")


def _arrays(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x_train": rng.integers(0, 256, (20, 5, 3), dtype=np.uint8), "y_train": np.arange(20, dtype=np.uint8) % 10,
            "x_test": rng.integers(0, 256, (8, 5, 3), dtype=np.uint8), "y_test": np.arange(8, dtype=np.uint8) % 10}


def _idx(array: np.ndarray, type_code: int = 0x08) -> bytes:
    """``array`` as an IDX file: magic number, big-endian sizes, the bytes."""
    return (bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
            + array.astype(np.uint8).tobytes())


def _write_idx(folder: Path, arrays: dict[str, np.ndarray], gz: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for key, stem in NAMES.items():
        data = _idx(arrays[key])
        if gz:
            (folder / f"{stem}.gz").write_bytes(gzip.compress(data))
        else:
            (folder / stem).write_bytes(data)
    return folder


def _same(a, b) -> None:
    for key in ("x_train", "y_train", "x_test", "y_test"):
        assert torch.equal(getattr(a, key), getattr(b, key)), key
    assert (a.n_in, a.n_out, a.task) == (b.n_in, b.n_out, b.task)


def test_idx_files_gz_and_plain_read_the_same_arrays(tmp_path):
    arrays = _arrays()
    zipped, plain = _write_idx(tmp_path / "gz", arrays), _write_idx(tmp_path / "plain", arrays, gz=False)
    for key, stem in NAMES.items():
        ndim = arrays[key].ndim
        assert np.array_equal(read_idx(zipped / f"{stem}.gz", ndim), arrays[key])
        assert np.array_equal(read_idx(plain / stem, ndim), arrays[key])
    (tmp_path / "gzip-named-plain").write_bytes((zipped / f"{NAMES['y_test']}.gz").read_bytes())
    assert np.array_equal(read_idx(tmp_path / "gzip-named-plain", 1), arrays["y_test"])  # by the gzip magic bytes

    a = load_dataset("fashion-mnist", 0, data_dir=str(zipped))
    b = load_dataset("fashion-mnist", 0, data_dir=str(plain))
    _same(a, b)
    assert a.x_train.shape == (20, 15) and a.x_test.shape == (8, 15) and (a.n_in, a.n_out) == (15, 10)
    assert a.describe()["source"] == {"layout": "idx", "files": [f"{NAMES[k]}.gz" for k in NAMES]}
    assert b.describe()["source"] == {"layout": "idx", "files": list(NAMES.values())}
    expected = torch.as_tensor(arrays["x_train"].reshape(20, -1), dtype=torch.float64) / 255
    assert torch.allclose(a.x_train + expected.mean(dim=0), expected)      # scaled /255, centred by the train mean
    assert torch.equal(a.y_test, torch.as_tensor(arrays["y_test"], dtype=torch.long))


def test_idx_files_and_the_npz_give_identical_tensors(tmp_path):
    arrays = _arrays(1)
    idx = _write_idx(tmp_path / "idx", arrays)
    (tmp_path / "npz").mkdir()
    for name in ("fashion-mnist", "mnist"):
        np.savez(tmp_path / "npz" / f"{name}.npz", **arrays)
        from_npz = load_dataset(name, 3, data_dir=str(tmp_path / "npz"), train_size=12)
        from_idx = load_dataset(name, 3, data_dir=str(idx), train_size=12)
        _same(from_npz, from_idx)
        assert from_npz.describe()["source"] == {"layout": "npz", "files": [f"{name}.npz"]}
        assert from_idx.x_train.shape == (12, 15)
    np.savez(idx / "fashion-mnist.npz", **_arrays(2))                        # both layouts: the IDX files come first
    assert load_dataset("fashion-mnist", 0, data_dir=str(idx)).describe()["source"]["layout"] == "idx"


def _break(folder: Path, kind: str) -> None:
    """Local Fashion-MNIST files that are bad in one way."""
    arrays = _arrays()
    if kind == "pickled":
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "fashion-mnist.npz", **{**arrays, "x_train": np.array([object()] * 20, dtype=object)})
        return
    if kind == "missing":
        folder.mkdir(parents=True, exist_ok=True)
        return
    if kind == "labels out of range":
        arrays["y_train"] = arrays["y_train"] + 3
    elif kind == "fewer labels":
        arrays["y_test"] = arrays["y_test"][:5]
    elif kind == "image shapes":
        arrays["x_test"] = arrays["x_test"].reshape(8, 3, 5)
    _write_idx(folder, arrays)
    images = folder / f"{NAMES['x_train']}.gz"
    data = gzip.decompress(images.read_bytes())
    if kind == "wrong magic":
        images.write_bytes(gzip.compress(_idx(arrays["x_train"], type_code=0x0D)))   # float32 type code
    elif kind == "labels as images":
        images.write_bytes(gzip.compress(_idx(arrays["y_train"])))
    elif kind == "truncated":
        images.write_bytes(gzip.compress(data[:-7]))
    elif kind == "trailing bytes":
        images.write_bytes(gzip.compress(data + b"\x00"))
    elif kind == "short header":
        images.write_bytes(gzip.compress(data[:9]))
    elif kind == "corrupt gzip":
        zipped = bytearray(images.read_bytes())
        zipped[len(zipped) // 2:] = bytes(len(zipped) - len(zipped) // 2)
        images.write_bytes(bytes(zipped))
    elif kind == "absurd size":
        images.write_bytes(gzip.compress(bytes([0, 0, 8, 3]) + struct.pack(">3I", 100_000, 100_000, 100_000) + data[16:]))


BAD = [
    ("wrong magic", "magic number 0x00000d03, expected 0x00000803"),
    ("labels as images", "magic number 0x00000801, expected 0x00000803"),
    ("truncated", "is truncated: the header promises 20×5×3 = 300 bytes of data, the file holds 293"),
    ("short header", "is truncated: 9 bytes, shorter than an IDX header of 16"),
    ("trailing bytes", "trailing bytes"),
    ("corrupt gzip", "cannot be read"),
    ("absurd size", "more than the 1000000000 accepted"),
    ("fewer labels", "t10k-images-idx3-ubyte.gz has 8 images but t10k-labels-idx1-ubyte.gz 5 labels"),
    ("labels out of range", "train-labels-idx1-ubyte.gz holds labels from 3 to 12; they must be integers in 0…9"),
    ("image shapes", "train images are 5×3 (train-images-idx3-ubyte.gz), test images 3×5"),
    ("pickled", "fashion-mnist.npz cannot be read"),
    ("missing", "no fashion-mnist files in"),
]


@pytest.mark.parametrize("kind, needle", BAD, ids=[kind for kind, _ in BAD])
def test_a_bad_local_file_is_refused_naming_it(tmp_path, kind, needle):
    _break(tmp_path, kind)
    with pytest.raises(SettingsError) as caught:
        load_dataset("fashion-mnist", 0, data_dir=str(tmp_path))
    message = str(caught.value)
    assert needle in message and "\n" not in message
    if kind not in ("missing", "pickled", "fewer labels", "labels out of range", "image shapes"):
        assert f"{NAMES['x_train']}.gz" in message                            # names the file


def test_missing_files_list_what_was_looked_for(tmp_path):
    with pytest.raises(SettingsError, match="never downloaded.*IDX files or fashion-mnist.npz"):
        load_dataset("fashion-mnist", 0)
    (tmp_path / NAMES["y_test"]).write_bytes(_idx(_arrays()["y_test"]))
    with pytest.raises(SettingsError) as caught:
        load_dataset("mnist", 0, data_dir=str(tmp_path))
    message = str(caught.value)
    for stem in NAMES.values():
        assert f"{stem}[.gz]" in message
    assert "or mnist.npz" in message and f"found only {NAMES['y_test']}" in message
    with pytest.raises(SettingsError, match="is not a folder"):
        load_dataset("mnist", 0, data_dir=str(tmp_path / "nowhere"))
    with pytest.raises(SettingsError, match="no cifar10 files in .*cifar10.npz.*binary version"):   # npz or .bin
        _write_idx(tmp_path / "idx", _arrays())
        load_dataset("cifar10", 0, data_dir=str(tmp_path / "idx"))
    with pytest.raises(ValueError, match="ndim"):
        read_idx(tmp_path / NAMES["y_test"], 4)


CLI = [("wrong magic", "expected 0x00000803"), ("missing", "no fashion-mnist files in"),
       ("pickled", "fashion-mnist.npz cannot be read")]


@pytest.mark.parametrize("kind, needle", CLI, ids=[kind for kind, _ in CLI])
def test_the_command_line_refuses_a_bad_file_in_one_line(tmp_path, kind, needle):
    """Bad input is exit status 2 and one line on stderr — never an internal error (exit 3) or a traceback."""
    _break(tmp_path, kind)
    proc = subprocess.run([sys.executable, "-m", "validation.training", "--experiment", "marion-fig9", "--dataset",
                           "fashion-mnist", "--data-dir", str(tmp_path), "--quiet"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0


@pytest.mark.skipif(not FASHION.is_dir(), reason="Debian's dataset-fashion-mnist is not installed")
def test_real_fashion_mnist_from_the_debian_package():
    """The four IDX .gz files of Debian's ``dataset-fashion-mnist``: 60000 training and 10000 test images of 28×28,
    10 classes, 1000 test images of each."""
    assert read_idx(FASHION / f"{NAMES['y_train']}.gz", 1).shape == (60000,)
    data = load_dataset("fashion-mnist", 0, data_dir=str(FASHION), train_size=512)
    assert data.x_train.shape == (512, 784) and data.x_test.shape == (10000, 784)
    assert (data.n_in, data.n_out, data.task) == (784, 10, "classification")
    assert data.y_train.min() >= 0 and data.y_train.max() <= 9
    assert torch.equal(torch.bincount(data.y_test, minlength=10), torch.full((10,), 1000))
    assert data.describe()["source"]["layout"] == "idx"
    assert abs(float(data.x_train.mean())) < 0.05       # centred by the mean of all 60000 training images


# --- CIFAR-10, binary version (cifar-10-binary.tar.gz): records of 1 label byte + 1024 R, 1024 G, 1024 B bytes ---

CIFAR_FILES = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]


def _cifar_records(count: int, seed: int) -> np.ndarray:
    """``count`` random records (count, 3073) uint8 of the CIFAR-10 binary version: labels 0…9, then the pixels."""
    rng = np.random.default_rng(seed)
    records = rng.integers(0, 256, (count, 3073), dtype=np.uint8)
    records[:, 0] = rng.integers(0, 10, count)
    return records


def _write_cifar(folder: Path, per_batch: int = 3, test: int = 2) -> list[np.ndarray]:
    """Five training batches of ``per_batch`` records and a test batch of ``test``; returns the six record arrays."""
    folder.mkdir(parents=True, exist_ok=True)
    batches = [_cifar_records(per_batch if name != "test_batch.bin" else test, i) for i, name in enumerate(CIFAR_FILES)]
    for name, records in zip(CIFAR_FILES, batches):
        (folder / name).write_bytes(records.tobytes())
    return batches


def test_cifar10_binary_records_become_keras_layout_images(tmp_path):
    batches = _write_cifar(tmp_path)
    images, labels = read_cifar10_bin(tmp_path / "data_batch_2.bin")
    records = batches[1]
    assert images.shape == (3, 32, 32, 3) and images.dtype == np.uint8 and labels.dtype == np.uint8
    assert np.array_equal(labels, records[:, 0])
    n, row, col = 2, 5, 17                                     # red, green, blue planes of 1024 bytes, row-major
    for channel in range(3):
        assert images[n, row, col, channel] == records[n, 1 + 1024 * channel + 32 * row + col]
    assert np.array_equal(images[0, :, :, 1].reshape(-1), records[0, 1025:2049])   # the whole green plane

    data = load_dataset("cifar10", 0, data_dir=str(tmp_path))
    assert data.x_train.shape == (15, 3072) and data.x_test.shape == (2, 3072) and data.n_in == 3072
    train = np.concatenate(batches[:5])
    assert torch.equal(data.y_train, torch.as_tensor(train[:, 0], dtype=torch.long))
    assert torch.equal(data.y_test, torch.as_tensor(batches[5][:, 0], dtype=torch.long))
    keras = train[:, 1:].reshape(15, 3, 32, 32).transpose(0, 2, 3, 1).reshape(15, -1)
    expected = torch.as_tensor(keras, dtype=torch.float64) / 255
    assert torch.allclose(data.x_train + expected.mean(dim=0), expected)   # scaled /255, centred by the train mean
    assert data.describe()["source"] == {"layout": "cifar10-binary", "files": CIFAR_FILES}
    assert "binary version" in data.describe()["description"]


def test_cifar10_binary_and_npz_give_identical_tensors(tmp_path):
    batches = _write_cifar(tmp_path / "bin")
    train, test = np.concatenate(batches[:5]), batches[5]
    keras = {"x_train": train[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), "y_train": train[:, :1],
             "x_test": test[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), "y_test": test[:, :1]}
    (tmp_path / "npz").mkdir()
    np.savez(tmp_path / "npz" / "cifar10.npz", **keras)
    from_bin = load_dataset("cifar10", 4, data_dir=str(tmp_path / "bin"))
    from_npz = load_dataset("cifar10", 4, data_dir=str(tmp_path / "npz"))
    _same(from_bin, from_npz)
    assert from_npz.describe()["source"] == {"layout": "npz", "files": ["cifar10.npz"]}
    np.savez(tmp_path / "bin" / "cifar10.npz", **{**keras, "y_train": (keras["y_train"] + 1) % 10})
    assert load_dataset("cifar10", 0, data_dir=str(tmp_path / "bin")).describe()["source"]["layout"] == "npz"


def test_cifar10_binary_in_the_tarballs_subfolder_is_found(tmp_path):
    batches = _write_cifar(tmp_path / "cifar-10-batches-bin")
    data = load_dataset("cifar10", 0, data_dir=str(tmp_path))
    assert data.describe()["source"] == {"layout": "cifar10-binary",
                                         "files": [f"cifar-10-batches-bin/{name}" for name in CIFAR_FILES]}
    assert torch.equal(data.y_test, torch.as_tensor(batches[5][:, 0], dtype=torch.long))


def _break_cifar(folder: Path, kind: str) -> None:
    """A local CIFAR-10 folder that is bad in one way."""
    if kind == "pickled only":
        (folder / "cifar-10-batches-py").mkdir(parents=True)
        (folder / "cifar-10-batches-py" / "data_batch_1").write_bytes(b"\x80\x04K\x00.")
        return
    if kind == "pickled batch":
        folder.mkdir(parents=True)
        (folder / "data_batch_1").write_bytes(b"\x80\x04K\x00.")
        return
    batches = _write_cifar(folder)
    if kind == "truncated":
        (folder / "data_batch_3.bin").write_bytes(batches[2].tobytes()[:-100])
    elif kind == "wrong record length":             # CIFAR-100's records: 2 label bytes, 3074 bytes each
        (folder / "data_batch_3.bin").write_bytes(np.zeros((3, 3074), dtype=np.uint8).tobytes())
    elif kind == "empty":
        (folder / "data_batch_3.bin").write_bytes(b"")
    elif kind == "label 10":
        batches[2][1, 0] = 10
        (folder / "data_batch_3.bin").write_bytes(batches[2].tobytes())
    elif kind == "missing test batch":
        (folder / "test_batch.bin").unlink()


CIFAR_BAD = [
    ("truncated", "data_batch_3.bin: truncated or wrong record length: 9119 bytes is not a multiple of the 3073"),
    ("wrong record length", "data_batch_3.bin: truncated or wrong record length: 9222 bytes is not a multiple of the "
                            "3073"),
    ("empty", "data_batch_3.bin is empty"),
    ("label 10", "data_batch_3.bin: record 1 (counting from 0) has label 10; CIFAR-10 labels are 0…9"),
    ("missing test batch", "the CIFAR-10 binary version is incomplete, missing test_batch.bin (all six are required: "
                           "data_batch_1.bin, data_batch_2.bin"),
    ("pickled only", "cifar-10-batches-py is the pickled Python version of CIFAR-10, which is never read"),
    ("pickled batch", "data_batch_1 is the pickled Python version of CIFAR-10, which is never read"),
]


@pytest.mark.parametrize("kind, needle", CIFAR_BAD, ids=[kind for kind, _ in CIFAR_BAD])
def test_a_bad_cifar10_binary_folder_is_refused_naming_it(tmp_path, kind, needle):
    _break_cifar(tmp_path / "data", kind)
    with pytest.raises(SettingsError) as caught:
        load_dataset("cifar10", 0, data_dir=str(tmp_path / "data"))
    message = str(caught.value)
    assert needle in message and "\n" not in message
    if kind.startswith("pickled"):
        assert ("use the CIFAR-10 binary version, cifar-10-binary.tar.gz: data_batch_1.bin … data_batch_5.bin, "
                "test_batch.bin") in message


CIFAR_CLI = ["truncated", "wrong record length", "label 10", "missing test batch", "pickled only"]


@pytest.mark.parametrize("kind", CIFAR_CLI)
def test_the_command_line_refuses_a_bad_cifar10_binary_folder_in_one_line(tmp_path, kind):
    """Each refusal of the binary version is exit status 2 and one line on stderr, no traceback."""
    _break_cifar(tmp_path / "data", kind)
    proc = subprocess.run([sys.executable, "-m", "validation.training", "--experiment", "marion-fig9", "--dataset",
                           "cifar10", "--data-dir", str(tmp_path / "data"), "--quiet"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert dict(CIFAR_BAD)[kind] in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0


def test_an_npz_member_that_claims_more_than_it_holds_is_refused_before_loading(tmp_path):
    """A hostile .npz whose x_train header claims shape (10¹²,) float64 is refused from its header (bad input, one line),
    before numpy allocates 8 TB; a well-formed archive still loads (issue 46)."""
    import io
    import zipfile

    from validation.core.settings import SettingsError
    from validation.training import data

    def member(shape, dtype, payload):
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                   "fortran_order": False, "shape": shape})
        return buf.getvalue() + payload

    def small(value):
        buf = io.BytesIO()
        np.save(buf, value)
        return buf.getvalue()

    path = tmp_path / "mnist.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x_train.npy", member((10**12,), "float64", b"\0" * 64))
        for key in ("y_train", "x_test", "y_test"):
            archive.writestr(f"{key}.npy", small(np.zeros(4, dtype=np.uint8)))
    with pytest.raises(SettingsError, match=r"x_train declares shape \(1000000000000,\)"):
        data._read_arrays(path)
    good = tmp_path / "good.npz"
    np.savez(good, x_train=np.zeros((4, 9)), y_train=np.arange(4), x_test=np.zeros((2, 9)), y_test=np.arange(2))
    assert data._read_arrays(good)["x_train"].shape == (4, 9)


@pytest.mark.parametrize("layout", ["idx", "npz", "cifar10"])
def test_a_file_the_memory_cannot_load_is_refused_before_reading(tmp_path, monkeypatch, layout):
    """Issue 46: a valid file whose data and the loader's two float64 copies exceed the memory this process may still
    use is refused from its header or size (bad input, one line naming the file), not read until an out-of-memory
    exit; with the memory there, the same file loads."""
    from validation.core import runtime
    from validation.core.settings import SettingsError

    arrays = _arrays()
    if layout == "idx":
        folder, name = _write_idx(tmp_path / "idx", arrays), "fashion-mnist"
    elif layout == "npz":
        folder, name = tmp_path / "npz", "mnist"
        folder.mkdir()
        np.savez(folder / "mnist.npz", **arrays)
    else:
        folder, name = tmp_path / "cifar", "cifar10"
        folder.mkdir()
        record = np.zeros((3, 3073), dtype=np.uint8)
        for stem in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            (folder / f"{stem}.bin").write_bytes(record.tobytes())
    assert load_dataset(name, 0, data_dir=str(folder)).x_train.shape[0] > 0
    monkeypatch.setattr(runtime, "available_memory_mb", lambda: 0.001)      # 1 KiB: the train images need more
    with pytest.raises(SettingsError, match=r"need about .* GiB to load \(the data and two float64 copies\)"):
        load_dataset(name, 0, data_dir=str(folder))
