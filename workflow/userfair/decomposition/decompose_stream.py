"""The per-user decomposition on the streamed route (docs/method.md#who): the compiled row
loops of ``userfair.decomposition._decompose_kernels`` over the streamed measures' pairs fill
per-user accumulators (:func:`stream_parts`, over any row range: ranges that tile ``0:m`` add up)
without anything m x m, and :func:`finish_parts` scales them into the same frame as the
dense route's (:func:`userfair.decomposition.decompose.decompose`); :func:`stream_decompose` does
both."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from userfair.decomposition import _decompose_kernels as kern
from userfair.decomposition.decompose_columns import (
    ATTRIBUTES,
    COLUMNS,
    ENVY,
    attributes,
    check_options,
    score_columns,
)
from userfair.engine._backend import binary_csr, blocks, resolve, to_torch
from userfair.files.inputs import Inputs
from userfair.formulas import effectiveness, envy_reductions, fairness
from userfair.similarity import pairwise
from userfair.streamed import pair_records, stream_rows, streaming

log = logging.getLogger(__name__)

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
    block_size: int = pairwise.BLOCK_SIZE,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """The per-user accumulators :data:`PARTS` of the rows ``start:stop`` (pairs u < v with
    u in the rows, envy's ordered pairs (u, v) with u in the rows), given the complete
    pass-one ``stats`` (``userfair.streamed.streaming.pass_one``) of the same users. Nothing m x m:
    the compiled kernels of ``userfair.decomposition._decompose_kernels`` visit the pairs of
    ``userfair.streamed.streaming.pass_two`` and add each pair's term to both users' entries.
    Accumulators of row ranges that tile 0:m add up to those of 0:m (a scatter). ``device``
    as ``userfair.streamed.streaming.pass_one``'s: ``cuda`` or ``torch-cpu`` run the blocks
    on torch (``userfair.streamed._streaming_torch``), the same sums in another order."""

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
    denominator = fairness.envy_denominators(relevant, k, envy_utility)
    relevant_rec = relevant[:, items].tocsr()
    relevant_rec.sort_indices()
    own = effectiveness.hits(local, relevant_rec, k).sum(axis=1) / denominator
    target = resolve(device)
    if target is not None:
        from userfair.streamed import _streaming_torch as on_device

        train = on_device.Train(data, stats.gamma, target)
        lists = on_device.Lists(local, len(items), *cosines, target)
        rows = on_device.block_rows(block_size, train.row_bytes() + lists.row_bytes(), target)
        hits = on_device.Rows(relevant_rec.indptr, relevant_rec.indices, len(items), target)
        tensors = [to_torch(x, target) for x in (precision, ndcg, own, denominator)]
        pairs, envy = np.zeros((m, kern.PAIR_ROWS)), np.zeros((m, kern.ENVY_ROWS))
        for a, b in blocks(stop - start, rows):
            pairs += on_device.decompose_pair_rows(
                train, lists, *tensors[:2], float(cos_lo), float(jacc_lo), float(threshold),
                start + a, start + b,
            )  # fmt: skip
            envy += on_device.decompose_envy_rows(hits, lists, *tensors[2:], start + a, start + b)
        return dict(zip(PARTS, np.ascontiguousarray(np.concatenate([pairs, envy], axis=1).T)))
    pairs = np.zeros((m, kern.PAIR_ROWS))
    for a, b in blocks(stop - start, block_size):
        pairs += kern.pair_rows(
            *data.pair_arguments(), start + a, start + b, float(stats.gamma), data.dist,
            data.own, precision, ndcg, float(cos_lo), float(jacc_lo), float(threshold),
            local, k, *cosines, len(items), threads,
        ).sum(axis=0)  # fmt: skip
        log.debug("decomposition, pairs: rows %d:%d of %d", start + a, start + b, m)
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
    quantities = ("envies", "envied", "max-envy", "max-envied")
    rows = envy_reductions.Rows(*(parts[name] for name in quantities), epsilon)
    columns.update(envy_reductions.shares(ENVY, rows))  # each declaration's reduction
    score_columns(columns, scores)
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
    block_size: int = pairwise.BLOCK_SIZE,
    envy_utility: str = "precision",
    stats=None,
    device: str = "cpu",
) -> pd.DataFrame:
    """:func:`decompose` on the streamed route: ``userfair.streamed.streaming.pass_one`` (unless
    ``stats`` is given), :func:`stream_parts` over all rows, :func:`finish_parts`, both
    passes on ``device``. Memory: O(m) per thread (no m x m array); time: about the streamed
    measures' pass two."""

    check_options(gamma, envy_utility)
    if gamma < 1.0 and inputs.genres is None:
        raise ValueError(
            f"gamma={gamma} < 1 needs item genres: load the inputs with item_features "
            "(--item-features on the command line)"
        )
    if stats is None:
        stats = streaming.pass_one(
            inputs.train_of_evaluated(), gamma=gamma, genres=inputs.genres,
            users=inputs.users, block_size=block_size, device=device,
        )  # fmt: skip
    elif stats.gamma != gamma:
        raise ValueError(f"pair stats were computed with gamma={stats.gamma}, not {gamma}")
    parts = stream_parts(
        inputs, stats, k=k, envy_utility=envy_utility, block_size=block_size, device=device
    )
    return finish_parts(inputs, stats, parts, k, epsilon)
