"""Studies that measure how fast discrete ResNets approach their continuous-depth limits."""

import sys as _sys

if _sys.argv[:1] == ["-m"]:  # imported by ``python -m validation.<study>`` while it locates the study: guard its imports
    from validation.core.signals import guard_start_up as _guard_start_up

    _guard_start_up()
    from validation.core.start_up import prepare_environment as _prepare_environment
    from validation.core.start_up import refuse_shadowing_files as _refuse_shadowing_files

    _refuse_shadowing_files()  # a limits.py in the current folder: one line, before anything imports limits
    _prepare_environment()
