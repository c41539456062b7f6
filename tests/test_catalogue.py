"""The one catalogue interface (validation.core.catalogue), and docs/design.md's worked examples of a new figure and
a new training experiment: one file each, registered beside the real entries, run through the Python API and the
command line."""

from __future__ import annotations

import json
import re
import types
from pathlib import Path

import pytest

from validation.core.catalogue import Catalogue, Entry
from validation.core.settings import SettingsError
from validation.figures import study as figures

ROOT = Path(__file__).resolve().parents[1]


def _page_block(heading: str) -> str:
    """The first Python block of docs/design.md's section ``heading``, as the page shows it."""
    page = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", page[page.index(heading):], re.S).group(1)


def _page_class(heading: str, module_name: str, class_name: str) -> type:
    """A class defined by the page's block under ``heading``, executed from the page itself."""
    module = types.ModuleType(module_name)
    exec(compile(_page_block(heading), f"docs/design.md ({module_name}.py)", "exec"), module.__dict__)
    return getattr(module, class_name)


def _worked_example() -> type:
    """The ``ToyMean`` class of docs/design.md's "Adding a figure"."""
    return _page_class("### Adding a figure", "toy_mean", "ToyMean")


@pytest.fixture
def toy(monkeypatch):
    """The worked example registered beside the real figures (the study reads its registry at run time)."""
    toy_class = _worked_example()
    monkeypatch.setattr(figures, "FIGURES", figures.FIGURES.with_entries(toy_class()))
    return toy_class


def test_the_worked_example_runs_as_a_figure(toy, tmp_path):
    result = figures.run("toy-mean", **toy.smoke)
    assert result.verdict == "PASS", result.table()
    assert result.numbers["title"] == toy.title and result.numbers["paper"] == toy.paper
    assert "mean" in result.table() and "verdict: PASS" in result.table()
    payload = json.loads(result.to_json())   # checked against the shipped schema on the way
    assert payload["result"]["figure"] == "toy-mean" and payload["settings"]["draws"] == toy.smoke["draws"]
    assert result.plot() is not None
    again = figures.run("toy-mean", **toy.smoke)
    assert again.numbers == result.numbers   # same seed, same numbers


def test_the_worked_example_fails_on_a_planted_wrong_mean(toy, monkeypatch):
    monkeypatch.setattr(toy, "shift", 1.0)
    assert figures.run("toy-mean", **toy.smoke).verdict == "FAIL"


def test_the_worked_example_on_the_command_line(toy, tmp_path, capsys):
    out = tmp_path / "toy.json"
    assert figures.main(["--figure", "toy-mean", "--draws", "400", "--resamples", "50", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["result"]["verdict"] == "PASS"
    assert figures.main(["--list"]) == 0
    assert "toy-mean" in capsys.readouterr().out
    assert figures.main(["--figure", "toy-mean", "--width", "8"]) == 2   # a flag it does not take
    assert "--width: does not apply to the toy-mean figure; it takes --draws, --resamples, --shape-tolerance" \
        in capsys.readouterr().err


class _Named(Entry):
    title = "t"
    defaults = {"width": 1}

    def __init__(self, name: str) -> None:
        self.name = name


def test_the_registry_refuses_duplicates_and_names_the_allowed_entries():
    catalogue = Catalogue("preset", [_Named("a"), _Named("b")], aliases={"c": "a"})
    assert list(catalogue) == ["a", "b"] and catalogue["c"] is catalogue["a"] and "c" in catalogue
    with pytest.raises(SettingsError, match=r"'z' unknown \(allowed: a, b, c\)"):
        catalogue["z"]
    with pytest.raises(ValueError, match="two presets are named 'a'"):
        Catalogue("preset", [_Named("a"), _Named("a")])
    with pytest.raises(ValueError, match="alias"):
        Catalogue("preset", [_Named("a")], aliases={"c": "missing"})
    wider = catalogue.with_entries(_Named("d"))
    assert list(wider) == ["a", "b", "d"] and list(catalogue) == ["a", "b"]


def _worked_experiment() -> type:
    """The ``ToyDepth`` class of docs/design.md's "Adding a training experiment"."""
    return _page_class("### Adding a training experiment", "toy_depth", "ToyDepth")


@pytest.fixture
def toy_experiment(monkeypatch):
    """The worked experiment registered beside the real ones (the study reads its registry at run time)."""
    from validation.training import study as training

    toy_class = _worked_experiment()
    monkeypatch.setattr(training, "EXPERIMENTS", training.EXPERIMENTS.with_entries(toy_class()))
    return toy_class


def test_the_worked_experiment_runs_and_fails_on_a_planted_drift(toy_experiment, monkeypatch, tmp_path):
    """Issue 64: "adding an experiment" shown by a worked example the tests execute from the page: it runs through
    the Python API (its JSON checked against the shipped schema), gives the same numbers again, and FAILs when a
    drift that does not vanish with L is planted."""
    from validation.training import study as training

    small = dict(toy_experiment.smoke, checkpoint_dir=None)
    result = training.run("toy-depth", **small)
    assert result.verdict == "PASS", "\n".join(result.table() if isinstance(result.table(), list) else [result.table()])
    payload = json.loads(result.to_json())
    assert payload["result"]["verdict"] == "PASS" and payload["settings"]["depths"] == list(small["depths"])
    assert training.run("toy-depth", **small).numbers["fit"] == result.numbers["fit"]   # same seed, same numbers
    monkeypatch.setattr(toy_experiment, "drift", 0.05)
    assert training.run("toy-depth", **small).verdict == "FAIL"


def test_the_worked_experiment_on_the_command_line(toy_experiment, tmp_path, capsys):
    from validation.training import study as training

    out = tmp_path / "toy.json"
    assert training.main(["--experiment", "toy-depth", "--checkpoint-dir", "none", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["result"]["verdict"] == "PASS"
    assert training.main(["--list"]) == 0
    assert "toy-depth" in capsys.readouterr().out


def _worked_preset():
    """The preset line of docs/design.md's "Adding a regimes preset", built from the page itself."""
    from validation.regimes import catalogue

    line = _page_block("### Adding a regimes preset").strip().rstrip(",")
    return eval(compile(line, "docs/design.md (the preset line)", "eval"), vars(catalogue))


def test_the_worked_preset_runs_and_fails_on_smooth_weights(monkeypatch, tmp_path, capsys):
    """Issue 64: "adding a preset" shown by a worked example the tests execute from the page: one line, registered
    beside the real presets, PASSes through the Python API and the command line at small sizes, and FAILs when
    smooth weights are drawn where the line claims i.i.d. ones."""
    from limits.initialisation import SmoothRegime
    from validation.regimes import study as regimes
    from validation.regimes import sweep

    preset = _worked_preset()
    monkeypatch.setattr(regimes, "PRESETS", regimes.PRESETS.with_entries(preset))
    small = dict(depths=(16, 64, 256), samples=30, width=16)
    result = regimes.run("fig1-res1", **small)
    assert result.verdict == "PASS", result.table()
    assert json.loads(result.to_json())["result"]["verdict"] == "PASS"     # checked against the shipped schema
    out = tmp_path / "p.json"
    assert regimes.main(["--preset", "fig1-res1", "--depths", "16,64,256", "--samples", "30", "--width", "16",
                         "--quiet", "--json", str(out)]) == 0
    assert regimes.main(["--list"]) == 0 and "fig1-res1" in capsys.readouterr().out
    monkeypatch.setattr(sweep, "regime_of", lambda values: SmoothRegime(0.1))
    assert regimes.run("fig1-res1", **small).verdict == "FAIL"
