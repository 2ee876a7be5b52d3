"""Streamed measures: PUF, UF, ME/MME/PEU and the similarity ranges without any m x m array.

The dense route (``userfair.similarity.pairwise`` + ``userfair.formulas.fairness``) materialises
the (m, m) similarity matrices: 8 m^2 bytes each, 80 GB at 100,000 evaluated users. This module
computes the same numbers (docs/method.md) from the sparse train, test and list matrices in row
ranges, holding per thread only arrays of length m and r (r: recommended items):

* **pass one** (:func:`pass_one`, over the train rows of the evaluated users): the number
  of pairs sharing a train item, the raw min and max of cosine and Jaccard over the pairs
  (a pair sharing no item has raw value 0, so the minimum is 0 unless every pair shares an
  item) and the count, mean and sum of squared deviations of UF's raw ``sim_UF`` over all
  unordered pairs (UF's threshold mean + SD). Its result, a ``PairStats``, is a few
  numbers, serialisable to JSON; ranges of rows combine with ``combine`` (both in
  ``userfair.streamed.pair_records``, the records' format).
* **pass two** (:func:`pass_two`, given the combined ``PairStats``): the sums behind
  the Jaccard PUF, UF and the envy measures over a row range, as a ``PairSums``; ranges
  add up with ``combine``. The cosine PUF needs no pair pass: :func:`finish` takes it by
  the items (``userfair.streamed.puf_items``), from pass one's raw cosine range.
* :func:`finish` turns the complete stats and sums into the 18 measures;
  :func:`stream_evaluate` does everything in one process (what ``userfair.evaluate``
  calls on the streamed route).

Only pairs sharing an item have a nonzero raw cosine or Jaccard, so with gamma = 1 the cost
follows those pairs (the sum over items of their train degree squared, halved), not m^2.
PUF uses min-max: sum over pairs of ((s - lo) / (hi - lo)) |S_u - S_v|; a pair sharing no
item contributes (0 - lo) |...|, and such a pair exists only when lo = 0, so the sum is
sum over sharing pairs of (s - lo) |S_u - S_v| divided by (hi - lo), exactly (no
cancellation when lo > 0). UF's similar pairs (sim_UF >= mean + SD) at gamma = 1 carry
weight jacc, which is 0 for non-sharing pairs, so only sharing pairs contribute. With
gamma < 1 the genre similarity is dense: every pair is visited (O(m^2 g) time, memory still
O(m) per thread). Each unordered pair is visited once, from its smaller row index. Each row's
results are added in row order, so the numbers do not depend on the number of threads.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import scipy.sparse as sp

from userfair.engine import warmup
from userfair.engine._backend import binary_csr, blocks, resolve, to_torch
from userfair.files.inputs import Inputs
from userfair.formulas import _kernels, effectiveness, envy_reductions, fairness, spread
from userfair.measures import EFF, FAIR_PUF, NAMES, conventions, envy_measures, fused, statistics
from userfair.similarity.pairwise import BLOCK_SIZE
from userfair.similarity.registry import CosineBlocks
from userfair.streamed import _streaming_kernels as kern
from userfair.streamed import puf_items
from userfair.streamed.pair_records import (
    PairStats,
    PairSums,
    check_stats,
    json_number,
    users_digest,
)
from userfair.streamed.stream_rows import numba_threads, prepare_rows, row_range

log = logging.getLogger(__name__)

#: UF's item cosines are kept dense when at least this share of the (r, r) entries may be
#: nonzero (a CSR entry takes 12 bytes, a dense one 8).
DENSE_COSINES_SHARE = 2.0 / 3.0


# --- pass one ----------------------------------------------------------------------------


def pass_one(
    rows: sp.spmatrix,
    start: int = 0,
    stop: int | None = None,
    *,
    gamma: float = 1.0,
    genres: sp.spmatrix | None = None,
    users=None,
    block_size: int = BLOCK_SIZE,
    device: str = "cpu",
) -> PairStats:
    """:class:`PairStats` of the pairs u < v with u in ``start:stop`` of the evaluated users'
    train ``rows`` (all m rows are read: a row pairs with every later one).

    ``gamma`` < 1 mixes in the genre similarity of ``genres`` (the (n, g) item genres) for
    UF's moments. ``users`` (the evaluated users' ids) only stamps the result with their
    digest, checked when results are combined or used. Rows go through the compiled kernel
    ``block_size`` at a time (progress is logged per block); ``device``
    (``userfair.engine._backend``:
    ``cpu``, ``cuda``, ``torch-cpu``, ``auto``) runs the blocks as torch products instead
    (``userfair.streamed._streaming_torch``; fewer rows per block where memory is short). Its
    ``seconds`` time the computation only (``userfair.engine.warmup``: the first call in a process
    first runs on tiny inputs, untimed)."""
    tiny = warmup.tiny_inputs()
    warmup.once(
        ("pass_one", device, gamma < 1.0),
        lambda: pass_one(tiny.train, gamma=gamma, genres=tiny.genres, device=device),
    )
    clock = time.perf_counter()
    data = prepare_rows(rows, gamma, genres)
    start, stop = row_range(data.m, start, stop)

    target = resolve(device)
    if target is None:
        threads = numba_threads()

        def block_of(lo, hi):
            return kern.pass_one_rows(
                *data.pair_arguments(),
                lo,
                hi,
                float(gamma),
                data.dist,
                data.own,
                threads,
            )
    else:
        from userfair.streamed import _streaming_torch

        train = _streaming_torch.Train(data, gamma, target)
        block_of = train.pass_one_rows
        block_size = _streaming_torch.block_rows(block_size, train.row_bytes(), target)
    sharing, extremes = 0, [np.inf, -np.inf, np.inf, -np.inf]
    moments = (0.0, 0.0, 0.0)
    for a, b in blocks(stop - start, block_size):
        out = block_of(start + a, start + b)
        sharing += int(out[:, kern.ONE_SHARING].sum())
        extremes = [
            min(extremes[0], out[:, kern.ONE_COS_MIN].min()),
            max(extremes[1], out[:, kern.ONE_COS_MAX].max()),
            min(extremes[2], out[:, kern.ONE_JACC_MIN].min()),
            max(extremes[3], out[:, kern.ONE_JACC_MAX].max()),
        ]
        moments = kern.merge_rows(out, *moments)
        log.debug("pass one: rows %d:%d of %d", start + a, start + b, data.m)
    return PairStats(
        m=data.m,
        start=start,
        stop=stop,
        gamma=float(gamma),
        sharing_pairs=sharing,
        cos_min=json_number(extremes[0]),
        cos_max=json_number(extremes[1]),
        jacc_min=json_number(extremes[2]),
        jacc_max=json_number(extremes[3]),
        uf_pairs=int(moments[0]),
        uf_mean=float(moments[1]),
        uf_m2=float(moments[2]),
        seconds=time.perf_counter() - clock,
        users_sha256=None if users is None else users_digest(users),
    )


# --- pass two ----------------------------------------------------------------------------


def item_cosines_for(
    inputs: Inputs, local_items: np.ndarray, threads: int,
    dense_items: int = fairness.UF_DENSE_ITEMS,
):  # fmt: skip
    """The cosines of the recommended items' train columns, as the kernel's arguments:
    dense (r, r) when r^2 fits ``dense_items`` (``fairness.UF_DENSE_ITEMS``) or when at
    least :data:`DENSE_COSINES_SHARE` of them are nonzero (counted first), else CSR rows."""

    r = len(local_items)
    unit = fairness.unit_item_columns(inputs.train, local_items)  # (users, r) CSC
    rows = unit.tocsr()
    if r * r > dense_items:
        nonzeros = kern.item_cosine_counts(
            unit.indptr, unit.indices, rows.indptr, rows.indices, r, threads
        )
        if nonzeros.sum() < DENSE_COSINES_SHARE * r * r:
            indptr = np.r_[0, np.cumsum(nonzeros)].astype(np.int64)
            indices, data = kern.item_cosines_csr(
                unit.indptr,
                unit.indices,
                unit.data,
                rows.indptr,
                rows.indices,
                rows.data,
                r,
                indptr,
                threads,
            )
            return False, np.zeros((1, 1)), indptr, indices, data
    dense = _kernels.item_cosines(
        unit.indptr, unit.indices, unit.data, rows.indptr, rows.indices, rows.data, r
    )
    return True, dense, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0)


def pass_two(
    inputs: Inputs,
    stats: PairStats,
    start: int = 0,
    stop: int | None = None,
    *,
    k: int = 10,
    epsilon: float = 0.05,
    envy_utility: str = "precision",
    block_size: int = BLOCK_SIZE,
    device: str = "cpu",
) -> PairSums:
    """:class:`PairSums` of the rows ``start:stop`` of ``inputs`` (its top-k lists, test
    items and train matrix), given the complete pass-one ``stats`` of the same users (UF's
    gamma is ``stats.gamma``; gamma < 1 needs ``inputs.genres``). ``device`` as in
    :func:`pass_one` (UF's item cosines are computed on the CPU either way)."""

    check_stats(stats, inputs)
    tiny = warmup.tiny_inputs()
    warmup.once(  # kernels loaded before the clocks start
        ("pass_two", device, stats.gamma < 1.0, envy_utility),
        lambda: pass_two(
            tiny, pass_one(tiny.train, gamma=stats.gamma, genres=tiny.genres, users=tiny.users),
            k=3, epsilon=epsilon, envy_utility=envy_utility, device=device,
        ),
    )  # fmt: skip
    m = len(inputs.users)
    start, stop = row_range(m, start, stop)
    topk = effectiveness.validate_lists(inputs.topk, k, inputs.relevant.shape)
    relevant = binary_csr(inputs.relevant)
    scores = effectiveness.per_user(topk, relevant, k)
    threads = numba_threads()
    target = resolve(device)

    clock = time.perf_counter()
    items, local = fairness.recommended_items(topk)
    cosines = item_cosines_for(inputs, items, threads)
    uf_setup = time.perf_counter() - clock

    clock = time.perf_counter()
    data = prepare_rows(inputs.train_of_evaluated(), stats.gamma, inputs.genres)
    jacc_lo, _ = stats.jacc_range
    threshold = stats.uf_threshold if stats.pairs >= 2 else math.inf
    precision = np.ascontiguousarray(scores["P"])
    ndcg = np.ascontiguousarray(scores["NDCG"])
    local = np.ascontiguousarray(local)
    if target is None:

        def pair_block(lo, hi):
            return kern.pass_two_rows(
                *data.pair_arguments(),
                lo,
                hi,
                float(stats.gamma),
                data.dist,
                data.own,
                precision,
                ndcg,
                float(jacc_lo),
                float(threshold),
                local,
                k,
                *cosines,
                len(items),
                threads,
            )
    else:
        from userfair.streamed import _streaming_torch as on_device

        train = on_device.Train(data, stats.gamma, target)
        lists = on_device.Lists(local, len(items), *cosines, target)
        block_size = on_device.block_rows(block_size, train.row_bytes() + lists.row_bytes(), target)
        on_scores = to_torch(precision, target), to_torch(ndcg, target)

        def pair_block(lo, hi):
            return on_device.pass_two_rows(
                train, lists, *on_scores, float(jacc_lo), threshold, lo, hi
            )

    pair_sums = np.zeros(4)
    for a, b in blocks(stop - start, block_size):
        pair_sums += pair_block(start + a, start + b).sum(axis=0)
        log.debug("pass two: rows %d:%d of %d", start + a, start + b, m)
    seconds_pairs = time.perf_counter() - clock

    clock = time.perf_counter()
    relevant_rec, own, denominator = envy_setup(relevant, items, local, k, envy_utility)
    if target is None:
        lists_arguments = envy_lists(relevant_rec, local, len(items))

        def envy_block(lo, hi):
            return kern.envy_rows(
                *lists_arguments,
                own,
                denominator,
                lo,
                hi,
                float(epsilon),
                threads,
            )
    else:
        hits = on_device.Rows(relevant_rec.indptr, relevant_rec.indices, len(items), target)
        on_own, on_denominator = to_torch(own, target), to_torch(denominator, target)

        def envy_block(lo, hi):
            return on_device.envy_rows(hits, lists, on_own, on_denominator, float(epsilon), lo, hi)

    envy = np.zeros(3)
    for a, b in blocks(stop - start, block_size):
        envy += envy_block(start + a, start + b).sum(axis=0)
    seconds_envy = time.perf_counter() - clock
    return PairSums(
        m=m,
        start=start,
        stop=stop,
        k=k,
        epsilon=float(epsilon),
        envy_utility=envy_utility,
        puf_p_jacc=float(pair_sums[kern.TWO_P_JACC]),
        puf_ndcg_jacc=float(pair_sums[kern.TWO_NDCG_JACC]),
        uf_sum=float(pair_sums[kern.TWO_UF]),
        uf_similar_pairs=int(pair_sums[kern.TWO_UF_PAIRS]),
        envy_sum=float(envy[0]),
        max_envy_sum=float(envy[1]),
        envious_users=int(envy[2]),
        seconds_pairs=seconds_pairs,
        seconds_uf_setup=uf_setup,
        seconds_envy=seconds_envy,
        users_sha256=users_digest(inputs.users),
    )


def envy_setup(relevant, items: np.ndarray, local: np.ndarray, k: int, envy_utility: str):
    """(the relevant matrix restricted to the recommended ``items`` as sorted CSR, each
    user's own utility, the utilities' denominators) of the lists ``local`` (indices into
    ``items``)."""
    denominator = fairness.envy_denominators(relevant, k, envy_utility)
    relevant_rec = relevant[:, items].tocsr()
    relevant_rec.sort_indices()
    own = effectiveness.hits(local, relevant_rec, k).sum(axis=1) / denominator
    return relevant_rec, own, denominator


def envy_lists(relevant_rec, local: np.ndarray, r: int) -> tuple:
    """The first arguments of the compiled envy kernels: each user's relevant recommended
    items (CSR by user) and each recommended item's listing users (CSR by item), int64."""
    holders = fairness.lists_matrix(local, r).T.tocsr()  # item -> users with it listed
    as64 = lambda a: a.astype(np.int64)  # noqa: E731
    return (
        as64(relevant_rec.indptr),
        as64(relevant_rec.indices),
        as64(holders.indptr),
        as64(holders.indices),
    )


# --- the measures ------------------------------------------------------------------------

#: The measures :func:`finish` computes from the pair results (the others are per user).
#: The envy measures (their declarations' reductions of pass two's envy totals).
ENVY = envy_measures("stream")
#: PUF's four, by their fused kernels (the pair measures declared with a term are the
#: generic engine's).
PUF = fused(FAIR_PUF)
PAIR_KEYS = tuple(m.name for m in ENVY) + ("UF",) + PUF


def finish(inputs: Inputs, stats: PairStats, sums: PairSums, device: str = "cpu") -> dict:
    """Every measure as ``userfair.evaluate.evaluate`` returns it (the 18 measures of
    ``userfair.measures.NAMES``, ``seconds``, ``conventions``) from the complete ``stats``
    and ``sums`` of ``inputs`` (k, epsilon and the envy utility are those of ``sums``; the
    per-user measures, SD and Gini are computed here: O(m k)).

    ``seconds``: the six effectiveness measures share one pass, SD and Gini their own;
    ``similarity-cos`` and ``similarity-jacc`` are each credited pass one (the raw ranges
    and UF's moments come from one pass); ME, MME, PEU the envy part of pass two;
    PUF-P-Jacc and PUF-NDCG-Jacc the pair part of pass two (one pass gives their sums and
    UF's); UF that plus its item cosines; PUF-P-Cos and PUF-NDCG-Cos their sums by the items
    (``userfair.streamed.puf_items`` on pass one's raw range; pass two computes no cosine sums).
    Times of ranges run apart are summed (work, not the wall time of a scatter). ``device``
    (as :func:`pass_one`'s): where the cosine sums by the items run."""

    check_stats(stats, inputs)
    if not sums.complete or sums.m != stats.m:
        raise ValueError(f"pair sums cover rows {sums.start}:{sums.stop} of {sums.m}")
    if sums.users_sha256 is not None and stats.users_sha256 not in (None, sums.users_sha256):
        raise ValueError("pair stats and pair sums are of different users")
    k, m = sums.k, stats.m
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    for name in EFF:
        seconds[name] = time.perf_counter() - clock
    scores = {name: float(per_user[name].mean()) if m else math.nan for name in EFF}
    for measure in statistics(("P", "NDCG"), "stream"):  # SD, Gini: their declarations
        clock = time.perf_counter()
        scores[measure.name] = spread.of(measure).value(per_user[measure.effectiveness])
        seconds[measure.name] = time.perf_counter() - clock
    scores.update(pair_measures(stats, sums))
    seconds["similarity-cos"] = seconds["similarity-jacc"] = stats.seconds
    for measure in ENVY:
        seconds[measure.name] = sums.seconds_envy
    for key in PUF:
        seconds[key] = sums.seconds_pairs
    if m >= 2:  # the cosine PUF by the items (userfair.streamed.puf_items), on pass one's range
        tiny = warmup.tiny_inputs().train
        warmup.once(
            "puf_items", lambda: puf_items.cosine_puf(CosineBlocks(tiny), tiny[:, 0].T.toarray())
        )
        clock = time.perf_counter()
        block = CosineBlocks(binary_csr(inputs.train_of_evaluated()))
        stacked = np.stack([per_user["P"], per_user["NDCG"]])
        found, _ = puf_items.cosine_puf(block, stacked, stats.cos_range, resolve(device))
        scores["PUF-P-Cos"], scores["PUF-NDCG-Cos"] = float(found[0]), float(found[1])
        seconds["PUF-P-Cos"] = seconds["PUF-NDCG-Cos"] = time.perf_counter() - clock
    seconds["UF"] = sums.seconds_pairs + sums.seconds_uf_setup
    return {
        **{key: float(scores[key]) for key in fused(NAMES)},
        "seconds": seconds,
        "conventions": conventions(sums.envy_utility, sums.epsilon, stats.gamma),
    }


def puf_value(total: float, lo_hi: tuple[float, float], pairs: int) -> float:
    """PUF from its shifted sum over the pairs, ``total`` = sum (s - lo) |S(u) - S(v)|, and
    the raw range (lo, hi) of s: total / (hi - lo) / pairs, 0 when hi = lo."""
    lo, hi = lo_hi
    return 0.0 if hi == lo else total / (hi - lo) / pairs


def pair_measures(stats: PairStats, sums: PairSums) -> dict:
    """The envy measures, UF and the two Jaccard PUF of the complete ``stats`` and ``sums`` (all
    of :data:`PAIR_KEYS` NaN for m < 2; the cosine PUF comes from :func:`finish`, by the
    items)."""
    m, pairs, k = stats.m, stats.pairs, sums.k
    if m < 2:
        return {key: math.nan for key in PAIR_KEYS}
    totals = envy_reductions.Totals.of_users(
        sums.envy_sum, sums.max_envy_sum, sums.envious_users, m
    )
    out = envy_reductions.values(ENVY, totals)
    out["UF"] = fairness.uf_value(sums.uf_sum / (k * k), pairs) if pairs >= 2 else math.nan
    for name in ("P", "NDCG"):
        total = getattr(sums, f"puf_{name.lower()}_jacc")
        out[f"PUF-{name}-Jacc"] = puf_value(total, stats.jacc_range, pairs)
    return out


def stats_of(
    inputs: Inputs, gamma: float = 1.0, block_size: int = BLOCK_SIZE, device: str = "cpu"
) -> PairStats:
    """:func:`pass_one` over every evaluated user of ``inputs`` (gamma < 1 needs
    ``inputs.genres``): what :func:`stream_evaluate`, the sampled estimate and the plugins'
    compiled route (the similarity ranges) read."""
    if gamma < 1.0 and inputs.genres is None:
        raise ValueError(
            f"gamma={gamma} < 1 needs item genres: load the inputs with item_features "
            "(--item-features on the command line)"
        )
    log.info("streamed pass one over %d users ...", len(inputs.users))
    return pass_one(
        inputs.train_of_evaluated(), gamma=gamma, genres=inputs.genres, users=inputs.users,
        block_size=block_size, device=device,
    )  # fmt: skip


def stream_evaluate(
    inputs: Inputs,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    envy_utility: str = "precision",
    block_size: int = BLOCK_SIZE,
    stats: PairStats | None = None,
    device: str = "cpu",
) -> dict:
    """Every measure as ``userfair.evaluate.evaluate`` returns it, by both passes in this
    process (:func:`pass_one` unless ``stats`` is given, e.g. read from a file;
    :func:`pass_two`; :func:`finish`), on ``device`` (see :func:`pass_one`)."""
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )
    if stats is None:
        stats = stats_of(inputs, gamma, block_size, device)
    elif stats.gamma != gamma:
        raise ValueError(f"pair stats were computed with gamma={stats.gamma}, not {gamma}")
    log.info("pass one: %.3f s; streamed pass two ...", stats.seconds)
    sums = pass_two(
        inputs,
        stats,
        k=k,
        epsilon=epsilon,
        envy_utility=envy_utility,
        block_size=block_size,
        device=device,
    )
    log.info("pass two: pairs %.3f s, envy %.3f s", sums.seconds_pairs, sums.seconds_envy)
    return finish(inputs, stats, sums, device)
