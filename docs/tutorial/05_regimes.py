# %% [markdown]
# # Scaling regimes and the phase diagram
#
# [Tutorial 2](02_sde_or_ode.md) found that the scaling $\alpha_L = L^{-\beta}$ that gives a deep ResNet a
# non-trivial limit depends on the weights: $\beta = 1/2$ for i.i.d. weights, $\beta = 1$ for smooth ones.
# This page looks at the same question at initialisation for the model Marion et al. use throughout, and
# then for a whole family of weights in between: fractional Gaussian noise with Hurst index $H$. The result
# is their phase diagram (Fig. 7): the critical $\beta$ as a function of $H$. Reference:
# [Theory §5](../theory.md#s5).

# %%
import os
QUICK = os.environ.get("TUTORIAL_QUICK") == "1"  # the test suite runs this page at small sizes

# %%
import numpy as np
import torch

from validation import phase, regimes

torch.set_num_threads(1)  # small batched products: one thread is faster (the command lines do the same)

FIG1_SIZE = (dict(samples=10, depths=(10, 30, 100)) if QUICK
             else dict(samples=50, depths=(10, 20, 50, 100, 200, 500, 1000)))

PHASE_SIZE = (dict(hursts=(0.3, 0.7), betas=np.linspace(0.2, 1.3, 12), depth=128, networks=2, inputs=2) if QUICK
              else dict(hursts=np.linspace(0.05, 0.95, 19), betas=np.linspace(0.2, 1.3, 23), depth=1000,
                        networks=8, inputs=8))

# %% [markdown]
# ## Three regimes
#
# The model is Marion et al.'s (4), with an input layer $A$ and the res-3 block $g(h, W) = \mathrm{ReLU}(Wh)$:
#
# $$
# h_0 = A x, \qquad h_{k+1} = h_k + L^{-\beta}\, V_{k+1}\, \mathrm{ReLU}(W_{k+1} h_k), \qquad F(x) = B h_L .
# $$
#
# At initialisation, how far does the network move its input, and how far does backpropagation move the
# gradient? With $p_k = \partial\mathcal L / \partial h_k$ for a squared loss, the study measures
#
# $$
# r_h = \frac{\lVert h_L - h_0 \rVert}{\lVert h_0 \rVert}, \qquad
# r_p = \frac{\lVert p_0 - p_L \rVert}{\lVert p_L \rVert}
# $$
#
# and sorts each $\beta$ into one of three regimes by how $r$ behaves as $L$ grows:
#
# - **explosion**: $r \to \infty$. The output, or the gradient, blows up with depth.
# - **identity**: $r \to 0$. The deep network does nothing: every block is negligible.
# - **non-trivial**: $r$ stays of order one. This is the scaling at which a continuous-depth limit exists.
#
# For i.i.d. weights (entries of $\sqrt d\, V$ and $\sqrt d\, W$ symmetric with unit variance) Marion et al.
# prove (Lemma 14)
#
# $$
# \Bigl(1 + \tfrac{\alpha_L^2}{2}\Bigr)^L - 1 \;\le\; \mathbb E\, r_h^2 \;\le\; \bigl(1 + \alpha_L^2\bigr)^L - 1,
# \qquad \alpha_L = L^{-\beta}.
# $$
#
# Since $(1 + c L^{-2\beta})^L \approx \exp(c L^{1-2\beta})$, this means that for $\beta < 1/2$ $r_h$
# explodes, exponentially in a power of $L$ (ReLU blocks are not bounded, unlike the $\tanh$ of Tutorial 2).
# For $\beta > 1/2$, $\mathbb E r_h^2 \approx c L^{1-2\beta} \to 0$. At $\beta = 1/2$ it lies between
# $e^{1/2} - 1$ and $e - 1$. So the critical $\beta$ is $1/2$, and Proposition 7 gives the same bounds for
# $r_p$.
#
# ## The i.i.d. case: `validation.regimes.run("fig1", …)`
#
# The preset `fig1` is the setting of the paper's Figures 1 and 3: res-3, $d = 40$, i.i.d. uniform weights
# $\mathcal U(-\sqrt{3/d}, \sqrt{3/d})$, $\beta \in \{1/4, 1/2, 1\}$, $L$ from 10 to 1000, 50 networks.
# For each $\beta$ the study fits the slope $s$ of $\log(\text{median } r)$ against $\log L$ over the
# top decade of depths. It calls the regime *explosion* if $s > 0.15$, *identity* if $s < -0.15$, and
# *non-trivial* otherwise. It estimates the critical $\beta$ as the interpolated zero of $s(\beta)$, and it
# checks the Lemma 14 bounds at every depth.

# %%
fig1 = regimes.run("fig1", **FIG1_SIZE)
print(fig1.table())

# %%
figure_fig1 = fig1.plot()
figure_fig1

# %% [markdown]
# ![Forward and backward ratios against depth for three scalings, i.i.d. weights](../figures/tutorial_05_fig1.png)
#
# *Marion et al.'s Fig. 1 and 3 reproduced: res-3, $d = 40$, i.i.d. uniform weights, 50 networks per
# point, seed 0. Top row: the forward ratio $r_h$. Bottom row: the gradient ratio $r_p$. One column per
# $\beta$. Grey dots are the individual networks. Orange is the median, whose slope decides the regime
# named (and coloured) in each panel's title. Green squares are the root-mean-square ratio with ±2 standard
# errors. The purple band is the square root of the Lemma 14 / Proposition 7 bounds on $\mathbb E r^2$,
# which the green squares should sit in. Left, $\beta = 1/4$: explosion. Middle, $\beta = 1/2$: flat,
# non-trivial. Right, $\beta = 1$: the identity, with slope close to $1/2 - \beta = -1/2$.*
#
# The verdict and the estimated critical $\beta$, printed by the code. At full size with seed 0 the
# critical $\beta$ comes out at 0.514 for $r_h$ and 0.518 for $r_p$ (prediction $1/2$), and all checks
# pass.

# %%
numbers = fig1.numbers
for entry in numbers["per_beta"]:
    print(f"β = {entry['beta']:<4g}: r_h slope {entry['r_h']['slope']:+.3f} -> {entry['r_h']['class']:<11}"
          f"  r_p slope {entry['r_p']['slope']:+.3f} -> {entry['r_p']['class']}")

critical = numbers["critical_beta_estimate"]
print(f"critical β: r_h {critical['r_h']:.3f}, r_p {critical['r_p']:.3f} (predicted {numbers['predicted_critical_beta']:g});"
      f" verdict {fig1.verdict}")

# %% [markdown]
# ## Between i.i.d. and smooth: fractional weights
#
# i.i.d. weights are rough in depth and smooth weights are regular. **Fractional Gaussian noise**
# interpolates between them. Each entry's sequence $(\sqrt d\, V_{k,ij})_{k=1..L}$ is a stationary Gaussian
# sequence with unit variance and
#
# $$
# \operatorname{Cov}(V_k, V_{k+j}) \propto \tfrac12\bigl(|j+1|^{2H} - 2|j|^{2H} + |j-1|^{2H}\bigr),
# \qquad \operatorname{Var}\Bigl(\sum_{k=1}^{L} V_k\Bigr) \propto L^{2H}.
# $$
#
# $H = 1/2$ is the i.i.d. case. For $H > 1/2$ neighbouring layers are positively correlated, more and more
# coherent as $H \to 1$, the smooth case. For $H < 1/2$ they are anti-correlated. Tutorial 2's first-order
# argument, $r_h \approx L^{-\beta}\lVert\sum_k V_k\, g(h_0, \theta_k)\rVert$, now predicts growth like
# $L^{H - \beta}$, so a critical $\beta = H$. For $H < 1/2$ that cannot be the whole story. $W_k$ is
# fractional too, and $\mathrm{ReLU}(W_k h)$ has a non-zero mean plus a fluctuation. The product of the
# fluctuation with $V_k$ (two independent zero-mean sequences) decorrelates, and its sum grows like
# $\sqrt L$ whatever $H < 1/2$. The prediction is therefore
#
# $$
# \beta_c(H) = \max\bigl(H, \tfrac12\bigr),
# $$
#
# which is what Marion et al. observe (their Fig. 7).
#
# ## The phase diagram: `validation.phase.run(…)`
#
# For each $H$ on a grid, the study draws the networks' weights once and runs every $\beta$ on them. For
# each cell $(H, \beta)$ it records the median over networks × inputs of $\log_{10} r_h$ and
# $\log_{10} r_p$ at depth $L$. It measures the critical $\beta$ in two ways:
#
# - **depth invariance** (the definition): the $\beta$ at which the median $r$ is the same at depth $L$ and
#   at $L' = L/4$, the zero of the slope between the two depths, found by interpolation in $\beta$;
# - **level crossing**: the $\beta$ at which the median $r$ equals 1 at depth $L$ (the paper's black zone).
#   It is biased at finite $L$ by the constant in $r \approx c\, L^{H - \beta}$.
#
# It PASSes when the depth-invariance $\beta_c(H)$ of $r_h$ lies within 0.05 of $\max(H, 1/2)$ on average
# over $H$. The full size here is a coarser grid than the paper's 51 × 70, at the paper's depth and width
# ($L = 1000$, $d = 40$). `workers=1` keeps everything in this process.

# %%
diagram = phase.run(**PHASE_SIZE, workers=1)
print(diagram.table())

# %%
figure_phase = diagram.plot()
figure_phase

# %% [markdown]
# ![Phase diagram: median log ratio over Hurst index and scaling, with the critical-beta curves](../figures/tutorial_05_phase.png)
#
# *The $(H, \beta)$ phase diagram of res-3 with fractional weights ($d = 40$, $L = 1000$, 19 values of
# $H$ × 23 values of $\beta$, 8 networks × 8 inputs per cell, seed 0). Left: the median of
# $\log_{10} r_h$. Right: the median of $\log_{10} r_p$. Colour: red for explosion ($r \gg 1$), white for
# $r \approx 1$, blue for identity ($r \ll 1$). The scale is clipped at $\pm 4$. Dark hatched cells are
# those whose median overflowed float32, counted as explosions. Dashed green: the prediction
# $\beta_c = \max(H, 1/2)$. Gold: the measured depth-invariance critical $\beta$, where $r$ is the same at
# $L = 250$ and $L = 1000$. Magenta: where the median $r$ equals 1 at $L = 1000$.*
#
# How to read it. Fix $H$ and move up in $\beta$: the cells go from red (explosion) through white to blue
# (identity). The critical-$\beta$ curve is the boundary between the two, the one scaling at which depth
# neither amplifies nor kills the signal. That boundary is flat at $1/2$ for rough weights ($H \le 1/2$: an
# SDE-like limit, Tutorials 1–3). For $H > 1/2$ it rises along the diagonal $\beta = H$ towards $\beta = 1$
# as the weights become smooth (an ODE-like limit). The critical $\beta$ measures how regular the weights
# are in depth.
#
# The summary, printed from the result. At full size with seed 0 the depth-invariance estimate of
# $\beta_c(H)$ for $r_h$ is on average 0.028 from $\max(H, 1/2)$ over the 19 values of $H$ (largest gap
# 0.096): PASS.

# %%
result = diagram.numbers
estimates = result["critical_beta"]["depth_r_h"]
for hurst, estimate, predicted in zip(result["hursts"], estimates, result["predicted_critical_beta"]):
    shown = "—" if estimate is None else f"{estimate:.3f}"
    print(f"H = {hurst:.2f}: β_c(r_h) = {shown:>6}, predicted {predicted:.3f}")

print(diagram.numbers["checks"][0]["detail"])
print("verdict:", diagram.verdict)

# %% [markdown]
# Two things the figure shows that the one-line prediction does not:
#
# - The level-crossing curve (magenta) sits below the prediction. At finite $L$, "$r = 1$" depends on the
#   constant $c$ in $r \approx c\,L^{H-\beta}$ (here $c < 1$), not only on the exponent. That is why the
#   check uses depth invariance. Compare the `level_r_h` and `depth_r_h` lines of the table above.
# - The gradient ratio's boundary (right panel, and the `depth_r_p` column of the table) lags behind
#   $\beta = H$ for $H > 1/2$ at this depth and width. It is reported, not checked. [Results: regimes](../results/regimes.md) measures this and explains it: a part
#   of the backward sum that grows like $L^H$ is suppressed by $1/\sqrt d$ at this width.
#
# ## Try it
#
# ```bash
# python -m validation.regimes --preset fig1                # Fig. 1 and 3, a few seconds
# python -m validation.regimes --preset fig4                # smooth weights: critical β = 1
# python -m validation.regimes --preset fig1 --regime fractional --hurst 0.8 --betas 0.6,0.8,1
# python -m validation.phase                                # Fig. 7 at the paper's resolution (about a minute, 2 cores)
# ```
#
# More in [How to: scaling regimes](../howto/regimes.md) and [How to: the phase diagram](../howto/phase.md).
# Every preset's measured numbers, including Fig. 2 (the log-normal output distribution) and Chizat's
# exact formula, are in [Results: regimes](../results/regimes.md).
#
# ## What to take away
#
# - At initialisation a deep ResNet either explodes, collapses to the identity, or, at one critical
#   scaling, stays non-trivial. The critical $\beta$ is where a continuous-depth limit lives.
# - It is $1/2$ for i.i.d. weights (a sum of independent kicks, an SDE) and $1$ for smooth weights (a
#   Riemann sum, an ODE). For fractional weights it is about $\max(H, 1/2)$: regularity in depth decides
#   the scaling.
