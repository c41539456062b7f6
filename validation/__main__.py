"""``resnet-limits STUDY [ARGUMENTS …]`` (the console script a wheel installs) and ``python -m validation STUDY …``:
the study's own command line, as ``python -m validation.STUDY [ARGUMENTS …]`` runs it — the same flags, output and
exit status. ``python -m validation.STUDY`` stays the documented form; this is the same command by a shorter name.

    resnet-limits convergence --model res1
    resnet-limits explore --model res1 --out res1.html
    resnet-limits --help
"""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn, Sequence

from validation import STUDIES

#: what the dispatcher runs: every study, and the explorer (a page, not a study)
COMMANDS: tuple[str, ...] = (*STUDIES, "explore")

USAGE = ("usage: resnet-limits STUDY [ARGUMENTS ...]  (the same as: python -m validation.STUDY [ARGUMENTS ...])\n"
         f"STUDY: one of {', '.join(COMMANDS)}; resnet-limits STUDY --help explains its flags")


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run ``validation.STUDY``'s command line on the remaining arguments and exit with its status; a missing or
    unknown study is one line on stderr and exit status 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        raise SystemExit(0 if argv else 2)
    study, rest = argv[0], argv[1:]
    if study not in COMMANDS:
        print(f"resnet-limits: unknown study {study!r} (allowed: {', '.join(COMMANDS)})", file=sys.stderr)
        raise SystemExit(2)
    from validation.core.start_up import prepare_environment, refuse_shadowing_files

    refuse_shadowing_files()
    prepare_environment(f"validation.{study}")          # before torch's import, as python -m validation.STUDY does
    module = importlib.import_module(f"validation.{study}")
    sys.argv = [f"resnet-limits {study}", *rest]
    from validation.core.cli import run_command_line

    run_command_line(lambda: module.main(rest))


if __name__ == "__main__":
    main()
