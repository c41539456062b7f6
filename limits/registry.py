"""Imports every module that registers a pair, so that :func:`limits.pairs.get_pair` sees them all."""

from . import res_ode, res_sde  # noqa: F401
from . import cohen, peluchetti_favaro  # noqa: F401
