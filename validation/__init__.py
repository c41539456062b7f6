"""Studies that measure how fast discrete ResNets approach their continuous-depth limits."""

import sys as _sys

#: every study, by the name of its module (``python -m validation.NAME``, ``validation.NAME.run``): the one list that
#: the tests, the benchmarks and the result schema's ``study`` read (the explorer is a page, not a study)
STUDIES: tuple[str, ...] = ("convergence", "ablation", "solvers", "gradients", "weak", "multilevel", "phase", "regimes",
                            "training", "figures")

if _sys.argv[:1] == ["-m"]:  # imported by ``python -m validation.<study>`` while it locates the study: guard its imports
    from validation.core.signals import guard_start_up as _guard_start_up

    _guard_start_up()
    from validation.core.start_up import prepare_environment as _prepare_environment
    from validation.core.start_up import refuse_shadowing_files as _refuse_shadowing_files

    _refuse_shadowing_files()  # a limits.py in the current folder: one line, before anything imports limits
    _prepare_environment()
