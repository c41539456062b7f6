"""mkdocs hook: the Sphinx-style roles of the package's docstrings rendered as code, linked where the target is
documented on the same page.

The docstrings cross-reference with reStructuredText roles — ``:class:`~limits.brownian.BrownianGrid```,
``:func:`run```, ``:data:`DECISION_THRESHOLD``` — which mkdocstrings (Markdown docstrings, Google style) leaves as
text: ":class:" followed by the name in code. ``on_page_content`` rewrites every such role in the page's HTML:

* the role word is dropped; the name is shown as code, ``~a.b.C`` as ``C`` (Sphinx's rule), anything else as
  written;
* when the page documents the target — an element whose ``id`` is the full name, or ends with ``.name`` for a
  short one — the code links to it.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|data|mod|attr|obj|exc|const):<code>(~?)([^<]+)</code>")
IDS = re.compile(r'\bid="([A-Za-z_][\w.]*)"')


def _link(target: str, ids: set[str]) -> str | None:
    if target in ids:
        return target
    matches = sorted(i for i in ids if i.endswith("." + target))
    return matches[0] if len(matches) == 1 else None


def on_page_content(html: str, page, config, files) -> str:
    if ":<code>" not in html:
        return html
    ids = set(IDS.findall(html))

    def replace(match: re.Match) -> str:
        tilde, target = match.group(1), match.group(2).strip()
        shown = target.rsplit(".", 1)[-1] if tilde else target
        anchor = _link(target.rstrip("()"), ids)
        code = f"<code>{shown}</code>"
        return f'<a href="#{anchor}">{code}</a>' if anchor else code

    return ROLE.sub(replace, html)
