from validation.core.cli import run_command_line

from . import main

run_command_line(main)
