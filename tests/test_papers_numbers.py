"""One set of numbers per claim (issue 63): every number docs/papers.md quotes in a "Package measures" cell is read
from the page that records its command's measurements — a results page, a how-to page, or a committed JSON — so
that the papers page and the results pages cannot disagree. Text only: no study runs here.

A number is one with at least two decimals (0.468, each end of [0.434, 0.495]); it must appear, as a whole token, on a
page that records the row's command (the table PAGES, keyed by the study and its --preset / --figure / --experiment /
--model) or that the row links. A number that is not a measurement, or not yet recorded, goes in NOT_MEASURED with
its reason. A number changed on the papers page, or dropped from its results page, fails the test (the planted-edit
test below shows it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAPERS = DOCS / "papers.md"

# Where each command's numbers are recorded: (module, the value of its selecting flag or None) → pages under docs/
# (and committed JSON files under the repository root). A row's own links to results/how-to pages count as well.
PAGES: dict[tuple[str, str | None], tuple[str, ...]] = {
    ("validation.regimes", None): ("results/regimes.md", "howto/regimes.md"),
    ("validation.phase", None): ("results/regimes.md", "howto/phase.md"),
    ("validation.weak", None): ("results/ito.md", "howto/weak.md"),
    ("validation.figures", None): ("howto/figures.md",),
    ("validation.convergence", None): ("results/convergence.md", "howto/convergence.md"),
    ("validation.convergence", "pf"): ("results/ito.md",),
    ("validation.convergence", "cohen-ode"): ("results/ito.md", "results/convergence.md"),
    ("validation.convergence", "cohen-ode-noise"): ("results/ito.md", "results/convergence.md"),
    ("validation.convergence", "cohen-sde"): ("results/ito.md", "results/convergence.md"),
    ("validation.training", "marion-fig8"): ("results/training_marion.md",),
    ("validation.training", "marion-fig9"): ("results/training_marion.md",),
    ("validation.training", "pf-sgd"): ("results/training_pf.md",),
    ("validation.training", "cohen-scaling"): ("results/training_cohen.md",),
    ("validation.training", "cohen-conv"): ("results/training_cohen_conv.md",),
    ("validation.training", "chaintron2026-linear"): ("results/training_chaintron2026.md",),
    ("validation.training", "chaintron2026-budget"): ("results/training_chaintron2026.md",),
    ("validation.training", "chaintron2026-grid"): ("results/training_chaintron2026.md",),
    ("validation.training", "chaintron2026-nonlinear"): ("results/training_chaintron2026.md",),
    ("validation.training", "chizat2025-alpha"): ("results/training_chaintron2026.md",),
    ("benchmarks/against_chaintron.py", None): ("results/training_chaintron2026.md",
                                                 "../benchmarks/results/against_chaintron.json"),
    ("docs/investigations/cohen_table4.py", None): ("results/training_cohen.md",),
    ("docs/investigations/pf_abc_budgets.py", None): ("results/calibration.md", "howto/figures.md",
                                                       "../benchmarks/results/pf_abc_budgets.json"),
}

# Numbers in a "Package measures" cell that are not measurements, each with its reason. Keep it short.
NOT_MEASURED: dict[tuple[str, str], str] = {
    ("§4.5", "0.996"): "not yet on a results page: digits α + β (the page gives α 0.864 and β 0.132 apart); needs a "
                       "`cohen-scaling` run (over a minute) to record the sum with its interval",
}

NUMBER = re.compile(r"(?<![\d.])\d+\.\d{2,}(?![\d])")
COMMAND = re.compile(r"`(python (?:-m (validation\.\w+)|(\S+\.py))[^`]*)`")
SELECTOR = re.compile(r"--(?:preset|figure|experiment|model)[ =]([\w-]+)")
LINK = re.compile(r"\]\(((?:results|howto)/[\w-]+\.md)(?:#[^)]*)?\)")


def _rows(text: str):
    """(section, item, checked-by cell, package-measures cell, whole row) for each row of an item table."""
    section, columns = "", None
    for line in text.splitlines():
        if line.startswith("#"):
            section, columns = line.lstrip("#").strip(), None
            continue
        if not line.startswith("|"):
            columns = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if columns is None:
            columns = cells
            continue
        if set(line) <= set("|-: "):
            continue
        if "Package measures" in columns and "Checked by" in columns:
            get = dict(zip(columns, cells))
            yield section, get["Item"], get["Checked by"], get["Package measures"], line


def _pages_of(checked_by: str, row: str, previous: tuple[str, ...]) -> tuple[str, ...]:
    """The pages that record the row's numbers: those of its commands, by the table above, and those it links."""
    pages: list[str] = []
    for command, module, script in COMMAND.findall(checked_by):
        key = module or script
        selector = SELECTOR.search(command)
        chosen = PAGES.get((key, selector.group(1) if selector else None)) or PAGES.get((key, None))
        assert chosen is not None, f"no results page is named for `{command}`: add it to PAGES"
        pages += chosen
    if not pages and checked_by.startswith(("the same", "as ")):
        pages += previous                                       # "the same (`depth`, …)": the row above's command
    pages += LINK.findall(row)
    return tuple(dict.fromkeys(pages))


def _recorded(page: str) -> str:
    path = (DOCS / page).resolve()
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":                                  # every number of the JSON, as Python prints it
        numbers: list[str] = []

        def walk(value):
            if isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
            elif isinstance(value, float):
                numbers.append(repr(value))
        walk(json.loads(text))
        return " ".join(numbers)
    return text


def _on(number: str, text: str, json_text: str) -> bool:
    """The number as a whole token of the page's text (its sign aside: a rate 0.468 is written $M^{-0.468}$ as well),
    or a float of the JSON that rounds to it."""
    if re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", text):
        return True
    decimals = len(number.split(".")[1])
    return any(f"{float(v):.{decimals}f}" == number for v in json_text.split())


def unrecorded(text: str) -> list[tuple[str, str, str]]:
    """(section, item, number) for every number of a Package measures cell found on none of its row's pages."""
    missing, cache, above, above_section = [], {}, (), ""
    for section, item, checked_by, measures, row in _rows(text):
        if section != above_section:
            above, above_section = (), section
        pages = _pages_of(checked_by, row, above)
        above = pages or above
        numbers = NUMBER.findall(measures)
        if not numbers:
            continue
        for page in pages:
            cache.setdefault(page, _recorded(page))
        prose = "\n".join(cache[p] for p in pages if not p.endswith(".json"))
        values = " ".join(cache[p] for p in pages if p.endswith(".json"))
        for number in numbers:
            if (item, number) in NOT_MEASURED:
                continue
            if not _on(number, prose, values):
                missing.append((section, item, number))
    return missing


def _row(text: str, section: str, item: str) -> tuple[str, str, str, str, str]:
    rows = [r for r in _rows(text) if r[0].startswith(section) and r[1] == item]
    assert len(rows) == 1, f"{len(rows)} rows named {item!r} in {section!r}"
    return rows[0]


def _bump(number: str) -> str:
    """The number with 1 added to its last digit: 8.67 → 8.68, 0.0053 → 0.0054, 0.499 → 0.500."""
    decimals = len(number.split(".")[1])
    return f"{float(number) + 10.0 ** -decimals:.{decimals}f}"


def test_the_papers_page_is_read_row_by_row():
    """The parser finds the item tables: every paper's rows, and hundreds of numbers in their Package measures."""
    rows = list(_rows(PAPERS.read_text(encoding="utf-8")))
    assert len(rows) >= 120 and sum(len(NUMBER.findall(r[3])) for r in rows) >= 550
    assert {section.split(" — ")[0] for section, *_ in rows} >= {
        "Marion et al.", "Peluchetti & Favaro", "Chizat", "Chizat & Netrapalli", "Cohen, Cont, Rossier & Xu"}
    assert NUMBER.findall("0.468, [0.434, 0.495], −0.503, 2.9e−4, 10^{-3}, 1.5, 2152") == ["0.468", "0.434", "0.495",
                                                                                         "0.503"]


def test_every_page_the_table_names_exists():
    for pages in PAGES.values():
        for page in pages:
            assert (DOCS / page).resolve().is_file(), page


def test_the_allow_list_is_needed():
    """Each allowed number is still quoted in its row, and still on none of the row's pages (else: drop it)."""
    text = PAPERS.read_text(encoding="utf-8")
    for (item, number), reason in list(NOT_MEASURED.items()):
        assert reason
        row = [r for r in _rows(text) if r[1] == item and number in NUMBER.findall(r[3])]
        assert len(row) == 1, (item, number)
        saved = NOT_MEASURED.pop((item, number))
        try:
            assert (row[0][0], item, number) in unrecorded(text), f"{item} {number} is recorded now: drop it"
        finally:
            NOT_MEASURED[(item, number)] = saved


def test_every_number_on_the_papers_page_is_on_its_results_page():
    missing = unrecorded(PAPERS.read_text(encoding="utf-8"))
    assert not missing, "numbers on docs/papers.md that no page of their command records:\n" + "\n".join(
        f"  {section[:40]} | {item[:40]} | {number}" for section, item, number in missing)


@pytest.mark.parametrize(("section", "item"), [("Marion", "Prop. 13"), ("Cohen", "Thm 4.3"), ("Chizat —", "Remark 2.2"),
                                             ("Peluchetti", "§4.3, Fig. 5"), ("Beyond", "[18] $P^{-1/6}$")])
def test_a_planted_edit_of_one_number_is_reported(section, item):
    """Change one measured number of a row by one in its last digit — its first number whose changed value is on none
    of the row's pages — and the checker names that row and number, and nothing else."""
    text = PAPERS.read_text(encoding="utf-8")
    section, item, checked_by, measures, row = _row(text, section, item)
    pages = _pages_of(checked_by, row, ())
    recorded = "\n".join(_recorded(p) for p in pages)
    candidates = [(n, _bump(n)) for n in NUMBER.findall(measures)
                  if not re.search(rf"(?<![\d.]){re.escape(_bump(n))}(?!\d)", recorded)]
    assert pages and candidates, item
    number, planted = candidates[0]
    edited_measures = re.sub(rf"(?<![\d.]){re.escape(number)}(?!\d)", planted, measures, count=1)
    edited = text.replace(row, row.replace(measures, edited_measures))
    assert edited != text
    assert unrecorded(text) == []
    assert unrecorded(edited) == [(section, item, planted)]
