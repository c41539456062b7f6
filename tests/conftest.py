"""Shared fixtures: keep torch to the machine's 2 cores and float64 by default."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _torch_defaults():
    torch.set_default_dtype(torch.float64)
    yield
