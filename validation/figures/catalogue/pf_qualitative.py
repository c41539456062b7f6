"""The ``pf-qualitative`` figure: Peluchetti & Favaro (2020) §3.4: exchangeable coordinates, a non-Gaussian joint law.

(§3.4, "Qualitative properties"), for the SC models (x_0 = z·1, fully i.i.d. parameters of
Assumption 3.4: ΔW ~ N(0, σ_w²Δt/D) entries, Δb ~ N(0, σ_b²Δt I_D)) at the two inputs of the paper's §4.1,
z = 0 and z = 1, each model both as the ResNet of depth L and as the Euler scheme of its limit SDE on
``--sde-factor``× finer steps of the same path (:func:`validation.figures.pf_models.block_outputs`, all D coordinates):

* **exchangeability**: "the law of the processes x_{t,d} is exchangeable across d ∈ D if the distribution of
  x_{0,d} is so" — the quadratic variation σ_b² + σ_w²/D ‖ψ(x)‖² depends on the state only through a norm. Tested
  by the within-row permutation test of :func:`validation.figures.distribution_tests.exchangeability_test` (the marginal
  laws by the k-sample Anderson–Darling statistic, the pair laws by the spread of the coordinates' correlations,
  jointly at both inputs; ``--resamples`` permutations, so p ≥ 1/(resamples + 1)). Check: not rejected at
  level ``--alpha``.
* **non-Gaussianity**: "the joint distribution p(x_T^{(i)}, x_T^{(j)} | x_0^{(i)}, x_0^{(j)}) is not Gaussian",
  unlike the Gaussian process of wide networks. Tested by Mardia's skewness and kurtosis tests of the pair
  (x_{T,1}(0), x_{T,1}(1)) over the draws (:func:`validation.figures.distribution_tests.mardia_test`). Check: rejected at
  level ``--alpha``. The departure shrinks with the width — given the path of ‖x‖²/D each coordinate is a Gaussian
  martingale, and ‖x‖²/D concentrates as D grows (Mardia's b_2 − 8 is about 23/D for SC_tanh at T = 1, measured
  at D = 8 and 32, more at D = 4): a narrow default width (8) keeps the test's power high at 2000 draws.

**Too few draws decide nothing.** On fewer than :data:`validation.core.checks.MIN_VERDICT_SAMPLES` draws every check
is INCONCLUSIVE. A check that expects a rejection (non-Gaussianity, the planted non-exchangeable controls) and gets
none on fewer than :data:`POWER_DRAWS` draws — the size at which the tests' power was measured — is INCONCLUSIVE
too: a test without power does not reject, and that is not a FAIL (measured: 50 and 100 draws left SC_tanh's and
SC_swish's non-Gaussianity unrejected, p = 0.75 and 0.34, which read FAIL).

Planted controls, which make both checks able to fail for a real reason: the same ResNet with bias variances
σ_b²·(0.5 … 1.5) across the coordinates (``cov_b = diag:0.5:1.5``: the marginals differ) and with AR(1)
correlated biases (``cov_b = ar1:0.8``: equal marginals, the pair laws differ) must be rejected as
non-exchangeable; Gaussian draws with the SC_tanh limit's mean and covariance must not be rejected as
non-Gaussian.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.peluchetti_favaro import PFBlock
from limits.seeding import generator, stream_seed
from validation.core.checks import FAIL, INCONCLUSIVE, Check, with_enough_samples
from validation.core.plots import new_grid
from validation.figures.distribution_tests import exchangeability_test, mardia_test
from validation.core.settings import SettingsError
from validation.core.workers import TaskRunner
from validation.figures.figure import Figure
from validation.figures.pf_models import SC_MODELS, block_outputs
from validation.figures.plots import NAMES


#: the two inputs of pf-qualitative: the paper's §4.1 (Fig. 2) pair z^(1) = 0, z^(2) = 1
QUALITATIVE_INPUTS: tuple[float, float] = (0.0, 1.0)


#: the planted non-exchangeable ResNets of pf-qualitative: (name, activation, bias covariance family R_b)
PLANTED: tuple[tuple[str, str, tuple], ...] = (("SC_tanh, bias variances 0.5…1.5", "tanh", ("diag", 0.5, 1.5)),
                                              ("SC_tanh, AR(1) biases ρ = 0.8", "tanh", ("ar1", 0.8)))


#: the draws at which the tests' power against the paper's departures was measured (module doc): an expected
#: rejection that does not come on fewer draws is not counted
POWER_DRAWS = 2000


def _finite(x: np.ndarray) -> np.ndarray:
    return np.all(np.isfinite(x.reshape(len(x), -1)), axis=1)


def qualitative_figure(s: Any, device: torch.device, progress: bool,
                       runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The ``pf-qualitative`` figure's numbers and plot data (module docstring); ``s``: resolved figure settings."""
    z = QUALITATIVE_INPUTS
    models, checks, data = [], [], {"inputs": z}
    common = {"width": s.width, "depth": s.depth, "sigma_w": s.sigma_w, "sigma_b": s.sigma_b}

    def tested(name: str, kind: str, activation: str, values: np.ndarray, family: str, *, exchangeable: bool,
               gaussian: bool) -> dict[str, Any]:
        keep = _finite(values)
        good = values[keep]
        rng = np.random.default_rng(stream_seed(s.seed, "figures", "permutations", "pf-qualitative", name, kind))
        pair = good[:, 0, :]
        entry = {"model": name, "kind": kind, "activation": activation, **common, "bias_covariance": family,
                 "steps": s.depth * (s.sde_factor if kind == "sde" else 1), "nonfinite_draws": int((~keep).sum()),
                 "pair_mean": pair.mean(axis=0).tolist(), "pair_covariance": np.cov(pair.T).tolist(),
                 "coordinate_sd": good[:, :, 1].std(axis=0).tolist(),
                 "exchangeability": exchangeability_test(good, s.resamples, rng) if exchangeable else None,
                 "gaussianity": mardia_test(pair) if gaussian else None}
        data[(name, kind)] = good
        return entry

    def judged(check: Check, expects_rejection: bool = False) -> dict[str, Any]:
        """A test's check on ``s.draws`` draws, in JSON form: on fewer than MIN_VERDICT_SAMPLES it decides nothing, and
        an expected rejection missed on fewer than POWER_DRAWS is not counted (module doc)."""
        if expects_rejection and check.verdict == FAIL and s.draws < POWER_DRAWS:
            check = Check(check.name, INCONCLUSIVE, f"{check.detail}; not counted: not rejected on {s.draws} draws, "
                                                    f"fewer than the {POWER_DRAWS} the test's power was measured at")
        return with_enough_samples(check, s.draws, "draws").to_dict()

    with tqdm(total=(2 + len(PLANTED)) * s.draws, desc="pf-qualitative", unit="draw", disable=not progress,
              leave=False, delay=2.0) as bar:
        for name, activation in SC_MODELS:
            block = PFBlock(get_activation(activation), get_activation("identity"), s.width, sigma_w=s.sigma_w,
                            sigma_b=s.sigma_b, dtype=s.torch_dtype, device=device)
            net, sde = block_outputs(block, z, s.depth, s.draws, s.sde_factor, seed=s.seed,
                                     labels=("pf-qualitative", activation), device=device, bar=bar,
                                     runner=runner)
            for kind, values in (("resnet", net), ("sde", sde)):
                entry = tested(name, kind, activation, values, "iid", exchangeable=True, gaussian=True)
                models.append(entry)
                what = "ResNet" if kind == "resnet" else "limit SDE"
                ex, ga = entry["exchangeability"], entry["gaussianity"]
                checks.append(judged(Check.of(f"{name} {what}: coordinates exchangeable (not rejected at {s.alpha:g})",
                                       ex["p_value"] >= s.alpha, _exchange_detail(ex))))
                checks.append(judged(Check.of(f"{name} {what}: (x_T,1(0), x_T,1(1)) not Gaussian (rejected at {s.alpha:g})",
                                       ga["p_value"] < s.alpha, _mardia_detail(ga)), expects_rejection=True))
        for name, activation, family in PLANTED:
            block = PFBlock(get_activation(activation), get_activation("identity"), s.width, sigma_w=s.sigma_w,
                            sigma_b=s.sigma_b, cov_b=family, dtype=s.torch_dtype, device=device)
            net, _ = block_outputs(block, z, s.depth, s.draws, None, seed=s.seed,
                                   labels=("pf-qualitative", "planted", name), device=device, bar=bar,
                                   runner=runner)
            text = ":".join(map(str, family))
            entry = tested(name, "planted", activation, net, text, exchangeable=True, gaussian=False)
            models.append(entry)
            checks.append(judged(Check.of(f"control {name} (cov_b = {text}): not exchangeable, rejected at {s.alpha:g}",
                                   entry["exchangeability"]["p_value"] < s.alpha,
                                   _exchange_detail(entry["exchangeability"])), expects_rejection=True))
    reference = next(m for m in models if m["model"] == "SC_tanh" and m["kind"] == "sde")
    mean, cov = np.asarray(reference["pair_mean"]), np.asarray(reference["pair_covariance"])
    size = len(data[("SC_tanh", "sde")])
    normal = torch.randn((size, 2), generator=generator(s.seed, "figures", "pf-qualitative", "gaussian"),
                         dtype=torch.float64).numpy()
    gaussian = mean + normal @ np.linalg.cholesky(cov).T
    ga = mardia_test(gaussian)
    name = "Gaussian control"
    models.append({"model": name, "kind": "gaussian", "draws": size, "pair_mean": mean.tolist(),
                   "pair_covariance": cov.tolist(), "exchangeability": None, "gaussianity": ga})
    data[(name, "gaussian")] = gaussian[:, None, :]
    checks.append(judged(Check.of(f"control: Gaussian draws with the SC_tanh limit's mean and covariance, not rejected "
                           f"at {s.alpha:g}", ga["p_value"] >= s.alpha,
                           _mardia_detail(ga))))
    result = {"inputs": list(z), **common, "draws": s.draws, "sde_factor": s.sde_factor, "alpha": s.alpha,
              "permutations": s.resamples,
              "rule": (f"at level {s.alpha:g}: exchangeability (within-row permutation test, {s.resamples} "
                       "permutations; Anderson–Darling of the marginals and the spread of the pair correlations, "
                       "combined by the larger standardised one) not rejected for the models, rejected for the planted controls; normality of "
                       "(x_T,1(0), x_T,1(1)) (Mardia's skewness and kurtosis, Bonferroni) rejected for the models, "
                       "not for the Gaussian control"),
              "models": models, "checks": checks}
    return result, data


def _exchange_detail(r: dict[str, Any]) -> str:
    return (f"p = {r['p_value']:.3g} (Anderson–Darling of the marginals {r['ad_statistic']:.4g}, "
            f"log {r['ad_z']:+.1f} permutation SDs from their mean, p = {r['ad_p_value']:.3g}; pair-correlation spread "
            f"{r['pair_spread']:.3g}, {r['pair_z']:+.1f} SDs, p = {r['pair_p_value']:.3g}; {r['permutations']} "
            "permutations)")


def _mardia_detail(r: dict[str, Any]) -> str:
    return (f"p = {r['p_value']:.3g} (Mardia b_1 = {r['b1']:.3g}, p = {r['skewness_p_value']:.3g}; b_2 = "
            f"{r['b2']:.3f} against {r['b2_gaussian']:g}, z = {r['kurtosis_z']:.2f}, p = {r['kurtosis_p_value']:.3g}; "
            f"{r['draws']} draws)")


def qualitative_table(r: dict[str, Any]) -> str:
    """The ``pf-qualitative`` console table."""
    lines = [f"{r['draws']} draws at z = {r['inputs'][0]:g}, {r['inputs'][1]:g}; D = {r['width']}, L = {r['depth']} "
             f"(SDE: {r['sde_factor']}× finer steps of the same path), σ_w = {r['sigma_w']:g}, σ_b = {r['sigma_b']:g}",
             f"rule: {r['rule']}",
             f"{'model':>32} {'kind':>8} | {'exchangeable: p (AD, pairs)':>30} | {'Gaussian: p (b_1, b_2)':>34} | "
             f"{'non-finite':>10}"]
    for m in r["models"]:
        ex, ga = m["exchangeability"], m["gaussianity"]
        ex_text = "—" if ex is None else f"{ex['p_value']:.3g} ({ex['ad_p_value']:.3g}, {ex['pair_p_value']:.3g})"
        ga_text = "—" if ga is None else f"{ga['p_value']:.3g} ({ga['b1']:.3g}, {ga['b2']:.3f})"
        lines.append(f"{m['model']:>32} {m['kind']:>8} | {ex_text:>30} | {ga_text:>34} | "
                     f"{m.get('nonfinite_draws', 0):>10}")
    return "\n".join(lines)


def plot_qualitative(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F §3.4: the pair (x_{T,1}(0), x_{T,1}(1)) of the SC_tanh limit beside Gaussian draws of its covariance; the
    squared Mahalanobis distances of the pairs against χ²_2; the SD of each coordinate at z = 1 and the correlation
    of coordinate pairs by |i − j|, models against the planted non-exchangeable controls."""
    fig, axes = new_grid(2, 2, ax, figsize=(10.5, 8.4))
    (scatter, qq), (spread, pairs) = axes
    entries = {(m["model"], m["kind"]): m for m in numbers["models"]}
    z = numbers["inputs"]
    limit = data[("SC_tanh", "sde")][:, 0, :]
    gaussian_key = next(k for k in data if isinstance(k, tuple) and k[1] == "gaussian")
    gaussian = data[gaussian_key][:, 0, :]
    scatter.scatter(gaussian[:, 0], gaussian[:, 1], s=3, alpha=0.35, color="tab:gray", label="Gaussian, same covariance")
    scatter.scatter(limit[:, 0], limit[:, 1], s=3, alpha=0.45, color="tab:blue", label="limit SDE")
    scatter.set_xlabel(f"$x_{{T,1}}(z = {z[0]:g})$")
    scatter.set_ylabel(f"$x_{{T,1}}(z = {z[1]:g})$")
    b2 = entries[("SC_tanh", "sde")]["gaussianity"]["b2"]
    scatter.set_title(f"{NAMES['SC_tanh']} limit: the pair at z = {z[0]:g}, {z[1]:g}\nMardia b_2 = {b2:.2f} "
                      f"(Gaussian: 8)", fontsize=10)
    scatter.legend(fontsize=7, markerscale=3)
    for key, colour in ((("SC_tanh", "sde"), "tab:blue"), (("SC_swish", "sde"), "tab:orange"),
                        (gaussian_key, "tab:gray")):
        pair = data[key][:, 0, :]
        centred = pair - pair.mean(axis=0)
        white = np.linalg.solve(np.linalg.cholesky(centred.T @ centred / len(pair)), centred.T).T
        distances = np.sort(np.sum(white * white, axis=1))
        expected = -2 * np.log1p(-(np.arange(1, len(pair) + 1) - 0.5) / len(pair))  # χ²_2 quantiles
        qq.plot(expected, distances, ".", ms=2.5, color=colour, label=f"{key[0]} {key[1]}")
    top = qq.get_xlim()[1]
    qq.plot([0, top], [0, top], "k--", lw=0.8)
    qq.set_xlabel(r"$\chi^2_2$ quantile")
    qq.set_ylabel("squared Mahalanobis distance")
    qq.set_title("Q–Q against the Gaussian's χ²₂ (a straight line if Gaussian)", fontsize=10)
    qq.legend(fontsize=7, markerscale=3)
    for (model, kind), entry in entries.items():
        if kind in ("resnet", "sde", "planted"):
            sd = np.asarray(entry["coordinate_sd"])
            style = "o-" if kind == "planted" else ".--"
            spread.plot(np.arange(1, len(sd) + 1), sd, style, ms=4, label=f"{model} {kind}")
            values = data[(model, kind)][:, :, 1]
            corr = np.corrcoef(values.T)
            lags = np.arange(1, len(sd))
            pairs.plot(lags, [np.mean(np.diagonal(corr, lag)) for lag in lags], style, ms=4, label=f"{model} {kind}")
    spread.set_xlabel("coordinate d")
    spread.set_ylabel(f"SD of $x_{{T,d}}(z = {z[1]:g})$")
    spread.set_title("each coordinate's SD: equal if exchangeable", fontsize=10)
    spread.legend(fontsize=6)
    pairs.set_xlabel("|i − j|")
    pairs.set_ylabel(f"mean corr($x_{{T,i}}, x_{{T,j}}$) at z = {z[1]:g}")
    pairs.set_title("pair correlations by distance: flat if exchangeable", fontsize=10)
    pairs.legend(fontsize=6)
    for panel in axes.ravel():
        panel.grid(True, alpha=0.3)
    fig.suptitle(f"Peluchetti & Favaro §3.4: D = {numbers['width']}, L = {numbers['depth']}, {numbers['draws']} draws",
                 fontsize=11)
    return fig


class PFQualitative(Figure):
    """The ``pf-qualitative`` figure (module docstring)."""

    name = "pf-qualitative"
    title = "Peluchetti & Favaro (2020) §3.4: exchangeable coordinates, a non-Gaussian joint law"
    paper = (
        "§3.4 (stated without a figure): with fully i.i.d. parameters the law of the x_{t,d} is exchangeable "
        "across d; p(x_T(z), x_T(z') | x_0) is not Gaussian (the limit is not a Gaussian process)"
    )
    shares_draws = True
    rejects = {
        "SC ResNets with bias variances σ_b²·(0.5 … 1.5) across the coordinates, whose marginal laws differ: "
        "not exchangeable":
            "tests/test_pf_qualitative_plants.py::test_pf_qualitative_fails_resnets_whose_bias_variances_differ_across_coordinates",
        "SC models with σ_w = 0.1, blocks that barely read the state: a nearly Gaussian joint law":
            "tests/test_pf_qualitative_plants.py::test_pf_qualitative_fails_resnets_whose_blocks_barely_read_the_state",
    }
    defaults = dict(
        width=8,
        depth=64,
        draws=2000,
        sigma_w=1.0,
        sigma_b=1.0,
        sde_factor=4,
        alpha=0.01,
        resamples=499,
    )
    smoke = dict(
        width=6,
        depth=16,
        draws=800,
        sde_factor=2,
        resamples=199,
    )

    def check_values(self, values: dict[str, Any]) -> None:
        if values["sde_factor"] & (values["sde_factor"] - 1):
            raise SettingsError("sde_factor", f"{values['sde_factor']} must be a power of two for pf-qualitative (its "
                                              "fine steps are summed pairwise)")

    def estimate_mb(self, s: Any) -> float:
        """A chunk's fine increments; all draws' outputs; a batch of permutations."""
        item = s.torch_dtype.itemsize
        chunk = min(500, s.draws) * (s.sde_factor * (s.width**2 + s.width) + 16 * s.width) * item
        return (chunk + 16 * s.draws * s.width * 8 + 4 * 2**22 * 8) / 2**20 + 300

    def estimate_seconds(self, s: Any) -> float:
        """4 models with sde_factor + 1 passes, 2 planted; ~1e-8 s per permuted value."""
        passes = 2 * (2 * s.sde_factor + 1) + 2
        return (5e-10 * passes * s.draws * s.depth * 2 * s.width**2 + 1.5e-8 * 4 * s.draws * s.depth * s.sde_factor
                * (s.width**2 + s.width) + 1e-8 * 6 * 2 * s.resamples * s.draws * s.width)

    def compute(self, s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
        return qualitative_figure(s, device, progress, runner)

    def table(self, numbers: dict[str, Any]) -> str:
        return qualitative_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_qualitative(numbers, data, ax)
