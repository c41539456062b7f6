"""A ResNet with an embedding, trained by gradient descent, and its infinite-width counterpart (Chizat 2025;
Chaintron, Chizat & Maass 2026), driven by the same sampled weights.

**The finite network**, as the authors' ``FiniteResNetWithEmbedding`` (``lchizat/2026-resnets-of-all-shapes-and-sizes``,
``linear_experiments_python/src/resnet``): an input x ∈ R^{d_in} is embedded, sent through L residual blocks of M
hidden units in embedding dimension D, and read out,

    h_0 = W_e x,   h_{l+1} = h_l + α/(LM) · V_l σ(p_l),   p_l = U_lᵀ h_l / D,   f = W_uᵀ h_L / D,

with W_e ∈ R^{D×d_in}, W_u ∈ R^{D×d_out} of N(0, 1) entries (fixed), and U_l, V_l ∈ R^{D×M} of N(0, D) entries
(trained). The loss of one example is ½‖f − y‖²; its backward pass b_l = ∂loss/∂h_l is the authors':

    b_L = W_u (f − y) / D,   q_l = σ'(p_l) ⊙ V_lᵀ b_{l+1},   b_l = b_{l+1} + α/(LMD) · U_l q_l,

and one gradient step at rate η moves every hidden unit m of block l by the authors' update (their learning rates
scaled by D, ``eta_u = eta_v = D``):

    u_m ← u_m − (η/α) · h_l q_m,        v_m ← v_m − (ηD/α) · b_{l+1} σ(p_m).

(For σ = identity, p_m = u_mᵀh_l/D and q_m = v_mᵀ b_{l+1}.) This is gradient descent on the loss at rate
η·D·LM/α² — the residual scale α/(LM) with the maximal-local-update learning rates of the papers.

**The infinite-width counterpart (σ = identity).** Every hidden unit of block l moves by the *same* linear map of
(u, v) (it depends on h_l and b_{l+1}, shared by the block's units), so the network depends on its units only through
their second moments per block,

    A_l = (1/M) Σ_m u_m u_mᵀ,   B_l = (1/M) Σ_m v_m v_mᵀ,   C_l = (1/M) Σ_m v_m u_mᵀ,

which move, with c = η/α, h = h_l and b = b_{l+1}, as

    C ← C − c B b hᵀ − c b (A h)ᵀ + c² (bᵀ C h) b hᵀ,
    A ← A − c Cᵀ b hᵀ − c h (Cᵀ b)ᵀ + c² (bᵀ B b) h hᵀ,
    B ← B − c C h bᵀ − c b (C h)ᵀ + c² (hᵀ A h) b bᵀ,

while h_{l+1} = h_l + α/(LD) · C_l h_l and b_l = b_{l+1} + α/(LD) · C_lᵀ b_{l+1}. Started from the empirical moments
of M drawn units, this *is* the finite network (:class:`MomentResNet`, checked against :class:`EmbeddedResNet` to
rounding in the tests); started from the exact moments A = B = D·I, C = 0 it is the network at M = ∞ on the same
embedding — the width limit at fixed L and D, computed exactly (no Monte Carlo). So the distance between the two
is the finite-width error alone, and the depth and embedding errors are differences of the M = ∞ network between
L and 2L, and between D and 2D (docs/theory.md §9).

**At M = ∞ the moments stay low-rank.** From A = B = D·I, C = 0, every update adds outer products of vectors in the
span S_l of the states h_l^j, b_{l+1}^j of the steps j taken so far (A h = D h + …, B b = D b + … stay in it), so
after k steps A = D·I + Q P_A Qᵀ, B = D·I + Q P_B Qᵀ, C = Q P_C Qᵀ with Q = [h^0, b^0, …, h^{k−1}, b^{k−1}]
(D × 2k) and 2k × 2k coefficients. :class:`InfiniteWidthResNet` keeps only those: O(L·D·k) memory and work per
step instead of O(L·D²), so D in the thousands costs little; it equals :meth:`MomentResNet.infinite` to rounding.

**At M = ∞ and D = ∞ (the large-scale limit at depth L).** One example and identity blocks keep every state of the
M = ∞ network in the span of the n = d_in + d_out columns of E = [W_e, W_u] (D × n): h_0 = W_e x and
b_L = W_u (f − y)/D are, and every update adds outer products of states. Write h = E c. The dynamics is equivariant
under h → λh, W_e, W_u → λW_e, λW_u, D → λ²D (A, B, C → λ²A, λ²B, λ²C; f unchanged; b → b/λ, checked term by
term), and under a rotation of R^D, so the network at dimension D is the network at dimension n with the
embedding λR, λ = √(n/D), where E = QR (Q orthonormal): the coefficients c_l^k depend on the draw only through the
Gram matrix EᵀE/D. As D → ∞, EᵀE/D → I (N(0, 1) entries), so the limit is the n-dimensional network with the
embedding √n·I — :func:`embedding_limit`, exact at every depth — and the limit's hidden state of a network with
embedding E is H_l = E c_l (:func:`limit_states`): per coordinate d, H_{l,d} = Σ_i E_{d,i} c_{l,i}, the authors'
per-coordinate process, and its correlations are ⟨H^k_l, H^j_l⟩/D → c_l^k · c_l^j (:func:`limit_correlations`).
Closed forms: before any step c_l = (x, 0) and f = 0; after one step c_l = (x, 2η (l/L) ‖x‖² y) and f = 2η ‖x‖² y
(every block's C = −2cD b eᵀ with e = W_e x; tested). The depth limit L → ∞ follows by Richardson extrapolation
(:func:`depth_limit`): the error in L is a power series starting at 1/L (docs/theory.md §9).

**At M = ∞, for blocks of any activation.** The same reduction holds for two-layer-perceptron blocks at M = ∞
(:func:`reduced_embedding`). Let G be the rotations of R^D that fix span(E) pointwise. The units' law at
initialisation, N(0, D·I) for u and for v, is G-invariant. If the law is G-invariant and h_l is G-fixed (in span(E)),
the block's update E[v σ(uᵀh_l/D)] is G-fixed, so h_{l+1} ∈ span(E), and so are b_l. The updates
u ← u − (η/α) h q, v ← v − (ηD/α) b σ(p) then commute with G, so the law stays G-invariant step after step. Every
state lies in span(E), and only the units' coordinates Qᵀu, Qᵀv (n each, N(0, D)) enter p, the update's mean and the
gradients. So the network at M = ∞ and dimension D is the n-dimensional network at M = ∞ with the embedding λR
(λ = √(n/D)) and units λQᵀu, λQᵀv of N(0, n) entries: its states are h'' = λ Qᵀh and its outputs are the same
(each of p, f, q and the unit updates checked under the map, as for identity blocks). Its M = ∞ law is approximated
by N Monte-Carlo units in dimension n. The n-dimensional network's finite-width error is √(n/(LN))-small, where the
D-dimensional one's is √(D/(LM)). The units can be shared by networks of different D (only λR changes) and,
:func:`dealt_units`, by networks of different L at the same total N = L·M. Such differences then carry only a
remainder of relative size about √(n/N), which the sweeps measure by halving N (docs/theory.md §9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .activations import Activation, get_activation
from .seeding import generator

__all__ = ["Trajectory", "EmbeddedResNet", "MomentResNet", "InfiniteWidthResNet", "one_example_task",
           "embedding_draws", "unit_draws", "train", "embedding_limit", "limit_states", "limit_correlations",
           "DepthLimit", "depth_limit", "nonlinear_share",
           "unit_map", "infinite_nonlinear_share", "ReducedEmbedding", "reduced_embedding", "dealt_units",
           "mean_field_limit", "share_cross_halves"]


@dataclass(frozen=True)
class Trajectory:
    """The states of R replicates over K gradient steps, before each step (as the authors track them):
    ``hidden`` (K, R, L + 1, D) the hidden states h_0 … h_L, ``output`` (K, R, d_out) and ``loss`` (K, R)."""

    hidden: torch.Tensor
    output: torch.Tensor
    loss: torch.Tensor


@dataclass(frozen=True)
class ReducedEmbedding:
    """The n-dimensional form of an embedding (:func:`reduced_embedding`): the n-dimensional network's embedding
    ``w_e`` (R, n, d_in), ``w_u`` (R, n, d_out), and ``read_back`` (R, D, n), which maps its hidden states h'' back
    to the D-dimensional ones, h = read_back · h''."""

    w_e: torch.Tensor
    w_u: torch.Tensor
    read_back: torch.Tensor

    def states(self, hidden: torch.Tensor) -> torch.Tensor:
        """The D-dimensional hidden states (…, R, L + 1, D) of the n-dimensional ones (…, R, L + 1, n)."""
        return torch.einsum("rdn,...rln->...rld", self.read_back, hidden)


def reduced_embedding(w_e: torch.Tensor, w_u: torch.Tensor, *, at_infinity: bool = False) -> ReducedEmbedding:
    """The network at M = ∞ on the embedding E = [W_e, W_u] (R, D, n), for blocks of any activation, as an
    n-dimensional network (module docstring). With E = QR (Q orthonormal, D × n), λ = √(n/D):

        embedding λR,   read-back Q/λ   (h = Q h''/λ),

R with a positive diagonal (the Cholesky factor of EᵀE), so that λR → √n·I as D → ∞: networks of different D given
the same units then differ by their embeddings only, not by a reflection of some of the units' coordinates.

    With ``at_infinity`` it is the limit D → ∞ instead (EᵀE/D → I): embedding √n·I and read-back E/√n, which puts
    the limit's hidden states H = E c (c = h''/√n) on the same embedding's coordinates. The units of the
    n-dimensional network have N(0, n) entries (:func:`unit_draws` with ``dim`` = n)."""
    embedding = torch.cat([w_e, w_u], dim=-1)
    dim, n, d_in = embedding.shape[-2], embedding.shape[-1], w_e.shape[-1]
    if at_infinity:
        basis = math.sqrt(n) * torch.eye(n, dtype=embedding.dtype, device=embedding.device).expand(
            embedding.shape[0], n, n)
        return ReducedEmbedding(basis[..., :d_in], basis[..., d_in:], embedding / math.sqrt(n))
    if dim < n:
        raise ValueError(f"embedding dimension {dim}: the reduction needs D ≥ n = {n}")
    q, r = torch.linalg.qr(embedding)
    signs = torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))     # R with a positive diagonal: the Cholesky factor of
    q, r = q * signs[..., None, :], r * signs[..., :, None]     # EᵀE, so λR → √n·I as D grows (units stay coupled)
    scale = math.sqrt(n / dim)
    return ReducedEmbedding(scale * r[..., :d_in], scale * r[..., d_in:], q / scale)


def dealt_units(units: torch.Tensor, depth: int) -> torch.Tensor:
    """N units (R, 1, n, N), dealt in order to ``depth`` blocks of N/L each: (R, L, n, N/L), block l holding units
    l·N/L … (l+1)·N/L − 1. A network of depth 2L dealt the same units holds block l's first half in its block 2l and
    the second half in block 2l + 1: the two networks have the same units, so their difference is the depth
    discretisation at N units, not another draw."""
    replicates, _, n, total = units.shape
    if total % depth:
        raise ValueError(f"{total} units cannot be dealt to {depth} blocks evenly")
    return units[:, 0].reshape(replicates, n, depth, total // depth).transpose(1, 2).contiguous()


def one_example_task(seed: int, d_in: int, d_out: int, *, dtype: torch.dtype = torch.float64,
                     x_norm: float = 0.8, noise: float = 0.05) -> tuple[torch.Tensor, torch.Tensor]:
    """The authors' task: one input x of norm 0.8 (a Gaussian direction) and its target y = A x + 0.05 ξ, with A of
    N(0, 1) entries and ξ standard normal (their ``exp_cvg_rate.ipynb``), from the streams ``(seed, "task", …)``."""
    gen = generator(seed, "embedded-resnet", "task")
    x = torch.randn(d_in, generator=gen, dtype=torch.float64)
    x = x_norm * x / x.norm()
    a = torch.randn(d_out, d_in, generator=gen, dtype=torch.float64)
    y = a @ x + noise * torch.randn(d_out, generator=gen, dtype=torch.float64)
    return x.to(dtype), y.to(dtype)


def embedding_draws(seed: int, label: object, replicates: range, dim: int, d_in: int, d_out: int, *,
                    dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """W_e (R, D, d_in) and W_u (R, D, d_out) of N(0, 1) entries for the replicates r in ``replicates``, each from its
    own stream (so a replicate's draws do not depend on which others are drawn with it). A smaller embedding
    dimension takes the first rows of a larger one's draw (the authors' coupling of D)."""
    def rows(name: str, width: int) -> torch.Tensor:
        return torch.stack([torch.randn(dim, width, generator=generator(seed, "embedded-resnet", label, name, r),
                                        dtype=torch.float64) for r in replicates]).to(dtype)

    return rows("W_e", d_in), rows("W_u", d_out)


def unit_draws(seed: int, label: object, replicates: range, depth: int, dim: int, hidden: int, *,
               dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """U, V (R, L, D, M) of N(0, D) entries for the replicates in ``replicates``, replicate r and block l from their
    own streams. A narrower network takes the first units of a wider one's draw (nested widths). Each block's
    (M, D) draw is copied once, transposed, into its place; the scaling is done in place (the values of stacking the
    draws and scaling a copy, with two passes over the arrays fewer)."""
    def units(name: str) -> torch.Tensor:
        out = torch.empty((len(replicates), depth, dim, hidden), dtype=torch.float64)
        for i, r in enumerate(replicates):
            for l in range(depth):
                out[i, l].copy_(torch.randn(hidden, dim, generator=generator(seed, "embedded-resnet", label, name, r, l),
                                            dtype=torch.float64).T)
        return out.to(dtype).mul_(math.sqrt(dim))

    return units("U"), units("V")


class EmbeddedResNet:
    """R replicates of the finite network (module docstring): embeddings W_e (R, D, d_in), W_u (R, D, d_out) and
    units U, V (R, L, D, M), trained in place by :meth:`step`."""

    def __init__(self, w_e: torch.Tensor, w_u: torch.Tensor, u: torch.Tensor, v: torch.Tensor, *, alpha: float = 1.0,
                 activation: str | Activation = "identity") -> None:
        self.w_e, self.w_u, self.U, self.V = w_e, w_u, u.clone(), v.clone()
        self.alpha = float(alpha)
        self.sigma = get_activation(activation)
        self.depth, self.dim, self.hidden = u.shape[1], u.shape[2], u.shape[3]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The hidden states h (R, L + 1, D), pre-activations p (R, L, M) and outputs f (R, d_out) of input x."""
        scale = self.alpha / (self.depth * self.hidden)
        h = self.w_e @ x
        states, pre = [h], []
        for l in range(self.depth):
            p = torch.bmm(h[:, None, :], self.U[:, l])[:, 0] / self.dim                  # Uᵀh / D
            h = h + scale * torch.bmm(self.V[:, l], self.sigma(p)[:, :, None])[..., 0]
            states.append(h)
            pre.append(p)
        hidden = torch.stack(states, dim=1)
        return hidden, torch.stack(pre, dim=1), torch.bmm(h[:, None, :], self.w_u)[:, 0] / self.dim

    def step(self, x: torch.Tensor, y: torch.Tensor, eta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One gradient step at rate η (module docstring); returns h, f and the losses (R,) before it."""
        hidden, pre, out = self.forward(x)
        b = torch.bmm(self.w_u, (out - y)[:, :, None])[..., 0] / self.dim
        back = self.alpha / (self.depth * self.hidden * self.dim)
        rate = eta / self.alpha
        linear = self.sigma.name == "identity"
        for l in reversed(range(self.depth)):
            q = torch.bmm(b[:, None, :], self.V[:, l])[:, 0]                               # V_lᵀ b_{l+1}
            if not linear:
                q = self.sigma.derivative(pre[:, l]) * q
            b_below = b + back * torch.bmm(self.U[:, l], q[:, :, None])[..., 0]
            # gradients at the old weights: U's uses h_l and q_l, V's uses b_{l+1} and σ(p_l)
            self.U[:, l].baddbmm_(hidden[:, l, :, None], q[:, None, :], alpha=-rate)
            self.V[:, l].baddbmm_(b[:, :, None], self.sigma(pre[:, l])[:, None, :], alpha=-rate * self.dim)
            b = b_below
        return hidden, out, 0.5 * (out - y).square().sum(-1)


def nonlinear_share(network: EmbeddedResNet, u0: torch.Tensor, v0: torch.Tensor, hidden: torch.Tensor, *,
                    parts: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """How far the blocks' change over training is from linear in their units' change (Chizat 2025: at α = Θ(1) the
    limit is genuinely non-linearly parametrised — complete feature learning —, as α → ∞ linearly — the lazy ODE).
    With f_l(h; U, V) = α/(LM) V σ(Uᵀh/D) block l's map, U₀, V₀ (R, L, D, M) the units before training and
    U, V the trained network's, at its own inputs h = h_l (``hidden``, (R, L + 1, D)),

        share² = Σ_l ‖f_l(h; U, V) − f_l(h; U₀, V₀) − J_l·(δU, δV)‖² / Σ_l ‖f_l(h; U, V) − f_l(h; U₀, V₀)‖²,

    where J_l·(δU, δV) = α/(LM) [δV σ(p₀) + V₀ (σ'(p₀) ⊙ δUᵀh/D)], p₀ = U₀ᵀh/D, is the part first order in
    δU = U − U₀, δV = V − V₀; for identity blocks the remainder is α/(LM)·δV δUᵀh/D exactly. Per replicate (R,);
    with ``parts``, the numerator and the denominator (R,) each (to pool over replicates)."""
    scale = network.alpha / (network.depth * network.hidden)
    remainder = change = torch.zeros(u0.shape[0], dtype=u0.dtype, device=u0.device)
    for l in range(network.depth):
        second, moved = _block_change(network, u0[:, l], v0[:, l], network.U[:, l], network.V[:, l],
                                      hidden[:, l, :, None], scale)
        remainder = remainder + second.square().sum(-1)
        change = change + moved.square().sum(-1)
    return (remainder, change) if parts else (remainder / change).sqrt()


def _block_change(network: EmbeddedResNet, u_old: torch.Tensor, v_old: torch.Tensor, u_new: torch.Tensor,
                  v_new: torch.Tensor, h: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """One block's change scale·[V σ(Uᵀh/D) − V₀ σ(U₀ᵀh/D)] over the units given (R, D, m), at the inputs h
    (R, D, 1), and its part beyond first order in the units' change (:func:`nonlinear_share`): (R, D) each, the
    remainder first."""
    sigma = network.sigma
    p0 = (u_old.transpose(-1, -2) @ h)[..., 0] / network.dim                   # (R, m)
    p1 = (u_new.transpose(-1, -2) @ h)[..., 0] / network.dim
    dp = p1 - p0                                                                # δUᵀh / D
    moved = scale * (v_new @ sigma(p1)[..., None] - v_old @ sigma(p0)[..., None])[..., 0]
    first = scale * ((v_new - v_old) @ sigma(p0)[..., None] + v_old @ (sigma.derivative(p0) * dp)[..., None])[..., 0]
    return moved - first, moved


def share_cross_halves(network: EmbeddedResNet, u0: torch.Tensor, v0: torch.Tensor, hidden: torch.Tensor
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """The nonlinear share of the network at M = ∞ from Monte-Carlo units, without their bias.
    :func:`nonlinear_share` of a network of N drawn units is biased upward at M = ∞: each block's remainder
    r_l = f_l(h; U, V) − f_l(h; U₀, V₀) − J_l·(δU, δV) is a mean over its units, and E‖r_l‖² = ‖E r_l‖² + Var/M.
    Split each block's units into halves A and B (independent draws) with means r_l^A, r_l^B and changes c_l^A, c_l^B
    (c_l = f_l(h; U, V) − f_l(h; U₀, V₀)): E[r_l^A · r_l^B] = ‖E r_l‖² exactly, to the O(1/M) dependence of the
    halves through the shared states h. Returns per replicate (R,) the two sums

        Σ_l r_l^A · r_l^B  and  Σ_l c_l^A · c_l^B,

    whose ratio, pooled over replicates, is the share² at M = ∞ (either sum may be negative on one replicate, where
    the share is below the noise)."""
    half = network.hidden // 2
    scale = 2 * network.alpha / (network.depth * network.hidden)          # each half's mean, as the whole block's
    remainder = change = torch.zeros(u0.shape[0], dtype=u0.dtype, device=u0.device)
    for l in range(network.depth):
        (r_a, c_a), (r_b, c_b) = (
            _block_change(network, u0[:, l, :, units], v0[:, l, :, units], network.U[:, l, :, units],
                          network.V[:, l, :, units], hidden[:, l, :, None], scale)
            for units in (slice(0, half), slice(half, 2 * half)))
        remainder = remainder + (r_a * r_b).sum(-1)
        change = change + (c_a * c_b).sum(-1)
    return remainder, change


def unit_map(network: "InfiniteWidthResNet", eta: float) -> torch.Tensor:
    """The linear map T (R, L, 2D, 2D) that the steps taken so far applied to every unit (u, v) of each block of the
    network at M = ∞ with identity blocks: each step moves u ← u − c h (bᵀv), v ← v − c b (hᵀu) (c = η/α; h = h_l,
    b = b_{l+1} of that step, the columns of the network's basis Q), so (u, v) = T (u₀, v₀); hence
    C = D·T_v T_uᵀ (T_u, T_v: the rows of u and of v), as :class:`MomentResNet` has it (tested)."""
    dim, c = network.dim, eta / network.alpha
    eye = torch.eye(2 * dim, dtype=network.Q.dtype, device=network.Q.device)
    T = eye.expand(network.Q.shape[0], network.depth, -1, -1).clone()
    for k in range(network.taken):
        h, b = network.Q[..., 2 * k], network.Q[..., 2 * k + 1]                    # (R, L, D)
        T_u, T_v = T[..., :dim, :], T[..., dim:, :]
        T = torch.cat([T_u - c * h[..., :, None] * (b[..., None, :] @ T_v),
                       T_v - c * b[..., :, None] * (h[..., None, :] @ T_u)], dim=-2)
    return T


def infinite_nonlinear_share(network: "InfiniteWidthResNet", eta: float, hidden: torch.Tensor) -> torch.Tensor:
    """:func:`nonlinear_share` of the network at M = ∞ with identity blocks, exactly: with (u, v) = T (u₀, v₀)
    (:func:`unit_map`) and (u₀, v₀) ~ N(0, D·I), the block's change is C − C₀ = D·T_v T_uᵀ (C₀ = 0) and its part
    second order in the units' change D·(T − I)_v (T − I)_uᵀ. Per replicate (R,), at the inputs ``hidden``
    (R, L + 1, D)."""
    dim = network.dim
    T = unit_map(network, eta)
    delta = T - torch.eye(2 * dim, dtype=T.dtype, device=T.device)
    x = hidden[:, :-1, :, None]                                                    # (R, L, D, 1)
    change = T[..., dim:, :] @ (T[..., :dim, :].transpose(-1, -2) @ x)
    remainder = delta[..., dim:, :] @ (delta[..., :dim, :].transpose(-1, -2) @ x)
    return (remainder.square().sum((1, 2, 3)) / change.square().sum((1, 2, 3))).sqrt()


class MomentResNet:
    """R replicates of the network with identity blocks, through its units' second moments per block (module
    docstring): A, B, C (R, L, D, D). :meth:`infinite` starts it at M = ∞; :meth:`of_units` from drawn units."""

    def __init__(self, w_e: torch.Tensor, w_u: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, *,
                 alpha: float = 1.0) -> None:
        self.w_e, self.w_u, self.A, self.B, self.C = w_e, w_u, a, b, c
        self.alpha = float(alpha)
        self.depth, self.dim = c.shape[1], c.shape[2]

    @classmethod
    def infinite(cls, w_e: torch.Tensor, w_u: torch.Tensor, depth: int, *, alpha: float = 1.0) -> "MomentResNet":
        """M = ∞: A = B = D·I and C = 0 in every block (units of N(0, D) entries)."""
        replicates, dim = w_e.shape[0], w_e.shape[1]
        eye = torch.eye(dim, dtype=w_e.dtype, device=w_e.device) * dim
        a = eye.expand(replicates, depth, dim, dim).clone()
        return cls(w_e, w_u, a, a.clone(), torch.zeros_like(a), alpha=alpha)

    @classmethod
    def of_units(cls, w_e: torch.Tensor, w_u: torch.Tensor, u: torch.Tensor, v: torch.Tensor, *,
                 alpha: float = 1.0) -> "MomentResNet":
        """The empirical moments of units U, V (R, L, D, M): the finite network itself."""
        hidden = u.shape[-1]
        moment = lambda p, q: p @ q.transpose(-1, -2) / hidden  # noqa: E731
        return cls(w_e, w_u, moment(u, u), moment(v, v), moment(v, u), alpha=alpha)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The hidden states h (R, L + 1, D) and outputs f (R, d_out) of input x."""
        scale = self.alpha / (self.depth * self.dim)
        h = self.w_e @ x
        states = [h]
        for l in range(self.depth):
            h = h + scale * (self.C[:, l] @ h[..., None])[..., 0]
            states.append(h)
        return torch.stack(states, dim=1), torch.einsum("rdo,rd->ro", self.w_u, h) / self.dim

    def step(self, x: torch.Tensor, y: torch.Tensor, eta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One gradient step at rate η: the moments' update of the module docstring; returns h, f and the losses.
        The backward states b_{l+1} use the old C only, so they are computed first and every block is then updated
        at once."""
        hidden, out = self.forward(x)
        b = torch.einsum("rdo,ro->rd", self.w_u, out - y) / self.dim
        back = self.alpha / (self.depth * self.dim)
        below = []                                                  # b_{l+1} for l = L−1 … 0
        for l in reversed(range(self.depth)):
            below.append(b)
            b = b + back * (self.C[:, l].transpose(-1, -2) @ b[..., None])[..., 0]
        h, b = hidden[:, :-1], torch.stack(below[::-1], dim=1)      # (R, L, D) each
        c = eta / self.alpha
        outer = lambda p, q: p[..., :, None] * q[..., None, :]  # noqa: E731
        dot = lambda p, q: (p * q).sum(-1)[..., None, None]  # noqa: E731
        apply = lambda m, p: (m @ p[..., None])[..., 0]  # noqa: E731
        A, B, C = self.A, self.B, self.C
        Ah, Bb, Ch, Ctb = apply(A, h), apply(B, b), apply(C, h), apply(C.transpose(-1, -2), b)
        self.C = C - c * outer(Bb, h) - c * outer(b, Ah) + c * c * dot(b, Ch) * outer(b, h)
        self.A = A - c * outer(Ctb, h) - c * outer(h, Ctb) + c * c * dot(b, Bb) * outer(h, h)
        self.B = B - c * outer(Ch, b) - c * outer(b, Ch) + c * c * dot(h, Ah) * outer(b, b)
        return hidden, out, 0.5 * (out - y).square().sum(-1)


class InfiniteWidthResNet:
    """R replicates of the network at M = ∞ with identity blocks, in the low-rank form of the module docstring: the
    basis Q (R, L, D, 2K) and the coefficients P_A, P_B, P_C (R, L, 2K, 2K), for at most ``steps`` = K steps."""

    def __init__(self, w_e: torch.Tensor, w_u: torch.Tensor, depth: int, steps: int, *, alpha: float = 1.0) -> None:
        replicates, dim = w_e.shape[0], w_e.shape[1]
        self.w_e, self.w_u, self.depth, self.dim, self.alpha = w_e, w_u, depth, dim, float(alpha)
        self.taken, self.steps = 0, steps
        options = dict(dtype=w_e.dtype, device=w_e.device)
        self.Q = torch.zeros(replicates, depth, dim, 2 * steps, **options)
        self.P_A, self.P_B, self.P_C = (torch.zeros(replicates, depth, 2 * steps, 2 * steps, **options) for _ in "ABC")

    def _columns(self) -> slice:
        return slice(0, 2 * self.taken)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The hidden states h (R, L + 1, D) and outputs f (R, d_out): h_{l+1} = h_l + α/(LD) · Q P_C Qᵀ h_l."""
        scale = self.alpha / (self.depth * self.dim)
        n = self._columns()
        h = self.w_e @ x
        states = [h]
        for l in range(self.depth):
            q = self.Q[:, l, :, n]
            h = h + scale * (q @ (self.P_C[:, l, n, n] @ (q.transpose(-1, -2) @ h[..., None])))[..., 0]
            states.append(h)
        return torch.stack(states, dim=1), torch.einsum("rdo,rd->ro", self.w_u, h) / self.dim

    def step(self, x: torch.Tensor, y: torch.Tensor, eta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One gradient step at rate η: :class:`MomentResNet`'s update in the coefficients of the basis, which
        gains the columns h_l and b_{l+1}; returns h, f and the losses before it."""
        if self.taken == self.steps:
            raise ValueError(f"this network was sized for {self.steps} steps")
        hidden, out = self.forward(x)
        n = self._columns()
        back = self.alpha / (self.depth * self.dim)
        b = torch.einsum("rdo,ro->rd", self.w_u, out - y) / self.dim
        below = []                                                  # b_{l+1} for l = 0 … L−1
        for l in reversed(range(self.depth)):
            below.append(b)
            q = self.Q[:, l, :, n]
            b = b + back * (q @ (self.P_C[:, l, n, n].transpose(-1, -2) @ (q.transpose(-1, -2) @ b[..., None])))[..., 0]
        h, b = hidden[:, :-1], torch.stack(below[::-1], dim=1)      # (R, L, D) each
        i, j = 2 * self.taken, 2 * self.taken + 1                   # the new columns: h_l and b_{l+1}
        self.Q[..., i], self.Q[..., j] = h, b
        m = slice(0, j + 1)
        Q, P_A, P_B, P_C = self.Q[..., m], self.P_A[..., m, m], self.P_B[..., m, m], self.P_C[..., m, m]
        g_h = (Q.transpose(-1, -2) @ h[..., None])[..., 0]         # Qᵀh, Qᵀb: (R, L, n)
        g_b = (Q.transpose(-1, -2) @ b[..., None])[..., 0]
        apply = lambda P, g: (P @ g[..., None])[..., 0]  # noqa: E731
        e_h, e_b = torch.zeros_like(g_h), torch.zeros_like(g_b)
        e_h[..., i], e_b[..., j] = 1.0, 1.0
        Ah, Bb = self.dim * e_h + apply(P_A, g_h), self.dim * e_b + apply(P_B, g_b)
        Ch, Ctb = apply(P_C, g_h), apply(P_C.transpose(-1, -2), g_b)
        bCh = (g_b * Ch).sum(-1)[..., None, None]
        bBb = (self.dim * (b * b).sum(-1) + (g_b * apply(P_B, g_b)).sum(-1))[..., None, None]
        hAh = (self.dim * (h * h).sum(-1) + (g_h * apply(P_A, g_h)).sum(-1))[..., None, None]
        outer = lambda p, q: p[..., :, None] * q[..., None, :]  # noqa: E731
        c = eta / self.alpha
        self.P_C[..., m, m] = P_C - c * outer(Bb, e_h) - c * outer(e_b, Ah) + c * c * bCh * outer(e_b, e_h)
        self.P_A[..., m, m] = P_A - c * outer(Ctb, e_h) - c * outer(e_h, Ctb) + c * c * bBb * outer(e_h, e_h)
        self.P_B[..., m, m] = P_B - c * outer(Ch, e_b) - c * outer(e_b, Ch) + c * c * hAh * outer(e_b, e_b)
        self.taken += 1
        return hidden, out, 0.5 * (out - y).square().sum(-1)


def train(network: EmbeddedResNet | MomentResNet | InfiniteWidthResNet, x: torch.Tensor, y: torch.Tensor, steps: int, eta: float
          ) -> Trajectory:
    """``steps`` gradient steps at rate η; the states before each (the authors' ``train_track``)."""
    hidden, output, loss = [], [], []
    for _ in range(steps):
        h, f, value = network.step(x, y, eta)
        hidden.append(h)
        output.append(f)
        loss.append(value)
    return Trajectory(torch.stack(hidden), torch.stack(output), torch.stack(loss))


def embedding_limit(x: torch.Tensor, y: torch.Tensor, depth: int, steps: int, eta: float, *, alpha: float = 1.0
                    ) -> Trajectory:
    """The network at M = ∞ and D = ∞ with identity blocks, at depth L (module docstring): the
    :class:`MomentResNet` at M = ∞ of dimension n = d_in + d_out with the embedding √n·I, trained ``steps`` steps
    at rate η. Its ``hidden`` (K, 1, L + 1, n) holds the coefficients c_l^k of H_l = [W_e, W_u] c_l (the first d_in
    on W_e's columns), its ``output`` (K, 1, d_out) the limit's outputs."""
    d_in, d_out = x.shape[-1], y.shape[-1]
    n = d_in + d_out
    basis = math.sqrt(n) * torch.eye(n, dtype=x.dtype, device=x.device)
    network = MomentResNet.infinite(basis[None, :, :d_in], basis[None, :, d_in:], depth, alpha=alpha)
    trajectory = train(network, x, y, steps, eta)
    return Trajectory(trajectory.hidden / math.sqrt(n), trajectory.output, trajectory.loss)


def limit_states(coefficients: torch.Tensor, w_e: torch.Tensor, w_u: torch.Tensor) -> torch.Tensor:
    """The limit's hidden states H = [W_e, W_u] c (K, R, L + 1, D) of R embeddings W_e (R, D, d_in), W_u (R, D, d_out)
    from the coefficients (K, 1 or R, L + 1, n) of :func:`embedding_limit`."""
    embedding = torch.cat([w_e, w_u], dim=-1)
    return torch.einsum("rdn,krln->krld", embedding, coefficients.expand(-1, w_e.shape[0], -1, -1))


def limit_correlations(coefficients: torch.Tensor) -> torch.Tensor:
    """The limit's correlations Γ_H[l, k, j] = lim ⟨H^k_l, H^j_l⟩/D = c_l^k · c_l^j (L + 1, K, K) from the
    coefficients (K, 1, L + 1, n) of :func:`embedding_limit` (the authors' ``Gamma_H`` on the layers s = l/L)."""
    c = coefficients[:, 0]
    return torch.einsum("kln,jln->lkj", c, c)


@dataclass(frozen=True)
class DepthLimit:
    """The large-scale limit (L, M, D → ∞) read on the layers s = l/L of a depth L: ``hidden`` (K, 1, L + 1, n)
    coefficients and ``output`` (K, 1, d_out), and ``bias`` — the largest change of any coefficient or output
    between the extrapolations from the two finer and the two coarser of the three depths computed, a measured
    bound on the reference's own error."""

    hidden: torch.Tensor
    output: torch.Tensor
    bias: float


def mean_field_limit(x: torch.Tensor, y: torch.Tensor, depth: int, steps: int, eta: float,
                     units: tuple[torch.Tensor, torch.Tensor], *, alpha: float = 1.0,
                     activation: str | Activation = "identity") -> Trajectory:
    """:func:`embedding_limit` for blocks of any activation: the n-dimensional network with the embedding √n·I
    (D = ∞, :func:`reduced_embedding`) whose M = ∞ law is approximated by the N Monte-Carlo units ``units`` — U, V
    (1, 1, n, N) of N(0, n) entries — dealt to the L blocks (:func:`dealt_units`). Its ``hidden`` (K, 1, L + 1, n)
    holds the coefficients c of H = [W_e, W_u] c, as :func:`embedding_limit`'s; exact up to the units' Monte-Carlo
    error, O(√(n/N))."""
    d_in, d_out = x.shape[-1], y.shape[-1]
    n = d_in + d_out
    basis = math.sqrt(n) * torch.eye(n, dtype=x.dtype, device=x.device)
    u, v = units
    network = EmbeddedResNet(basis[None, :, :d_in], basis[None, :, d_in:], dealt_units(u, depth), dealt_units(v, depth),
                             alpha=alpha, activation=activation)
    trajectory = train(network, x, y, steps, eta)
    return Trajectory(trajectory.hidden / math.sqrt(n), trajectory.output, trajectory.loss)


def depth_limit(x: torch.Tensor, y: torch.Tensor, depth: int, steps: int, eta: float, *, alpha: float = 1.0,
                refinement: int = 16, activation: str | Activation = "identity",
                units: tuple[torch.Tensor, torch.Tensor] | None = None) -> DepthLimit:
    """The limit L → ∞ of :func:`embedding_limit` on the layers of depth L, by Richardson extrapolation: with
    N = ``refinement``·L, 2 c(2N) − c(N) read every 2N/L-th and N/L-th layer, whose error is O(1/N²) where c(N)'s
    is O(1/N); the same from N/2 and N bounds the remaining error (``bias``). With Monte-Carlo ``units``, the levels
    are :func:`mean_field_limit` of any ``activation``, every depth dealt the same units, so that the levels differ
    by their depth only and the extrapolation applies (then ``bias`` holds the extrapolation's error, not the units');
    without, identity blocks, exactly."""
    if refinement < 2 or refinement % 2:
        raise ValueError(f"refinement {refinement}: give an even number ≥ 2")
    if units is None and get_activation(activation).name != "identity":
        raise ValueError(f"activation {get_activation(activation).name}: the limit of nonlinear blocks needs "
                         "Monte-Carlo units (units=…)")
    levels = {}
    for factor in (refinement // 2, refinement, 2 * refinement):
        limit = (embedding_limit(x, y, depth * factor, steps, eta, alpha=alpha) if units is None else
                 mean_field_limit(x, y, depth * factor, steps, eta, units, alpha=alpha, activation=activation))
        levels[factor] = (limit.hidden[:, :, ::factor], limit.output)

    def extrapolate(coarse: int) -> tuple[torch.Tensor, torch.Tensor]:
        (h_coarse, f_coarse), (h_fine, f_fine) = levels[coarse], levels[2 * coarse]
        return 2 * h_fine - h_coarse, 2 * f_fine - f_coarse

    hidden, output = extrapolate(refinement)
    rough_hidden, rough_output = extrapolate(refinement // 2)
    bias = max(float((hidden - rough_hidden).abs().max()), float((output - rough_output).abs().max()))
    return DepthLimit(hidden, output, bias)
