"""The command line: bad input gets one line naming the value and exit status 2; results are written."""

import os
import re
import json
import subprocess
import sys
from typing import Any

import pytest

from validation import STUDIES

from validation.convergence import main


def run(*argv):
    return subprocess.run([sys.executable, "-m", "validation.convergence", *argv], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--depths", "4,12,16"], "12 is not a power of two"),
        (["--depths", "16,8"], "strictly increasing"),
        (["--depths", "4:4"], "low to high"),
        (["--depths", "8", "--reference-steps", "64"], "at least two depths"),
        (["--depths", "4,8", "--reference-steps", "8"], "finer than the deepest depth 8"),
        (["--depths", "4,8", "--reference-steps", "48"], "power of two"),
        (["--width", "0"], "must be ≥ 1"),
        (["--samples", "1"], "must be ≥ 2"),
        (["--model", "res9"], "known models: "),
        (["--activation", "sigmoidish"], "unknown activation 'sigmoidish'; allowed"),
        (["--weight-var", "-1"], "-1.0 is out of range (must be ≥ 1e-06)"),
        (["--tolerance", "0"], "must be > 0"),
        (["--model", "res1-ode", "--reference-steps", "64"], "SDE pairs only"),
        (["--fit-from", "512"], "fewer than two"),
        (["--set", "oops"], "NAME=VALUE"),
        (["--set", "foo=1"], "no setting 'foo'"),
        (["--device", "tpu"], "'tpu' unknown"),
        (["--model", "res1-ode", "--dtype", "float32", "--rtol", "1e-9"], "below what float32 can resolve"),
    ],
)
def test_bad_input_one_line_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err


def test_end_to_end_small_run_writes_json_csv_plot(tmp_path):
    out = run("--model", "res1", "--depths", "2:16", "--samples", "40", "--width", "3", "--reference-steps", "256",
              "--fit-from", "1", "--bootstrap", "200", "--quiet", "--seed", "3",
              "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv"), "--plot", str(tmp_path / "r.png"))
    assert out.returncode in (0, 1, 4), out.stderr
    assert "verdict:" in out.stdout and "local slope" in out.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert {"study", "schema_version", "settings", "result", "run"} == set(data)
    result, info = data["result"], data["run"]
    for key in ("model", "depths", "fits", "theory", "verdict"):
        assert key in result
    for key in ("seed", "dtype", "device", "versions", "command", "wall_time_s", "threads"):
        assert key in info
    assert data["settings"]["samples"] == 40 and data["settings"]["width"] == 3
    assert result["verdict"] == {0: "PASS", 1: "FAIL", 4: "INCONCLUSIVE"}[out.returncode]
    assert result["verdict_check"]["verdict"] == result["verdict"]
    assert info["versions"]["torchsde"] and info["seed"] == 3 and info["dtype"] == "float64"
    assert info["command"].startswith("python -m validation.convergence --model res1")
    fit = result["fits"]["rms"]
    assert fit["ci"][0] <= fit["rate"] <= fit["ci"][1]
    assert (tmp_path / "r.csv").read_text().startswith("depth,rms_error")
    assert (tmp_path / "r.png").stat().st_size > 10_000


def test_help_explains_every_flag():
    out = run("--help")
    assert out.returncode == 0
    for flag in ("--model", "--depths", "--samples", "--width", "--seed", "--activation", "--weight-var", "--dtype",
                 "--device", "--reference-steps", "--json", "--plot", "--tolerance", "exit status"):
        assert flag in out.stdout


def test_nan_errors_are_reported_not_fitted(capsys):
    # s² = 1e6 with identity σ overflows float32 quickly: the run must say so and FAIL, not fit through inf
    code = main(["--model", "res1", "--activation", "identity", "--weight-var", "1e30", "--dtype", "float32",
                 "--depths", "2,4,8", "--samples", "8", "--width", "3", "--reference-steps", "64", "--quiet",
                 "--fit-from", "1", "--bootstrap", "100"])
    out = capsys.readouterr().out
    assert code == 1
    assert "NaN/inf" in out


def test_progress_bars_only_for_a_terminal(monkeypatch):
    """No progress bar into a redirected stderr (a log would fill with cursor-control codes), none with --quiet or
    TQDM_DISABLE, and one on a terminal."""
    import sys as _sys

    from validation.core.cli import _show_progress

    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(_sys, "stderr", Terminal())
    assert _show_progress(False) and not _show_progress(True)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert not _show_progress(False)
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert _show_progress(False)
    monkeypatch.setattr(_sys, "stderr", open(os.devnull, "w"))
    assert not _show_progress(False)


STUDY_MODULES = STUDIES


@pytest.mark.parametrize("name", STUDY_MODULES)
def test_help_carries_no_version_history(name, capsys):
    """--help describes the flags as they are; what changed between versions is the changelog's (issue 45)."""
    import importlib
    import re

    module = importlib.import_module(f"validation.{name}")
    try:
        code = module.main(["--help"])
    except SystemExit as stop:
        code = stop.code
    assert code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert not re.search(r"\b(before|as in|since|until) (version )?\d+\.\d+", text), re.findall(
        r".{60}\b(?:before|as in|since|until) (?:version )?\d+\.\d+.{20}", text)


def _help_at_80_columns(name, capsys, monkeypatch) -> str:
    """What ``python -m validation.NAME --help`` prints at COLUMNS=80."""
    monkeypatch.setenv("COLUMNS", "80")
    return _help_text(name, "--help", capsys)


@pytest.mark.parametrize("name", STUDY_MODULES)
def test_help_wraps_to_the_terminal_width(name, capsys, monkeypatch):
    """At COLUMNS=80 every --help line fits, but command examples (never broken) and argparse's own choice lists."""
    lines = _help_at_80_columns(name, capsys, monkeypatch).split("\n")
    long = [line for line in lines if len(line) > 80 and not line.strip().startswith(("python ", "{", "--", "[", "usage"))]
    assert not long, long[:3]


@pytest.mark.parametrize("name", STUDY_MODULES)
def test_the_short_help_is_at_most_100_lines_at_80_columns(name, capsys, monkeypatch):
    """Issue 45: the short --help of every study fits in about a screen (100 lines at COLUMNS=80), ends its
    description on a whole sentence and cuts no flag's text inside a word."""
    text = _help_at_80_columns(name, capsys, monkeypatch)
    assert len(text.rstrip("\n").split("\n")) <= 100
    assert not re.search(r"\w…", text), re.findall(r".{30}\w….{10}", text)


@pytest.mark.parametrize("message, expected", [
    ("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate "
     "53687091200 bytes. Error code 12 (Cannot allocate memory)", "error: out of memory: "),
    ("CUDA out of memory. Tried to allocate 2.00 GiB", "error: out of memory: "),
    ("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "internal error: RuntimeError: "),
])
def test_a_torch_allocation_failure_is_reported_as_out_of_memory(message, expected, capsys, monkeypatch):
    """torch reports a failed allocation as a RuntimeError; it gets the out-of-memory line (exit 3, with what to
    lower), not "internal error" — and any other RuntimeError stays an internal error (issue 46)."""
    import dataclasses

    from validation import convergence
    from validation.core import cli

    def failing_run(*args, **kwargs):
        raise RuntimeError(message)

    command = dataclasses.replace(convergence.COMMAND, run=failing_run)
    assert cli.execute(command, ["--model", "res1", "--samples", "10", "--depths", "4,8,16", "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(expected), err
    assert ("lower --samples" in err) == expected.startswith("error: out of memory")


def test_a_full_disk_is_said_in_one_line_and_leaves_the_old_outputs(tmp_path, capsys, monkeypatch):
    """Issue 46: the disk filling up while the outputs are written (ENOSPC) gives one line that says so and what to do
    (exit 3), no traceback; no temporary file is left and an older output is as it was."""
    import errno
    import os

    from validation.convergence import main
    from validation.core import results

    old = tmp_path / "res1.json"
    old.write_text("{}")

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results.os, "fsync", full)
    argv = ["--model", "res1", "--samples", "20", "--depths", "4,8,16", "--quiet", "--json", str(old),
            "--plot", str(tmp_path / "res1.png")]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: the disk is full") and "No space left on device" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert old.read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == ["res1.json"]


def test_the_memory_check_reads_the_process_limits(tmp_path, monkeypatch, capsys):
    """A run that fits the machine but not the process's own limit (RLIMIT_AS, a cgroup) is refused before it starts
    (exit 2, naming the limit), not left to die after allocating (issue 46)."""
    import resource

    from validation.core import runtime
    from validation.convergence import main

    # cgroup v2 and v1 files, read from a given root
    (tmp_path / "memory.max").write_text(str(3 << 30))
    (tmp_path / "memory.current").write_text(str(1 << 30))
    assert runtime._cgroup_free_mb(str(tmp_path)) == 2048
    (tmp_path / "memory.max").write_text("max")
    v1 = tmp_path / "memory"
    v1.mkdir()
    (v1 / "memory.limit_in_bytes").write_text(str(9223372036854771712))   # v1's "no limit"
    (v1 / "memory.usage_in_bytes").write_text(str(1 << 30))
    assert runtime._cgroup_free_mb(str(tmp_path)) is None
    (v1 / "memory.limit_in_bytes").write_text(str(5 << 30))
    assert runtime._cgroup_free_mb(str(tmp_path)) == 4096

    # an address-space limit just above what is mapped: nearly nothing left
    mapped = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize:"))
    monkeypatch.setattr(resource, "getrlimit", lambda which: (mapped + (64 << 20), resource.RLIM_INFINITY))
    limits = runtime.memory_limits_mb()
    assert "address space" in limits and limits["address space"] <= 64 + 1
    assert runtime.available_memory_mb() == min(limits.values())
    assert main(["--model", "res1", "--samples", "20000", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "address space limit" in err and "MiB available here" in err, err


def test_levy_areas_count_in_the_solver_studys_memory_estimate(capsys):
    """A scheme that reads Lévy areas records m(m − 1)/2 of them per step (m = d² + d): at width 64 the run needs
    terabytes and is refused before it starts (exit 2; it used to exit 3 after failing to allocate 53.7 GB); the
    README's width-2 run is estimated within 25 % of its measured peak at 2000 paths, 4172 MiB
    (``python benchmarks/bench_memory.py --only solvers-levy-areas``; issue 46)."""
    from validation.solvers import study as solvers

    assert solvers.main(["--model", "res1", "--schemes", "euler,milstein_levy_area", "--samples", "50",
                         "--depths", "4,8,16", "--width", "64", "--quiet"]) == 2
    assert "this run needs about" in capsys.readouterr().err
    readme = solvers.SolversSettings(width=2, schemes=("euler", "milstein_levy_area"), samples=2000)
    assert abs(solvers.estimate_mb("res1", readme) / 4172 - 1) <= 0.25


def test_settings_are_frozen_once_built():
    """Settings normalise their fields while they are built, and never change afterwards: a changed setting is a
    new object (before, ``check`` could change a field of a "frozen" object at any time)."""
    import dataclasses

    from validation.convergence import ConvergenceSettings

    settings = ConvergenceSettings(depths="4:16", seed=3)
    assert settings.depths == (4, 8, 16)                        # normalised while built
    with pytest.raises(dataclasses.FrozenInstanceError, match="frozen once built"):
        settings._set("seed", 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 4
    changed = settings.replace(seed=4)
    assert (settings.seed, changed.seed, changed.depths) == (3, 4, (4, 8, 16))
    assert "_normalising" not in vars(settings)


def test_a_result_at_the_prompt_is_one_line():
    """``result`` typed at a prompt shows the study, the verdict and where the numbers are, not kilobytes of fields
    (it printed about 5 KB)."""
    from validation import convergence
    from validation.figures import study as figures

    for result in (convergence.run("res1", samples=20, depths=(4, 8, 16), reference_steps=64, bootstrap=100),
                   figures.run("chizat-maximal", **figures.SMOKE["chizat-maximal"])):
        text = repr(result)
        assert "\n" not in text and len(text) < 300, text
        assert result.verdict in text and result.study in text and "result.table()" in text


@pytest.mark.parametrize("name", STUDY_MODULES)
def test_the_short_help_names_every_flag_and_help_all_gives_every_text_whole(name, capsys, monkeypatch):
    """--help cuts long flag texts to their first clause (issue 45: a help a terminal can show); --help-all prints
    them whole. Both name every flag, and both exit 0."""
    import importlib
    import re

    monkeypatch.setenv("COLUMNS", "80")
    module = importlib.import_module(f"validation.{name}")
    texts = {}
    for flag in ("--help", "--help-all"):
        try:
            code = module.main([flag])
        except SystemExit as stop:
            code = stop.code
        assert code == 0
        texts[flag] = capsys.readouterr().out
    flags = lambda text: set(re.findall(r"^  (--[\w-]+)", text, re.M))  # noqa: E731
    if module.COMMAND.catalogue is None:
        assert flags(texts["--help"]) == flags(texts["--help-all"])
    else:  # a catalogue study's short help: the settings every entry takes (the entry's own: --figure NAME --help)
        assert flags(texts["--help"]) < flags(texts["--help-all"])
    assert len(flags(texts["--help"])) > 5
    assert len(texts["--help"].splitlines()) < len(texts["--help-all"].splitlines())
    assert "--help-all prints every text whole" in " ".join(texts["--help"].split())


@pytest.mark.parametrize("name", ["figures", "regimes", "training"])
def test_an_entrys_short_help_lists_the_flags_it_takes_and_every_flag_still_parses(name, capsys, monkeypatch):
    """Issue 45: ``--figure NAME --help`` shows the settings NAME takes (and the run's own flags), none it would
    refuse; the plain short help shows those every entry takes. Every flag of --help-all still parses."""
    import dataclasses
    import importlib
    import re

    from validation.core import cli
    from validation.core.settings import ALWAYS_APPLY

    monkeypatch.setenv("COLUMNS", "80")
    command = importlib.import_module(f"validation.{name}").COMMAND
    flag = "--" + command.positional[0]
    field_of = {cli._flag(f): f.name for f in dataclasses.fields(command.settings) if f.metadata.get("cli")}
    shown = lambda argv: {field_of[f] for f in re.findall(r"^  (--[\w-]+)", cli.build_parser(command, argv=argv)  # noqa: E731
                                                              .format_help(), re.M) if f in field_of}
    every = frozenset.intersection(*(command.catalogue[e].takes() for e in command.catalogue))
    assert shown(["--help"]) == (every | set(ALWAYS_APPLY)) & set(field_of.values())
    for entry in command.catalogue:
        taken = command.catalogue[entry].takes() | set(ALWAYS_APPLY)
        assert shown([flag, entry, "--help"]) == taken & set(field_of.values()), entry
        assert shown([f"{flag}={entry}", "--help"]) == shown([flag, entry, "--help"])
    parser = cli.build_parser(command, argv=[flag, next(iter(command.catalogue)), "--help"])
    hidden = [f for f in field_of if f not in parser.format_help()]
    assert hidden, "nothing hidden"
    # a hidden flag is still the parser's (the entry refuses it later, naming the flags it takes)
    assert all(option in parser._option_string_actions for option in hidden)
    assert training_refuses_a_hidden_flag(name, capsys)


def training_refuses_a_hidden_flag(name, capsys):
    """A flag hidden from an entry's short help is refused when given to it: one line, exit 2."""
    if name != "training":
        return True
    from validation import training

    assert training.main(["--experiment", "marion2024-fig2", "--hursts", "0.5", "--checkpoint-dir", "none"]) == 2
    err = capsys.readouterr().err
    return "does not apply to the marion2024-fig2 experiment" in err and "Traceback" not in err


def test_large_blocks_are_unmapped_when_freed_only_within_the_block():
    """validation.core.runtime.large_blocks_unmapped: within it a freed 64-MiB array leaves the resident memory (the
    multilevel study's peak is then the arrays alive, not the heap's history); after it, with the command line's
    reused heap (reuse_freed_memory), a freed array stays resident for the next one. In a fresh process: glibc maps
    a block of its own only when no free part of the heap fits it, and a test process's heap has had many."""
    import subprocess

    probe = """
import torch
from validation.core import runtime
if runtime.resident_mb() is None or not runtime.reuse_freed_memory():
    print("unsupported"); raise SystemExit
def freed_mb():
    block = torch.ones(1 << 23, dtype=torch.float64)   # 64 MiB, touched
    held = runtime.resident_mb()
    del block
    return held - runtime.resident_mb()
with runtime.large_blocks_unmapped() as applied:
    inside = freed_mb()
print(applied, round(inside), round(freed_mb()))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    if out == ["unsupported"]:
        pytest.skip("needs glibc and /proc/self/statm")
    applied, inside, after = out
    assert applied == "True"
    assert int(inside) > 48          # unmapped at once
    assert int(after) < 4            # kept in the heap for the next array


def test_the_multilevel_command_line_asks_torch_for_huge_pages_before_importing_it():
    """validation.core.start_up: ``python -m validation.multilevel`` sets THP_MEM_ALLOC_ENABLE before torch is
    imported (torch reads it once, at its first allocation); other studies, and a value the user set, are left."""
    import subprocess

    from validation.core.start_up import study_of_command_line

    assert study_of_command_line(["python", "-m", "validation.multilevel", "--samples", "5"]) == "validation.multilevel"
    assert study_of_command_line(["python", "-X", "importtime", "-mvalidation.weak"]) == "validation.weak"
    assert study_of_command_line(["python", "-c", "-m"]) is None
    assert study_of_command_line(["python", "script.py", "-m", "x"]) is None

    def seen(study: str, **env: str) -> str:
        probe = ("import sys; sys.argv = ['-m']; sys.orig_argv = ['python', '-m', %r]; import validation, os; "
                 "print(os.environ.get('THP_MEM_ALLOC_ENABLE'), 'torch' in sys.modules)" % study)
        clean = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
        return subprocess.run([sys.executable, "-c", probe], env={**clean, **env}, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert seen("validation.multilevel") == "1 False"
    assert seen("validation.phase") == "1 False"
    assert seen("validation.convergence") == "None False"
    assert seen("validation.multilevel", THP_MEM_ALLOC_ENABLE="0") == "0 False"


def _hand_written_defaults(command) -> list[str]:
    """The flags of a catalogue study whose default is still stated by hand where the entries set it: a
    ``default_text`` where every entry that takes the flag sets it to a value (the text can then only say what
    the entries already do, and drift from it). A text stays where it says what None means, or what an entry that
    takes the flag without setting it runs at."""
    import dataclasses

    from validation.core.settings import ALWAYS_APPLY

    catalogue = command.catalogue
    entries = [catalogue[e] for e in catalogue]

    def set_by_all(name: str) -> bool:
        takers = [e for e in entries if name in e.defaults or name in e.takes() or name in ALWAYS_APPLY]
        return bool(takers) and all(e.defaults.get(name) is not None for e in takers)

    return [field.name for field in dataclasses.fields(command.settings)
            if field.metadata.get("default_text") is not None and set_by_all(field.name)]


@pytest.mark.parametrize("name", ["figures", "regimes", "training"])
def test_every_default_the_help_states_is_the_entries_own(name, capsys):
    """Issue 64: help texts stated the entries' defaults by hand and drifted (`figures --help` said the chizat figures
    default to width 40; chizat-backward, chizat-kernel and chizat-phase use 10). ``--help-all`` now states every
    default an entry sets from :attr:`Entry.defaults`: each entry's value appears beside its name, and
    ``--FLAG NAME --help`` shows that entry's value alone, for every entry and flag. No flag keeps a hand-written
    default where the entries set it (fails on a planted one)."""
    import dataclasses
    import importlib
    import re

    from validation.core.catalogue import cli_text

    command = importlib.import_module(f"validation.{name}").COMMAND
    catalogue = command.catalogue
    assert _hand_written_defaults(command) == []
    whole = " ".join(_help_text(name, "--help-all", capsys).split())
    checked = 0
    for field in dataclasses.fields(command.settings):
        if (not field.metadata.get("cli") or field.metadata.get("action") in ("store_true", "store_false")
                or not any(field.name in catalogue[e].defaults for e in catalogue)):
            continue                                              # a switch states no default
        stated = catalogue.stated_default(field.name, field.default, field.metadata.get("default_text"))
        assert f"(default: {stated})" in whole.replace("- ", "-"), (field.name, stated)
        for entry_name in catalogue:
            entry = catalogue[entry_name]
            if field.name not in entry.defaults:
                continue
            value = cli_text(entry.defaults[field.name], field.metadata.get("default_text"))
            own = catalogue.stated_default(field.name, field.default, field.metadata.get("default_text"), entry_name)
            assert own == value, (field.name, entry_name, own, value)
            assert value == stated or re.search(rf"{re.escape(value)} \([^)]*\b{re.escape(entry_name)}\b", stated), \
                (field.name, entry_name, stated)
            checked += 1
    assert checked > 20
    taken = next(f.name for f in dataclasses.fields(command.settings)
                 if f.metadata.get("default_text") is None and _hand_written_defaults(type("C", (), {
                     "catalogue": catalogue, "settings": dataclasses.make_dataclass("Planted", [(f.name, Any, (
                         dataclasses.field(default=None, metadata={"default_text": "planted"})))])})))
    assert taken                                                   # a planted hand-written default is found


def test_an_entrys_help_shows_its_own_default(capsys):
    """``--figure chizat-backward --help`` shows chizat-backward's width, 10 (the hand-written text said 40)."""
    from validation.figures import main

    try:
        main(["--figure", "chizat-backward", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "width d (default: 10)" in text and "(default: 64)" in text


def test_a_command_line_leaves_after_its_exit_handlers_with_its_output_flushed():
    """``leave`` (how a command line's process ends, without the interpreter's teardown): the exit handlers run, what
    is still buffered for a pipe is written, and the status is the one given. Without the flush the pipe's buffer
    would be lost (os._exit writes nothing)."""
    probe = ("import atexit, sys\n"
             "from validation.core.cli import leave\n"
             "atexit.register(lambda: print('exit handler ran'))\n"
             "sys.stdout.write('the table, still in the buffer\\n')\n"
             "sys.stderr.write('a warning\\n')\n"
             "leave(4)\n")
    buffered = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=buffered)
    assert proc.returncode == 4
    assert proc.stdout == "the table, still in the buffer\nexit handler ran\n"
    assert proc.stderr == "a warning\n"


def test_a_short_help_default_with_no_space_is_never_cut_inside_it():
    """Issue 66: brief() cut a default with no space in it one character short and added " …" (rfind returned −1):
    `solvers --help` showed `…1e-08,1e-0 …` for --tolerances, whose value ends 1e-09."""
    from validation.core.cli import brief

    value = "0.001,0.0001,1e-05,1e-06,1e-07,1e-08,1e-09"
    assert brief(value, 20, start=3, marks=(": ", "; ", " (", ", ")) == value
    assert brief("one two three four; five six seven", 12) == "one two three four …"


def test_a_short_help_description_is_a_whole_clause_never_cut_mid_sentence():
    """Issue 66: the short help cut descriptions at the last space within 64 characters ("running the SDE schemes
    side by …") and defaults at their first comma or colon ("(default: the model's …)" where the text goes on
    "; SDE 4:256, ODE 8:1024"). Every flag of every study, as the short help shows it: its description is the whole
    text or ends where a clause does; its default is the whole stated default, or ends where a clause does after
    its value. Fails on the planted rule of cutting at a space."""
    import dataclasses
    import importlib

    from validation.core import cli

    def cut_at_a_clause(shown: str, text: str, marks: tuple[str, ...]) -> bool:
        if shown == text:
            return True
        head = shown.removesuffix(" …")
        return shown.endswith(" …") and any(text.startswith(head + mark.rstrip(), 0) or
                                            text[len(head):].lstrip(",;:").startswith(mark.lstrip())
                                            for mark in marks) and text.startswith(head)

    checked = 0
    for name in STUDY_MODULES:
        settings = importlib.import_module(f"validation.{name}").COMMAND.settings
        for field in dataclasses.fields(settings):
            text = field.metadata.get("help")
            if not text:
                continue
            checked += 1
            assert cut_at_a_clause(cli.brief(text), text, cli.CLAUSE_MARKS), (name, field.name, cli.brief(text))
            default = field.metadata.get("default_text")
            if default:
                shown = cli.brief_default(default)
                assert cut_at_a_clause(shown, default, cli.DEFAULT_MARKS), (name, field.name, shown)
                assert shown != "the model's …", (name, field.name, default)
    assert checked > 100
    planted = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    assert cli.brief(planted) == planted
    assert not cut_at_a_clause(planted[:planted.rfind(" ", 0, 65)] + " …", planted, cli.CLAUSE_MARKS)


def _help_text(name: str, flag: str, capsys) -> str:
    """What ``python -m validation.NAME FLAG`` prints (``--help`` or ``--help-all``)."""
    import importlib

    module = importlib.import_module(f"validation.{name}")
    try:
        module.main([flag])
    except SystemExit:
        pass
    return capsys.readouterr().out


def _declared_flags(text: str) -> set[str]:
    """The flags an argparse help declares: those that begin an option's line."""
    import re

    lines = re.findall(r"^  +(-[^\n]*?)(?:  |$)", text, re.M)     # an option's line: its flags, then its text
    return {flag for line in lines for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", line)}


def test_every_flag_a_help_text_names_is_a_flag_of_the_command_it_names(capsys, monkeypatch):
    """Issue 66: `explore --help` told the reader to run `convergence --list-models`, which exits 2 (the flag is
    --list). Every --flag in every study's full help — in a flag's text, an example or the epilog — is a flag of the
    command it belongs to: the study named by the nearest `python -m validation.NAME` before it on its line, else the
    help's own study (`validation.NAME` alone too, where the help wrapped `python -m` onto the line above)."""
    import re

    monkeypatch.setenv("COLUMNS", "80")
    names = (*STUDY_MODULES, "explore")
    texts = {name: _help_text(name, "--help" if name == "explore" else "--help-all", capsys) for name in names}
    flags = {name: _declared_flags(text) | {"--help", "--help-all"} for name, text in texts.items()}
    assert all(len(found) > 4 for found in flags.values()), {n: len(f) for n, f in flags.items()}
    wrong = []
    for name, text in texts.items():
        carried = None          # a study named at the end of a line (its flag wrapped onto the next)
        for line in text.splitlines():
            owner, carried, pending = carried or name, None, False
            for match in re.finditer(r"validation\.(\w+)|(?<![\w-])(--[a-z][\w-]*)", line):
                if match.group(1):
                    owner, pending = (match.group(1), True) if match.group(1) in flags else (owner, pending)
                    continue
                pending = False
                if match.group(2) not in flags[owner]:
                    wrong.append(f"{name} --help: {match.group(2)} (a flag of {owner}?) in {line.strip()!r}")
            carried = owner if pending else None
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", STUDY_MODULES)
def test_an_examples_comment_is_never_wrapped_onto_a_line_of_its_own(name, capsys, monkeypatch):
    """Issue 66: `regimes --help` wrapped the end of an example's comment ("on 2 cores") onto a line of its own,
    under the comment column. A comment's continuation line ("# …") is kept as written, like the command above it."""
    monkeypatch.setenv("COLUMNS", "80")
    for flag in ("--help", "--help-all"):
        orphans = [line for line in _help_text(name, flag, capsys).splitlines()
                   if re.match(r"^ {40,}[^\s#-]", line) and not re.match(r"^ {40,}python ", line)]
        assert not orphans, (flag, orphans)


def test_the_pair_studies_state_the_width_each_model_runs_at(capsys):
    """Issue 64: `multilevel --help` said the width defaults to "the model's, usually 10" (it is 2), and the pair
    studies' "usually 10" was wrong for five models of eleven (6). The stated widths are now read from the pairs'
    defaults: each shipped pair's resolved width stands beside its name in `convergence --help-all`, and multilevel's
    stated 2 is the width its run records."""
    import re

    from limits import pair_names
    from validation import multilevel
    from validation.convergence import ConvergenceSettings
    from validation.core.pair_study import resolve_sizes

    text = " ".join(_help_text("convergence", "--help-all", capsys).split()).replace("- ", "-")
    stated = re.search(r"width d of the hidden state \(default: the model's: (.*?)\)\)", text).group(1) + ")"
    for name in pair_names():
        width = resolve_sizes(name, ConvergenceSettings())[1].width
        assert re.search(rf"\b{width} \([^)]*\b{re.escape(name)}\b", stated), (name, width, stated)
    text = " ".join(_help_text("multilevel", "--help-all", capsys).split())
    assert "width d of the hidden state (default: 2)" in text
    result = multilevel.run("res1", samples=200, depths=(1, 2, 4, 8), schemes=("network",), accuracies=(5e-2,),
                            resamples=100)
    assert result.model["width"] == 2
