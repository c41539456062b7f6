"""``python -m validation.solvers``."""
from validation.core.cli import run_command_line

from .study import main

run_command_line(main)
