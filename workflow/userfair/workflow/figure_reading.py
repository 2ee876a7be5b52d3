"""What Fig. 2 shows, in sentences computed from the run's numbers: the report's caption of
``results/figures/relevance.png`` includes the text :func:`relevance_reading` writes
(``results/figures/relevance.rst``), so that no sentence of it states a shape the data do
not have (it said "0 at both ends, peaking near 50 %" for every run).

The input is the relevance experiment's frame (``dataset, share, measure, value``; share in
[0, 1], userfair.workflow.experiments).
"""

from __future__ import annotations

import math

import pandas as pd

#: The measures that track effectiveness disparity, read per dataset.
DISPARITY = ("SD-P", "SD-NDCG", "PUF-P-Jacc", "PUF-NDCG-Jacc")
#: Values within this of 0 read as 0 (the measures are sums of float64 terms).
ZERO = 1e-9


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "undefined"
    return "0" if abs(value) <= ZERO else f"{value:.3g}"  # 1.25e-16 is a sum's rounding


def _percent(share: float) -> str:
    return f"{100 * share:.0f} %"


def measure_shape(series: pd.Series) -> dict:
    """``series``: a measure's values indexed by share. Its values at the first and the last
    share, and where it is highest (the first such share)."""
    series = series.sort_index()
    finite = series[series.map(math.isfinite)]
    top = finite.idxmax() if not finite.empty else math.nan
    return {
        "first": float(series.iloc[0]),
        "last": float(series.iloc[-1]),
        "start": float(series.index[0]),
        "end": float(series.index[-1]),
        "peak": float(top),
        "peak_value": float(finite.max()) if not finite.empty else math.nan,
    }


def _sentence(measure: str, shape: dict) -> str:
    ends = (
        f"{measure} is {_number(shape['first'])} at {_percent(shape['start'])} and "
        f"{_number(shape['last'])} at {_percent(shape['end'])}"
    )
    if not math.isfinite(shape["peak"]):
        return f"{ends}."
    if shape["peak"] in (shape["start"], shape["end"]):
        return f"{ends}; it is highest at {_percent(shape['peak'])}."
    return f"{ends}, highest ({_number(shape['peak_value'])}) at {_percent(shape['peak'])}."


def _zero_at_both_ends(shapes: dict[str, dict]) -> bool:
    return all(
        math.isfinite(s["first"])
        and math.isfinite(s["last"])
        and abs(s["first"]) <= ZERO
        and abs(s["last"]) <= ZERO
        for s in shapes.values()
    )


def relevance_reading(relevance: pd.DataFrame) -> str:
    """reStructuredText: per dataset, each disparity measure's values at both ends and its
    highest point; whether they all are 0 at both ends; and Gini's missing point at 100 %
    only where Gini is undefined there."""
    lines = []
    for dataset in dict.fromkeys(relevance["dataset"]):
        part = relevance[relevance["dataset"] == dataset]
        shapes = {}
        for measure in DISPARITY:
            rows = part[part["measure"] == measure]
            if not rows.empty:
                shapes[measure] = measure_shape(rows.set_index("share")["value"])
        text = [f"**{dataset}**:"] + [_sentence(m, s) for m, s in shapes.items()]
        if shapes:
            text.append(
                "All of them are 0 at both ends."
                if _zero_at_both_ends(shapes)
                else "They are not all 0 at both ends."
            )
        last = part[part["share"] == part["share"].max()]
        undefined = [
            m
            for m in ("Gini-P", "Gini-NDCG")
            if not last[last["measure"] == m].empty
            and not math.isfinite(float(last[last["measure"] == m]["value"].iloc[0]))
        ]
        if undefined:
            text.append(
                f"{' and '.join(undefined)} {'has' if len(undefined) == 1 else 'have'} no "
                f"point at {_percent(float(last['share'].iloc[0]))} (undefined when every "
                "score is 0)."
            )
        lines.append("- " + " ".join(text))
    return "\n".join(lines) + "\n"
