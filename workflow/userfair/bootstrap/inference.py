"""Inference on the bootstrap resamples of ``userfair.bootstrap.uncertainty``
(docs/method.md#uncertainty): percentile intervals, paired comparisons of two models with
their bootstrap p-values, Holm's correction, the per-model intervals and the significance
table of several models, and Kendall tau intervals between the measures' model orderings
(Fig. 1).

Typical use (one dataset, several models resampled with the same weights)::

    intervals(frame, 0.95)                                         # {measure: (low, high)}
    compare(frame_a, frame_b, point_a, point_b)                    # B - A, interval, p
    significance(frames, points, 0.95)                             # every pair, + Holm
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from userfair.formulas.agreement import oriented
from userfair.measures import NAMES

#: Paired differences within this relative distance of the values are rounding and count
#: as exactly 0 (docs/method.md#uncertainty).
ROUNDING = 1e-12


def check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return float(level)


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """The (1 - level) / 2 and (1 + level) / 2 quantiles (numpy's linear interpolation)
    of the finite ``values``; NaN, NaN when none is finite."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    low, high = np.quantile(values, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(low), float(high)


def intervals(frame: pd.DataFrame, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Percentile interval of every column of a ``bootstrap`` frame: {measure: (low,
    high)} over the resamples where the measure is finite (NaN, NaN if there is none)."""
    level = check_level(level)
    return {
        column: percentile_interval(frame[column].to_numpy(), level) for column in frame.columns
    }


def p_value(differences) -> float:
    """Two-sided bootstrap p-value of a paired difference being 0:
    min(1, 2 min((#{d <= 0} + 1) / (n + 1), (#{d >= 0} + 1) / (n + 1))) over the n finite
    resampled differences d; NaN when n = 0. A difference of exactly 0 counts on both sides,
    so a model compared with itself (every d = 0) gets p = 1; the smallest attainable p is
    2 / (n + 1)."""
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    n = d.size
    if n == 0:
        return math.nan
    below = (np.count_nonzero(d <= 0) + 1) / (n + 1)
    above = (np.count_nonzero(d >= 0) + 1) / (n + 1)
    return float(min(1.0, 2.0 * min(below, above)))


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b - a, with differences within ``ROUNDING`` of max(|a|, |b|) set to 0 (two models
    that agree on a measure but sum in another order must not look different)."""
    d = b - a
    with np.errstate(invalid="ignore"):
        d[np.abs(d) <= ROUNDING * np.maximum(np.abs(a), np.abs(b))] = 0.0
    return d


def compare(
    frame_a: pd.DataFrame,
    frame_b: pd.DataFrame,
    point_a: Mapping[str, float],
    point_b: Mapping[str, float],
    level: float = 0.95,
) -> pd.DataFrame:
    """Paired comparison of two models resampled with the same weights: per measure
    (index ``measure``) the ``difference`` B - A of the point estimates (differences within
    ``ROUNDING`` relative count as 0, here and per resample), the percentile
    interval (``low``, ``high``) of the resampled differences, the two-sided bootstrap
    ``p`` (:func:`p_value`) and ``resamples`` (the number of finite resampled
    differences)."""
    level = check_level(level)
    if not frame_a.index.equals(frame_b.index) or list(frame_a.columns) != list(frame_b.columns):
        raise ValueError("compare needs two bootstrap frames of the same resamples and measures")
    rows = []
    for measure in frame_a.columns:
        a = frame_a[measure].to_numpy(np.float64)
        d = _difference(a, frame_b[measure].to_numpy(np.float64))
        low, high = percentile_interval(d, level)
        rows.append(
            {
                "measure": measure,
                "difference": float(
                    _difference(
                        np.array([float(point_a[measure])]), np.array([float(point_b[measure])])
                    )[0]
                ),
                "low": low,
                "high": high,
                "p": p_value(d),
                "resamples": int(np.isfinite(d).sum()),
            }
        )
    return pd.DataFrame(rows).set_index("measure")


def holm(pvalues):
    """Holm-Bonferroni adjusted p-values: sorted ascending, p_(i) (n - i + 1), made
    non-decreasing, capped at 1; NaN stays NaN and does not count in n. A Series gives a
    Series (same index), a mapping a dict, anything else an array."""
    if isinstance(pvalues, pd.Series):
        return pd.Series(holm(pvalues.to_numpy()), index=pvalues.index, name=pvalues.name)
    if isinstance(pvalues, Mapping):
        keys = list(pvalues)
        return dict(zip(keys, holm(np.array([pvalues[key] for key in keys], dtype=float))))
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    n = finite.size
    if n:
        order = finite[np.argsort(p[finite], kind="stable")]
        scaled = np.minimum(1.0, (n - np.arange(n)) * p[order])
        out[order] = np.maximum.accumulate(scaled)
    return out


def _same_resamples(frames: Mapping[str, pd.DataFrame]) -> pd.Index:
    frames = list(frames.values())
    if not frames:
        raise ValueError("no models given")
    index = frames[0].index
    if any(not frame.index.equals(index) for frame in frames[1:]):
        raise ValueError("the models' bootstrap frames must have the same resamples")
    return index


def summary(
    frames: Mapping[str, pd.DataFrame],
    points: Mapping[str, Mapping[str, float]],
    level: float = 0.95,
    measures=NAMES,
) -> pd.DataFrame:
    """One row per (model, measure): the point estimate ``value`` and the percentile
    interval ``low``, ``high`` of its resamples."""
    level = check_level(level)
    rows = []
    for model, frame in frames.items():
        for measure in measures:
            low, high = percentile_interval(frame[measure].to_numpy(), level)
            rows.append(
                {
                    "model": model,
                    "measure": measure,
                    "value": float(points[model][measure]),
                    "low": low,
                    "high": high,
                }
            )
    return pd.DataFrame(rows, columns=["model", "measure", "value", "low", "high"])


def significance(
    frames: Mapping[str, pd.DataFrame],
    points: Mapping[str, Mapping[str, float]],
    level: float = 0.95,
    measures=NAMES,
    alpha: float | None = None,
) -> pd.DataFrame:
    """Every pair of models (in the order given, A before B) for every measure:
    ``compare``'s difference B - A, interval and p, plus ``p_holm`` (Holm over the model
    pairs of that measure) and ``significant`` (p_holm < alpha, alpha = 1 - level unless
    given)."""
    _same_resamples(frames)
    alpha = 1.0 - check_level(level) if alpha is None else alpha
    models = list(frames)
    parts = []
    for i, a in enumerate(models):
        for b in models[i + 1 :]:
            table = compare(
                frames[a][list(measures)], frames[b][list(measures)], points[a], points[b], level
            )
            parts.append(table.reset_index().assign(model_a=a, model_b=b))
    columns = ["measure", "model_a", "model_b", "difference", "low", "high", "p", "resamples"]
    if not parts:
        return pd.DataFrame(columns=columns + ["p_holm", "significant"])
    frame = pd.concat(parts, ignore_index=True)[columns]
    frame["p_holm"] = frame.groupby("measure", sort=False)["p"].transform(
        lambda p: pd.Series(holm(p.to_numpy()), index=p.index)
    )
    frame["significant"] = frame["p_holm"] < alpha
    order = {measure: position for position, measure in enumerate(measures)}
    return frame.sort_values("measure", key=lambda s: s.map(order), kind="stable").reset_index(
        drop=True
    )


def resampled_tau_b(values: np.ndarray) -> np.ndarray:
    """Kendall tau-b between every pair of columns of ``values`` (B, models, measures),
    per resample: (B, measures, measures). Per measure pair only the models where both
    are finite count; NaN when fewer than 2 remain or either side is constant there
    (the conventions of ``agreement.kendall_tau_b``)."""
    n_models = values.shape[1]
    i, j = np.triu_indices(n_models, k=1)
    gaps = values[:, i, :] - values[:, j, :]  # (B, model pairs, measures)
    valid = np.isfinite(gaps)
    signs = np.where(valid, np.sign(np.where(valid, gaps, 0.0)), 0.0)
    validf = valid.astype(np.float64)
    concordance = np.einsum("bpk,bpl->bkl", signs, signs)
    untied = np.einsum("bpk,bpl->bkl", signs * signs, validf)  # untied in k, valid in l
    denominator = untied * untied.transpose(0, 2, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, concordance / np.sqrt(denominator), np.nan)


def tau_intervals(
    frames: Mapping[str, pd.DataFrame],
    points: Mapping[str, Mapping[str, float]],
    level: float = 0.95,
    measures=None,
) -> pd.DataFrame:
    """Kendall tau-b between the model orderings of every pair of measures (Fig. 1,
    ``agreement``'s conventions: lower-is-better measures negated, NaN models left out),
    on the full data (``tau``, from ``points``) and per resample (the percentile interval
    ``low``, ``high`` over the resamples where tau is defined). ``excludes_zero``: the
    interval lies strictly above or strictly below 0. One row per ordered pair
    (measure_a, measure_b), as ``agreement.agreement_long``."""
    level = check_level(level)
    measures = list(NAMES if measures is None else measures)
    _same_resamples(frames)
    models = list(frames)
    resampled = np.stack(
        [
            np.stack([oriented(m, frames[model][m].to_numpy()) for m in measures], axis=1)
            for model in models
        ],
        axis=1,
    )  # fmt: skip  (B, models, measures)
    full = np.array([[oriented(m, [points[model][m]])[0] for m in measures] for model in models])[
        None
    ]
    tau_full = resampled_tau_b(full)[0]
    tau_resampled = resampled_tau_b(resampled)
    rows = []
    for a, first in enumerate(measures):
        for b, second in enumerate(measures):
            low, high = percentile_interval(tau_resampled[:, a, b], level)
            rows.append(
                {
                    "measure_a": first,
                    "measure_b": second,
                    "tau": float(tau_full[a, b]),
                    "low": low,
                    "high": high,
                    "excludes_zero": bool(low > 0 or high < 0),
                }
            )
    return pd.DataFrame(rows)
