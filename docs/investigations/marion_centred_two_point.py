"""Does (A2) hold for res-2 / res-3 when sqrt(d) W has *centred but skewed* entries?

What it measures
----------------
Monte Carlo estimates of the first half of assumption (A2) of Marion et al.,
"Scaling ResNets in the large-depth regime",

    ||h||^2 / 2  <=  E ||g(h, W)||^2  <=  ||h||^2,        g(h, W) = sigma(W h),

i.e. the ratio r(x) = E||sigma(W x)||^2 / ||x||^2, for d = 40, 2*10^4 draws of W,
sqrt(d) W_ij i.i.d. from the centred, unit-variance, bounded (hence sub-Gaussian)
two-point law

    X = +sqrt((1-p)/p)  with probability p,    X = -sqrt(p/(1-p))  with probability 1-p,

for p in {0.5, 0.1, 0.02}, x in {e_1, -e_1, x_G, -x_G} (x_G a fixed Gaussian
vector), and sigma = ReLU (model res-3) or leaky/parametric ReLU with slope
s = 1/sqrt(2) (model res-2).  For each value it prints whether it lies in the
interval [1/2, 1] that (A2) requires.  Marion et al. (2022 preprint) state
Proposition 1 (ii) for *symmetric* i.i.d. sub-Gaussian entries; Marion et al.
(later version) state it for *centred* i.i.d. sub-Gaussian entries and prove it
through a Lemma 16 that claims E||ReLU(W x)||^2 = E||W x||^2 / 2 for centred
entries.  p = 0.5 (Rademacher) is symmetric; p = 0.1, 0.02 are centred, skewed.

The maths
---------
Each coordinate of W x is S = d^{-1/2} sum_j X_j x_j with E S^2 = ||x||^2 / d, and
the d coordinates are i.i.d., so r(x) = d E[sigma(S)^2] / ||x||^2.

* ReLU: r(x) + r(-x) = d E[S_+^2 + S_-^2] / ||x||^2 = 1 exactly.  Hence the lower
  bound r >= 1/2 for both x and -x forces r(x) = 1/2, i.e. E[S |S|] = 0, for every
  x.  At x = e_1 this is E[X |X|] = p a^2 - (1-p) b^2 = 1 - 2p, so
  r(e_1) = 1 - p and r(-e_1) = p (exact, no d dependence).  For p < 1/2, x = -e_1
  violates (A2) (r = p < 1/2), and Lemma 16's equality fails for +-e_1 alike.
  Since the entries are bounded away from 0, sign(W_i . h) is constant on a cone
  around -e_1, so the failure is not a null set of directions.
* Leaky ReLU, sigma(t) = t_+ - s t_- with s >= 1/sqrt(2): s^2 t^2 <= sigma(t)^2 <= t^2
  pointwise, so s^2 <= r(x) <= 1 for ANY centred unit-variance law (Lemma 17 gives
  E||W x||^2 = ||x||^2); here r(e_1) = (1-p) + s^2 p, r(-e_1) = p + s^2 (1-p).
  So res-2 keeps (A2) without symmetry; res-3 (ReLU) loses it.

How to run
----------
    . .venv/bin/activate
    python docs/investigations/marion_centred_two_point.py

numpy only, fixed seed, about 2 s on 2 CPU cores.  "in?" says whether the
estimate lies in [1/2, 1]: "yes", "edge" (outside, but by less than 3 Monte Carlo
standard errors, i.e. consistent with the boundary value 1/2), or "NO" (outside
by more than 3 standard errors).
"""

import numpy as np

D = 40
DRAWS = 20_000
CHUNK = 2_000
PS = (0.5, 0.1, 0.02)
SLOPE = 1 / np.sqrt(2)  # parametric ReLU slope at the lower end of [1/sqrt(2), 1]
LO, HI = 0.5, 1.0  # interval claimed by (A2) for E||g(h)||^2 / ||h||^2


def two_point(rng, p, size):
    a, b = np.sqrt((1 - p) / p), np.sqrt(p / (1 - p))
    return np.where(rng.random(size) < p, a, -b)


def verdict(value, se):
    if LO <= value <= HI:
        return "yes"
    return "edge" if LO - 3 * se <= value <= HI + 3 * se else "NO"


def main():
    rng = np.random.default_rng(0)
    e1 = np.zeros(D)
    e1[0] = 1.0
    xg = rng.standard_normal(D)
    xs = {"e_1": e1, "-e_1": -e1, "x_G": xg, "-x_G": -xg}
    xmat = np.stack(list(xs.values()), axis=1)  # D x 4
    norms2 = (xmat ** 2).sum(axis=0)

    print(f"d = {D}, draws = {DRAWS}, sqrt(d) W_ij two-point centred unit-variance")
    print(f"(A2) claims {LO} <= E||sigma(Wx)||^2/||x||^2 <= {HI}; "
          f"Lemma 16 (later version) claims exactly 0.5 for ReLU\n")
    head = (f"{'p':>5} {'x':>5} | {'ReLU':>7} {'+-3se':>6} {'exact':>6} {'in?':>4}"
            f" | {'PReLU':>7} {'+-3se':>6} {'exact':>6} {'in?':>4}")
    print(head)
    print("-" * len(head))
    for p in PS:
        relu = np.zeros((DRAWS, 4))
        prelu = np.zeros((DRAWS, 4))
        for start in range(0, DRAWS, CHUNK):
            w = two_point(rng, p, (CHUNK, D, D)) / np.sqrt(D)
            wx = w @ xmat  # CHUNK x D x 4
            pos, neg = np.maximum(wx, 0.0), np.minimum(wx, 0.0)
            relu[start:start + CHUNK] = (pos ** 2).sum(axis=1) / norms2
            prelu[start:start + CHUNK] = (pos ** 2 + SLOPE ** 2 * neg ** 2).sum(axis=1) / norms2
        exact_relu = {"e_1": 1 - p, "-e_1": p}
        exact_prelu = {"e_1": (1 - p) + SLOPE ** 2 * p, "-e_1": p + SLOPE ** 2 * (1 - p)}
        for k, name in enumerate(xs):
            r, q = relu[:, k].mean(), prelu[:, k].mean()
            se_r = relu[:, k].std(ddof=1) / np.sqrt(DRAWS)
            se_q = prelu[:, k].std(ddof=1) / np.sqrt(DRAWS)
            er = f"{exact_relu[name]:.3f}" if name in exact_relu else "  -  "
            eq = f"{exact_prelu[name]:.3f}" if name in exact_prelu else "  -  "
            print(f"{p:>5} {name:>5} | {r:7.4f} {3 * se_r:6.4f} {er:>6} {verdict(r, se_r):>4}"
                  f" | {q:7.4f} {3 * se_q:6.4f} {eq:>6} {verdict(q, se_q):>4}")
        print(f"{'':>5} {'':>5} | ReLU r(x_G) + r(-x_G) = {relu[:, 2].mean() + relu[:, 3].mean():.4f}"
              f" (exactly 1 in expectation)")


if __name__ == "__main__":
    main()
