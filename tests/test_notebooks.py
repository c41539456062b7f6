"""Jupyter, tested in a real kernel (issue 67): the tutorial pages — jupytext files — run as notebooks, and a study's
result shows in a notebook as a report (HTML) and its figure as an image, not as ``<Figure size 640x460 with 1 Axes>``.

Slow (a kernel per notebook, about a minute in all): ``python -m pytest -m slow tests/test_notebooks.py``. Needs
nbclient, nbformat, ipykernel and jupytext (the ``dev`` extra); skipped without them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorial").glob("[0-9][0-9]_*.py"))

pytestmark = pytest.mark.slow


def _execute(notebook, monkeypatch) -> list[dict]:
    """Run ``notebook`` in a python3 kernel started from the repository root; return every cell's outputs."""
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("TUTORIAL_QUICK", "1")          # the tutorial pages' test sizes (tests/test_docs.py)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    return [output for cell in notebook.cells for output in cell.get("outputs", [])]


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_every_tutorial_page_runs_as_a_notebook_and_shows_its_figures_as_images(path, monkeypatch):
    """Each page runs without an error, and each cell that ends with a figure (``figure_…``) shows it as an image:
    pages 01, 02 and 06 drew plain Matplotlib ``Figure``s, which a notebook shows as text only."""
    jupytext = pytest.importorskip("jupytext")
    notebook = jupytext.read(path)
    outputs = _execute(notebook, monkeypatch)
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    figures = [cell for cell in notebook.cells if cell.cell_type == "code"
               and cell.source.strip().splitlines()[-1:] and cell.source.strip().splitlines()[-1].startswith("figure_")]
    assert figures, f"{path.name}: no cell ends with a figure"
    blind = [cell.source.strip().splitlines()[-1] for cell in figures
             if not any("image/png" in output.get("data", {}) for output in cell.get("outputs", []))]
    assert not blind, f"{path.name}: shown as text, not as an image: {blind}"


def test_a_result_shows_its_report_and_its_figure_as_an_image_in_a_kernel(monkeypatch):
    """The notebook a researcher writes first: a small run, the result, its plot. Fails where the result shows as its
    one-line text only, or the figure as text: a Matplotlib ``Figure`` built without pyplot has no image of its own
    (checked: ``Figure()`` as a cell's value gives ``text/plain`` only in this kernel), hence the package's figure
    class with ``_repr_png_`` (:func:`validation.core.plots.new_figure`)."""
    nbformat = pytest.importorskip("nbformat")
    cells = ["from validation import convergence\n"
             "result = convergence.run('res1', samples=40, depths=(4, 8, 16), reference_steps=256)",
             "result",
             "result.plot()"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    _execute(notebook, monkeypatch)
    report, figure = (notebook.cells[i].get("outputs", []) for i in (1, 2))
    assert any("text/html" in o.get("data", {}) and "rate" in o["data"]["text/html"] for o in report), report
    assert any("image/png" in o.get("data", {}) for o in figure), figure
