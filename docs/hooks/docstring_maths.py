"""mkdocs hook: on the API reference pages, the docstrings' plain-text maths set as maths, and their citations of the
theory page made links.

The docstrings are written for a terminal (``help()``, an editor's hover), so their maths is Unicode text with TeX-style
indices — ``h_{k+1} = h_k + …``, ``W_e``, ``L^{-1/2}`` — and they cite the theory as "docs/theory.md §9". On a page
under ``reference/`` this hook rewrites the prose (never code, preformatted blocks or tags):

* ``x_{…}`` and ``x^{…}`` (a one-letter Latin or Greek base) become a subscript and a superscript, and so do a single
  letter or number after ``_`` (``h_l``, ``W_e``, ``h_0``) and a number after ``^`` (``L^2``, ``L^-1``), so that
  identifiers such as ``run_network`` stay as written;
* "docs/theory.md §N" becomes a link to section N of the theory page (its headings carry the ids ``sN``), and a bare
  "docs/theory.md" a link to the page.
"""

from __future__ import annotations

import re

LETTER = r"[A-Za-zα-ωΑ-Ω]"
BRACED_SUB = re.compile(rf"(?<![\w\\])({LETTER}|[)\]])_\{{([^{{}}<>]+)\}}")
BRACED_SUP = re.compile(rf"(?<![\w\\])({LETTER}|[)\]]|\d)\^\{{([^{{}}<>]+)\}}")
SHORT_SUB = re.compile(rf"(?<![\w\\])({LETTER})_([A-Za-z0-9]|\d+)(?!(?!ᵀ)[\w{{])")
SHORT_SUP = re.compile(rf"(?<![\w\\])({LETTER}|[)\]])\^(-?\d+(?:\.\d+)?|-?\d+/\d+)(?![\w{{])")
THEORY = re.compile(r"docs/theory\.md(?: §(\d+))?")
#: text inside these elements is left as it is
VERBATIM = ("code", "pre", "script", "style", "a", "kbd", "samp")
TAG = re.compile(r"(<[^>]+>)")
TAG_NAME = re.compile(r"<(/?)([a-zA-Z0-9]+)")


def set_maths(text: str) -> str:
    """The substitutions of the module docstring on one run of prose (no tags in it)."""
    text = BRACED_SUB.sub(r"\1<sub>\2</sub>", text)
    text = BRACED_SUP.sub(r"\1<sup>\2</sup>", text)
    text = SHORT_SUB.sub(r"\1<sub>\2</sub>", text)
    return SHORT_SUP.sub(r"\1<sup>\2</sup>", text)


def link_theory(text: str, prefix: str) -> str:
    """"docs/theory.md §N" as a link to ``{prefix}theory.html#sN``."""
    def replace(match: re.Match) -> str:
        section = match.group(1)
        target = f"{prefix}theory.html" + (f"#s{section}" if section else "")
        return f'<a href="{target}">{match.group(0)}</a>'

    return THEORY.sub(replace, text)


def rewrite(html: str, prefix: str) -> str:
    """The page's HTML with its prose rewritten; text inside :data:`VERBATIM` elements is left alone."""
    out, depth = [], 0
    for part in TAG.split(html):
        if part.startswith("<"):
            name = TAG_NAME.match(part)
            if name and name.group(2).lower() in VERBATIM and not part.endswith("/>"):
                depth += -1 if name.group(1) else 1
                depth = max(depth, 0)
            out.append(part)
        elif depth == 0 and part.strip():
            out.append(link_theory(set_maths(part), prefix))
        else:
            out.append(part)
    return "".join(out)


def on_page_content(html: str, page, config, files) -> str:
    path = page.file.src_uri
    if not path.startswith("reference/"):
        return html
    prefix = "../" * path.count("/")
    return rewrite(html, prefix)
