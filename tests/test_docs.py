"""The documentation's code: the tutorial pages run (at small sizes) and show the figures they draw; the figure
regeneration command works; no page, docstring or printed line names a file the package does not ship."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorial").glob("[0-9][0-9]_*.py"))


def _load_tutorial_outputs():
    """docs/hooks/tutorial_outputs.py, the recorder the figure command and the site build share."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tutorial_outputs", ROOT / "docs" / "hooks" / "tutorial_outputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OUTPUTS = _load_tutorial_outputs()


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_page_runs_embeds_its_figures_and_has_its_output_recorded(path, monkeypatch):
    """Run at the test size, cell by cell: the page shows every figure it draws, and its printed output was recorded
    (at full size) from this very code — each cell's fingerprint matches — with the same cells printing."""
    monkeypatch.chdir(ROOT)
    namespace, printed = OUTPUTS.run_cells(path, quick=True)
    figures = {k: v for k, v in namespace.items() if k.startswith("figure_")}
    assert figures, f"{path.name} draws no figure_* figure"
    text = path.read_text()
    for name, figure in figures.items():
        assert isinstance(figure, (Figure,)) or hasattr(figure, "savefig"), name
        image = f"../figures/tutorial_{path.name[:2]}_{name.removeprefix('figure_')}.png"
        assert image in text, f"{path.name} draws {name} but its page does not show {image}"
        assert (ROOT / "docs" / "figures" / Path(image).name).exists(), f"{image} is missing: run docs/make_figures.py"
    outputs = OUTPUTS.recorded(path.stem, ROOT / "docs")
    assert outputs is not None, f"{path.name} has no recorded output: run {OUTPUTS.RECORD_COMMAND}"
    stale = OUTPUTS.stale_cells(OUTPUTS.code_cells(text), outputs)
    assert not stale, f"{path.name}: code cells {stale} changed since the recording: run {OUTPUTS.RECORD_COMMAND}"
    assert [bool(t.strip()) for t in printed] == [bool(e["stdout"].strip()) for e in outputs["cells"]]
    assert outputs["versions"]["torch"] and outputs["wall_time_s"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_prints_at_full_size_what_its_page_shows(path, monkeypatch):
    """Same code, same seeds: a full-size run prints the recorded text again, to the last digit (wall times aside)."""
    import torch

    monkeypatch.chdir(ROOT)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)      # a reader's python, not this suite's float64 (tests/conftest.py)
    try:
        _, printed = OUTPUTS.run_cells(path, quick=False)
    finally:
        torch.set_default_dtype(default)
    outputs = OUTPUTS.recorded(path.stem, ROOT / "docs")
    for number, (now, then) in enumerate(zip(printed, (e["stdout"] for e in outputs["cells"])), start=1):
        assert OUTPUTS.without_wall_times(now) == OUTPUTS.without_wall_times(then), f"code cell {number}"


def test_a_changed_cell_makes_its_recording_stale(tmp_path):
    """The fingerprint catches an edited cell, and the comparison masks only wall times."""
    source = "# %%\nx = 1\n\n# %%\nprint(x)\n"
    cells = OUTPUTS.code_cells(source)
    outputs = {"cells": [{"code": OUTPUTS.fingerprint(c), "stdout": ""} for c in cells]}
    assert OUTPUTS.stale_cells(cells, outputs) == []
    assert OUTPUTS.stale_cells(OUTPUTS.code_cells(source.replace("x = 1", "x = 2")), outputs) == [1]
    assert OUTPUTS.stale_cells(cells[:1], outputs) == [1]
    assert OUTPUTS.without_wall_times("time 12.3 s, rate 0.512") == OUTPUTS.without_wall_times("time 9.0 s, rate 0.512")
    assert OUTPUTS.without_wall_times("rate 0.512") != OUTPUTS.without_wall_times("rate 0.513")


def test_the_figure_command_lists_and_makes_a_figure(tmp_path):
    script = ROOT / "docs" / "make_figures.py"
    listing = subprocess.run([sys.executable, str(script), "--list"], capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0 and "convergence_res1.png" in listing.stdout
    for line in listing.stdout.splitlines():
        name = line.split()[0]
        if not name.startswith("tutorial_"):
            assert (ROOT / "docs" / "figures" / name).exists(), f"docs/figures/{name} is missing"
    made = subprocess.run([sys.executable, str(script), "--quick", "--only", "convergence_res1", "--out", str(tmp_path),
                           "--data", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "convergence_res1.png").stat().st_size > 10_000


def test_every_figure_on_the_site_is_made_by_the_figure_command():
    listing = subprocess.run([sys.executable, str(ROOT / "docs" / "make_figures.py"), "--list"], capture_output=True,
                             text=True, timeout=120).stdout
    made = {line.split()[0] for line in listing.splitlines() if not line.startswith("tutorial_")}
    pages = "\n".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    pages += "\n".join(p.read_text() for p in TUTORIALS)
    shown = set(re.findall(r"figures/([\w.\-]+\.png)", pages))
    tutorial = {name for name in shown if name.startswith("tutorial_")}
    assert shown - tutorial <= made, f"figures shown but not made by docs/make_figures.py: {sorted(shown - tutorial - made)}"
    on_disk = {p.name for p in (ROOT / "docs" / "figures").glob("*.png")}
    assert on_disk <= shown, f"figures in docs/figures that no page shows: {sorted(on_disk - shown)}"


def test_nothing_names_a_file_the_package_does_not_ship():
    pattern = re.compile(r"THEORY\.md|DESIGN\.md|\.\./shared|shared/papers")
    shipped = [*ROOT.glob("limits/**/*.py"), *ROOT.glob("validation/**/*.py"), *ROOT.glob("docs/**/*.md"),
               *ROOT.glob("docs/**/*.py"), ROOT / "README.md", ROOT / "mkdocs.yml", ROOT / "pyproject.toml"]
    offenders = [str(p.relative_to(ROOT)) for p in shipped if pattern.search(p.read_text())]
    assert not offenders, offenders


def _page_commands(page: Path) -> list[str]:
    return sorted(set(re.findall(r"`(python -m validation\.[^`]*)`", page.read_text(encoding="utf-8"))))


@pytest.mark.parametrize("command_line", _page_commands(ROOT / "docs" / "papers.md"))
def test_every_command_on_the_papers_page_parses(command_line):
    """docs/papers.md names a command for every checked item: each parses with its flags, its settings are valid,
    and the study accepts them for its model / preset / figure / experiment (its resolver refuses a flag that does
    not apply) — without running it."""
    import importlib

    from validation.core import cli

    words = shlex.split(command_line)
    assert words[:2] == ["python", "-m"]
    command = importlib.import_module(words[2]).COMMAND
    args = cli.build_parser(command).parse_args(words[3:])      # a bad flag exits (SystemExit) here
    settings = cli.settings_from_args(command, args)
    positional = [getattr(args, name) for name in command.positional]
    resolve = _RESOLVERS.get(words[2])
    if resolve is not None:                                       # refuses a flag that does not apply
        resolve(*positional, settings)


def _resolvers() -> dict:
    """Each study's settings resolver for its model / preset / figure / experiment (the studies without a positional
    choice validate every setting when the settings object is built)."""
    from validation.solvers import study as solvers
    from validation.figures import study as figures
    from validation.regimes import study as regimes
    from validation.core import pair_study
    from validation.training import study as training

    return {"validation.regimes": regimes._resolve, "validation.figures": figures._resolve,
            "validation.training": training.resolve, "validation.convergence": pair_study.resolve_sizes,
            "validation.solvers": solvers._resolve}


_RESOLVERS = _resolvers()


def test_the_built_site_navigates_from_disk(tmp_path):
    """mkdocs builds page links ending in .html (use_directory_urls: false), so the site opened from file:// navigates:
    every relative link of every page (the server's 404 page aside) names a file of the built site."""
    import os

    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr
    broken = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue
        for href in re.findall(r'href="([^"#?]+)', page.read_text(encoding="utf-8", errors="ignore")):
            if href.startswith(("http:", "https:", "mailto:", "data:", "javascript:")):
                continue
            target = (page.parent / href).resolve()
            if target.is_dir() or not target.exists():
                broken.append(f"{page.relative_to(site)} → {href}")
    assert not broken, broken[:10]
    assert (site / "index.html").exists() and (site / "papers.html").exists()
    # nothing from a CDN: the offline search's worker shim is the vendored one (docs/hooks/offline_search.py)
    remote = [f"{page.relative_to(site)}: {src}" for page in site.rglob("*.html")
              for src in re.findall(r'<script src="(https?:[^"]+)"', page.read_text(encoding="utf-8"))]
    assert not remote, remote[:5]
    assert (site / "search" / "search_index.js").exists()
    # the docstrings' Sphinx roles rendered (docs/hooks/xrefs.py), and no TeX in a table of contents
    # (docs/hooks/toc_text.py): the API pages once showed ":class:" 606 times, the contents "\\((H, \\beta)\\)"
    raw, tex = [], []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="ignore")
        raw += [f"{page.name}: {m}" for m in re.findall(r":(?:class|func|meth|data|mod|attr):<code>[^<]*</code>", text)]
        tex += [f"{page.name}: {t}" for t in re.findall(r'<span class="md-ellipsis">\s*([^<]*\\\([^<]*)</span>', text)]
    assert not raw, raw[:5]
    assert not tex, tex[:5]
    reference = (site / "reference" / "limits.html").read_text(encoding="utf-8")
    assert '<a href="#limits.brownian.BrownianGrid"><code>BrownianGrid</code></a>' in reference
    # each tutorial page shows what its cells printed, one labelled block per printing cell
    for path in TUTORIALS:
        page = (site / "tutorial" / f"{path.stem}.html").read_text(encoding="utf-8")
        printing = [e["stdout"] for e in OUTPUTS.recorded(path.stem, ROOT / "docs")["cells"] if e["stdout"].strip()]
        assert page.count('class="tutorial-output"') == len(printing) > 0, path.name


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """The site built once for the browser tests of this module."""
    import os

    site = tmp_path_factory.mktemp("built") / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr
    return site


def test_the_site_opened_from_disk_finds_a_word_with_its_search_box(built_site, chromium):
    """Issue 45: the README tells readers to open the built site from disk; its search box then works (Material's
    offline plugin, the worker shim vendored): typing "Milstein" lists pages, with no request to the network."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        remote = []
        page.on("request", lambda r: remote.append(r.url) if r.url.startswith(("http:", "https:")) else None)
        page.goto((built_site / "index.html").as_uri())
        page.wait_for_load_state("load")
        page.eval_on_selector("#__search", "e => { e.checked = true; e.dispatchEvent(new Event('change')); }")
        page.focus("input.md-search__input")
        page.keyboard.type("Milstein", delay=20)
        page.wait_for_selector(".md-search-result__item", timeout=20000)
        found = page.inner_text(".md-search-result__meta")
        browser.close()
    assert "matching document" in found, found
    assert not remote, remote[:5]


#: every word of the code in a table cell that the browser set on more than one line (a command broken inside a word:
#: "assumption s", "- -preset"), as "word (page)"
_WORDS_BROKEN_IN_TABLES = """() => {
  const broken = [];
  for (const code of document.querySelectorAll('.md-typeset table code')) {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""


#: every code block whose text is wider than its box (a comment hidden behind a scrollbar), as its first 60 characters
_CODE_BLOCKS_CUT = """() => Array.from(document.querySelectorAll('.md-typeset pre > code'))
  .filter(code => code.offsetParent !== null && code.scrollWidth > code.clientWidth + 1)
  .map(code => code.textContent.slice(0, 60))"""


@pytest.mark.parametrize("page_path", ["papers.html", "index.html", "results/defaults.html", "howto/training.html",
                                       "results/training_chaintron2026.html", "results/convergence.html",
                                       "tutorial/01_one_path.html", "tutorial/06_backward_pass.html"])
def test_no_command_in_a_table_breaks_inside_a_word_at_1400_px(built_site, chromium, page_path):
    """Issue 45: at a lecture hall's 1400 px, a command in a narrow table cell wraps at its spaces, never inside a
    word or a flag (the table scrolls sideways instead), and no code block hides its end (a comment) behind a
    scrollbar. Checked in chromium: each word of the code in a table cell lies on one line; each visible code block
    is as wide as its text. Issue 66: a long identifier with no hyphen (a test's node id, a path) may break after a
    "/", "::" or "_", where docs/hooks/table_code.py puts a <wbr>; the <wbr> ends a text node, so each piece between
    two is a word here."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto((built_site / page_path).as_uri())
        page.wait_for_load_state("load")
        page.wait_for_timeout(500)                     # MathJax typesets the formulas, which widens their cells
        broken = page.evaluate(_WORDS_BROKEN_IN_TABLES)
        cut = page.evaluate(_CODE_BLOCKS_CUT)
        browser.close()
    assert not broken, broken[:10]
    assert not cut, cut[:5]


#: every table wider than the column it sits in (the reader must scroll it sideways), as "index: table px > column px";
#: the column is the table's scroll wrapper (Material's .md-typeset__scrollwrap), or the content column without one
_TABLES_WIDER_THAN_THE_COLUMN = """() => Array.from(document.querySelectorAll('.md-content__inner table'))
  .flatMap((table, i) => {
  const column = table.closest('.md-typeset__scrollwrap') || table.closest('.md-content__inner');
  const width = Math.max(table.scrollWidth, Math.ceil(table.getBoundingClientRect().width), column.scrollWidth);
  return width > column.clientWidth + 1 ? [`table ${i}: ${width} px > ${column.clientWidth} px`] : [];
})"""


@pytest.mark.parametrize("page_path", ["papers.html", *(f"results/{md.stem}.html"
                                                          for md in sorted((ROOT / "docs" / "results").glob("*.md")))])
def test_every_table_fits_its_column_at_1400_px(built_site, chromium, page_path):
    """Issue 66: at a lecture hall's 1400 px (a column of about 900 px between the navigation and the contents), every
    table of the papers page and of the results pages fits its column, so that its last columns ("measured",
    "verdict") are on screen; the papers page's tables were up to 2,160 px wide. Checked in chromium once MathJax has
    typeset the formulas (which widens their cells): no table is wider than its scroll wrapper."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto((built_site / page_path).as_uri())
        page.wait_for_load_state("load")
        page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.wait_for_timeout(200)
        tables = page.evaluate("() => document.querySelectorAll('.md-content__inner table').length")
        wide = page.evaluate(_TABLES_WIDER_THAN_THE_COLUMN)
        browser.close()
    assert tables > 0, page_path
    assert not wide, wide


def test_the_search_previews_show_no_raw_tex(built_site):
    """Issue 66: the search results' previews read as text: the index holds the formulas rewritten in Unicode by
    docs/hooks/search_maths.py, not the TeX source that arithmatex leaves for MathJax ("\\(\\tfrac12\\sigma''(0)Q\\)"),
    which the search box does not typeset. No formula delimiter is left in any entry, no TeX in any title (a
    heading), and no TeX command or $-delimited TeX in the text of the theory and papers pages, the pages of
    formulas (inline code aside; the index keeps no mark of code blocks, where a backslash or a $ is shell or
    Python, so the other pages' texts are checked for delimiters only)."""
    import json

    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    script = (built_site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert json.loads(script.removeprefix("var __index = ")) == index      # the offline index is the same one
    code = re.compile(r"<code\b.*?</code>", re.DOTALL)
    delimiter, tex = re.compile(r"\\[()\[\]]"), re.compile(r"\\[A-Za-z]+|\$[^$\s][^$]*\$")
    entries = index["docs"]
    formulas = [e for e in entries if e["location"].split("#")[0] in ("theory.html", "papers.html")]
    raw = [f"{e['location']}: {m.group(0)[:60]}" for e in entries
           for m in delimiter.finditer(code.sub(" ", e["title"] + " " + e["text"]))]
    raw += [f"{e['location']} (title): {m.group(0)[:60]}" for e in entries
            for m in tex.finditer(code.sub(" ", e["title"]))]
    raw += [f"{e['location']}: {m.group(0)[:60]}" for e in formulas for m in tex.finditer(code.sub(" ", e["text"]))]
    assert not raw, (len(raw), raw[:10])
    for page in ("theory.html", "papers.html"):                 # their formulas are in the index, as text
        on_page = [e for e in formulas if e["location"].split("#")[0] == page]
        assert len(on_page) > 5 and sum("α" in e["text"] or "β" in e["text"] for e in on_page) > 3, page
    titles = {e["location"].split("#")[1]: e["title"] for e in entries
              if e["location"].startswith("results/regimes.html#")}
    assert titles["fig-2"] == "Fig. 2: the distribution at β = 1/2, L = 1000, d = 100", titles["fig-2"]


def test_the_pages_state_the_default_tolerance_the_code_uses():
    """Every "within 0.5 ± t", "theory ± t", "tolerance ±t" and "within ±t" on the newcomer's pages (README, tutorials,
    how-to pages of the rate studies) names the default tolerance of the rate verdict (a page once said ±0.1 after
    the default became ±0.05)."""
    from validation.convergence import ConvergenceSettings

    tolerance = ConvergenceSettings().tolerance
    pages = [ROOT / "README.md", ROOT / "docs" / "index.md", *sorted((ROOT / "docs" / "tutorial").glob("*.md")),
             *sorted((ROOT / "docs" / "tutorial").glob("[0-9][0-9]_*.py")), ROOT / "docs" / "howto" / "convergence.md",
             ROOT / "docs" / "howto" / "ablation.md"]
    pattern = re.compile(r"(?:0\.5 ?(?:\\pm|±) ?|theory ?\$?(?:\\pm|±) ?|tolerance ±|within ±)(\d+(?:\.\d+)?)")
    stated = [(page.name, float(value)) for page in pages for value in pattern.findall(page.read_text())]
    assert len(stated) >= 6, stated                      # the check reads what it should
    assert all(value == tolerance for _, value in stated), [x for x in stated if x[1] != tolerance]


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_code_pastes_into_a_plain_python_prompt(path):
    """Each tutorial page's code blocks, pasted one after another into ``python -i`` (each followed by a blank line,
    as a reader pasting them would), run without an error: no magics, and a blank line after every indented block
    (the interactive prompt needs one before a dedented statement)."""
    import os

    import jupytext

    blocks = [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "code"]
    assert blocks and not any(line.lstrip().startswith("%") for block in blocks for line in block.splitlines())
    pasted = "".join(block.rstrip("\n") + "\n\n" for block in blocks) + "exit()\n"
    proc = subprocess.run([sys.executable, "-i", "-q"], input=pasted, capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env={**os.environ, "TUTORIAL_QUICK": "1", "MPLBACKEND": "Agg"})
    errors = [line for line in proc.stderr.splitlines() if "Error" in line or "Traceback" in line]
    assert proc.returncode == 0 and not errors, errors[:5]


def test_the_main_study_timings_quoted_are_the_committed_benchmark():
    """The README and the tutorial index quote the main study's time from benchmarks/results/bench_whole_process.json
    (the median wall time of the package's runs), not a number of their own (issue 45)."""
    import json

    bench = json.loads((ROOT / "benchmarks" / "results" / "bench_whole_process.json").read_text())
    quoted = f"{bench['median']['package']['wall_s']:.1f} s"
    readme = (ROOT / "README.md").read_text()
    main_line = next(line for line in readme.splitlines() if line.startswith("python -m validation.convergence --model res1 "))
    assert quoted in main_line and "benchmarks/" in main_line, main_line
    index = " ".join((ROOT / "docs" / "tutorial" / "index.md").read_text().split())
    assert f"It took {quoted}" in index and "bench_whole_process.json" in index
    install = (ROOT / "docs" / "install.md").read_text()
    main_line = next(line for line in install.splitlines() if line.startswith("python -m validation.convergence --model res1 "))
    assert quoted in main_line, main_line
    # issue 66: "3.7 s", "about 4 s" and "about 5–10 s" for the same command on different pages
    for page in (ROOT / "README.md", ROOT / "docs" / "howto" / "scale.md", ROOT / "docs" / "install.md"):
        text = " ".join(page.read_text().split())
        assert not re.search(r"about (4|5-10|5–10) s", text), f"{page.name} quotes a time of its own for the main study"


def test_no_page_carries_a_control_character():
    """A page written through a Python string without a raw prefix turns ``\\tau`` into a tab and ``\\rVert`` into a
    line break, and the formula renders broken (found on the Marion et al. results page)."""
    bad = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        lines = [i for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"[\x00-\x08\x0b-\x1f]", line) or re.match(r"^(Vert|ext\{|au\b)", line)]
        if lines:
            bad[str(page.relative_to(ROOT))] = lines
    assert not bad, f"control characters (a lost backslash) at {bad}"


def test_the_jax_peer_computes_the_study_when_jax_is_installed(tmp_path):
    """benchmarks/straightforward_res1_jax.py (the JAX peer of bench_whole_process.py) runs the res-1 study at a small
    size and prints a rate near ½; it needs a Python with JAX (``JAX_PYTHON``, else this one), and skips without."""
    import os

    python = os.environ.get("JAX_PYTHON", sys.executable)
    if subprocess.run([python, "-c", "import jax"], capture_output=True).returncode != 0:
        pytest.skip("no JAX: set JAX_PYTHON to a Python that has it")
    proc = subprocess.run([python, str(ROOT / "benchmarks" / "straightforward_res1_jax.py"), "--samples", "200",
                           "--reference-steps", "2048"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-500:]
    rate = float(proc.stdout.split()[1])
    assert 0.35 < rate < 0.65, proc.stdout


def test_the_api_pages_set_docstring_indices_as_maths_and_link_the_theory():
    """Issue 45: the docstrings' plain-text maths (h_{k+1}, W_e, L^{-1/2}) is set with sub- and superscripts on the
    API pages, code and identifiers are left as written, and "docs/theory.md §N" links to section N."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from docstring_maths import rewrite
    finally:
        sys.path.pop(0)
    html = ('<p>h_{k+1} = h_k + W_eᵀ x, L^{-1/2}, run_network, see docs/theory.md §9 and docs/theory.md.</p>'
            '<pre><code>h_{k+1}</code></pre><a href="x">h_l</a>')
    out = rewrite(html, "../")
    assert out.startswith("<p>h<sub>k+1</sub> = h<sub>k</sub> + W<sub>e</sub>ᵀ x, L<sup>-1/2</sup>, run_network")
    assert '<a href="../theory.html#s9">docs/theory.md §9</a>' in out and '<a href="../theory.html">docs/theory.md</a>' in out
    assert "<pre><code>h_{k+1}</code></pre><a href=\"x\">h_l</a>" in out


def test_each_results_page_opens_with_its_main_figure():
    """Issue 45: a reader at a lecture hall's screen sees a results page's figure first (res1's once sat 4,200 px down
    its page): the first figure of every results page that has one comes before its first section."""
    late = []
    for page in sorted((ROOT / "docs" / "results").glob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n")
        figures = [i for i, line in enumerate(lines) if line.startswith("![")]
        sections = [i for i, line in enumerate(lines) if line.startswith("## ")]
        if figures and sections and figures[0] > sections[0]:
            late.append(f"{page.name}: first figure at line {figures[0] + 1}, first section at {sections[0] + 1}")
    assert not late, late


def _recorded_main_output(path: Path) -> list[str]:
    """The lines of the first plain code block of ``path`` that shows the main command's verdict line."""
    blocks, current = [], None
    for line in path.read_text().split("\n"):
        if line.startswith("```"):
            if current is None:
                current = [] if line == "```" else ["fenced"]
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    shown = [b for b in blocks if b[:1] != ["fenced"] and any("<- verdict" in line for line in b)]
    assert shown, f"{path.name} shows no recorded output of the main command"
    return shown[0]


def test_the_recorded_output_of_the_main_command_is_what_a_fresh_run_prints():
    """Issue 66: the README's and the convergence how-to's recorded output of `python -m validation.convergence
    --model res1` had a stale fit line (a run adds "down to 3 depths"); both must be a run's own lines, in order,
    line for line (the how-to's "time … s" stands for the wall time)."""
    run = subprocess.run([sys.executable, "-m", "validation.convergence", "--model", "res1", "--quiet"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600, env={**os.environ, "TQDM_DISABLE": "1"})
    assert run.returncode == 0, run.stderr
    printed = [re.sub(r"^time [0-9.]+ s$", "time … s", line) for line in run.stdout.rstrip("\n").split("\n")]
    for path in (ROOT / "README.md", ROOT / "docs" / "howto" / "convergence.md"):
        recorded = _recorded_main_output(path)
        starts = [i for i, line in enumerate(printed) if line == recorded[0]]
        assert starts, f"{path.name}: its recorded output's first line is not printed: {recorded[0]!r}"
        shown = printed[starts[0]:starts[0] + len(recorded)]
        for number, (then, now) in enumerate(zip(recorded, shown), start=1):
            assert then == now, f"{path.name}, recorded line {number}:\n  recorded {then!r}\n  printed  {now!r}"
        assert len(shown) == len(recorded), f"{path.name} records more lines than a run prints"


def test_the_readme_has_no_line_a_reader_must_scroll():
    """Issue 66: one README table row was a single 1,483-character line. Prose and tables stay within 200
    characters; a program's recorded output (inside a code block) is printed as the program prints it."""
    inside, long = False, []
    for number, line in enumerate((ROOT / "README.md").read_text().split("\n"), start=1):
        if line.startswith("```"):
            inside = not inside
        elif not inside and len(line) > 200:
            long.append((number, len(line)))
    assert not long, f"README lines over 200 characters (line, length): {long}"


def test_a_newcomer_has_one_path_through_the_docs():
    """Issue 66: the home page listed the theory (12,600 words) and the API reference before the tutorial, and no page
    linked to the next. Now the home page sends a newcomer to a page of under 600 words first and to the tutorial
    before the reference, every page has previous/next links, and the tutorial's first page ends with the explorer."""
    home = (ROOT / "docs" / "index.md").read_text()
    next_steps = home.split("## Where to go next", 1)[1]
    order = [next_steps.index(link) for link in ("(ten_minutes.md)", "(tutorial/index.md)", "(theory.md)",
                                                 "(reference/limits.md)")]
    assert order == sorted(order), order
    words = len(re.sub(r"```.*?```", " ", (ROOT / "docs" / "ten_minutes.md").read_text(), flags=re.S).split())
    assert words < 600, words
    mkdocs = (ROOT / "mkdocs.yml").read_text()
    assert "navigation.footer" in mkdocs and "Ten minutes: ten_minutes.md" in mkdocs
    tutorial = (ROOT / "docs" / "tutorial" / "index.md").read_text()
    assert "python -m validation.explore --model res1" in tutorial.split("## One command for the class", 1)[1].split("\n## ")[0]


def test_every_results_page_links_the_calibration_page():
    """Issue 62: the page of the verdicts' error rates is linked from every results page (and the README's verdict
    paragraph), so a reader of a PASS can find how often such a PASS is wrong."""
    pages = [p for p in (ROOT / "docs" / "results").glob("*.md") if p.name != "calibration.md"]
    assert len(pages) > 10
    assert [p.name for p in pages if "calibration.md" not in p.read_text(encoding="utf-8")] == []
    assert "docs/results/calibration.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_display_formula_is_a_paragraph_of_its_own():
    """A display formula ``$$…$$`` inside a paragraph (no blank line before or after it) rendered as an inline formula
    between two stray dollar signs on the theory page (six of them). Each display formula opens at the start of a line
    after a blank line and closes at the end of a line before one."""
    offenders = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines() + [""]
        inside = False
        for number, line in enumerate(lines[:-1], 1):
            text = line.strip()
            if "$$" not in text:
                continue
            where = f"{page.relative_to(ROOT)}:{number}: {text[:50]}"
            opens = not inside
            closes = text.count("$$") == 2 or inside
            if opens and (not text.startswith("$$") or (number > 1 and lines[number - 2].strip())):
                offenders.append(where + " (not a paragraph's start)")
            if closes and (not text.endswith("$$") or lines[number].strip()):
                offenders.append(where + " (not a paragraph's end)")
            inside = opens and not closes
    assert not offenders, "\n".join(offenders)
