# %% [markdown]
# # Strong rates: 1/2 for the SDE, 1 for the ODE
#
# [Tutorial 1](01_one_path.md) showed that a res-1 network with i.i.d. weights is the Euler–Maruyama scheme
# of its neural SDE, on a shared Brownian path. [Tutorial 2](02_sde_or_ode.md) showed that with smooth
# weights it is the Euler scheme of a neural ODE. This page asks how fast the network approaches its limit,
# measured by the **strong error** at the output,
#
# $$
# e(L) = \Bigl(\mathbb E\,\lVert h_L - H_1 \rVert^2\Bigr)^{1/2} \;\asymp\; L^{-r},
# $$
#
# where the expectation is over the weights, shared by the network and the limit. "Strong" means
# path by path, as opposed to *weak* convergence, which only compares laws. We derive why $r = 1/2$ for the
# SDE and $r = 1$ for the ODE, then measure both with `validation.convergence`. Background:
# [Theory §1, §2 and §6](../theory.md#s6).

# %%
import os
QUICK = os.environ.get("TUTORIAL_QUICK") == "1"  # the test suite runs this page at small sizes

# %%
import torch

from validation import convergence

torch.set_num_threads(1)  # the per-step tensors are small: one thread is faster (the command line does the same)

SDE_SIZE = (dict(samples=40, depths=(4, 8, 16, 32), reference_steps=512) if QUICK
            else dict(samples=500, depths=(4, 8, 16, 32, 64, 128, 256), reference_steps=8192))

ODE_SIZE = (dict(samples=20, depths=(8, 16, 32, 64, 128)) if QUICK
            else dict(samples=200, depths=(8, 16, 32, 64, 128, 256, 512, 1024)))

# %% [markdown]
# ## Why 1 for the ODE: small local errors that add up
#
# Write the ODE as $\dot H = F(t, H)$ with $F(t, h) = \mathcal V_t\, g(h, \Theta_t)$, and let $\delta = 1/L$.
# One Euler step from the exact solution misses
#
# $$
# \tau_k = H_{t_{k+1}} - H_{t_k} - \delta\, F(t_k, H_{t_k})
#        = \int_{t_k}^{t_{k+1}} \bigl(F(s, H_s) - F(t_k, H_{t_k})\bigr)\,\mathrm ds = O(\delta^2),
# $$
#
# because $s \mapsto F(s, H_s)$ is Lipschitz: smooth weights, Lipschitz activation. The error
# $\varepsilon_k = h_k - H_{t_k}$ then obeys $\lVert\varepsilon_{k+1}\rVert \le (1 + K\delta)
# \lVert\varepsilon_k\rVert + C\delta^2$, with $K$ the Lipschitz constant of $F$ in $h$. Unrolled over $L$
# steps (discrete Grönwall):
#
# $$
# \lVert h_L - H_1 \rVert \le \sum_{k<L} (1 + K\delta)^{L-k}\, C\delta^2 \le e^{K}\, C\, L\, \delta^2
# = \frac{e^{K} C}{L}.
# $$
#
# $L$ local errors of size $1/L^2$, with signs that do not cancel, add up to $1/L$: **rate 1**. This bound
# holds for every sample of the weights, not only on average.
#
# ## Why 1/2 for the SDE: larger local errors that cancel, and Lévy areas
#
# For $\mathrm dH = \sum_j g_j(H)\,\mathrm dB^j$ (one column $g_j$ per Brownian channel, $d^2$ channels
# for res-1), the Itô–Taylor expansion of one step of length $\delta$ is
#
# $$
# H_{t+\delta} = H_t + \sum_j g_j(H_t)\,\Delta B^j
# + \sum_{j, l} (\mathcal L^j g_l)(H_t)\, I_{jl} + \dots,
# \qquad I_{jl} = \int_t^{t+\delta}\!\!\int_t^{s} \mathrm dB^j_u\, \mathrm dB^l_s,
# \qquad \mathcal L^j = g_j \cdot \nabla .
# $$
#
# Euler keeps the first two terms. The first term it drops has mean zero and size
# $\sqrt{\mathbb E\, I_{jl}^2} = \delta/\sqrt 2$. Local errors of order $\delta$, with mean zero and nearly
# uncorrelated from step to step, add up like a random walk: $\sqrt L \cdot \delta = L^{-1/2}$. Milstein's
# mean-square theorem makes this precise. Local errors with mean $O(\delta^{p_1})$ and root-mean-square
# $O(\delta^{p_2})$, where $p_2 \ge \tfrac12$ and $p_1 \ge p_2 + \tfrac12$, give global strong order
# $p_2 - \tfrac12$. For Euler $p_1 = 2$ and $p_2 = 1$, hence **rate 1/2**.
#
# Could a better scheme do better? The Milstein scheme adds the $I_{jl}$ term. Split it as
#
# $$
# I_{jl} = \tfrac12\bigl(\Delta B^j \Delta B^l - \delta\,\mathbb 1_{j = l}\bigr) + A_{jl},
# \qquad A_{jl} = \tfrac12\,(I_{jl} - I_{lj}) \quad\text{(the Lévy area)}.
# $$
#
# The first part is a function of the increments. The Lévy areas are not: two paths with the same
# increments can enclose different areas. They enter through $\sum_{j<l}(\mathcal L^j g_l - \mathcal L^l
# g_j)\, A_{jl}$, which vanishes only when the noise is **commutative**, $\mathcal L^j g_l = \mathcal L^l
# g_j$. For res-1, channel $(a, b)$ has $g_{(a,b)}(H) = \frac{s}{\sqrt d}\,\sigma(H_b)\, e_a$, so
#
# $$
# \mathcal L^{(1,1)} g_{(2,1)} = \frac{s^2}{d}\, \sigma(H_1)\,\sigma'(H_1)\, e_2
# \;\ne\; 0 = \mathcal L^{(2,1)} g_{(1,1)} :
# $$
#
# the noise does not commute. **Clark and Cameron (1980)** showed that when the noise does not commute,
# even the best $L^2$ approximation of $H_1$ built from the increments on the grid $k/L$ is in general only
# of order $L^{-1/2}$. That best approximation is the conditional expectation of $H_1$ given the
# increments. We state the result here and do not prove it. A depth-$L$ network sees nothing but those
# increments: its weights $V_{k+1}$ *are* the increments, rescaled. So the rate $1/2$ is a property of what
# the weights carry, not a weakness of Euler. torchsde reflects the same fact: its Milstein and SRK solvers
# refuse general noise, as [Tutorial 1](01_one_path.md) noted.
#
# In short: the ODE's local errors are small ($1/L^2$) and add up coherently. The SDE's are large
# ($1/L$) and partly cancel.
#
# ## Measuring the SDE rate: `validation.convergence.run("res1", …)`
#
# The study draws $N$ Brownian paths, runs the networks of every depth and the reference solution on each
# path in one pass, and fits $\log e(L)$ against $\log L$ — with the first correction term of the error's
# expansion, $e = C L^{-r}(1 + c/L)$, by a rule fixed in advance (docs/theory.md §6). The reference for $H_1$ is Euler on a grid
# `reference_steps` fine (here 32 times finer than the deepest network). The rate's 95% interval comes from
# a bootstrap that resamples whole paths. The verdict is an equivalence test: **PASS when the whole interval
# lies within theory ± 0.05**; a second line says whether the interval contains the theory value itself.
#
# At full size the settings are the command line's defaults (they are spelled out at the top of the page),
# and the run takes some tens of seconds on two cores.

# %%
res1 = convergence.run("res1", **SDE_SIZE)
print(res1.table())

# %% [markdown]
# How to read the table:
#
# - **RMS error** is $e(L)$, the quantity the verdict uses. **mean-norm** is $\mathbb E\lVert h_L -
#   H_1\rVert$ (the quantity in Marion et al.'s Proposition 10). **sup-grid** is the worst error over the
#   network's layers, $(\mathbb E \max_k \lVert h_k - H_{k/L}\rVert^2)^{1/2}$.
# - **local slope** is the rate between two consecutive depths. It shows where the asymptotic regime
#   starts. A depth the fit leaves out is marked *(not fitted)*, and a line under the table says why (for
#   example, at a small size: under the reference floor) — never silently.
# - **RMS vs 2nd ref** is the same error measured against a second reference with half the steps. If the
#   reference were too coarse, the two columns and their rates would differ (see below).
# - **‖h_L−h_2L‖** are the *successive differences*. They need no reference at all.
#
# The headline numbers, printed from the result. At the page's full size with seed 0 the run gives rate
# 0.511, 95% interval [0.500, 0.524]: PASS. The rate against the second reference (0.516) and the
# successive-difference rate (0.501) land within 0.01 of it.

# %%
low, high = res1.rate_ci
print(f"res1: rate {res1.rate:.3f}, 95% CI [{low:.3f}, {high:.3f}], theory {res1.theory_rate:g} -> {res1.verdict}")
for name in ("rms", "mean", "sup", "second_reference", "successive"):
    fit = res1.fits[name]
    print(f"  {name:>16}: {fit.rate:.3f}  [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]")

print(f"  RMS distance between the two references: {res1.reference_gap:.2e}; e(L) at the deepest depth: "
      f"{res1.fits['rms'].errors[-1]:.2e}")

# %%
figure_res1 = res1.plot()
figure_res1

# %% [markdown]
# ![Strong error of res-1 against depth, with fitted rate and bootstrap band](../figures/tutorial_03_res1.png)
#
# *res-1 ($d = 10$, tanh, 500 paths, seed 0): errors against depth $L$ on log–log axes. How to read it:*
#
# - *Each **marker** is one error measure at one depth. **Hollow** markers are depths left out of the fit
#   ($L = 4$ here, pre-asymptotic). Filled ones are fitted.*
# - *The **shaded band** around the RMS error is the 95% bootstrap interval of $e(L)$ at each depth on its
#   own. With 500 paths it is barely wider than the line.*
# - *The **thick pale line** through each curve's filled markers is its least-squares fit. Its slope is the
#   rate quoted in the legend; for the RMS error, the verdict's measure, the legend also gives the rate's
#   95% interval.*
# - *The **dashed black line** has the theory's slope, $-1/2$. It is drawn a little below the RMS curve so
#   that the two slopes can be compared by eye.*
# - *The other curves: mean-norm and sup-over-grid errors (other ways to measure the same distance), the
#   RMS error against the **second reference** (half the steps), and the **successive differences**
#   $\lVert h_L - h_{2L}\rVert$ (no reference at all). All of them should run parallel to the dashed line.*
#
# ### The second reference: is the "exact" solution exact enough?
#
# The reference $H^{(R)}$ is itself Euler with $R$ steps on the same path, so it has an error of its own,
# of order $R^{-1/2}$. Errors of nested Euler approximations are nearly orthogonal, so the network's
# measured error is about $\sqrt{e(L)^2 - e(R)^2}$. It is too small at the deepest depths, which makes the
# slope *steeper* than the truth ([Theory §6](../theory.md#s6)). Two safeguards, both printed above, check
# for this: the rate against a second reference with $R/2$ steps (a rate that moves between the two
# references is a warning), and the successive differences, which use no reference.
#
# To see the warning fire, here is the same study with a reference only 4 times finer than the deepest
# network:

# %%
coarse = dict(SDE_SIZE, reference_steps=4 * SDE_SIZE["depths"][-1])
biased = convergence.run("res1", **coarse)
for label, result in (("reference 32x finer", res1), ("reference 4x finer", biased)):
    shift = result.fits["second_reference"].rate - result.rate
    print(f"{label:>20}: rate {result.rate:.3f}; against half the reference {result.fits['second_reference'].rate:.3f} "
          f"(shift {shift:+.3f}); last local slope {result.fits['rms'].local[-1]:.3f}")

# %% [markdown]
# With the coarse reference the fitted rate, and even more the last local slope, are pushed above
# $1/2$. The rate against the second (coarser still) reference moves further. With the default reference
# the shift is small. At full size with seed 0: rate 0.533, then 0.549 against the second reference, last
# local slope 0.610, against a shift of +0.005 with the default reference. The lesson: a rate measured against a numerical reference is only as good as the
# reference, and the way to know is to change the reference and see whether the rate moves.
#
# ### Successive differences: convergence to *something*
#
# $\lVert h_L - h_{2L}\rVert \le \lVert h_L - H_1\rVert + \lVert h_{2L} - H_1\rVert$, so if
# $e(L) \asymp L^{-r}$ the successive differences fall at rate $r$ too, and they need no reference. But they
# only say that $h_L$ is a Cauchy sequence: that the network converges to *something* at that rate. They
# cannot say whether that something is the SDE we wrote down. A network paired with a wrong limit has exactly
# the same successive differences. [Tutorial 4](04_ito_correction.md) shows such a case: there the error
# against the wrong limit levels off while the successive differences keep falling.
#
# ## Measuring the ODE rate: `validation.convergence.run("res2-ode", …)`
#
# res-2 with smooth weights, $h_{k+1} = h_k + \frac1L\, V_{k+1}\, \tanh(W_{k+1} h_k)$, with both
# $\mathcal V$ and $\mathcal W$ smooth Gaussian processes, and its neural ODE. The reference is torchdiffeq's
# adaptive dopri5 at tolerance $10^{-10}$. The second reference uses 100 times looser tolerances.

# %%
res2 = convergence.run("res2-ode", **ODE_SIZE)
print(res2.table())

# %%
figure_res2_ode = res2.plot()
figure_res2_ode

# %% [markdown]
# ![Error of res-2 with smooth weights against depth, rate 1](../figures/tutorial_03_res2_ode.png)
#
# *res-2 with smooth weights ($d = 10$, tanh, 200 weight draws, seed 0) against its neural ODE. The plot
# reads like the one above. The dashed theory line now has slope $-1$, and the hollow marker is at
# $L = 8$, the one shallow depth the fit's window rule leaves out: keeping it would move the rate by more than
# a quarter of the tolerance, and on these nearly deterministic curves that move is resolved.*
#
# The two rates side by side, printed by the code. At full size with seed 0: res1 0.511 [0.500, 0.524]
# against theory 1/2, res2-ode 0.998 [0.998, 0.999] against theory 1, both PASS.

# %%
for result in (res1, res2):
    low, high = result.rate_ci
    print(f"{result.model['name']:>9}: rate {result.rate:.3f} [{low:.3f}, {high:.3f}]   theory {result.theory_rate:g}   "
          f"{result.verdict}")

# %% [markdown]
# ## One command for the class
#
# The same study runs from a terminal, prints the table above, and exits with status 0 on PASS:
#
# ```bash
# python -m validation.convergence --model res1
# python -m validation.convergence --model res2-ode --plot res2.png
# python -m validation.convergence --list          # every model and its theory rate
# ```
#
# More in [How to: measure a convergence rate](../howto/convergence.md), and the measured numbers, with
# other seeds and larger runs, in [Results: convergence](../results/convergence.md).
#
# ## What to take away
#
# - Strong rate 1 for the ODE: local errors $O(1/L^2)$ that add up over $L$ steps.
# - Strong rate 1/2 for the SDE: local errors $O(1/L)$ that cancel like a random walk. For non-commutative
#   noise nothing that sees only the increments can do better (Clark–Cameron), and a network's weights are
#   exactly those increments.
# - A rate is measured honestly with many paths, a bootstrap interval, pre-asymptotic depths dropped
#   explicitly, and a check that the reference is fine enough.
#
# ## References
#
# - J. M. C. Clark and R. J. Cameron. *The maximum rate of convergence of discrete approximations for
#   stochastic differential equations.* In *Stochastic Differential Systems*, Lecture Notes in Control and
#   Information Sciences 25, Springer, 1980.
# - G. N. Milstein. *Numerical Integration of Stochastic Differential Equations.* Kluwer, 1995, §1.1 (the
#   mean-square convergence theorem).
# - P. E. Kloeden and E. Platen. *Numerical Solution of Stochastic Differential Equations.* Springer, 1992
#   (Itô–Taylor expansions, commutative noise, Lévy areas).
# - The papers behind the models: [Theory, Sources](../theory.md#sources).
