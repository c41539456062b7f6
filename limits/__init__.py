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

__version__ = "0.5.0"

__all__ = [
    "get_pair", "make_pair", "pair_names", "PAIRS", "ModelConfig", "Pair", "SDEPair", "ODEPair", "OptionSpec", "number_option",
    "run_network", "PairError",
    "BrownianGrid", "SmoothGaussianProcess", "FractionalNoise",
    "ItoLimit", "matrix_noise_product", "matrix_noise_tangent", "affine_noise", "iid_quadratic_variation", "ito_correction",
    "Activation", "get_activation", "ACTIVATION_NAMES", "ActivationError",
    "__version__",
]
