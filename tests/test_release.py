"""Release metadata: LICENSE, CITATION.cff and pyproject.toml agree with each other and with the package.

Fast and offline. The wheel tests build from a copy of the sources in a temporary folder with the installed
setuptools and setuptools-scm (no build isolation, nothing downloaded), so they leave no build/ behind in the
checkout: a clone of the checkout's history with its working files copied over (the version setuptools-scm derives
from git), and a copy without git (the fallback version).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the release before the version moved with the code (issue 67): every commit after it still said "0.5.0"
PREVIOUS_RELEASE = "0.5.0"


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
    """The version a build of this tree gets now: setuptools-scm's, from git and pyproject.toml's
    [tool.setuptools_scm] (an editable install's limits/_version.py dates from its install)."""
    pytest.importorskip("setuptools_scm", reason="the dev extra installs setuptools-scm")
    proc = subprocess.run([sys.executable, "-m", "setuptools_scm", "--root", str(ROOT), "--config",
                           str(ROOT / "pyproject.toml")], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def _follows_release(version: str, release: str) -> bool:
    """``version`` is the release itself, or a development version of the release right after it (setuptools-scm's
    guess: 0.5.0 → 0.5.1.devN+g<hash>)."""
    from packaging.version import Version

    v, r = Version(version), Version(release)
    following = Version(".".join(map(str, (*r.release[:-1], r.release[-1] + 1))))
    return v == r or (v.is_devrelease and Version(v.base_version) == following)


def test_follows_release_accepts_the_release_and_its_dev_versions_only():
    assert _follows_release("0.5.0", "0.5.0")
    assert _follows_release("0.5.1.dev295+ga308397303.d20261207", "0.5.0")
    assert _follows_release("0.5.1.dev0", "0.5.0")
    for wrong in ("0.1.dev388+ga308397303", "0.5.1", "0.6.1.dev3+gabc1234", "0.4.9", "0+unknown"):
        assert not _follows_release(wrong, "0.5.0"), wrong


def test_citation_version_is_the_release_the_package_version_starts_from():
    """CITATION.cff names the release (0.5.0); the package's version is that release (on its tag) or a development
    version after it (0.5.1.devN+g<hash>), never a version below it (0.1.devN, setuptools-scm's default without a
    tag) nor one that skips a release CITATION.cff does not name."""
    version = _citation()["version"]
    assert isinstance(version, str), f"CITATION.cff's version must be a string (quote it), got {version!r}"
    package = _package_version()
    assert _follows_release(package, version), (package, version)


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
    setuptools = [r for r in requires if re.match(r"setuptools(?![\w-])", r)]
    assert len(setuptools) == 1, requires
    minimum = re.fullmatch(r"setuptools\s*>=\s*(\d+)(?:\.\d+)*", setuptools[0].replace(" ", ""))
    assert minimum and int(minimum.group(1)) >= 77, setuptools[0]
    # issue 67: the version from git; >= 9 counts an untagged history from fallback_version (8 from 0.0)
    scm = [r.replace(" ", "") for r in requires if re.match(r"setuptools[-_]scm", r)]
    assert len(scm) == 1 and re.fullmatch(r"setuptools[-_]scm>=(9|[1-9]\d+)(\.\d+)*", scm[0]), requires
    assert data["tool"]["setuptools_scm"]["version_file"] == "limits/_version.py"
    assert "version" not in data["tool"]["setuptools"].get("dynamic", {})   # no static limits.__version__ any more
    # the raw text too: no licence table anywhere, whatever the parser makes of it
    raw = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert not re.search(r"^\s*license\s*=\s*\{", raw, re.MULTILINE)


def _in_git_checkout() -> bool:
    try:
        top = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             timeout=10)
    except OSError:
        return False
    return top.returncode == 0 and Path(top.stdout.strip()).resolve() == ROOT


def _build_wheel(folder: Path, with_git: bool) -> Path:
    """The wheel of this tree, built offline in ``folder``: from a clone of the checkout's history (its tags too)
    with the working files copied over (``with_git``), or from a plain copy of them (no git at all)."""
    src = folder / "src"
    if with_git:
        subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(src)], check=True, capture_output=True,
                       timeout=120)
    else:
        src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    for package in ("limits", "validation"):
        shutil.rmtree(src / package, ignore_errors=True)
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_version.py"))
    out = folder / "wheels"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("resnet_limits-*.whl")
    return wheel


def _headers(z: zipfile.ZipFile) -> tuple[str, list[str]]:
    (metadata,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
    return metadata.rsplit("/", 1)[0], z.read(metadata).decode("utf-8").split("\n\n", 1)[0].splitlines()


def _generated_version(z: zipfile.ZipFile) -> dict:
    """limits/_version.py as the wheel ships it, executed alone."""
    assert "limits/_version.py" in z.namelist(), "the wheel lacks setuptools-scm's generated limits/_version.py"
    namespace: dict = {}
    exec(z.read("limits/_version.py").decode("utf-8"), namespace)
    return namespace


@pytest.mark.skipif(not _in_git_checkout(), reason="needs this tree's git history")
def test_the_wheel_carries_the_license_and_the_schema(tmp_path):
    """Also issue 67: the wheel's version is the checkout's (setuptools-scm's, from git), not the previous release's
    "0.5.0" (what the static version gave every commit), and the wheel carries the generated limits/_version.py with
    that version and the commit it was built from. Unpacked where no checkout is around it and run as a study, it
    writes that version and that commit into the result file."""
    wheel = _build_wheel(tmp_path, with_git=True)
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist_info, headers = _headers(z)
        (version,) = [h.split(": ", 1)[1] for h in headers if h.startswith("Version: ")]
        assert version != PREVIOUS_RELEASE
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode("utf-8")
        generated = _generated_version(z)
        z.extractall(tmp_path / "site")
    assert _follows_release(version, _citation()["version"]), version
    assert version.split("+")[0] == _package_version().split("+")[0]        # the checkout's, up to the build date
    assert generated["__version__"] == version
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert generated["commit"].startswith("g") and head.startswith(generated["commit"][1:]), (generated, head)
    assert "License-Expression: MIT" in headers
    assert "License-File: LICENSE" in headers
    assert not any(h.startswith("Classifier: License ::") for h in headers)
    assert f"{dist_info}/licenses/LICENSE" in names
    assert "validation/core/schemas/result.schema.json" in names
    assert "resnet-limits = validation.__main__:main" in entry_points        # the console script
    # the unpacked wheel first on the path (the editable install's finder comes after it), run from a folder that
    # is in no checkout: the result file records the wheel's version and its build's commit
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    proc = subprocess.run([sys.executable, "-m", "validation.convergence", "--model", "res1", "--samples", "20",
                           "--depths", "4:16", "--quiet", "--json", "out.json"], capture_output=True, text=True,
                          timeout=300, cwd=run_dir, env=env)
    assert proc.returncode in (0, 1, 4), proc.stderr
    run = json.loads((run_dir / "out.json").read_text(encoding="utf-8"))["run"]
    assert run["package_version"] == version != PREVIOUS_RELEASE
    assert run["git"] is None                                   # no checkout around the unpacked wheel
    assert run["build_commit"]["commit"] == generated["commit"][1:]
    assert run["build_commit"]["dirty"] is generated["dirty"]


def test_a_wheel_built_without_git_has_a_development_version_after_the_release(tmp_path):
    """A copy of the sources with no git (a tarball): setuptools-scm's fallback_version, 0.5.1.dev0 — a development
    version after the release, never "0.5.0" — and no commit."""
    wheel = _build_wheel(tmp_path, with_git=False)
    with zipfile.ZipFile(wheel) as z:
        _, headers = _headers(z)
        (version,) = [h.split(": ", 1)[1] for h in headers if h.startswith("Version: ")]
        assert version != PREVIOUS_RELEASE
        generated = _generated_version(z)
    assert version == generated["__version__"]
    assert _follows_release(version, _citation()["version"]), version
    assert generated["commit"] is None


def test_run_info_records_the_build_commit_only_outside_a_checkout(monkeypatch):
    """In a checkout ``run`` records git's commit and no ``build_commit`` (as before); outside one (git_commit()
    is None) it records the commit limits/_version.py names, and the schema accepts both."""
    import jsonschema

    from validation.core import results

    import limits

    # what limits/__init__.py reads from the generated limits/_version.py of a wheel built at commit abc1234
    monkeypatch.setattr(limits, "__build_commit__", "gabc1234")
    monkeypatch.setattr(limits, "__build_dirty__", True)
    whole = results.schema()
    run_schema = {"$schema": whole["$schema"], "$defs": whole["$defs"], "$ref": "#/$defs/run"}

    def capture():
        return results.RunInfo.capture(seed=0, dtype="float64", device="cpu", started=results.utc_now(),
                                       wall_time_s=0.0).to_dict()

    monkeypatch.setattr(results, "git_commit", lambda: {"commit": "f" * 40, "dirty": False})
    inside = capture()
    assert "build_commit" not in inside and inside["git"] == {"commit": "f" * 40, "dirty": False}
    monkeypatch.setattr(results, "git_commit", lambda: None)
    outside = capture()
    assert outside["git"] is None and outside["build_commit"] == {"commit": "abc1234", "dirty": True}
    for run in (inside, outside):
        jsonschema.validate(run, run_schema)
    monkeypatch.setattr(limits, "__build_commit__", None)        # built without git
    assert "build_commit" not in capture()


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
