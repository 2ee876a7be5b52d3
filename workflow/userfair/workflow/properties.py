"""Every measure's properties, measured on one run per dataset (docs/analyses.md#properties):
the observed range across the models and across the relevance experiment against the
theoretical range, discriminative power, stability, the shape of its curve when
effectiveness disparity or the similarity distribution change, the extreme-case gap,
agreement with the Eff measures and PUF, and cost. The measures are those the run's
measures files hold (the registry's, opt-in and any other key), never a list of this
module's own; the paper's claims (:mod:`userfair.workflow.claims`) are checks over them.

The uncertainty of a property comes from the run's *draws*: every bootstrap resample of
the evaluated users, pooled over the training replicates when there are several (each draw
is one replicate's lists on one resample of its users, the same draw for every model)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from userfair import measures
from userfair.bootstrap import inference
from userfair.formulas.agreement import oriented

#: Tolerance of the experiments' shapes, on the unit range every Fair measure of the paper
#: lives in: a curve whose span is at most this is flat; a rise or fall, or the drop from a
#: peak to an end, counts only beyond it; a step against a monotone curve's direction may
#: be at most this.
FLAT = 0.02
#: The share of the draws that decides a claim read off model picks (e.g. which model is
#: fairest) is the run's interval level (uncertainty.level).

#: The per-user scores the experiments' PUF and SD rows are named by (``PUF-P``: PUF of P
#: with the experiment's similarity).
SCORES = measures.PUF_SCORES


def declared(name: str) -> bool:
    """Whether the registry (built-ins and the plugins loaded) declares ``name``."""
    return measures.is_known(name)


def is_eff(name: str) -> bool:
    """An effectiveness measure (higher is better); an undeclared name counts as Fair."""
    return declared(name) and measures.higher_is_better(name)


def theoretical_range(name: str) -> tuple[float, float]:
    """The range a measure can take, as its declaration states it
    (``userfair.measures.base.Measure.bounds``: effectiveness, Gini, envy and PUF in
    [0, 1], the SD of scores in [0, 1] in [0, 0.5], UF at most 1 and unbounded below; a
    plugin's declared ``bounds``); NaN for a name the registry does not know."""
    if not declared(name):
        return math.nan, math.nan
    low, high = measures.get(name).bounds
    return float(low), float(high)


def reads_similarity(name: str) -> bool | None:
    """Whether a measure reads the user similarity (its declaration's kind: the pair
    measures, PUF and the plugins', and UF do; the spread, envy, effectiveness and
    group measures do not); None for a name the registry does not know."""
    if not declared(name):
        return None
    return measures.get(name).kind in ("pair", "uf")


@dataclass
class DatasetRun:
    """What one dataset of a run holds for the properties and claims. ``points``: model ->
    measure -> value (replicate 0's lists); ``seconds``: model -> measure -> seconds;
    ``users``: evaluated users; ``draws``: model -> frame (one row per draw, a column per
    measure; every model the same index), None without resamples; ``replicates``:
    replicate -> model -> measure -> value (R > 1 only); the experiment tables of Figs. 2-4
    as the experiment rules write them (None when absent)."""

    dataset: str
    points: dict[str, dict[str, float]]
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    users: int = 0
    draws: dict[str, pd.DataFrame] | None = None
    replicates: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)
    relevance: pd.DataFrame | None = None
    similarity: pd.DataFrame | None = None
    extreme: pd.DataFrame | None = None
    level: float = 0.95

    @property
    def models(self) -> list[str]:
        return list(self.points)

    def measure_names(self) -> list[str]:
        """Every measure the run's measures files hold (a number under every model): the
        registry's in its order, then any other name in the order of the first file."""
        if not self.points:
            return []
        first = next(iter(self.points.values()))
        held = [
            name
            for name, value in first.items()
            if _is_number(value) and all(_is_number(p.get(name)) for p in self.points.values())
        ]
        known = [m.name for m in measures.declared() if m.name in held]
        return known + [name for name in held if name not in known]

    def values(self, measure: str) -> np.ndarray:
        return np.array([float(self.points[m][measure]) for m in self.models])

    def drawn(self, measure: str) -> np.ndarray | None:
        """(draws, models) values of ``measure``, or None without draws or column."""
        if not self.draws or any(measure not in f.columns for f in self.draws.values()):
            return None
        return np.stack([self.draws[m][measure].to_numpy(float) for m in self.models], axis=1)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def interval(values: np.ndarray | None, level: float) -> tuple[float, float]:
    """The percentile interval of ``values`` where finite; NaN, NaN without any."""
    if values is None:
        return math.nan, math.nan
    finite = np.asarray(values, float)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return math.nan, math.nan
    return inference.percentile_interval(finite, level)


def spread(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """max - min over ``axis`` of the finite values (NaN when none is finite)."""
    values = np.asarray(values, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice is NaN here
        return np.nanmax(values, axis=axis) - np.nanmin(values, axis=axis)


# --- the shape of a curve ---------------------------------------------------------------


def curve_shape(x, y, tolerance: float = FLAT) -> dict:
    """The shape of ``y`` over increasing ``x`` (NaN points left out, e.g. Gini where every
    score is 0): ``flat`` when its span is at most ``tolerance``; ``rising`` or ``falling``
    when no step goes against that direction by more than ``tolerance`` and the ends differ
    by more than it; ``inverted U`` when the peak lies strictly inside, both ends are more
    than ``tolerance`` below it and no step before the peak falls, nor after it rises, by
    more than ``tolerance``; ``U`` the mirror image; else ``other``. Also the peak's
    position and the drops from the peak to each end."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    out = {"shape": "not measured", "peak_at": math.nan, "drop_start": math.nan,
           "drop_end": math.nan, "span": math.nan}  # fmt: skip
    if len(y) < 3:
        return out
    steps = np.diff(y)
    peak = int(np.argmax(y))
    low = int(np.argmin(y))
    out.update(peak_at=float(x[peak]), drop_start=float(y[peak] - y[0]),
               drop_end=float(y[peak] - y[-1]), span=float(y.max() - y.min()))  # fmt: skip
    if out["span"] <= tolerance:
        shape = "flat"
    elif steps.min() >= -tolerance and y[-1] - y[0] > tolerance:
        shape = "rising"
    elif steps.max() <= tolerance and y[0] - y[-1] > tolerance:
        shape = "falling"
    elif (
        0 < peak < len(y) - 1
        and min(out["drop_start"], out["drop_end"]) > tolerance
        and steps[:peak].min() >= -tolerance
        and steps[peak:].max() <= tolerance
    ):
        shape = "inverted U"
    elif (
        0 < low < len(y) - 1
        and min(y[0] - y[low], y[-1] - y[low]) > tolerance
        and steps[:low].max() <= tolerance
        and steps[low:].min() >= -tolerance
    ):
        shape = "U"
    else:
        shape = "other"
    out["shape"] = shape
    return out


def trend(x, y, tolerance: float = FLAT) -> dict:
    """The least-squares slope of ``y`` on ``x`` and the change it fits over the range of
    ``x``: ``falls`` or ``rises`` when that change is beyond ``tolerance``, else ``flat``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(y) < 2 or np.ptp(x) == 0:
        return {"slope": math.nan, "change": math.nan, "trend": "not measured"}
    slope = float(np.polyfit(x, y, 1)[0])
    change = slope * float(np.ptp(x))
    word = "flat" if abs(change) <= tolerance else ("falls" if change < 0 else "rises")
    return {"slope": slope, "change": change, "trend": word}


# --- the experiments' rows of a measure -------------------------------------------------


def experiment_name(name: str, held) -> str | None:
    """The name under which an experiment table holds ``name``: itself, or ``PUF-S`` for
    every ``PUF-S-SIM`` (the experiments replace the similarity); None when absent."""
    held = set(held)
    if name in held:
        return name
    parts = name.split("-")
    if name.startswith("PUF-") and len(parts) == 3 and f"PUF-{parts[1]}" in held:
        return f"PUF-{parts[1]}"
    return None


def relevance_curve(run: DatasetRun, name: str) -> pd.DataFrame | None:
    """The (share, value) rows of Fig. 2 of ``name``; None when the experiment lacks it."""
    table = run.relevance
    if table is None or name not in set(table["measure"]):
        return None
    return table[table["measure"] == name].sort_values("share")


def similarity_rows(run: DatasetRun, name: str) -> pd.DataFrame | None:
    """Fig. 3's sampled rows (not the observed similarity) of ``name``'s experiment name."""
    table = run.similarity
    if table is None:
        return None
    label = experiment_name(name, table["measure"].unique())
    if label is None:
        return None
    rows = table[(table["measure"] == label) & (table["distribution"] != "observed")]
    return rows.sort_values("skewness")


def extreme_rows(run: DatasetRun, name: str) -> pd.DataFrame | None:
    """Fig. 4's rows of a similarity-based measure: UF (both scores), PUF-S-* (score S)."""
    table = run.extreme
    if table is None:
        return None
    if name == "UF":
        return table[table["measure"] == "UF"]
    parts = name.split("-")
    if name.startswith("PUF-") and len(parts) == 3:
        return table[(table["measure"] == "PUF") & (table["score"] == parts[1])]
    return None


def extreme_gap(rows: pd.DataFrame | None) -> tuple[float, float, float]:
    """Mean over the steps of MostUnfair - MostFair, and MostFair's max and span."""
    if rows is None or rows.empty:
        return math.nan, math.nan, math.nan
    pivot = rows.pivot_table(index=["share", "score"], columns="assignment", values="value")
    if not {"MostFair", "MostUnfair"} <= set(pivot.columns):
        return math.nan, math.nan, math.nan
    fair = pivot["MostFair"].to_numpy(float)
    gap = float(np.nanmean(pivot["MostUnfair"].to_numpy(float) - fair))
    return gap, float(np.nanmax(fair)), float(np.nanmax(fair) - np.nanmin(fair))


# --- across the models: agreement, separation, stability --------------------------------


def tau_table(run: DatasetRun, names: list[str]) -> pd.DataFrame:
    """Kendall tau-b between the model orderings of every pair of declared ``names``
    (Fig. 1's conventions, :func:`userfair.bootstrap.inference.tau_intervals`), with the interval
    over the draws (NaN without draws): measure_a, measure_b, tau, low, high."""
    names = [name for name in names if declared(name)]
    columns = ["measure_a", "measure_b", "tau", "low", "high"]
    if len(run.models) < 2 or not names:
        return pd.DataFrame(columns=columns)
    if run.draws:
        frames = {m: run.draws[m][names] for m in run.models}
        table = inference.tau_intervals(frames, run.points, run.level, names)
        return table[columns]
    full = np.array([[oriented(n, [run.points[m][n]])[0] for n in names] for m in run.models])[None]
    tau = inference.resampled_tau_b(full)[0]
    rows = [
        (a, b, float(tau[i, j]), math.nan, math.nan)
        for i, a in enumerate(names)
        for j, b in enumerate(names)
    ]
    return pd.DataFrame(rows, columns=columns)


def separated(run: DatasetRun, names: list[str]) -> pd.DataFrame:
    """Sakai's discriminative power: per measure the model pairs and the share of them
    whose difference is significant after Holm at the run's level
    (:func:`userfair.bootstrap.inference.significance` over the draws); empty without draws."""
    if not run.draws or len(run.models) < 2:
        return pd.DataFrame(columns=["measure", "pairs", "separated"])
    frames = {m: run.draws[m][names] for m in run.models}
    table = inference.significance(frames, run.points, run.level, names)
    grouped = table.groupby("measure", sort=False)["significant"]
    return pd.DataFrame(
        {"pairs": grouped.size(), "separated": grouped.mean().astype(float)}
    ).reset_index()


def _pair_swaps(reference: np.ndarray, values: np.ndarray) -> float:
    """The share of (row, model pair) whose order reverses that of ``reference`` (models),
    over the pairs ``reference`` orders (ties left out); ``values``: (rows, models)."""
    i, j = np.triu_indices(len(reference), 1)
    sign = np.sign(reference[j] - reference[i])
    ordered = np.isfinite(sign) & (sign != 0)
    if not ordered.any():
        return math.nan
    gaps = np.sign(values[:, j] - values[:, i])[:, ordered]
    return float(np.mean(gaps == -sign[ordered]))


def swap_rate(run: DatasetRun, name: str) -> float:
    """How often the order of two models flips between the draws and the full data."""
    drawn = run.drawn(name)
    return math.nan if drawn is None else _pair_swaps(run.values(name), drawn)


def replicate_swap_rate(run: DatasetRun, name: str) -> float:
    """How often a replicate orders two models against the mean over the replicates."""
    if len(run.replicates) < 2:
        return math.nan
    values = np.array(
        [[float(run.replicates[r][m][name]) for m in run.models] for r in sorted(run.replicates)]
    )
    return _pair_swaps(values.mean(axis=0), values)


def ties(values: np.ndarray) -> int:
    """The model pairs whose values are equal."""
    i, j = np.triu_indices(len(values), 1)
    return int(np.sum(values[i] == values[j]))


def cost(run: DatasetRun, name: str) -> float:
    """Seconds per 1,000 evaluated users, the mean over the models of the measure's own
    seconds in its measures file (the similarities' once-per-dataset time apart)."""
    seconds = [run.seconds.get(m, {}).get(name) for m in run.models]
    seconds = [float(s) for s in seconds if _is_number(s)]
    if not seconds or run.users <= 0:
        return math.nan
    return 1000.0 * float(np.mean(seconds)) / run.users


def _tau_summary(taus: pd.DataFrame, name: str, others) -> dict:
    rows = taus[(taus["measure_a"] == name) & taus["measure_b"].isin(others)]
    rows = rows[rows["measure_b"] != name]
    if rows.empty or rows["tau"].isna().all():
        return dict.fromkeys(["min", "max", "low", "high"], math.nan)
    return {
        "min": float(rows["tau"].min()),
        "max": float(rows["tau"].max()),
        "low": float(rows["low"].min()),
        "high": float(rows["high"].max()),
    }


#: The columns of measure_properties.csv, in order (docs/analyses.md#properties).
COLUMNS = [
    "dataset", "measure", "group", "declared", "theory_low", "theory_high", "models",
    "range_models", "range_models_low", "range_models_high", "range_relevance",
    "pairs", "discriminative_power", "swap_rate", "swap_rate_replicates", "ties",
    "relevance_shape", "relevance_peak_at", "relevance_drop_start", "relevance_drop_end",
    "similarity_slope", "similarity_change", "similarity_trend",
    "extreme_gap", "extreme_mostfair_max", "extreme_mostfair_span",
    "tau_eff_min", "tau_eff_max", "tau_eff_low", "tau_eff_high",
    "tau_puf_min", "tau_puf_max", "tau_puf_low", "tau_puf_high",
    "seconds_per_1000_users",
]  # fmt: skip


def measure_properties(run: DatasetRun, tolerance: float = FLAT) -> pd.DataFrame:
    """One row per measure the run holds (:meth:`DatasetRun.measure_names`) with the
    properties of :data:`COLUMNS`; NaN, or a shape that says why, where the run lacks the
    data (one model, no draws, a measure outside an experiment)."""
    names = run.measure_names()
    taus = tau_table(run, names)
    power = separated(run, [n for n in names if declared(n)]).set_index("measure")
    effs = [n for n in names if is_eff(n)]
    pufs = [n for n in measures.FAIR_PUF if n in names]
    rows = []
    for name in names:
        values = run.values(name)
        drawn = run.drawn(name)
        low, high = interval(None if drawn is None else spread(drawn, axis=1), run.level)
        curve = relevance_curve(run, name)
        shape = curve_shape(
            *(([], []) if curve is None else (curve["share"], curve["value"])), tolerance
        )
        if curve is None:
            shape["shape"] = "not in the experiment"
        sim_rows = similarity_rows(run, name)
        xy = ([], []) if sim_rows is None else (sim_rows["skewness"], sim_rows["value"])
        slope = trend(*xy, tolerance)
        if sim_rows is None:
            reads = reads_similarity(name)
            slope["trend"] = {True: "not in the experiment", False: "flat (reads no similarity)",
                              None: "not in the experiment"}[reads]  # fmt: skip
        gap, fair_max, fair_span = extreme_gap(extreme_rows(run, name))
        eff_tau, puf_tau = _tau_summary(taus, name, effs), _tau_summary(taus, name, pufs)
        theory = theoretical_range(name)
        rows.append({
            "dataset": run.dataset, "measure": name,
            "group": "Eff" if is_eff(name) else "Fair", "declared": declared(name),
            "theory_low": theory[0], "theory_high": theory[1], "models": len(run.models),
            "range_models": float(spread(values)) if len(values) > 1 else math.nan,
            "range_models_low": low, "range_models_high": high,
            "range_relevance": shape["span"],
            "pairs": int(power["pairs"].get(name, 0)) if name in power.index else 0,
            "discriminative_power": float(power["separated"].get(name, math.nan))
            if name in power.index else math.nan,
            "swap_rate": swap_rate(run, name),
            "swap_rate_replicates": replicate_swap_rate(run, name), "ties": ties(values),
            "relevance_shape": shape["shape"], "relevance_peak_at": shape["peak_at"],
            "relevance_drop_start": shape["drop_start"], "relevance_drop_end": shape["drop_end"],
            "similarity_slope": slope["slope"], "similarity_change": slope["change"],
            "similarity_trend": slope["trend"],
            "extreme_gap": gap, "extreme_mostfair_max": fair_max,
            "extreme_mostfair_span": fair_span,
            **{f"tau_eff_{k}": v for k, v in eff_tau.items()},
            **{f"tau_puf_{k}": v for k, v in puf_tau.items()},
            "seconds_per_1000_users": cost(run, name),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


#: "Near 0" in the extreme case: at most 5 % of the unit range (the paper: "close to 0").
NEAR_ZERO = 0.05
