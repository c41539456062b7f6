"""docs/design.md's Layout tree is the package as it is: every module of ``limits/`` and ``validation/`` and every
file of ``benchmarks/`` named at its place, and nothing named that does not exist; the API reference documents each
study's public surface, and nothing twice. Reads text only (no import of the package): fast."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
#: a tree line whose name starts at or beyond this column continues the description of the line above
DESCRIPTION_COLUMN = 30
#: the folders whose every module (``.py``; the JSON schemas' folder too) the tree must name
COMPLETE = ("limits", "validation")
#: the folder whose every file (its results/ folder as one entry) the tree must name
FLAT = "benchmarks"
_NAME = re.compile(r"[\w.\-]+/?")


def layout_block(text: str) -> str:
    """The first fenced code block of the page's "## Layout" section."""
    section = re.search(r"^## Layout\s*$(.*?)(?=^## |\Z)", text, re.S | re.M)
    if section is None:
        raise AssertionError("no '## Layout' section")
    block = re.search(r"^```[^\n]*\n(.*?)^```", section.group(1), re.S | re.M)
    if block is None:
        raise AssertionError("the Layout section has no fenced code block")
    return block.group(1)


def tree_paths(block: str) -> tuple[set[str], list[str]]:
    """The paths the tree names, built from its indentation (two spaces a level; a folder ends in ``/``), and the
    problems of its shape (a level skipped, an odd indentation, an entry under a file)."""
    paths: set[str] = set()
    problems: list[str] = []
    stack: list[str] = []  # the folders above the current line, one per level
    for number, line in enumerate(block.splitlines(), start=1):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if not stripped or indent >= DESCRIPTION_COLUMN:
            continue  # a blank line, or a description's continuation
        name = stripped.split()[0]
        if not _NAME.fullmatch(name) or indent % 2:
            problems.append(f"line {number} of the tree is not an entry: {line.strip()!r}")
            continue
        level = indent // 2
        if level > len(stack):
            problems.append(f"line {number}: {name} is indented below a file or skips a level")
            continue
        del stack[level:]
        path = "".join(stack) + name
        paths.add(path.rstrip("/"))
        if name.endswith("/"):
            stack.append(name)
        else:
            stack.append("\0")  # a file: nothing may sit under it
        if "\0" in stack[:-1]:
            problems.append(f"line {number}: {name} is under a file")
    return paths, problems


#: files a build writes into the tree (git-ignored, absent from a clone before its install): not the layout's
GENERATED = {"limits/_version.py"}   # setuptools-scm's version file (pyproject.toml [tool.setuptools_scm])


def shipped_paths(root: Path) -> set[str]:
    """What the tree must name: every ``.py`` under the complete folders (and the folders holding them, and the JSON
    schemas with their folder), every file and folder directly in benchmarks/."""
    wanted: set[str] = set()
    for top in COMPLETE:
        for path in (root / top).rglob("*"):
            relative = path.relative_to(root)
            if "__pycache__" in relative.parts or relative.as_posix() in GENERATED:
                continue
            if path.is_file() and (path.suffix == ".py" or "schemas" in relative.parts):
                wanted.add(relative.as_posix())
                wanted.update(parent.as_posix() for parent in relative.parents if parent != Path("."))
    for path in (root / FLAT).iterdir():
        if path.name != "__pycache__" and not path.name.startswith("."):
            wanted.add(path.relative_to(root).as_posix())
    wanted.add(FLAT)
    return wanted


def layout_problems(text: str, root: Path) -> list[str]:
    """Everything wrong with the Layout tree of ``text`` (a design page) against the files under ``root``: a module
    missing from the tree (or named under the wrong folder), a name in the tree that does not exist, a malformed
    line. Empty when the tree is right."""
    named, problems = tree_paths(layout_block(text))
    for path in sorted(shipped_paths(root) - named):
        problems.append(f"not in the Layout tree (or not at its place): {path}")
    for path in sorted(named):
        if not (root / path).exists():
            problems.append(f"in the Layout tree but not in the repository: {path}")
    return problems


def test_the_layout_tree_names_every_module_at_its_place_and_nothing_else():
    problems = layout_problems(DESIGN.read_text(encoding="utf-8"), ROOT)
    assert not problems, "\n".join(problems)


def test_the_layout_check_fails_on_a_planted_tree():
    """The same check on the page with a module's line taken out, with a module that does not exist added, and with a
    module moved to the wrong folder: each is reported."""
    text = DESIGN.read_text(encoding="utf-8")
    line = next(row for row in text.splitlines() if row.startswith("    stats.py "))
    without = text.replace(line + "\n", "", 1)
    assert layout_problems(without, ROOT) == ["not in the Layout tree (or not at its place): validation/core/stats.py"]

    ghost = line.replace("stats.py   ", "ghost.py   ", 1)
    planted = text.replace(line + "\n", line + "\n" + ghost + "\n", 1)
    assert layout_problems(planted, ROOT) == ["in the Layout tree but not in the repository: validation/core/ghost.py"]

    moved = without.replace("  convergence.py ", "  stats.py                    x\n  convergence.py ", 1)
    assert sorted(layout_problems(moved, ROOT)) == [
        "in the Layout tree but not in the repository: validation/stats.py",
        "not in the Layout tree (or not at its place): validation/core/stats.py",
    ]


def test_the_layout_check_reads_indentation_as_folders(tmp_path):
    """A small planted repository: a nested module is found through its folders, a description's continuation line
    is not an entry, a skipped level and a benchmark left out are reported."""
    for relative in ("limits/__init__.py", "limits/schemes/__init__.py", "limits/schemes/euler.py",
                     "validation/__init__.py", "benchmarks/bench.py", "benchmarks/results/a.json"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    page = ("# Design\n\n## Layout\n\n```\n"
            "limits/                       the models\n"
            "  __init__.py                 the surface\n"
            "  schemes/                    schemes\n"
            "    __init__.py               the table\n"
            "    euler.py                  Euler, whose description goes on\n"
            "                              limits/on_a_continuation.py is not an entry\n"
            "validation/                   the studies\n"
            "  __init__.py                 the package\n"
            "benchmarks/                   timings\n"
            "  results/                    their JSON\n"
            "  bench.py                    a timing\n"
            "```\n\n## Next\n")
    assert layout_problems(page, tmp_path) == []
    assert layout_problems(page.replace("  bench.py                    a timing\n", ""), tmp_path) == [
        "not in the Layout tree (or not at its place): benchmarks/bench.py"]
    skipped = page.replace("  __init__.py                 the package\n", "    __init__.py               the package\n")
    assert any("skips a level" in p for p in layout_problems(skipped, tmp_path))
    under_a_file = page.replace("  schemes/  ", "  schemes.py", 1)
    assert any("under a file" in p for p in layout_problems(under_a_file, tmp_path))


def _reference_targets() -> list[str]:
    return [m.group(1) for page in sorted((ROOT / "docs" / "reference").glob("*.md"))
            for m in re.finditer(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"), re.M)]


def test_the_api_reference_documents_each_module_once_and_each_study_by_its_public_surface():
    targets = _reference_targets()
    twice = sorted({t for t in targets if targets.count(t) > 1})
    assert not twice, f"documented more than once: {twice}"
    studies = {path.stem if path.is_file() else path.name for path in (ROOT / "validation").iterdir()
               if (path.suffix == ".py" and path.stem not in ("__init__", "__main__")) or (path / "__main__.py").exists()}
    studies.discard("core")
    assert len(studies) == 11, studies          # the ten studies and the explorer
    missing = sorted(s for s in studies if f"validation.{s}" not in targets)
    assert not missing, f"studies missing from docs/reference: {missing}"
    inner = sorted(t for t in targets if re.fullmatch(r"validation\.\w+\.(study|__main__)", t))
    assert not inner, f"a study package is documented by its public surface, not {inner}"
    core = sorted(f"validation.core.{p.stem}" for p in (ROOT / "validation" / "core").glob("*.py")
                  if p.stem != "__init__")
    assert not [m for m in core if m not in targets], [m for m in core if m not in targets]


def _private_imports(source: str, here: str) -> list[str]:
    """The private names (one leading underscore) that the module ``here`` (dotted) takes from another module of the
    package: ``from M import _name`` and ``M._name`` where ``M`` was imported as a module of limits or validation."""
    import ast

    tree = ast.parse(source)
    package = here.rsplit(".", 1)[0]
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = node.module or ""
            if node.level:                                  # relative: from .x import … inside ``package``
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, *([origin] if origin else [])])
            if origin.split(".")[0] not in ("limits", "validation") or origin == here:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"from {origin} import {alias.name}")
                elif alias.name[:1].islower():
                    modules.add(alias.asname or alias.name)  # maybe a module: from validation.training import cohen
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("limits", "validation"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_module_takes_a_private_name_of_another():
    """Issue 64: a private name (``_procedure``) is a module's own; another module that needs it needs a public name.
    cohen_conv took cohen's ``_procedure``, ``_ci``, ``_plain``; the explorer took pair_study's ``_defaults``. Every
    module of limits and validation is read; the check fails on a planted import."""
    wrong = {}
    for folder in ("limits", "validation"):
        for path in (ROOT / folder).rglob("*.py"):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found = _private_imports(path.read_text(encoding="utf-8"), dotted)
            if found:
                wrong[dotted] = found
    assert not wrong, wrong
    planted = "from .cohen import DECISION_THRESHOLD, _procedure\nfrom validation.training import cohen\ncohen._ci(1)\n"
    assert _private_imports(planted, "validation.training.cohen_conv") == [
        "from validation.training.cohen import _procedure", "cohen._ci"]
