"""The one command-line runner every study shares: parse → check → run → print → write.

A study module declares a :class:`Command` (its settings class, its ``run`` function and any flags of its
own) and its ``main`` is ``execute(COMMAND, argv)``. This module owns, once for all ten studies:

* the shared flags: ``--seed``, ``--dtype``, ``--device`` (from :class:`~validation.core.settings.CommonSettings`)
  and ``--threads``, ``--json``, ``--csv``, ``--plot``, ``--memory-mb``, ``--quiet``, ``--debug``; every
  other flag is generated from the study's settings fields, with their help text and defaults;
* the exit status: 0 PASS, 1 FAIL, 4 INCONCLUSIVE, 2 bad input (one line naming the value and the allowed range),
  3 an internal error (one line; the traceback only with ``--debug``), 130 interrupted (Ctrl-C),
  143 terminated (SIGTERM is handled as Ctrl-C is);
* the checks made before any computation: every setting, the output paths (the folder exists and is
  writable, the figure's suffix is one matplotlib writes), and the study's memory estimate against
  ``--memory-mb`` (default: the memory available on this machine);
* the outputs, written as a set (:func:`validation.core.results.write_outputs`): every file is rendered to a
  temporary file first and the set is renamed into place at the end, so an interrupted or failed run
  leaves the previous set untouched; the figure comes after the data files (JSON, CSV), so that a failure
  drawing it (exit 3) keeps the run's numbers.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import dataclasses
import errno
import gc
import os
import re
import textwrap
import shlex
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Protocol, Sequence


from limits.activations import ActivationError
from limits.fractional import FractionalNoiseError
from limits.pairs import PairError

from .results import FigureNotWritten, StudyResult, plan_outputs, write_outputs
from .runtime import memory_limits_mb, reuse_freed_memory
from .catalogue import Catalogue
from .settings import ALWAYS_APPLY, SettingsError, UsageError
from .signals import after_the_run

__all__ = ["Command", "execute", "estimate", "HelpFormatter", "BAD_INPUT", "printable_output"]


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM, so that it unwinds like Ctrl-C (KeyboardInterrupt)."""


EXIT_STATUS_HELP = ("exit status: 0 PASS, 1 FAIL (the verdict; also NaN/inf errors or a failed check), 4 INCONCLUSIVE (the "
               "interval straddles the margin's edge, or the rate stands on fewer than 3 depths: the sample count or "
               "depths that would settle it are printed), 2 bad input, "
               "3 internal error, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).")
#: the exit statuses in the short ``--help`` (``--help-all`` says what each means)
EXIT_STATUS_SHORT = ("exit status: 0 PASS, 1 FAIL, 4 INCONCLUSIVE, 2 bad input, 3 internal error, 130 / 143 "
                     "interrupted (--help-all: what each means).")

#: exceptions that mean "the input is bad" (exit status 2), wherever they are raised
BAD_INPUT = (SettingsError, UsageError, PairError, ActivationError, FractionalNoiseError)

THREADS_HELP = (
    "torch intra-op threads (the per-step tensors are small batched products that gain little from a second "
    "thread and lose 10–500× on a busy machine; raise it for wide networks or big batches)"
)


#: a line that starts an item of its own in a description: a bullet, a numbered step, or a command example
_ITEM_START = re.compile(r"^(\s*)([*\-•] |\d+\. |\(\w\) )")
_VERBATIM = re.compile(r"^\s*(python |\$ |>>> |pip |\.\./|[A-Z_]+=|# )")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Re-wraps the description and the epilog to the terminal's width (``COLUMNS``, as argparse reads it) while
    keeping their structure: paragraphs, bullets and numbered steps (continuation lines joined, hanging indent), and
    command lines verbatim (a command is never broken). Defaults are written into each help text by :func:`_help`."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for block in re.split(r"\n\s*\n", text.strip("\n")):
            items: list[tuple[str, str, str]] = []  # (first indent, hanging indent, text) or verbatim ("", "", line)
            for line in block.split("\n"):
                start = _ITEM_START.match(line)
                lead = len(line) - len(line.lstrip(" "))
                if _VERBATIM.match(line) or not line.strip():
                    items.append(("", "\0", line))
                elif start:
                    items.append((start.group(1), " " * len(start.group(0)), line.strip()))
                elif items and items[-1][1] != "\0" and lead >= len(items[-1][0]):
                    first, hanging, body = items[-1]
                    items[-1] = (first, hanging, body + " " + line.strip())
                else:
                    items.append((" " * lead, " " * lead, line.strip()))
            lines = []
            for first, hanging, body in items:
                if hanging == "\0":
                    lines.append(indent + body)
                else:
                    lines.append(textwrap.fill(body, width, initial_indent=indent + first,
                                               subsequent_indent=indent + hanging, break_on_hyphens=False,
                                               break_long_words=False))
            out.append("\n".join(lines))
        return "\n\n".join(out)


class ShortHelpFormatter(HelpFormatter):
    """The short ``--help``: each flag under its first name (aliases are in ``--help-all``), and where
    ``--flag VALUE`` would push the flag's help onto a line of its own, a short value name (``N`` for a count,
    ``X`` for a number, ``LIST``, ``NAME``: the action's ``short_metavar``)."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        flag = action.option_strings[0]
        metavar = self._metavar_formatter(action, action.dest.upper())(1)[0]
        if len(flag) + 1 + len(metavar) > self._max_help_position - 4:
            metavar = getattr(action, "short_metavar", metavar)
        return f"{flag} {metavar}"


def _short_metavar(field: dataclasses.Field) -> str:
    """A one-word value name from a settings field's type (for :class:`ShortHelpFormatter`)."""
    kind = str(field.type)
    for prefix, name in (("int", "N"), ("float", "X"), ("tuple", "LIST"), ("Path", "PATH")):
        if kind.startswith(prefix):
            return name
    return "NAME"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # a value that starts with '-' and reads as a number (-4,8, -1e-8, -.5, -inf) is a value, not a flag, so
        # that its range check names it (argparse itself only accepts plain '-3' and '-0.5'; Python 3.13 does this)
        self._negative_number_matcher = re.compile(r"^-(\.?\d|inf(inity)?$|nan$)", re.IGNORECASE)

    def error(self, message: str) -> None:  # one line, exit status 2 (argparse prints the usage too)
        print(f"error: {one_line(message)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


#: every character that ends a line for ``str.splitlines`` (a terminal, a log reader), escaped as ``repr`` writes it
_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    """``text`` as one line: each line break in it (a newline in a path given to --json or --data-dir, say) written
    as ``repr`` writes it (``\\n``), so that an error stays the one line the exit status 2 promises."""
    return text.translate(_LINE_BREAKS)


@dataclass(frozen=True)
class Command:
    """A study's command line.

    Attributes:
        prog: the command as typed, e.g. ``python -m validation.convergence``.
        description: the ``--help`` text (the study's purpose and what PASS/FAIL mean).
        epilog: examples.
        settings: the study's settings dataclass (its fields become flags).
        run: ``run(*positional, settings, progress=..., threads=..., command_line=...)`` returning a
            :class:`StudyResult`; it runs with ``threads`` torch threads and records them.
        positional: the names of flags passed to ``run`` before the settings (``("model",)`` for
            ``--model``); they are declared by ``add_arguments``.
        add_arguments: adds the study's own flags (e.g. ``--model``, ``--list``, ``--preset``) to the
            "model" section of ``--help`` (it receives that argument group).
        listing: if given, ``--list`` prints ``listing()`` and exits 0.
        estimate_mb: ``estimate_mb(*positional, settings)``: the estimated peak memory of the run in MiB,
            checked against ``--memory-mb`` before anything is computed.
        estimate_seconds: ``estimate_seconds(*positional, settings)``: a rough estimate of the run time (as
            measured on a 2-core machine, docs/design.md); a run estimated at over 10 minutes starts with a
            warning.
        outputs: which of ``json``, ``csv``, ``plot`` the study writes.
        csv_help: the ``--help`` of ``--csv``: what the study's CSV holds (None: its per-depth table).
        catalogue: for a study of a catalogue (figures, presets, experiments), the catalogue its first positional
            flag names an entry of: the short ``--help`` then shows the settings every entry takes, or with
            ``--figure NAME --help`` those NAME takes (:meth:`validation.core.catalogue.Entry.takes`).
    """

    prog: str
    description: str
    epilog: str
    settings: type
    run: Callable[..., StudyResult]
    positional: tuple[str, ...] = ()
    add_arguments: Callable[[ArgumentGroup], None] | None = None
    listing: Callable[[], str] | None = None
    estimate_mb: Callable[..., float] | None = None
    estimate_seconds: Callable[..., float] | None = None
    outputs: tuple[str, ...] = ("json", "csv", "plot")
    catalogue: Catalogue | None = None
    csv_help: str | None = None


# ------------------------------------------------------------------------------------------------ parser
def _flag(field: dataclasses.Field) -> str:
    return field.metadata.get("flag") or "--" + field.name.replace("_", "-")


#: a help text longer than this is cut to its first clause in the short ``--help`` (``--help-all`` shows it whole)
BRIEF_CHARS = 64


def brief(text: str, limit: int = BRIEF_CHARS, start: int = 15, marks: tuple[str, ...] | None = None) -> str:
    """The first clause of a text longer than ``limit``, for the short ``--help``: up to the first of ``marks`` past
    its ``start``-th character, then " …" (an open parenthesis cut off is not left open). A text with no such mark
    is one clause and is shown whole: a short description is never cut mid-sentence, a default never inside its
    value (a value like ``1e-06,1e-07,…`` or ``network,milstein_levy_area``)."""
    if len(text) <= limit:
        return text
    cuts = [i for i in (text.find(mark, start) for mark in (CLAUSE_MARKS if marks is None else marks)) if i > 0]
    if not cuts:
        return text
    return text[:min(cuts)].rstrip(" ,;:") + " …"


def _help(field: dataclasses.Field, short: bool = False, stated: str | None = None) -> str:
    """A flag's help and its default: ``stated`` where the catalogue states it from its entries, else the field's
    ``default_text``, else its default."""
    meta = field.metadata
    if meta.get("action") in ("store_true", "store_false"):
        return brief(meta["help"]) if short else meta["help"]
    text = stated if stated is not None else meta.get("default_text")
    if text is None:
        default = field.default
        if isinstance(default, tuple):
            default = ",".join(map(str, default)) if default else "none"
        text = "none" if default is None else str(default)
    if short:
        text = brief_default(text)
    return f"{brief(meta['help']) if short else meta['help']} (default: {text})"


#: a stated default longer than this is cut after its value in the short ``--help``
BRIEF_DEFAULT_CHARS = 24
#: where a stated default's value ends: "none: h_0 = x …", "8,32,128,512; chizat-feature-speed …", "1e-10 in
#: float64, 1e-6 in float32" (a comma ends a value only after a number)
DEFAULT_MARKS = (": ", "; ", " (", ", ")


def brief_default(text: str) -> str:
    """A stated default as the short ``--help`` shows it: up to the end of its first value (:data:`DEFAULT_MARKS`),
    then " …". A default that names no value before its first mark ("the model's") keeps the value that follows —
    "the model's: 0.3 for cohen-ode …", "the model's; SDE 4:256 …", "the model's; none …" — unless what follows
    names an entry, not a value ("the experiment's; cohen-scaling: 32 …": the entry's ``--help`` shows it).
    Never cut inside a value."""
    if len(text) <= BRIEF_DEFAULT_CHARS:
        return text
    cuts = sorted(i for mark in DEFAULT_MARKS for i in _find_all(text, mark) if i >= 1)
    head_start = 0
    for cut in cuts:
        head = text[:cut]
        if head.startswith("the ") and head.endswith("'s") and head_start == 0:   # where the value is, not what
            following = text[cut + 2:]
            first = following.split(": ")[0].split("; ")[0].split(", ")[0]
            if not (any(c.isdigit() for c in first) or first == "none"):
                return head + " …"
            head_start = cut + 2
            continue
        if text.startswith(", ", cut) and not any(c.isdigit() for c in text[head_start:cut]):
            continue                                      # a comma inside words, not after a value
        return head.rstrip(" ,;:") + " …"
    return text


def _find_all(text: str, mark: str) -> list[int]:
    found, i = [], text.find(mark)
    while i >= 0:
        found.append(i)
        i = text.find(mark, i + 1)
    return found


#: where a flag's description's first clause ends
CLAUSE_MARKS = ("; ", " (", ". ", ": ")


def _examples(epilog: str) -> str:
    """The short ``--help``'s epilog: up to the end of its ``examples:`` block (the notes after it are in
    ``--help-all``)."""
    paragraphs = epilog.strip("\n").split("\n\n")
    ends = [i for i, paragraph in enumerate(paragraphs) if paragraph.lstrip().startswith("examples:")]
    return "\n\n".join(paragraphs[:ends[0] + 1]) if ends else epilog


def _plain(text: str) -> str:
    """Docstring markup made plain for a terminal: ``:func:`x``` and ``x`` become x."""
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")


#: the order of the ``--help`` sections (a study's own sections come before "run and output")
_GROUP_ORDER = ("model", "preset", "study", "fit and verdict", "checks", "check")


class _HelpAll(argparse.Action):
    """``--help-all``: the full help (every flag's whole text and the whole description), then exit 0."""

    def __init__(self, option_strings: Sequence[str], command: "Command", dest: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)
        self.command = command

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        build_parser(self.command, short=False).print_help()
        parser.exit()


def build_parser(command: Command, *, short: bool = True, argv: Sequence[str] | None = None
                 ) -> argparse.ArgumentParser:
    """The parser: the study's own flags, its settings fields as flags, and the shared run flags, in sections
    ordered model → study → fit → run and output. Its ``--help`` is the short form (the description's first
    paragraph, each flag's first clause: about 100 lines at 80 columns); ``--help-all`` (``short=False``) prints
    every text whole. For a catalogue study (``command.catalogue``) the short form lists only the settings every entry
    takes, or those of the entry that ``argv`` names (``--figure NAME --help``); every flag still parses."""
    description = _plain(command.description)
    shown = _shown_settings(command, argv) if short else None
    if short:
        first = description.strip("\n").split("\n\n")
        description = "\n\n".join(first[:2] if len(first) > 1 and first[1].lstrip().startswith("python ") else first[:1])
        if description.rstrip().endswith(":"):  # a list follows in the whole text
            description = description.rstrip().rstrip(":") + " (listed in --help-all)."
        elif not description.rstrip().endswith((".", ")", "!")):
            description = description.rstrip() + " …"
        description += ("\n\nThis is the short help: each flag's first clause. " + command.prog
                        + " --help-all prints every text whole.")
        if shown is not None:
            flag, name = _chosen_entry(command, argv)
            description += (f" Shown: the settings {name} takes." if name is not None else
                            f" Shown: the settings every {flag[2:]} takes; {command.prog} {flag} NAME --help "
                            f"lists those of NAME.")
    parser = _Parser(prog=command.prog, usage="%(prog)s [options]", description=description,
                     epilog=(_examples(command.epilog) if short else command.epilog).rstrip("\n") + "\n\n"
                     + (EXIT_STATUS_SHORT if short else EXIT_STATUS_HELP),
                     formatter_class=ShortHelpFormatter if short else HelpFormatter)
    parser.add_argument("--help-all", action=_HelpAll, command=command,
                        help="show the full help (every flag's whole text) and exit")
    fields = [f for f in dataclasses.fields(command.settings) if f.metadata.get("cli", False)]
    seen = list(dict.fromkeys(["model", *(f.metadata["group"] for f in fields), "run and output"]))
    names = sorted(seen, key=lambda g: (g == "run and output",
                                        _GROUP_ORDER.index(g) if g in _GROUP_ORDER else 50 + seen.index(g)))
    used = {f.metadata["group"] for f in fields} | {"run and output"}
    if command.add_arguments is not None:
        used.add("model")              # a section is made only where a flag goes: none is left empty
    groups = {name: _RecordingGroup(parser.add_argument_group(name)) for name in names if name in used}
    if command.add_arguments is not None:
        command.add_arguments(groups["model"])
    chosen = _chosen_entry(command, argv)[1] if command.catalogue is not None and command.positional else None
    for field in fields:
        meta = field.metadata
        stated = (None if command.catalogue is None else
                  command.catalogue.stated_default(field.name, field.default, meta.get("default_text"), chosen))
        kwargs: dict[str, Any] = {"dest": field.name, "default": argparse.SUPPRESS,
                                  "help": _help(field, short, stated) if shown is None or field.name in shown
                                  else argparse.SUPPRESS}
        action = meta.get("action")
        if action in ("store_true", "store_false"):
            kwargs["action"] = action
        else:
            if meta.get("parse") is not None:
                kwargs["type"] = _argparse_type(meta["parse"])
            if meta.get("choices"):
                kwargs["choices"] = meta["choices"]
            if meta.get("metavar"):
                kwargs["metavar"] = meta["metavar"]
            if action == "append":
                kwargs["action"] = "append"
        added = groups[meta["group"]].add_argument(_flag(field), *meta.get("aliases", ()), **kwargs)
        added.short_metavar = _short_metavar(field)  # type: ignore[attr-defined]
    run = groups["run and output"]
    cut = brief if short else (lambda text: text)
    run.add_argument("--threads", type=_argparse_type(_threads), default=1, help=cut(THREADS_HELP) + " (default: 1)")
    outputs = {"json": "write the result (settings, numbers, verdict, run metadata) as JSON to this file",
               "csv": command.csv_help or "write the per-depth table as CSV to this file",
               "plot": "write the figure to this file (.png, .pdf, .svg; no suffix: .png is added)"}
    for key in command.outputs:
        run.add_argument(f"--{key}", type=Path, default=None, metavar="PATH", help=cut(outputs[key]))
    run.add_argument("--memory-mb", type=_argparse_type(_positive_float), default=None, metavar="MIB",
                     help="refuse to start above this estimated peak memory, in MiB (default: the memory available"
                          + (")" if short else " on this machine)"))
    run.add_argument("--quiet", action="store_true", help=cut("no progress bars (none either when stderr is not a "
                                                              "terminal, or with TQDM_DISABLE=1)"))
    run.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    for action in (action for group in groups.values() for action in group.actions):
        # a choice flag shows one name, its help the choices (once, not twice)
        if action.help == argparse.SUPPRESS:
            continue
        if action.choices is not None and action.metavar is None and action.option_strings:
            action.metavar = action.dest.upper()
            listed = [str(c) for c in action.choices]
            if action.help and not all(c in action.help for c in listed):
                action.help += " (one of: " + ", ".join(listed) + ")"
    return parser


class ArgumentGroup(Protocol):
    """What a study's ``add_arguments`` receives: a section of the parser that takes flags
    (:meth:`argparse.ArgumentParser.add_argument`'s arguments), named without argparse's private class."""

    def add_argument(self, *names: str, **options: Any) -> argparse.Action: ...


class _RecordingGroup:
    """A section of the parser (argparse's ``add_argument_group``) that keeps the actions added to it, so that the
    parser is finished from them rather than from argparse's private lists."""

    def __init__(self, group: Any) -> None:
        self.group = group
        self.actions: list[argparse.Action] = []

    def add_argument(self, *names: str, **options: Any) -> argparse.Action:
        action = self.group.add_argument(*names, **options)
        self.actions.append(action)
        return action


def _chosen_entry(command: Command, argv: Sequence[str] | None) -> tuple[str, str | None]:
    """(the catalogue's flag, e.g. ``--figure``; the entry ``argv`` names with it, when it is a known one)."""
    flag = "--" + command.positional[0].replace("_", "-")
    words = list(sys.argv[1:] if argv is None else argv)
    named = None
    for i, word in enumerate(words):
        if word == flag and i + 1 < len(words):
            named = words[i + 1]
        elif word.startswith(flag + "="):
            named = word.split("=", 1)[1]
    known = command.catalogue is not None and named is not None and named in command.catalogue
    return flag, named if known else None


def _shown_settings(command: Command, argv: Sequence[str] | None) -> frozenset[str] | None:
    """The settings the short ``--help`` lists for a catalogue study (None: every one): those the named entry takes,
    or those every entry takes, and the ones that always apply (seed, dtype, device)."""
    catalogue = command.catalogue
    if catalogue is None or not command.positional:
        return None
    _, name = _chosen_entry(command, argv)
    names = [name] if name is not None else list(catalogue)
    return frozenset.intersection(*(catalogue[entry].takes() for entry in names)) | frozenset(ALWAYS_APPLY)


#: what a value of a plain ``int``/``float`` flag must be, for the message when it is not
_SYNTAX = {int: "an integer", float: "a number"}


def _argparse_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except OverflowError:  # float('1e999') is inf, but int(float) of such a value overflows
            raise argparse.ArgumentTypeError(f"{text!r} is out of range") from None
        except (ValueError, SettingsError) as exc:
            if parse in _SYNTAX:  # int('abc') says "invalid literal for int() with base 10: 'abc'"
                raise argparse.ArgumentTypeError(f"{text!r} is not {_SYNTAX[parse]}") from None
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def _threads(text: str) -> int:
    """1 to the number of CPU cores (more threads than cores only slows torch down, and an absurd count fails
    to start them)."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None
    cores = os.cpu_count() or 1
    if not 1 <= value <= cores:
        raise ValueError(f"{value} is out of range (must be ≥ 1 and ≤ {cores}, the CPU cores here)")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{text} is out of range (must be a finite number > 0)")
    return value


def settings_from_args(command: Command, args: argparse.Namespace) -> Any:
    """The settings object from the parsed flags (only the flags given override the defaults)."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(command.settings) if hasattr(args, f.name)}
    for field in dataclasses.fields(command.settings):
        if field.metadata.get("action") == "append" and field.name in given:
            given[field.name] = dict(given[field.name])  # NAME=VALUE pairs
    return command.settings(**given)


def estimate(command: Command, argv: Sequence[str]) -> tuple[float, float]:
    """(peak memory in MiB, seconds) that ``command`` estimates for the command line ``argv`` before anything runs —
    the numbers its memory check and long-run warning read (0 where the study does not estimate). Bad input raises
    what the command line would report in one line (``SettingsError``, ``UsageError``, ``SystemExit`` from
    argparse). ``benchmarks/bench_memory.py`` measures each study's peak against it."""
    args = build_parser(command, argv=argv).parse_args(list(argv))
    settings = settings_from_args(command, args)
    positional = [getattr(args, name) for name in command.positional]
    mb = command.estimate_mb(*positional, settings) if command.estimate_mb is not None else 0.0
    seconds = command.estimate_seconds(*positional, settings) if command.estimate_seconds is not None else 0.0
    return float(mb), float(seconds)


# ------------------------------------------------------------------------------------------------ runtime
@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    def handler(signum, frame):  # noqa: ARG001
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _ctrl_c_as_interrupt() -> None:
    """Ctrl-C raises KeyboardInterrupt during the run (Python's own handler, replacing the start-up's of
    :mod:`validation.core.signals`), so that the run unwinds through ``execute``'s handlers."""
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: leave signals alone
        pass


def printable_output() -> None:
    """Make the standard streams write what their encoding cannot as escapes (``\\u2016``) rather than fail: the
    tables, the help and the error lines use characters beyond ASCII (‖, −, ≥, β, …), and with ``PYTHONIOENCODING=ascii``
    (or a Latin-1 terminal) printing the table raised UnicodeEncodeError after the run, before its files were written.
    A stream in a UTF encoding, or whose error handler the user chose (``PYTHONIOENCODING=ascii:replace``), is left
    alone. Called first by every command line (:func:`execute`, ``validation.explore.main``)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            utf = codecs.lookup(encoding).name.startswith("utf")
        except LookupError:
            utf = False
        if not utf and getattr(stream, "errors", "strict") == "strict" and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):  # a closed or detached stream: nothing to print on
                stream.reconfigure(errors="backslashreplace")


def _command_line(command: Command, argv: Sequence[str] | None) -> str:
    words = list(sys.argv[1:] if argv is None else argv)
    return " ".join([command.prog, shlex.join(words)]).strip()


def run_command_line(main: Callable[[], int]) -> NoReturn:
    """The whole process of a command line (its ``if __name__ == "__main__":``): ``main()``, then exit with its status
    (:func:`leave`), with every object alive frozen out of the garbage collector's sight (:func:`gc.freeze`) before the
    run — the imports'.

    torch's import leaves some 10⁵ objects tracked by the collector. Each full collection walks all of them (and the
    interpreter's teardown walked them again: 0.4 s of a 1.6 s ``python -c "import torch"``, before the process
    left without it). Frozen, they are skipped. They are modules, functions and classes that live to the exit anyway,
    so nothing is kept that would have been freed; and a worker forked afterwards (:mod:`validation.core.workers`) shares their pages
    instead of copying them when the collector would have touched them (the use :func:`gc.freeze` was made for).
    Only a command line's process freezes and leaves this way: ``main(argv)`` called from Python (the tests, a
    notebook) does neither.
    """
    gc.freeze()
    code = main()
    after_the_run()  # the outputs are written: a signal in the teardown no longer says otherwise (core.signals)
    leave(code)


def leave(code: int) -> NoReturn:
    """End a command line's process with ``code`` once its outputs are written: Python's exit handlers run (``atexit``:
    logging's flush, the clean-up of multiprocessing and of temporary files), the standard streams are flushed, and
    the process ends (``os._exit``) without tearing the interpreter down — freeing every module's objects and
    torch's C++ statics, which changes nothing a finished run left and took 0.2 s of the default study's 4 s
    (``python -c "import torch"``: 1.41 s whole, 1.07 s ending this way)."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``| head``) or stream: nothing more can be said on it
            pass
    os._exit(code)


def execute(command: Command, argv: Sequence[str] | None = None) -> int:
    """Run ``command`` on ``argv`` (default ``sys.argv[1:]``) and return the exit status (see module doc)."""
    printable_output()
    parser = build_parser(command, argv=argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a syntax error already reported in one line (2)
        return int(exc.code or 0)
    if command.listing is not None and getattr(args, "list", False):
        print(command.listing())
        return 0
    debug = args.debug
    reuse_freed_memory()
    _ctrl_c_as_interrupt()
    try:
        with _sigterm_as_interrupt():
            settings = settings_from_args(command, args)
            positional = [getattr(args, name) for name in command.positional]
            plan = plan_outputs({key: getattr(args, key) for key in command.outputs})
            _check_memory(command, positional, settings, args.memory_mb)
            # the study sets torch's threads for its run (and records them): passed on, never overridden by its default
            result = command.run(*positional, settings, progress=_show_progress(args.quiet), threads=args.threads,
                                 command_line=_command_line(command, argv))
            print(result.table())
            for path in write_outputs(result, plan):
                print(f"wrote {path}")
            return result.exit_code
    except BAD_INPUT as exc:
        print(f"error: {one_line(_input_message(exc, command, argv))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: no output was written", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated: no output was written", file=sys.stderr)
        return 143
    except FigureNotWritten as exc:  # the run's numbers are in the data files written first: say which
        for path in exc.written:
            print(f"wrote {path}")
        print(f"error: {one_line(str(exc))}" + ("" if debug else " (run with --debug for the traceback)"),
              file=sys.stderr)
        if debug:
            traceback.print_exc()
        return 3
    except SystemExit as exc:  # raised by code the run called (a user's pair or model): never a verdict
        print(f"internal error: {forged_exit(exc)}", file=sys.stderr)
        return 3
    except Exception as exc:  # an internal error: one line, never confused with a FAIL (exit 1)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            where = f" writing {exc.filename}" if exc.filename else ""
            print(f"error: the disk is full{where} ({exc.strerror}); no output was written and older files are as "
                  "they were: free some space, or write elsewhere (--json, --csv, --plot; training: "
                  "--checkpoint-dir)", file=sys.stderr)
        elif isinstance(exc, MemoryError) or _allocation_failure(exc):
            said = "" if isinstance(exc, MemoryError) else f": {str(exc).splitlines()[0][:200]}"
            print(f"error: out of memory{said} (lower --samples, --width or the depths; see --memory-mb)",
                  file=sys.stderr)
        else:
            print(f"internal error: {type(exc).__name__}: {exc}"
                  + ("" if debug else " (run with --debug for the traceback)"), file=sys.stderr)
        if debug:
            traceback.print_exc()
        return 3


def forged_exit(exc: SystemExit) -> str:
    """What to say of a ``SystemExit`` raised during a run — by the code of a user's pair or model, since the
    package's own code never exits while computing: where it was raised (the innermost frame's file and line) and
    that a run's exit status is its verdict's, which no model may set. The command then ends with exit 3."""
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    where = (f"{frame.tb_frame.f_code.co_filename}, line {frame.tb_lineno}" if frame is not None else "unknown code")
    if exc.__cause__ is not None:   # raised in a worker process: its traceback comes as the text of the cause
        frames = re.findall(r'File "([^"]+)", line (\d+)', str(exc.__cause__))
        if frames:
            where = f"{frames[-1][0]}, line {frames[-1][1]} (in a worker process)"
    return (f"sys.exit({exc.code!r}) was called during the run, in {where}; the exit status is the verdict's "
            "and a model cannot set it: no output was written")


#: what torch's allocators say when an allocation fails (CPU: "DefaultCPUAllocator: can't allocate memory: you
#: tried to allocate … bytes"; CUDA: torch.OutOfMemoryError, "CUDA out of memory. Tried to allocate …")
_ALLOCATION_FAILURE = re.compile(r"can't allocate memory|out of memory|DefaultCPUAllocator|Tried to allocate",
                                 re.IGNORECASE)


def _allocation_failure(exc: BaseException) -> bool:
    """Is ``exc`` a failed allocation that torch reports as a RuntimeError (CPU) or its OutOfMemoryError subclass
    (CUDA)? Python's own MemoryError is told apart by type."""
    return isinstance(exc, RuntimeError) and bool(_ALLOCATION_FAILURE.search(str(exc)))


def _show_progress(quiet: bool) -> bool:
    """Progress bars only for a person watching: not with ``--quiet``, not when stderr is not a terminal (a
    redirected log would fill with cursor-control codes), not when ``TQDM_DISABLE`` is set to a true value."""
    disabled = os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false", "no")
    return not quiet and not disabled and sys.stderr.isatty()


def _input_message(exc: BaseException, command: Command, argv: Sequence[str] | None) -> str:
    """The one line of a bad input; a setting is named by the flag as typed (an alias such as --bootstrap too)."""
    if not isinstance(exc, SettingsError):
        return str(exc)
    shown = f"--{exc.name.replace('_', '-')}"
    fields = {f.name: f for f in dataclasses.fields(command.settings)}
    if exc.name in fields:
        typed = [word.split("=", 1)[0] for word in (sys.argv[1:] if argv is None else argv)]
        options = [_flag(fields[exc.name]), *fields[exc.name].metadata.get("aliases", ())]
        shown = next((option for option in reversed(typed) if option in options), options[0])
    return f"{shown}: {exc.message}"


#: a run estimated to take longer than this starts with a warning
LONG_RUN_SECONDS = 600.0


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds:.0f} s"


def _check_memory(command: Command, positional: list[Any], settings: Any, limit_mb: float | None) -> None:
    if command.estimate_mb is None:
        return
    needed = command.estimate_mb(*positional, settings)
    if limit_mb is None:
        limits = memory_limits_mb()
        which = min(limits, key=limits.__getitem__)
        limit = limits[which]
    else:
        limit = limit_mb
    if needed > limit:
        source = (f"--memory-mb {limit_mb:g}" if limit_mb is not None else
                  f"the {limit:.0f} MiB available here" + ("" if which == "machine" else f" (the process's {which} limit)"))
        raise UsageError(f"this run needs about {needed:,.0f} MiB of memory, more than {source}; lower the sizes "
                         "(--samples, --width, depths) or raise --memory-mb")
    if command.estimate_seconds is not None:  # a run that will start, but take long: say so first
        seconds = command.estimate_seconds(*positional, settings)
        if seconds > LONG_RUN_SECONDS:
            print(f"warning: this run is estimated to take about {_duration(seconds)} on a machine like the package's "
                  "2-core reference (Ctrl-C stops it cleanly, writing nothing)", file=sys.stderr)

