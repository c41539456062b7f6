"""``python -m validation.phase``."""
from validation.core.cli import run_command_line

from .study import main

run_command_line(main)
