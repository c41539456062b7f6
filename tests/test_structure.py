"""The package's shape: no import cycles (function-level imports included), no study reaching into another study's private names, and the
run-level flags (``--threads``) reaching the computation."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("limits", "validation")
#: the study modules: each is a command (``python -m validation.NAME``); the package's own registry
from validation import STUDIES  # noqa: E402


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The package modules ``module`` imports anywhere: at module level, under ``if TYPE_CHECKING:`` (a cycle of
    type hints is still a cycle for a reader) and inside functions (a deferred import hides a cycle from Python's
    loader, not from a reader: the two modules still depend on each other)."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, is_package)
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
    return {name for name in found if name in known and name != module}


def test_the_import_graph_has_no_cycles():
    """No cycle, function-level imports included."""
    modules = _modules()
    graph = {name: _imports(name, path, set(modules)) for name, path in modules.items()}
    # a package's __init__ importing its own submodules is how a public surface is built, not a cycle of layers
    graph = {name: {t for t in targets if not t.startswith(name + ".")} for name, targets in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_no_study_imports_another_studys_private_names():
    modules = _modules()
    studies = {f"validation.{name}" for name in STUDIES}
    offences = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        imported_studies: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(name, node, path.name == "__init__.py")
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    if full in studies:
                        imported_studies[alias.asname or alias.name] = full
                    elif target in studies and target != name and alias.name.startswith("_"):
                        offences.append(f"{name} imports {target}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in studies:
                        imported_studies[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and node.value.id in imported_studies \
                    and imported_studies[node.value.id] != name:
                offences.append(f"{name} reads {imported_studies[node.value.id]}.{node.attr}")
    assert not offences, offences


#: the studies that are packages (a study with helpers): their helpers are theirs alone
STUDY_PACKAGES = ("gradients", "multilevel", "regimes", "phase", "figures", "training", "solvers")


def test_no_module_outside_a_study_package_imports_its_submodules():
    """A study package's submodules (its study, helpers, plots) are read through the package's public surface
    (``validation.<study>``) from outside it, never directly; the shared core imports no study at all."""
    modules = _modules()
    known = set(modules)
    offences = []
    for name, path in modules.items():
        for target in _imports(name, path, known):
            for study in STUDY_PACKAGES:
                package = f"validation.{study}"
                if target.startswith(package + ".") and not name.startswith(package + ".") and name != package:
                    offences.append(f"{name} imports {target}")
            if name.startswith("validation.core") and any(target == f"validation.{s}" or
                                                          target.startswith(f"validation.{s}.")
                                                          for s in STUDIES):
                offences.append(f"{name} (the core) imports the study {target}")
    assert not offences, offences


def _planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> Path:
    """A planted ``validation`` package of ``files`` (path → source), which the checks then read instead."""
    package = tmp_path / "validation"
    for name, source in {"__init__.py": "", **files}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", ("validation",))
    return package


def test_the_structure_checks_can_fail(tmp_path, monkeypatch):
    """The checks above on a planted cycle, a planted private import and planted imports across a study package's
    boundary: each must object."""
    package = _planted(tmp_path, monkeypatch, {"convergence.py": "from validation.solvers import _secret\n",
                                               "solvers.py": "from validation import convergence\n_secret = 1\n"})
    with pytest.raises(pytest.fail.Exception, match="import cycle"):
        test_the_import_graph_has_no_cycles()
    with pytest.raises(AssertionError, match="_secret"):
        test_no_study_imports_another_studys_private_names()
    (package / "figures").mkdir()
    (package / "figures" / "__init__.py").write_text("")
    (package / "figures" / "plots.py").write_text("")
    (package / "core").mkdir()
    (package / "core" / "__init__.py").write_text("")
    (package / "weak.py").write_text("from validation.figures import plots\n")
    with pytest.raises(AssertionError, match="validation.weak imports validation.figures.plots"):
        test_no_module_outside_a_study_package_imports_its_submodules()
    (package / "weak.py").write_text("")
    (package / "core" / "stats.py").write_text("from validation import solvers\n")
    with pytest.raises(AssertionError, match=r"validation.core.stats \(the core\) imports the study validation.solvers"):
        test_no_module_outside_a_study_package_imports_its_submodules()


def test_a_cycle_through_a_function_level_import_is_found(tmp_path, monkeypatch):
    """A cycle whose one edge is an import deferred into a function body is still a cycle."""
    _planted(tmp_path, monkeypatch, {"stats.py": "from validation import results\n",
                                     "results.py": "def later():\n    from validation.stats import fit\n    return fit\n"})
    with pytest.raises(pytest.fail.Exception, match="import cycle: .*validation.results.*validation.stats"):
        test_the_import_graph_has_no_cycles()


def _raw_checks() -> list[str]:
    """Where a module writes a check as a dict literal ``{"check": …, "passed": …}`` instead of through
    :class:`validation.core.checks.Check` (whose ``to_dict`` is the one JSON form of a check)."""
    offences = []
    for name, path in _modules().items():
        if name == "validation.core.checks":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            keys = {k.value for k in getattr(node, "keys", []) if isinstance(k, ast.Constant)}
            if isinstance(node, ast.Dict) and {"check", "passed"} <= keys:
                offences.append(f"{name}:{node.lineno}")
    return offences


def test_every_check_is_built_by_the_one_check_type():
    assert not _raw_checks(), _raw_checks()


def test_the_check_type_rule_finds_a_raw_check(tmp_path, monkeypatch):
    _planted(tmp_path, monkeypatch, {"weak.py": "def checks():\n    return [{'check': 'x', 'passed': True}]\n"})
    assert _raw_checks() == ["validation.weak:2"]


def test_threads_reach_the_run_and_its_json(tmp_path):
    """``--threads 2`` is the thread count torch runs the study with, and the one the JSON records (before 0.4
    the study's own default of 1 overrode it and the JSON said 1)."""
    out = tmp_path / "r.json"
    probe = ("import torch, sys\n"
             "from validation import convergence\n"
             "from validation.core import runtime\n"
             "seen = []\n"
             "original = convergence.study_errors_in_blocks\n"
             "def spy(*args, **kwargs):\n"
             "    seen.append(torch.get_num_threads())\n"
             "    return original(*args, **kwargs)\n"
             "convergence.study_errors_in_blocks = spy\n"
             "code = convergence.main(sys.argv[1:])\n"
             "print('threads during the study:', seen)\n"
             "raise SystemExit(code if code in (0, 1, 4) else 99)\n")
    proc = subprocess.run([sys.executable, "-c", probe, "--model", "res1", "--samples", "20", "--depths", "4,8,16",
                           "--reference-steps", "64", "--bootstrap", "100", "--threads", "2", "--quiet",
                           "--json", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode in (0, 1, 4), proc.stderr
    assert "threads during the study: [2]" in proc.stdout, proc.stdout
    assert json.loads(out.read_text())["run"]["threads"] == 2


@pytest.mark.parametrize("module", ["validation.convergence", "validation.solvers", "validation.ablation"])
def test_scipy_and_matplotlib_are_imported_only_when_used(module):
    """The main commands start without scipy (the bootstrap's, imported at the first fit) and matplotlib (the
    figures', imported with --plot): 0.5 s and 0.3 s of start-up that --help, a bad input or a run without a
    figure do not pay (benchmarks/bench_startup.py)."""
    code = (f"import sys, {module}\n"
            "print(sorted(m for m in ('scipy', 'matplotlib') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_the_study_registry_is_every_study_the_package_has():
    """Issue 64: the study names were restated by hand in at least seven places. ``validation.STUDIES`` is the one
    list: it names exactly the modules under validation/ that are commands with a ``run`` (the explorer is a page),
    and the result schema's ``study`` takes exactly these names."""
    import importlib
    import json

    commands = set()
    for path in (ROOT / "validation").iterdir():
        name = path.stem if path.suffix == ".py" else path.name
        if name.startswith("_") or name in ("core", "explore") or not (path.suffix == ".py" or (path / "__init__.py").exists()):
            continue
        module = importlib.import_module(f"validation.{name}")
        if callable(getattr(module, "run", None)) and callable(getattr(module, "main", None)):
            commands.add(name)
    assert commands == set(STUDIES)
    schema = json.loads((ROOT / "validation" / "core" / "schemas" / "result.schema.json").read_text())
    assert set(schema["properties"]["study"]["enum"]) == set(STUDIES)


#: argparse's private names (a leading underscore: not its documented interface, free to change in any release)
ARGPARSE_PRIVATE = r"argparse\._[A-Za-z]|\._(actions|action_groups|group_actions|option_string_actions|registries)\b"


def argparse_private_uses(root: Path) -> list[str]:
    """``file:line`` of every use of an argparse private name in the packages under ``root``."""
    import re

    pattern = re.compile(ARGPARSE_PRIVATE)
    return [f"{path.relative_to(root)}:{number}" for package in PACKAGES for path in sorted((root / package).rglob("*.py"))
            for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]


def test_the_command_line_uses_only_argparse_public_interface(tmp_path):
    """The settings' command line (validation/core/cli.py) finishes its parser from the actions it added
    (``_RecordingGroup``), and the studies type their flags' section as ``cli.ArgumentGroup``: no private argparse
    name anywhere (issue 67). Planted: a module that removes a section through ``parser._action_groups``."""
    assert argparse_private_uses(ROOT) == []
    (tmp_path / "validation").mkdir()
    (tmp_path / "validation" / "planted.py").write_text("def f(parser):\n    parser._action_groups.remove(None)\n")
    assert argparse_private_uses(tmp_path) == ["validation/planted.py:2"]
