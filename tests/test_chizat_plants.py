"""Planted alternatives for Chizat's figures chizat-kernel, chizat-phase and chizat-backward (lecture 12, §3): each
test runs the figure unplanted at a small size and asserts PASS, then perturbs the model — its parametrisation,
its block scale, its weight variance or its learning rate — through the function the figure builds it with, and
asserts that the entry's checks aimed at that alternative FAIL at the same size. Nothing here touches a verdict rule
(tolerances, levels, margins): every FAIL comes from the model. The entries declare these tests in ``rejects``.
"""

from __future__ import annotations

import math

import torch

from limits import chizat
from limits.seeding import generator
from validation.figures import study as figures
from validation.figures.catalogue import chizat_backward, chizat_kernel, chizat_phase


def _verdicts(result) -> dict[str, str]:
    return {c["check"]: c["verdict"] for c in result.checks}


def _only(verdicts: dict[str, str], *needles: str) -> dict[str, str]:
    """The verdicts of the checks whose names contain every needle (at least one such check)."""
    chosen = {name: verdict for name, verdict in verdicts.items() if all(n in name for n in needles)}
    assert chosen, (needles, verdicts)
    return chosen


# ---------------------------------------------------------------------------------------------------- chizat-kernel

def _kernel_errors(alphas, *, width, hidden, layers, networks, inputs, sigma_u, sigma_v, seed=0,
                   label=("chizat-kernel",), dtype=torch.float64, device="cpu", alpha_in_the_variance=False):
    """:func:`limits.chizat.chizat_kernel_errors`, its draws and its predictions, for the ResNet written either as
    the lecture's (``h ← h + α V ρ(U h)``, trained weights U, V: the library's, to rounding) or with α put into the
    initial variance of the output weights (``h ← h + W ρ(U h)``, W = α V, trained weights U, W): the same function
    at initialisation, another tangent kernel — K_U + K_V/α² — and another first gradient, ∂loss/∂W = ∂loss/∂V / α."""
    device = torch.device(device)
    keys = ("kernel", "gradient_u", "gradient_v", "gradient")
    out = {key: torch.empty((len(alphas), networks), dtype=torch.float64) for key in keys}
    xs, ys, us, vs = [], [], [], []
    for i in range(networks):
        gen = generator(seed, *label, i, device=device)
        xs.append(torch.randn((width, inputs), generator=gen, dtype=dtype, device=device))
        ys.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
        us.append(torch.randn((layers, hidden, width), generator=gen, dtype=dtype, device=device) * sigma_u)
        vs.append(torch.randn((layers, width, hidden), generator=gen, dtype=dtype, device=device) * sigma_v)
    X, y, U0, V0 = torch.stack(xs), torch.stack(ys), torch.stack(us, 1), torch.stack(vs, 1)
    g = X[:, :, :1] - y
    pre = torch.einsum("lnja,na->lnj", U0, X[:, :, 0])
    back = torch.einsum("lncj,nc->lnj", V0, g[:, :, 0])
    for col, alpha in enumerate(alphas):
        multiplier, scale = (1.0, alpha) if alpha_in_the_variance else (alpha, 1.0)
        with torch.enable_grad():
            U, W = U0.clone().requires_grad_(True), (scale * V0).requires_grad_(True)
            h = X
            for ell in range(layers):
                h = h + multiplier * torch.bmm(W[ell], torch.relu(torch.bmm(U[ell], h)))
            rows = []
            for i in range(inputs):
                for c in range(width):
                    gu, gw = torch.autograd.grad(h[:, c, i].sum(), (U, W), retain_graph=True)
                    rows.append(torch.cat([gu.permute(1, 0, 2, 3).reshape(networks, -1),
                                           gw.permute(1, 0, 2, 3).reshape(networks, -1)], 1))
            grad_u, grad_w = torch.autograd.grad(0.5 * (h[:, :, :1] - y).square().sum(), (U, W))
        jac = torch.stack(rows, 1)
        shallow = chizat.shallow_tangent_kernel(U0, V0, X, alpha)       # the lecture's prediction, unchanged
        out["kernel"][col] = ((jac @ jac.transpose(1, 2) - shallow).flatten(1).norm(dim=1)
                              / shallow.flatten(1).norm(dim=1)).double().cpu()
        pred_u = alpha * ((pre > 0).to(dtype) * back)[..., None] * X[None, :, None, :, 0]
        pred_v = alpha * g[None, :, :, 0, None] * torch.relu(pre)[:, :, None, :]
        err_u, err_v = (grad_u - pred_u).square().sum((0, 2, 3)), (grad_w - pred_v).square().sum((0, 2, 3))
        norm_u, norm_v = pred_u.square().sum((0, 2, 3)), pred_v.square().sum((0, 2, 3))
        out["gradient_u"][col] = chizat._relative(err_u, norm_u)
        out["gradient_v"][col] = chizat._relative(err_v, norm_v)
        out["gradient"][col] = chizat._relative(err_u + err_v, norm_u + norm_v)
    return out


KERNEL_SIZE = dict(networks=48, resamples=300)


def test_chizat_kernel_fails_with_alpha_in_the_initial_variance_not_a_multiplier(monkeypatch):
    """Planted: the same ResNet at initialisation, h^ℓ = h^{ℓ−1} + W ρ(U h^{ℓ−1}) with W = αV drawn at variance
    α²σ_v² — the lecture's α moved from a multiplier into the output weights' initial variance (standard instead of
    the lecture's parametrisation). Its forward pass is the lecture's to rounding, but its tangent kernel is
    K_U + K_V/α² and its first gradient in W is ∂loss/∂V / α: the relative errors against α² Σ D₂φ D₂φᵀ and
    eq. (5) grow as 1/α² and 1/α when MLα² → 0 (exponents about −1 and −½, against > 0 claimed), so both checks
    FAIL. The copy of the model used for the plant reproduces the library's numbers unplanted."""
    honest = figures.run("chizat-kernel", **KERNEL_SIZE)
    assert honest.verdict == "PASS", honest.table()

    monkeypatch.setattr(chizat_kernel, "chizat_kernel_errors", _kernel_errors)
    copy = figures.run("chizat-kernel", **KERNEL_SIZE)                  # the test's copy of the model, unplanted
    assert copy.verdict == "PASS"
    for key, fit in honest.numbers["fits"].items():
        assert math.isclose(copy.numbers["fits"][key]["exponent"], fit["exponent"], rel_tol=1e-9), key

    monkeypatch.setattr(chizat_kernel, "chizat_kernel_errors",
                        lambda alphas, **kwargs: _kernel_errors(alphas, **kwargs, alpha_in_the_variance=True))
    planted = figures.run("chizat-kernel", **KERNEL_SIZE)
    verdicts = _verdicts(planted)
    assert set(verdicts.values()) == {"FAIL"} and len(verdicts) == 2, planted.table()
    fits = planted.numbers["fits"]
    assert fits["kernel"]["ci95"][1] < -0.5 and fits["gradient"]["ci95"][1] < -0.25, fits


# ----------------------------------------------------------------------------------------------------- chizat-phase

PHASE_SIZE = dict(depths=(8, 32, 128), betas=(0.5, 1.0), gammas=(0.0, 1.0), networks=32, resamples=200)


def test_chizat_phase_fails_on_blocks_scaled_1_over_l_where_1_over_sqrt_l_is_claimed(monkeypatch):
    """Planted: every block's multiplier carries an extra L^{-1/2}, α = L^{-β-½}/√M — depth-μP's cell built with
    CompleteP's 1/L where 1/√L is claimed, CompleteP's with L^{-3/2}. The tangent kernel's scale α²MLη then falls
    as L^{-1} on the line γ = 2β − 1: the predictor's change vanishes (exponent about −1, against 0 ± 0.1) in both
    cells, which become 'trivial', so both predictor checks FAIL (and depth-μP's vanishing local share with them)."""
    honest = figures.run("chizat-phase", **PHASE_SIZE)
    assert honest.verdict == "PASS", honest.table()

    def one_over_l(beta, gamma, depth, eta0, **kwargs):
        return chizat.chizat_training_changes(beta + 0.5, gamma, depth, eta0, **kwargs)

    monkeypatch.setattr(chizat_phase, "chizat_training_changes", one_over_l)
    planted = figures.run("chizat-phase", **PHASE_SIZE)
    verdicts = _verdicts(planted)
    predictor = _only(verdicts, "predictor change")
    assert len(predictor) == 2 and set(predictor.values()) == {"FAIL"}, planted.table()
    assert set(_only(verdicts, "depth-μP", "local share").values()) == {"FAIL"}, planted.table()
    classes = {(c["beta"], c["gamma"]): c["class"] for c in planted.numbers["cells"]}
    assert classes[(0.5, 0.0)] == classes[(1.0, 1.0)] == "trivial", classes


def test_chizat_phase_fails_when_depth_mup_learns_features_locally(monkeypatch):
    """Planted: depth-μP's cell (β = ½, γ = 0) trained with CompleteP's scalings (α = 1/(L√M), η ∝ L) and
    CompleteP's with depth-μP's (α = 1/√(ML), η constant) — the wrong claim that depth-μP learns features locally
    (and CompleteP is a lazy ODE). Both stay on the stable line, so the predictor checks still PASS; the local share
    no longer vanishes at depth-μP (exponent about 0, against ≤ −0.1) and vanishes at CompleteP (about −0.7,
    against ≥ −0.1): both local-share checks FAIL."""
    honest = figures.run("chizat-phase", **PHASE_SIZE)
    assert honest.verdict == "PASS", honest.table()
    swapped = {chizat_phase.DEPTH_MUP: chizat_phase.COMPLETE_P, chizat_phase.COMPLETE_P: chizat_phase.DEPTH_MUP}

    def swap(beta, gamma, depth, eta0, **kwargs):
        beta, gamma = swapped.get((beta, gamma), (beta, gamma))
        return chizat.chizat_training_changes(beta, gamma, depth, eta0, **kwargs)

    monkeypatch.setattr(chizat_phase, "chizat_training_changes", swap)
    planted = figures.run("chizat-phase", **PHASE_SIZE)
    verdicts = _verdicts(planted)
    share = _only(verdicts, "local share")
    assert len(share) == 2 and set(share.values()) == {"FAIL"}, planted.table()
    assert set(_only(verdicts, "predictor change").values()) == {"PASS"}, planted.table()


# -------------------------------------------------------------------------------------------------- chizat-backward

BACKWARD_SIZE = dict(networks=600, resamples=300)


def _plant_backward(monkeypatch, alphas_of, **changed) -> None:
    """The real and the simplified backward both of the planted model: α ↦ ``alphas_of`` (the block scale actually
    built), the other arguments updated by ``changed`` (a weight scale)."""
    for name in ("chizat_backward_spread", "chizat_frozen_backward_spread"):
        real = getattr(chizat, name)

        def planted(alphas, real=real, **kwargs):
            return real(alphas_of(alphas, kwargs), **{**kwargs, **{k: f(kwargs) for k, f in changed.items()}})

        monkeypatch.setattr(chizat_backward, name, planted)


def test_chizat_backward_fails_on_blocks_at_ml_alpha2_kappa_not_kappa2(monkeypatch):
    """Planted: blocks built at α = √κ/√(ML), so MLα² = κ where κ² is claimed — the residual scale off by κ^{-1/2}.
    Then E sup_ℓ S_b^ℓ is of order κ: its exponent in MLα² = κ² moves from 1 to about ½, outside 1 ± 0.1, and the
    real-backward check FAILs (the simplified backward misses its closed form at the claimed α too)."""
    honest = figures.run("chizat-backward", **BACKWARD_SIZE)
    assert honest.verdict == "PASS", honest.table()

    def root_kappa(alphas, kwargs):
        ml = kwargs["hidden"] * kwargs["layers"]
        return [math.sqrt(a * math.sqrt(ml)) / math.sqrt(ml) for a in alphas]     # κ = α√(ML) ↦ √κ/√(ML)

    _plant_backward(monkeypatch, root_kappa)
    planted = figures.run("chizat-backward", **BACKWARD_SIZE)
    verdicts = _verdicts(planted)
    assert set(_only(verdicts, "real backward").values()) == {"FAIL"}, planted.table()
    assert set(_only(verdicts, "simplified backward").values()) == {"FAIL"}, planted.table()
    assert planted.numbers["fits"]["real"]["ci95"][1] < 0.75, planted.table()


def test_chizat_backward_fails_on_output_weights_of_variance_1_15_sigma_v2(monkeypatch):
    """Planted: output weights v drawn at variance 1.15 σ_v² (σ_v √1.15), a 15% error in c = dσ_v²σ_u²/2 — the
    constant of the closed form E S_b^0 = (1 + cα²M)^L − 1. The simplified backward's mean misses it by about
    15% at every κ, far beyond the Bonferroni |z| bound, so that check FAILs; the exponent check, blind to a
    constant factor, still PASSes."""
    honest = figures.run("chizat-backward", **BACKWARD_SIZE)
    assert honest.verdict == "PASS", honest.table()

    _plant_backward(monkeypatch, lambda alphas, kwargs: alphas,
                    sigma_v=lambda kwargs: kwargs["sigma_v"] * math.sqrt(1.15))
    planted = figures.run("chizat-backward", **BACKWARD_SIZE)
    verdicts = _verdicts(planted)
    assert set(_only(verdicts, "simplified backward").values()) == {"FAIL"}, planted.table()
    assert set(_only(verdicts, "real backward").values()) == {"PASS"}, planted.table()
