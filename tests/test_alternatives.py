"""Every catalogue entry declares the planted alternatives its verdict must reject (``Entry.rejects``,
validation/core/catalogue.py): each maps a wrong claim, in words, to the test that plants it — a perturbation of the
model, the data or the claim, never of the verdict — and asserts that the entry's check FAILs. An entry with no such
test yet is named in :data:`NOT_YET_PLANTED` with the reason; these tests keep the two lists honest.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from validation.figures.study import FIGURES
from validation.regimes.catalogue import PRESETS
from validation.training.catalogue import EXPERIMENTS

ROOT = Path(__file__).resolve().parent.parent

#: entry name → why no test plants an alternative its verdict must reject yet
NOT_YET_PLANTED: dict[str, str] = {
}

ENTRIES = {entry.name: entry for catalogue in (FIGURES, EXPERIMENTS, PRESETS) for entry in catalogue.values()}

_REFERENCE = re.compile(r"^tests/(?P<file>[A-Za-z0-9_]+\.py)::(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")


def _top_level_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_the_three_catalogues_hold_35_distinct_entries():
    assert len(ENTRIES) == sum(len(catalogue) for catalogue in (FIGURES, EXPERIMENTS, PRESETS)) == 35


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_every_entry_declares_what_it_rejects_or_says_why_not(name):
    rejects = ENTRIES[name].rejects
    if name in NOT_YET_PLANTED:
        assert not rejects, f"{name} declares rejects: take it out of NOT_YET_PLANTED"
        assert NOT_YET_PLANTED[name].strip(), f"{name}: say why no planted test exists yet"
    else:
        assert rejects, f"{name} declares no planted alternative and is not in NOT_YET_PLANTED"
        assert _declared_by(ENTRIES[name]), f"{name} inherits its rejects: a subclass declares its own alternatives"


def _declared_by(entry) -> bool:
    """Whether the entry itself (a catalogue line's argument) or its own class declares ``rejects``, not a parent:
    an experiment built on another's class must not inherit the planted alternatives of its parent."""
    return "rejects" in vars(entry) or "rejects" in vars(type(entry))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_every_declared_alternative_names_an_existing_test(name):
    for claim, reference in ENTRIES[name].rejects.items():
        assert isinstance(claim, str) and claim.strip(), f"{name}: an alternative without words"
        match = _REFERENCE.match(reference)
        assert match, f"{name}: {reference!r} is not of the form tests/FILE.py::NAME"
        path = ROOT / "tests" / match["file"]
        assert path.is_file(), f"{name}: {reference}: no file {path}"
        assert match["name"] in _top_level_functions(path), f"{name}: {reference}: no top-level def {match['name']}("


def test_every_name_not_yet_planted_is_a_catalogue_entry():
    assert set(NOT_YET_PLANTED) <= set(ENTRIES), sorted(set(NOT_YET_PLANTED) - set(ENTRIES))


def test_the_calibration_page_lists_the_declared_alternatives_as_the_code_has_them():
    """The page's table of alternatives is generated from ``Entry.rejects`` (``python benchmarks/calibrate.py
    --page``); a declaration changed without regenerating it fails here."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("calibrate_page", ROOT / "benchmarks" / "calibrate.py")
    calibrate = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = calibrate          # dataclasses resolve their module's names through sys.modules
    try:
        spec.loader.exec_module(calibrate)
        expected = calibrate.alternatives_table()
    finally:
        del sys.modules[spec.name]
    page = (ROOT / "docs" / "results" / "calibration.md").read_text()
    shown = page.split("<!-- alternatives table -->\n", 1)[1].split("\n<!-- end of the alternatives table -->", 1)[0]
    assert shown.split("\n") == expected, "run: python benchmarks/calibrate.py --page"
