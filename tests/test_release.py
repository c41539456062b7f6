"""Release metadata: LICENSE, CITATION.cff and pyproject.toml agree with each other and with the package.

Fast and offline. The wheel test builds from a copy of the sources in a temporary folder with the installed
setuptools (no build isolation, nothing downloaded), so it leaves no build/ behind in the checkout.
"""

import ast
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _toml():
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib


def _pyproject():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return _toml().load(f)


def _citation():
    yaml = pytest.importorskip("yaml")
    with open(ROOT / "CITATION.cff", encoding="utf-8") as f:
        return yaml.safe_load(f)


def _package_version():
    """limits.__version__, read as setuptools reads it (`attr = "limits.__version__"`): statically, without torch."""
    tree = ast.parse((ROOT / "limits" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("limits/__init__.py sets no __version__")


def test_citation_version_is_the_package_version():
    version = _citation()["version"]
    assert isinstance(version, str), f"CITATION.cff's version must be a string (quote it), got {version!r}"
    assert version == _package_version()


def test_citation_license_is_the_pyproject_license():
    assert _citation()["license"] == _pyproject()["project"]["license"]


def test_citation_has_the_required_cff_fields():
    cff = _citation()
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "date-released", "references"):
        assert cff.get(key), key
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(cff["date-released"]))


def test_license_file_is_mit():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the resnet-limits authors" in text


def test_pyproject_uses_pep639_license_and_setuptools_77():
    data = _pyproject()
    project = data["project"]
    assert isinstance(project["license"], str), "project.license must be an SPDX expression, not a { text = ... } table"
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert not any(c.startswith("License ::") for c in project.get("classifiers", [])), "PEP 639: no License classifier"
    requires = data["build-system"]["requires"]
    setuptools = [r for r in requires if re.match(r"setuptools\b", r)]
    assert len(setuptools) == 1, requires
    minimum = re.fullmatch(r"setuptools\s*>=\s*(\d+)(?:\.\d+)*", setuptools[0].replace(" ", ""))
    assert minimum and int(minimum.group(1)) >= 77, setuptools[0]
    # the raw text too: no licence table anywhere, whatever the parser makes of it
    raw = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert not re.search(r"^\s*license\s*=\s*\{", raw, re.MULTILINE)


def test_the_wheel_carries_the_license_and_the_schema(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    for package in ("limits", "validation"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path / "wheels"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("resnet_limits-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        dist_info = metadata.rsplit("/", 1)[0]
        headers = z.read(metadata).decode("utf-8").split("\n\n", 1)[0].splitlines()
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode("utf-8")
    assert "License-Expression: MIT" in headers
    assert "License-File: LICENSE" in headers
    assert f"Version: {_package_version()}" in headers
    assert not any(h.startswith("Classifier: License ::") for h in headers)
    assert f"{dist_info}/licenses/LICENSE" in names
    assert "validation/core/schemas/result.schema.json" in names
    assert "resnet-limits = validation.__main__:main" in entry_points        # the console script


def test_the_console_script_runs_a_study_as_python_m_does():
    """``resnet-limits STUDY …`` (``python -m validation STUDY …``, what the console script calls) prints what
    ``python -m validation.STUDY …`` prints and exits with its status; an unknown study is one line and status 2."""
    args = ["--model", "res1", "--samples", "20", "--depths", "4:16", "--quiet"]
    runs = [subprocess.run([sys.executable, "-m", *module, *args], capture_output=True, text=True, timeout=300,
                           cwd=ROOT) for module in (["validation", "convergence"], ["validation.convergence"])]
    assert runs[0].returncode == runs[1].returncode and runs[0].returncode in (0, 1, 4), runs[0].stderr
    assert [line for line in runs[0].stdout.splitlines() if not line.startswith("time ")] == \
        [line for line in runs[1].stdout.splitlines() if not line.startswith("time ")]
    wrong = subprocess.run([sys.executable, "-m", "validation", "nope"], capture_output=True, text=True, timeout=60,
                           cwd=ROOT)
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1 and "nope" in wrong.stderr


def test_every_progress_bar_is_tqdm_auto():
    """Issue 67: one progress-bar import, ``tqdm.auto`` (a widget in Jupyter, text in a terminal); five modules
    imported plain ``tqdm``, which prints text bars in a notebook."""
    import re

    plain = [str(path.relative_to(ROOT)) for folder in ("limits", "validation") for path in (ROOT / folder).rglob("*.py")
             if re.search(r"^\s*(from tqdm import|import tqdm\b)", path.read_text(encoding="utf-8"), re.M)]
    assert not plain, plain
