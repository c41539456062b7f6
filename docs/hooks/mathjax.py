"""mkdocs hook: serve MathJax from the built site, vendored from the ``django-static-mathjax`` package.

The site must read offline, so MathJax is neither fetched from a CDN nor committed to ``docs/``.
The PyPI package ``django-static-mathjax`` (pure data, no Django dependency; its import name is
``mathjax``) ships the MathJax 3.2.2 distribution under ``mathjax/static/mathjax/es5/``. After every
build (``mkdocs build`` and each rebuild of ``mkdocs serve``) this hook copies into
``<site>/javascripts/mathjax/``:

* ``tex-svg.js``: the combined TeX-input, SVG-output component (self-contained, no font files),
  referenced from ``extra_javascript`` in ``mkdocs.yml``;
* the pieces that component loads lazily from its own folder: ``input/tex/extensions/`` (TeX macros
  that MathJax autoloads, e.g. ``\\cancel``), ``a11y/``, ``sre/`` and ``ui/`` (the accessibility
  options of MathJax's right-click menu), so that nothing 404s or reaches out to the network;
* MathJax's ``LICENSE`` (Apache 2.0).

If the package is missing the build stops at once with an error naming the package to install.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import shutil
from pathlib import Path

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.mathjax")

DIST = "django-static-mathjax"
ES5 = Path("mathjax", "static", "mathjax", "es5")  # inside the wheel's top-level package folder
SCRIPT = "tex-svg.js"
LAZY_DIRS = ("input/tex/extensions", "a11y", "sre", "ui")
TARGET = Path("javascripts", "mathjax")  # under site_dir; mkdocs.yml's extra_javascript points here


def _es5_dir() -> Path:
    """The installed ``es5/`` folder of MathJax, or a PluginError saying what to install."""
    candidates: list[Path] = []
    try:  # by distribution name: immune to another package that also calls itself `mathjax`
        candidates.append(Path(importlib.metadata.distribution(DIST).locate_file(ES5)))
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("mathjax")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            candidates.append(Path(loc).parent / ES5)
    for es5 in candidates:
        if (es5 / SCRIPT).is_file():
            return es5
    raise PluginError(
        f"MathJax not found: the docs need the PyPI package '{DIST}' (it ships MathJax 3 under "
        f"mathjax/static/mathjax/es5/). Install it with `pip install {DIST}` and build again."
    )


def on_config(config, **kwargs):
    _es5_dir()  # fail before building anything if the package is missing
    return config


def on_post_build(config, **kwargs) -> None:
    es5 = _es5_dir()
    target = Path(config["site_dir"]) / TARGET
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(es5 / SCRIPT, target / SCRIPT)
    for sub in LAZY_DIRS:
        if (es5 / sub).is_dir():
            shutil.copytree(es5 / sub, target / sub, dirs_exist_ok=True)
    licence = es5.parent / "LICENSE"
    if licence.is_file():
        shutil.copy2(licence, target / "LICENSE")
    log.debug("MathJax copied from %s to %s", es5, target)
