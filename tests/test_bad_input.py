"""The command-line contract under bad input: exit status 2, exactly one line on stderr naming the value (and
what is allowed), no traceback — checked before anything is computed, so absurd sizes are refused in
milliseconds. One table per command line; every case calls ``main(argv)`` in-process."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from validation import ablation, convergence, weak
from validation.phase import study as phase
from validation.regimes import study as regimes
from validation.core import cli

#: (argv, a needle the one error line must contain)
CONVERGENCE = [
    (["--sample-block", "0"], "--sample-block: 0 is out of range"),
    (["--workers", "0"], "--workers: 0 is out of range"),
    (["--scheduler", "foo"], "'foo' is not a scheduler"),
    # a port of 20 digits overflowed in the socket call (exit 3); an address without a host passed the check
    (["--scheduler", "tcp://127.0.0.1:99999999999999999999"], "the port 99999999999999999999 is out of range (must be "
                                                              "≥ 1 and ≤ 65535)"),
    (["--scheduler", "tcp://127.0.0.1:0"], "the port 0 is out of range"),
    (["--scheduler", "tcp://:8786"], "'tcp://:8786' is not a scheduler"),
    (["--model", "res1-ode", "--noise-dtype", "float32"], "applies to SDE pairs only"),
    (["--model", "res1-ode", "--compile"], "--compile: applies to SDE pairs only; res1-ode is an ODE pair"),  # ignored
    (["--samples", "1000000000"], "--samples: 1000000000 is out of range"),
    (["--samples", "0"], "--samples: 0 is out of range (must be ≥ 2"),
    (["--samples", "-3"], "-3 is out of range"),
    (["--samples", "abc"], "'abc' is not an integer"),
    (["--width", "100000"], "MiB of memory"),
    (["--width", "0"], "must be ≥ 1"),
    (["--width", "2.5"], "'2.5' is not an integer"),
    (["--bootstrap", "1000000000"], "--bootstrap: 1000000000 is out of range"),
    (["--bootstrap", "10"], "must be ≥ 100"),
    (["--reference-steps", "2147483648"], "--reference-steps: 2147483648 is out of range"),
    (["--reference-steps", "48"], "48 is not a power of two"),
    (["--depths", "4,8", "--reference-steps", "8"], "finer than the deepest depth 8"),
    (["--depths", "4,12,16"], "depth 12 is not a power of two"),
    (["--depths", "16,8"], "strictly increasing"),
    (["--depths", "4:4"], "low to high"),
    (["--depths", "8"], "at least two depths"),
    (["--depths", ""], "gives no value"),
    (["--depths", "abc"], "'abc' is not an integer"),
    (["--depths", "4:1048576"], "more than 16777216"),
    (["--model", "res1-ode", "--rtol", "1e-30", "--atol", "1e-30"], "--rtol: 1e-30 is below what float64 can resolve"),
    (["--model", "res1-ode", "--dtype", "float32", "--rtol", "1e-9"], "below what float32 can resolve"),
    (["--model", "res1-ode", "--rtol", "2"], "--rtol: 2.0 is out of range"),
    (["--model", "res1-ode", "--atol", "nan"], "--atol: nan must be finite"),
    (["--seed", "-1"], "--seed: -1 is out of range"),
    (["--seed", "1.5"], "'1.5' is not an integer"),
    (["--device", "cuda:abc"], "'cuda:abc' unknown"),
    (["--device", "cuda:-1"], "'cuda:-1' unknown"),
    (["--device", "tpu"], "'tpu' unknown"),
    (["--dtype", "float16"], "invalid choice: 'float16'"),
    (["--json", "/proc/x.json"], "--json /proc/x.json"),
    (["--csv", "/proc/x.csv"], "--csv /proc/x.csv"),
    (["--plot", "/proc/x.png"], "--plot /proc/x.png"),
    (["--json", "{afile}/x.json"], "is not a folder"),
    (["--json", "{missing}/x.json"], "does not exist"),
    (["--json", "{folder}"], "is a folder"),
    (["--json", "{missing}\nsub/x.json"], "missing\\nsub/x.json: the folder"),  # a newline split the one line
    (["--csv", "{missing}\rsub/x.csv"], "missing\\rsub/x.csv: the folder"),
    (["--plot", "{folder}/x.xyz"], "suffix '.xyz'"),
    (["--json", "{folder}/a.json", "--csv", "{folder}/a.json"], "two outputs name the same file"),
    (["--model", "res1", "--beta", "0.5"], "res1 does not use beta (--beta)"),
    (["--model", "res1", "--lengthscale", "0.2"], "res1 does not use lengthscale"),
    (["--model", "res1", "--rtol", "1e-8"], "--rtol: applies to ODE pairs only"),
    (["--model", "res1", "--atol", "1e-8"], "--atol: applies to ODE pairs only"),
    (["--model", "res1-ode", "--reference-steps", "64"], "--reference-steps: applies to SDE pairs only"),
    (["--model", "res1-ode", "--beta", "0.5"], "res1-ode does not use beta"),
    (["--model", "pf", "--weight-var", "2"], "pf does not use weight_var"),
    (["--model", "cohen-sde", "--weight-var", "2"], "cohen-sde does not use weight_var"),
    (["--model", "cohen-ode", "--beta", "1.5"], "β = 1.5 is out of range (allowed: 0 ≤ β < 1"),
    (["--model", "cohen-ode", "--beta=-0.1"], "β = -0.1 is out of range"),
    (["--model", "cohen-sde", "--beta", "0.5"], "use cohen-ode or cohen-ode-noise for 0 ≤ β < 1"),
    (["--model", "cohen-ode-noise", "--beta", "1"], "cohen-ode-noise: β = 1.0 is out of range (allowed: 0 < β < 1"),
    (["--model", "cohen-sde", "--activation", "relu"], "C³"),
    (["--model", "cohen-sde-naive", "--activation", "tanh"], "nothing to ablate"),
    (["--model", "res3-ode", "--activation", "tanh"], "res3-ode uses ReLU"),
    (["--model", "res9"], "unknown model 'res9'; known models:"),
    (["--model", "no_such_module:Thing"], "cannot import no_such_module"),
    (["--model", "limits.activations:Activation"], "not a subclass of limits.Pair"),
    (["--activation", "sigmoidish"], "unknown activation 'sigmoidish'"),
    (["--activation", "prelu:x"], "prelu slope 'x' is not a number"),
    (["--weight-var", "-1"], "--weight-var: -1.0 is out of range (must be ≥ 1e-06)"),
    # the numeric ranges exclude what divides by zero, overflows or says nothing (issue 46): each of these ran before
    (["--weight-var", "0"], "--weight-var: 0.0 is out of range"),          # every error 0: it read FAIL
    (["--lengthscale", "1e-300", "--model", "res2-ode"], "--lengthscale: 1e-300 is out of range (must be ≥ 0.01"),
    (["--lengthscale", "1e300", "--model", "res2-ode"], "--lengthscale: 1e+300 is out of range"),  # both: exit 3
    (["--confidence", "1e-300"], "--confidence: 1e-300 is out of range (must be ≥ 0.5"),  # "the 0% interval": PASS
    (["--weight-var", "nan"], "nan must be finite"),
    (["--lengthscale", "0", "--model", "res1-ode"], "--lengthscale: 0.0 is out of range"),
    (["--input-dim", "0"], "--input-dim: 0 is out of range"),
    (["--tolerance", "0"], "must be > 0"),
    (["--tolerance", "nan"], "nan must be finite"),
    (["--tolerance", "inf"], "inf must be finite"),
    (["--confidence", "1"], "--confidence: 1.0 is out of range"),
    (["--confidence", "0"], "--confidence: 0.0 is out of range"),
    (["--metric", "max"], "invalid choice: 'max'"),
    (["--fit-model", "bogus"], "argument --fit-model: invalid choice: 'bogus'"),
    (["--fit-from", "512"], "leaves fewer than two of the depths"),
    (["--fit-from", "0"], "--fit-from: 0 is out of range"),
    (["--set", "oops"], "must look like NAME=VALUE"),
    (["--set", "foo=1"], "no setting 'foo'"),
    (["--model", "pf", "--set", "sigma_w=-1"], "sigma_w=-1.0 is out of range"),
    (["--model", "pf", "--set", "cov_out=ar1:2"], "not positive definite"),
    (["--model", "pf", "--set", "mu_b=inf"], "mu_b=inf is out of range"),
    (["--model", "cohen-sde", "--set", "trend=wiggly"], "trend='wiggly' unknown"),
    (["--model", "pf", "--set", "T=0"], "pf: T=0 is out of range (allowed: T > 0)"),
    (["--model", "cohen-sde", "--set", "s_profile=cubic"], "s_profile='cubic' unknown (allowed: constant, linear:A:B"),
    (["--threads", "0"], "--threads: 0 is out of range"),
    (["--threads", "100000"], "is out of range"),
    (["--memory-mb", "1"], "more than --memory-mb 1"),
    (["--memory-mb", "-5"], "is out of range"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
]

ABLATION = [
    (["--samples", "1000000000"], "--samples: 1000000000 is out of range"),
    (["--width", "100000"], "MiB of memory"),
    (["--seed", "-1"], "--seed: -1 is out of range"),
    (["--reference-steps", "100"], "100 is not a power of two"),
    (["--activation", "tanh"], "nothing to ablate"),
    (["--activation", "relu"], "C³"),
    (["--set", "s_a=-1"], "s_a=-1.0 is out of range"),
    (["--set", "s_a"], "NAME=VALUE"),
    (["--fit-from", "1024"], "leaves fewer than two"),
    (["--depths", "8,8"], "gives 8 twice"),
    (["--plot", "x.xyz"], "suffix '.xyz'"),
    (["--json", "/proc/x.json"], "--json /proc/x.json"),
    (["--weight-var", "2"], "unrecognized arguments: --weight-var"),
    (["--device", "cuda:abc"], "'cuda:abc' unknown"),
    (["--bootstrap", "10"], "--bootstrap: 10 is out of range (must be ≥ 100"),
    (["--confidence", "1"], "--confidence: 1.0 is out of range"),
    (["--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
    (["--fit-model", "bogus"], "argument --fit-model: invalid choice: 'bogus'"),
    (["--input-dim", "0"], "--input-dim: 0 is out of range"),
    (["--lengthscale", "0"], "--lengthscale: 0.0 is out of range"),
    (["--metric", "max"], "argument --metric: invalid choice: 'max'"),
    (["--noise-dtype", "float16"], "argument --noise-dtype: invalid choice: 'float16'"),
    (["--sample-block", "0"], "--sample-block: 0 is out of range"),
    (["--scheduler", "foo"], "--scheduler: 'foo' is not a scheduler"),
    (["--scheduler", "tcp://127.0.0.1:1", "--samples", "500"], "--scheduler tcp://127.0.0.1:1: connection refused by "
                                                                "127.0.0.1:1"),
    (["--tolerance", "nan"], "--tolerance: nan must be finite"),
    (["--workers", "0"], "--workers: 0 is out of range"),
]

WEAK = [
    (["--workers", "100"], "--workers: 100 is out of range"),
    (["--scheduler", "local:0"], "'local:0' is not a scheduler"),
    (["--weak-width", "100000"], "--weak-width: 100000 is out of range"),
    (["--draws", "1000000000"], "--draws: 1000000000 is out of range"),
    (["--draws", "5"], "--draws: 5 is out of range"),
    (["--weak-draws", "1"], "--weak-draws: 1 is out of range"),
    (["--weak-z", "nan"], "--weak-z: nan must be finite"),
    (["--weak-z", "inf"], "--weak-z: inf must be finite"),
    (["--weak-reference", "100"], "100 is not a power of two"),
    (["--weak-depths", "2:8", "--weak-reference", "8"], "finer than the deepest weak depth 8"),
    (["--weak-depths", "4,4"], "gives 4 twice"),
    (["--weak-fit-from", "256"], "leaves fewer than two"),
    (["--inputs", "0"], "must be exactly two finite numbers"),
    (["--inputs", "0,nan"], "must be finite"),
    (["--models", "relu"], "allowed tanh, swish"),
    (["--models", ""], "allowed tanh, swish"),
    (["--alpha", "2"], "--alpha: 2.0 is out of range"),
    (["--permutations", "1"], "--permutations: 1 is out of range"),
    (["--seed", "-1"], "--seed: -1 is out of range"),
    (["--json", "/proc/x.json"], "--json /proc/x.json"),
    (["--csv", "/proc/x.csv"], "--csv /proc/x.csv"),
    (["--device", "cuda:-1"], "'cuda:-1' unknown"),
    (["--chunk", "0"], "--chunk: 0 is out of range"),
    (["--depth", "0"], "--depth: 0 is out of range"),
    (["--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
    (["--energy-points", "0"], "--energy-points: 0 is out of range (must be ≥ 10"),
    (["--sde-steps", "0"], "--sde-steps: 0 is out of range"),
    (["--weak-tolerance", "nan"], "--weak-tolerance: nan must be finite"),
    (["--width", "0"], "--width: 0 is out of range"),
]

REGIMES = [
    (["--preset", "chizat", "--noise-dtype", "float32"], "--noise-dtype: does not apply to the chizat preset"),
    (["--preset", "fig4", "--noise-dtype", "float32"], "smooth weights are drawn in --dtype"),
    (["--preset", "fig1", "--samples", "1000000000"], "--samples: 1000000000 is out of range"),
    (["--preset", "fig1", "--width", "100000"], "MiB of memory"),
    (["--preset", "chizat", "--layers", "100000000"], "--layers: 100000000 is out of range"),
    (["--preset", "fig1", "--seed", "-1"], "--seed: -1 is out of range"),
    (["--preset", "fig1", "--betas", "0.5,-0.2"], "β=-0.2 is out of range"),
    (["--preset", "fig1", "--betas", ""], "gives no value"),
    (["--preset", "fig1", "--depths", "0,10,20"], "0 is out of range"),
    (["--preset", "fig1", "--depths", "10"], "a sweep needs at least 3 depths"),
    (["--preset", "fig1", "--depths", "10,100"], "a sweep needs at least 3 depths"),
    (["--preset", "fig1", "--depths", "100,10,1000"], "strictly increasing"),
    (["--preset", "fig2", "--depths", "10,20"], "fig2 studies one depth"),
    (["--preset", "fig2", "--betas", "0.5,1"], "fig2 studies one β"),
    (["--preset", "fig1", "--regime", "fractional", "--hurst", "1.5"], "H=1.5 is out of range"),
    (["--preset", "fig1", "--regime", "fractional"], "needs --hurst"),
    (["--preset", "fig1", "--hurst", "0.7"], "--hurst: applies to --regime fractional only"),
    (["--preset", "fig1", "--lengthscale", "0.2"], "--lengthscale: applies to --regime smooth only"),
    (["--preset", "fig4", "--law", "normal"], "--law: applies to --regime iid only"),
    (["--preset", "fig1", "--kappas", "1"], "--kappas: does not apply to the fig1 preset"),
    (["--preset", "fig1", "--hidden", "4"], "--hidden: does not apply to the fig1 preset"),
    (["--preset", "chizat", "--block", "res2"], "--block: does not apply to the chizat preset"),
    (["--preset", "chizat", "--kappas", "-1"], "each κ must be finite and ≥ 0"),
    (["--preset", "fig1", "--block", "res1", "--activation", "nosuch"], "unknown activation 'nosuch'"),
    (["--preset", "fig1", "--block", "res3", "--activation", "tanh"], "res3 uses ReLU"),
    (["--preset", "fig1", "--tau", "-1"], "--tau: -1.0 is out of range"),
    (["--preset", "fig1", "--critical-tolerance", "0"], "--critical-tolerance: 0.0 is out of range"),
    (["--preset", "fig1", "--deltas", "0.5,1"], "--deltas: [0.5, 1.0]: each δ must lie in (0, 1)"),
    (["--preset", "chizat", "--deltas", "0.5"], "--deltas"),
    (["--preset", "fig2", "--max-over-layers"], "--max-over-layers: does not apply to the fig2 preset"),
    (["--preset", "assumptions", "--betas", "0.5"], "--betas: does not apply to the assumptions preset"),
    (["--preset", "chizat", "--hiddens", "4,0"], "--hiddens: 0 is out of range"),
    (["--preset", "chizat", "--hidden-samples", "1"], "--hidden-samples: 1 is out of range"),
    (["--preset", "fig9"], "invalid choice: 'fig9'"),
    ([], "--preset: required (one of assumptions, chizat, fig1"),
    (["--preset", "fig1", "--plot", "/proc/x.png"], "--plot /proc/x.png"),
    (["--preset", "fig1", "--csv", "/proc/x.csv"], "--csv /proc/x.csv"),
    (["--preset", "fig1", "--memory-mb", "1"], "more than --memory-mb 1"),
    (["--preset", "fig1", "--chunk-mb", "0"], "--chunk-mb: 0.0 is out of range"),
    (["--preset", "fig2", "--regime", "smooth", "--lengthscale", "1e-300"], "--lengthscale: 1e-300 is out of range"),
    (["--preset", "fig1", "--device", "tpu"], "--device: 'tpu' unknown"),
    (["--preset", "fig1", "--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
    (["--preset", "fig1", "--inputs", "0"], "--inputs: 0 is out of range"),
    (["--preset", "fig1", "--n-in", "0"], "--n-in: 0 is out of range"),
    (["--preset", "fig2", "--scheduler", "foo"], "--scheduler: 'foo' is not a scheduler"),
    (["--preset", "fig2", "--workers", "0"], "--workers: 0 is out of range"),
    (["--preset", "fig1", "--workers", "2"], "--workers: does not apply to the fig1 preset"),
    (["--preset", "chizat", "--sigma-u", "-1"], "--sigma-u: -1.0 is out of range"),
    (["--preset", "chizat", "--sigma-v", "nan"], "--sigma-v: nan must be finite"),
    (["--preset", "chizat", "--sweep-samples", "0"], "--sweep-samples: 0 is out of range"),
    (["--preset", "chizat", "--samples", "40", "--width", "40"], "--samples: 40 networks for width d=40"),
    (["--preset", "fig1", "--smooth-weights", "increments"], "--smooth-weights: applies to --regime smooth only"),
    (["--preset", "fig4", "--smooth-weights", "derivative"], "--smooth-weights"),
]

PHASE = [
    (["--width", "100000"], "--width: 100000 is out of range"),
    (["--networks", "100000"], "--networks: 100000 is out of range"),
    (["--depth", "100000"], "--depth: 100000 is out of range (must be ≥ 2 and ≤ 20000)"),
    (["--width", "4000", "--depth", "20000"], "MiB of memory"),
    (["--depth", "0"], "must be ≥ 2"),
    (["--hursts", "0.1:0.9:100000000"], "the count 100000000 is out of range"),
    (["--hursts", "0.5,1.0"], "H=1 is out of range"),
    (["--hursts", "1.2"], "H=1.2 is out of range"),
    (["--betas=-1:1:5"], "β=-1 is out of range"),
    (["--betas", "0.5"], "1 values"),
    (["--ref-depth", "1000"], "--ref-depth: 1000 is out of range"),
    (["--ref-depth", "0"], "--ref-depth: 0 is out of range"),
    (["--vmax", "0"], "--vmax: 0.0 is out of range"),
    (["--tolerance", "-1"], "--tolerance: -1.0 is out of range"),
    (["--workers", "0"], "--workers: 0 is out of range"),
    (["--seed", "-1"], "--seed: -1 is out of range"),
    (["--json", "{afile}/x.json"], "is not a folder"),
    (["--plot", "x.gif"], "suffix '.gif'"),
    (["--device", "tpu"], "--device: 'tpu' unknown"),
    (["--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
    (["--inputs", "0"], "--inputs: 0 is out of range"),
    (["--n-in", "0"], "--n-in: 0 is out of range"),
    (["--noise-dtype", "float16"], "argument --noise-dtype: invalid choice: 'float16'"),
    (["--scheduler", "foo"], "--scheduler: 'foo' is not a scheduler"),
]


@pytest.fixture()
def places(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("a file, not a folder")
    folder = tmp_path / "folder"
    folder.mkdir()
    return {"afile": str(afile), "missing": str(tmp_path / "missing"), "folder": str(folder)}


def _check(module, argv, needle, places, capsys):
    argv = [a.format(**places) for a in argv]
    code = module.main([*argv, "--quiet"])
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, (argv, code, captured.err, captured.out[-500:])
    assert len(lines) == 1 and lines[0].startswith("error:"), captured.err
    assert "Traceback" not in captured.err
    assert needle in lines[0], lines[0]


def _table(cases):
    return pytest.mark.parametrize("argv, needle", cases, ids=[" ".join(a) or "(none)" for a, _ in cases])


@_table(CONVERGENCE)
def test_convergence(argv, needle, places, capsys):
    _check(convergence, argv, needle, places, capsys)


@_table(ABLATION)
def test_ablation(argv, needle, places, capsys):
    _check(ablation, argv, needle, places, capsys)


@_table(WEAK)
def test_weak(argv, needle, places, capsys):
    _check(weak, argv, needle, places, capsys)


@_table(REGIMES)
def test_regimes(argv, needle, places, capsys):
    _check(regimes, argv, needle, places, capsys)


@_table(PHASE)
def test_phase(argv, needle, places, capsys):
    _check(phase, argv, needle, places, capsys)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("module, argv", [(convergence, []), (ablation, []), (weak, []), (regimes, ["--preset", "fig1"]),
                                          (phase, ["--workers", "1"])])
def test_cuda_without_a_gpu_is_refused(module, argv, capsys):
    assert module.main([*argv, "--device", "cuda", "--quiet"]) == 2
    assert "CUDA is not available here" in capsys.readouterr().err


STUDIES = {"convergence": (convergence, CONVERGENCE), "ablation": (ablation, ABLATION), "weak": (weak, WEAK),
           "regimes": (regimes, REGIMES), "phase": (phase, PHASE)}


def _value_flags(command: cli.Command) -> dict[str, set[str]]:
    """The flags ``cli.build_parser`` makes from the settings dataclass that take a value (every ``cli`` field but
    the store_true/store_false switches, which have no bad value), each with its aliases."""
    fields = [f for f in dataclasses.fields(command.settings) if f.metadata.get("cli", False)]
    return {cli._flag(f): {cli._flag(f), *f.metadata.get("aliases", ())} for f in fields
            if f.metadata.get("action") not in ("store_true", "store_false")}


def _flags_in(cases) -> set[str]:
    return {arg.split("=", 1)[0] for argv, _ in cases for arg in argv if arg.startswith("--")}


@pytest.mark.parametrize("study", STUDIES)
def test_every_setting_flag_has_a_bad_input_case(study):
    """Each flag of a study's settings that takes a value is given a bad value by at least one case of its table
    (so a new flag, or a removed case, shows here) — the tables above then check it is refused."""
    module, cases = STUDIES[study]
    flags = _value_flags(module.COMMAND)
    assert {"--seed", "--device", "--dtype"} <= set(flags)  # the settings' fields are read (the check is not vacuous)
    parser_flags = {option for action in cli.build_parser(module.COMMAND)._actions for option in action.option_strings}
    assert set().union(*flags.values()) <= parser_flags  # they are the command line's flags
    given = _flags_in(cases)
    uncovered = sorted(flag for flag, names in flags.items() if not names & given)  # a case may use an alias
    assert not uncovered, f"{study}: no bad-input case gives these flags a value: {', '.join(uncovered)}"


def test_regimes_list_needs_no_preset(capsys):
    """``--list`` said "the following arguments are required: --preset" (exit 2): it lists every preset, exit 0."""
    from validation.regimes.catalogue import PRESETS

    assert regimes.main(["--list"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert all(f"  {name} " in captured.out for name in PRESETS) and "fig3 = fig1" in captured.out


def test_a_long_run_is_announced_before_it_starts(capsys):
    def interrupted(*args, **kwargs):  # stands in for the 45-minute run: Ctrl-C as soon as it starts
        raise KeyboardInterrupt

    command = dataclasses.replace(regimes.COMMAND, run=interrupted)
    assert cli.execute(command, ["--preset", "fig2", "--quiet"]) == 130
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("warning: this run is estimated to take about 45 minutes")
    assert err[1] == "interrupted: no output was written"


#: the training command's --standard-inits (pf-sgd only): bad names, repeats, and the experiments it does not apply to
TRAINING_STANDARD_INITS = [
    (["--experiment", "pf-sgd", "--standard-inits", "xavier"], "--standard-inits: 'xavier' unknown (allowed: glorot, "
                                                              "glorot-uniform, he)"),
    (["--experiment", "pf-sgd", "--standard-inits", "he,he"], "give each initialisation once"),
    (["--experiment", "marion-fig8", "--standard-inits", "glorot"], "--standard-inits: does not apply to the "
                                                                   "marion-fig8 experiment"),
    (["--experiment", "cohen-scaling", "--standard-inits", "none"], "does not apply to the cohen-scaling experiment"),
]


def test_a_line_break_in_a_value_is_escaped_in_the_one_error_line(places, capsys):
    """A newline in a path given to --data-dir (or --json: the convergence table) split the error in two lines: every
    bad-input line shows a line break as repr writes it (cli.one_line), and so does a parse error (argparse names an
    unrecognized argument as typed)."""
    from validation import training

    _check(training, ["--experiment", "marion-fig9", "--dataset", "mnist", "--data-dir", "{missing}\nsub"],
           "--data-dir: " + places["missing"] + "\\nsub is not a folder", places, capsys)
    _check(convergence, ["--no\nsuch\u2028flag"], "unrecognized arguments: --no\\nsuch\\u2028flag", places, capsys)


@pytest.mark.parametrize("flag", ["--json", "--plot"])
@pytest.mark.parametrize("name, needle", [
    ("a" * 300, "a name in it is too long for the file system (File name too long); give a shorter one"),
    ("a" * 300 + "/x", "a name in it is too long for the file system"),
    ("a" * 245, "the file name is too long: the run writes it first as ."),  # its temporary file's name is too long
], ids=["300 characters", "a folder of 300", "245 characters"])
def test_a_file_name_too_long_is_refused_before_the_run(flag, name, needle, places, capsys):
    """A 300-character --json file name gave exit 3 (OSError: [Errno 36] File name too long, from pathlib's is_dir);
    a name that fits but whose temporary file's does not was refused as a folder that cannot be written to."""
    from pathlib import Path

    suffix = ".json" if flag == "--json" else ".png"
    path = f"{places['folder']}/{name}{suffix}"
    _check(convergence, [flag, path, "--memory-mb", "1"], f"{flag} {path}: {needle}", places, capsys)
    assert not list(Path(places["folder"]).iterdir())


@_table(TRAINING_STANDARD_INITS)
def test_training_standard_inits(argv, needle, places, capsys):
    from validation import training

    _check(training, argv, needle, places, capsys)


@pytest.mark.parametrize("error, needle", [
    (ConnectionRefusedError(111, "Connection refused"), "connection refused by 127.0.0.1:8786: nothing listens there"),
    (TimeoutError("timed out"), "no answer from 127.0.0.1:8786 within 5 s"),
    (OSError(-2, "Name or service not known"), "cannot connect to 127.0.0.1:8786 (Name or service not known)"),
])
def test_an_unreachable_scheduler_is_refused_before_dask_connects_saying_what_happened(monkeypatch, error, needle):
    """The tcp:// check (issue 41): one bounded socket connection, whose outcome the message names — never Dask's
    own connection attempts (about 30 s, then an internal error): a spy on Dask's Client must never be called. No
    wall time is measured (a loaded machine made the old < 2 s assertion fail)."""
    import socket

    import dask.distributed

    from validation.core import workers

    calls = []

    def connect(address, timeout=None):
        calls.append((address, timeout))
        raise error

    def client(*args, **kwargs):
        raise AssertionError("Dask's Client was started for an unreachable scheduler")

    monkeypatch.setattr(socket, "create_connection", connect)
    monkeypatch.setattr(dask.distributed, "Client", client)
    with pytest.raises(workers.UsageError) as refused:
        workers.run_tasks(abs, [1, 2], workers=1, scheduler="tcp://127.0.0.1:8786")
    assert calls == [(("127.0.0.1", 8786), workers.CONNECT_TIMEOUT_S)]
    assert needle in str(refused.value) and "dask scheduler --port 8786" in str(refused.value)


def test_an_address_that_answers_but_is_not_a_dask_scheduler_is_refused_within_the_handshake_timeout(
        monkeypatch, places, capsys):
    """A web server at the --scheduler address held the run silent for 651 s: Dask's handshake waits for its first
    reply without a limit. The address is asked to identify itself as a scheduler within workers.HANDSHAKE_TIMEOUT_S
    (1 s here), one line, exit 2 — Dask's Client (a spy here) is never started for it."""
    pytest.importorskip("distributed")
    import http.server
    import threading

    import dask.distributed

    from validation.core import workers

    def client(*args, **kwargs):
        raise AssertionError("Dask's Client was started for an address that is not a Dask scheduler")

    monkeypatch.setattr(dask.distributed, "Client", client)
    monkeypatch.setattr(workers, "HANDSHAKE_TIMEOUT_S", 1)
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # the server's own log would be a second line on stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.server_address[1]}"
    try:
        _check(convergence, ["--model", "res1", "--samples", "40", "--depths", "4,8,16", "--scheduler", address],
               f"--scheduler {address}: the address answered but is not a Dask scheduler", places, capsys)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("module, argv, words", [
    ("solvers", ["--model", "res2-ode", "--tolerances", "1e-3,1e-3"], "gives 0.001 twice"),
    ("regimes", ["--preset", "fig1", "--betas", "0.5,0.5,1"], "gives 0.5 twice"),
    ("phase", ["--hursts", "0.5,0.5"], "gives 0.5 twice"),
    ("phase", ["--betas", "0.5:0.5:3"], "gives 0.5 twice"),
    ("multilevel", ["--accuracies", "1e-3,1e-3"], "gives 0.001 twice"),
    ("convergence", ["--depths", ","], "gives no value"),
    ("gradients", ["--backward-times", "0.5,0.5"], "gives 0.5 twice"),
])
def test_every_list_flag_refuses_duplicates_and_empty_lists(module, argv, words, capsys):
    """One shared rule (validation.core.settings.distinct_values) for every list flag: at least one value, none
    twice — before, duplicated tolerances, β, H and accuracies ran and counted a value twice."""
    import importlib

    main = importlib.import_module(f"validation.{module}").main
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("module, argv, needle", [
    ("gradients", ["--methods", "reversible_heun,reversible_heun"], "--methods: reversible_heun,reversible_heun names "
                                                                    "'reversible_heun' twice (give each once)"),
    ("gradients", ["--model", "res1-ode", "--methods", "rk4,dopri5,rk4"], "--methods: rk4,dopri5,rk4 names 'rk4' twice"),
    ("weak", ["--models", "tanh,swish,tanh"], "--models: tanh,swish,tanh names 'tanh' twice"),
    ("training", ["--experiment", "cohen-scaling", "--datasets", "cohen-synthetic,cohen-synthetic"],
     "--datasets: cohen-synthetic,cohen-synthetic names 'cohen-synthetic' twice"),
    ("training", ["--experiment", "cohen-scaling", "--activations", "tanh,relu,tanh"], "--activations: tanh,relu,tanh "
                                                                                       "names 'tanh' twice"),
    ("training", ["--experiment", "marion-fig8", "--inits", "iid,iid"], "--inits: iid,iid names 'iid' twice"),
    ("solvers", ["--schemes", "euler,euler"], "--schemes: euler, euler names a scheme twice"),
    ("multilevel", ["--schemes", "network,network"], "--schemes: network, network names a solver twice"),
])
def test_every_list_of_names_refuses_a_name_given_twice(module, argv, needle, places, capsys):
    """``--methods reversible_heun,reversible_heun`` ran the method twice and printed its check twice; a data set,
    set-up or initialisation named twice was trained twice: a name given twice is refused (validation.core.settings.
    distinct_names), before anything is computed (--memory-mb 1 would refuse any run that got as far)."""
    import importlib

    _check(importlib.import_module(f"validation.{module}"), [*argv, "--memory-mb", "1"], needle, places, capsys)


@pytest.mark.parametrize("study, argv, needle", [
    ("multilevel", ["--accuracies", "1e-300"], "--accuracies: 1e-300 is out of range (must be ≥ 1e-08"),
    ("multilevel", ["--fit-from-level", "100"], "--fit-from-level: 100 is out of range (must be ≥ 1 and ≤ 6)"),
    ("multilevel", ["--depths", "1:8", "--fit-from-level", "3"], "--fit-from-level: 3 is out of range"),
    ("convergence", ["--model", "{exits}:X"], "importing"),
])
def test_arithmetic_edges_and_a_model_that_exits_are_bad_input(study, argv, needle, places, capsys, tmp_path):
    """Issue 46: an accuracy whose square underflows, a fit that would stand on fewer than 3 levels, and a user's
    model file that calls sys.exit(0) at import (it exited 0 with no output: a forged PASS) — each one line, exit 2."""
    import importlib

    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nsys.exit(0)\n")
    module = importlib.import_module(f"validation.{study}")
    _check(module, [a.replace("{exits}", str(exits)) for a in argv], needle, places, capsys)


#: the damage done to one checkpoint (``width.json``) of a finished run, and what the one error line says of it
DAMAGED_CHECKPOINTS = {
    "[]": ("[]", "a damaged checkpoint (it holds an array, not a JSON object"),
    "null": ("null", "a damaged checkpoint (it holds null, not a JSON object"),
    "number": ("3", "a damaged checkpoint (it holds the number 3, not a JSON object"),
    "folder": (None, "a folder, not a checkpoint file"),
    "fingerprint": ({"fingerprint": [1]}, "a damaged checkpoint (its fingerprint is an array, not a string"),
    "key": ({"key": 7}, "a damaged checkpoint (its key is the number 7, not a string"),
}


@pytest.fixture(scope="module")
def finished_checkpoints(tmp_path_factory):
    """The checkpoints of a finished tiny ``chaintron2026-nonlinear`` run, and its settings as flags."""
    from validation import training

    name = "chaintron2026-nonlinear"
    tiny = training.EXPERIMENTS[name].smoke
    folder = tmp_path_factory.mktemp("checkpoints")
    training.run(name, checkpoint_dir=str(folder), **tiny)
    flags = ["--experiment", name, *[part for key, value in tiny.items() for part in (
        f"--{key.replace('_', '-')}", ",".join(map(str, value)) if isinstance(value, tuple) else str(value))]]
    return folder, flags


@pytest.mark.parametrize("damage", DAMAGED_CHECKPOINTS)
def test_a_damaged_checkpoint_is_refused_on_resume_naming_the_file(damage, finished_checkpoints, places, capsys,
                                                                    tmp_path):
    """A checkpoint that is valid JSON but not the object save() writes ([], null, a number; a fingerprint or key not
    a string), or a folder in its place, gave exit 3 (AttributeError: 'list' object has no attribute 'get'; a folder:
    IsADirectoryError on writing it again) or was silently trained again: each is refused in one line naming the
    file, exit 2, and no output is written."""
    import json
    import shutil
    from pathlib import Path

    from validation import training

    finished, flags = finished_checkpoints
    shutil.copytree(finished, tmp_path / "checkpoints")
    file = next((tmp_path / "checkpoints").glob("*/width.json"))
    content, needle = DAMAGED_CHECKPOINTS[damage]
    if content is None:
        file.unlink()
        file.mkdir()
    elif isinstance(content, dict):
        file.write_text(json.dumps({**json.loads(file.read_text()), **content}))
    else:
        file.write_text(content)
    argv = [*flags, "--checkpoint-dir", str(tmp_path / "checkpoints"), "--resume", "--json", "{folder}/out.json"]
    _check(training, argv, f"--resume: {file}: {needle}", places, capsys)
    assert not list(Path(places["folder"]).iterdir())


@pytest.mark.parametrize("rate", ["float('nan')", "float('inf')", "None"])
def test_a_pair_whose_theory_rate_is_not_a_finite_number_is_refused_at_the_start(rate, places, capsys, tmp_path):
    """A user's pair whose theory_rate is NaN ran the whole study to INCONCLUSIVE (exit 4) and wrote its JSON: the
    rate every verdict is read against is checked when the pair is built (validation.core.pair_study.build_pair)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    module = tmp_path / "bad_rate.py"
    module.write_text("from limits.registry import get_pair\n"
                      f"LeakyRes1 = get_pair({str(root / 'docs/examples/leaky_res1.py')!r} + ':LeakyRes1')\n"
                      f"class BadRate(LeakyRes1):\n    name = 'bad-rate'\n    theory_rate = {rate}\n")
    argv = ["--model", f"{module}:BadRate", "--samples", "50", "--depths", "4,8,16", "--bootstrap", "100",
            "--reference-steps", "64", "--json", "{folder}/out.json"]
    shown = {"float('nan')": "nan", "float('inf')": "inf", "None": "None"}[rate]
    _check(convergence, argv, f"bad-rate: theory_rate {shown}: must be a finite number", places, capsys)
    assert not list(Path(places["folder"]).iterdir())


def _command_line(module: str, argv: list[str], cwd=None, **env: str):
    """``python -m validation.<module> argv`` in a process of its own (from ``cwd``, with ``env`` added): for what only a
    fresh process shows — its streams' encoding, matplotlib's first import, the folder it is started from."""
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", f"validation.{module}", *argv], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, **env})


def _one_error_line(proc, needle: str) -> None:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in proc.stderr, proc.stderr
    assert needle in lines[0], lines[0]


def test_an_ascii_only_stdout_prints_escapes_and_the_files_are_written(tmp_path):
    """With PYTHONIOENCODING=ascii the table's ‖ raised UnicodeEncodeError after the run (exit 3) and nothing was
    written: the streams write what they cannot encode as escapes (cli.printable_output)."""
    out = tmp_path / "out.json"
    proc = _command_line("convergence", ["--model", "res1", "--samples", "40", "--depths", "4,8,16", "--bootstrap",
                                         "100", "--json", str(out), "--quiet"], PYTHONIOENCODING="ascii")
    assert proc.returncode in (0, 1, 4), proc.stderr[-2000:]
    assert "UnicodeEncodeError" not in proc.stderr and "\\u" in proc.stdout and out.is_file()
    assert f"wrote {out}" in proc.stdout


def test_a_bad_mplbackend_is_refused_before_the_run_when_a_figure_is_asked_for(places):
    """MPLBACKEND=nosuch ran the whole study, then matplotlib's import failed (exit 3): refused first, naming the
    value (--memory-mb 1 would refuse any run that got past the output checks)."""
    proc = _command_line("convergence", ["--plot", f"{places['folder']}/x.png", "--memory-mb", "1", "--quiet"],
                         MPLBACKEND="nosuch")
    _one_error_line(proc, "MPLBACKEND='nosuch' is not a backend matplotlib knows")


def test_a_figure_that_fails_keeps_the_data_files(monkeypatch, places, capsys):
    """The outputs were one set: a figure that failed to draw took the JSON and CSV with it. The data files are
    written first; the failed figure is an error (exit 3) that names them."""
    from pathlib import Path

    from validation.core import results

    render = results._render

    def figure_fails(result, kind, path, handle):
        if kind == "plot":
            raise RuntimeError("the figure failed")
        render(result, kind, path, handle)

    monkeypatch.setattr(results, "_render", figure_fails)
    folder = Path(places["folder"])
    code = convergence.main(["--model", "res1", "--samples", "40", "--depths", "4,8,16", "--bootstrap", "100",
                             "--json", str(folder / "a.json"), "--csv", str(folder / "a.csv"), "--plot",
                             str(folder / "a.png"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 3, captured.err
    assert sorted(p.name for p in folder.iterdir()) == ["a.csv", "a.json"]
    assert f"wrote {folder / 'a.json'}" in captured.out and f"wrote {folder / 'a.csv'}" in captured.out
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "the figure" in err[0] and "RuntimeError: the figure failed" in err[0], err


@pytest.mark.parametrize("name, needle", [
    ("limits.py", "limits.py shadows the package's own limits"),
    ("limits/__init__.py", "__init__.py shadows the package's own limits"),
    ("torch.py", "torch.py shadows torch, which the package imports"),
])
def test_a_file_in_the_current_folder_that_shadows_limits_or_a_dependency_is_named(name, needle, tmp_path):
    """A limits.py in the folder the command is run from ended every study in a traceback ('limits' is not a
    package): python -m puts that folder first on sys.path. It is named at the start (validation.core.start_up), one
    line, exit 2. (A validation.py there shadows the package itself, before any of its code runs: docs/install.md.)"""
    (tmp_path / name).parent.mkdir(exist_ok=True)
    (tmp_path / name).write_text("x = 1\n")
    proc = _command_line("convergence", ["--model", "res1", "--memory-mb", "1", "--quiet"], cwd=tmp_path)
    _one_error_line(proc, needle)
    assert "rename it, or run from another folder" in proc.stderr


@pytest.mark.parametrize("out, needle", [
    ("{folder}", "--out {folder}: is a folder; give a file name"),          # it left {folder}.part and exit 1
    ("/proc/e.html", "--out /proc/e.html: cannot create a file in the folder /proc"),
    ("", "--out '': give a file name"),
    ("{folder}/" + "a" * 300 + ".html", "a name in it is too long for the file system"),
    ("{readonly}/x.html", "is not writable"),
], ids=["a folder", "/proc", "empty", "300 characters", "read-only folder"])
def test_the_explorer_checks_its_output_before_computing(out, needle, monkeypatch, places, capsys, tmp_path):
    """``python -m validation.explore --out X`` checked X only after minutes of computing, then failed with a traceback
    (exit 1): the path is checked first, with the studies' checks (results.plan_outputs) — a spy stands in for the
    computing, which must not start."""
    import os
    from pathlib import Path

    from validation import explore

    readonly = tmp_path / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    if "{readonly}" in out and os.access(readonly, os.W_OK):
        pytest.skip("this user may write in a read-only folder (root)")

    def computing(*args, **kwargs):
        raise AssertionError("the explorer computed before checking --out")

    monkeypatch.setattr(explore, "build", computing)
    out = out.format(readonly=readonly, **places)
    code = explore.main(["--out", out])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error:"), err
    assert needle.format(**places) in err[0], err
    assert not list(Path(places["folder"]).iterdir()) and not list(readonly.iterdir())
    assert not Path(places["folder"] + ".part").exists()


def test_an_explorer_model_that_gives_nan_is_one_line(monkeypatch, places, capsys):
    """A model whose numbers are NaN ran the whole page and then failed in json.dumps with a traceback: one line
    naming where the data are not finite, exit 2, no file."""
    from pathlib import Path

    from validation import explore

    nan = float("nan")
    monkeypatch.setattr(explore, "build", lambda *args, **kwargs: {
        "model": "nan-model", "paths": {"networks": {"2": [[0.0, nan]]}, "final_error": {"2": nan}},
        "errors": {"rms": [1.0, 0.5], "rate": nan}})
    monkeypatch.setattr(explore, "estimate", lambda *args, **kwargs: (1.0, 1.0))   # a model of no catalogue
    code = explore.main(["--model", "nan-model", "--out", f"{places['folder']}/x.html"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert ("the model nan-model gave numbers that are not finite (NaN or ±inf) in paths.networks, paths.final_error, "
            "errors.rate:") in err[0], err
    assert not list(Path(places["folder"]).iterdir())
