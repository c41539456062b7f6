# %% [markdown]
# # Why an SDE, why an ODE
#
# Take one residual recursion,
#
# $$
# h_{k+1} = h_k + \alpha_L\, V_{k+1}\, \sigma(h_k), \qquad k = 0, \dots, L - 1, \qquad \alpha_L = L^{-\beta},
# $$
#
# and ask two questions: for which scaling $\alpha_L$ does $h_L$ have a non-trivial limit as $L \to \infty$,
# and what is that limit? The answer depends on how the weights $V_1, \dots, V_L$ are drawn:
#
# - **i.i.d. weights** need $\alpha_L = L^{-1/2}$, and the limit is a **stochastic** differential equation;
# - **smooth weights**, $V_k = \mathcal V(k/L)$ for a smooth random function $\mathcal V$, need
#   $\alpha_L = 1/L$, and the limit is an **ordinary** differential equation.
#
# Both answers come from one fact about sums: $L$ independent terms of size $a$ add up to about
# $a\sqrt L$, while $L$ coherent terms add up to $aL$. This page derives the two limits and then checks the
# scalings numerically. The reference is [Theory §1–2 and §5](../theory.md#s1).

# %%
import os
QUICK = os.environ.get("TUTORIAL_QUICK") == "1"  # the test suite runs this page at small sizes

# %%
import numpy as np
import torch
from validation.core.plots import new_figure  # a Matplotlib figure a notebook shows as an image

import limits

torch.set_num_threads(1)  # tiny tensors: one thread is faster (the package's command lines do the same)

WIDTH = 10                                                   # d
NETWORKS = 20 if QUICK else 200                              # independent weight draws per depth
DEPTHS = [16, 32, 64, 128] if QUICK else [16, 32, 64, 128, 256, 512, 1024]
BETAS = (0.25, 0.5, 1.0, 1.5)                                # alpha_L = L^-beta

# %% [markdown]
# ## i.i.d. weights: a sum of many small independent kicks is a Brownian motion
#
# Let the entries of $V_k$ be i.i.d. with mean $0$ and variance $1/d$. The network only ever uses the
# weights through their partial sums
#
# $$
# W^L_t = \alpha_L \sum_{k=1}^{\lfloor tL \rfloor} V_k, \qquad
# h_{k+1} - h_k = \bigl(W^L_{(k+1)/L} - W^L_{k/L}\bigr)\, \sigma(h_k).
# $$
#
# An entry of $W^L_t$ is a sum of $\lfloor tL\rfloor$ independent terms, so its variance is
#
# $$
# \operatorname{Var}\bigl(W^L_t\bigr)_{ij} = \lfloor tL \rfloor\, \frac{\alpha_L^2}{d} \approx \frac{t}{d}\, L^{1 - 2\beta}.
# $$
#
# - $\beta = 1/2$ is the only choice that keeps it of order one. Then each entry of $W^L$ has independent
#   increments of variance $\mathrm dt/d$ and, by the central limit theorem (Donsker's theorem for the whole
#   path), converges to $B/\sqrt d$ for a matrix $B$ of independent standard Brownian motions: $L$ i.i.d.
#   terms of variance $1/L$ become $\mathrm dB$. The law of the entries does not matter, only the variance.
# - The recursion then reads $h_{k+1} - h_k = \frac{1}{\sqrt d}\,\Delta B_k\, \sigma(h_k)$: an
#   Euler–Maruyama step of
#
# $$
# \mathrm dH_t = \frac{1}{\sqrt d}\,\mathrm dB_t\,\sigma(H_t).
# $$
#
# - It is an **Itô** SDE because $\sigma$ is evaluated at $h_k$, *before* the layer's weights $V_{k+1}$
#   act, and $V_{k+1}$ is independent of $h_k$. An evaluation at the midpoint of the step would give the
#   Stratonovich equation instead, which has an extra drift.
# - $\beta < 1/2$: the partial sums have variance $\propto L^{1-2\beta} \to \infty$, and $h_L$ blows up.
#   $\beta > 1/2$: they vanish like $L^{1/2-\beta}$, and $h_L \to h_0$: the network becomes the identity.
#
# ## Smooth weights: a sum of many small coherent kicks is an integral
#
# Now let $V_k = \mathcal V(k/L)$ for a random but smooth (say Lipschitz) matrix-valued function
# $\mathcal V$. Neighbouring layers get almost the same weights, so their contributions do not cancel. With
# $\alpha_L = 1/L$,
#
# $$
# h_L - h_0 = \sum_{k=0}^{L-1} \frac1L\, \mathcal V\!\left(\tfrac{k}{L}\right) \sigma(h_k)
# $$
#
# is a Riemann sum, and the recursion is the explicit Euler scheme, with step $1/L$, of the neural ODE
#
# $$
# \frac{\mathrm dH_t}{\mathrm dt} = \mathcal V_t\, \sigma(H_t).
# $$
#
# With $\alpha_L = L^{-\beta}$ the same sum is $L^{1-\beta}$ times a Riemann sum. So $\beta = 1$ is
# critical, $\beta < 1$ explodes and $\beta > 1$ collapses to the identity.
#
# ## The prediction, in one line
#
# To first order in $\alpha_L$ (while $h_k$ stays near $h_0$), $h_L - h_0 \approx \alpha_L \sum_k V_k\,
# \sigma(h_0)$. The size of that sum gives the exponent of the ratio $r_h = \lVert h_L - h_0\rVert /
# \lVert h_0\rVert$ as a function of depth:
#
# | weights | size of $\alpha_L \sum_k V_k$ | $r_h$ grows like | critical $\beta$ |
# |---|---|---|---|
# | i.i.d. | $L^{-\beta}\sqrt L$ | $L^{1/2 - \beta}$ | $1/2$ |
# | smooth | $L^{-\beta} L$ | $L^{1 - \beta}$ | $1$ |
#
# The first-order argument is accurate while $r_h$ is small, in the identity regime. At the critical
# $\beta$ the limit theorems above give the exponent $0$. In the explosion regime the argument is only a
# heuristic. With $\sigma = \tanh$, which is bounded, each layer's kick is at most
# $\alpha_L \lVert V_k \rVert$, so the growth stays polynomial with roughly the same exponent. With unbounded blocks (ReLU, the identity) the explosion is exponential
# in $L$; see [Tutorial 5](05_regimes.md).
#
# ## Checking the scalings numerically
#
# We run the recursion with $\sigma = \tanh$, $d = 10$, at several depths and for the four values of
# $\beta$ above at once. The i.i.d. weights are Gaussian with variance $1/d$, drawn afresh for every
# depth. The smooth weights are `limits.SmoothGaussianProcess`: every entry is a Gaussian process with an
# RBF kernel of length-scale $0.1$ and variance $1/d$, the initialisation Marion et al. use. It can be
# evaluated exactly at any $t$, so the networks of all depths read **the same** function $\mathcal V$ at
# their own grids $k/L$.

# %%
def median_ratio(weights, depth):
    """Median over networks of r_h = |h_L - h_0| / |h_0|, for every beta at once.

    weights: the layer weights, shape (depth, networks, d, d)."""
    h0 = torch.randn(NETWORKS, WIDTH, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    alpha = torch.tensor([depth ** -beta for beta in BETAS], dtype=torch.float64).view(-1, 1, 1)
    h = h0.expand(len(BETAS), NETWORKS, WIDTH).clone()        # one copy of each network per beta
    for k in range(depth):
        h = h + alpha * torch.einsum("nij,bnj->bni", weights[k], torch.tanh(h))
    r = (h - h0).norm(dim=-1) / h0.norm(dim=-1)               # shape (len(BETAS), NETWORKS)
    return r.median(dim=-1).values.numpy()


iid_generator = torch.Generator().manual_seed(0)
smooth = limits.SmoothGaussianProcess(samples=NETWORKS, shape=(WIDTH, WIDTH), variance=1 / WIDTH,
                                      lengthscale=0.1, seed=0)

ratios = {"i.i.d.": [], "smooth": []}
for depth in DEPTHS:
    iid_weights = torch.randn(depth, NETWORKS, WIDTH, WIDTH, dtype=torch.float64,
                              generator=iid_generator) / WIDTH**0.5
    smooth_weights = smooth(torch.arange(depth, dtype=torch.float64) / depth)   # V(k/L), k = 0..L-1
    ratios["i.i.d."].append(median_ratio(iid_weights, depth))
    ratios["smooth"].append(median_ratio(smooth_weights, depth))

ratios = {kind: np.array(values) for kind, values in ratios.items()}     # shape (depths, betas)

# %% [markdown]
# For each kind of weights and each $\beta$ we fit the slope of $\log(\text{median } r_h)$ against
# $\log L$ and compare it with the first-order prediction from the table.

# %%
predicted = {"i.i.d.": lambda beta: 0.5 - beta, "smooth": lambda beta: 1.0 - beta}
print(f"{'weights':>8} {'beta':>5} | {'median r_h at L = ' + str(DEPTHS[0]):>22} {'... at L = ' + str(DEPTHS[-1]):>16}"
      f" | {'measured exponent':>17} {'predicted':>9}")

measured = {}
for kind, values in ratios.items():
    for j, beta in enumerate(BETAS):
        exponent = np.polyfit(np.log(DEPTHS), np.log(values[:, j]), 1)[0]
        measured[kind, beta] = exponent
        print(f"{kind:>8} {beta:5.2f} | {values[0, j]:22.4g} {values[-1, j]:16.4g} | {exponent:17.3f} "
              f"{predicted[kind](beta):9.2f}")

# %% [markdown]
# Compare the last two columns. In the identity regime and at the critical $\beta$ the measured exponent
# is close to the prediction. In the explosion regime it is only roughly close, as expected from a
# heuristic.
#
# The same scaling can be right for one kind of weights and wrong for the other. With $\beta = 1/2$,
# i.i.d. weights give a ratio that stays put, while smooth weights give one that keeps growing. With
# $\beta = 1$ it is the other way round. The figure shows the whole table.

# %%
figure_scalings = new_figure(figsize=(10, 4.2))
axes = figure_scalings.subplots(1, 2, sharey=True)
for ax, kind, critical in zip(axes, ratios, (0.5, 1.0)):
    for j, beta in enumerate(BETAS):
        colour = "black" if beta == critical else f"C{j}"
        ax.loglog(DEPTHS, ratios[kind][:, j], "-o", color=colour, ms=4,
                  label=f"β = {beta:g}: exponent {measured[kind, beta]:+.2f} (first order {predicted[kind](beta):+.2f})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("depth L")
    ax.set_title(f"{kind} weights: critical β = {critical:g} (black)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7.5, loc="lower left")

axes[0].set_ylabel(r"median $\|h_L - h_0\| \,/\, \|h_0\|$")
figure_scalings.suptitle(f"$h_{{k+1}} = h_k + L^{{-β}} V_{{k+1}} \\tanh(h_k)$, d = {WIDTH}, "
                         f"{NETWORKS} networks per point", fontsize=11)

figure_scalings

# %% [markdown]
# ![The ratio of the output change to the input norm against depth, for i.i.d. and smooth weights and four scalings](../figures/tutorial_02_scalings.png)
#
# *The median over 200 networks of $r_h = \lVert h_L - h_0\rVert / \lVert h_0\rVert$ against depth $L$
# (log–log) for $\alpha_L = L^{-\beta}$. Left: i.i.d. Gaussian weights. Right: smooth Gaussian-process
# weights. A flat curve means a non-trivial limit. A rising curve means explosion, and a falling one means
# the network tends to the identity. The legend gives each curve's fitted exponent next to the first-order
# prediction ($1/2 - \beta$ for i.i.d. weights, $1 - \beta$ for smooth ones). The critical scaling is drawn
# in black: $\beta = 1/2$ for i.i.d. weights, $\beta = 1$ for smooth ones.*
#
# Two details of the right panel are worth a second look. At $\beta = 1$ the median ratio is not just of
# order one, it is nearly the same number at every depth. All depths read the same function $\mathcal V$,
# so $h_L$ converges, sample by sample, to the ODE's $H_1$: the Riemann sums converge. At $\beta = 1/2$ in
# the left panel the median is also flat, but each network's $h_L$ only converges *in law* here, because
# every depth drew new weights. Reading all depths off one Brownian path, as in
# [Tutorial 1](01_one_path.md), makes the convergence pathwise too.
#
# ## What to take away
#
# - Independent layers need $\alpha_L = L^{-1/2}$: their kicks add up like a random walk, and the limit is
#   the Itô SDE $\mathrm dH = \frac{1}{\sqrt d}\,\mathrm dB\,\sigma(H)$.
# - Smooth layers need $\alpha_L = 1/L$: their kicks add up like a Riemann sum, and the limit is the ODE
#   $\dot H = \mathcal V_t\, \sigma(H)$.
# - A wrong scaling does not give a different limit. It gives none: explosion or identity.
# - In both cases the network is the Euler scheme of its limit, which sets how fast it converges:
#   [Tutorial 3](03_strong_rates.md). A block whose activation is curved at $0$ adds a twist to the SDE
#   case: [Tutorial 4](04_ito_correction.md). Weights between the two extremes (fractional noise) are in
#   [Tutorial 5](05_regimes.md).
