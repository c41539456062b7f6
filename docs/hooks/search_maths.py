"""mkdocs hook: the search results' previews show formulas as text, not as TeX.

arithmatex leaves each formula in the page as its TeX source for MathJax (``\\(\\tfrac12\\sigma''(0)Q\\)``), and the
search plugin indexes that source: a search's previews (and titles: "Fig. 2: the distribution at \\(\\beta =
1/2\\)") read as raw TeX, which the search box cannot typeset (issue 66). After the search plugin has written
``search/search_index.json``, and before Material's ``offline`` plugin inlines it into ``search_index.js``, this
hook rewrites every formula of the index's titles and texts (outside code) in Unicode: Greek letters and symbols as
characters (``\\alpha`` α, ``\\le`` ≤, ``\\lVert`` ‖), ``\\frac{a}{b}`` as a/b, ``\\sqrt{x}`` as √x, ``\\bar A`` as
A̅, sub- and superscripts as Unicode ones where they exist (``h_k`` hₖ, ``x^2`` x², else ``x_(t+1)``), font and
sizing commands dropped (``\\mathbb E`` E, ``\\bigl(`` (). ``tests/test_docs.py`` checks that no TeX is left.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

TOKEN = re.compile(r"\\[A-Za-z]+|\\.|&[a-z]+;|&#\d+;|\s+|.", re.DOTALL)
#: a formula; "$" on either side of an inline one too (a display formula "$$...$$" inside a paragraph, which
#: arithmatex reads as "$" + an inline formula + "$")
MATHS = re.compile(r"\$\\\(((?:(?!\\\)).)*)\\\)\$|\\\((.*?)\\\)|\\\[(.*?)\\\]", re.DOTALL)
CODE = re.compile(r"(<code\b.*?</code>|<pre\b.*?</pre>)", re.DOTALL)
#: the pieces docs/hooks/table_maths.py cut a formula of a table into, set side by side: one formula again
PIECES = re.compile(r"\\\)(?:<wbr>)?\\\(")

SYMBOLS = {
    # Greek
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    # relations, operators, arrows
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "sim": "∼",
    "simeq": "≃", "cong": "≅", "equiv": "≡", "propto": "∝", "ll": "≪", "gg": "≫", "asymp": "≍", "in": "∈",
    "notin": "∉", "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "supseteq": "⊇", "to": "→", "mapsto": "↦",
    "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "Leftarrow": "⇐", "Leftrightarrow": "⇔",
    "Longrightarrow": "⟹", "implies": "⟹", "iff": "⟺", "uparrow": "↑", "downarrow": "↓", "coloneqq": "≔",
    "times": "×", "cdot": "·", "pm": "±", "mp": "∓", "circ": "∘", "otimes": "⊗", "oplus": "⊕", "cup": "∪",
    "cap": "∩", "setminus": "∖", "ast": "∗", "star": "⋆", "wedge": "∧", "vee": "∨", "neg": "¬",
    # big operators and others
    "sum": "∑", "prod": "∏", "int": "∫", "oint": "∮", "partial": "∂", "nabla": "∇", "infty": "∞", "ell": "ℓ",
    "top": "⊤", "perp": "⊥", "emptyset": "∅", "varnothing": "∅", "forall": "∀", "exists": "∃", "prime": "′",
    "dagger": "†", "hbar": "ℏ", "ldots": "…", "dots": "…", "cdots": "⋯", "vdots": "⋮", "ddots": "⋱",
    # delimiters
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|", "vert": "|", "mid": "|",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    # spacing
    "quad": " ", "qquad": " ",
}
ESCAPES = {"\\{": "{", "\\}": "}", "\\%": "%", "\\_": "_", "\\#": "#", "\\$": "$", "\\&": "&amp;", "\\|": "‖",
           "\\,": " ", "\\;": " ", "\\:": " ", "\\ ": " ", "\\!": "", "\\\\": " "}
#: font, size and spacing commands: dropped, their argument (if any) kept
DROP = set("left right bigl bigr Bigl Bigr biggl biggr Biggl Biggr big Big bigg Bigg middle displaystyle textstyle "
           "scriptstyle limits nolimits mathrm mathit mathbf mathsf mathtt mathcal mathbb mathfrak mathscr "
           "boldsymbol bm operatorname text textrm textit textbf mbox rm bf it cal mathop mathbin mathrel mathord "
           "mathopen mathclose strut allowbreak nonumber notag".split())
ACCENTS = {"bar": "\u0305", "overline": "\u0305", "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303",
           "widetilde": "\u0303", "dot": "\u0307", "ddot": "\u0308", "vec": "\u20d7", "check": "\u030c"}
FRACTIONS = {"frac", "tfrac", "dfrac", "cfrac"}
#: relations and binary operators: set with a space on either side ("a ≤ b"; TeX's spacing)
SPACED = set("le leq ge geq ne neq approx sim simeq cong equiv propto ll gg asymp in notin subset subseteq supset "
             "supseteq to mapsto rightarrow leftarrow Rightarrow Leftarrow Leftrightarrow Longrightarrow implies iff "
             "coloneqq times cdot pm mp otimes oplus cup cap setminus mid".split())
VULGAR = {("1", "2"): "½", ("1", "3"): "⅓", ("2", "3"): "⅔", ("1", "4"): "¼", ("3", "4"): "¾", ("1", "5"): "⅕",
          ("1", "6"): "⅙", ("1", "8"): "⅛", ("3", "8"): "⅜", ("5", "8"): "⅝", ("7", "8"): "⅞"}
SUPERSCRIPT = dict(zip("0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθφχ⊤′",
                       "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᵠᵡᵀ′"))
SUBSCRIPT = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))


class _Reader:
    """A recursive reading of one formula's tokens into text."""

    def __init__(self, tex: str):
        self.tokens = TOKEN.findall(tex)
        self.pos = 0

    def _next(self) -> str | None:
        if self.pos >= len(self.tokens):
            return None
        token = self.tokens[self.pos]
        self.pos += 1
        if re.fullmatch(r"\\[A-Za-z]+", token):       # as in TeX, the spaces after a control word are ignored
            while self.pos < len(self.tokens) and self.tokens[self.pos].isspace():
                self.pos += 1
        return token

    def argument(self) -> str:
        """One argument: a braced group, or the next token (spaces skipped)."""
        while self.pos < len(self.tokens) and self.tokens[self.pos].isspace():
            self.pos += 1
        token = self._next()
        if token is None:
            return ""
        if token == "{":
            return self.text(until="}")
        if token == "[":                       # \sqrt[n]{x}: the index
            return self.text(until="]")
        return self.token(token)

    def text(self, until: str | None = None) -> str:
        out = []
        while (token := self._next()) is not None and token != until:
            out.append(self.token(token))
        return "".join(out)

    def token(self, token: str) -> str:
        if token == "{":
            return self.text(until="}")
        if token in ESCAPES:
            return ESCAPES[token]
        if token in ("}", "~"):
            return " " if token == "~" else ""
        if token in ("^", "_"):
            return _script(self.argument(), SUPERSCRIPT if token == "^" else SUBSCRIPT, token)
        if token == "&amp;":                   # an alignment point
            return ""
        if token in ("=", "&lt;", "&gt;", "<", ">"):
            return f" {token} "
        if not token.startswith("\\") or len(token) == 2:
            return token
        name = token[1:]
        if name in ("begin", "end"):
            self.argument()
            return " "
        if name in SYMBOLS:
            return f" {SYMBOLS[name]} " if name in SPACED else SYMBOLS[name]
        if name in FRACTIONS:
            top, bottom = self.argument().strip(), self.argument().strip()
            return VULGAR.get((top, bottom)) or f"{_operand(top)}/{_operand(bottom)}"
        if name == "sqrt":
            if self.pos < len(self.tokens) and self.tokens[self.pos] == "[":
                self.argument()
            return "√" + _operand(self.argument())
        if name in ACCENTS:
            return self.argument() + ACCENTS[name]
        if name in DROP:
            return ""
        # \exp, \log, \min, \sup, \det, ...: the name, and a space before a letter ("cos θ", "log x")
        following = self.tokens[self.pos] if self.pos < len(self.tokens) else ""
        letter = re.fullmatch(r"[A-Za-z0-9]", following) or following[1:] in SYMBOLS and following[1:2].isalpha() \
            and following[1:] not in SPACED and SYMBOLS[following[1:]].isalpha()
        return name + " " if letter else name


def _operand(text: str) -> str:
    text = text.strip()
    return text if re.fullmatch(r"[\w.′'‖|⊤]*|\(.*\)", text) else f"({text})"


def _script(text: str, table: dict, mark: str) -> str:
    text = text.strip()
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    return f"{mark}{text}" if len(text) <= 1 else f"{mark}({text})"


def tex_to_text(tex: str) -> str:
    """A formula's TeX source (HTML-escaped, as in the page) as readable text."""
    return re.sub(r"\s+", " ", _Reader(tex).text()).strip()


def readable(html: str) -> str:
    """``html`` with each formula outside code (``\\(...\\)``, ``\\[...\\]``) as text."""
    parts = CODE.split(html)
    for i in range(0, len(parts), 2):                 # the even parts lie outside code
        parts[i] = MATHS.sub(lambda m: tex_to_text(next(g for g in m.groups() if g is not None)),
                             PIECES.sub(" ", parts[i]))
    return "".join(parts)


@event_priority(-50)        # after the search plugin writes the index, before the offline plugin inlines it (-100)
def on_post_build(config) -> None:
    path = Path(config["site_dir"], "search", "search_index.json")
    if not path.exists():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    for entry in index["docs"]:
        entry["title"] = readable(entry["title"])
        entry["text"] = readable(entry["text"])
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
