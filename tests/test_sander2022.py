"""sander2022-linear (Sander, Ablin & Peyré 2022, Fig. 2): the scans, the closed-form gradient, and the O(1/L) claim
uniformly over training time, measured at a size that runs in seconds."""

import numpy as np
import pytest
import torch

from validation import training
from validation.core.settings import SettingsError
from validation.training.sander2022 import _LinearNetwork, prefix_products, suffix_products


def _sequential(M, reverse=False):
    """Products M_0 ⋯ M_k (or M_k ⋯ M_{L−1}) one matrix at a time."""
    out, running = [], torch.eye(M.shape[-1], dtype=M.dtype).expand_as(M[:, 0])
    order = range(M.shape[1] - 1, -1, -1) if reverse else range(M.shape[1])
    for k in order:
        running = M[:, k] @ running if reverse else running @ M[:, k]
        out.append(running)
    return torch.stack(out[::-1] if reverse else out, dim=1)


@pytest.mark.parametrize("depth", [1, 2, 5, 13, 16])
def test_the_scans_equal_the_sequential_products(depth):
    M = torch.randn(3, depth, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(depth))
    assert torch.allclose(prefix_products(M), _sequential(M), rtol=1e-12, atol=1e-12)
    assert torch.allclose(suffix_products(M), _sequential(M, reverse=True), rtol=1e-12, atol=1e-12)


def test_the_closed_form_step_is_gradient_descent_on_the_loss():
    generator = torch.Generator().manual_seed(1)
    target = torch.eye(3, dtype=torch.float64) + torch.randn(2, 3, 3, dtype=torch.float64, generator=generator)
    network = _LinearNetwork(7, target)
    network.A = torch.randn(2, 7, 3, 3, dtype=torch.float64, generator=generator)
    A = network.A.clone().requires_grad_(True)
    product = torch.eye(3, dtype=torch.float64).expand(2, 3, 3)
    for k in range(7):
        product = product @ (torch.eye(3, dtype=torch.float64) + A[:, k] / 7)
    loss = (product - target).square().mean(dim=(1, 2))
    gradient, = torch.autograd.grad(loss.sum(), A)
    before = network.step(0.1)
    assert torch.allclose(before, loss.detach(), rtol=1e-12)
    assert torch.allclose(network.A, A.detach() - 0.1 * 7 * gradient, rtol=1e-12, atol=1e-14)


def test_trained_linear_weights_converge_at_rate_one_uniformly_in_training_time():
    """Depths 8 … 64 against 1024, float64, 100 steps: the rate of ‖𝒜^L − 𝒜‖ at each checked iteration and the
    rate of its supremum over training are 1 within ±0.1; the successive differences agree without a reference."""
    result = training.run("sander2022-linear", depths=(8, 16, 32, 64, 1024), epochs=100, replicates=4,
                          resamples=200, dtype="float64", checkpoint_dir=None)
    n, record = result.numbers, result.records["all-depths"]
    assert n["check_iterations"] == [2, 3, 33, 100]
    assert {0, 1, *n["check_iterations"]} <= set(record["iterations"])
    position = {t: i for i, t in enumerate(record["iterations"])}
    for t in n["check_iterations"]:
        assert -n["rates"]["A"][position[t] - 1]["slope"] == pytest.approx(1.0, abs=0.1)
        assert -n["successive_rates"]["A"][position[t] - 1]["slope"] == pytest.approx(1.0, abs=0.1)
    assert -n["supremum_rate"]["slope"] == pytest.approx(1.0, abs=0.1)
    assert result.verdict == "PASS"
    # one step from A = 0 moves every layer alike: every depth is still the limit, distance 0
    assert np.all(np.asarray(record["distance"]["A"][position[1]]) == 0)
    # training works: the losses fall (the largest final loss is well below the first)
    first = np.asarray(record["loss"][0], dtype=float)
    assert n["largest_final_loss"] < 0.1 * first.min()


def test_targets_have_positive_determinant_and_differ_per_replicate():
    settings = training.TrainingSettings(experiment="sander2022-linear", width=2, replicates=16, dtype="float64")
    networks = training.EXPERIMENTS["sander2022-linear"].networks(settings, [2, 4], torch.device("cpu"))
    targets = networks[0].target
    assert torch.all(torch.linalg.det(targets) > 0)
    assert len({tuple(t.flatten().tolist()) for t in targets}) == 16
    assert torch.equal(networks[1].target, targets)


def test_a_training_set_size_is_refused():
    with pytest.raises(SettingsError, match="X = I_d"):
        training.run("sander2022-linear", train_size=10, checkpoint_dir=None)
