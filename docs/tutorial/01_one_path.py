# %% [markdown]
# # One path, two readers
#
# A deep ResNet with random weights and its continuous-depth limit are usually compared *in law*: the
# distribution of the output of a depth-$L$ network approaches the distribution of the solution of a
# differential equation. This package compares them **path by path**. It samples the weights once, as a
# process in "depth time" $t \in [0, 1]$, and lets two readers read the same sample:
#
# - the **network** of depth $L$ reads it on the grid $t_k = k/L$, one layer per grid interval;
# - the **limit**, here a neural SDE, reads it in continuous time.
#
# Because both see the same randomness, the distance $\lVert h_L - H_1 \rVert$ between the network's output
# and the limit's is a number we can compute for every sample, and watch shrink as $L$ grows. This page
# builds that coupling by hand for the simplest model, on **one** Brownian path, and shows that it is exact
# to the last bit. The theory is in [Theory §1](../theory.md#s1).

# %%
import os
QUICK = os.environ.get("TUTORIAL_QUICK") == "1"  # the test suite runs this page at small sizes

# %%
import numpy as np
import torch
import torchsde
from validation.core.plots import new_figure  # a Matplotlib figure a notebook shows as an image

import limits

FINE = 2**10 if QUICK else 2**14     # steps of the fine grid on which the Brownian path is drawn
DEPTHS = (4, 16, 256)                # the three networks drawn below
WIDTH = 4                            # d: the hidden state lives in R^d

# %% [markdown]
# ## The model: res-1 with i.i.d. weights
#
# The network (Marion et al., Proposition 10) is
#
# $$
# h_{k+1} = h_k + \frac{1}{\sqrt L}\, V_{k+1}\, \sigma(h_k),
# \qquad (V_{k+1})_{ij} \overset{\text{i.i.d.}}{\sim} \mathcal N\!\left(0, \frac{s^2}{d}\right),
# \qquad k = 0, \dots, L-1,
# $$
#
# with $\sigma = \tanh$ and $s = 1$ here. The trick is to *not* draw the $V_k$ directly. Draw instead a
# $d \times d$ matrix $B$ of independent Brownian motions on $[0, 1]$ and set
#
# $$
# V_{k+1} = \sqrt L\, \frac{s}{\sqrt d}\, \bigl(B_{(k+1)/L} - B_{k/L}\bigr).
# $$
#
# A Brownian increment over an interval of length $1/L$ is $\mathcal N(0, 1/L)$, and increments over
# disjoint intervals are independent, so these $V_k$ have exactly the law above, for every $L$. But now all
# depths read **one** object, $B$, and the network becomes
#
# $$
# h_{k+1} = h_k + \frac{s}{\sqrt d}\,\bigl(B_{(k+1)/L} - B_{k/L}\bigr)\,\sigma(h_k),
# $$
#
# which is, step for step, the Euler–Maruyama scheme with step $1/L$ for the Itô SDE
#
# $$
# \mathrm dH_t = \frac{s}{\sqrt d}\,\mathrm dB_t\,\sigma(H_t), \qquad H_0 = h_0 .
# $$
#
# In the package this model is the *pair* `res1`. A pair bundles the network's residual block
# (`network_step`), the limit (`limit_sde()`, an SDE object for torchsde) and the initial state $h_0$.

# %%
pair = limits.get_pair("res1")(limits.ModelConfig(width=WIDTH), samples=1, seed=0)
print(pair.description)
print("theory rate:", pair.theory_rate, "—", pair.theory_source)

# one Brownian path with d*d channels (the matrix B, row-major), known on FINE steps of [0, 1]
path = limits.BrownianGrid(samples=1, size=pair.noise_dim, steps=FINE, seed=0)
h0 = pair.initial_state()          # shape (samples, d): h_0 ~ N(0, I_d)
print(path)
print("h_0 =", h0)

# %% [markdown]
# `path(ta, tb)` returns $B_{t_b} - B_{t_a}$ for grid times $t_a \le t_b$, shape `(samples, d*d)`. The
# weights of layer $k+1$ of a depth-$L$ network are read off it by `pair.layer_weights`. Whatever the depth,
# their entries should look like i.i.d. $\mathcal N(0, s^2/d)$ draws, variance $1/d = 0.25$ here:

# %%
L = 256
V = torch.cat([pair.layer_weights(1 / L, path(k / L, (k + 1) / L)) for k in range(L)])
print(f"depth {L}: {V.numel()} weight entries, mean {V.mean().item():+.4f}, "
      f"variance {V.var().item():.4f} (law: 1/d = {1 / WIDTH})")

# %% [markdown]
# ## Reader 1: the network
#
# The depth-$L$ network is a loop over layers. Layer $k+1$ covers $[k/L, (k+1)/L]$ and reads the path's
# increment over that interval. We keep every hidden state, to draw it.

# %%
def network_states(L):
    """h_0, h_1, ..., h_L of the depth-L network on our path, shape (L + 1, samples, d)."""
    h = h0
    states = [h]
    for k in range(L):
        t = k / L
        h = pair.network_step(h, t, 1 / L, path(t, t + 1 / L))
        states.append(h)
    return torch.stack(states)


for L in DEPTHS:
    print(f"L = {L:3d}: h_L = {network_states(L)[-1, 0].numpy().round(4)}")

# %% [markdown]
# ## Reader 2: the SDE, solved by torchsde on the same path
#
# `pair.limit_sde()` is a `torchsde` SDE object. `torchsde.sdeint` accepts any Brownian motion through its
# `bm=` argument, and `BrownianGrid` implements torchsde's Brownian interface, so the solver reads **our**
# path. We ask for the solution at $t_k = k/L$ with step `dt = 1/L` and the Euler–Maruyama method.
#
# The two readers give the same numbers, bit for bit: `torch.equal` (exact equality, no tolerance) holds
# at every layer.

# %%
sde = pair.limit_sde()
for L in DEPTHS:
    times = torch.linspace(0, 1, L + 1, dtype=torch.float64)
    euler = torchsde.sdeint(sde, h0, times, bm=path, dt=1 / L, method="euler")
    print(f"L = {L:3d}: network == torchsde Euler with dt = 1/L, at all {L + 1} layers: "
          f"{torch.equal(network_states(L), euler)}")

# %% [markdown]
# Why exactly equal, not just close:
#
# - An Euler–Maruyama step of $\mathrm dH = f(H)\,\mathrm dt + g(H)\,\mathrm dB$ is
#   $H \mapsto H + f(H)\,\Delta t + g(H)\,\Delta B$. Here $f = 0$, and torchsde computes $g(H)\,\Delta B$
#   with the pair's `g_prod`. The pair's `network_step` calls the same function
#   (`limits.matrix_noise_product`) on the same numbers.
# - The increments are the same numbers too. `BrownianGrid` stores the path as increments on the fine
#   grid and sums them in one fixed (dyadic, pairwise) order. Anyone who asks for $B_{(k+1)/L} - B_{k/L}$
#   gets the same floating-point sum. This is also why depths are powers of two: the grid $k/L$ then lies on
#   the fine grid, and `t += dt` inside the solver stays exact.
#
# So the network **is** a numerical scheme for its limit. "How fast does a deep ResNet approach its limit?"
# turns into a textbook question of numerical analysis: "what is the strong order of Euler–Maruyama for
# this SDE?" ([Tutorial 3](03_strong_rates.md) answers it: $1/2$.)
#
# Exact equality also makes a strong unit test: if someone changes the block or the SDE and they stop
# agreeing, the test fails at the last bit, not within a tolerance.
#
# ## The "exact" solution is Euler too, on a finer grid
#
# For this SDE there is no closed form, and torchsde's only Itô solver for general
# (non-diagonal) noise is Euler; its Milstein and SRK solvers refuse this noise type (try
# `method="milstein"`). So the continuous solution $H_t$ is computed as Euler on the fine grid of the same
# path: `FINE` steps, far more than any network we compare with. That is the same as the network of depth
# `FINE`. [Tutorial 3](03_strong_rates.md) checks that such a reference is fine enough.

# %%
t_ref = torch.linspace(0, 1, 257 if QUICK else 1025, dtype=torch.float64)   # where we keep H_t
H = torchsde.sdeint(sde, h0, t_ref, bm=path, dt=1 / FINE, method="euler")    # shape (len(t_ref), 1, d)
deep = network_states(FINE)[:: FINE // (len(t_ref) - 1)]
print(f"the reference H (Euler, {FINE} steps) == the network of depth {FINE}: {torch.equal(deep, H)}")

# %% [markdown]
# ## One coordinate of $h_k$ against $H_t$
#
# We draw the first coordinate of the hidden state. Network states sit at $t_k = k/L$: a depth-$L$ network
# has $L + 1$ of them. The thin straight lines between them only guide the eye.

# %%
figure_paths = new_figure(figsize=(7.5, 4.2))
ax = figure_paths.add_subplot()
ax.plot(t_ref, H[:, 0, 0], color="black", lw=1.0, label=f"SDE: $H_t$ (Euler, {FINE} steps)")
for L, style in zip(DEPTHS, ("o-", "s-", ".-")):
    hs = network_states(L)[:, 0, 0]
    ax.plot(np.arange(L + 1) / L, hs, style, ms=6 if L < 100 else 3, lw=0.8, alpha=0.85,
            label=f"network, L = {L}: $h_k$ at $t = k/L$")

ax.set_xlabel("depth time t (layer k of a depth-L network sits at t = k/L)")
ax.set_ylabel("first coordinate")
ax.set_title("res-1, d = 4, tanh, one Brownian path (seed 0): one path, two readers", fontsize=10)
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
figure_paths

# %% [markdown]
# ![One coordinate of the hidden state of res-1 networks of depth 4, 16 and 256, and of the SDE, on one Brownian path](../figures/tutorial_01_paths.png)
#
# *The first coordinate of the hidden state along depth time $t$, for one Brownian path (seed 0, $d = 4$).
# Black: the SDE's solution $H_t$. Markers: the states $h_k$ of networks of depth 4, 16 and 256, placed at
# $t = k/L$. All three networks are driven by the same path, so they are not three random networks but three
# readings of one. The depth-4 network sees only four increments of the path and misses its wiggles. At depth
# 256 the network is hard to tell from $H_t$.*
#
# ## The error on this one path
#
# The error at the output is $\lVert h_L - H_1 \rVert$. On one path it is one random number per depth, so
# expect scatter. The dashed line has slope $-1/2$, the rate the theory predicts for the root-mean-square
# error. We stop at depths 16 times shallower than the reference, so that the reference's own error stays
# small ([Tutorial 3](03_strong_rates.md) explains why that matters).

# %%
error_depths = [2**j for j in range(1, (6 if QUICK else 10) + 1)]
errors = np.array([(network_states(L)[-1] - H[-1]).norm().item() for L in error_depths])
slope = -np.polyfit(np.log(error_depths), np.log(errors), 1)[0]
for L, e in zip(error_depths, errors):
    print(f"L = {L:5d}   |h_L - H_1| = {e:.4f}")

print(f"least-squares rate on this one path: {slope:.2f} (one path, no error bar: not a measurement of the rate)")

# %%
figure_error = new_figure(figsize=(6.0, 4.2))
ax = figure_error.add_subplot()
ax.loglog(error_depths, errors, "o-", label=r"this path: $\|h_L - H_1\|$")
guide = errors[0] * (np.array(error_depths) / error_depths[0]) ** -0.5
ax.loglog(error_depths, guide, "k--", lw=1, label="slope −1/2 (guide)")
ax.set_xscale("log", base=2)
ax.set_xlabel("depth L")
ax.set_ylabel("error at t = 1")
ax.set_title("res-1, d = 4: output error on one Brownian path (seed 0)", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
figure_error

# %% [markdown]
# ![The output error of res-1 networks against depth on one Brownian path](../figures/tutorial_01_error.png)
#
# *The distance $\lVert h_L - H_1 \rVert$ between the network's output and the SDE's, on the single path
# drawn above, for $L = 2, 4, \dots, 1024$ (log–log axes). The dashed guide has slope $-1/2$. One path gives
# one noisy curve. It can wander above and below the guide, so its slope (printed above) is not a measurement
# of the rate. To measure a rate we need many paths, an error bar, and a check of the reference: that is
# [Tutorial 3](03_strong_rates.md).*
#
# ## What to take away
#
# - With i.i.d. Gaussian weights scaled by $1/\sqrt L$, the weights of *every* depth can be read off one
#   Brownian path. That coupling is what makes "the error of a depth-$L$ network" a well-defined random
#   variable.
# - On that path the network *is* the Euler–Maruyama scheme of the neural SDE, bit for bit. The
#   continuous limit is computed as the same scheme on a much finer grid.
# - Why $1/\sqrt L$, and why an SDE rather than an ODE, is [Tutorial 2](02_sde_or_ode.md).
