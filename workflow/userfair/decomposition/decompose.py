"""Who is treated unfairly: each evaluated user's exact share of every fairness measure
(docs/method.md#who), the user's attributes beside it, and the worst cases in words.

In-memory (dense) route: the (m, m) cosine and Jaccard matrices of ``userfair.similarity.pairwise``
are held (or given, e.g. the similarity files); every pass over the pairs reads them in row
blocks of ``block_size`` users, so the work arrays are (block_size, m). Every per-user
column is a sum of row-block contributions (a user's own row, plus the column entries other
rows give it), so the streamed route (:mod:`userfair.decomposition.decompose_stream`: the compiled
row loops of
``userfair.decomposition._decompose_kernels`` over the streamed measures' pairs) fills the same
accumulators without anything m x m; :func:`decompose` chooses the route like
``userfair.evaluate`` (``userfair.engine.route.choose_route``). The columns both routes fill alike
are :mod:`userfair.decomposition.decompose_columns`; the worst cases in words,
:mod:`userfair.decomposition.worst_cases`.

Uses these public functions: ``userfair.formulas.effectiveness.per_user``, ``hits``,
``validate_lists``; ``userfair.formulas.fairness.envy_denominators``, ``ENVY_UTILITIES``;
``userfair.similarity.pairwise.compute``, ``uf_similarity``, ``Similarity.raw``;
``userfair.files.inputs.Inputs.train_of_evaluated``; ``userfair.measures`` (names); and UF's
similar-pair threshold ``userfair.formulas._kernels.pair_threshold`` (the very threshold the dense
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

from userfair.decomposition.decompose_columns import (
    ATTRIBUTES,
    COLUMNS,
    ENVY,
    attributes,
    check_options,
    score_columns,
)
from userfair.decomposition.decompose_stream import stream_decompose
from userfair.engine import generic_routes, uf_engine
from userfair.engine import route as route_
from userfair.files.inputs import Inputs
from userfair.files.io import InputError, atomic_path
from userfair.formulas import _kernels, effectiveness, envy_reductions, fairness
from userfair.measures import generic, served, unserved
from userfair.similarity import pairwise

log = logging.getLogger(__name__)

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
    """Every envy measure's per-user columns and signed parts (``fairness.envy``'s
    utilities): the envy rows reduced per user (``envy_reductions.Rows``: each user's row
    sum and maximum, and the same of the columns, the envied side), then each declaration's
    reduction (``envy_reductions.Reduction.shares``). ME:envies_u = sum_v envy(u, v) /
    (m (m-1)), ME:envied_v = sum_u envy(u, v) / (m (m-1)), ME = (envies + envied) / 2.
    MME:envies_u = max_v envy(u, v) / m; MME:envied gives that max to the envied user v*
    attaining it (split equally among tied v*; nobody when the max is 0); MME = (envies +
    envied) / 2. PEU_u = [max_v envy(u, v) > epsilon] / m (the envier carries it). Each
    column sums to its measure; NaN for m < 2.
    """
    relevant = sp.csr_matrix(relevant, dtype=np.float64)
    relevant.data[:] = 1.0
    topk = effectiveness.validate_lists(topk, k, relevant.shape)
    m = topk.shape[0]
    if m < 2:
        return envy_reductions.shares(ENVY, envy_reductions.Rows(*(np.zeros(m),) * 4, epsilon))
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
    rows = envy_reductions.Rows(envies, envied, max_envy, max_envied, epsilon)
    return envy_reductions.shares(ENVY, rows)


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
    n_pairs = m * (m - 1) // 2
    if n_pairs < 2:
        return np.full(m, math.nan)
    threshold = _kernels.pair_threshold(sim_uf)
    cosines = uf_engine.ListCosines.of(topk, train, m, k)
    half = np.zeros(m)
    for start, stop in _blocks(m, cosines.rows(m, block_size, 1 << 22)):  # 32 MiB blocks
        u, v, _, terms = uf_engine.similar_terms(sim_uf[start:stop], start, threshold, cosines)
        terms = terms / (k * k)  # sim_UF(u, v) d_L(u, v)
        half += 0.5 * np.bincount(u, weights=terms, minlength=m)
        half += 0.5 * np.bincount(v, weights=terms, minlength=m)
    total = half.sum()
    if total <= 0:
        return np.full(m, math.nan)
    return math.log(total) / math.log(n_pairs) * half / total


def similarities_of(
    inputs: Inputs, similarities: dict | None = None, gamma: float = 1.0, block_size: int = 2048
) -> dict[str, pairwise.Similarity]:
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
            found[kind] = pairwise.compute(kind, rows, inputs.users, inputs.genres, block_size)
        elif found[kind].sim.shape != (m, m):
            raise ValueError(
                f"similarities[{kind!r}] must be ({m}, {m}), got {found[kind].sim.shape}"
            )
    return found


def decompose(
    inputs: Inputs,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    similarities: dict[str, pairwise.Similarity] | None = None,
    block_size: int = 2048,
    envy_utility: str = "precision",
    features: pd.DataFrame | None = None,
    route: str = "auto",
    stats=None,
    device: str = "cpu",
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
    ``auto``, decided by ``userfair.engine.route.choose_route`` (``purpose="decompose"``):
    dense when ``similarities`` are given, else by the user count and memory. Both
    routes give the same shares (to <= 1e-9, tested). ``device``: where the streamed
    route's passes run (``userfair.streamed.streaming.pass_one``'s; the dense route ignores
    it).
    """
    check_options(gamma, envy_utility)
    route = route_.choose_route(
        len(inputs.users), gamma, route, purpose="decompose", given=bool(similarities)
    )
    if route == "stream":
        frame = stream_decompose(
            inputs, k, epsilon, gamma, block_size=block_size, envy_utility=envy_utility,
            stats=stats, device=device,
        )  # fmt: skip
        frame = with_plugin_shares(frame, inputs, k, "stream", block_size)
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
    sim_uf = pairwise.uf_similarity(sims["jacc"].raw(), genre, gamma)  # read only
    columns["UF"] = uf_parts(inputs.topk, inputs.train, sim_uf, k, block_size)
    del sim_uf, genre
    columns.update(envy_parts(inputs.topk, inputs.relevant, k, epsilon, envy_utility, block_size))
    score_columns(columns, scores)
    frame = pd.DataFrame({name: columns[name] for name in COLUMNS if name in columns})
    extra = attributes(inputs, sims["cos"].sim)
    for name in ATTRIBUTES:
        frame[name] = extra[name].to_numpy()
    frame = with_plugin_shares(frame, inputs, k, "dense", block_size)
    return join_features(frame, features) if features is not None else frame


def with_plugin_shares(frame: pd.DataFrame, inputs: Inputs, k: int, route: str, block_size):
    """``frame`` with the per-user share of each pair measure of the generic engine (the
    built-in ones declared with a term, each loaded plugin PairMeasure) after the other
    columns (userfair.engine.generic_routes.pair_shares; docs/plugins.md); a plugin UserMeasure
    has no generic share, and says so once."""
    names = generic()
    unserved("decompose", names, "not in the per-user frame")
    shares = generic_routes.pair_shares(inputs, k, served("decompose", names), route, block_size)
    return frame.assign(**shares) if shares else frame


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
