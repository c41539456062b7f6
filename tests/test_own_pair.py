"""The documented user-defined pair (docs/examples/leaky_res1.py) runs and PASSes through the Python API and
through the command line as --model package.module:ClassName; a Pair declares what it reads and the base
class checks it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torchsde

from limits import BrownianGrid, ModelConfig, PairError, get_pair, run_network
from validation import convergence

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "docs/examples/leaky_res1.py:LeakyRes1"
#: small but stable at the default ±0.05: the leak's O(1/L) drift error makes the shallow depths steeper than 1/2,
#: which the corrected rate fit models (docs/theory.md §6); 400 paths for an interval narrower than ±0.05
SIZE = dict(samples=400, depths=(4, 8, 16, 32, 64), reference_steps=2048, bootstrap=500)


def test_example_is_euler_maruyama_of_its_limit_on_the_same_path():
    cls = get_pair(str(ROOT / EXAMPLE))
    pair = cls(ModelConfig(width=3, options={"leak": 0.7}), 5, seed=1)
    path = BrownianGrid(5, pair.noise_dim, 64, seed=2)
    h0 = pair.initial_state()
    net = run_network(pair, 16, path, h0)
    euler = torchsde.sdeint(pair.limit_sde(), h0, torch.tensor([0.0, 1.0], dtype=torch.float64), bm=path,
                            method="euler", dt=1 / 16)[-1]
    torch.testing.assert_close(net, euler, rtol=1e-12, atol=1e-12)


def test_example_passes_through_the_api():
    result = convergence.run(str(ROOT / EXAMPLE), **SIZE)
    assert result.verdict == "PASS", result.table()
    assert result.model["name"] == "leaky-res1" and result.model["options"] == {"leak": 1.0}


def test_example_passes_through_the_command_line(tmp_path):
    out = tmp_path / "leaky.json"
    argv = ["--model", "docs.examples.leaky_res1:LeakyRes1", "--quiet", "--json", str(out)]
    for key, value in SIZE.items():
        argv += [f"--{key.replace('_', '-')}", ",".join(map(str, value)) if isinstance(value, tuple) else str(value)]
    proc = subprocess.run([sys.executable, "-m", "validation.convergence", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["result"]["verdict"] == "PASS" and data["result"]["model"]["name"] == "leaky-res1"


@pytest.mark.parametrize("spec, needle", [
    ("no_such_module:Pair", "cannot import no_such_module"),
    ("docs/examples/missing.py:Pair", "no file"),
    (f"{EXAMPLE.split(':')[0]}:Nope", "has no class 'Nope'"),
    ("limits.activations:Activation", "not a subclass of limits.Pair"),
    ("limits.pairs:SDEPair", "does not implement"),
])
def test_bad_model_specs_are_clear_errors(spec, needle, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(PairError, match=needle):
        get_pair(spec)


def test_a_pair_declares_what_it_reads_and_the_base_checks_it():
    cls = get_pair(str(ROOT / EXAMPLE))
    with pytest.raises(PairError, match=r"leaky-res1 does not use lengthscale \(--lengthscale\)"):
        cls(ModelConfig(lengthscale=0.2), 2)
    with pytest.raises(PairError, match="leak=-1.0 is out of range"):
        cls(ModelConfig(options={"leak": -1}), 2)
    with pytest.raises(PairError, match="no setting 'leek'"):
        cls(ModelConfig(options={"leek": 1}), 2)
    assert cls(ModelConfig(weight_var=2.0), 2).scale == pytest.approx((2.0 / 10) ** 0.5)


def test_the_solver_study_runs_on_a_pair_whose_limit_does_not_say_its_noise_channels():
    """The example's limit sets no ``noise_channels``; the Stratonovich schemes need it to assemble g, and the
    solver study takes it from the path's channels (before 0.4: an internal error, exit 3)."""
    from validation.solvers import study as solvers

    result = solvers.run(str(ROOT / EXAMPLE), samples=20, width=3, depths=(4, 8, 16), reference_steps=256, bootstrap=100,
                         schemes=("euler", "midpoint"))
    assert all(run.errors[-1] < run.errors[0] for run in result.runs)
    assert result.verdict in ("PASS", "FAIL", "INCONCLUSIVE")


def test_records_state_what_the_pair_uses():
    """A pair that does not read the activation records none (header, figure subtitle, JSON), and the ``--set``
    options given appear in the header and the subtitle as the pair read them."""
    base = get_pair(str(ROOT / EXAMPLE))

    class FixedActivation(base):                # σ is its own choice: it reads no --activation
        name = "leaky-fixed"
        config_fields = frozenset({"weight_var", "input_dim"})

    result = convergence.run(FixedActivation, samples=20, depths=(4, 8, 16), reference_steps=64, bootstrap=200,
                             options={"leak": "2"})
    assert result.model["activation"] is None and result.model["options_given"] == {"leak": 2.0}
    header = result.table().splitlines()[1]
    assert "activation" not in header and "leak=2.0" in header
    figure = result.plot()
    subtitle = " ".join(text.get_text() for ax in figure.axes for text in ax.texts) + " ".join(
        ax.get_title() for ax in figure.axes)
    assert "σ=" not in subtitle and "leak=2.0" in subtitle
    assert "activation tanh" in convergence.run(str(ROOT / EXAMPLE), samples=20, depths=(4, 8, 16), reference_steps=64,
                                                bootstrap=200).table().splitlines()[1]


ODE_EXAMPLE = "docs/examples/damped_res1_ode.py:DampedRes1ODE"


def test_ode_example_is_res1_ode_at_damping_zero_and_passes_as_documented():
    """The ODE pair of docs/examples: at damping 0 the package's res1-ode weight for weight; its documented command
    (the default fit) PASSes at rate 1 on at least 3 depths, as does the power law on L ≥ 128."""
    cls, reference = get_pair(str(ROOT / ODE_EXAMPLE)), get_pair("res1-ode")
    config = ModelConfig(width=3, options={"damping": 0.0})
    ours, theirs = cls(config, 4, seed=2), reference(ModelConfig(width=3), 4, seed=2)
    torch.testing.assert_close(run_network(ours, 32), run_network(theirs, 32), rtol=0, atol=0)
    result = convergence.run(str(ROOT / ODE_EXAMPLE), samples=50)
    assert result.verdict == "PASS" and len(result.fit.fitted_depths) >= 3, result.table()
    result = convergence.run(str(ROOT / ODE_EXAMPLE), samples=50, fit_model="power-law", fit_from=128)
    assert result.verdict == "PASS", result.table()
    assert result.model["options"] == {"damping": 1.0}


def test_a_pair_declaring_more_noise_channels_is_estimated_with_them_and_refused_before_allocating(tmp_path, capsys):
    """Issue 65: a user pair declaring 10¹² noise channels was estimated as res-1 (d² + d channels), started, and
    tried to allocate 16 TB (exit 3, "out of memory"). The estimate now counts the instance's noise_dim, so the run is
    refused before anything is allocated (exit 2); a shipped pair's estimate is unchanged (planted: the estimate
    without the pair's channels lets it start)."""
    (tmp_path / "huge.py").write_text(
        "from limits.res_sde import Res1SDE\n\n\nclass Huge(Res1SDE):\n    name = 'huge'\n\n"
        "    @property\n    def noise_dim(self):\n        return 10**12\n")
    from validation.core import pair_study
    from validation.convergence import ConvergenceSettings

    small = ConvergenceSettings(samples=40, depths=(4, 8, 16))
    huge = pair_study.estimate_mb(str(tmp_path / "huge.py") + ":Huge", small)
    assert huge > 1e6 and pair_study.estimate_mb("res1", small) < 1e3
    code = convergence.main(["--model", str(tmp_path / "huge.py") + ":Huge", "--samples", "40", "--depths", "4,8,16",
                             "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "MiB of memory" in err, err
