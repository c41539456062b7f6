"""A deliberately wrong pair for the verdict tests: res-1's network against an SDE whose noise scale is 5%
too large (written as a user's own pair, as in docs/howto/convergence.md). Its error against that limit does
not vanish, so no honest rate fit may PASS it at rate 1/2:

    python -m validation.convergence --model tests/wrong_noise_scale.py:NoiseScale105
"""

from limits.res_sde import Res1Limit, Res1SDE


class NoiseScale105(Res1SDE):
    """res-1's network, paired with dH = 1.05 (s/√d) dB σ(H)."""

    name = "res1-noise-x1.05"
    description = "res-1 network  <->  neural SDE with a 5% too large noise scale (deliberately wrong)"

    def limit_sde(self) -> Res1Limit:
        return Res1Limit(self.activation, 1.05 * self.scale, self.width)
