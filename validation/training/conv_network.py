"""Cohen et al. (2021) §3.2: the convolutional residual network of their eq. (9), R replicates side by side.

    h_{k+1} = σ(h_k + Δ_k ∗ σ(A_k ∗ h_k) + F_k ∗ h_k),   k = 0, …, L − 1,   σ = ReLU,

with Δ_k, A_k 3×3 kernels and ∗ a convolution (zero padding 1, no biases, no batch normalisation). The layout is
their Appendix D, read from the authors' code (instadeepai/scaling-resnets, ``cifar_model.py``; the paper's
Figs. 11–12 are images): He et al. (2016)'s CIFAR ResNet —

* a stem h_0 = σ(C ∗ x), C a 3×3 kernel from the image's channels to ``width`` channels;
* 4 stages of n₁, n₂, n₃, n₄ blocks with ``width`` × 1, 2, 4, 8 channels; L = n₁ + n₂ + n₃ + n₄ is the number of
  skip connections (the depth of the paper, the number of Δ_k);
* the first block of stages 2–4 halves the image (A_k has stride 2) and doubles the channels, and its skip
  connection is the 1×1 stride-2 projection F_k ∗ h_k, which replaces h_k there (the authors' ``shortcut``); every
  other block has F_k = 0 and keeps the identity;
* the mean over the last stage's pixels (the authors' 4×4 average pool on CIFAR-10), then a linear layer with bias.

Initialisation: PyTorch's default for ``Conv2d`` and ``Linear``, which the authors' code keeps — every weight
U(±1/√fan_in), fan_in = c_in k² (and the linear layer's bias too), from streams ``(seed, *label, name, r)`` per
replicate r, so replicate r is the same network whatever R is. The replicates run as one grouped convolution
(``groups=R``): nothing is shared between them.

The kernels studied (the paper's Figs. 7–8) are A_k and Δ_k; :meth:`CohenConvNet.kernel_runs` lists them in layer
order with the input size of each operator — the size of the image the kernel is applied to (the strided A_k of a
stage's first block at the stage's input size, as the authors' code computes it: the stride-1 operator, whose
norm bounds the strided one's) — in runs of equal shapes, between which increments A_{k+1} − A_k are taken.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F

from limits.seeding import generator

from .networks import Network, layers

__all__ = ["CohenConvNet", "AUTHORS_LAYOUTS", "stage_sizes", "KernelRun"]

#: the authors' layouts (n₁, n₂, n₃, n₄) by depth L (``cifar_model.py``: Net8 … Net121)
AUTHORS_LAYOUTS: dict[int, tuple[int, int, int, int]] = {
    8: (2, 2, 2, 2), 11: (2, 3, 4, 2), 12: (2, 3, 5, 2), 14: (3, 3, 5, 3), 16: (3, 4, 6, 3), 18: (3, 4, 8, 3),
    20: (3, 4, 10, 3), 24: (3, 4, 14, 3), 28: (3, 4, 18, 3), 33: (3, 4, 23, 3), 42: (3, 8, 28, 3),
    50: (3, 8, 36, 3), 65: (3, 8, 51, 3), 80: (4, 12, 60, 4), 100: (4, 18, 74, 4), 121: (4, 31, 82, 4)}

#: a run of kernels of one shape in layer order (n, c_out, c_in, k, k) and the input size n of their operators
KernelRun = tuple[torch.Tensor, int]


def stage_sizes(size: int, stages: int = 4) -> list[int]:
    """The image size entering each stage: a 3×3 stride-2 convolution with padding 1 maps n to ⌊(n − 1)/2⌋ + 1."""
    sizes = [size]
    for _ in range(stages - 1):
        sizes.append((sizes[-1] - 1) // 2 + 1)
    return sizes


def _uniform(shape: tuple[int, ...], bound: float, seed: int, *labels: object, dtype: torch.dtype,
             device: torch.device) -> torch.Tensor:
    """U(±bound) entries of shape (R, …), replicate r from the stream ``(seed, *labels, r)``."""
    replicates, rest = shape[0], shape[1:]
    draws = [torch.rand(rest, generator=generator(seed, *labels, r, device=device), dtype=dtype, device=device)
             for r in range(replicates)]
    return (torch.stack(draws) * 2 - 1) * bound


class CohenConvNet(Network):
    """The eq. (9) network (module docstring) on images of shape ``image_shape`` = (height, width, channels), the
    order in which :mod:`validation.training.data` flattens them; inputs (R, B, height·width·channels)."""

    def __init__(self, *, replicates: int, layout: Sequence[int], width: int, image_shape: tuple[int, int, int],
                 n_out: int, seed: int, label: tuple, dtype: torch.dtype, device: torch.device) -> None:
        if len(layout) != 4 or min(layout) < 1:
            raise ValueError(f"layout {tuple(layout)}: give four stage repeats n₁, n₂, n₃, n₄ ≥ 1")
        height, image_width, colours = image_shape
        if height != image_width:
            raise ValueError(f"images of {height}×{image_width}: square images only")
        self.replicates, self.layout, self.width = replicates, tuple(int(n) for n in layout), width
        self.depth = sum(self.layout)
        self.image_shape, self.sizes = tuple(image_shape), stage_sizes(height)
        self.channels = [width * 2 ** s for s in range(4)]
        R, common = replicates, dict(dtype=dtype, device=device)

        def kernel(name: str, count: int | None, c_out: int, c_in: int, k: int = 3) -> torch.Tensor:
            shape = (R, c_out, c_in, k, k) if count is None else (R, count, c_out, c_in, k, k)
            return _uniform(shape, 1 / math.sqrt(c_in * k * k), seed, *label, name, **common)

        self.params = {"stem": kernel("stem", None, width, colours)}
        for s, (n, c) in enumerate(zip(self.layout, self.channels)):
            if s > 0:
                self.params[f"A{s}_in"] = kernel(f"A{s}_in", None, c, self.channels[s - 1])
                self.params[f"F{s}"] = kernel(f"F{s}", None, c, self.channels[s - 1], 1)
            self.params[f"A{s}"] = kernel(f"A{s}", n - (s > 0), c, c)
            self.params[f"delta{s}"] = kernel(f"delta{s}", n, c, c)
        last = self.channels[-1]
        self.params["W_out"] = _uniform((R, last, n_out), 1 / math.sqrt(last), seed, *label, "W_out", **common)
        self.params["b_out"] = _uniform((R, n_out), 1 / math.sqrt(last), seed, *label, "b_out", **common)
        self.fixed = {}
        self._leaf()

    def _conv(self, h: torch.Tensor, weight: torch.Tensor, stride: int = 1) -> torch.Tensor:
        """Replicate r's kernel on replicate r's channels: h (B, R·c_in, n, n), weight (R, c_out, c_in, k, k)."""
        R, c_out, c_in, k, _ = weight.shape
        return F.conv2d(h, weight.reshape(R * c_out, c_in, k, k), stride=stride, padding=k // 2, groups=R)

    def forward(self, x: torch.Tensor, params: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        p = params or self.params
        R, B = x.shape[:2]
        height, image_width, colours = self.image_shape
        h = x.reshape(R, B, height, image_width, colours).permute(1, 0, 4, 2, 3).reshape(B, R * colours, height,
                                                                                        image_width)
        h = F.relu(self._conv(h, p["stem"]))
        for s in range(4):
            deltas = layers(p[f"delta{s}"])
            if s > 0:  # the stage's first block: stride 2, more channels, the projection F_k as skip connection
                inner = F.relu(self._conv(h, p[f"A{s}_in"], stride=2))
                h = F.relu(self._conv(inner, deltas[0]) + self._conv(h, p[f"F{s}"], stride=2))
                deltas = deltas[1:]
            for A_k, delta_k in zip(layers(p[f"A{s}"]), deltas):
                h = F.relu(h + self._conv(F.relu(self._conv(h, A_k)), delta_k))
        pooled = h.mean(dim=(2, 3)).reshape(B, R, -1).transpose(0, 1)                      # (R, B, channels)
        return torch.baddbmm(p["b_out"][:, None, :], pooled, p["W_out"])

    def kernel_runs(self, replicate: int, params: dict[str, torch.Tensor] | None = None) -> dict[str, list[KernelRun]]:
        """The kernels A_k and Δ_k of one replicate in layer order k = 0, …, L − 1, as runs of one shape with the
        input size of their operators (module docstring): ``{"A": [...], "delta": [...]}``."""
        p = params or self.params
        runs: dict[str, list[KernelRun]] = {"A": [], "delta": []}
        for s, size in enumerate(self.sizes):
            if s > 0:
                runs["A"].append((p[f"A{s}_in"][replicate].detach()[None], self.sizes[s - 1]))
            if p[f"A{s}"].shape[1]:
                runs["A"].append((p[f"A{s}"][replicate].detach(), size))
            runs["delta"].append((p[f"delta{s}"][replicate].detach(), size))
        return runs
