"""The test functions of a weak error, shared by the weak and multilevel studies so that both measure E f of the same
functions: name → (f on an (N, D) tensor → (N,), its label)."""

from __future__ import annotations

from typing import Callable

import torch

__all__ = ["TEST_FUNCTIONS"]

#: test functions of the weak error: name → (f on a (N, D) tensor → (N,), label)
TEST_FUNCTIONS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], str]] = {
    "sqnorm": (lambda x: (x * x).sum(-1), "f(x) = ||x||^2"),
    "cos": (lambda x: torch.cos(x).mean(-1), "f(x) = mean_j cos(x_j)"),
}
