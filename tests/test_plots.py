"""validation.core.plots: tick labels that can be read — the overlap check finds labels that run into each other, and
``decade_ticks`` removes them (a log axis of one or two decades labels every minor tick by default)."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from validation.core.plots import decade_ticks, overlapping_tick_labels


def _wall_time_panel(low: float, high: float) -> tuple[Figure, object]:
    """The work–precision figure's shape: two panels, the right one log–log over [low, high] seconds."""
    figure = Figure(figsize=(11, 4.6), layout="constrained")
    axes = figure.subplots(1, 2)
    axes[1].loglog([low, high], [1e-4, 1e-1])
    axes[1].set_xlabel("wall time per solve of the batch (s)")
    return figure, axes[1]


@pytest.mark.parametrize("low, high", [(0.02, 0.45), (0.02, 0.2), (0.015, 0.6)])
def test_the_check_finds_the_default_labels_overlapping_and_decade_ticks_separates_them(low, high):
    figure, ax = _wall_time_panel(low, high)
    found = overlapping_tick_labels(figure)
    assert found and all("wall time" in line and "overlaps" in line for line in found), found
    assert any("10^-2" in line for line in found), found        # written as read, not as mathtext source
    for plain in (True, False):
        figure, ax = _wall_time_panel(low, high)
        decade_ticks(ax.xaxis, plain=plain)
        assert overlapping_tick_labels(figure) == []
        labels = {t.get_text() for t in ax.xaxis.get_majorticklabels()}
        assert ("0.05" in labels) if plain else any("5" in t for t in labels), labels


def test_decade_ticks_keeps_powers_of_ten_on_a_wide_axis_and_labels_a_narrow_one():
    figure, ax = _wall_time_panel(1e-5, 10.0)            # six decades: 1, 2, 5 of each would crowd
    decade_ticks(ax.xaxis)
    assert overlapping_tick_labels(figure) == []
    assert ax.xaxis.get_major_locator()._subs.tolist() == [1.0]
    figure, ax = _wall_time_panel(0.3, 0.9)              # less than a decade: no power of ten in view
    decade_ticks(ax.xaxis, plain=True)
    assert overlapping_tick_labels(figure) == []
    drawn = [t.get_text() for loc, t in zip(ax.xaxis.get_majorticklocs(), ax.xaxis.get_majorticklabels())
             if 0.3 <= loc <= 0.9 and t.get_text()]
    assert len(drawn) >= 2 and "0.5" in drawn, drawn    # matplotlib's linear ticks take over: 0.3, 0.4, …


def test_results_and_their_figures_show_themselves_in_jupyter():
    """Issue 67: in a Jupyter kernel a result displayed as one line of text and ``result.plot()`` as the text
    ``<Figure size 640x460 with 1 Axes>`` — the package draws without pyplot, so the inline backend never registers.
    A result gives Jupyter its report (``_repr_html_``), every figure a PNG (``_repr_png_``), for each study's kind
    of figure (one axes, a grid, the solvers' pair, a training experiment's)."""
    from validation import convergence, solvers, training
    from validation.figures import study as figures

    result = convergence.run("res1", samples=20, depths=(4, 8, 16), reference_steps=64, bootstrap=100)
    page = result._repr_html_()
    assert page.startswith("<pre>") and "verdict" in page and "&lt;- verdict" in page
    runs = [result,
            figures.run("chizat-maximal", **figures.SMOKE["chizat-maximal"]),
            solvers.run("res1", samples=8, depths=(2, 4), schemes=("euler", "midpoint"), reference_steps=32),
            training.run("marion-fig8", checkpoint_dir=None, **training.EXPERIMENTS["marion-fig8"].smoke)]
    for run in runs:
        png = run.plot()._repr_png_()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000, type(run).__name__
