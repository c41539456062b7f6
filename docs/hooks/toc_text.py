"""mkdocs hook: plain text for the table of contents of headings that hold formulas.

A heading such as ``## Fig. 9: accuracy over $(H, \\beta)$`` is typeset on the page, but the navigation shows its
title as text, so the right-hand table of contents read ``\\((H, \\beta)\\)``. ``on_page_content`` rewrites each
title of the page's table of contents: the formulas' TeX becomes Unicode (Greek letters, ±, √, 𝒰, one-character
sub- and superscripts), the ``\\(``/``\\)`` delimiters go. The headings themselves are untouched.
"""

from __future__ import annotations

import re

SYMBOLS = {r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\delta": "δ", r"\Delta": "Δ", r"\eta": "η",
           r"\theta": "θ", r"\kappa": "κ", r"\lambda": "λ", r"\mu": "μ", r"\nu": "ν", r"\sigma": "σ", r"\tau": "τ",
           r"\varphi": "φ", r"\phi": "φ", r"\psi": "ψ", r"\ell": "ℓ", r"\pm": "±", r"\infty": "∞", r"\to": "→",
           r"\le": "≤", r"\ge": "≥", r"\times": "×", r"\cdot": "·", r"\mathcal U": "𝒰", r"\mathcal V": "𝒱",
           r"\mathcal W": "𝒲", r"\mathcal A": "𝒜", r"\lVert": "‖", r"\rVert": "‖", r"\|": "‖", r"\,": " "}
SUPERSCRIPT = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")
SUBSCRIPT = str.maketrans("0123456789kthijlmnpsx", "₀₁₂₃₄₅₆₇₈₉ₖₜₕᵢⱼₗₘₙₚₛₓ")
FORMULA = re.compile(r"\\\((.+?)\\\)")


def plain(tex: str) -> str:
    """Unicode for the TeX of a heading's formula (the commands above; others lose their backslash)."""
    for command in sorted(SYMBOLS, key=len, reverse=True):
        tex = re.sub(re.escape(command) + r"(?![A-Za-z])", SYMBOLS[command], tex)
    tex = re.sub(r"\\sqrt\{([^{}]*)\}", r"√(\1)", tex)
    tex = re.sub(r"\^\{([^{}]*)\}", lambda m: _script(m.group(1), SUPERSCRIPT, "^"), tex)
    tex = re.sub(r"\^(\w)", lambda m: _script(m.group(1), SUPERSCRIPT, "^"), tex)
    tex = re.sub(r"_\{([^{}]*)\}", lambda m: _script(m.group(1), SUBSCRIPT, "_"), tex)
    tex = re.sub(r"_(\w)", lambda m: _script(m.group(1), SUBSCRIPT, "_"), tex)
    return tex.replace("\\", "").replace("{", "").replace("}", "")


def _script(text: str, table: dict, mark: str) -> str:
    """``text`` in sub- or superscript characters when every character has one, else left marked (``x_ref``)."""
    return text.translate(table) if text and all(ord(c) in table for c in text) else f"{mark}{text}"


def _retitle(items) -> None:
    for item in items:
        if "\\(" in item.title:
            item.title = FORMULA.sub(lambda m: plain(m.group(1)), item.title)
        _retitle(item.children)


def on_page_content(html: str, page, config, files) -> str:
    _retitle(page.toc)
    return html
