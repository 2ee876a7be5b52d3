"""What Figs. 2, 3, 4 and the gamma figures show, in sentences computed from the run's
numbers: the report's caption of each figure includes the text its reading writes
(``results/figures/NAME.rst``: :func:`relevance_reading`, :func:`similarity_reading`,
:func:`extreme_reading`, :func:`gamma_models_reading`, :func:`gamma_relevance_reading`), so
that no sentence of it states a shape the data do not have (Fig. 2's said "0 at both ends,
peaking near 50 %" for every run; Fig. 3's "SD stays flat; UF and PUF fall" and Fig. 4's
"PUF separates the two cases; UF hardly moves" were fixed text).

The inputs are the experiments' frames (userfair.workflow.experiments): relevance
``dataset, share, measure, value`` (share in [0, 1]); similarity ``dataset, distribution,
skewness, measure, value``; extreme ``dataset, share, assignment, score, measure, value``;
gamma ``dataset, model, gamma, measure, value`` and ``dataset, share, gamma, measure,
value``. Shapes and trends are :mod:`userfair.workflow.properties`' (its tolerance
:data:`~userfair.workflow.properties.FLAT`), the same the claims use.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from userfair.workflow.properties import FLAT, curve_shape, extreme_gap, trend
from userfair.workflow.tables import model_label

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


def _signed(value: float) -> str:
    if not math.isfinite(value):
        return "undefined"
    return "0" if abs(value) <= ZERO else f"{value:+.3g}"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


# --- Fig. 3 ------------------------------------------------------------------------------

#: Fig. 3's reading of the paper: SD ignores similarity (flat), UF and PUF fall.
SIMILARITY_PAPER = {"SD-P": "flat", "SD-NDCG": "flat", "UF": "falls", "PUF-P": "falls",
                    "PUF-NDCG": "falls"}  # fmt: skip


def similarity_reading(similarity: pd.DataFrame, tolerance: float = FLAT) -> str:
    """reStructuredText: per dataset, the range of the sampled skewness, the skewness of the
    dataset's own Jaccard similarity, each measure's trend over the range (the
    least-squares change, flat within ``tolerance``), and whether the paper's reading
    (:data:`SIMILARITY_PAPER`) holds, naming the measures for which it does not."""
    lines = []
    for dataset in dict.fromkeys(similarity["dataset"]):
        part = similarity[similarity["dataset"] == dataset]
        sampled = part[part["distribution"] != "observed"]
        text = [f"**{dataset}**:"]
        if sampled.empty:
            lines.append(f"- **{dataset}**: no sampled similarity.")
            continue
        low, high = sampled["skewness"].min(), sampled["skewness"].max()
        text.append(f"the sampled similarities' skewness runs from {low:.2f} to {high:.2f}")
        observed = part.loc[part["distribution"] == "observed", "skewness"]
        text[-1] += (
            f"; the dataset's own Jaccard similarity has {observed.iloc[0]:.2f} (dashed)."
            if len(observed)
            else "."
        )
        trends = {}
        for measure in dict.fromkeys(sampled["measure"]):
            rows = sampled[sampled["measure"] == measure]
            trends[measure] = trend(rows["skewness"], rows["value"], tolerance)
        said = [f"{m} {t['trend']} ({_signed(t['change'])})" for m, t in trends.items()]
        text.append(
            f"Over that range (the least-squares change; flat within ±{tolerance:g}): "
            + "; ".join(said) + "."
        )  # fmt: skip
        checked = {m: w for m, w in SIMILARITY_PAPER.items() if m in trends}
        differ = [m for m, w in checked.items() if trends[m]["trend"] != w]
        if checked and not differ:
            text.append("SD is flat while UF and PUF fall, as in the paper.")
        elif differ:
            text.append(
                "The paper's reading (SD flat; UF and PUF fall) does not hold here for "
                f"{_names(differ)}."
            )
        lines.append("- " + " ".join(text))
    return "\n".join(lines) + "\n"


# --- Fig. 4 ------------------------------------------------------------------------------


def extreme_reading(extreme: pd.DataFrame, tolerance: float = FLAT) -> str:
    """reStructuredText: per dataset and measure, the mean gap MostUnfair - MostFair over
    the shares for P and NDCG and the range of MostFair; whether PUF's gap exceeds UF's by
    more than ``tolerance`` on both scores (the paper: PUF separates the two cases, UF
    hardly moves)."""
    lines = []
    for dataset in dict.fromkeys(extreme["dataset"]):
        part = extreme[extreme["dataset"] == dataset]
        text = [f"**{dataset}**:"]
        gaps: dict[str, dict[str, float]] = {}
        for measure in dict.fromkeys(part["measure"]):
            rows = part[part["measure"] == measure]
            said = []
            for score in dict.fromkeys(rows["score"]):
                gap, _, _ = extreme_gap(rows[rows["score"] == score])
                gaps.setdefault(measure, {})[score] = gap
                fair = rows[(rows["score"] == score) & (rows["assignment"] == "MostFair")]
                said.append(
                    f"{_signed(gap)} ({score}; MostFair from {_number(fair['value'].min())} "
                    f"to {_number(fair['value'].max())})"
                )
            text.append(f"{measure}: MostUnfair - MostFair is on average {', '.join(said)}.")
        if {"PUF", "UF"} <= gaps.keys():
            scores = [s for s in gaps["PUF"] if s in gaps["UF"]]
            wider = [s for s in scores if gaps["PUF"][s] - abs(gaps["UF"][s]) > tolerance]
            if scores and len(wider) == len(scores):
                text.append(
                    f"PUF separates the two cases by more than UF (beyond {tolerance:g}), "
                    "as in the paper."
                )
            else:
                text.append(
                    f"PUF does not separate the two cases by more than UF (beyond "
                    f"{tolerance:g}) for {_names([s for s in scores if s not in wider])}, "
                    "unlike the paper."
                )
        lines.append("- " + " ".join(text))
    return "\n".join(lines) + "\n"


# --- the gamma figures ---------------------------------------------------------------------


def _fairest(values: pd.Series) -> str:
    """The model (index) with the lowest value (UF and PUF are 0 for a fair list: the
    lowest is the fairest); ties named together."""
    return " = ".join(values.index[np.isclose(values, values.min(), rtol=0, atol=ZERO)])


def gamma_models_reading(gamma: pd.DataFrame) -> str:
    """reStructuredText: per dataset and measure, the range of the values over the models
    and gammas, and the fairest model at each gamma: one name when it is the same at every
    gamma, else each gamma's."""
    gamma = gamma.assign(model=gamma["model"].map(model_label))
    lines = []
    for dataset in dict.fromkeys(gamma["dataset"]):
        part = gamma[gamma["dataset"] == dataset]
        text = [f"**{dataset}**:"]
        for measure in dict.fromkeys(part["measure"]):
            rows = part[part["measure"] == measure]
            values = sorted(rows["gamma"].unique())
            best = {g: _fairest(rows[rows["gamma"] == g].set_index("model")["value"])
                    for g in values}  # fmt: skip
            span = f"from {_number(rows['value'].min())} to {_number(rows['value'].max())}"
            if len(set(best.values())) == 1:
                pick = f"the fairest model is {best[values[0]]} at every γ"
            else:
                pick = "the fairest model changes with γ: " + ", ".join(
                    f"{best[g]} at γ = {g:g}" for g in values
                )
            text.append(f"{measure} runs {span}; {pick}.")
        lines.append("- " + " ".join(text))
    return "\n".join(lines) + "\n"


#: A shape of :func:`properties.curve_shape` in a sentence ("the curve is ...").
SHAPE_WORDS = {"inverted U": "an inverted U", "U": "a U", "other": "of no simple shape"}


def gamma_relevance_reading(gamma: pd.DataFrame, tolerance: float = FLAT) -> str:
    """reStructuredText: per dataset and measure, the shape of its curve over the share of
    users with zero relevance at each gamma (:func:`properties.curve_shape`, ``tolerance``),
    the gammas of one shape named together, and the largest difference between two gammas
    at one share."""
    lines = []
    for dataset in dict.fromkeys(gamma["dataset"]):
        part = gamma[gamma["dataset"] == dataset]
        text = [f"**{dataset}**:"]
        for measure in dict.fromkeys(part["measure"]):
            rows = part[part["measure"] == measure]
            shapes: dict[str, list[str]] = {}
            for value in sorted(rows["gamma"].unique()):
                curve = rows[rows["gamma"] == value]
                shape = curve_shape(curve["share"], curve["value"], tolerance)["shape"]
                shapes.setdefault(shape, []).append(f"{value:g}")
            spread = rows.groupby("share")["value"].agg(lambda v: v.max() - v.min()).max()
            said = "; ".join(f"{SHAPE_WORDS.get(shape, shape)} at γ = {', '.join(gs)}"
                             for shape, gs in shapes.items())  # fmt: skip
            text.append(
                f"{measure}'s curve is {said}, and the gammas differ by at most "
                f"{_number(float(spread))} at one share."
            )
        lines.append("- " + " ".join(text))
    return "\n".join(lines) + "\n"
