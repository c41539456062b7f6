"""Every study on a CUDA device: the same seed gives the same numbers, and the rates agree with the CPU's within
their intervals. Skipped where CUDA is not available (the CI machine); run on a GPU machine with
``python -m pytest tests/test_gpu.py``."""

from __future__ import annotations

import json

import pytest
import torch

from validation import ablation, convergence, solvers, training, weak
from validation.figures import study as figures
from validation.phase import study as phase
from validation.regimes import study as regimes

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")

SMALL_CONVERGENCE = dict(samples=200, width=4, depths=(4, 8, 16, 32), reference_steps=512, bootstrap=500)


def _same(first, again) -> bool:
    return json.dumps(first.to_dict()["result"], sort_keys=True) == json.dumps(again.to_dict()["result"], sort_keys=True)


@pytest.mark.parametrize("model", ["res1", "res2-ode", "cohen-sde"])
def test_convergence_on_cuda_is_reproducible_and_agrees_with_cpu(model):
    settings = dict(SMALL_CONVERGENCE) if model != "res2-ode" else dict(samples=20, width=4, depths=(8, 16, 32, 64),
                                                                       bootstrap=500)
    gpu = convergence.run(model, device="cuda", **settings)
    assert _same(gpu, convergence.run(model, device="cuda", **settings))
    cpu = convergence.run(model, device="cpu", **settings)
    assert gpu.run_info.device.startswith("cuda")
    low, high = cpu.rate_ci
    glow, ghigh = gpu.rate_ci
    assert glow <= high and low <= ghigh, (gpu.rate, gpu.rate_ci, cpu.rate, cpu.rate_ci)  # the intervals overlap


def test_ablation_weak_solvers_on_cuda_are_reproducible():
    small_ablation = dict(samples=100, width=3, depths=(4, 8, 16), reference_steps=256, bootstrap=200)
    assert _same(ablation.run(device="cuda", **small_ablation), ablation.run(device="cuda", **small_ablation))
    small_weak = dict(models=("tanh",), draws=100, width=8, depth=8, sde_steps=8, weak_draws=100, weak_depths=(2, 4, 8),
                      weak_reference=32, weak_fit_from=2, permutations=600, energy_points=50)
    assert _same(weak.run(device="cuda", **small_weak), weak.run(device="cuda", **small_weak))
    small_solvers = dict(samples=40, depths=(4, 8, 16, 32), reference_steps=512, bootstrap=200)
    assert _same(solvers.run("res1", device="cuda", **small_solvers), solvers.run("res1", device="cuda", **small_solvers))


def test_regimes_and_phase_on_cuda_are_reproducible_and_agree_with_cpu():
    fig1 = dict(samples=8, width=8, depths=(8, 32, 128))
    gpu = regimes.run("fig1", device="cuda", **fig1)
    assert _same(gpu, regimes.run("fig1", device="cuda", **fig1))
    cpu = regimes.run("fig1", device="cpu", **fig1)
    for g, c in zip(gpu.numbers["per_beta"], cpu.numbers["per_beta"]):  # each slope's interval overlaps the CPU's
        assert g["r_h"]["ci95"][0] <= c["r_h"]["ci95"][1] and c["r_h"]["ci95"][0] <= g["r_h"]["ci95"][1]
    small = dict(hursts=(0.3, 0.7), betas=(0.2, 0.6, 1.0), depth=32, networks=2, inputs=2, workers=1)
    assert _same(phase.run(device="cuda", **small), phase.run(device="cuda", **small))


@pytest.mark.parametrize("name", sorted(training.EXPERIMENTS))
def test_training_on_cuda_is_reproducible(name):
    settings = dict(training.EXPERIMENTS[name].smoke, checkpoint_dir=None, device="cuda")
    assert json.dumps(training.run(name, **settings).numbers, sort_keys=True) == \
        json.dumps(training.run(name, **settings).numbers, sort_keys=True)


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_figures_on_cuda_are_reproducible(name):
    settings = dict(figures.SMOKE[name], device="cuda")
    assert _same(figures.run(name, **settings), figures.run(name, **settings))
