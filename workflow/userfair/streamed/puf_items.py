"""PUF with a cosine similarity without visiting pairs (docs/method.md#cosine-puf-by-items).

A cosine (Cos, RCos, Vec, Genre) is a sum over the columns of the unit rows ``a``
(``a_ui = x_ui / |x_u|``): cos(u, v) = sum_i a_ui a_vi. So PUF's sum over the pairs is a sum
over the columns:

    A_S = sum_{u < v} cos(u, v) |S_u - S_v| = sum_i sum_{u < v in column i} a_ui a_vi |S_u - S_v|

and inside one column, its users in ascending score order x_1 <= ... <= x_n with weights w,
each gap x_{p+1} - x_p is crossed by exactly the pairs with one user at or below it and one
above, so

    sum_{p < q} w_p w_q (x_q - x_p) = sum_p (x_{p+1} - x_p) W_{<=p} W_{>p}

(W: sums of the weights below and above the gap; no cancellation with weights >= 0, ties
add exact zeros). One ordering of the users by score per score, then one linear walk per
column: O(nnz + m log m) time and O(nnz) memory, nnz the stored entries of the rows.

PUF min-max normalises: PUF = (A_S - lo B_S) / ((hi - lo) m (m - 1) / 2), B_S the same sum
with every weight 1 (:func:`spread`). :func:`extremes` finds lo and hi exactly and says how:

* lo = 0 when some pair shares no column (rows >= 0, as Cos and RCos): certified without a
  pair pass by a user with an empty row, by the item pair count (sum_i n_i (n_i - 1) / 2
  below m (m - 1) / 2), by a user whose items' other users number fewer than m - 1, or by
  a user found (exactly, within a budget of item visits) to share nothing with some other;
* hi of binary rows (Cos): the prefix-filtered search of :func:`_binary_max`, thresholds
  from 1 (duplicate histories) down, each round an exact search for the pairs at or above
  its threshold;
* otherwise (negative entries, graded or dense rows, or no certificate) the pair pass of
  :func:`pair_extremes` over the row blocks, as the streamed pair route makes it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from userfair.engine._backend import blocks
from userfair.formulas import _kernels

#: The thresholds of the binary maximum's search rounds, from duplicates down.
MAX_ROUNDS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)
#: Users after each user, in the order of its rarest items, whose cosine seeds the search.
NEIGHBOURS = 4
#: Item visits the lo certificate may spend looking for a user who shares nothing with
#: someone, in units of the rows' stored entries.
LO_BUDGET = 4
#: Entries of the largest (rows, m) block :func:`pair_extremes` holds (256 MiB).
BLOCK_ENTRIES = 1 << 25


# --- A_S and B_S -------------------------------------------------------------------------


@numba.njit(cache=True)
def _fill_columns(indptr, indices, data, order, x, col_ptr, out_x, out_w):
    """The entries of each column in ascending order of the users' ``order`` (the users
    sorted by score): their scores and weights, at col_ptr[i]:col_ptr[i + 1]."""
    nxt = col_ptr[:-1].copy()
    for r in range(order.shape[0]):
        u = order[r]
        for p in range(indptr[u], indptr[u + 1]):
            i = indices[p]
            out_x[nxt[i]] = x[u]
            out_w[nxt[i]] = data[p]
            nxt[i] += 1


@numba.njit(cache=True, inline="always")
def _gaps(xs, ws, n, above):
    """sum_p (x_{p+1} - x_p) W_{<=p} W_{>p} of n entries in ascending x."""
    acc = 0.0
    for p in range(n - 1, -1, -1):
        above[p] = acc
        acc += ws[p]
    total, below = 0.0, 0.0
    for p in range(n - 1):
        below += ws[p]
        gap = xs[p + 1] - xs[p]
        if gap != 0.0:
            total += gap * below * above[p]
    return total


@numba.njit(cache=True, parallel=True)
def _column_sums(col_ptr, xs, ws, threads):
    """(n,) the gap sum of every column (columns dealt to threads round-robin)."""
    n = col_ptr.shape[0] - 1
    out = np.zeros(n)
    longest = 0
    for i in range(n):
        longest = max(longest, col_ptr[i + 1] - col_ptr[i])
    for t in numba.prange(threads):
        above = np.empty(longest)
        for i in range(t, n, threads):
            a, b = col_ptr[i], col_ptr[i + 1]
            out[i] = _gaps(xs[a:b], ws[a:b], b - a, above)
    return out


@numba.njit(cache=True, parallel=True)
def _dense_column_sums(unit, order, x_sorted, threads):
    """(d,) the gap sum of every column of dense (m, d) ``unit``, users in ``order``."""
    m, d = unit.shape
    out = np.zeros(d)
    for t in numba.prange(threads):
        above, ws = np.empty(m), np.empty(m)
        for c in range(t, d, threads):
            for r in range(m):
                ws[r] = unit[order[r], c]
            out[c] = _gaps(x_sorted, ws, m, above)
    return out


def weighted_spread(unit, scores: np.ndarray, device=None) -> np.ndarray:
    """(q,) A_S = sum over the pairs u < v of (unit_u . unit_v) |S_u - S_v| for each row S of
    ``scores`` (q, m); ``unit``: the (m, n) unit rows, CSR or a dense array. ``device``: None
    (the compiled kernels) or a ``torch.device`` (``_streaming_torch.weighted_spread``)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if device is not None:
        from userfair.streamed import _streaming_torch

        return _streaming_torch.weighted_spread(unit, scores, device)
    _kernels.use_job_cores()
    threads = numba.get_num_threads()
    out = np.zeros(scores.shape[0])
    if sp.issparse(unit):
        unit = sp.csr_matrix(unit)
        indptr, indices = unit.indptr, unit.indices
        data = np.asarray(unit.data, dtype=np.float64)
        counts = np.bincount(indices, minlength=unit.shape[1])
        col_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
        xs, ws = np.empty(len(indices)), np.empty(len(indices))
        for j, x in enumerate(scores):
            order = np.argsort(x, kind="stable")
            _fill_columns(indptr, indices, data, order, x, col_ptr, xs, ws)
            out[j] = _kernels.in_order(_column_sums(col_ptr, xs, ws, threads))
        return out
    unit = np.ascontiguousarray(unit, dtype=np.float64)
    for j, x in enumerate(scores):
        order = np.argsort(x, kind="stable")
        sums = _dense_column_sums(unit, order, np.ascontiguousarray(x[order]), threads)
        out[j] = _kernels.in_order(sums)
    return out


def spread(scores: np.ndarray) -> np.ndarray:
    """(q,) B_S = sum over the pairs u < v of |S_u - S_v| for each row S of ``scores``
    (q, m), as sum over the gaps of the sorted scores of gap * p * (m - p)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    ordered = np.sort(scores, axis=1)
    m = ordered.shape[1]
    below = np.arange(1, m, dtype=np.float64)
    return (np.diff(ordered, axis=1) * (below * (m - below))).sum(axis=1)


# --- the extremes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Extremes:
    """The raw minimum ``lo`` and maximum ``hi`` over the unordered pairs, how each was
    found (``lo_by``, ``hi_by``) and the work it took: ``visits`` (item visits of the lo
    certificate's exact counts), ``candidates`` (pairs whose overlap the max search
    computed; with ``pair_pass``, every pair a block stores), ``seconds``."""

    lo: float
    hi: float
    lo_by: str
    hi_by: str
    visits: int = 0
    candidates: int = 0
    seconds: float = 0.0


@numba.njit(cache=True)
def _lonely(row_ptr, row_items, col_ptr, col_users, candidates, m, budget):
    """The first user of ``candidates`` who shares no item with some other user, that
    other user and the item visits spent; (-1, -1, visits) when none is found before
    ``budget`` visits."""
    mark = np.full(m, -1, np.int64)
    visits = 0
    for c in range(candidates.shape[0]):
        u = candidates[c]
        mark[u] = u
        count = 1
        for p in range(row_ptr[u], row_ptr[u + 1]):
            i = row_items[p]
            visits += col_ptr[i + 1] - col_ptr[i]
            for q in range(col_ptr[i], col_ptr[i + 1]):
                v = col_users[q]
                if mark[v] != u:
                    mark[v] = u
                    count += 1
        if count < m:
            for v in range(m):
                if mark[v] != u:
                    return u, v, visits
        if visits > budget:
            break
    return -1, -1, visits


def zero_certificate(pattern: sp.csr_matrix) -> tuple[str | None, int]:
    """(how, item visits): why some pair of the rows of ``pattern`` shares no column, or
    None when no certificate was found (every pair may share one)."""
    m = pattern.shape[0]
    degrees = np.diff(pattern.indptr)
    if m < 2:
        return None, 0
    if (degrees == 0).any():
        return "a user with no item", 0
    counts = np.bincount(pattern.indices, minlength=pattern.shape[1]).astype(np.int64)
    if int((counts * (counts - 1) // 2).sum()) < m * (m - 1) // 2:
        return "item pair count below the pairs", 0
    others = np.add.reduceat(counts[pattern.indices] - 1, pattern.indptr[:-1])  # no row empty
    if (others < m - 1).any():
        return "a user's items have fewer other users than m - 1", 0
    columns = pattern.tocsc()
    as64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    u, v, visits = _lonely(
        as64(pattern.indptr), as64(pattern.indices), as64(columns.indptr),
        as64(columns.indices), as64(np.argsort(others, kind="stable")), m,
        LO_BUDGET * pattern.nnz,
    )  # fmt: skip
    if u < 0:
        return None, int(visits)
    return f"users {u} and {v} share no item (exact count)", int(visits)


@numba.njit(cache=True, inline="always")
def _overlap(items, a0, a1, b0, b1):
    count = 0
    while a0 < a1 and b0 < b1:
        if items[a0] == items[b0]:
            count += 1
            a0 += 1
            b0 += 1
        elif items[a0] < items[b0]:
            a0 += 1
        else:
            b0 += 1
    return count


@numba.njit(cache=True, parallel=True)
def _best_above(row_ptr, row_items, pre_ptr, pre_users, pre_pos, prefix, degrees, t, threads):
    """The largest cosine inter / sqrt(d_u d_v) among the pairs that may reach ``t``, -1
    when none, and the number of pairs whose overlap was counted.

    Users are numbered in ascending degree, so each pair is met from its later user u, and
    a prefix list (ascending users, with the item's position in each row) is read only from
    the first user of degree >= t^2 d_u up to u. The first item of u's prefix met in v's
    list is their first common item (rows share one item order), at positions p and q
    (from 0): the overlap is at most 1 + min(d_u - p - 1, d_v - q - 1) (the positional
    filter), and counting starts after it."""
    m = degrees.shape[0]
    best = np.full(threads, -1.0)
    found = np.zeros(threads, np.int64)
    for th in numba.prange(threads):
        mark = np.full(m, -1, np.int32)
        for u in range(th, m, threads):
            if best[th] >= 1.0:  # no cosine exceeds 1
                break
            du = degrees[u]
            tt = max(t, best[th])  # a pair below the best found cannot be the maximum
            low = tt * tt * du * (1.0 - 1e-9)
            for p in range(prefix[u]):
                i = row_items[row_ptr[u] + p]
                a, b = pre_ptr[i], pre_ptr[i + 1]
                while a < b:  # the first user of the list with degree >= low
                    middle = (a + b) // 2
                    if degrees[pre_users[middle]] < low:
                        a = middle + 1
                    else:
                        b = middle
                for q in range(a, pre_ptr[i + 1]):
                    v = pre_users[q]
                    if v >= u:
                        break
                    if mark[v] == u:
                        continue
                    mark[v] = u
                    dv = degrees[v]
                    at = pre_pos[q]
                    bound = 1.0 + min(du - p - 1.0, dv - at - 1.0)
                    if bound < tt * math.sqrt(du * dv) * (1.0 - 1e-9):
                        continue
                    found[th] += 1
                    inter = 1 + _overlap(
                        row_items, row_ptr[u] + p + 1, row_ptr[u + 1],
                        row_ptr[v] + at + 1, row_ptr[v + 1],
                    )  # fmt: skip
                    best[th] = max(best[th], inter / math.sqrt(du * dv))
    return best.max(), found.sum()


@numba.njit(cache=True)
def _neighbour_seed_kernel(row_ptr, row_items, degrees, order, reach):
    best, tried = 0.0, 0
    for r in range(order.shape[0]):
        u = order[r]
        for s in range(r + 1, min(r + 1 + reach, order.shape[0])):
            v = order[s]
            tried += 1
            inter = _overlap(row_items, row_ptr[u], row_ptr[u + 1], row_ptr[v], row_ptr[v + 1])
            if inter > 0:
                best = max(best, inter / math.sqrt(degrees[u] * degrees[v]))
    return best, tried


def _neighbour_seed(row_ptr, row_items, degrees, reach) -> tuple[float, int]:
    """(a cosine some pair reaches, pairs tried): each user against the next ``reach`` users
    in the order of their rarest items (rows sorted by their first three ranked items):
    users who share their rarest items are close in it."""
    m = degrees.shape[0]
    keys = []
    for j in range(3):
        position = row_ptr[:-1] + j
        inside = position < row_ptr[1:]
        keys.append(np.where(inside, row_items[np.minimum(position, len(row_items) - 1)], -1))
    order = np.lexsort((degrees, *reversed(keys))).astype(np.int64)
    if m < 2 or len(row_items) == 0:
        return 0.0, 0
    return _neighbour_seed_kernel(row_ptr, row_items, degrees, order, reach)


def _binary_max(pattern: sp.csr_matrix) -> tuple[float, str, int]:
    """(hi, how, candidate pairs): the largest |H_u & H_v| / sqrt(|H_u| |H_v|) over the
    pairs of the binary rows ``pattern`` (m >= 2), 0 when no pair shares an item.

    A pair with cosine >= t has sizes within a factor t^2 of each other and overlap
    >= t sqrt(d_u d_v) >= t^2 d_u, so with the items of every row in one global order
    (rarest first) it shares an item of both rows' prefixes of d - ceil(t^2 d) + 1 items
    (the prefix filter of all-pairs similarity search). Each round with threshold t finds
    every pair at or above t; the first round that finds one has found the maximum. The
    first round (t = 1) looks for duplicate histories; the rounds after it stop at a cosine
    some pair reaches (:func:`_neighbour_seed`): that round finds the maximum if no earlier
    (cheaper: shorter prefixes, a tighter size filter) one did."""
    m, n = pattern.shape
    by_degree = np.argsort(np.diff(pattern.indptr), kind="stable").astype(np.int64)
    rarity = np.empty(n, np.int32)
    rarity[np.argsort(np.bincount(pattern.indices, minlength=n), kind="stable")] = np.arange(n)
    row_ptr, row_items = _ranked_rows(pattern.indptr, pattern.indices, by_degree, rarity)
    degrees = np.diff(row_ptr).astype(np.float64)
    _kernels.use_job_cores()
    threads = numba.get_num_threads()

    def search(t: float) -> tuple[float, int]:
        need = np.ceil(t * t * degrees - 1e-9).clip(1, None)
        prefix = np.where(degrees > 0, degrees - need + 1, 0).astype(np.int64)
        index = _prefix_index(row_ptr, row_items, prefix, n)
        best, found = _best_above(row_ptr, row_items, *index, prefix, degrees, float(t), threads)
        return float(best), int(found)

    best, candidates = search(1.0)  # duplicate histories: each row's rarest item
    if best >= 1.0:
        return best, "prefix-filtered search, round t = 1.0", candidates
    seed, tried = _neighbour_seed(row_ptr, row_items, degrees, NEIGHBOURS)
    candidates += int(tried)
    for t in sorted({*(t for t in MAX_ROUNDS if seed < t < 1.0), seed}, reverse=True):
        best, found = search(t)
        candidates += found
        if best >= t:
            return best, f"prefix-filtered search, round t = {t}", candidates
    return 0.0, "no pair shares an item", candidates


@numba.njit(cache=True)
def _ranked_rows(indptr, indices, by_degree, rarity):
    """The rows in the order ``by_degree``, each row's items renamed by ``rarity`` and
    sorted: (row_ptr int64, row_items int32)."""
    m = by_degree.shape[0]
    row_ptr = np.zeros(m + 1, np.int64)
    for r in range(m):
        u = by_degree[r]
        row_ptr[r + 1] = row_ptr[r] + indptr[u + 1] - indptr[u]
    row_items = np.empty(row_ptr[m], np.int32)
    for r in range(m):
        u = by_degree[r]
        a = row_ptr[r]
        for p in range(indptr[u], indptr[u + 1]):
            row_items[a + p - indptr[u]] = rarity[indices[p]]
        row_items[a : row_ptr[r + 1]] = np.sort(row_items[a : row_ptr[r + 1]])
    return row_ptr, row_items


@numba.njit(cache=True)
def _prefix_index(row_ptr, row_items, prefix, n):
    """Per item, the users (ascending) with it among their first ``prefix`` items, and its
    position in each one's row: (pre_ptr, pre_users, pre_pos)."""
    m = prefix.shape[0]
    pre_ptr = np.zeros(n + 1, np.int64)
    for u in range(m):
        for p in range(prefix[u]):
            pre_ptr[row_items[row_ptr[u] + p] + 1] += 1
    for i in range(n):
        pre_ptr[i + 1] += pre_ptr[i]
    fill = pre_ptr[:-1].copy()
    pre_users = np.empty(pre_ptr[n], np.int32)
    pre_pos = np.empty(pre_ptr[n], np.int32)
    for u in range(m):
        for p in range(prefix[u]):
            i = row_items[row_ptr[u] + p]
            pre_users[fill[i]] = u
            pre_pos[fill[i]] = p
            fill[i] += 1
    return pre_ptr, pre_users, pre_pos


def pair_extremes(block, m: int) -> tuple[float, float, int]:
    """(lo, hi, stored pairs) of the raw similarity of the block function ``block`` over
    the pairs u < v (a pair a sparse block does not store has s = 0): the pair pass."""
    lo, hi, stored = math.inf, -math.inf, 0
    for start, stop in blocks(m, max(1, BLOCK_ENTRIES // max(m, 1))):
        rows = block(start, stop)
        if sp.issparse(rows):
            rows = sp.csr_matrix(rows)
            u = np.repeat(np.arange(start, stop), np.diff(rows.indptr))
            values = rows.data[rows.indices > u]
        else:
            later = np.arange(m)[None, :] > np.arange(start, stop)[:, None]
            values = np.asarray(rows)[later]
        if values.size:
            lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
        stored += values.size
    if stored < m * (m - 1) // 2:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return lo, hi, stored


def extremes(block) -> Extremes:
    """The exact raw :class:`Extremes` of a ``userfair.similarity.registry.CosineBlocks`` over the
    unordered pairs of its rows (m >= 2)."""
    clock = time.perf_counter()
    unit = block.unit
    m = unit.shape[0]
    if m < 2:
        raise ValueError("the extremes need at least two users")
    lo = hi = None
    lo_by = hi_by = "pair pass"
    visits = candidates = 0
    if block.sparse:
        pattern = sp.csr_matrix(unit)
        if (pattern.data == 0).any():  # stored zeros (grade 0) join no pair's cosine
            pattern = pattern.copy()
            pattern.eliminate_zeros()
        if (pattern.data >= 0).all():
            how, visits = zero_certificate(pattern)
            if how is not None:
                lo, lo_by = 0.0, how
            degrees = np.diff(pattern.indptr)
            first = np.repeat(pattern.data[pattern.indptr[:-1][degrees > 0]], degrees[degrees > 0])
            if np.array_equal(pattern.data, first):  # each row's entries equal: binary rows
                hi, hi_by, candidates = _binary_max(pattern)
    if lo is None or hi is None:
        low, high, stored = pair_extremes(block, m)
        lo = low if lo is None else lo
        hi = high if hi is None else hi
        candidates += stored
    return Extremes(float(lo), float(hi), lo_by, hi_by, visits, candidates,
                    time.perf_counter() - clock)  # fmt: skip


# --- PUF ---------------------------------------------------------------------------------


def puf_from_sums(sums, spreads, lo: float, hi: float, m: int) -> np.ndarray:
    """(q,) PUF = (A_S - lo B_S) / ((hi - lo) m (m - 1) / 2); 0 when hi = lo, NaN for
    m < 2."""
    sums = np.asarray(sums, dtype=np.float64)
    if m < 2:
        return np.full(sums.shape, math.nan)
    if hi == lo:
        return np.zeros(sums.shape)
    spreads = np.asarray(spreads, dtype=np.float64)
    return (sums - lo * spreads) / (hi - lo) / (m * (m - 1) // 2)


def cosine_puf(block, scores: np.ndarray, lo_hi: tuple[float, float] | None = None, device=None):
    """((q,) PUF of each row of ``scores`` (q, m), :class:`Extremes`) with the cosine of a
    ``userfair.similarity.registry.CosineBlocks``, by the columns: no pair is visited for the sums.
    ``lo_hi``: the raw extremes when already known (e.g. a pass over the pairs made them),
    else :func:`extremes` finds them (on the CPU). ``device``: as :func:`weighted_spread`'s."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    m = scores.shape[1]
    if m < 2:
        return np.full(scores.shape[0], math.nan), Extremes(math.nan, math.nan, "", "")
    found = Extremes(*lo_hi, "given", "given") if lo_hi is not None else extremes(block)
    sums = weighted_spread(block.unit, scores, device)
    spreads = spread(scores) if found.lo != 0.0 else np.zeros(len(sums))
    return puf_from_sums(sums, spreads, found.lo, found.hi, m), found
