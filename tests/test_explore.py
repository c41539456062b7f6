"""The classroom explorer (validation.explore): the page's numbers come from the package, the file is whole and small,
bad input is one line; in a real browser (Debian's chromium through Playwright, when both are here) the sliders
redraw the plots with no console error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from validation import explore

SMALL = dict(samples=20, depths=(2, 4, 8, 16), regime_networks=4)


@pytest.fixture(scope="module")
def res1_page(tmp_path_factory):
    data = explore.build("res1", **SMALL)
    path = explore.write_page(data, tmp_path_factory.mktemp("explore") / "res1.html")
    return data, path


def _embedded(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(re.search(r"const DATA = (\{.*?\});\n", text, re.S).group(1))


def test_the_page_carries_the_packages_numbers(res1_page):
    data, path = res1_page
    assert _embedded(path) == json.loads(json.dumps(data))
    assert path.stat().st_size < 5e6 and not path.with_name(path.name + ".part").exists()
    paths = data["paths"]
    limit_end = [c[-1] for c in paths["limit"]]
    deep = [c[-1] for c in paths["networks"]["16"]]
    shallow = [c[-1] for c in paths["networks"]["2"]]
    gap = lambda a: sum((x - y) ** 2 for x, y in zip(a, limit_end)) ** 0.5  # noqa: E731
    assert gap(deep) < gap(shallow)                                    # on this draw, depth 16 is closer than 2
    assert abs(data["paths"]["final_error"]["16"] - gap(deep)) < 1e-9 or data["paths"]["coordinates"] < data["width"]
    errors = data["errors"]
    assert errors["rms"][-1] < errors["rms"][0] and errors["theory_rate"] == 0.5
    regimes = data["regimes"]
    low, high = regimes["median_ratio"][0], regimes["median_ratio"][-1]   # β = 0.2 and β = 1.0
    assert low[-1] > low[0] and high[-1] < high[0]                     # explosion and the identity


@pytest.mark.parametrize("model", ["res2-ode", "cohen-sde", "docs/examples/damped_res1_ode.py:DampedRes1ODE"])
def test_every_kind_of_pair_makes_a_page(model, tmp_path):
    data = explore.build(model, **SMALL)
    assert data["paths"]["kind"] in ("sde", "ode") and len(data["paths"]["networks"]) == 4
    assert explore.write_page(data, tmp_path / "x.html").stat().st_size < 5e6


@pytest.mark.parametrize("argv, needle", [
    (["--model", "nope"], "nope"), (["--width", "0"], "width"), (["--samples", "3"], "samples"),
    (["--out", "/no/such/folder/x.html"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(argv, needle, capsys, tmp_path):
    out = ["--out", str(tmp_path / "x.html")] if "--out" not in argv else []
    assert explore.main([*argv, *out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_in_a_browser_the_sliders_redraw_the_plots(res1_page, chromium):
    from playwright.sync_api import sync_playwright

    _, path = res1_page
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        problems = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(path.as_uri())
        network = lambda: page.get_attribute("#paths .series-network", "points")  # noqa: E731
        before, error_before = network(), page.inner_text("#errorText")
        page.eval_on_selector("#depth", "e => { e.value = 3; e.dispatchEvent(new Event('input')); }")
        assert network() != before and page.inner_text("#errorText") != error_before
        assert page.inner_text("#depthText") == "L = 16"
        ratio = lambda: page.get_attribute("#regimes .series-ratio", "points")  # noqa: E731
        regime_before = ratio()
        page.eval_on_selector("#beta", "e => { e.value = 0; e.dispatchEvent(new Event('input')); }")
        assert ratio() != regime_before and "explosion" in page.inner_text("#regimeText")
        browser.close()
    assert not problems, problems
