"""The look of every figure (config ``plots:``): the seaborn style and its settings
(:class:`Style`), one colour and marker per model (:func:`model_styles`, colour-blind
safe), colours that stay apart (:func:`model_colours`: at least :data:`MIN_COLOUR_DISTANCE`
in CIELAB), the widths figures are drawn for (:data:`COLUMN_WIDTH_IN`,
:data:`PAGE_WIDTH_IN`) and the checks of legibility (:func:`text_overlaps`: no tick labels,
cell texts or titles within 2 pt of each other; :func:`smallest_font`;
:func:`honest_span`: a panel spans at least :data:`MIN_SPAN` of its values), and
:func:`save` to PDF and PNG. The figures themselves:
:mod:`userfair.workflow.plots` (the paper's) and :mod:`userfair.workflow.analysis_figures`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("matplotlib", "seaborn")
require("workflow", NEEDS, __name__)

import matplotlib  # noqa: E402  (after the check, which names the extra to install)

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from userfair.files.io import atomic_path  # noqa: E402


@dataclass(frozen=True)
class Style:
    """The ``plots:`` section of the config."""

    style: str = "whitegrid"
    context: str = "paper"
    palette: str = "colorblind"
    font_scale: float = 1.0
    column_width_in: float = 3.5
    dpi: int = 200

    def apply(self) -> None:
        sns.set_theme(
            style=self.style, context=self.context, palette=self.palette, font_scale=self.font_scale
        )
        plt.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42, "savefig.bbox": "tight"})


#: The smallest CIELAB distance (Delta E 1976) between the colours of two models: the
#: colorblind palette's two pinks (its 5th and 7th colours, NGCF and NCL in the default
#: model list) are 20.7 apart and look alike; 25 tells them apart.
MIN_COLOUR_DISTANCE = 25.0
#: Where more distinct colours come from when the configured palette runs out of them.
FALLBACK_PALETTES = ("tab10", "Set1", "dark", "Set2", "husl")


def lab(colour) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour (a matplotlib colour)."""
    rgb = np.asarray(matplotlib.colors.to_rgb(colour), dtype=float)
    rgb = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = (xyz @ rgb) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def model_colours(n: int, palette: str) -> list:
    """``n`` colours for ``n`` models, pairwise at least :data:`MIN_COLOUR_DISTANCE` apart
    in CIELAB: the configured ``palette``'s colours in order (a continuous one sampled more
    finely), skipping any too close to one already taken, then those of
    :data:`FALLBACK_PALETTES`; the bar is lowered only when even those run out (n > ~20)."""
    candidates = [c for size in (n, 2 * n, 3 * n) for c in sns.color_palette(palette, size)]
    candidates += [c for name in FALLBACK_PALETTES for c in sns.color_palette(name)]
    points = [lab(c) for c in candidates]
    bar = MIN_COLOUR_DISTANCE
    while True:
        chosen: list[int] = []
        for i, point in enumerate(points):
            if all(np.linalg.norm(point - points[j]) >= bar for j in chosen):
                chosen.append(i)
            if len(chosen) == n:
                return [candidates[i] for i in chosen]
        bar *= 0.8


def _drawn_ticklabels(axis) -> list:
    """The tick labels of ``axis`` that are drawn: those of ticks inside its view limits
    (matplotlib keeps labels of ticks just outside them, not drawn)."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(abs(low), abs(high), 1e-300)
    return [t.label1 for t in axis.get_major_ticks() if low - slack <= t.get_loc() <= high + slack]


def _text_boxes(fig: plt.Figure, draw: bool = True) -> list:
    """(text, window extent) of every visible tick label, annotation and title of the
    visible axes of ``fig`` (drawn first, so the extents are final; ``draw=False``: the
    caller has just drawn it)."""
    if draw:
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += [*_drawn_ticklabels(ax.xaxis), *_drawn_ticklabels(ax.yaxis), *ax.texts, ax.title]
    return [
        (t.get_text(), t.get_window_extent(renderer))
        for t in texts
        if t.get_visible() and t.get_text().strip()
    ]


def text_overlaps(fig: plt.Figure, gap: float = 2.0, draw: bool = True) -> list[tuple[str, str]]:
    """The pairs of texts of :func:`_text_boxes` closer than ``gap`` points to each other
    in both directions (overlapping, or touching: e.g. Fig. 2's tick labels running
    together as "050100")."""
    boxes = _text_boxes(fig, draw)
    if len(boxes) < 2:
        return []
    room = gap * fig.dpi / 72  # points to the canvas' pixels
    x0, y0, x1, y1 = (
        np.array([getattr(b, name) for _, b in boxes]) for name in ("x0", "y0", "x1", "y1")
    )
    wide = np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :])
    tall = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :])
    clash = np.triu((wide > -room) & (tall > -room), k=1)
    return [(boxes[i][0], boxes[j][0]) for i, j in zip(*np.nonzero(clash))]


#: The widths a figure is drawn for, in inches: a column of a two-column paper (also
#: ``plots.column_width_in``) and a page (both columns).
COLUMN_WIDTH_IN, PAGE_WIDTH_IN = 3.5, 7.2
#: The smallest font of any text of a figure at the size it is drawn, in points.
MIN_FONT_PT = 6.0


def smallest_font(fig: plt.Figure, draw: bool = True) -> float:
    """The smallest font size (points) of the visible texts of ``fig`` (of :func:`_text_boxes`,
    the figure's own texts and its legends)."""
    if draw:
        fig.canvas.draw()
    texts = [t for ax in fig.axes if ax.get_visible()
             for t in (*_drawn_ticklabels(ax.xaxis), *_drawn_ticklabels(ax.yaxis), *ax.texts,
                       ax.title, ax.xaxis.label, ax.yaxis.label)]  # fmt: skip
    texts += list(fig.texts)
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if legend is not None:
            texts += [*legend.get_texts(), legend.get_title()]
    sizes = [t.get_fontsize() for t in texts if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else math.inf


def legibility(fig: plt.Figure, gap: float = 2.0) -> tuple[float, list[tuple[str, str]]]:
    """(:func:`smallest_font`, :func:`text_overlaps`) of ``fig``, drawn once for both (a
    draw with constrained layout is most of either's time)."""
    fig.canvas.draw()
    return smallest_font(fig, draw=False), text_overlaps(fig, gap, draw=False)


#: One colour a model, colour-blind safe: Okabe and Ito's eight, then four of Paul Tol's
#: muted set chosen greedily to stay apart from them; every pair is at least 17 CIELAB units
#: apart as seen with normal vision, protanopia and deuteranopia (:func:`as_seen`). With
#: them one marker a model (:data:`MODEL_MARKERS`), so that no two models share both.
MODEL_COLOURS = (
    "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000",
    "#332288", "#117733", "#DDCC77", "#882255",
)  # fmt: skip
MODEL_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "d", "p")


def model_styles(models: list[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) of each of ``models`` (names or labels, in the run's order): the
    same model gets the same pair in every figure of a run; pairs repeat only after
    :data:`MODEL_COLOURS` (12) models, and then colour and marker repeat out of step."""
    return {
        model: (MODEL_COLOURS[i % len(MODEL_COLOURS)], MODEL_MARKERS[i % len(MODEL_MARKERS)])
        for i, model in enumerate(models)
    }


#: Colour-vision deficiency in linear RGB (Vienot, Brettel and Mollon 1999): what a
#: protanope and a deuteranope see of an sRGB colour.
CVD = {
    "protan": np.array([[0.11238, 0.88762, 0], [0.11238, 0.88762, 0], [0.00401, -0.00401, 1]]),
    "deutan": np.array([[0.29275, 0.70725, 0], [0.29275, 0.70725, 0], [-0.02234, 0.02234, 1]]),
}


def as_seen(colour, deficiency: str):
    """``colour`` as seen with ``deficiency`` (a key of :data:`CVD`), as sRGB."""
    rgb = np.asarray(matplotlib.colors.to_rgb(colour), dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    seen = np.clip(CVD[deficiency] @ linear, 0, 1)
    return tuple(np.where(seen <= 0.0031308, 12.92 * seen, 1.055 * seen ** (1 / 2.4) - 0.055))


#: The least y range of a line panel, as a share of its largest absolute value: a change of
#: 0.3 % (Fig. 2's UF, 0.601 to 0.603) must not fill the panel as if it were steep.
MIN_SPAN = 0.1


def honest_span(ax, share: float = MIN_SPAN) -> None:
    """Widen ``ax``'s y range about its centre to at least ``share`` of the largest
    absolute y value of its data (nothing when it is already that wide, or all 0)."""
    low, high = ax.dataLim.y0, ax.dataLim.y1
    if not (np.isfinite(low) and np.isfinite(high)):
        return
    need = share * max(abs(low), abs(high))
    bottom, top = ax.get_ylim()
    if need > 0 and top - bottom < need:
        centre = (low + high) / 2
        ax.set_ylim(centre - need / 2, centre + need / 2)


def save(
    fig: plt.Figure, pdf_path: str | os.PathLike, png_path: str | os.PathLike, style: Style
) -> None:
    """Write ``fig`` as PDF and PNG (atomically) at the size it was drawn for (never grown:
    each figure lays out its texts for its width) and close it. The PDF carries no creation
    date, so the same figure gives the same bytes on every run."""
    with atomic_path(pdf_path) as tmp:
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None})
    with atomic_path(png_path) as tmp:
        fig.savefig(tmp, format="png", dpi=style.dpi)
    plt.close(fig)


def legend_outside(fig: plt.Figure, handles, labels, ncol: int, where: str = "lower") -> None:
    """One figure legend outside the panels (``where``: lower or upper edge)."""
    fig.legend(handles, labels, loc=f"outside {where} center", ncol=ncol, frameon=False)


def check_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing columns {missing}; have {list(frame.columns)}")


def panel_grid(n_panels: int, width: float, height: float, max_columns: int = 2):
    """At most ``max_columns`` panels per row, each ``width`` x ``height`` inches; spare
    panels hidden."""
    ncols = min(max_columns, n_panels)
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, layout="constrained", figsize=(width * ncols, height * nrows)
    )
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, axes


def percent(share: pd.Series) -> pd.Series:
    return (100 * share).round().astype(int)
