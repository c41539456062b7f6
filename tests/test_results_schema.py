"""One results layer: every study's JSON follows the shipped schema; regimes and phase exit 1 when a check fails;
outputs are checked before the run and written as a set."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from validation import ablation, convergence, training, weak
from validation.figures import study as figures
from validation.phase import study as phase
from validation.regimes import study as regimes
from validation.core.results import schema, validate

SMALL = {
    "convergence": (convergence, ["--model", "res1", "--depths", "4:16", "--samples", "20", "--width", "3",
                                  "--reference-steps", "128", "--bootstrap", "100"]),
    "convergence-ode": (convergence, ["--model", "res2-ode", "--depths", "8:64", "--samples", "10", "--width", "3",
                                      "--bootstrap", "100"]),
    "ablation": (ablation, ["--width", "3", "--samples", "30", "--depths", "4:16", "--reference-steps", "128",
                            "--fit-from", "4", "--bootstrap", "100"]),
    "weak": (weak, ["--models", "tanh", "--draws", "100", "--width", "8", "--depth", "8", "--sde-steps", "8",
                    "--weak-draws", "100", "--weak-depths", "2:8", "--weak-reference", "32", "--weak-fit-from", "2",
                    "--permutations", "600", "--energy-points", "50"]),
    "regimes": (regimes, ["--preset", "fig1", "--depths", "8,32,128", "--samples", "8", "--width", "8"]),
    "regimes-fig2": (regimes, ["--preset", "fig2", "--depths", "64", "--samples", "40", "--width", "16"]),
    "regimes-chizat": (regimes, ["--preset", "chizat", "--samples", "40", "--sweep-samples", "10", "--layers", "10",
                                 "--depths", "10,30,100", "--width", "8", "--hidden", "4"]),
    "phase": (phase, ["--hursts", "0.3,0.7", "--betas", "0.2:1.2:6", "--depth", "32", "--networks", "2",
                      "--inputs", "2", "--workers", "1"]),
    "training": (training, ["--experiment", "cohen-scaling", "--datasets", "cohen-synthetic", "--depths", "4,8,16",
                            "--replicates", "3", "--epochs", "1", "--train-size", "256", "--resamples", "200",
                            "--checkpoint-dir", "none"]),
    "figures": (figures, ["--figure", "marion-fbm", "--length", "64", "--realisations", "40", "--resamples", "20"]),
}


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())


@pytest.mark.parametrize("name", list(SMALL))
def test_every_study_writes_json_that_follows_the_schema(name, tmp_path):
    module, argv = SMALL[name]
    out = tmp_path / "r.json"
    code = module.main([*argv, "--quiet", "--json", str(out)])
    assert code in (0, 1, 4)
    data = json.loads(out.read_text())
    validate(data)
    assert data["study"] == name.split("-")[0] and data["schema_version"] == 2
    assert data["result"]["verdict"] == {0: "PASS", 1: "FAIL", 4: "INCONCLUSIVE"}[code]
    assert data["run"]["command"].startswith(f"python -m validation.{data['study']}")
    # the resolved settings repeat the run: the same numbers again
    assert set(data["settings"]) >= {"seed", "dtype", "device"}


def test_the_schema_rejects_a_malformed_result(tmp_path):
    module, argv = SMALL["convergence"]
    out = tmp_path / "r.json"
    module.main([*argv, "--quiet", "--json", str(out)])
    data = json.loads(out.read_text())
    del data["result"]["fits"]["rms"]["ci"]
    with pytest.raises(jsonschema.ValidationError, match="'ci' is a required property"):
        validate(data)
    data = json.loads(out.read_text())
    data["result"]["verdict"] = "MAYBE"
    with pytest.raises(jsonschema.ValidationError):
        validate(data)


def test_the_api_repeats_a_run_from_its_settings():
    first = convergence.run("res1", samples=20, width=3, depths=(4, 8, 16), reference_steps=128, bootstrap=100)
    again = convergence.run("res1", **first.to_dict()["settings"])
    assert first.to_dict()["result"] == again.to_dict()["result"]


@pytest.mark.parametrize("module, argv", [
    (regimes, ["--preset", "fig1", "--depths", "8,32,128", "--samples", "8", "--width", "8",
               "--critical-tolerance", "1e-6"]),
    (phase, ["--hursts", "0.3,0.7", "--betas", "0.2:1.2:6", "--depth", "32", "--networks", "2", "--inputs", "2",
             "--workers", "1", "--tolerance", "1e-6"]),
])
def test_a_failed_check_exits_1(module, argv, capsys):
    assert module.main([*argv, "--quiet"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^  FAIL +critical β", out, re.MULTILINE) and "verdict: FAIL" in out


def test_outputs_are_checked_before_the_run_and_written_as_a_set(tmp_path, capsys):
    module, argv = SMALL["convergence"]
    # a figure format matplotlib does not write: refused before any computation, nothing written
    code = module.main([*argv, "--quiet", "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.xyz")])
    assert code == 2 and not list(tmp_path.iterdir())
    assert "suffix '.xyz'" in capsys.readouterr().err
    # no suffix: .png is added, and said
    code = module.main([*argv, "--quiet", "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv"),
                        "--plot", str(tmp_path / "fig")])
    printed = capsys.readouterr().out
    assert code in (0, 1, 4) and f"wrote {tmp_path / 'fig.png'}" in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png", "r.csv", "r.json"]


@pytest.mark.parametrize("preset, sizes", [
    ("fig2", dict(depths=(64,), samples=40, width=16)),
    ("chizat", dict(samples=40, sweep_samples=10, layers=10, depths=(10, 30, 100), width=8, hidden=4)),
])
def test_a_regimes_run_repeats_from_its_settings(preset, sizes):
    first = regimes.run(preset, **sizes)
    settings = first.to_dict()["settings"]
    again = regimes.run(settings["preset"], **settings)
    assert again.to_dict()["result"] == first.to_dict()["result"]


def test_a_user_pair_run_repeats_from_its_model_spec(tmp_path):
    from pathlib import Path

    spec = str(Path(__file__).resolve().parents[1] / "docs/examples/leaky_res1.py") + ":LeakyRes1"
    first = convergence.run(spec, samples=20, width=3, depths=(4, 8, 16), reference_steps=128, bootstrap=100)
    saved = first.to_dict()
    assert saved["result"]["model_spec"] == spec and saved["settings"]["activation"] == "tanh"
    again = convergence.run(saved["result"]["model_spec"], **saved["settings"])
    assert again.to_dict()["result"]["fits"] == saved["result"]["fits"]
