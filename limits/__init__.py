"""Discrete deep ResNets paired with their continuous-depth limits, driven by the same sampled weights.

The public surface, in one place (everything a user composes into a pair or a study):

* pairs — :func:`make_pair`, :func:`get_pair`, :func:`pair_names`, :data:`PAIRS`, :class:`ModelConfig`, the base classes
  :class:`Pair`, :class:`SDEPair`, :class:`ODEPair`, :class:`OptionSpec`, :func:`number_option`,
  :func:`run_network` and :class:`PairError`;
* drivers — :class:`BrownianGrid` (a seeded Brownian path on a dyadic grid, a torchsde ``BaseBrownian``),
  :class:`SmoothGaussianProcess` (smooth RBF-kernel weights, exact at any t) and :class:`FractionalNoise`
  (fractional Gaussian noise);
* the Itô pieces — :class:`ItoLimit`, :func:`matrix_noise_product`, :func:`matrix_noise_tangent`, :func:`affine_noise`,
  :func:`iid_quadratic_variation`, :func:`ito_correction`;
* activations — :class:`Activation`, :func:`get_activation`, :data:`ACTIVATION_NAMES`,
  :class:`ActivationError`.

Models by module: :mod:`limits.res_sde`, :mod:`limits.res_ode`, :mod:`limits.rk_resnets` (midpoint and RK4
blocks of res2-ode's neural ODE), :mod:`limits.cohen`, :mod:`limits.peluchetti_favaro`; trained networks with an
embedding and their infinite-width counterpart: :mod:`limits.embedded_resnet`; the scaling regimes
at initialisation: :mod:`limits.initialisation`, :mod:`limits.chizat`, :mod:`limits.feature_speed`; random streams:
:mod:`limits.seeding`.
"""

from .activations import ACTIVATION_NAMES, Activation, ActivationError, get_activation
from .brownian import BrownianGrid
from .fractional import FractionalNoise
from .ito import ItoLimit, affine_noise, iid_quadratic_variation, ito_correction, matrix_noise_product, matrix_noise_tangent
from .pairs import ModelConfig, ODEPair, OptionSpec, Pair, PairError, SDEPair, number_option, run_network
from .registry import PAIRS, get_pair, make_pair, pair_names
from .smooth import SmoothGaussianProcess

# The version moves with the code (issue 67): setuptools-scm writes it into _version.py at build time and at
# `pip install -e` (pyproject.toml [tool.setuptools_scm]: 0.5.1.devN+g<hash> after the 0.5.0 release); a static
# string here named every later commit "0.5.0". In a checkout the file dates from the last install, which is why a
# result file records git's commit too (validation.core.results.git_commit). Without the file (a source tree never
# built): the installed distribution's version, else "0+unknown", not a release's number.
# ``__build_commit__``: the commit the build read ("g" and its hash, as in the version; None without git) and
# whether its tree had uncommitted changes (``__build_dirty__``): what an installed wheel's result files name as their
# code (validation.core.results.build_commit), where there is no checkout for git to read.
try:
    from ._version import __version__
    from ._version import commit as __build_commit__
    from ._version import dirty as __build_dirty__
except ImportError:
    from importlib import metadata as _metadata

    try:
        __version__ = _metadata.version("resnet-limits")
    except _metadata.PackageNotFoundError:
        __version__ = "0+unknown"
    __build_commit__, __build_dirty__ = None, False
    del _metadata

__all__ = [
    "get_pair", "make_pair", "pair_names", "PAIRS", "ModelConfig", "Pair", "SDEPair", "ODEPair", "OptionSpec", "number_option",
    "run_network", "PairError",
    "BrownianGrid", "SmoothGaussianProcess", "FractionalNoise",
    "ItoLimit", "matrix_noise_product", "matrix_noise_tangent", "affine_noise", "iid_quadratic_variation", "ito_correction",
    "Activation", "get_activation", "ACTIVATION_NAMES", "ActivationError",
    "__version__",
]
