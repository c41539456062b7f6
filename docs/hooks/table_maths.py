"""mkdocs hook: a formula in a table cell may break across lines where TeX breaks an inline formula.

MathJax 3 sets each formula on one line (one SVG), so the widest formula of a column was the narrowest the column
could be: the papers page's "Paper" column held a 370 px formula, and its six-column tables were up to 2,160 px
wide in the 900 px column at 1400 px (issue 66). TeX breaks an inline formula after a relation (``=``, ``<``,
``\\le``, ``\\in``, ``\\to``, ...) or a binary operator (``+``, ``-``, ``\\times``, ...) at its top level (outside
braces and ``\\left...\\right``); this hook does the same for the formulas in tables: each is cut there into
formulas set side by side, a ``<wbr>`` between them, so the browser may break the line there and nowhere else.
Each cut-off operator keeps its spacing (``\\le{}``: a relation or operator that ends a formula would lose the
space after it), so on one line the pieces read as the whole formula. A formula with an environment
(``\\begin...\\end``) is left whole. Checked in chromium at 1400 px by ``tests/test_docs.py``.
"""

from __future__ import annotations

import re

TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL)
INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.DOTALL)
TOKEN = re.compile(r"\\[A-Za-z]+|\\.|&[a-z]+;|\s+|.", re.DOTALL)

RELATIONS = {"=", "&lt;", "&gt;"} | {"\\" + name for name in (
    "le leq ge geq ne neq approx sim simeq cong equiv propto to mapsto in notin subset subseteq supset supseteq ll "
    "gg asymp Rightarrow Longrightarrow Leftrightarrow iff implies coloneqq").split()}
OPERATORS = {"+", "-"} | {"\\" + name for name in "times cdot pm mp cup cap otimes oplus setminus".split()}
#: what a binary + or - follows; after anything else (an opening bracket, a relation, a comma) it is a sign
OPERAND = re.compile(r"[A-Za-z0-9)\]}|'!]|\\}|\\[A-Za-z]+")


def pieces(tex: str) -> list[str]:
    """The formula ``tex`` (as arithmatex wrote it, HTML-escaped) cut after each top-level relation and binary
    operator that something follows; the pieces, set side by side, read as ``tex``."""
    if "\\begin" in tex:
        return [tex]
    tokens = TOKEN.findall(tex)
    cuts, depth, last = [], 0, None
    for i, token in enumerate(tokens):
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        elif token == "\\left":
            depth += 1
        elif token == "\\right":
            depth -= 1
        elif depth == 0 and any(not t.isspace() for t in tokens[i + 1:]):
            relation = token in RELATIONS
            operator = token in OPERATORS and last is not None and OPERAND.fullmatch(last) is not None \
                and last not in RELATIONS | OPERATORS
            if relation or operator:
                cuts.append(i + 1)
        if not token.isspace():
            last = token
    out, start = [], 0
    for cut in cuts:
        out.append("".join(tokens[start:cut]).strip() + "{}")
        start = cut
    out.append("".join(tokens[start:]).strip())
    return out


def _inline(match: re.Match) -> str:
    return "<wbr>".join(f'<span class="arithmatex">\\({piece}\\)</span>' for piece in pieces(match.group(1)))


def on_page_content(html: str, page, config, files) -> str:
    if "<table" not in html or "arithmatex" not in html:
        return html
    return TABLE.sub(lambda table: INLINE.sub(_inline, table.group(0)), html)
