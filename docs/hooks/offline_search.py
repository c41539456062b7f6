"""mkdocs hook: the site's search works when the site is opened from disk (``file://``), with nothing from a CDN.

Material's ``offline`` plugin (``mkdocs.yml``) writes the search index as a script (``search/search_index.js``)
and adds a WebWorker shim for ``file://`` pages — loaded from ``https://unpkg.com/iframe-worker/shim``, which a
reader offline (and this project's rule: nothing from a CDN) cannot have. The shim is 1.4 kB (MIT, iframe-worker
1.0.4 by Martin Donath, the author of Material) and is vendored unchanged as
``docs/javascripts/iframe-worker-shim.js``; after every build this hook points each page's ``<script>`` (the 404
page's too) at it by a relative path, in the same place, so that it still loads before Material's bundle.
"""

from __future__ import annotations

from pathlib import Path

CDN = "https://unpkg.com/iframe-worker/shim"
VENDORED = "javascripts/iframe-worker-shim.js"


def on_post_build(config) -> None:
    site = Path(config["site_dir"])
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if CDN in text:
            depth = len(page.relative_to(site).parts) - 1
            page.write_text(text.replace(CDN, "../" * depth + VENDORED), encoding="utf-8")
