"""Who is treated unfairly: each evaluated user's exact share of every fairness measure
(docs/method.md#who), the user's attributes beside it, and the worst cases in words.

In-memory (dense) route: the (m, m) cosine and Jaccard matrices of ``userfair.similarity``
are held (or given, e.g. the similarity files); every pass over the pairs reads them in row
blocks of ``block_size`` users, so the work arrays are (block_size, m). Every per-user
column is a sum of row-block contributions (a user's own row, plus the column entries other
rows give it), so the streamed route (:func:`stream_decompose`, :func:`stream_parts`: the
compiled row loops of ``userfair._decompose_kernels`` over the streamed measures' pairs)
fills the same accumulators without anything m x m; :func:`decompose` chooses the route
like ``userfair.evaluate`` (:func:`choose_route`).

Uses these public functions: ``userfair.effectiveness.per_user``, ``hits``,
``validate_lists``; ``userfair.fairness.envy_denominators``, ``ENVY_UTILITIES``;
``userfair.similarity.compute``, ``uf_similarity``, ``Similarity.raw``;
``userfair.inputs.Inputs.train_of_evaluated``; ``userfair.measures`` (names); and UF's
similar-pair threshold ``userfair._kernels.pair_threshold`` (the very threshold the dense
``userfair evaluate`` compares with, so that no pair on the border can flip).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import rankdata

from userfair import _decompose_kernels as kern
from userfair import (
    _kernels,
    effectiveness,
    fairness,
    pair_records,
    similarity,
    stream_rows,
    streaming,
)
from userfair import route as route_
from userfair._backend import binary_csr, blocks
from userfair.inputs import Inputs
from userfair.io import InputError, atomic_path
from userfair.measures import FAIR_PUF

log = logging.getLogger(__name__)

#: The per-user columns whose sum over the users is the measure of the same name, in order.
SHARES = FAIR_PUF + ("UF", "ME", "MME", "PEU", "Gini-P", "Gini-NDCG", "SD-P", "SD-NDCG")
#: The signed parts: each column, too, sums over the users to the measure before the colon.
SIGNED = tuple(
    f"{name}:{part}"
    for name in FAIR_PUF + ("Gini-P", "Gini-NDCG")
    for part in ("disadvantaged", "advantaged")
) + ("ME:envies", "ME:envied", "MME:envies", "MME:envied")
#: The user attributes (docs/method.md#who-attributes).
ATTRIBUTES = ("train_items", "popularity", "mean_similarity")
#: Every column of :func:`decompose`'s frame, before the caller's user features.
COLUMNS = ("user_id", "P", "NDCG") + SHARES + SIGNED + ATTRIBUTES
#: Entries of a cache-sized chunk (1 MiB of float64) for elementwise passes over pairs.
CACHE_ENTRIES = 1 << 17
#: File suffixes :func:`write_users` writes.
SUFFIXES = (".parquet", ".csv")


def _blocks(m: int, size: int):
    for start in range(0, m, max(1, int(size))):
        yield start, min(m, start + max(1, int(size)))


def puf_parts(scores, sim: np.ndarray, block_size: int = 2048):
    """(share, disadvantaged, advantaged) of PUF = sum_{u != v} sim |S_u - S_v| / (m (m-1)).

    share_u = sum_v sim(u, v) |S_u - S_v| / (m (m - 1)): half of each unordered pair's term
    to each of its two users. disadvantaged_u: the whole term of each pair in which u is the
    worse-served (S_u < S_v); advantaged_u: in which u is the better-served. Each of the three
    sums over the users to PUF; share = (disadvantaged + advantaged) / 2. NaN for m < 2.
    """
    scores = np.asarray(scores, dtype=np.float64)
    m = scores.size
    if m < 2:
        return (np.full(m, math.nan),) * 3
    # total_u = sum_v sim |S_u - S_v| in cache-sized chunks; the signed sum
    # sum_v sim (S_u - S_v) = S_u sum_v sim - (sim S)_u is a product; below_u (u better
    # served) = (total + signed) / 2, above_u (u worse served) = (total - signed) / 2.
    total, signed = np.empty(m), np.empty(m)
    rows = max(1, min(block_size, CACHE_ENTRIES // m))
    buffer = np.empty((rows, m))
    for start, stop in _blocks(m, rows):
        gaps = buffer[: stop - start]
        np.subtract(scores[start:stop, None], scores[None, :], out=gaps)
        np.abs(gaps, out=gaps)
        gaps *= sim[start:stop]
        total[start:stop] = gaps.sum(axis=1)
        block = sim[start:stop]
        signed[start:stop] = scores[start:stop] * block.sum(axis=1) - block @ scores
    above = np.maximum((total - signed) / 2.0, 0.0)
    below = np.maximum((total + signed) / 2.0, 0.0)
    pairs = m * (m - 1)
    return total / pairs, 2.0 * above / pairs, 2.0 * below / pairs


def envy_parts(
    topk: np.ndarray,
    relevant: sp.spmatrix,
    k: int = 10,
    epsilon: float = 0.05,
    utility: str = "precision",
    block_size: int = 2048,
) -> dict[str, np.ndarray]:
    """Per-user ME, MME, PEU and their signed parts (``fairness.envy``'s utilities).

    ME:envies_u = sum_v envy(u, v) / (m (m-1)), ME:envied_v = sum_u envy(u, v) / (m (m-1)),
    ME = (envies + envied) / 2. MME:envies_u = max_v envy(u, v) / m; MME:envied gives that
    max to the envied user v* attaining it (split equally among tied v*; nobody when the max
    is 0); MME = (envies + envied) / 2. PEU_u = [max_v envy(u, v) > epsilon] / m (the envier
    carries it). Each column sums to its measure; NaN for m < 2.
    """
    relevant = sp.csr_matrix(relevant, dtype=np.float64)
    relevant.data[:] = 1.0
    topk = effectiveness.validate_lists(topk, k, relevant.shape)
    m = topk.shape[0]
    names = ("ME", "ME:envies", "ME:envied", "MME", "MME:envies", "MME:envied", "PEU")
    if m < 2:
        return {name: np.full(m, math.nan) for name in names}
    denominator = fairness.envy_denominators(relevant, k, utility)
    own = effectiveness.hits(topk, relevant, k).sum(axis=1) / denominator
    items, local = np.unique(topk, return_inverse=True)
    local = local.reshape(topk.shape)
    lists_t = sp.csr_matrix(
        (np.ones(m * k), local.ravel(), np.arange(0, m * k + 1, k)), shape=(m, len(items))
    ).T.tocsr()
    relevant_rec = relevant[:, items]
    envies, envied = np.zeros(m), np.zeros(m)
    max_envy, max_envied = np.zeros(m), np.zeros(m)
    for start, stop in _blocks(m, block_size):
        counts = (relevant_rec[start:stop] @ lists_t).tocsr()  # (b, m): |R_u & L_v|
        rows = np.repeat(np.arange(start, stop), np.diff(counts.indptr))
        columns = counts.indices
        gain = np.maximum(counts.data / denominator[rows] - own[rows], 0.0)  # envy(u, v)
        envies[start:stop] = np.bincount(rows - start, weights=gain, minlength=stop - start)
        envied += np.bincount(columns, weights=gain, minlength=m)
        np.maximum.at(max_envy, rows, gain)
        top = (gain == max_envy[rows]) & (gain > 0)  # the v* of each row (ties: all of them)
        ties = np.bincount(rows[top] - start, minlength=stop - start)
        credit = max_envy[rows[top]] / ties[rows[top] - start]
        max_envied += np.bincount(columns[top], weights=credit, minlength=m)
    pairs = m * (m - 1)
    return {
        "ME": (envies + envied) / (2.0 * pairs),
        "ME:envies": envies / pairs,
        "ME:envied": envied / pairs,
        "MME": (max_envy + max_envied) / (2.0 * m),
        "MME:envies": max_envy / m,
        "MME:envied": max_envied / m,
        "PEU": (max_envy > epsilon) / m,
    }


def uf_parts(
    topk: np.ndarray,
    train: sp.spmatrix,
    sim_uf: np.ndarray,
    k: int = 10,
    block_size: int = 2048,
) -> np.ndarray:
    """Per-user UF: UF_u = UF * t_u / T, where T = sum over the similar pairs u < v of
    sim_UF(u, v) d_L(u, v) (the sum inside UF's log) and t_u is half of each of u's similar
    pairs' terms (sum_u t_u = T). The column sums to UF = log(T) / log(m (m-1) / 2); NaN
    where UF is NaN (fewer than 2 pairs, or T = 0). ``fairness.uf``'s conventions: the same
    threshold mean + SD over the pairs, the item cosines of the binarised ``train``."""

    sim_uf = np.asarray(sim_uf, dtype=np.float64)
    m = sim_uf.shape[0]
    topk = effectiveness.validate_lists(topk, k, (m, train.shape[1]))
    n_pairs = m * (m - 1) // 2
    if n_pairs < 2:
        return np.full(m, math.nan)
    threshold = _kernels.pair_threshold(sim_uf)
    items, local = np.unique(topk, return_inverse=True)
    local = local.reshape(topk.shape)
    r = len(items)
    columns = sp.csc_matrix(train, dtype=np.float64)[:, items]
    columns.data[:] = 1.0
    counts = np.diff(columns.indptr)
    columns.data[:] = np.repeat(1.0 / np.sqrt(np.maximum(counts, 1)), counts)
    item_cos = (columns.T @ columns).tocsr()  # (r, r) cosines of the recommended items
    lists = sp.csr_matrix((np.ones(m * k), local.ravel(), np.arange(0, m * k + 1, k)), (m, r))
    half = np.zeros(m)
    rows_per_block = max(1, min(block_size, (1 << 22) // max(r, m)))  # 32 MiB blocks
    for start, stop in _blocks(m, rows_per_block):
        to_items = (lists[start:stop] @ item_cos).toarray()  # (b, r): sum_{i in L_u} cos(i, .)
        upper = sim_uf[start:stop, start:]  # columns v >= start: each pair once, from u < v
        u, v = np.nonzero(upper >= threshold)
        keep = u < v
        u, v = u[keep], v[keep]
        weights = upper[u, v]
        positions = local[v + start] + (u * r)[:, None]  # to_items[u, j] for j in L_v
        cosine_sums = np.take(to_items.reshape(-1), positions).sum(axis=1)
        terms = weights * (k * k - cosine_sums) / (k * k)  # sim_UF(u, v) d_L(u, v)
        half += 0.5 * np.bincount(u + start, weights=terms, minlength=m)
        half += 0.5 * np.bincount(v + start, weights=terms, minlength=m)
    total = half.sum()
    if total <= 0:
        return np.full(m, math.nan)
    return math.log(total) / math.log(n_pairs) * half / total


def gini_parts(scores):
    """(share, disadvantaged, advantaged) of Gini = sum_j (2j - m - 1) x_(j) / (m sum x).

    share_u = (2 r_u - m - 1) x_u / (m sum x) with r_u the user's rank in ascending order;
    tied users take the mean of their positions' weights (r_u = their average rank), which
    leaves the sum unchanged because their scores are equal. The signed parts read Gini as
    its pair sum, sum over unordered pairs |x_u - x_v| / (m sum x): disadvantaged_u is the
    sum over the better-served v of x_v - x_u, advantaged_u over the worse-served v of
    x_u - x_v, each divided by m sum x. NaN when every score is 0 (Gini is NaN).
    """
    x = np.asarray(scores, dtype=np.float64)
    m, total = x.size, x.sum()
    if m == 0 or total == 0:
        return (np.full(m, math.nan),) * 3
    ranks = rankdata(x, method="average")
    share = (2.0 * ranks - m - 1) * x / (m * total)
    ordered = np.sort(x)
    prefix = np.r_[0.0, np.cumsum(ordered)]
    below = np.searchsorted(ordered, x, side="left")  # users with a lower score
    above = m - np.searchsorted(ordered, x, side="right")  # users with a higher score
    advantaged = below * x - prefix[below]
    disadvantaged = (prefix[m] - prefix[m - above]) - above * x
    return share, disadvantaged / (m * total), advantaged / (m * total)


def sd_share(scores) -> np.ndarray:
    """SD_u = SD * (x_u - mean)^2 / sum_v (x_v - mean)^2: the user's share of the variance,
    scaled so that the column sums to the SD (the SD is not a sum; its square is). 0 for
    every user when all scores are equal; NaN without users."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    squares = (x - x.mean()) ** 2
    total = squares.sum()
    if total == 0:
        return np.zeros(x.size)
    return float(np.std(x)) * squares / total


def attributes(inputs: Inputs, cosine: np.ndarray | None = None) -> pd.DataFrame:
    """``train_items`` (the user's number of train items), ``popularity`` (the mean, over the
    user's train items, of the number of train users of the item; NaN without train items)
    and ``mean_similarity`` (the mean min-max normalised cosine, the one PUF reads, to the
    other evaluated users; NaN for m < 2; only with ``cosine``), in canonical order."""
    train = sp.csr_matrix(inputs.train, dtype=np.float64)
    train.data[:] = 1.0
    rows = train[inputs.train_rows]
    activity = np.diff(rows.indptr).astype(np.int64)
    item_users = np.asarray(train.sum(axis=0)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        popularity = np.where(activity > 0, (rows @ item_users) / activity, math.nan)
    m = len(inputs.users)
    mean_similarity = np.full(m, math.nan)
    if cosine is not None and m >= 2:
        mean_similarity = np.asarray(cosine.sum(axis=1)).ravel() / (m - 1)  # diagonal is 0
    return pd.DataFrame(
        {"train_items": activity, "popularity": popularity, "mean_similarity": mean_similarity}
    )


def similarities_of(
    inputs: Inputs, similarities: dict | None = None, gamma: float = 1.0, block_size: int = 2048
) -> dict[str, similarity.Similarity]:
    """``similarities`` completed with the missing ``cos``, ``jacc`` (and ``genre`` when
    gamma < 1) of ``inputs.users``, as ``userfair evaluate`` computes them."""
    found = dict(similarities or {})
    rows = inputs.train_of_evaluated()
    m = len(inputs.users)
    for kind in ("cos", "jacc") + (("genre",) if gamma < 1.0 else ()):
        if found.get(kind) is None:
            if kind == "genre" and inputs.genres is None:
                raise ValueError(
                    f"gamma={gamma} < 1 needs item genres: load the inputs with item_features "
                    "(--item-features on the command line)"
                )
            found[kind] = similarity.compute(kind, rows, inputs.users, inputs.genres, block_size)
        elif found[kind].sim.shape != (m, m):
            raise ValueError(
                f"similarities[{kind!r}] must be ({m}, {m}), got {found[kind].sim.shape}"
            )
    return found


def _score_columns(columns: dict, scores: dict) -> None:
    """Gini's and SD's columns, from the per-user scores alone."""
    for name in ("P", "NDCG"):
        share, worse, better = gini_parts(scores[name])
        columns[f"Gini-{name}"] = share
        columns[f"Gini-{name}:disadvantaged"], columns[f"Gini-{name}:advantaged"] = worse, better
        columns[f"SD-{name}"] = sd_share(scores[name])


def _check_options(gamma: float, envy_utility: str) -> None:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )


def decompose(
    inputs: Inputs,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    similarities: dict[str, similarity.Similarity] | None = None,
    block_size: int = 2048,
    envy_utility: str = "precision",
    features: pd.DataFrame | None = None,
    route: str = "auto",
    stats=None,
) -> pd.DataFrame:
    """One row per evaluated user (canonical order) with :data:`COLUMNS`: ``user_id``,
    ``P`` and ``NDCG`` at k, the user's share of each measure in :data:`SHARES` (each
    column sums over the users to the measure of ``userfair.evaluate.evaluate`` with the
    same arguments), the signed parts :data:`SIGNED` and the :data:`ATTRIBUTES`; then the
    columns of ``features`` (keyed by a ``user_id`` column, else by its index), joined on
    the user id (users it lacks get NaN). Definitions: docs/method.md#who.

    ``similarities``: as for ``evaluate`` (``{"cos", "jacc"[, "genre"]}``, e.g. the
    similarity files); missing ones are computed here. They are read, never modified.

    ``route``: ``dense`` (the (m, m) similarities are held), ``stream`` (row passes,
    nothing m x m: :func:`stream_decompose`, which may take the pass-one ``stats``) or
    ``auto``: dense when ``similarities`` are given, else
    ``userfair.route.choose_route`` (``purpose="decompose"``). Both
    routes give the same shares (to <= 1e-9, tested).
    """
    _check_options(gamma, envy_utility)
    route = "dense" if similarities and route == "auto" else route
    if route_.choose_route(len(inputs.users), gamma, route, purpose="decompose") == "stream":
        frame = stream_decompose(
            inputs, k, epsilon, gamma, block_size=block_size, envy_utility=envy_utility,
            stats=stats,
        )  # fmt: skip
        return join_features(frame, features) if features is not None else frame
    sims = similarities_of(inputs, similarities, gamma, block_size)
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    columns: dict[str, np.ndarray] = {
        "user_id": np.asarray(inputs.users).astype(str),
        "P": scores["P"],
        "NDCG": scores["NDCG"],
    }
    for name in ("P", "NDCG"):
        for kind, label in (("cos", "Cos"), ("jacc", "Jacc")):
            key = f"PUF-{name}-{label}"
            share, worse, better = puf_parts(scores[name], sims[kind].sim, block_size)
            columns[key] = share
            columns[f"{key}:disadvantaged"], columns[f"{key}:advantaged"] = worse, better
    genre = sims["genre"].raw() if gamma < 1.0 else None
    sim_uf = similarity.uf_similarity(sims["jacc"].raw(), genre, gamma)  # read only
    columns["UF"] = uf_parts(inputs.topk, inputs.train, sim_uf, k, block_size)
    del sim_uf, genre
    columns.update(envy_parts(inputs.topk, inputs.relevant, k, epsilon, envy_utility, block_size))
    _score_columns(columns, scores)
    frame = pd.DataFrame({name: columns[name] for name in COLUMNS if name in columns})
    extra = attributes(inputs, sims["cos"].sim)
    for name in ATTRIBUTES:
        frame[name] = extra[name].to_numpy()
    return join_features(frame, features) if features is not None else frame


# --- the streamed route -------------------------------------------------------------------

#: The per-user accumulators of :func:`stream_parts` (each a length-m array).
PARTS = (
    "P-cos:dis", "P-cos:adv", "P-jacc:dis", "P-jacc:adv",
    "NDCG-cos:dis", "NDCG-cos:adv", "NDCG-jacc:dis", "NDCG-jacc:adv",
    "UF-terms", "cos-sum", "envies", "envied", "max-envy", "max-envied",
)  # fmt: skip


def stream_parts(
    inputs: Inputs,
    stats,
    start: int = 0,
    stop: int | None = None,
    *,
    k: int = 10,
    envy_utility: str = "precision",
    block_size: int = similarity.BLOCK_SIZE,
) -> dict[str, np.ndarray]:
    """The per-user accumulators :data:`PARTS` of the rows ``start:stop`` (pairs u < v with
    u in the rows, envy's ordered pairs (u, v) with u in the rows), given the complete
    pass-one ``stats`` (``userfair.streaming.pass_one``) of the same users. Nothing m x m:
    the compiled kernels of ``userfair._decompose_kernels`` visit the pairs of
    ``userfair.streaming.pass_two`` and add each pair's term to both users' entries.
    Accumulators of row ranges that tile 0:m add up to those of 0:m (a scatter)."""

    pair_records.check_stats(stats, inputs)
    m = len(inputs.users)
    start, stop = stream_rows.row_range(m, start, stop)
    topk = effectiveness.validate_lists(inputs.topk, k, inputs.relevant.shape)
    relevant = binary_csr(inputs.relevant)
    scores = effectiveness.per_user(topk, relevant, k)
    threads = stream_rows.numba_threads()
    items, local = fairness.recommended_items(topk)
    cosines = streaming.item_cosines_for(inputs, items, threads)
    data = stream_rows.prepare_rows(inputs.train_of_evaluated(), stats.gamma, inputs.genres)
    (cos_lo, _), (jacc_lo, _) = stats.cos_range, stats.jacc_range
    threshold = stats.uf_threshold if stats.pairs >= 2 else math.inf
    precision = np.ascontiguousarray(scores["P"])
    ndcg = np.ascontiguousarray(scores["NDCG"])
    local = np.ascontiguousarray(local)
    pairs = np.zeros((m, kern.PAIR_ROWS))
    for a, b in blocks(stop - start, block_size):
        pairs += kern.pair_rows(
            *data.pair_arguments(), start + a, start + b, float(stats.gamma), data.dist,
            data.own, precision, ndcg, float(cos_lo), float(jacc_lo), float(threshold),
            local, k, *cosines, len(items), threads,
        ).sum(axis=0)  # fmt: skip
        log.debug("decomposition, pairs: rows %d:%d of %d", start + a, start + b, m)
    denominator = fairness.envy_denominators(relevant, k, envy_utility)
    relevant_rec = relevant[:, items].tocsr()
    relevant_rec.sort_indices()
    own = effectiveness.hits(local, relevant_rec, k).sum(axis=1) / denominator
    holders = fairness.lists_matrix(local, len(items)).T.tocsr()  # item -> users with it listed
    as64 = lambda a: a.astype(np.int64)  # noqa: E731
    envy = np.zeros((m, kern.ENVY_ROWS))
    for a, b in blocks(stop - start, block_size):
        envy += kern.envy_rows(
            as64(relevant_rec.indptr), as64(relevant_rec.indices), as64(holders.indptr),
            as64(holders.indices), own, denominator, start + a, start + b, threads,
        ).sum(axis=0)  # fmt: skip
    return dict(zip(PARTS, np.ascontiguousarray(np.concatenate([pairs, envy], axis=1).T)))


def finish_parts(
    inputs: Inputs, stats, parts: dict[str, np.ndarray], k: int = 10, epsilon: float = 0.05
) -> pd.DataFrame:
    """The frame of :func:`decompose` from the complete accumulators ``parts`` of all rows
    and the pass-one ``stats`` (the scaling of docs/method.md#who; Gini, SD and the
    attributes need only the per-user scores and the train matrix)."""
    m = len(inputs.users)
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    columns: dict[str, np.ndarray] = {
        "user_id": np.asarray(inputs.users).astype(str),
        "P": scores["P"],
        "NDCG": scores["NDCG"],
    }
    n_pairs = m * (m - 1) // 2
    ranges = {"cos": stats.cos_range, "jacc": stats.jacc_range}
    for name in ("P", "NDCG"):
        for kind, label in (("cos", "Cos"), ("jacc", "Jacc")):
            key = f"PUF-{name}-{label}"
            lo, hi = ranges[kind]
            if m < 2:
                worse = better = np.full(m, math.nan)
            elif hi == lo:  # every normalised similarity is 0
                worse = better = np.zeros(m)
            else:
                worse = parts[f"{name}-{kind}:dis"] / (hi - lo) / n_pairs
                better = parts[f"{name}-{kind}:adv"] / (hi - lo) / n_pairs
            columns[key] = (worse + better) / 2.0
            columns[f"{key}:disadvantaged"], columns[f"{key}:advantaged"] = worse, better
    half = parts["UF-terms"] / (2.0 * k * k)
    total = half.sum()
    if n_pairs < 2 or total <= 0:
        columns["UF"] = np.full(m, math.nan)
    else:
        columns["UF"] = math.log(total) / math.log(n_pairs) * half / total
    if m < 2:
        for name in ("ME", "ME:envies", "ME:envied", "MME", "MME:envies", "MME:envied", "PEU"):
            columns[name] = np.full(m, math.nan)
    else:
        ordered = m * (m - 1)
        envies, envied = parts["envies"], parts["envied"]
        max_envy, max_envied = parts["max-envy"], parts["max-envied"]
        columns["ME"] = (envies + envied) / (2.0 * ordered)
        columns["ME:envies"], columns["ME:envied"] = envies / ordered, envied / ordered
        columns["MME"] = (max_envy + max_envied) / (2.0 * m)
        columns["MME:envies"], columns["MME:envied"] = max_envy / m, max_envied / m
        columns["PEU"] = (max_envy > epsilon) / m
    _score_columns(columns, scores)
    frame = pd.DataFrame({name: columns[name] for name in COLUMNS if name in columns})
    extra = attributes(inputs)
    lo, hi = stats.cos_range
    if m >= 2:
        mean = parts["cos-sum"] / (hi - lo) / (m - 1) if hi > lo else np.zeros(m)
        extra["mean_similarity"] = mean
    for name in ATTRIBUTES:
        frame[name] = extra[name].to_numpy()
    return frame


def stream_decompose(
    inputs: Inputs,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    *,
    block_size: int = similarity.BLOCK_SIZE,
    envy_utility: str = "precision",
    stats=None,
) -> pd.DataFrame:
    """:func:`decompose` on the streamed route: ``userfair.streaming.pass_one`` (unless
    ``stats`` is given), :func:`stream_parts` over all rows, :func:`finish_parts`. Memory:
    O(m) per thread (no m x m array); time: about the streamed measures' pass two."""

    _check_options(gamma, envy_utility)
    if gamma < 1.0 and inputs.genres is None:
        raise ValueError(
            f"gamma={gamma} < 1 needs item genres: load the inputs with item_features "
            "(--item-features on the command line)"
        )
    if stats is None:
        stats = streaming.pass_one(
            inputs.train_of_evaluated(), gamma=gamma, genres=inputs.genres,
            users=inputs.users, block_size=block_size,
        )  # fmt: skip
    elif stats.gamma != gamma:
        raise ValueError(f"pair stats were computed with gamma={stats.gamma}, not {gamma}")
    parts = stream_parts(inputs, stats, k=k, envy_utility=envy_utility, block_size=block_size)
    return finish_parts(inputs, stats, parts, k, epsilon)


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


def join_features(frame: pd.DataFrame, features: pd.DataFrame, label: str = "features"):
    """``frame`` with the columns of ``features`` joined on ``user_id`` (a column of
    ``features``, else its index); users without a row get NaN. A repeated user id or a
    column name that ``frame`` already has is an error naming ``label`` and the field."""
    features = features.copy()
    if "user_id" not in features.columns:
        features = features.rename_axis("user_id").reset_index()
    features["user_id"] = features["user_id"].astype(str)
    repeated = features["user_id"][features["user_id"].duplicated()]
    if len(repeated):
        raise InputError(f"{label}: user_id {repeated.iloc[0]!r} appears more than once")
    clash = sorted(set(features.columns) & set(frame.columns) - {"user_id"})
    if clash:
        raise InputError(f"{label}: column {clash[0]!r} is already a column of the user frame")
    return frame.merge(features, on="user_id", how="left", validate="one_to_one")


def check_suffix(path: str | os.PathLike) -> str:
    """The suffix of an output path, if :func:`write_users` can write it; else InputError."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"{path}: unknown suffix {suffix!r}; expected one of {SUFFIXES}")
    return suffix


def write_users(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a user frame as .parquet or .csv (by suffix), atomically."""
    suffix = check_suffix(path)
    with atomic_path(path) as tmp:
        if suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)


def worst_similarity(inputs: Inputs, measure: str, similarities=None, stats=None):
    """(sim, raw_range) for :func:`worst_cases` of ``measure``: the (m, m) normalised
    similarity of ``similarities`` (dense route) or a function giving its rows
    (:func:`similarity_rows`, streamed route, from the pass-one ``stats``, computed once
    when not given), and the raw (lo, hi) range it was min-max normalised with."""
    kind = "cos" if measure.endswith("Cos") else "jacc"
    if similarities is not None:
        found = similarities[kind]
        return found.sim, (float(found.lo), float(found.hi))
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
