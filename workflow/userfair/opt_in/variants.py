"""The opt-in measures (``userfair.measures.OPT_IN``): gNDCG with its SD and Gini, and PUF
over the scores {P, NDCG, gNDCG} x the similarities of ``userfair.similarity.registry.REGISTRY``,
on the dense or the streamed route (docs/method.md#other-user-similarities).

PUF-{S}-{SIM} = mean over unordered pairs {u, v} of sim(u, v) |S(u) - S(v)|, sim min-max
normalised over the pairs. The dense route stacks the similarity's row blocks into the
(m, m) matrix and calls ``userfair.formulas.fairness.puf``; the streamed route never holds m x m:
one pass over the row blocks gives, over the pairs u < v, A_S = sum s |S_u - S_v| (s raw),
the raw minimum and maximum (a pair a sparse block does not store has s = 0), and
B_S = sum |S_u - S_v| comes from the sorted scores, so that

    PUF = (A_S - lo B_S) / ((hi - lo) m (m - 1) / 2),  0 when hi = lo.

In one process (``sums`` not given) a cosine (Cos, RCos, Vec, Genre) takes no such pass
for its sums: ``userfair.streamed.puf_items`` makes A_S by the items and certifies or searches the
extremes; the row ranges a scatter gathers (:func:`range_sums`) are the pass's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from userfair.engine._backend import blocks
from userfair.formulas import _kernels, effectiveness, fairness, graded, spread
from userfair.measures import (
    EFF_GRADED,
    FAIR_GRADED,
    PUF_SCORES,
    optional_names,
    puf_name,
    statistics,
)
from userfair.opt_in import _variant_kernels as kern
from userfair.similarity import registry
from userfair.similarity.pairwise import BLOCK_SIZE, min_max
from userfair.streamed import puf_items

#: Entries of the largest (rows, m) similarity block the streamed route holds (256 MiB).
BLOCK_ENTRIES = 1 << 25


def chosen(inputs, names: Sequence[str] = ()) -> tuple[str, ...]:
    """The registry names of the similarities of a result: ``names`` (``rcos``, ``vec``,
    ``genre``, ...) and, with grades, ``cos``, ``jacc`` and ``rcos``; registry order."""
    wanted = {registry.entry(name).name for name in names}
    if inputs.grades is not None:
        wanted |= {"cos", "jacc", "rcos"}
    return tuple(name for name in registry.REGISTRY if name in wanted)


def names_of(inputs, names: Sequence[str] = ()) -> tuple[str, ...]:
    """The opt-in measure names :func:`evaluate_variants` returns for these arguments."""
    labels = [registry.REGISTRY[name].label for name in chosen(inputs, names)]
    return optional_names(inputs.grades is not None, labels)


def per_user_scores(inputs, k: int) -> dict[str, np.ndarray]:
    """(m,) P, NDCG and, with grades, gNDCG of every user."""
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    out = {"P": scores["P"], "NDCG": scores["NDCG"]}
    if inputs.grades is not None:
        out["gNDCG"] = graded.gndcg(inputs.topk, inputs.grades, k)
    return out


def stacked(block, m: int, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """The (m, m) raw similarity of a block function, its rows stacked, diagonal 0."""
    out = np.zeros((m, m), dtype=np.float64)
    for start, stop in blocks(m, block_size):
        rows = block(start, stop)
        out[start:stop] = rows.toarray() if sp.issparse(rows) else rows
    np.fill_diagonal(out, 0.0)
    return out


def dense_similarity(block, m: int, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """The (m, m) min-max normalised similarity of a block function, diagonal 0."""
    return min_max(stacked(block, m, block_size), block_size, inplace=True)


def spread_sums(scores: np.ndarray) -> np.ndarray:
    """(q,) B_S = sum over pairs u < v of |S_u - S_v| for each row S of ``scores``."""
    ordered = np.sort(scores, axis=1)
    m = ordered.shape[1]
    weights = 2.0 * np.arange(1, m + 1) - m - 1
    return (ordered * weights).sum(axis=1)


@dataclass(frozen=True)
class RowSums:
    """What one row range ``start:stop`` of the streamed route gives for PUF with the
    scores (q, m) and one similarity: ``sums`` (q,) of s |S_u - S_v| over its pairs u < v
    (s raw), the raw minimum ``lo`` and maximum ``hi`` over the pairs it stores (+-inf when
    none) and their number ``visited``; ``seconds``: the pass's wall time. Ranges that
    tile 0:m :func:`combine` into the whole; :func:`finish` turns the whole into PUF."""

    start: int
    stop: int
    sums: tuple[float, ...]
    lo: float
    hi: float
    visited: int
    seconds: float = 0.0

    def record(self) -> dict:
        """A JSON-ready dict (+-inf as strings; :meth:`of_record` reads it back)."""
        return {
            "start": self.start, "stop": self.stop, "sums": list(self.sums),
            "lo": repr(self.lo), "hi": repr(self.hi), "visited": self.visited,
            "seconds": self.seconds,
        }  # fmt: skip

    @classmethod
    def of_record(cls, record: dict) -> RowSums:
        return cls(
            int(record["start"]), int(record["stop"]), tuple(float(x) for x in record["sums"]),
            float(record["lo"]), float(record["hi"]), int(record["visited"]),
            float(record.get("seconds", 0.0)),
        )  # fmt: skip


def combine(parts: Sequence[RowSums]) -> RowSums:
    """The :class:`RowSums` of consecutive row ranges together (in row order: the sums are
    added in that order); ValueError when they do not follow one another."""
    parts = sorted(parts, key=lambda part: (part.start, part.stop))  # empty ones first
    if not parts:
        raise ValueError("no row range to combine")
    for before, after in zip(parts, parts[1:]):
        if before.stop != after.start or len(before.sums) != len(after.sums):
            raise ValueError(
                f"row ranges {before.start}:{before.stop} and {after.start}:{after.stop} "
                "do not follow one another (or hold other scores)"
            )
    sums = np.zeros(len(parts[0].sums))
    for part in parts:
        sums += np.asarray(part.sums)
    return RowSums(
        parts[0].start, parts[-1].stop, tuple(float(x) for x in sums),
        float(min(part.lo for part in parts)), float(max(part.hi for part in parts)),
        sum(part.visited for part in parts), sum(part.seconds for part in parts),
    )  # fmt: skip


def _rows_per_block(m: int, block_size: int) -> int:
    return max(1, min(block_size, BLOCK_ENTRIES // max(m, 1)))


def row_sums(
    block,
    scores: np.ndarray,
    start: int = 0,
    stop: int | None = None,
    block_size: int = BLOCK_SIZE,
) -> RowSums:
    """:class:`RowSums` of the users ``start:stop`` (default all) with the similarity of
    ``block`` (a block function of ``userfair.similarity.registry``) and the scores (q, m).

    A cosine of sparse rows (``registry.CosineBlocks``: Cos, RCos) is folded by one
    compiled kernel that walks the items each user shares with later users (no block is
    built), a cosine of dense rows (Vec, Genre) by one that makes each pair's dot product
    in cache-sized tiles; any other block function goes through its blocks."""
    q, m = scores.shape
    stop = m if stop is None else stop
    if not 0 <= start <= stop <= m:
        raise ValueError(f"row range {start}:{stop} outside 0:{m}")
    clock = time.perf_counter()
    _kernels.use_job_cores()
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    rows_per_block = _rows_per_block(m, block_size)
    sums, lo, hi, visited = np.zeros(q), math.inf, -math.inf, 0
    cosine = isinstance(block, registry.CosineBlocks)
    if cosine and block.sparse:
        unit, columns = block.unit, block.columns
        arguments = (
            unit.indptr.astype(np.int64), unit.indices.astype(np.int64), unit.data,
            columns.indptr.astype(np.int64), columns.indices.astype(np.int64), columns.data,
        )  # fmt: skip
    threads = numba.get_num_threads()
    for a, b in blocks(stop - start, rows_per_block):
        first, last = start + a, start + b
        if cosine and block.sparse:
            out = kern.sparse_cosine_rows(*arguments, first, last, scores, threads)
        elif cosine:
            out = kern.dense_cosine_rows(block.unit, first, last, scores, threads)
        else:
            rows = block(first, last)
            if sp.issparse(rows):
                rows = sp.csr_matrix(rows)
                out = kern.sparse_rows(
                    rows.indptr.astype(np.int64),
                    rows.indices.astype(np.int64),
                    np.asarray(rows.data, dtype=np.float64),
                    first,
                    scores,
                )
            else:
                rows = np.ascontiguousarray(rows, dtype=np.float64)
                out = kern.dense_rows(rows, first, scores)
        sums += out[:, :q].sum(axis=0)
        lo, hi = min(lo, out[:, q].min()), max(hi, out[:, q + 1].max())
        visited += int(out[:, q + 2].sum())
    seconds = time.perf_counter() - clock
    return RowSums(
        start, stop, tuple(float(x) for x in sums), float(lo), float(hi), visited, seconds
    )


def finish(whole: RowSums, scores: np.ndarray) -> np.ndarray:
    """(q,) PUF of each row of ``scores`` (q, m) from the :class:`RowSums` of all rows
    0:m; NaN for m < 2."""
    q, m = scores.shape
    if m < 2:
        return np.full(q, math.nan)
    if (whole.start, whole.stop) != (0, m) or len(whole.sums) != q:
        raise ValueError(f"the sums cover rows {whole.start}:{whole.stop} of 0:{m}")
    pairs = m * (m - 1) // 2
    lo, hi = whole.lo, whole.hi
    if whole.visited < pairs:  # the pairs no block stores have s = 0
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        return np.zeros(q)
    sums = np.asarray(whole.sums)
    return (sums - lo * spread_sums(np.asarray(scores, dtype=np.float64))) / (hi - lo) / pairs


def streamed_puf(block, scores: np.ndarray, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """(q,) PUF of each row of ``scores`` (q, m) with the similarity of ``block``, in row
    blocks of at most :data:`BLOCK_ENTRIES` entries; NaN for m < 2."""
    q, m = scores.shape
    if m < 2:
        return np.full(q, math.nan)
    return finish(row_sums(block, scores, 0, m, block_size), scores)


def _scored(inputs, names: Sequence[str], wanted=None) -> list[tuple[str, str, list[str]]]:
    """(similarity name, label, scores) of each similarity the opt-in measures ``wanted``
    (default: all of (inputs, names)) read."""
    wanted = names_of(inputs, names) if wanted is None else wanted
    out = []
    for name in chosen(inputs, names):
        label = registry.REGISTRY[name].label
        scores = [s for s in PUF_SCORES if puf_name(s, label) in wanted]
        if scores:
            out.append((name, label, scores))
    return out


def by_items(block) -> bool:
    """Whether :func:`evaluate_variants`' own streamed pass makes the PUF of ``block``'s
    similarity by the items (``userfair.streamed.puf_items.cosine_puf``, no pair visited
    for its sums): a cosine of sparse rows (cos, rcos), whose extremes need no pass over
    every pair (a count certifies the 0, a pruned search finds the largest). The cosine of
    dense rows (vec, genre) is not: every pair can be the smallest, so its extremes need a
    pass over all pairs, and the row sums' blocks make that pass and the sums together,
    faster (20,000 users: 2.2 s against 3.9 s by the items at 32 dimensions;
    docs/performance.md#opt-in-by-the-items). A scattered run (the workflow's measure_sums
    parts) sums every similarity over pairs in its parts."""
    return isinstance(block, registry.CosineBlocks) and sp.issparse(block.unit)


def range_sums(
    inputs,
    k: int = 10,
    names: Sequence[str] = (),
    vectors: np.ndarray | None = None,
    start: int = 0,
    stop: int | None = None,
    block_size: int = BLOCK_SIZE,
) -> dict[str, RowSums]:
    """The streamed route's :class:`RowSums` of the users ``start:stop`` for every
    similarity the opt-in measures of (inputs, names) read, keyed by its registry name,
    its scores in ``PUF_SCORES`` order: one part of a scattered pass, gathered with
    :func:`combine` and given to :func:`evaluate_variants` as ``sums``."""
    data = registry.SimilarityData.of(inputs, vectors)
    scores = per_user_scores(inputs, k)
    out = {}
    for name, _, chosen_scores in _scored(inputs, names):
        block = registry.block_function(name, data)
        stacked = np.stack([scores[s] for s in chosen_scores])
        out[name] = row_sums(block, stacked, start, stop, block_size)
    return out


def evaluate_variants(
    inputs,
    k: int = 10,
    names: Sequence[str] = (),
    vectors: np.ndarray | None = None,
    route: str = "dense",
    block_size: int = BLOCK_SIZE,
    sums: dict[str, RowSums] | None = None,
    only: Sequence[str] | None = None,
    device=None,
) -> tuple[dict[str, float], dict[str, float]]:
    """(values, seconds) of the opt-in measures :func:`names_of` (inputs, names) lists, on
    ``route`` (``dense`` or ``stream``). ``vectors``: (m, d) user vectors in canonical
    order (``registry.read_user_vectors``), needed by ``vec``. ``seconds``: each
    measure's time, plus ``similarity-NAME`` per similarity (on the streamed route the
    pass over its blocks, credited to its PUF measures as well). ``sums``: on the streamed
    route, the gathered :func:`range_sums` of every row (a scattered pass) instead of a
    pass here; their seconds are the parts' summed. ``only``: compute only these of the
    names (e.g. the metrics a RecBole config asks for); ValueError for one not among them.
    Without ``sums``, the streamed route makes the PUF of a cosine of sparse rows by the
    items (:func:`by_items`) on ``device``: None (the compiled kernels) or a
    ``torch.device`` (``userfair.streamed.puf_items.cosine_puf``'s)."""
    if route not in ("dense", "stream"):
        raise ValueError(f"route must be 'dense' or 'stream', got {route!r}")
    wanted = names_of(inputs, names)
    if only is not None:
        unknown = [name for name in only if name not in wanted]
        if unknown:
            raise ValueError(f"{unknown} are not among the opt-in measures {list(wanted)}")
        wanted = tuple(name for name in wanted if name in only)
    data = registry.SimilarityData.of(inputs, vectors)
    m = len(inputs.users)
    values: dict[str, float] = {}
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    scores = per_user_scores(inputs, k)
    if inputs.grades is not None and set(EFF_GRADED + FAIR_GRADED) & set(wanted):
        seconds["gNDCG"] = time.perf_counter() - clock
        values["gNDCG"] = float(scores["gNDCG"].mean()) if m else math.nan
        for measure in statistics(("gNDCG",), route):  # SD, Gini: their declarations
            clock = time.perf_counter()
            values[measure.name] = spread.of(measure).value(scores["gNDCG"])
            seconds[measure.name] = time.perf_counter() - clock
    if sums is not None and route != "stream":
        raise ValueError("gathered sums are the streamed route's: give route='stream'")
    for name, label, wanted_scores in _scored(inputs, names, wanted):
        clock = time.perf_counter()
        if route == "stream":
            stacked = np.stack([scores[s] for s in wanted_scores])
            if sums is None:
                block = registry.block_function(name, data)
                if by_items(block):  # no pair sums
                    found, _ = puf_items.cosine_puf(block, stacked, device=device)
                    elapsed = time.perf_counter() - clock
                    seconds[f"similarity-{name}"] = elapsed
                    for score, value in zip(wanted_scores, found):
                        values[puf_name(score, label)] = float(value)
                        seconds[puf_name(score, label)] = elapsed
                    continue
                whole = row_sums(block, stacked, 0, m, block_size)
            elif name not in sums:
                raise ValueError(f"the gathered sums lack the similarity {name!r}")
            else:
                whole = sums[name]
            found = finish(whole, stacked)
            elapsed = time.perf_counter() - clock + (0.0 if sums is None else whole.seconds)
            seconds[f"similarity-{name}"] = elapsed
            for score, value in zip(wanted_scores, found):
                values[puf_name(score, label)] = float(value)
                seconds[puf_name(score, label)] = elapsed
            continue
        block = registry.block_function(name, data)
        sim = dense_similarity(block, m, block_size)
        seconds[f"similarity-{name}"] = time.perf_counter() - clock
        for score in wanted_scores:
            clock = time.perf_counter()
            values[puf_name(score, label)] = fairness.puf(scores[score], sim, block_size, "cpu")
            seconds[puf_name(score, label)] = time.perf_counter() - clock
        del sim
    return {key: values[key] for key in wanted}, seconds
