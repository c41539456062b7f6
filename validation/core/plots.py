"""Log–log error curves with fitted and theoretical slopes.

How to read them: a marker is e(L) at one depth (hollow when that depth is left out of the fit, e.g. a
pre-asymptotic depth); the shaded band is the 95% paired-bootstrap interval of e(L) at each depth on its own;
the thick pale line is the least-squares fit over the filled markers, whose slope is the fitted rate given
in the legend with its 95% interval; the dashed black line has the theory's slope, drawn a little below
the first curve so that the two slopes can be compared by eye.
"""

from __future__ import annotations

import functools
import io
import textwrap
from typing import Any, Sequence

import numpy as np

__all__ = ["Curve", "decade_ticks", "draw_error_curves", "new_figure", "new_axes", "new_grid", "overlapping_tick_labels"]


class Curve:
    """One error curve: e(L) with optional per-depth interval and a fitted rate over some depths.

    Args:
        label: legend text (the fitted rate is appended when given).
        depths, errors: the curve.
        band: (low, high) arrays of a per-depth interval, or None.
        rate, rate_ci: fitted rate and its interval, drawn as a line over ``fitted`` depths.
        fitted: mask of depths in the fit.
        style: matplotlib marker/line format, e.g. "o-" (depths outside the fit get hollow markers).
    """

    def __init__(self, label: str, depths: Sequence[int], errors: np.ndarray, *, band=None, rate=None,
                 rate_ci=None, fitted=None, style: str = "o-") -> None:
        self.label = label
        self.depths = np.asarray(depths, dtype=float)
        self.errors = np.asarray(errors, dtype=float)
        self.band = band
        self.rate = rate
        self.rate_ci = rate_ci
        self.fitted = np.ones(len(depths), bool) if fitted is None else np.asarray(fitted, bool)
        self.style = style


def _fitted_line(curve: Curve) -> tuple[np.ndarray, np.ndarray]:
    x = np.log(curve.depths[curve.fitted])
    y = np.log(curve.errors[curve.fitted])
    intercept = y.mean() + curve.rate * x.mean()
    return np.exp(x), np.exp(intercept - curve.rate * x)


@functools.cache
def _shown_figure() -> type:
    """matplotlib's Figure, able to show itself in Jupyter (matplotlib is imported when a figure is drawn: a run
    without --plot never loads it)."""
    from matplotlib.figure import Figure

    class ShownFigure(Figure):
        """A figure built without pyplot (no global figure registry) that Jupyter and IPython still display as an
        image: they call :meth:`_repr_png_`, where a pyplot figure relies on the inline backend, which is only
        set up once pyplot is imported (the package never imports it, so a result's ``plot()`` displayed as the text
        ``<Figure size 640x460 with 1 Axes>``)."""

        def _repr_png_(self) -> bytes:
            buffer = io.BytesIO()
            self.savefig(buffer, format="png", dpi=100)
            return buffer.getvalue()

    return ShownFigure


def new_figure(**options: Any) -> Any:
    """A new figure (``options`` go to matplotlib's ``Figure``, e.g. ``figsize``), built without pyplot and shown as
    an image by Jupyter; laid out by matplotlib's constrained layout unless ``layout`` is given."""
    return _shown_figure()(**{"layout": "constrained", **options})


def new_axes(ax: Any = None, figsize: tuple[float, float] = (6.4, 4.6)) -> tuple[Any, Any]:
    """(figure, axes): ``ax`` and its figure when given, else a new figure with one axes."""
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(figsize=figsize)
    return fig, fig.add_subplot()


def new_grid(rows: int, columns: int, ax: Any = None, figsize: tuple[float, float] | None = None,
             **options: Any) -> tuple[Any, np.ndarray]:
    """(figure, rows × columns array of axes): ``ax`` (any sequence of that many Axes) and its figure when
    given, else a new figure (``options`` go to ``Figure.subplots``, e.g. ``sharey=True``)."""
    if ax is not None:
        axes = np.asarray(ax, dtype=object)
        if axes.size != rows * columns:
            raise ValueError(f"this figure has {rows} × {columns} panels; got {axes.size} axes")
        axes = axes.reshape(rows, columns)
        return axes[0, 0].figure, axes
    fig = new_figure(figsize=figsize or (4.3 * columns, 4.1 * rows))
    return fig, np.asarray(fig.subplots(rows, columns, squeeze=False, **options), dtype=object)


def draw_error_curves(
    ax: Any,
    curves: Sequence[Curve],
    *,
    title: str,
    theory_rate: float | None = None,
    theory_label: str = "theory",
    subtitle: str | None = None,
    ylabel: str = "strong error",
) -> None:
    """Draw ``curves`` on ``ax`` in log–log: markers (hollow for depths left out of the fit), the shaded
    per-depth bootstrap band, the fitted line over the fitted depths, and a dashed guide of the theory slope
    anchored below the first curve's fitted centre."""
    import matplotlib as mpl

    colours = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, curve in enumerate(curves):
        colour = colours[i % len(colours)]
        label = curve.label
        if curve.rate is not None and np.isfinite(curve.rate):
            label += f": rate {curve.rate:.3f}"
            if curve.rate_ci is not None:
                label += f" [{curve.rate_ci[0]:.3f}, {curve.rate_ci[1]:.3f}]"
        ax.plot(curve.depths, curve.errors, curve.style, color=colour, label=label, ms=5, lw=1.2)
        if not curve.fitted.all():  # depths left out of the fit: hollow markers
            marker = curve.style.rstrip("-:.")[:1] or "o"
            ax.plot(curve.depths[~curve.fitted], curve.errors[~curve.fitted], marker, ms=5, color=colour,
                    markerfacecolor="white", lw=0)
        if curve.band is not None:
            ax.fill_between(curve.depths, curve.band[0], curve.band[1], color=colour, alpha=0.18, lw=0)
        if curve.rate is not None and np.isfinite(curve.rate):
            xs, ys = _fitted_line(curve)
            ax.plot(xs, ys, "-", color=colour, lw=3, alpha=0.35)
    if theory_rate is not None and curves and curves[0].rate is not None and np.isfinite(curves[0].rate):
        first = curves[0]
        x = np.log(first.depths[first.fitted])
        y = np.log(first.errors[first.fitted])
        xs = np.exp(np.linspace(x.min(), x.max(), 2))
        ys = np.exp(y.mean() + theory_rate * x.mean() - theory_rate * np.log(xs)) * 0.8
        ax.plot(xs, ys, "k--", lw=1.2, label=f"{theory_label}: slope -{theory_rate:g}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("depth L")
    ax.set_ylabel(ylabel)
    heading = textwrap.fill(title, 72)
    ax.set_title(heading if subtitle is None else f"{heading}\n{subtitle}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")


def decade_ticks(axis: Any, *, plain: bool = False) -> None:
    """Readable labels on a log ``axis`` (``ax.xaxis`` or ``ax.yaxis``; call it once the data are drawn): at
    1, 2 and 5 × 10^k where the axis spans at most two decades, at the powers of ten beyond that, the other
    ticks unlabelled. Left to itself, an axis spanning one or two decades labels every minor tick in
    scientific notation and the labels run into each other ("2×10⁻²3×10⁻²4×10⁻²…"), and one spanning less
    than a decade labels nothing. ``plain``: labels as numbers (0.02, 0.05, 0.1), e.g. for seconds."""
    from matplotlib.ticker import FormatStrFormatter, LogFormatterSciNotation, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    narrow = low > 0 and np.log10(high / low) <= 2
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
    axis.set_major_formatter(FormatStrFormatter("%g") if plain else
                             LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(np.inf, np.inf)))
    axis.set_minor_formatter(NullFormatter())


def _label_text(text: str) -> str:
    """A tick label as read: "$\\mathdefault{2\\times10^{-2}}$" → "2×10^-2"."""
    for tex, plain in (("$", ""), ("\\mathdefault", ""), ("\\times", "×"), ("{", ""), ("}", ""), ("\\", "")):
        text = text.replace(tex, plain)
    return text


def overlapping_tick_labels(figure: Any) -> list[str]:
    """The tick labels of ``figure`` that overlap a neighbour on the same axis once drawn, as "panel title, x:
    '2×10⁻²' overlaps '3×10⁻²'" lines — empty when every label can be read. Draws the figure (Agg)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    found = []
    for ax in figure.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) * 1e-9
            labels = [label for locs, texts in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                                                (axis.get_minorticklocs(), axis.get_minorticklabels()))
                      for loc, label in zip(locs, texts)     # drawn: in the view, visible, not empty
                      if low - span <= loc <= high + span and label.get_visible() and label.get_text().strip()]
            boxes = sorted(((label.get_window_extent(renderer), label.get_text()) for label in labels),
                           key=lambda item: item[0].x0 if name == "x" else item[0].y0)
            for (box, text), (after, other) in zip(boxes, boxes[1:]):
                if box.overlaps(after) and box != after:
                    found.append(f"{ax.get_title() or ax.get_xlabel() or 'axes'}, {name}: {_label_text(text)!r} overlaps "
                                 f"{_label_text(other)!r}")
    return found
