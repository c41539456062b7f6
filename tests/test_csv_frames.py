"""Every study writes CSV and returns a DataFrame (issue 67): for each of ``validation.STUDIES`` a small run's
``csv_rows()`` has rows, ``to_csv()`` parses back (csv module) to the same rows and columns as ``to_frame()``, and
the CSV's numbers are the JSON's (``to_dict()["result"]``) for at least one column per study; ``--csv`` is accepted
and described by all ten command lines.

Planted regressions, each shown to fail by ``test_planted_regressions_fail``: a study whose ``csv_rows`` returns
None (the state of five studies before issue 67) or no rows, and a CSV whose numbers are not the JSON's (one number
moved by 1e-9). Without pandas the DataFrame part is skipped, and ``to_frame`` says ``pip install pandas``.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import math
import subprocess
import sys
from typing import Any, Callable

import pytest

import validation

# one small run per study (Python API), the sizes of the studies' own tests
SMALL: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "convergence": (("res1",), dict(samples=20, width=3, depths=(4, 8, 16), reference_steps=128, bootstrap=100)),
    "ablation": ((), dict(width=3, samples=30, depths=(4, 8, 16), reference_steps=128, fit_from=4, bootstrap=100)),
    "solvers": (("res1",), dict(samples=20, width=2, depths=(4, 8, 16), reference_steps=64, schemes=("euler",),
                                timing_repeats=1)),
    "gradients": (("res1",), dict(samples=12, width=3, depths=(4, 8, 16), reference_steps=128, resamples=200)),
    "weak": ((), dict(models=("tanh",), draws=100, width=8, depth=8, sde_steps=8, weak_draws=100,
                      weak_depths=(2, 4, 8), weak_reference=32, weak_fit_from=2, permutations=600, energy_points=50)),
    "multilevel": (("res1",), dict(samples=500, depths=(1, 2, 4, 8), schemes=("network",), accuracies=(5e-2,),
                                   resamples=100)),
    "phase": ((), dict(hursts=(0.3, 0.7), betas=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2), depth=32, networks=2, inputs=2,
                       workers=1)),
    "regimes": (("fig1",), dict(depths=(8, 32, 128), samples=8, width=8)),
    "training": (("cohen-scaling",), dict(datasets=("cohen-synthetic",), depths=(4, 8, 16), replicates=3, epochs=1,
                                          train_size=256, resamples=200, checkpoint_dir="none")),
    "figures": (("marion-fbm",), dict(length=64, realisations=40, resamples=20)),
}

_RESULTS: dict[str, Any] = {}


def small_run(name: str) -> Any:
    """The study's small run, once per test session."""
    if name not in _RESULTS:
        args, kwargs = SMALL[name]
        _RESULTS[name] = importlib.import_module(f"validation.{name}").run(*args, **kwargs)
    return _RESULTS[name]


def _number(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def _same(csv_cells: list[str], json_values: list[Any]) -> None:
    """The CSV's cells are the JSON's numbers (``null``: an empty cell), exactly."""
    assert len(csv_cells) == len(json_values) and csv_cells
    for cell, value in zip(csv_cells, json_values):
        assert _number(cell) == (None if value is None else float(value)), (cell, value)


def _leaves(node: Any) -> list[float | None]:
    """Every number of a JSON value (None for ``null``; text and flags left out), as :func:`long_rows` takes them."""
    if isinstance(node, dict):
        return [x for value in node.values() for x in _leaves(value)]
    if isinstance(node, list):
        return [x for value in node for x in _leaves(value)]
    if node is None or (isinstance(node, (int, float)) and not isinstance(node, bool)):
        return [None if node is None else float(node)]
    return []


def _by(rows: list[dict[str, str]], **match: str) -> list[dict[str, str]]:
    return [row for row in rows if all(row[k] == v for k, v in match.items())]


# per study: compare at least one CSV column with the JSON's numbers (rows: the CSV parsed back; data: the result)
def _convergence(rows, data):
    _same([r["rms_error"] for r in rows], data["fits"]["rms"]["errors"])


def _ablation(rows, data):
    _same([r["corrected_error"] for r in rows], data["corrected"]["fit"]["errors"])
    _same([r["naive_error"] for r in rows], data["naive"]["fit"]["errors"])


def _solvers(rows, data):
    scheme = data["schemes"][0]
    _same([r["rms_error"] for r in _by(rows, scheme=scheme["name"])], scheme["rms_errors"])


def _gradients(rows, data):
    _same([r["rms_state"] for r in rows], data["quantities"]["state"]["rms_errors"])
    _same([r["rms_input"] for r in rows], data["quantities"]["input"]["rms_errors"])


def _weak(rows, data):
    tests = _by(rows, part="two-sample test")
    _same([r["p_value"] for r in tests], list(data["p_values"].values()))
    for name, functions in data["models"]["tanh"]["weak"]["functions"].items():
        for scheme in ("network", "euler"):
            mine = _by(rows, part="weak error", model="tanh", name=name, scheme=scheme)
            fit = functions[scheme]
            _same([r["weak_error"] for r in mine], fit["errors"])
            _same([r["standard_error"] for r in mine], fit["standard_errors"])
            _same([r["rate"] for r in mine], [fit["rate"]] * len(mine))
            assert [int(r["depth"]) for r in mine] == fit["depths"]


def _multilevel(rows, data):
    solver = data["solvers"][0]
    mine = _by(rows, solver=solver["solver"])
    _same([r["mean_p"] for r in mine], [level["mean_p"] for level in solver["levels"]])


def _phase(rows, data):
    hursts, betas = data["hursts"], data["betas"]
    assert len(rows) == len(hursts) * len(betas)
    for key in ("slope_r_h", "main_r_h_median_log10"):
        _same([r[key] for r in rows], [data["grid"][key][i][j] for j in range(len(hursts)) for i in range(len(betas))])
    _same([r["critical_beta_depth_r_h"] for r in rows],
          [value for value in data["critical_beta"]["depth_r_h"] for _ in betas])


def _long(rows, data):
    """A catalogue study's long format: exactly the JSON's numbers, in its order."""
    _same([r["value"] for r in rows], _leaves(data))


def _regimes(rows, data):
    _long(rows, data)
    estimate = _by(rows, section="critical_beta_estimate", quantity="r_h")
    _same([r["value"] for r in estimate], [data["critical_beta_estimate"]["r_h"]])
    first = data["per_beta"][0]
    median = _by(rows, section="per_beta", record=f"[0](beta={first['beta']})/r_h", quantity="median")
    _same([r["value"] for r in median], first["r_h"]["median"])
    assert [int(r["index"]) for r in median] == list(range(len(first["r_h"]["median"])))


def _training(rows, data):
    _long(rows, data)
    alpha = _by(rows, section="groups", record="cohen-synthetic/tanh/alpha", quantity="value")
    _same([r["value"] for r in alpha], [data["groups"]["cohen-synthetic/tanh"]["alpha"]["value"]])


def _figures(rows, data):
    _long(rows, data)
    estimates = _by(rows, section="per_hurst", quantity="estimate")
    _same([r["value"] for r in estimates], [entry["estimate"] for entry in data["per_hurst"]])


SAME_AS_JSON: dict[str, Callable[[list[dict[str, str]], dict[str, Any]], None]] = {
    "convergence": _convergence, "ablation": _ablation, "solvers": _solvers, "gradients": _gradients, "weak": _weak,
    "multilevel": _multilevel, "phase": _phase, "regimes": _regimes, "training": _training, "figures": _figures,
}


def check_table(name: str, result: Any) -> None:
    """What every study's table must satisfy (raises AssertionError otherwise)."""
    rows = result.csv_rows()
    assert isinstance(rows, list) and len(rows) >= 1, f"{name}: csv_rows() gave {rows!r:.80}"
    columns = list(rows[0])
    assert all(list(row) == columns for row in rows), f"{name}: the rows do not share their columns"
    parsed = list(csv.reader(io.StringIO(result.to_csv())))
    assert parsed[0] == columns and len(parsed) == len(rows) + 1
    assert all(len(line) == len(columns) for line in parsed[1:])
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))["result"]
    SAME_AS_JSON[name]([dict(zip(parsed[0], line)) for line in parsed[1:]], data)


def test_every_study_is_covered():
    assert set(SMALL) == set(SAME_AS_JSON) == set(validation.STUDIES)


@pytest.mark.parametrize("name", validation.STUDIES)
def test_every_study_writes_csv_with_the_json_numbers(name):
    check_table(name, small_run(name))


@pytest.mark.parametrize("name", validation.STUDIES)
def test_every_study_returns_a_frame_of_its_csv(name):
    pd = pytest.importorskip("pandas")
    result = small_run(name)
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame)
    parsed = list(csv.reader(io.StringIO(result.to_csv())))
    assert list(frame.columns) == parsed[0] and frame.shape == (len(parsed) - 1, len(parsed[0]))
    # the frame holds the CSV's numbers: a column read back from the CSV text by pandas is the same
    again = pd.read_csv(io.StringIO(result.to_csv()))
    assert list(again.columns) == list(frame.columns) and len(again) == len(frame)
    numeric = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    for column in numeric[:3]:
        left = frame[column].to_numpy(dtype=float)
        right = again[column].to_numpy(dtype=float)
        for a, b in zip(left, right):
            assert (not math.isfinite(a) and math.isnan(b)) or a == b, (column, a, b)


def test_without_pandas_to_frame_says_how_to_install_it(monkeypatch):
    result = small_run("convergence")
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match="pip install pandas"):
        result.to_frame()


def test_planted_regressions_fail(monkeypatch):
    """The per-study check catches a study with no CSV (csv_rows None, the state of weak, phase, regimes, training
    and figures before issue 67), one with no rows, and a CSV number that is not the JSON's."""
    result = small_run("weak")
    cls = type(result)
    original = cls.csv_rows
    monkeypatch.setattr(cls, "csv_rows", lambda self: None)
    with pytest.raises((AssertionError, ValueError)):
        check_table("weak", result)
    monkeypatch.setattr(cls, "csv_rows", lambda self: [])
    with pytest.raises(AssertionError):
        check_table("weak", result)

    def moved(self):
        rows = original(self)
        row = next(r for r in rows if r["part"] == "weak error")
        row["weak_error"] += 1e-9
        return rows

    monkeypatch.setattr(cls, "csv_rows", moved)
    with pytest.raises(AssertionError):
        check_table("weak", result)
    # a catalogue study's long format likewise
    regimes = small_run("regimes")
    keep = type(regimes).csv_rows
    monkeypatch.setattr(type(regimes), "csv_rows", lambda self: keep(self)[1:])  # a number left out
    with pytest.raises(AssertionError):
        check_table("regimes", regimes)


@pytest.mark.parametrize("name", validation.STUDIES)
def test_every_command_line_takes_csv_and_says_what_it_holds(name, capsys):
    module = importlib.import_module(f"validation.{name}")
    assert module.main(["--help-all"]) == 0
    out = capsys.readouterr().out
    assert "--csv PATH" in out
    text = " ".join(out.split("--csv PATH", 1)[1].split("--", 1)[0].split())
    assert "CSV" in text


def test_the_command_line_writes_the_csv(tmp_path):
    out, js = tmp_path / "weak.csv", tmp_path / "weak.json"
    proc = subprocess.run([sys.executable, "-m", "validation.weak", "--models", "tanh", "--draws", "100", "--width", "8",
                           "--depth", "8", "--sde-steps", "8", "--weak-draws", "100", "--weak-depths", "2:8",
                           "--weak-reference", "32", "--weak-fit-from", "2", "--permutations", "600",
                           "--energy-points", "50", "--quiet", "--json", str(js), "--csv", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1, 4), proc.stderr
    assert f"wrote {out}" in proc.stdout and f"wrote {js}" in proc.stdout
    rows = list(csv.DictReader(out.open()))
    assert rows and rows[0]["part"] == "two-sample test"
    data = json.loads(js.read_text())["result"]
    _weak(rows, data)
