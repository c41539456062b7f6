"""Shared fixtures: keep torch to the machine's 2 cores and float64 by default."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _torch_defaults():
    torch.set_default_dtype(torch.float64)
    yield


@pytest.fixture
def chromium() -> str:
    """The path of a chromium that Playwright can drive (Debian's), or the test is skipped saying what is missing
    (``.ci/run`` installs both when it can)."""
    import shutil

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    if path is None:
        pytest.skip("no chromium here (apt install chromium)")
    return path
