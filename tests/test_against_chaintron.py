"""benchmarks/against_chaintron.py: bad arguments and a missing or broken checkout are one line with exit 2 or 3; with
the authors' checkout (``CHAINTRON_AUTHORS_DIR``) a small run agrees with their code to rounding."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("against_chaintron", ROOT / "benchmarks" / "against_chaintron.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_checkout(folder: Path, source: str) -> Path:
    resnet = folder / "linear_experiments_python" / "src" / "resnet"
    resnet.mkdir(parents=True)
    (folder / "linear_experiments_python" / "src" / "__init__.py").write_text("")
    (resnet / "__init__.py").write_text("")
    (resnet / "model_with_embedding.py").write_text(source)
    return folder


def test_a_missing_checkout_is_one_line_and_exit_2(bench, tmp_path, capsys):
    assert bench.main(["--authors-dir", str(tmp_path), "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model_with_embedding.py" in err[0] and "2026-resnets-of-all-shapes-and-sizes" in err[0]


@pytest.mark.parametrize("argv, needle", [
    (["--cells", "10x10"], "LxMxD"), (["--cells", "10x10x10,10x10x10"], "each once"), (["--dims", "16,8,32"], "increasing"),
    (["--steps", "0"], "--steps"), (["--grid", "5"], "--grid"), (["--replicates", "1"], "--replicates"),
    (["--seed", "-1"], "--seed"), (["--eta", "0"], "--eta"),
])
def test_bad_arguments_exit_2_in_one_line(bench, tmp_path, capsys, argv, needle):
    checkout = _fake_checkout(tmp_path / "authors", "")
    assert bench.main(["--authors-dir", str(checkout), "--json", str(tmp_path / "r.json"), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_the_committed_result_needs_force(bench, tmp_path, capsys):
    if not bench.COMMITTED_JSON.exists():
        pytest.skip("no committed result yet")
    checkout = _fake_checkout(tmp_path / "authors", "")
    assert bench.main(["--authors-dir", str(checkout)]) == 2
    assert "--force" in capsys.readouterr().err


def test_a_failing_authors_side_is_one_line_and_exit_3(bench, tmp_path, capsys):
    checkout = _fake_checkout(tmp_path / "authors", "raise ImportError('their module is broken')\n")
    out = tmp_path / "r.json"
    assert bench.main(["--authors-dir", str(checkout), "--json", str(out), "--cells", "3x2x4", "--dims", "4,8,16",
                       "--replicates", "2", "--steps", "2"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "their module is broken" in err[0] and not out.exists()


@pytest.mark.skipif(not os.environ.get("CHAINTRON_AUTHORS_DIR"), reason="set CHAINTRON_AUTHORS_DIR to a checkout of "
                    "lchizat/2026-resnets-of-all-shapes-and-sizes")
def test_with_their_checkout_the_same_weights_give_the_same_numbers(bench, tmp_path):
    out = tmp_path / "r.json"
    assert bench.main(["--authors-dir", os.environ["CHAINTRON_AUTHORS_DIR"], "--json", str(out), "--cells",
                       "4x3x5,6x8x7", "--dims", "8,32,128", "--replicates", "3", "--steps", "4"]) == 0
    payload = json.loads(out.read_text())
    for cell in payload["same_weights"].values():
        assert cell["hidden_max_relative_difference"] < 1e-12 and cell["output_max_difference"] < 1e-12
