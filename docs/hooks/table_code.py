"""mkdocs hook: a command in a table cell wraps at its spaces only.

Browsers may break a line after a hyphen, so a narrow cell showed ``--weight-`` above ``var`` and ``res2-`` above
``midpoint``. In every table, each word of an inline code element that holds a hyphen is wrapped in
``<span class="nowrap">`` (``white-space: nowrap`` in ``stylesheets/layout.css``); the spaces between words remain
the places where a command wraps. Checked in chromium at 1400 px by ``tests/test_docs.py``.

A long word with no hyphen — a test's node id, a path, up to 120 characters, 790 px: wider than a column of a
six-column table in the 900 px column at 1400 px (issue 66) — gets a ``<wbr>`` after each ``/``, ``::`` and ``_``:
it may break there, and only there (``tests/test_docs.py::`` above ``test_every_table_fits_``…).
"""

from __future__ import annotations

import re

TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL)
CODE = re.compile(r"<code>([^<]*)</code>")
WORD = re.compile(r"\S*-\S*")
LONG = re.compile(r"[^\s-]{25,}")          # a long word with no hyphen (those are in WORD)
BREAK = re.compile(r"(::|/|_)(?=.)")        # after a "/", "::" or "_" that does not end the word


def _word(match: re.Match) -> str:
    word = match.group(0)
    if "-" in word:
        return f'<span class="nowrap">{word}</span>'
    return BREAK.sub(r"\1<wbr>", word)


def _code(match: re.Match) -> str:
    return "<code>" + re.sub(f"{WORD.pattern}|{LONG.pattern}", _word, match.group(1)) + "</code>"


def on_page_content(html: str, page, config, files) -> str:
    if "<table" not in html:
        return html
    return TABLE.sub(lambda table: CODE.sub(_code, table.group(0)), html)
