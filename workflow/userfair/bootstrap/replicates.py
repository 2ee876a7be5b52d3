"""Inference over two sources of randomness (docs/method.md#replicates): the training (and
split) of R replicates of every model and the evaluated users. Builds on the bootstrap of
``userfair.bootstrap.uncertainty``: every replicate of every model of a dataset is resampled with
the same user weights, so replicate r's values form an (R, B) array per measure (replicate x
user resample) beside the R full-data values.

The two-level bootstrap draws R replicates with replacement, then one user resample (the
same draws for every model of the dataset; ``nested=True``, for a split redrawn per
replicate, one user resample per drawn replicate). Its variance is known in closed form;
the replicate level's (R - 1) / R shrinkage is undone, and intervals and tests use
Student's t with Welch-Satterthwaite degrees of freedom, so R = 3 replicates still reach
their nominal coverage (benchmarks/replicates_coverage.py). With R = 1 everything falls
back to the users-only percentile bootstrap of ``userfair.bootstrap.inference``.

Typical use (one dataset; ``resamples[model]``: a frame with index (replicate, resample),
``points[model]``: a frame with index replicate, both with the measures as columns)::

    summary(resamples, points, 0.95)            # value, interval, se, df per model, measure
    significance(resamples, points, 0.95)       # every pair, t-test over both sources, Holm
    tau_intervals(resamples, points, 0.95)      # Fig. 1 tau over both sources
    variance(resamples, points)                 # share of one run's variance from training
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from userfair.bootstrap import inference
from userfair.formulas.agreement import oriented
from userfair.measures import NAMES

#: Two-level draws of ``tau_intervals`` (and ``draws``) unless given.
DRAWS = 2000


def stack(frames: Sequence[pd.DataFrame], points: Sequence[Mapping[str, float]]):
    """R bootstrap frames of one model (``uncertainty.bootstrap``'s, same resamples) and
    its R full-data values as the (resamples, points) frames this module reads: index
    (replicate, resample) and replicate."""
    if not frames or len(frames) != len(points):
        raise ValueError(
            f"need one full-data value per replicate frame, got {len(frames)} "
            f"frames and {len(points)} values"
        )
    index = frames[0].index
    if any(not frame.index.equals(index) for frame in frames[1:]):
        raise ValueError("every replicate's bootstrap frame must have the same resamples")
    resamples = pd.concat(list(frames), keys=range(len(frames)), names=["replicate", "resample"])
    full = pd.DataFrame(
        [dict(p) for p in points], index=pd.RangeIndex(len(points), name="replicate")
    )
    return resamples, full[list(frames[0].columns)]


def _array(resamples: pd.DataFrame, measure: str) -> np.ndarray:
    """(R, B) values of one measure."""
    return resamples[measure].unstack("resample").sort_index().to_numpy(np.float64)


def _check(resamples: Mapping[str, pd.DataFrame], points: Mapping[str, pd.DataFrame]):
    models = list(resamples)
    if not models:
        raise ValueError("no models given")
    index = resamples[models[0]].index
    for model in models:
        if not resamples[model].index.equals(index):
            raise ValueError(
                f"model {model!r}: every model needs the same replicates and "
                "resamples (index (replicate, resample))"
            )
        if len(points[model]) != index.get_level_values("replicate").nunique():
            raise ValueError(f"model {model!r}: one full-data value per replicate is needed")
    return models


def moments(y: np.ndarray, full: np.ndarray, nested: bool = False) -> dict[str, float]:
    """Point estimate and variance of the mean over R replicates of one measure.

    ``y``: (R, B) values (replicate r on user resample b); ``full``: the R full-data values.
    ``value``: the mean of ``full``. Shared users (``nested=False``): ``var_users`` is the
    variance over b of the replicate mean (the user level: the two-level bootstrap's user
    part); ``var_training`` is the mean over b of the between-replicate variance (ddof 1:
    the replicate level's (R - 1) / R shrinkage undone) less the replicate x user
    interaction that ``var_users`` already holds (R / (R - 1) times the mean over r of the
    variance over b of y[r, b] minus the replicate mean), over R, at least 0. Nested (a
    split per replicate): the between-replicate variance of ``full`` (ddof 1) over R, which
    holds both sources (``var_users`` 0). ``df``: Welch-Satterthwaite, the
    between-replicate variance (before the interaction is taken off) with R - 1 degrees of
    freedom, the user part with infinitely many. R = 1: users only, df infinite.
    Replicates that agree within ``inference.ROUNDING`` (a model without a seed) count as
    one replicate. Replicates or resamples with a NaN are left out (NaN when none is
    left)."""
    y = np.asarray(y, np.float64)
    full = np.asarray(full, np.float64)
    keep_r = np.isfinite(full) & np.isfinite(y).any(axis=1)
    y, full = y[keep_r], full[keep_r]
    y = y[:, np.isfinite(y).all(axis=0)]
    r = len(full)
    out = {"value": math.nan, "var_training": math.nan, "var_users": math.nan, "df": math.nan}
    out["replicates"] = r
    if r == 0 or y.shape[1] < 2:
        return out
    identical = r > 1 and _identical(y) and _identical(full[:, None])  # no seed
    out["value"] = float(full[0] if identical else full.mean())
    between = 0.0
    if r == 1 or identical:
        var_t, var_u = 0.0, float(np.var(y[0], ddof=1))
    elif nested:
        var_t, var_u = float(np.var(full, ddof=1) / r), 0.0
        between = var_t
    else:
        centre = y.mean(axis=0)
        var_u = float(np.var(centre, ddof=1))
        between = float(np.var(y, axis=0, ddof=1).mean() / r)
        interaction = float(np.var(y - centre, axis=1, ddof=1).mean()) * r / (r - 1)
        var_t = max(0.0, between - interaction / r)
    total = var_t + var_u
    out.update(var_training=var_t, var_users=var_u)
    out["df"] = math.inf if between == 0 else total**2 / (between**2 / (r - 1))
    return out


def _identical(y: np.ndarray) -> bool:
    """Whether the rows of ``y`` agree within ``inference.ROUNDING`` (the replicates of a
    model whose lists do not depend on the seed: their variance is 0, not rounding)."""
    spread = np.ptp(y, axis=0)
    return bool(np.all(spread <= inference.ROUNDING * np.max(np.abs(y), axis=0)))


def t_interval(m: Mapping[str, float], level: float) -> tuple[float, float]:
    """value -/+ t_{df, (1 + level) / 2} sqrt(var_training + var_users)."""
    se = math.sqrt(m["var_training"] + m["var_users"])
    if not math.isfinite(m["value"]) or not math.isfinite(se):
        return math.nan, math.nan
    half = stats.t.ppf((1.0 + level) / 2.0, m["df"]) * se
    return m["value"] - half, m["value"] + half


def t_p_value(m: Mapping[str, float]) -> float:
    """Two-sided p of value = 0 under Student's t with ``df``: 1 when the value is 0,
    0 when the variance is 0 and the value is not."""
    se = math.sqrt(m["var_training"] + m["var_users"])
    if not math.isfinite(m["value"]) or not math.isfinite(se):
        return math.nan
    if m["value"] == 0.0:
        return 1.0
    if se == 0.0:
        return 0.0
    return float(2.0 * stats.t.sf(abs(m["value"]) / se, m["df"]))


def summary(
    resamples: Mapping[str, pd.DataFrame],
    points: Mapping[str, pd.DataFrame],
    level: float = 0.95,
    measures=NAMES,
    nested: bool = False,
) -> pd.DataFrame:
    """One row per (model, measure): ``value`` (mean over replicates), the interval ``low``,
    ``high`` over both sources (t with ``df``; with one replicate the users-only percentile
    interval of ``inference``), ``se``, ``var_training``, ``var_users``, ``df``,
    ``replicates``."""
    level = inference.check_level(level)
    rows = []
    for model in _check(resamples, points):
        for measure in measures:
            y = _array(resamples[model], measure)
            full = points[model][measure].sort_index().to_numpy(np.float64)
            m = moments(y, full, nested)
            if len(full) == 1:
                low, high = inference.percentile_interval(y[0], level)
            else:
                low, high = t_interval(m, level)
            se = math.sqrt(m["var_training"] + m["var_users"])
            rows.append(
                {"model": model, "measure": measure, **m, "low": low, "high": high, "se": se}
            )
    columns = ["model", "measure", "value", "low", "high", "se", "var_training", "var_users"]
    return pd.DataFrame(rows, columns=columns + ["df", "replicates"])


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b - a with rounding-level differences (``inference.ROUNDING``) set to 0."""
    d = b - a
    with np.errstate(invalid="ignore"):
        d[np.abs(d) <= inference.ROUNDING * np.maximum(np.abs(a), np.abs(b))] = 0.0
    return d


def significance(
    resamples: Mapping[str, pd.DataFrame],
    points: Mapping[str, pd.DataFrame],
    level: float = 0.95,
    measures=NAMES,
    nested: bool = False,
    alpha: float | None = None,
) -> pd.DataFrame:
    """Every pair of models (A before B) for every measure: the ``difference`` B - A of the
    replicate means, its interval and p over both sources (``moments`` of the paired
    differences, replicate r of A with replicate r of B; with one replicate
    ``inference.compare``'s percentile interval and bootstrap p), ``p_holm`` (Holm over the
    pairs of a measure) and ``significant`` (p_holm < alpha, 1 - level unless given)."""
    level = inference.check_level(level)
    alpha = 1.0 - level if alpha is None else alpha
    models = _check(resamples, points)
    rows = []
    for measure in measures:
        arrays = {m: _array(resamples[m], measure) for m in models}
        fulls = {m: points[m][measure].sort_index().to_numpy(np.float64) for m in models}
        for i, a in enumerate(models):
            for b in models[i + 1 :]:
                d = _difference(arrays[a], arrays[b])
                m = moments(d, _difference(fulls[a], fulls[b]), nested)
                if d.shape[0] == 1:
                    (low, high), p = (
                        inference.percentile_interval(d[0], level),
                        inference.p_value(d[0]),
                    )
                else:
                    (low, high), p = t_interval(m, level), t_p_value(m)
                rows.append(
                    {
                        "measure": measure,
                        "model_a": a,
                        "model_b": b,
                        "difference": m["value"],
                        "low": low,
                        "high": high,
                        "p": p,
                        "df": m["df"],
                    }
                )
    columns = ["measure", "model_a", "model_b", "difference", "low", "high", "p", "df"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["p_holm"] = frame.groupby("measure", sort=False)["p"].transform(
        lambda p: pd.Series(inference.holm(p.to_numpy()), index=p.index)
    )
    frame["significant"] = frame["p_holm"] < alpha
    return frame


def draw_indices(
    replicates: int, resamples: int, draws: int = DRAWS, seed: int = 0, nested: bool = False
):
    """The two-level draws: (draws, R) replicate indices drawn with replacement, then the
    user resample indices (draws,), shared by the drawn replicates; ``nested`` (a split per
    replicate): None, the replicate level only, each replicate's users kept as they are
    (its values averaged over the user resamples). The same for every model of a
    dataset."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, replicates, size=(draws, replicates))
    users = None if nested else rng.integers(0, resamples, size=draws)
    return rows, users


def draws(y: np.ndarray, rows: np.ndarray, users: np.ndarray | None) -> np.ndarray:
    """The two-level resampled replicate means of ``y`` ((R, B)) at ``draw_indices``; the
    replicate level's deviation from the users' mean (nested: from the mean) is scaled by
    sqrt(R / (R - 1)), undoing the shrinkage of drawing R of R with replacement."""
    r = y.shape[0]
    if users is None:
        means = y.mean(axis=1)
        picked, centre = means[rows].mean(axis=1), means.mean()
    else:
        picked, centre = y[rows, users[:, None]].mean(axis=1), y[:, users].mean(axis=0)
    if r == 1:
        return picked
    return centre + math.sqrt(r / (r - 1)) * (picked - centre)


def tau_intervals(
    resamples: Mapping[str, pd.DataFrame],
    points: Mapping[str, pd.DataFrame],
    level: float = 0.95,
    measures=None,
    n_draws: int = DRAWS,
    seed: int = 0,
    nested: bool = False,
) -> pd.DataFrame:
    """Kendall tau-b between the model orderings of every pair of measures (as
    ``inference.tau_intervals``): ``tau`` of the replicate means, the percentile interval
    over ``n_draws`` two-level draws (the same draws for every model), ``excludes_zero``.
    With one replicate the draws are the user resamples themselves (``inference``'s)."""
    level = inference.check_level(level)
    measures = list(NAMES if measures is None else measures)
    models = _check(resamples, points)
    first = resamples[models[0]]
    r = first.index.get_level_values("replicate").nunique()
    b = first.index.get_level_values("resample").nunique()
    if r == 1:
        frames = {m: resamples[m].xs(0, level="replicate") for m in models}
        full = {m: points[m].iloc[0].to_dict() for m in models}
        return inference.tau_intervals(frames, full, level, measures)
    rows, users = draw_indices(r, b, n_draws, seed, nested)
    values = np.stack(
        [
            np.stack(
                [oriented(s, draws(_array(resamples[m], s), rows, users)) for s in measures], axis=1
            )
            for m in models
        ],
        axis=1,
    )  # (draws, models, measures)
    means = np.array([[oriented(s, [points[m][s].mean()])[0] for s in measures] for m in models])
    tau_full = inference.resampled_tau_b(means[None])[0]
    tau_drawn = inference.resampled_tau_b(values)
    out = []
    for i, a in enumerate(measures):
        for j, c in enumerate(measures):
            low, high = inference.percentile_interval(tau_drawn[:, i, j], level)
            out.append(
                {
                    "measure_a": a,
                    "measure_b": c,
                    "tau": float(tau_full[i, j]),
                    "low": low,
                    "high": high,
                    "excludes_zero": bool(low > 0 or high < 0),
                }
            )
    return pd.DataFrame(out)


def variance(
    resamples: Mapping[str, pd.DataFrame],
    points: Mapping[str, pd.DataFrame],
    measures=NAMES,
    nested: bool = False,
) -> pd.DataFrame:
    """Where one training run's value varies, per (model, measure): ``var_training``, the
    between-replicate variance (ddof 1, averaged over the user resamples), ``var_users``,
    the variance over the user resamples (averaged over the replicates), and
    ``share_training`` = var_training / (var_training + var_users) (NaN with one
    replicate or no variance). Nested (a split per replicate, whose resamples are not
    paired across replicates): ``var_training`` is the variance of the full-data values
    over the replicates (ddof 1) less ``var_users`` (the users' part of that spread), at
    least 0: what the seed and the split add to one run's users-only variance."""
    rows = []
    for model in _check(resamples, points):
        for measure in measures:
            y = _array(resamples[model], measure)
            y = y[:, np.isfinite(y).all(axis=0)]
            ok = y.shape[1] >= 2
            var_u = float(np.var(y, axis=1, ddof=1).mean()) if ok else math.nan
            var_t = float(np.var(y, axis=0, ddof=1).mean()) if ok and len(y) > 1 else math.nan
            if nested and ok and len(y) > 1:
                full = points[model][measure].to_numpy(np.float64)
                full = full[np.isfinite(full)]
                spread = float(np.var(full, ddof=1)) if len(full) > 1 else math.nan
                var_t = max(0.0, spread - var_u) if len(full) > 1 else math.nan
            if ok and len(y) > 1 and _identical(y):
                var_t = 0.0
            total = var_t + var_u
            share = var_t / total if total > 0 else math.nan
            rows.append(
                {
                    "model": model,
                    "measure": measure,
                    "var_training": var_t,
                    "var_users": var_u,
                    "share_training": share,
                    "share_users": 1.0 - share,
                }
            )
    return pd.DataFrame(rows)
