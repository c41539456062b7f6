#!/usr/bin/env bash
# The package as a user gets it from a wheel (issue 67): build the wheel with build isolation (setuptools and
# setuptools-scm fetched from the package index, as pip does for anyone), install it non-editable in a fresh virtual
# environment with the CPU torch, and run the main study and the console script from a folder outside the checkout.
# The result file must record the wheel's version (setuptools-scm's, from git: never the previous release "0.5.0",
# which the static version gave every later commit) and, with no checkout around it, the commit it was built from.
# Called by .ci/run after the test suites: 55 to 71 s measured on 2 busy cores with a warm pip cache (building
# 9-17 s, installing 20-37 s, the two study runs and the checks 17-22 s).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
start=$SECONDS
log() { echo "wheel smoke: $* ($((SECONDS - start)) s)"; }
# removed in the background: unlinking the venv's 25,000 files took 10 to 60 s on a busy 2-core machine, more than
# the study and the console script together
trap '(rm -rf "$work" >/dev/null 2>&1 &)' EXIT
unset PYTHONPATH

# The sources: a clone of the checkout's history (its tags too: the version comes from them) with the working tree's
# files copied over, so that uncommitted edits are built as the suites tested them, and no build/ folder left in the
# checkout by an earlier build can carry a deleted module into the wheel.
git clone -q --shared "$root" "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard \
    | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work/src"

"$python" -m venv "$work/venv"
pip="$work/venv/bin/pip"
"$pip" wheel --quiet --no-deps -w "$work/dist" "$work/src"
wheel=("$work"/dist/resnet_limits-*.whl)
log "built $(basename "${wheel[0]}")"
# --no-compile: no .pyc files written at install (Python writes those it imports), half the files to remove after
"$pip" install --quiet --no-compile torch==2.13.0 "${wheel[0]}"
log "installed it with torch==2.13.0"

mkdir "$work/run"
cd "$work/run"
status=0
"$work/venv/bin/python" -m validation.convergence --model res1 --samples 40 --depths 4,8,16 --quiet \
    --json module.json >/dev/null || status=$?
case $status in 0|1|4) ;; *) echo "python -m validation.convergence exited $status (not a verdict)" >&2; exit 1 ;; esac
script_status=0
"$work/venv/bin/resnet-limits" convergence --model res1 --samples 40 --depths 4,8,16 --quiet \
    --json script.json >/dev/null || script_status=$?
[ "$script_status" -eq "$status" ] || { echo "resnet-limits convergence exited $script_status, python -m $status" >&2; exit 1; }
"$work/venv/bin/resnet-limits" convergence --help >/dev/null

head="$(git -C "$root" rev-parse HEAD 2>/dev/null || true)"
HEAD_COMMIT="$head" "$work/venv/bin/python" - <<'EOF'
import json
import os
from importlib import metadata

import limits

version = metadata.version("resnet-limits")
assert version != "0.5.0", "the wheel says 0.5.0, the previous release"
assert limits.__version__ == version, (limits.__version__, version)
assert "site-packages" in limits.__file__, limits.__file__               # the installed wheel, not a checkout
head = os.environ["HEAD_COMMIT"]
for name in ("module.json", "script.json"):
    run = json.load(open(name, encoding="utf-8"))["run"]
    assert run["package_version"] == version, (name, run["package_version"], version)
    assert run["git"] is None, (name, run["git"])                         # no checkout around the installed wheel
    built = run.get("build_commit")
    assert built is not None and (not head or head.startswith(built["commit"])), (name, built, head)
print(f"result files: package_version {version}, build_commit {built['commit']}{' (dirty)' if built['dirty'] else ''}")
EOF
log "ran the study (verdict exit status $status) and the console script"
