"""cohen-conv (Cohen et al. 2021 §3.2): the eq. (9) network against a plain re-implementation of the authors'
layout, its kernels in layer order at their operators' input sizes, Table 1 on spectral norms, the checks on
planted statistics, the layouts and the automatic choice of images."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from validation import training
from validation.core.settings import SettingsError
from validation.training import data as data_module
from validation.training.cohen import decision_procedure
from validation.training.cohen_conv import CohenConv, kernel_statistics, layouts
from validation.training.conv_network import AUTHORS_LAYOUTS, CohenConvNet, stage_sizes
from validation.training.experiment import power_fit
from validation.training.spectral import conv_operator_norms

COMMON = dict(width=3, image_shape=(12, 12, 2), n_out=10, seed=5, label=("test",), dtype=torch.float64,
              device=torch.device("cpu"))


def _reference(params: dict[str, torch.Tensor], x: torch.Tensor, shape: tuple[int, int, int]) -> torch.Tensor:
    """The authors' ResNet (cifar_model.py: BasicBlock, shortcut, 4 stages, average pool, linear) with plain
    convolutions, on one replicate's parameters."""
    height, width, colours = shape
    h = F.relu(F.conv2d(x.reshape(-1, height, width, colours).permute(0, 3, 1, 2), params["stem"], padding=1))
    for s in range(4):
        deltas, As = list(params[f"delta{s}"]), list(params[f"A{s}"])
        if s > 0:
            out = F.conv2d(F.relu(F.conv2d(h, params[f"A{s}_in"], stride=2, padding=1)), deltas.pop(0), padding=1)
            h = F.relu(out + F.conv2d(h, params[f"F{s}"], stride=2))
        for A, delta in zip(As, deltas):
            h = F.relu(h + F.conv2d(F.relu(F.conv2d(h, A, padding=1)), delta, padding=1))
    return F.avg_pool2d(h, h.shape[-1]).flatten(1) @ params["W_out"] + params["b_out"]


def test_the_network_is_the_authors_layout_and_replicates_are_separate_networks():
    layout = (2, 3, 2, 2)
    alone = CohenConvNet(replicates=1, layout=layout, **COMMON)
    batch = CohenConvNet(replicates=3, layout=layout, **COMMON)
    x = torch.randn(4, 12 * 12 * 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    out = batch.forward(x.expand(3, -1, -1))
    torch.testing.assert_close(out[0], alone.forward(x[None])[0], rtol=1e-13, atol=1e-15)
    for r in range(3):
        torch.testing.assert_close(out[r], _reference({k: v[r] for k, v in batch.params.items()}, x, (12, 12, 2)),
                                   rtol=1e-12, atol=1e-14)
    assert not torch.allclose(out[0], out[1])
    # PyTorch's default initialisation: U(±1/√fan_in), fan_in = c_in k²
    assert float(batch.params["A2"].detach().abs().max()) <= 1 / np.sqrt(12 * 9)
    assert float(batch.params["A2"].detach().std()) == pytest.approx(1 / np.sqrt(12 * 9) / np.sqrt(3), rel=0.05)
    # gradients reach every parameter
    out.sum().backward()
    assert all(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in batch.params.values())


def test_kernels_in_layer_order_at_their_input_sizes():
    layout = (2, 3, 2, 4)
    net = CohenConvNet(replicates=2, layout=layout, **COMMON)
    assert net.depth == 11 and net.sizes == [12, 6, 3, 2] == stage_sizes(12)
    runs = net.kernel_runs(1)
    assert sum(len(k) for k, _ in runs["A"]) == sum(len(k) for k, _ in runs["delta"]) == 11
    # A: stage 1 whole; stages 2–4: the strided entry kernel at the stage's input size, then the rest
    assert [(len(k), size) for k, size in runs["A"]] == [(2, 12), (1, 12), (2, 6), (1, 6), (1, 3), (1, 3), (3, 2)]
    assert [(len(k), size) for k, size in runs["delta"]] == [(2, 12), (3, 6), (2, 3), (4, 2)]
    torch.testing.assert_close(runs["A"][1][0][0], net.params["A1_in"][1].detach())
    statistics = kernel_statistics(runs["delta"])
    norms = torch.cat([conv_operator_norms(k, size) for k, size in runs["delta"]])
    assert statistics["norms"] == pytest.approx(norms.tolist(), rel=1e-14)
    assert statistics["max_norm"] == pytest.approx(float(norms.max()), rel=1e-14)
    assert statistics["root_sum_squares"] == pytest.approx(float(norms.square().sum().sqrt()), rel=1e-14)
    # increments only between kernels of one stage (the authors' get_diffs): never across a change of shape
    within = [conv_operator_norms(k[1:] - k[:-1], size) for k, size in runs["delta"]]
    assert statistics["max_increment"] == pytest.approx(float(torch.cat(within).max()), rel=1e-14)
    assert statistics["noise_qv"] == pytest.approx(float(0.5 * torch.cat(within).square().sum()), rel=1e-12)


def _planted(depths, increment_exponent, replicates=4, seed=0):
    """Statistics whose maximum norm is flat in L (β = 0) and whose largest increment scales as L^p."""
    rng = np.random.default_rng(seed)
    return [[{"max_norm": 2.0 * np.exp(0.02 * rng.standard_normal()),
              "max_increment": L ** increment_exponent * np.exp(0.02 * rng.standard_normal()),
              "root_sum_squares": 3.0 * np.exp(0.02 * rng.standard_normal()),
              "noise_qv": np.exp(0.02 * rng.standard_normal())} for _ in range(replicates)] for L in depths]


@pytest.mark.parametrize("exponent, verdicts", [(0.0, ["PASS", "PASS", "PASS"]), (-1.0, ["PASS", "FAIL", "FAIL"])])
def test_checks_on_planted_statistics(exponent, verdicts):
    """Kernels whose increments do not shrink: Hypothesis 1 fails (the paper's claim, PASS); increments ∝ 1/L
    (a smooth limit, Hypothesis 1): both Fig. 8 checks FAIL; β = 0 is found either way."""
    depths = [8, 16, 32, 64]
    fit = lambda values, offset: power_fit(depths, values, confidence=0.95, resamples=400, seed=offset)  # noqa: E731
    trained = {kind: decision_procedure(_planted(depths, exponent, seed=i), fit, beta_from="max_norm")
               for i, kind in enumerate(("delta", "A"))}
    assert abs(trained["A"]["beta"]["value"]) < 0.05
    assert "cumsum_norm" not in trained["A"]

    checks = CohenConv._checks(trained, SimpleNamespace(replicates=4, depths=depths, confidence=0.95))
    assert [c.verdict for c in checks] == verdicts


def test_layouts_and_bad_settings(capsys):
    assert all(sum(layout) == depth for depth, layout in AUTHORS_LAYOUTS.items())
    settings = training.study.resolve("cohen-conv", training.TrainingSettings(depths=(8, 16)))
    assert layouts(settings) == [(2, 2, 2, 2), (3, 4, 6, 3)]
    settings = training.study.resolve("cohen-conv", training.TrainingSettings(stages=((2, 2, 2, 2), (3, 4, 7, 3))))
    assert settings.depths == (8, 17) and layouts(settings) == [(2, 2, 2, 2), (3, 4, 7, 3)]
    with pytest.raises(SettingsError, match="give others with --stages"):
        layouts(training.study.resolve("cohen-conv", training.TrainingSettings(depths=(8, 17))))
    for argv, words in ((["--stages", "2-2-2-1"], "each from 2"), (["--stages", "2-2-2"], "four stage repeats"),
                        (["--stages", "3-3-3-3,2-2-2-2"], "increasing depth"),
                        (["--stages", "2-2-2-2", "--depths", "9"], "give one of the two"),
                        (["--stages", "2-x"], "n1-n2-n3-n4"), (["--momentum", "1"], "momentum"),
                        (["--dataset", "digits-25", "--depths", "8,11", "--epochs", "1", "--train-size", "64",
                          "--checkpoint-dir", "none"], "holds no images")):
        assert training.main(["--experiment", "cohen-conv", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (argv, err)
    assert training.main(["--experiment", "cohen-scaling", "--stages", "2-2-2-2"]) == 2


def test_auto_finds_cifar_then_fashion_mnist_then_digits(tmp_path, monkeypatch):
    monkeypatch.setitem(data_module.SYSTEM_FOLDERS, "fashion-mnist", tmp_path / "system")
    assert data_module.find_images(None) == ("digits", None)
    assert data_module.find_images(str(tmp_path)) == ("digits", None)
    system = tmp_path / "system"
    system.mkdir()
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        (system / f"{stem}.gz").write_bytes(b"")
    assert data_module.find_images(str(tmp_path)) == ("fashion-mnist", str(system))
    (tmp_path / "cifar-10-batches-bin").mkdir()
    (tmp_path / "cifar-10-batches-bin" / "test_batch.bin").write_bytes(b"")
    assert data_module.find_images(str(tmp_path)) == ("cifar10", str(tmp_path))
    settings = training.study.resolve("cohen-conv", training.TrainingSettings(data_dir=str(tmp_path / "none")))
    assert (settings.dataset, settings.data_dir) == ("fashion-mnist", str(system))
    assert settings.replicates == 5  # the per-data-set preset follows the data set that "auto" found


def test_replicates_preset_depends_on_the_data_set():
    """On the bundled digits the preset trains 33 replicates per depth (what settles β there, measured); the
    other data sets keep 5; a given --replicates wins over both."""
    resolve = training.study.resolve
    assert resolve("cohen-conv", training.TrainingSettings(dataset="digits")).replicates == 33
    assert resolve("cohen-conv", training.TrainingSettings(dataset="fashion-mnist")).replicates == 5
    assert resolve("cohen-conv", training.TrainingSettings(dataset="digits", replicates=7)).replicates == 7
    assert "replicates=33 (digits)/5 (other data sets)" in training.study.listing()
