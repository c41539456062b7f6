"""benchmarks/against_authors.py without the authors' code: a missing checkout or dependency is one line and exit 2,
and the comparison statistics can tell two laws apart (the full run needs their checkout: see the script)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("against_authors", ROOT / "benchmarks" / "against_authors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_checkout_is_named_and_exits_2(bench, tmp_path, capsys):
    assert bench.main(["--authors-dir", str(tmp_path), "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no config.py, utils.py, models.py" in err[0] and "scaling-resnets" in err[0]


def test_missing_dependencies_are_named_with_the_install_command(bench, tmp_path, capsys):
    for name in bench.AUTHORS_FILES:
        (tmp_path / name).write_text("")
    python = tmp_path / "python"      # an interpreter that has none of the authors' modules
    python.write_text(f"#!/bin/sh\nexec {sys.executable} -S -I \"$@\"\n")
    python.chmod(0o755)
    assert bench.main(["--authors-dir", str(tmp_path), "--authors-python", str(python), "--json",
                       str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks" in err[0] and "pip install" in err[0], err


@pytest.mark.parametrize("argv, needle", [(["--cells", "fig9"], "--cells"), (["--iid-samples", "1"], "--iid-samples")])
def test_bad_flags_exit_2(bench, tmp_path, capsys, argv, needle):
    assert bench.main(["--authors-dir", str(tmp_path), *argv]) == 2
    assert needle in capsys.readouterr().err


def test_the_comparison_finds_a_shifted_law_and_not_the_same_one(bench):
    rng = np.random.default_rng(0)
    same = bench.compare(rng.lognormal(0, 1, (100, 1)), rng.lognormal(0, 1, (100, 1)), rng)
    shifted = bench.compare(rng.lognormal(0.7, 1, (100, 1)), rng.lognormal(0, 1, (100, 1)), rng)
    assert abs(same["z_log10_median"]) < 3 and shifted["z_log10_median"] > 3
    low, high = shifted["median_ratio_ci"]
    assert low < shifted["median_ratio"] < high and low > 1
    overflow = bench.compare(np.full((10, 2), np.inf), rng.lognormal(0, 1, (10, 2)), rng)
    assert overflow["authors"]["non_finite"] == 20 and overflow["z_mean"] is None and overflow["median_ratio"] is None


@pytest.mark.parametrize("extra, message", [
    (["--seed", "-1"], "--seed: -1 is out of range"),
    (["--iid-samples", "1000000000000"], "--iid-samples: 1000000000000 is out of range (allowed: 2 to 1000000)"),
    (["--fbm-paths", "1"], "--fbm-paths: 1 is out of range"),
    (["--exact-generator-at", "1.5"], "--exact-generator-at: 1.5 is out of range"),
    (["--cells", "fig9"], "--cells: ['fig9']"),
    (["--json", "no/such/folder/r.json"], "the folder"),
    ([], "is the committed result: give another path, or --force"),
    (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
])
def test_every_argument_is_checked_before_the_authors_side_runs(bench, tmp_path, capsys, extra, message):
    """One line, exit 2, before anything runs: the authors' checkout is not even looked at (it is empty here)."""
    argv = ["--authors-dir", str(tmp_path)] + (["--json", str(tmp_path / "r.json")] if extra else [])
    try:
        code = bench.main(argv + extra)
    except SystemExit as exc:   # argparse's own errors (a value that is not a number)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in err[0], err


def test_a_relative_authors_python_is_made_absolute(bench):
    assert Path(bench._interpreter("./python3")).is_absolute()
    assert bench._interpreter(Path(sys.executable).name) == Path(sys.executable).name or \
        Path(bench._interpreter(Path(sys.executable).name)).is_absolute()


def test_an_authors_side_without_results_is_one_line_and_exit_3(bench, tmp_path, capsys, monkeypatch):
    for name in bench.AUTHORS_FILES:
        (tmp_path / name).write_text("")
    monkeypatch.setattr(bench, "check_authors", lambda folder, python: {"dir": str(folder), "commit": None,
                                                                         "python": "3", "versions": {}})
    monkeypatch.setattr(bench, "run_authors", lambda job, python, cache, on_cell: {})
    code = bench.main(["--authors-dir", str(tmp_path), "--cells", "fig1", "--json", str(tmp_path / "r.json")])
    assert code == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "returned no result for" in err[0] and not (tmp_path / "r.json").exists(), err
