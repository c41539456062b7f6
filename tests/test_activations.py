import pytest
import torch

from limits.activations import ACTIVATION_NAMES, ActivationError, get_activation


@pytest.mark.parametrize("name", ACTIVATION_NAMES)
def test_recorded_derivatives_match_finite_differences(name):
    act = get_activation(name)
    x = torch.tensor([0.0], dtype=torch.float64)
    assert act(x).item() == pytest.approx(0.0, abs=1e-15)
    h = 1e-4
    d1 = (act(x + h) - act(x)).item() / h  # right derivative for kinks
    assert d1 == pytest.approx(act.d1, abs=1e-3)
    if act.smooth:
        d2 = (act(x + h) - 2 * act(x) + act(x - h)).item() / h**2
        assert d2 == pytest.approx(act.d2, abs=1e-3)


def test_prelu_slope_and_errors():
    act = get_activation("prelu:0.1")
    assert act(torch.tensor([-2.0])).item() == pytest.approx(-0.2)
    with pytest.raises(ActivationError, match="allowed"):
        get_activation("sigmoidish")
    with pytest.raises(ActivationError, match="not a number"):
        get_activation("prelu:abc")
