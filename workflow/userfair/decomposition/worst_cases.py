"""The worst cases of the per-user decomposition, in words (docs/method.md#worst-cases):
the users with the largest disadvantaged part of a PUF measure, each with the better-served
users that make up that part (how many, the closest with its raw and min-max normalised
similarity), from the similarity rows of those users alone (:func:`similarity_rows`: no
m x m array on the streamed route)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from userfair.engine._backend import binary_csr
from userfair.files.inputs import Inputs
from userfair.measures import FAIR_PUF
from userfair.streamed import streaming


def similarity_rows(inputs: Inputs, rows: np.ndarray, kind: str = "cos", stats=None):
    """The min-max normalised ``kind`` (``cos`` or ``jacc``) similarity of the evaluated
    users ``rows`` (canonical positions) to every evaluated user, (len(rows), m), diagonal
    entries 0: the rows of ``Similarity.sim`` without the (m, m) matrix (the range from the
    pass-one ``stats``; computed when not given)."""

    train = binary_csr(inputs.train_of_evaluated())
    if stats is None:
        stats = streaming.pass_one(train, users=inputs.users)
    lo, hi = stats.cos_range if kind == "cos" else stats.jacc_range
    rows = np.asarray(rows, dtype=np.int64)
    degrees = np.diff(train.indptr).astype(np.float64)
    inter = (train[rows] @ train.T).toarray()
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "cos":
            raw = inter / np.sqrt(degrees[rows, None] * degrees[None, :])
        else:
            raw = inter / (degrees[rows, None] + degrees[None, :] - inter)
    raw = np.nan_to_num(raw, nan=0.0, posinf=0.0, neginf=0.0)
    out = (raw - lo) / (hi - lo) if hi > lo else np.zeros_like(raw)
    out[np.arange(len(rows)), rows] = 0.0
    return out


def worst_similarity(inputs: Inputs, measure: str, similarities=None, stats=None, *, route=None):
    """(sim, raw_range) for :func:`worst_cases` of ``measure``: the (m, m) normalised
    similarity of ``similarities`` (dense route, given) or a function giving its rows
    (:func:`similarity_rows`, streamed route, from the pass-one ``stats``, computed once
    when not given), and the raw (lo, hi) range it was min-max normalised with. ``route``
    (``dense`` or ``stream``): the caller's decision; None: dense when ``similarities`` are
    given (the command's call)."""
    kind = "cos" if measure.endswith("Cos") else "jacc"
    if route is None:
        route = "dense" if similarities is not None else "stream"
    if route == "dense":
        if similarities is None:
            raise ValueError("the dense route needs the similarities")
        found = similarities[kind]
        return found.sim, (float(found.lo), float(found.hi))
    if route != "stream":
        raise ValueError(f"route must be dense or stream, got {route!r}")
    if stats is None:
        stats = streaming.pass_one(binary_csr(inputs.train_of_evaluated()), users=inputs.users)

    def rows(positions):
        return similarity_rows(inputs, positions, kind, stats)

    return rows, tuple(float(x) for x in (stats.cos_range if kind == "cos" else stats.jacc_range))


#: The columns of :func:`worst_cases` after the user's score.
WORST_COLUMNS = (
    "disadvantaged", "better_served", "closest_id", "closest_rank", "closest_similarity",
    "closest_similarity_raw", "closest_score", "better", "neighbours", "min_similarity",
    "min_score", "mean_score", "better_ids",
)  # fmt: skip


def worst_cases(
    frame: pd.DataFrame,
    sim: np.ndarray,
    n: int = 10,
    measure: str = "PUF-P-Cos",
    neighbours: int = 10,
    raw_range: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """The ``n`` users with the largest ``MEASURE:disadvantaged`` (ties: canonical order),
    each with the better-served users its part sums over, and those among its
    ``neighbours`` most similar ones (``sim``: the (m, m) min-max normalised similarity
    ``measure`` reads, in the order of ``frame``'s rows, or a function giving its rows for
    an array of row positions, e.g. :func:`similarity_rows` on the streamed route;
    ``raw_range``: the raw (lo, hi) it was normalised with, for the raw similarity).

    A user's part is sum over v of sim(u, v) (S_v - S_u), times 2 / (m (m - 1)), over the v
    with S_v > S_u and sim(u, v) > 0: ``better_served`` counts them (0 exactly when the
    part is 0), ``closest_id`` is the most similar of them, ``closest_rank`` its position
    in the user's similarity order (1 = most similar; ties in row order),
    ``closest_similarity`` (normalised) and ``closest_similarity_raw`` (NaN without
    ``raw_range``) its similarity, ``closest_score`` its score. Then over the ``neighbours``
    most similar users: ``better`` (how many are better served), ``neighbours``,
    ``min_similarity`` and ``min_score`` / ``mean_score`` over those better-served
    neighbours (NaN when there are none), and ``better_ids`` (most similar first).
    """
    if measure not in FAIR_PUF:
        raise ValueError(f"worst cases need a PUF measure, one of {FAIR_PUF}; got {measure!r}")
    m = len(frame)
    if not callable(sim) and sim.shape != (m, m):
        raise ValueError(f"sim must be ({m}, {m}) in the frame's row order, got {sim.shape}")
    effect = measure.split("-")[1]
    scores = frame[effect].to_numpy(dtype=np.float64)
    part = frame[f"{measure}:disadvantaged"].to_numpy(dtype=np.float64)
    order = np.argsort(-np.nan_to_num(part, nan=-np.inf), kind="stable")[: max(0, n)]
    rows_of = sim(order) if callable(sim) else sim[order]
    lo, hi = raw_range if raw_range is not None else (math.nan, math.nan)
    records = []
    for u, row in zip(order, rows_of):
        row = np.array(row, dtype=np.float64)
        row[u] = -np.inf
        ranked = np.argsort(-row, kind="stable")[: m - 1]  # every other user, most similar first
        nearest = ranked[: min(neighbours, m - 1)]
        better = nearest[scores[nearest] > scores[u]]
        serving = (scores[ranked] > scores[u]) & (row[ranked] > 0)
        first = int(np.argmax(serving)) if serving.any() else -1
        closest = ranked[first] if first >= 0 else -1
        records.append(
            {
                "user_id": frame["user_id"].iloc[u],
                effect: scores[u],
                "disadvantaged": part[u],
                "better_served": int(serving.sum()),
                "closest_id": frame["user_id"].iloc[closest] if first >= 0 else "",
                "closest_rank": first + 1 if first >= 0 else 0,
                "closest_similarity": row[closest] if first >= 0 else math.nan,
                "closest_similarity_raw": lo + row[closest] * (hi - lo) if first >= 0 else math.nan,
                "closest_score": scores[closest] if first >= 0 else math.nan,
                "better": len(better),
                "neighbours": len(nearest),
                "min_similarity": row[better].min() if len(better) else math.nan,
                "min_score": scores[better].min() if len(better) else math.nan,
                "mean_score": scores[better].mean() if len(better) else math.nan,
                "better_ids": ",".join(frame["user_id"].iloc[better].astype(str)),
            }
        )
    columns = ["user_id", effect, *WORST_COLUMNS]
    return pd.DataFrame.from_records(records, columns=columns)


def _ordinal(n: int) -> str:
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def _floor(value: float, digits: int = 2) -> str:
    """``value`` rounded down to ``digits`` decimals: a lower bound stays a lower bound."""
    return f"{math.floor(value * 10**digits + 1e-9) / 10**digits:.{digits}f}"


def worst_lines(table: pd.DataFrame, measure: str = "PUF-P-Cos", k: int = 10) -> list[str]:
    """One readable line per row of :func:`worst_cases`, naming the better-served users the
    user's part sums over, e.g. ``user 276: P@10 0.00; its part sums over 34 better-served
    users, the closest its 12th most similar (user 512, raw cosine 0.18, min-max normalised
    0.41) with P@10 0.30; none of its 10 most similar users is better served``."""
    effect = measure.split("-")[1]
    kind = "cosine" if measure.endswith("Cos") else "Jaccard"
    lines = []
    for row in table.itertuples(index=False):
        record = row._asdict()
        head = f"user {record['user_id']}: {effect}@{k} {record[effect]:.2f}; "
        count = int(record["better_served"])
        if count == 0:
            lines.append(
                head + "no similar user is better served, so its part is 0 (up to rounding)"
            )
            continue
        raw = record["closest_similarity_raw"]
        similarity = f"min-max normalised {kind} {record['closest_similarity']:.2f}"
        if not math.isnan(raw):
            similarity = f"raw {kind} {raw:.2f}, " + similarity
        users = "user" if count == 1 else "users"
        rank = int(record["closest_rank"])
        place = "most similar" if rank == 1 else f"{_ordinal(rank)} most similar"
        text = (
            f"its part sums over {count} better-served {users}, the closest its {place} "
            f"(user {record['closest_id']}, {similarity}) with {effect}@{k} "
            f"{record['closest_score']:.2f}; "
        )
        near, better = int(record["neighbours"]), int(record["better"])
        if better == 0:
            text += f"none of its {near} most similar users is better served"
        else:
            text += (
                f"{better} of its {near} most similar users (normalised {kind} >= "
                f"{_floor(record['min_similarity'])}) get {effect}@{k} >= "
                f"{_floor(record['min_score'])} (mean {record['mean_score']:.2f})"
            )
        lines.append(head + text)
    return lines
