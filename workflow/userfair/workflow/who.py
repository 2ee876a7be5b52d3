"""Who is treated unfairly, over models: the users job of the workflow (the per-user
decomposition of ``userfair.decomposition.decompose`` with the worst cases and the declared user
features), each measure's share by group of users with bootstrap intervals, the worst-case
table and the figure (docs/method.md#who-groups, docs/analyses.md#who).

Groups: activity quantiles (``train_items``) by default, or the values (or quantiles) of a
declared user feature. A group's share of a measure is the sum of its users' shares over
the sum over all users (the measure). Its interval resamples the evaluated users with the
multiplicities of ``userfair.bootstrap.uncertainty.resample_weights`` (the same resamples for every
model of a dataset, the same first rows as the uncertainty stage's for the same seed;
drawn in chunks, :func:`resample_chunks`), each user keeping its full-sample share:
resample b's group share is ``sum_{u in g} w_bu share_u / sum_u w_bu share_u``.
"""

from __future__ import annotations

import logging
import math
import os
import zipfile
from collections.abc import Mapping

import numpy as np
import pandas as pd

from userfair.bootstrap import inference
from userfair.decomposition import decompose, decompose_columns, worst_cases
from userfair.formulas.groups import read_user_features as read_user_file
from userfair.measures import FAIR_PUF, fused, generic
from userfair.workflow import rawfiles

log = logging.getLogger(__name__)

#: The measures of the group table and the figure: every share and PUF's disadvantaged
#: parts (who is the worse-served of the similar pairs).
GROUP_MEASURES = decompose_columns.SHARES + tuple(
    f"{name}:disadvantaged" for name in fused(FAIR_PUF)
)
#: The measures of the figure, one panel each.
FIGURE_MEASURES = (
    "PUF-P-Cos",
    "PUF-NDCG-Cos",
    "PUF-P-Jacc",
    "PUF-NDCG-Jacc",
    "PUF-P-Cos:disadvantaged",
    "UF",
    "ME",
    "MME",
    "PEU",
    "Gini-P",
)
#: The grouping of the figure and the default of the table.
ACTIVITY = "activity"
#: Columns of :func:`group_table`.
GROUP_COLUMNS = [
    "dataset", "model", "by", "group", "users", "user_share", "low_value", "high_value",
    "measure", "total", "share", "low", "high",
]  # fmt: skip
#: The group of a who.csv row saying that a configured feature (who.features) is not in
#: the dataset's data: its numbers are empty.
MISSING_GROUP = "(not in the data)"


# --- the users job -------------------------------------------------------------------------


def read_user_features(dataset, source, names) -> pd.DataFrame | None:
    """The declared user features ``names`` of the dataset's RecBole ``.user`` file in its
    raw ``source`` (folder or zip, ``userfair.workflow.rawfiles.RawSource``), keyed by
    ``user_id``; None when ``names`` is empty, the source is no folder or zip of atomic
    files, has no ``.user`` file or none of the names (each absent name is logged). Values are text
    (RecBole tokens); :func:`group_labels` reads numbers where every value is one."""

    names = list(names or [])
    if not names:
        return None
    if not source or not os.path.exists(source):
        log.warning("config key who.features: no raw files of %s to read %s from", dataset, names)
        return None
    if not (os.path.isdir(source) or zipfile.is_zipfile(source)):
        log.warning(
            "config key who.features: %s is not a folder or zip of RecBole atomic files, "
            "no user features %s",
            source, names,
        )  # fmt: skip
        return None
    raw = rawfiles.RawSource(source)
    member = raw.member(getattr(dataset, "name", str(dataset)), ".user", required=False)
    if member is None:
        log.warning("config key who.features: %s has no .user file, no %s", source, names)
        return None
    with raw.open(member) as handle:  # the library's one .user reader, every column as text
        frame = read_user_file(handle, label=raw.label(member), text=True)
    missing = [name for name in names if name not in frame.columns]
    for name in missing:
        log.warning(
            "config key who.features: %s has no user feature %r (has %s)",
            raw.label(member), name, list(frame),
        )  # fmt: skip
    kept = [name for name in names if name in frame.columns]
    return frame[["user_id", *kept]] if kept else None


def users_job(
    inputs,
    *,
    route: str,
    k: int,
    epsilon: float,
    gamma: float,
    envy_utility: str,
    block_size: int,
    similarities=None,
    stats=None,
    features: pd.DataFrame | None = None,
    worst: int = 10,
    worst_measure: str = "PUF-P-Cos",
    neighbours: int = 10,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(users, worst cases) of one dataset x model on ``route``, the caller's decision:
    :func:`decompose.decompose` on the dense route (``similarities``, e.g. the similarity
    files) or the streamed one (the pass-one ``stats``; computed
    here when None), the ``features`` joined; the ``worst`` users of ``worst_measure`` with
    their better-served neighbours and :func:`worst_cases.worst_lines`' sentence."""
    frame = decompose.decompose(
        inputs, k=k, epsilon=epsilon, gamma=gamma, similarities=similarities,
        block_size=block_size, envy_utility=envy_utility, route=route, stats=stats,
    )  # fmt: skip
    if features is not None:
        frame = decompose.join_features(frame, features, label="user features")
    sim, raw_range = worst_cases.worst_similarity(
        inputs, worst_measure, similarities, stats, route=route
    )
    table = worst_cases.worst_cases(frame, sim, worst, worst_measure, neighbours, raw_range)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    table.insert(1, "measure", worst_measure)
    table["text"] = worst_cases.worst_lines(table, worst_measure, k)
    return frame, table


def read_worst(path) -> pd.DataFrame:
    """A worst-case file of the `users` rule (user ids as text)."""
    return pd.read_csv(path, dtype={"user_id": str, "closest_id": str, "better_ids": str})


# --- groups ------------------------------------------------------------------------------


def quantile_labels(values, groups: int) -> tuple[np.ndarray, list[str]]:
    """Equal-size quantile groups of ``values`` (ascending; ties split in the given order,
    which is the canonical user order), labelled ``Q1`` (lowest) .. ``Qn``: (label per
    value, labels in order). Fewer groups when there are fewer values."""
    values = np.asarray(values, dtype=np.float64)
    m = values.size
    groups = max(1, min(int(groups), m))
    order = np.argsort(values, kind="stable")
    index = np.empty(m, dtype=np.int64)
    index[order] = (np.arange(m) * groups) // max(m, 1)
    labels = [f"Q{i + 1}" for i in range(groups)]
    return np.array(labels, dtype=object)[index], labels


def group_labels(values: pd.Series, groups: int):
    """Group of every user by a feature: (labels, labels in order, numbers or None).
    Quantiles (:func:`quantile_labels`) when every value is a number and there are more
    distinct values than ``groups``; else the values themselves, sorted (numerically when
    they are numbers; missing: ``(missing)``, last)."""
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all() and numbers.nunique() > groups:
        numbers = numbers.to_numpy(dtype=np.float64)
        return (*quantile_labels(numbers, groups), numbers)
    text = values.astype(object).where(values.notna() & (values.astype(str) != ""), "(missing)")
    text = text.astype(str).to_numpy(dtype=object)
    try:
        order = sorted(set(text), key=lambda v: (v == "(missing)", float(v)))
    except ValueError:
        order = sorted(set(text), key=lambda v: (v == "(missing)", v))
    return text, order, None


#: Resamples per chunk of :func:`resample_chunks` (an (rows, m) float64 chunk: 80 MB at
#: 100,000 users).
CHUNK_RESAMPLES = 100


def _as_float(weights) -> np.ndarray:
    array = np.asarray(weights)
    return array if array.dtype == np.float64 else array.astype(np.float64)


def resample_chunks(m: int, resamples: int, seed: int = 0, rows: int = CHUNK_RESAMPLES):
    """A function giving the rows of ``uncertainty.resample_weights(m, resamples, seed)``
    as float64 chunks of ``rows`` resamples, each drawn when needed (the same generator
    stream, so the same weights, tested), so that 1,000 resamples of 100,000 users never
    hold the (B, m) matrix."""
    if m < 1 or resamples < 0:
        raise ValueError(f"m must be >= 1 and resamples >= 0, got {m}, {resamples}")

    def chunks():
        generator = np.random.default_rng(seed)
        for start in range(0, resamples, max(1, rows)):
            b = min(max(1, rows), resamples - start)
            draws = generator.integers(0, m, size=(b, m))
            flat = (draws + (np.arange(b, dtype=np.int64) * m)[:, None]).ravel()
            yield np.bincount(flat, minlength=b * m).reshape(b, m).astype(np.float64)

    return chunks


def group_shares(
    frame: pd.DataFrame,
    labels: np.ndarray,
    order: list[str],
    weights: np.ndarray,
    measures=GROUP_MEASURES,
    level: float = 0.95,
    values: np.ndarray | None = None,
) -> pd.DataFrame:
    """Each measure's share by group with its percentile interval over the resamples
    ``weights`` ((B, m) multiplicities of the frame's users, in its row order, or a
    function giving them as an iterable of row chunks, :func:`resample_chunks`). Rows:
    group, users, user_share, low_value/high_value (range of ``values`` in the group, e.g.
    the activity), measure, total (the measure), share, low, high. A measure that is NaN
    (or whose total is 0) gets NaN shares."""
    labels = np.asarray(labels, dtype=object)
    m = len(frame)
    shape = None if callable(weights) else np.shape(weights)
    if labels.shape != (m,) or (shape is not None and (len(shape) != 2 or shape[1] != m)):
        raise ValueError(f"labels ({labels.shape}) and weights ({shape}) must be of m={m}")
    onehot = np.stack([labels == g for g in order], axis=1).astype(np.float64)  # (m, G)
    counts = onehot.sum(axis=0)
    shares = np.column_stack([frame[name].to_numpy(dtype=np.float64) for name in measures])
    usable = np.isfinite(shares).all(axis=0)
    shares = np.where(usable, shares, 0.0)  # (m, M)
    # every measure's resampled group sums and totals in one product each: W @ (s * 1_g)
    # and W @ s, (B, M G) and (B, M); W as float64 once (exact: small integers)
    by_group = (shares[:, :, None] * onehot[:, None, :]).reshape(m, -1)
    chunks = weights() if callable(weights) else [weights]
    products = [(w @ by_group, w @ shares) for w in map(_as_float, chunks) if len(w)]
    resampled = bool(products)
    if resampled:
        resampled_groups = np.concatenate([a for a, _ in products])
        resampled_groups = resampled_groups.reshape(-1, len(measures), len(order))
        resampled_totals = np.concatenate([b for _, b in products])
    rows = []
    for j, measure in enumerate(measures):
        share = shares[:, j]
        finite = bool(usable[j])
        total = float(share.sum()) if finite else math.nan
        point = share @ onehot / total if finite and total != 0 else np.full(len(order), math.nan)
        if finite and total != 0 and resampled:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = resampled_groups[:, j, :] / resampled_totals[:, j, None]
            bounds = [inference.percentile_interval(ratio[:, g], level) for g in range(len(order))]
        else:
            bounds = [(math.nan, math.nan)] * len(order)
        for g, group in enumerate(order):
            inside = labels == group
            span = values[inside] if values is not None and inside.any() else None
            rows.append(
                {
                    "group": group,
                    "users": int(counts[g]),
                    "user_share": counts[g] / m,
                    "low_value": float(np.min(span)) if span is not None else math.nan,
                    "high_value": float(np.max(span)) if span is not None else math.nan,
                    "measure": measure,
                    "total": total,
                    "share": float(point[g]),
                    "low": bounds[g][0],
                    "high": bounds[g][1],
                }
            )
    return pd.DataFrame(rows)


def group_table(
    frames: Mapping[tuple[str, str], pd.DataFrame],
    groups: int = 5,
    features=(),
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    measures=None,
) -> pd.DataFrame:
    """:data:`GROUP_COLUMNS` for every (dataset, model) frame of ``frames`` (the users
    files): by activity quantiles (``by`` = ``activity``, ``groups`` of them) and by each
    declared feature the frame has. The resamples are drawn once per dataset (its users
    are the same for every model: checked), so every model is resampled identically.
    ``measures`` (default): :data:`GROUP_MEASURES`, then every plugin measure
    (docs/plugins.md) whose per-user shares every frame holds."""
    inference.check_level(level)
    if measures is None:
        measures = GROUP_MEASURES + tuple(
            name for name in generic() if all(name in f.columns for f in frames.values())
        )
    parts, weights_of, users_of = [], {}, {}
    for (dataset, model), frame in frames.items():
        users = frame["user_id"].astype(str).to_numpy()
        if dataset not in weights_of:
            weights_of[dataset] = resample_chunks(len(frame), resamples, seed)
            users_of[dataset] = users
        elif not np.array_equal(users_of[dataset], users):
            raise ValueError(f"{dataset}: {model} has other evaluated users than the others")
        weights = weights_of[dataset]
        activity = frame["train_items"].to_numpy(dtype=np.float64)
        labels, order = quantile_labels(activity, groups)
        bys = [(ACTIVITY, labels, order, activity)]
        for name in features:
            if name in frame.columns:
                bys.append((name, *group_labels(frame[name], groups)))
            else:  # reported, not dropped: a row that says so, and a log line
                log.warning(
                    "config key who.features: %s has no user feature %r; %s is grouped by "
                    "the features it has (who.csv says so in a row %r)",
                    dataset, name, model, MISSING_GROUP,
                )  # fmt: skip
                parts.append(
                    pd.DataFrame(
                        [{"dataset": dataset, "model": model, "by": name,
                          "group": MISSING_GROUP, "users": 0}],
                        columns=GROUP_COLUMNS,
                    )
                )  # fmt: skip
        for by, labels, order, values in bys:
            table = group_shares(frame, labels, order, weights, measures, level, values)
            table.insert(0, "by", by)
            table.insert(0, "model", model)
            table.insert(0, "dataset", dataset)
            parts.append(table)
    if not parts:
        return pd.DataFrame(columns=GROUP_COLUMNS)
    return pd.concat(parts, ignore_index=True)[GROUP_COLUMNS]


def worst_table(tables: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """The worst-case tables of every (dataset, model), one below the other."""
    parts = [
        table.assign(dataset=dataset, model=model) for (dataset, model), table in tables.items()
    ]
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    first = ["dataset", "model"]
    return out[first + [c for c in out.columns if c not in first]]


# --- the figure --------------------------------------------------------------------------
