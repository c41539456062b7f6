# %% [markdown]
# # The backward pass is a limit too
#
# The earlier lessons compared the *forward* pass: a res-1 network with i.i.d. weights is the Euler–Maruyama
# scheme of $\mathrm dH = \frac{s}{\sqrt d}\,\mathrm dB\,\sigma(H)$, and with smooth weights the Euler scheme of a
# neural ODE. Training reads the *backward* pass: the gradient of a loss. This page shows that the gradient is a
# numerical scheme too, for the gradient of the limit, and measures its rate on the same weights and the same
# Brownian path: $1/2$ for the SDE, $1$ for the ODE. It then asks which way of computing the limit's gradient to
# trust. Background: [Theory §7](../theory.md#s7).

# %%
import os
QUICK = os.environ.get("TUTORIAL_QUICK") == "1"  # the test suite runs this page at small sizes

# %%
import numpy as np
import torch
from validation.core.plots import new_figure  # a Matplotlib figure a notebook shows as an image

from validation import gradients

torch.set_num_threads(1)  # small tensors: one thread is faster (the command line does the same)

# only the network against the limit: no adjoint-method comparison, no backsolve (both are discussed below)
ONLY_BACKPROP = dict(methods=("none",), backsolve=False)
# res-1 skips the backward state p(1/2), which doubles its cost; the ODE pair measures it (default times: 0.5)
SDE_SIZE = (dict(samples=32, depths=(4, 8, 16, 32), backward_times=()) if QUICK
            else dict(samples=250, depths=(4, 8, 16, 32, 64, 128, 256), backward_times=()))
ODE_SIZE = (dict(samples=16, depths=(8, 16, 32, 64)) if QUICK
            else dict(samples=200, depths=(8, 16, 32, 64, 128, 256, 512, 1024)))

# %% [markdown]
# ## Backpropagation is a backward recursion
#
# Write the network as $h_{k+1} = F_k(h_k)$, $k = 0, \dots, L-1$, with a loss $\ell(h_L)$ of the last state
# (here $\ell(h) = \tfrac12\lVert h\rVert^2$, so $\nabla\ell(h) = h$). The chain rule, read from the top layer
# down, gives the **backward states** $p_k = \partial\ell/\partial h_k$:
#
# $$
# p_L = \nabla\ell(h_L), \qquad p_k = \bigl(\partial F_k(h_k)\bigr)^{\!\top} p_{k+1}, \qquad k = L-1, \dots, 0,
# $$
#
# and $p_0$ is the input gradient. For res-1, $F_k(h) = h + \frac{s}{\sqrt d}\,\Delta B_k\,\sigma(h)$ with
# $\Delta B_k = B_{(k+1)/L} - B_{k/L}$, so
#
# $$
# \partial F_k(h_k) = I + \frac{s}{\sqrt d}\,\Delta B_k\,\mathrm{diag}\bigl(\sigma'(h_k)\bigr).
# $$
#
# Unroll the recursion: $p_0 = J_L^\top \nabla\ell(h_L)$, where $J_k = \partial h_k/\partial h_0$ is the product of
# the layer Jacobians, $J_{k+1} = J_k + \frac{s}{\sqrt d}\,\Delta B_k\,\mathrm{diag}(\sigma'(h_k))\,J_k$, $J_0 = I$.
# That recursion is the Euler–Maruyama step, on the same increments, of the **first-variation equation**
#
# $$
# \mathrm dJ_t = \frac{s}{\sqrt d}\,\mathrm dB_t\,\mathrm{diag}\bigl(\sigma'(H_t)\bigr)\,J_t, \qquad J_0 = I
# \qquad (\text{Itô, the same Brownian path}),
# $$
#
# which is what one gets by differentiating $\mathrm dH = \frac{s}{\sqrt d}\,\mathrm dB\,\sigma(H)$ in its initial
# value: the derivative of an Euler–Maruyama step is the Euler–Maruyama step of the derivative. Its limit is the
# **adjoint**
#
# $$
# a(t) = J_{t\to1}^\top\,\nabla\ell(H_1), \qquad J_{t\to1} = \frac{\partial H_1}{\partial H_t} = J_1 J_t^{-1},
# \qquad a(1) = \nabla\ell(H_1), \quad a(0) = \frac{\partial\,\ell(H_1)}{\partial H_0},
# $$
#
# and $p_k$ is compared with $a(k/L)$. So the pair $(h_k, J_k)$ is exactly Euler–Maruyama for the pair $(H, J)$:
# the network's gradient is the Euler scheme of the limit's gradient. The rate of the forward pass carries over:
# **$1/2$** for res-1 (the noise is still non-commutative, so Clark–Cameron's bound of
# [Tutorial 3](03_strong_rates.md) still applies), and **$1$** for a smooth pair, where backpropagation
# $p_k = p_{k+1} + \frac1L\,\partial_h F(t_k, h_k)^\top p_{k+1}$ is the Euler scheme of the ODE adjoint
# $\dot a = -\partial_h F(t, H_t)^\top a$ ([Theory §7b–7c](../theory.md#s7b)).
#
# One subtlety: $a(t)$ depends on the increments of $B$ *after* $t$, so it is not adapted and solves no forward
# Itô equation. The formula above defines it from the forward processes $H$ and $J$ alone, and that is how the
# package computes both sides: it carries the tangents $J$ forward beside the state (memory flat in $L$) and
# reads $p_0 = J_L^\top\nabla\ell(h_L)$, equal to backpropagation's to rounding. The limit's side is the
# convergence study's reference, Euler–Maruyama on a grid 16 times finer (SDE) or dopri5 at tolerance
# $10^{-10}$ (ODE), applied to $H$ and $J$ together.
#
# ## Measuring both rates: `validation.gradients.run`
#
# The call mirrors `convergence.run` of [Tutorial 3](03_strong_rates.md), with the same samples, paths and rate fit
# (bootstrap interval over whole paths, the equivalence verdict within theory $\pm 0.05$). The table's rows are the
# forward state $h_L$ (shown, judged by the convergence study), the input gradient $\partial\ell/\partial h_0$, and
# the gradient in a multiplier $\theta$ of every residual branch, $h_{k+1} = h_k + \theta\,\Delta_k(h_k)$ at
# $\theta = 1$. The full size of res-1 here is the convergence study's first block (250 samples, $L = 4 \dots 256$)
# without $p(\tfrac12)$, under 20 s; the command line's default runs 1000.

# %%
res1 = gradients.run("res1", **SDE_SIZE, **ONLY_BACKPROP)
print(res1.table())

# %% [markdown]
# The smooth pair res2-ode, $h_{k+1} = h_k + \frac1L V_{k+1}\tanh(W_{k+1}h_k)$, against its neural ODE, at the
# command line's size (200 weight draws, $L = 8 \dots 1024$), about 30 s. Here the backward state at mid-depth,
# $p_{L/2}$ against $a(\tfrac12)$, is measured too.

# %%
res2 = gradients.run("res2-ode", **ODE_SIZE, **ONLY_BACKPROP)
print(res2.table())

# %% [markdown]
# The rates side by side:

# %%
print(f"{'pair':>9} {'quantity':>12}   rate   95% interval     theory")
for result in (res1, res2):
    for key, fit in result.fits.items():
        print(f"{result.model['name']:>9} {key:>12}  {fit.rate:6.3f}  [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]   {result.theory_rate:g}")
    print(f"{result.model['name']:>9} verdict: {result.verdict}")

# %% [markdown]
# At full size with seed 0 the input gradient of res-1 converges at rate 0.509, 95% interval [0.483, 0.532]
# (the forward state at 0.519 [0.498, 0.539]), and res2-ode's input gradient at 0.997 [0.995, 0.998] (forward
# state 0.998 [0.998, 0.999]), its backward state at mid-depth at 0.980 [0.977, 0.983] and its branch-multiplier
# gradient at 0.977 [0.967, 0.986]: PASS. res-1's verdict reads
# INCONCLUSIVE, on the branch-multiplier gradient alone (0.553 [0.502, 0.604]): its interval is too wide at 250
# samples to sit within $0.5 \pm 0.05$. At 1000 samples, the command line's default, it PASSes at 0.518
# [0.484, 0.545]: the branch gradient varies more from path to path than the others, and needs more of them
# ([Results: gradients](../results/gradients.md)).

# %%
figure_rates = new_figure(figsize=(6.6, 4.6))
ax = figure_rates.add_subplot()
for result, color, slope, slope_text in ((res1, "C0", 0.5, "1/2"), (res2, "C3", 1.0, "1")):
    depths, errors, fit = np.array(result.depths), result.rms("input"), result.fits["input"]
    name = result.model["name"]
    ax.loglog(depths, errors, "-", color=color, lw=1.2)
    ax.loglog(depths[fit.fitted], errors[fit.fitted], "o", color=color,
              label=f"{name}: input gradient, rate {fit.rate:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]")
    ax.loglog(depths[~fit.fitted], errors[~fit.fitted], "o", color=color, mfc="white")
    ax.loglog(depths, result.rms("state"), ":", color=color, alpha=0.7, label=f"{name}: forward state $h_L$")
    guide = 0.6 * errors[0] * (depths / depths[0]) ** -slope
    ax.loglog(depths, guide, "k--" if slope == 0.5 else "k-.", lw=0.9, label=f"slope −{slope_text}")

ax.set_xscale("log", base=2)
ax.set_xlabel("depth L")
ax.set_ylabel(r"RMS error $(\mathbb{E}\|p_0 - a(0)\|^2)^{1/2}$")
ax.set_title(f"the network's gradient against the limit's (N = {res1.settings.samples} and "
             f"{res2.settings.samples}, seed 0)", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=7.5)
figure_rates

# %% [markdown]
# ![RMS error of the input gradient against depth for res-1 (slope −1/2) and res2-ode (slope −1)](../figures/tutorial_06_rates.png)
#
# *The input gradient's RMS error $(\mathbb E\lVert p_0 - a(0)\rVert^2)^{1/2}$ against depth, log–log. Blue: res-1
# ($d = 10$, tanh, 250 paths), parallel to the dashed slope $-1/2$. Red: res2-ode ($d = 10$, 200 weight draws),
# parallel to the dash-dotted slope $-1$. Dotted: the forward error $\lVert h_L - H_1\rVert$ of the same runs, which
# falls at the same rate. Hollow markers are depths the fit's window rule ([Theory §6](../theory.md#s6)) leaves
# out (res2-ode's $L = 8$). The gradient errs by 1.5 to 2.3 times as much as the state, but falls at the same
# rate: the backward pass inherits the forward pass's order.*
#
# ## Which adjoint to trust
#
# Three ways to get a gradient of a deep network or of its limit. The numbers are those measured on
# [Results: gradients](../results/gradients.md) (res-1 at $d = 10$), not
# re-measured here:
#
# - **Store the states and backpropagate** (what PyTorch does). Exact, but its memory grows linearly with $L$:
#   26 MiB at $L = 64$, 1018 MiB at $L = 4096$. Carrying the **forward tangents**, as the study does, stays flat
#   (97 MiB at $L = 4096$) for $d + 1$ tangent columns per layer: about 1.2 times backpropagation's time.
# - **The continuous adjoint**: solve the limit forward, then its adjoint backwards in time, storing nothing
#   (torchsde's `sdeint_adjoint`, torchdiffeq's `odeint_adjoint`). Memory is flat too (`sdeint_adjoint` with
#   reversible Heun: 42 MiB at $L = 64$, 114 MiB at $L = 4096$). For res-1, torchsde's midpoint and reversible Heun
#   adjoints converge to the limit's gradient at rates 0.463 [0.451, 0.477] and 0.466 [0.454, 0.480], and
#   reversible Heun's gradient equals autograd through its own forward solve to $2.6\times10^{-15}$. The trap is the
#   Itô–Stratonovich conversion: a Stratonovich adjoint must be given the Stratonovich drift
#   $-\tfrac12\tfrac{s^2}{d}\,\sigma'\odot\sigma$, not the Itô drift 0; with the wrong one it returns the gradient of
#   another SDE, an error of relative order $s^2/d$ that does not fall with $L$ ([Theory §7c](../theory.md#s7c)).
# - **Backsolve the states** (Sander, Ablin & Peyré 2022): rebuild $\tilde h_k = \tilde h_{k+1} - \Delta_k(\tilde h_{k+1})$
#   during the backward pass instead of storing it. With $1/L$ branches each step errs by $O(1/L^2)$ and the
#   gradient's error falls like $1/L$ (res2-ode: rate 1.037 [1.031, 1.044]). With i.i.d. weights each step errs by
#   $O(\lVert\Delta B\rVert^2) = O(1/L)$ with a **non-zero mean**, $\frac{s^2}{d}(\sigma'\odot\sigma)(h_k)/L$: the means add up,
#   and the error has a floor of order $s^2/d$ whatever $L$ ([Theory §7e](../theory.md#s7e)). The floor hides below
#   the $L^{-1/2}$ part until $L \approx d^2$: at $d = 10$, $s^2 = 1$ the gradient's error falls from 0.447 ($L = 4$)
#   to 0.053 ($L = 4096$, 1% of the gradient, slope 0.09 over the last two depths), while at $d = 4$, $s^2 = 4$ it
#   stalls at 1.27 (17% of the gradient, slope 0.06) — Sander et al.'s point, with its size.
#
# In short: backpropagation through the network (or its tangents) is always the network's exact gradient; the
# continuous adjoint is the limit's, up to its own discretisation, if the drift is the right one; backsolving is safe
# only when the weights are smooth.
#
# ## One command for the class
#
# The same study from a terminal, with the adjoint methods and the backsolve included (the default), exits with
# status 0 on PASS:
#
# ```bash
# python -m validation.gradients --model res2-ode
# python -m validation.gradients --model res1
# ```
#
# On the results page the ODE pair took 42 s and PASSed; res-1 took 31 s on one core of a quiet two-core machine
# and PASSed at its default 1000 samples. `--methods none --no-backsolve` keeps
# only the network against the limit, as on this page. More in [How to: gradients](../howto/gradients.md).
#
# ## What to take away
#
# - Backpropagation $p_k = (\partial F_k)^\top p_{k+1}$ is the network's first variation read backwards, and the
#   first variation of an Euler step is the Euler step of the limit's first variation.
# - So the gradient converges to the limit's adjoint $a(t) = J_{t\to1}^\top\nabla\ell(H_1)$ at the forward pass's
#   rate: $1/2$ for i.i.d. weights, $1$ for smooth ones.
# - To get the limit's gradient cheaply, trust an adjoint solver only with the right drift, and a backsolve only
#   for smooth weights.
#
# ## References
#
# - M. Sander, P. Ablin and G. Peyré. *Do residual neural networks discretize neural ordinary differential
#   equations?* NeurIPS 2022.
# - X. Li, T.-K. L. Wong, R. T. Q. Chen and D. Duvenaud. *Scalable gradients for stochastic differential
#   equations.* AISTATS 2020.
# - P. Kidger, J. Foster, X. Li and T. Lyons. *Efficient and accurate gradients for neural SDEs.* NeurIPS 2021.
# - The papers behind the models: [Theory, Sources](../theory.md#sources).
