"""The UF kind on every route (docs/method.md#uf): the UF construction over a raw user
similarity s, whichever similarity a declaration names.

The construction: the similar pairs are the unordered pairs u < v with s(u, v) >= mean +
SD (ddof = 0) of s over all pairs; each adds s(u, v) k^2 d_L(u, v), with k^2 d_L(u, v) =
k^2 - sum_{i in L_u, j in L_v} cos(x_i, x_j) over the item columns x of the binarised
train (``userfair.formulas.fairness.uf``); the value is log(T / k^2) / log(m (m - 1) / 2)
of that sum T, NaN with fewer than two pairs or T = 0.

UF's own declaration (the raw Jaccard, mixed with the genre similarity by gamma) keeps its
fused kernels on every route; every other declaration of the kind (``kind="uf"``, not
``fused``: a variant declared in ``userfair.measures.uf``) is served here, generically, from
the row blocks of its raw similarity (``userfair.similarity.registry``, one (rows, m) block
at a time, never m x m): its value (dense and streamed routes, RecBole; on the streamed
route over Cos or Jacc in compiled row loops instead, :func:`compiled_value`), its per-user
shares (the decomposition) and, on a given (m, m) raw matrix, its value in every bootstrap
resample (:func:`resampled`, which the fused bootstrap of UF shares: its thresholds come
from its own pair sums). With s >= 0 the pairs a sparse block does not store (sharing no
item) add s = 0 to T, so only the stored ones are visited; a dense block visits every pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from userfair.bootstrap import _bootstrap_kernels
from userfair.engine import _backend
from userfair.engine.pair_blocks import block_rows, pairs_of
from userfair.formulas import _kernels, fairness
from userfair.formulas.effectiveness import validate_lists
from userfair.similarity.pairwise import BLOCK_SIZE
from userfair.streamed import _plugin_kernels, _uf_kernels, stream_rows, streaming


@dataclass(frozen=True)
class ListCosines:
    """What d_L reads: the lists re-indexed into the r recommended items (``local``, (m,
    k)), the (m, r) list matrix and the (r, r) cosines of the recommended items' columns
    (dense when they fit in ``fairness.UF_DENSE_ITEMS`` entries, else CSR)."""

    local: np.ndarray
    lists: sp.csr_matrix
    item_cos: np.ndarray | sp.csr_matrix
    k: int

    @classmethod
    def of(cls, topk: np.ndarray, train: sp.spmatrix, m: int, k: int) -> ListCosines:
        topk = validate_lists(topk, k, (m, train.shape[1]))
        items, local = fairness.recommended_items(topk)
        item_cos = fairness.recommended_item_cosines(train, items)
        return cls(local, fairness.lists_matrix(local, len(items)), item_cos, k)

    @property
    def r(self) -> int:
        return self.lists.shape[1]

    def rows(self, m: int, block_size: int, entries: int = fairness.UF_BLOCK_ENTRIES) -> int:
        """Rows of a block that keeps (rows, max(r, m)) within ``entries``."""
        return max(1, min(block_size, entries // max(self.r, m)))

    def distances(self, u: np.ndarray, v: np.ndarray, start: int, stop: int) -> np.ndarray:
        """k^2 d_L(u, v) of the pairs (u, v), every u in start:stop."""
        if u.size == 0:
            return np.zeros(0)
        to_items = self.lists[start:stop] @ self.item_cos  # (b, r): sum_{i in L_u} cos(i, .)
        to_items = to_items.toarray() if sp.issparse(to_items) else np.asarray(to_items)
        positions = self.local[v] + ((u - start) * self.r)[:, None]  # to_items[u, j], j in L_v
        return self.k * self.k - np.take(to_items.reshape(-1), positions).sum(axis=1)


def similar_terms(sim_rows: np.ndarray, start: int, threshold: float, cosines: ListCosines):
    """(u, v, s, s k^2 d_L) of the pairs u < v with s >= ``threshold`` among the rows
    start: of a dense (b, m) ``sim_rows`` (columns v > u)."""
    stop = start + sim_rows.shape[0]
    upper = sim_rows[:, start:]  # columns v >= start: each pair once, from u < v
    u, v = np.nonzero(upper >= threshold)
    keep = u < v
    u, v = u[keep], v[keep]
    s = upper[u, v]
    u, v = u + start, v + start
    return u, v, s, s * cosines.distances(u, v, start, stop)


def threshold(block, m: int, block_size: int = BLOCK_SIZE) -> float:
    """mean + SD (ddof = 0) of the raw similarity over the m (m - 1) / 2 unordered pairs,
    from row blocks (a pair a sparse block does not store counts as 0); shifted by the
    first block's mean so that the variance loses no precision. inf with fewer than 2
    pairs (no pair is similar)."""
    pairs = m * (m - 1) // 2
    if pairs < 2:
        return math.inf
    step = block_rows(m, block_size)
    shift, deviation, squares, stored = None, [], [], 0
    for start in range(0, m, step):
        _, _, values = pairs_of(block(start, min(m, start + step)), start, m)
        if shift is None:
            shift = float(values.mean()) if values.size else 0.0
        values = values - shift
        deviation.append(float(values.sum()))
        squares.append(float((values * values).sum()))
        stored += values.size
    unstored = pairs - stored  # each 0 - shift
    offset = (math.fsum(deviation) - unstored * shift) / pairs
    second = (math.fsum(squares) + unstored * shift * shift) / pairs
    return shift + offset + math.sqrt(max(second - offset * offset, 0.0))


def _terms(block, m: int, cosines: ListCosines, level: float, block_size: int):
    """(u, v, s k^2 d_L) of the similar pairs (s >= ``level``) of each row block."""
    step = min(block_rows(m, block_size), cosines.rows(m, block_size))
    for start in range(0, m, step):
        stop = min(m, start + step)
        u, v, s = pairs_of(block(start, stop), start, m)
        keep = s >= level
        u, v, s = u[keep], v[keep], s[keep]
        yield u, v, s * cosines.distances(u, v, start, stop)


def value(block, topk, train, k: int, block_size: int = BLOCK_SIZE) -> float:
    """The UF construction over the raw similarity of the row ``block`` function of the
    m evaluated users (``topk``: their lists; ``train``: every user's train rows)."""
    m = len(topk)
    n_pairs = m * (m - 1) // 2
    if n_pairs < 2:
        return math.nan
    cosines = ListCosines.of(topk, train, m, k)
    level = threshold(block, m, block_size)
    total = math.fsum(float(t.sum()) for _, _, t in _terms(block, m, cosines, level, block_size))
    return fairness.uf_value(total / (k * k), n_pairs)


def shares(block, topk, train, k: int, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """Each user's share of :func:`value`, as UF's (docs/method.md#who): UF_u = UF t_u / T
    with t_u half of each of u's similar pairs' terms (sum_u t_u = T); NaN where UF is."""
    m = len(topk)
    if m * (m - 1) // 2 < 2:
        return np.full(m, math.nan)
    cosines = ListCosines.of(topk, train, m, k)
    level = threshold(block, m, block_size)
    half = np.zeros(m)
    for u, v, terms in _terms(block, m, cosines, level, block_size):
        terms = terms / (k * k)
        half += 0.5 * np.bincount(u, weights=terms, minlength=m)
        half += 0.5 * np.bincount(v, weights=terms, minlength=m)
    total = half.sum()
    if total <= 0:
        return np.full(m, math.nan)
    return math.log(total) / math.log(m * (m - 1) // 2) * half / total


def compiled_value(label: str, inputs, k: int) -> float | None:
    """The UF construction over the raw cosine or Jaccard (``label``, one of
    ``userfair.streamed._plugin_kernels.KINDS``) of ``inputs``' evaluated users in the
    compiled row loops of the streamed route (``userfair.streamed._uf_kernels``: the
    moments, then the similar pairs with their list distances, the fused passes' visits);
    None for another similarity (the row blocks serve it)."""
    kind = _plugin_kernels.KINDS.get(label)
    if kind is None:
        return None
    m = len(inputs.users)
    n_pairs = m * (m - 1) // 2
    if n_pairs < 2:
        return math.nan
    topk = validate_lists(inputs.topk, k, (m, inputs.train.shape[1]))
    threads = stream_rows.numba_threads()
    rows = stream_rows.prepare_rows(inputs.train_of_evaluated(), 1.0, None).pair_arguments()
    count, mean, m2 = _uf_kernels.merged(_uf_kernels.moment_rows(*rows, kind, threads))
    level = mean + math.sqrt(max(m2, 0.0) / count)
    items, local = fairness.recommended_items(topk)
    cosines = streaming.item_cosines_for(inputs, items, threads)
    sums = _uf_kernels.similar_rows(
        *rows, kind, level, np.ascontiguousarray(local), k, *cosines, len(items), threads
    )
    return fairness.uf_value(math.fsum(sums[:, 0]) / (k * k), n_pairs)


# --- the bootstrap: a resample's own threshold, on the (m, m) raw similarity ---------------


def candidates(topk, train, sim: np.ndarray, lowest: float, k: int, block_size: int = BLOCK_SIZE):
    """The pairs u < v with s >= ``lowest`` of the (m, m) raw ``sim``, sorted by s descending
    (stable): arrays (u, v, s, s k^2 d_L(u, v))."""
    m = sim.shape[0]
    cosines = ListCosines.of(topk, train, m, k)
    parts = []
    for start, stop in _backend.blocks(m, cosines.rows(m, block_size)):
        found = similar_terms(sim[start:stop], start, lowest, cosines)
        if found[0].size:
            parts.append(found)
    if not parts:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0), np.zeros(0)
    first, second, s, terms = (np.concatenate(x) for x in zip(*parts))
    order = np.argsort(-s, kind="stable")
    return first[order], second[order], s[order], terms[order]


def resampled_thresholds(sim: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) mean + SD of the raw ``sim`` over the pairs of distinct copies of distinct users
    of each resample of ``weights`` ((B, m) multiplicities), from the sums of (s - shift)
    and (s - shift)^2 with shift the full-data mean; NaN with fewer than 4 ordered pairs."""
    m = sim.shape[0]
    w = weights.astype(np.float64)
    ordered = w.sum(axis=1) ** 2 - (w * w).sum(axis=1)
    off = ~np.eye(m, dtype=bool)
    shift = float(sim[off].mean()) if m > 1 else 0.0
    centred = np.where(off, sim - shift, 0.0)
    first = ((w @ centred) * w).sum(axis=1)
    second = ((w @ (centred * centred)) * w).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = first / ordered
        variance = np.maximum(second / ordered - offset**2, 0.0)
        return np.where(ordered >= 4, shift + offset + np.sqrt(variance), np.nan)


def resampled(
    topk, train, sim: np.ndarray, thresholds: np.ndarray, weights: np.ndarray, k: int,
    block_size: int = BLOCK_SIZE,
) -> np.ndarray:  # fmt: skip
    """(B,) log(sum over the resampled pairs above each resample's ``thresholds`` of
    w_u w_v s k^2 d_L / k^2) / log(P_w) for the (m, m) raw ``sim``; NaN as in
    docs/method.md#uf. One pass gathers the pairs above the lowest threshold, then each
    resample's sum is a prefix of them (compiled)."""
    valid = np.isfinite(thresholds)
    result = np.full(weights.shape[0], np.nan)
    if not valid.any():
        return result
    first, second, s, terms = candidates(
        topk, train, sim, float(thresholds[valid].min()), k, block_size
    )
    _kernels.use_job_cores()
    totals = _bootstrap_kernels.threshold_prefix_sums(
        first, second, s, terms, weights.astype(np.int32), thresholds
    ) / (k * k)
    w = weights.astype(np.float64)
    pairs = (w.sum(axis=1) ** 2 - (w * w).sum(axis=1)) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = valid & (totals > 0) & (pairs >= 2)
        result[ok] = np.log(totals[ok]) / np.log(pairs[ok])
    return result
