"""mkdocs hook: tutorials written as jupytext percent-format scripts become pages and notebooks.

A tutorial is one file ``docs/tutorial/<stem>.py`` in jupytext's percent format: cells separated by
``# %%`` lines, markdown cells opened by ``# %% [markdown]`` with every line commented (``# ``). It
runs as a plain script (``python <stem>.py``) and opens in Jupyter through jupytext.

For every such file, ``on_files`` adds two generated files next to it (nothing is written to
``docs/``):

* ``tutorial/<stem>.md``, a page: the markdown cells as markdown, the code cells as fenced
  ``python`` blocks, in order, each followed by what it printed; a note with the download links follows
  the page's ``# `` title. Reference it in ``nav`` as ``tutorial/<stem>.md``;
* ``tutorial/<stem>.ipynb``, the same cells as a Jupyter notebook, with the printed text as outputs (not
  the figures), for download.

The ``.py`` itself stays in the site as a static file, for download. Code is not executed at build time:
the printed text is the one recorded at full size in ``docs/tutorial/outputs/<stem>.json``
(``docs/hooks/tutorial_outputs.py``), and the build stops when a tutorial has no recording or a code cell
changed since it was recorded. Raw cells are left out of the page (kept in the notebook).
"""

from __future__ import annotations

import logging
import posixpath

from pathlib import Path

import jupytext
import nbformat
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from tutorial_outputs import RECORD_COMMAND, recorded, stale_cells

log = logging.getLogger("mkdocs.hooks.notebooks")

TUTORIAL_DIR = "tutorial"

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def _is_tutorial_source(file: File) -> bool:
    head, name = posixpath.split(file.src_uri)
    return head == TUTORIAL_DIR and name.endswith(".py") and not name.startswith("_")


def _download_note(stem: str) -> str:
    return (
        '!!! tip "Run it yourself"\n'
        f"    Download this page as a notebook source: [{stem}.py]({stem}.py) — open it in Jupyter\n"
        f"    with jupytext, or run it with `python {stem}.py` — or as a notebook:\n"
        f"    [{stem}.ipynb]({stem}.ipynb).\n"
    )


def notebook_to_markdown(nb, stem: str, printed: list[str] | None = None) -> str:
    """The page for one tutorial: markdown cells verbatim, code cells fenced, each followed by what it printed
    (``printed``: one text per code cell), download note on top."""
    blocks: list[str] = []
    code_index = 0
    for cell in nb.cells:
        source = cell.source.strip("\n")
        if cell.cell_type == "code":
            output = printed[code_index].strip("\n") if printed else ""
            code_index += 1
        if not source.strip():
            continue
        if cell.cell_type == "markdown":
            blocks.append(source)
        elif cell.cell_type == "code":
            blocks.append(f"```python\n{source}\n```")
            if output.strip():
                blocks.append(f'<div class="tutorial-output" markdown>\n\n```text\n{output}\n```\n\n</div>')
    note = _download_note(stem)
    # Put the note right under the page title when the first cell opens with one, else first.
    if blocks and blocks[0].startswith("# "):
        title, _, rest = blocks[0].partition("\n")
        blocks[0:1] = [title, note] + ([rest.strip("\n")] if rest.strip() else [])
    else:
        blocks.insert(0, note)
    return "\n\n".join(blocks) + "\n"


def notebook_to_ipynb(nb, printed: list[str] | None = None) -> str:
    """The notebook for download, each code cell with what it printed as its output."""
    nb.metadata.pop("jupytext", None)
    nb.metadata.setdefault("kernelspec", dict(KERNELSPEC))
    if printed:
        for cell, text in zip((c for c in nb.cells if c.cell_type == "code"), printed):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)] if text else []
    return jupytext.writes(nb, fmt="ipynb")


def printed_text(nb, stem: str, docs_dir: Path) -> list[str]:
    """What each code cell of tutorial ``stem`` printed, as recorded; a missing or stale recording stops the build."""
    outputs = recorded(stem, docs_dir)
    if outputs is None:
        raise PluginError(f"tutorial {stem}.py has no recorded output: run `{RECORD_COMMAND}`")
    stale = stale_cells([c.source for c in nb.cells if c.cell_type == "code"], outputs)
    if stale:
        raise PluginError(f"tutorial {stem}.py: code cells {stale} changed since their output was recorded: "
                          f"run `{RECORD_COMMAND}`")
    return [entry["stdout"] for entry in outputs["cells"]]


def on_files(files: Files, config, **kwargs) -> Files:
    sources = [f for f in files if _is_tutorial_source(f)]
    for src in sources:
        stem = posixpath.splitext(posixpath.basename(src.src_uri))[0]
        try:
            nb = jupytext.reads(src.content_string, fmt="py:percent")
        except Exception as exc:  # a malformed tutorial should stop the build with its name
            raise PluginError(f"tutorial {src.src_uri}: jupytext could not read it: {exc}") from exc
        printed = printed_text(nb, stem, Path(config["docs_dir"]))
        for ext, content in (
            (".md", notebook_to_markdown(nb, stem, printed)),
            (".ipynb", notebook_to_ipynb(nb, printed)),
        ):
            uri = f"{TUTORIAL_DIR}/{stem}{ext}"
            if files.get_file_from_path(uri) is not None:
                raise PluginError(
                    f"{uri} exists in docs/ and would also be generated from {src.src_uri}: "
                    "remove one of the two."
                )
            files.append(File.generated(config, uri, content=content))
        log.debug("tutorial %s -> %s.md, %s.ipynb", src.src_uri, stem, stem)
    return files
