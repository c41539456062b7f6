"""Issue 47: the one-pass engine's steps compiled (``--compile``: torch.compile; on CUDA, CUDA graphs) agree with the
eager pass to rounding, on the CPU — the network's layer and both references' Euler steps."""

from __future__ import annotations

import numpy as np
import torch

from limits.pairs import ModelConfig
from limits.res_sde import Res1SDE
from validation import convergence
from validation.core.one_pass import sde_pass

SMALL = dict(samples=40, depths=(4, 8, 16, 32), reference_steps=256, bootstrap=200, workers=1)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300)))


def test_the_compiled_pass_agrees_with_the_eager_pass_to_rounding():
    pair = Res1SDE(ModelConfig(width=4), 30, seed=3)
    before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    eager = sde_pass(pair, [4, 8, 16], 128, seed=3, record_steps=16)
    compiled = sde_pass(pair, [4, 8, 16], 128, seed=3, record_steps=16, compile_steps=True)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] > before  # it did compile
    assert torch.equal(eager.recorded, compiled.recorded)  # the same path
    for a, b in zip(eager.states["network"], compiled.states["network"]):
        assert _relative(a.numpy(), b.numpy()) < 1e-12
    assert _relative(eager.reference.numpy(), compiled.reference.numpy()) < 1e-12
    assert _relative(eager.second.numpy(), compiled.second.numpy()) < 1e-12
    assert not torch.equal(eager.reference, compiled.states["network"][-1])  # the comparison can fail


def test_the_convergence_study_compiled_gives_the_eager_errors_to_rounding():
    eager = convergence.run("res1", **SMALL)
    compiled = convergence.run("res1", compile_steps=True, **SMALL)
    assert compiled.settings.compile_steps and not eager.settings.compile_steps
    for name in ("final_sq", "sup_sq", "reference_gap_sq"):
        assert _relative(getattr(eager.errors, name), getattr(compiled.errors, name)) < 1e-10
    assert abs(eager.rate - compiled.rate) < 1e-9 and eager.verdict == compiled.verdict
