"""mkdocs hook: a command in a table cell wraps at its spaces only.

Browsers may break a line after a hyphen, so a narrow cell showed ``--weight-`` above ``var`` and ``res2-`` above
``midpoint``. In every table, each word of an inline code element that holds a hyphen is wrapped in
``<span class="nowrap">`` (``white-space: nowrap`` in ``stylesheets/layout.css``); the spaces between words remain
the places where a command wraps. Checked in chromium at 1400 px by ``tests/test_docs.py``.
"""

from __future__ import annotations

import re

TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL)
CODE = re.compile(r"<code>([^<]*)</code>")
WORD = re.compile(r"\S*-\S*")


def _code(match: re.Match) -> str:
    return "<code>" + WORD.sub(lambda w: f'<span class="nowrap">{w.group(0)}</span>', match.group(1)) + "</code>"


def on_page_content(html: str, page, config, files) -> str:
    if "<table" not in html:
        return html
    return TABLE.sub(lambda table: CODE.sub(_code, table.group(0)), html)
