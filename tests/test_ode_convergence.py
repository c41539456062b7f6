"""trained-ode-convergence (the seed authors' N vs 2N experiment): the coupling of the two depths, independent
replicates, and the regimes' predictions measured at a size that runs in seconds."""

import pytest
import torch

from validation import training
from validation.core.settings import SettingsError
from validation.training.ode_convergence import _PairedNetworks


def _draws(replicates=2, deep=8, width=5, seed=0):
    g = torch.Generator().manual_seed(seed)

    def normal(*shape):
        return torch.randn(replicates, *shape, generator=g, dtype=torch.float64)

    return dict(V=normal(deep, width, width) / width**0.5, W=normal(deep, width, width) / width**0.5,
                A=normal(64, width) / 8, w=normal(width, 1) / width**0.5), normal(1, 64), normal(1, 1)


def test_the_shallow_network_starts_from_the_even_layers_with_twice_the_scale():
    weights, _, _ = _draws()
    pair = _PairedNetworks(**weights, beta=0.5, activation="tanh")
    shallow, deep = pair.parameters
    assert torch.equal(shallow["V"], weights["V"][:, ::2]) and torch.equal(deep["W"], weights["W"])
    assert shallow["scale"] == pytest.approx(2 * 8 ** -0.5) and deep["scale"] == pytest.approx(8 ** -0.5)
    assert pair.distances()["mean"] == [0.0, 0.0] and pair.distances()["max"] == [0.0, 0.0]


def test_replicates_train_as_separate_runs():
    """Two replicates trained together (Adam is elementwise, the summed loss gives each its own gradient) equal
    each trained alone."""
    weights, x, y = _draws()
    together = _PairedNetworks(**weights, beta=1.0, activation="relu")
    together.train(x, y, "adam", 0.01, 3)
    for r in range(2):
        alone = _PairedNetworks(**{k: v[r:r + 1] for k, v in weights.items()}, beta=1.0, activation="relu")
        alone.train(x[r:r + 1], y[r:r + 1], "adam", 0.01, 3)
        for both, one in zip(together.parameters, alone.parameters):
            assert torch.allclose(both["V"][r], one["V"][0], rtol=1e-12, atol=1e-14)
            assert torch.allclose(both["A"][r], one["A"][0], rtol=1e-12, atol=1e-14)


def test_training_moves_the_weights_and_separates_the_depths():
    weights, x, y = _draws()
    pair = _PairedNetworks(**weights, beta=1.0, activation="tanh")
    losses = pair.train(x, y, "adam", 0.01, 5)
    distances = pair.distances()
    assert all(v > 0 for v in distances["moved"]) and all(v > 0 for v in distances["mean"])
    # Adam at 0.01 can overshoot one example whose loss starts small; over the replicates the loss falls
    assert all(sum(last) < sum(first) for first, last in losses)


def test_the_regimes_predictions_hold_at_a_small_size():
    """β = 1 smooth weights: the trained depths converge (rate > 0); i.i.d. weights at β = ½: they stay apart (rate
    within 0 ± 0.1). d = 16, N = 8 … 64, 6 replicates, the authors' Adam and 5 steps."""
    result = training.run("trained-ode-convergence", depths=(8, 16, 32, 64), width=16, replicates=6,
                          activations=("tanh",), resamples=500, checkpoint_dir=None,
                          betas=(0.5, 1.0), inits=("iid", "smooth"))
    cells = {cell["key"]: cell for cell in result.numbers["cells"]}
    assert cells["beta1-smooth-tanh"]["check"]["verdict"] == "PASS"
    assert cells["beta0.5-iid-tanh"]["rate"]["value"] == pytest.approx(0.0, abs=0.1)
    assert cells["beta0.5-smooth-tanh"]["check"] is None  # reported, not checked
    assert cells["beta1-smooth-tanh"]["rate"]["value"] > cells["beta0.5-iid-tanh"]["rate"]["value"] + 0.3


@pytest.mark.parametrize("given, match", [(dict(activations=("gelu",)), "activations"),
                                          (dict(inits=("iid-beta1",)), "takes iid, smooth"),
                                          (dict(depths=(8,)), "at least two depths")])
def test_bad_settings_are_refused(given, match):
    with pytest.raises(SettingsError, match=match):
        training.run("trained-ode-convergence", checkpoint_dir=None, **given)


def test_cohen_scaling_refuses_the_sigmoid():
    with pytest.raises(SettingsError, match="takes tanh, relu"):
        training.run("cohen-scaling", activations=("sigmoid",), checkpoint_dir=None)
