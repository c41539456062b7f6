"""The one-pass engine's own Euler–Maruyama loop for the two SDE references equals ``torchsde.sdeint(method="euler")``
on the same path bit for bit — every shipped SDE pair, float32 and float64, several blocks, a time-dependent drift
and the gradient study's augmented limit — and falls back to torchsde where it cannot (seconds)."""

import pytest
import torch
import torchsde

from limits import get_pair, make_pair, pair_names
from limits.pairs import SDEPair
from validation.core import one_pass as engine
from validation.core.one_pass import EulerOnIncrements, sde_pass
from validation.gradients.tangents import TangentSystem

SDE_PAIRS = [name for name in pair_names() if get_pair(name).kind == "sde"]


def _pass_both_ways(pair, monkeypatch, **kwargs):
    ours = sde_pass(pair, [4, 8, 32], 64, seed=3, **kwargs)
    with monkeypatch.context() as patch:
        patch.setattr(EulerOnIncrements, "of", classmethod(lambda cls, *args: None))
        theirs = sde_pass(pair, [4, 8, 32], 64, seed=3, **kwargs)
    assert ours.info["method"] != theirs.info["method"]
    return ours, theirs


def _assert_same(ours, theirs):
    assert torch.equal(ours.reference, theirs.reference)
    assert torch.equal(ours.second, theirs.second)
    for name in ours.states:
        for a, b in zip(ours.states[name] + ours.sup_sq[name], theirs.states[name] + theirs.sup_sq[name]):
            assert torch.equal(a, b)


@pytest.mark.parametrize("name", SDE_PAIRS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_references_equal_torchsde_bit_for_bit(name, dtype, monkeypatch):
    """Blocks of 4 fine steps (16 blocks, so the carry of the long layers is exercised), every reader compared."""
    pair = make_pair(name, samples=6, width=3, dtype=dtype)
    ours, theirs = _pass_both_ways(pair, monkeypatch, block_budget=4 * 6 * pair.noise_dim)
    assert ours.info["block_steps"] == 4
    _assert_same(ours, theirs)
    assert not torch.equal(ours.reference, ours.second)  # the two references are two schemes, not one twice


def test_time_dependent_drift_is_read_at_the_same_times(monkeypatch):
    """Cohen et al.'s SDE with a linear profile s(t): the drift depends on t, so a time off by one step would show."""
    pair = make_pair("cohen-sde", samples=5, width=3, options={"s_profile": "linear:0.5:1.5", "trend": "constant"})
    _assert_same(*_pass_both_ways(pair, monkeypatch, block_budget=8 * 5 * pair.noise_dim))


def test_the_gradient_study_augmented_limit(monkeypatch):
    """The limit with its first variation (validation.gradients.tangents), stepped by the same loop."""
    system = TangentSystem(make_pair("res1", samples=4, width=3), (0.0, 0.5))
    _assert_same(*_pass_both_ways(system, monkeypatch))


def test_a_limit_with_g_only_is_left_to_torchsde():
    """An SDE with f and g but no g_prod (torchsde forms g·ΔW itself) and a Stratonovich SDE are not stepped here."""

    class OnlyG(torchsde.SDEIto):
        def __init__(self):
            super().__init__(noise_type="general")

        def f(self, t, y):
            return -y

        def g(self, t, y):
            return y.unsqueeze(-1)

    class Strat(torchsde.SDEStratonovich):
        def __init__(self):
            super().__init__(noise_type="general")

        def f(self, t, y):
            return -y

        def g_prod(self, t, y, v):
            return y * v

    assert EulerOnIncrements.of(OnlyG(), 64, torch.float64, torch.device("cpu")) is None
    assert EulerOnIncrements.of(Strat(), 64, torch.float64, torch.device("cpu")) is None


def test_loop_states_at_every_output():
    """``every`` = r: the start and the state after each r steps; 0: the start and the end."""
    pair = make_pair("res1", samples=3, width=2)
    euler = EulerOnIncrements.of(pair.limit_sde(), 16, pair.dtype, pair.device)
    increments = torch.randn(8, 3, pair.noise_dim, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    h0 = pair.initial_state()
    states = euler(h0, 0, increments, 1, 2)
    assert len(states) == 5 and states[0] is h0
    assert torch.equal(states[-1], euler(h0, 0, increments, 1, 0)[-1])
    assert len(euler(h0, 0, increments, 1, 0)) == 2
    assert isinstance(pair, SDEPair) and engine.sde_pass is sde_pass
