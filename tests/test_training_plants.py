"""Planted alternatives of three training experiments: each test runs the entry at a small size, first unplanted (it
must PASS there, so that what follows is caused by the plant), then with a wrong claim planted as a real change of the
weights or of the model — never of the verdict's rule (margins, intervals and fits are the entry's own) — and asserts
that the entry's check FAILs.

* ``sander2022-linear``: every depth started from its own A⁰ (no common function of t = k/L for the trained weights to
  discretise), the plant of ``marion2024-fig1`` carried over to the linear network;
* ``trained-ode-convergence``: i.i.d. weights at β = ½ whose depth-2N layers come in equal pairs (no independent half
  of the noise), so that the trained depths do converge;
* ``depth-transfer``: CompleteP's learning rates on a residual branch without its depth scaling L^-β (an SP network),
  whose optimal rate moves with depth.
"""

from __future__ import annotations

import pytest
import torch

from validation import training
from validation.training import depth_transfer, ode_convergence, sander2022
from validation.training.networks import Res1Net


def _checks(result) -> list[str]:
    return [c["verdict"] for c in result.numbers["checks"]]


# --------------------------------------------------------------------------------------------- sander2022-linear
#: sander2022-linear at the size of tests/test_sander2022.py (under a second)
SANDER = dict(depths=(8, 16, 32, 64, 1024), epochs=100, replicates=4, resamples=200, dtype="float64", workers=1,
              checkpoint_dir=None)
#: the planted A⁰'s entries are N(0, this²): small enough that every depth still trains to the unplanted loss
SANDER_A0_SCALE = 0.3


def test_sander_linear_fails_when_the_depths_do_not_share_their_initial_function(monkeypatch):
    """Planted: each depth, the reference 1024 included, starts from its own A⁰, constant over the layers (entries
    N(0, 0.3²), drawn per depth and replicate) instead of the common A_k = 0 — no common function of t = k/L for the
    trained weights to discretise, as marion2024's independent-W⁰ plant. Training still works (the losses fall to
    the unplanted run's), but the distances to the reference no longer fall as 1/L: the rate is near 0 at every
    checked iteration and for the supremum over training, and every check FAILs; unplanted, the same run PASSes."""
    unplanted = training.run("sander2022-linear", **SANDER)
    assert unplanted.verdict == "PASS", unplanted.numbers["checks"]
    assert -unplanted.numbers["supremum_rate"]["slope"] > 0.9                           # measured 1.041

    original = sander2022.SanderLinear.networks

    def independent(self, settings, depths, device):
        networks = original(self, settings, depths, device)
        for index, net in enumerate(networks):
            generator = torch.Generator().manual_seed(100 + index)
            start = torch.randn(net.A.shape[0], 1, *net.A.shape[2:], generator=generator, dtype=net.A.dtype)
            net.A.copy_(SANDER_A0_SCALE * start.to(net.A.device).expand_as(net.A))
        return networks

    monkeypatch.setattr(sander2022.SanderLinear, "networks", independent)
    planted = training.run("sander2022-linear", **SANDER)
    assert planted.verdict == "FAIL"
    assert _checks(planted) == ["FAIL"] * 5, planted.numbers["checks"]                 # 4 iterations and the sup
    assert abs(planted.numbers["supremum_rate"]["slope"]) < 0.3                         # measured −0.06
    assert planted.numbers["largest_final_loss"] < 10 * unplanted.numbers["largest_final_loss"]  # it still trains


# -------------------------------------------------------------------------------------- trained-ode-convergence
#: trained-ode-convergence at the size of tests/test_ode_convergence.py (a few seconds)
ODE = dict(depths=(8, 16, 32, 64), width=16, replicates=6, activations=("tanh",), resamples=500, betas=(0.5, 1.0),
           inits=("iid", "smooth"), workers=1, checkpoint_dir=None)


def _cells(result) -> dict[str, dict]:
    return {cell["key"]: cell for cell in result.numbers["cells"]}


def test_ode_convergence_fails_when_the_iid_deep_network_repeats_its_layers_in_pairs(monkeypatch):
    """Planted: the depth-2N network's odd layers copy its even ones (V_{2k+1} = V_{2k}, W_{2k+1} = W_{2k}; the
    depth-N network still starts from the even layers), so the 2N network is the N network with each layer split in
    two — the i.i.d. weights keep their N(0, 1/d) entries but lose the independent half of the noise that keeps the
    trained depths apart at β = ½. Then the trained depths do converge at β = ½ (D_N falls with N) and the check
    "i.i.d. weights at β = ½ stay apart (rate within 0 ± 0.1)" FAILs; unplanted, the same run PASSes."""
    unplanted = training.run("trained-ode-convergence", **ODE)
    assert unplanted.verdict == "PASS", unplanted.numbers["checks"]
    assert _cells(unplanted)["beta0.5-iid-tanh"]["check"]["verdict"] == "PASS"         # rate −0.012 [−0.041, 0.016]

    from planted_entries import pair_the_layers

    monkeypatch.setattr(ode_convergence._PairedNetworks, "__init__",
                        pair_the_layers(ode_convergence._PairedNetworks.__init__))
    planted = training.run("trained-ode-convergence", **ODE)
    assert planted.verdict == "FAIL"
    cell = _cells(planted)["beta0.5-iid-tanh"]
    assert cell["check"]["verdict"] == "FAIL", cell["check"]
    assert cell["rate"]["ci"][0] > ode_convergence.MARGIN                                # measured 0.296 [0.198, 0.379]


# ------------------------------------------------------------------------------------------------ depth-transfer
#: depth-transfer's CompleteP alone on the digits, at three depths and five base rates around its optimum (about 25 s
#: a run on one core)
TRANSFER = dict(betas=(1.0,), depths=(2, 8, 32), learning_rates=(1e-3, 3.16e-3, 1e-2, 3.16e-2, 1e-1), replicates=24,
                resamples=500, workers=1, checkpoint_dir=None)


class _UnscaledBranch(Res1Net):
    """Res-1 with the residual branch's multiplier L^-β replaced by 1: the standard parametrisation's network."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.scale = 1.0


@pytest.mark.slow   # about a minute on one core: 24 replicates at three depths, unplanted and planted
def test_depth_transfer_fails_when_the_branch_loses_its_depth_scaling(monkeypatch):
    """Planted: CompleteP's learning-rate rule (every rate η) on a residual branch without its multiplier L^-1 — the
    network trained is SP's, whose optimal rate falls with depth (η* ∝ L^-0.33 at the preset). The verdict's fit of
    γ in η* ∝ L^γ is unchanged; the plant moves η* from 0.012 at L = 2 to 0.003 at L = 32 and the check "η* transfers
    across depth (γ within ±0.1)" FAILs; unplanted, the same run PASSes (η* stays at 0.016–0.017)."""
    unplanted = training.run("depth-transfer", **TRANSFER)
    assert unplanted.verdict == "PASS", unplanted.numbers["checks"]                    # γ 0.006 [−0.042, 0.056]

    monkeypatch.setattr(depth_transfer, "Res1Net", _UnscaledBranch)
    planted = training.run("depth-transfer", **TRANSFER)
    assert planted.verdict == "FAIL"
    assert _checks(planted) == ["FAIL"], planted.numbers["checks"]
    fit = planted.numbers["fits"]["1"]
    assert not any(fit["at_edge"]) and fit["exponent_ci"][1] < -depth_transfer.TRANSFER_MARGIN  # −0.470 [−0.505, −0.434]
