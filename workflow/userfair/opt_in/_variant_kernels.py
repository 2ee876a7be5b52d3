"""Compiled loops (numba) of the streamed PUF variants (``userfair.opt_in.variants``): one row
block of raw similarities folded into PUF's sums over the pairs u < v.

Each returns one row per user u of the block: ``q`` sums sum_{v > u} s(u, v) |S_j(u) - S_j(v)|
(one per score j), then the minimum and maximum of s over the visited pairs and their
number. Rows are summed by the caller in row order, so the result does not depend on the
threads.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, parallel=True)
def dense_rows(block: np.ndarray, start: int, scores: np.ndarray) -> np.ndarray:
    """The sums of a dense (b, m) block of the users ``start:start + b``; every pair
    v > u is visited."""
    b, m = block.shape
    q = scores.shape[0]
    out = np.zeros((b, q + 3))
    for i in numba.prange(b):
        u = start + i
        lo, hi = np.inf, -np.inf
        for v in range(u + 1, m):
            s = block[i, v]
            lo = min(lo, s)
            hi = max(hi, s)
            for j in range(q):
                out[i, j] += s * abs(scores[j, u] - scores[j, v])
        out[i, q] = lo
        out[i, q + 1] = hi
        out[i, q + 2] = max(m - u - 1, 0)
    return out


@numba.njit(cache=True, parallel=True)
def sparse_rows(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, start: int, scores: np.ndarray
) -> np.ndarray:
    """The sums of a CSR block (rows of the users ``start:start + b``); only its stored
    entries v > u are visited (the others are 0)."""
    b = indptr.shape[0] - 1
    q = scores.shape[0]
    out = np.zeros((b, q + 3))
    for i in numba.prange(b):
        u = start + i
        lo, hi, visited = np.inf, -np.inf, 0
        for position in range(indptr[i], indptr[i + 1]):
            v = indices[position]
            if v <= u:
                continue
            s = data[position]
            lo = min(lo, s)
            hi = max(hi, s)
            visited += 1
            for j in range(q):
                out[i, j] += s * abs(scores[j, u] - scores[j, v])
        out[i, q] = lo
        out[i, q + 1] = hi
        out[i, q + 2] = visited
    return out


@numba.njit(cache=True, parallel=True)
def dense_user_rows(block: np.ndarray, start: int, scores: np.ndarray, lo: float) -> np.ndarray:
    """Per user u of a dense (b, m) block and per score j: the sums over v != u of
    (s(u, v) - lo) |S_j(u) - S_j(v)| where u is the worse-served (S_j(u) < S_j(v)), then
    where u is the better-served; (b, 2 q)."""
    b, m = block.shape
    q = scores.shape[0]
    out = np.zeros((b, 2 * q))
    for i in numba.prange(b):
        u = start + i
        for v in range(m):
            if v == u:
                continue
            s = block[i, v] - lo
            for j in range(q):
                gap = scores[j, v] - scores[j, u]
                if gap > 0:
                    out[i, j] += s * gap
                elif gap < 0:
                    out[i, q + j] -= s * gap
    return out


@numba.njit(cache=True, parallel=True)
def sparse_user_rows(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    start: int,
    scores: np.ndarray,
    lo: float,
) -> np.ndarray:
    """As :func:`dense_user_rows` over the stored entries of a CSR block only (the caller
    makes sure the pairs it does not store add nothing: s = 0 = lo)."""
    b = indptr.shape[0] - 1
    q = scores.shape[0]
    out = np.zeros((b, 2 * q))
    for i in numba.prange(b):
        u = start + i
        for position in range(indptr[i], indptr[i + 1]):
            v = indices[position]
            if v == u:
                continue
            s = data[position] - lo
            for j in range(q):
                gap = scores[j, v] - scores[j, u]
                if gap > 0:
                    out[i, j] += s * gap
                elif gap < 0:
                    out[i, q + j] -= s * gap
    return out


@numba.njit(cache=True, parallel=True)
def sparse_cosine_rows(
    row_ptr: np.ndarray,
    row_items: np.ndarray,
    row_values: np.ndarray,
    col_ptr: np.ndarray,
    col_users: np.ndarray,
    col_values: np.ndarray,
    start: int,
    stop: int,
    scores: np.ndarray,
    threads: int,
) -> np.ndarray:
    """As :func:`sparse_rows` for the rows ``start:stop`` of the cosine of unit rows, made
    here: s(u, v) = sum_i x_ui x_vi over the items u and v share, for every v > u sharing
    an item with u (the others are 0), from the unit rows as user -> items
    (``row_*``) and item -> users (``col_*``, users ascending within an item). Nothing of
    (rows, m) is built: a thread keeps two arrays of length m (the dot products of its
    current row and the partners touched); rows are dealt round-robin to ``threads``."""
    m = row_ptr.shape[0] - 1
    q = scores.shape[0]
    out = np.zeros((stop - start, q + 3))
    for t in numba.prange(threads):
        dots = np.zeros(m)
        seen = np.zeros(m, np.bool_)
        touched = np.empty(m, np.int64)
        for u in range(start + t, stop, threads):
            n = 0
            for p in range(row_ptr[u], row_ptr[u + 1]):
                i = row_items[p]
                x = row_values[p]
                for position in range(col_ptr[i + 1] - 1, col_ptr[i] - 1, -1):
                    v = col_users[position]
                    if v <= u:
                        break
                    if not seen[v]:
                        seen[v] = True
                        touched[n] = v
                        n += 1
                    dots[v] += x * col_values[position]
            i = u - start
            lo, hi = np.inf, -np.inf
            for a in range(n):
                v = touched[a]
                s = dots[v]
                lo = min(lo, s)
                hi = max(hi, s)
                for j in range(q):
                    out[i, j] += s * abs(scores[j, u] - scores[j, v])
                dots[v] = 0.0
                seen[v] = False
            out[i, q] = lo
            out[i, q + 1] = hi
            out[i, q + 2] = n
    return out


#: Rows and columns of the tiles of :func:`dense_cosine_rows` (32 rows and 512 columns of
#: d = 64 take 280 KiB: they stay in a core's cache while their pairs are visited).
TILE_ROWS, TILE_COLUMNS = 32, 512


@numba.njit(cache=True, parallel=True, fastmath={"reassoc", "contract"})
def dense_cosine_rows(
    unit: np.ndarray, start: int, stop: int, scores: np.ndarray, threads: int
) -> np.ndarray:
    """As :func:`dense_rows` for the rows ``start:stop`` of the cosine of dense unit rows
    (m, d), made here: s(u, v) = sum_k unit[u, k] unit[v, k] for every v > u, in tiles of
    :data:`TILE_ROWS` x :data:`TILE_COLUMNS` users, the row tiles dealt round-robin to
    ``threads`` (no BLAS call: its threads would compete with these). The dot products
    and sums are reassociated (vectorised), so they may differ from a BLAS product and
    from :func:`dense_rows` in the last bits."""
    m, d = unit.shape
    q = scores.shape[0]
    out = np.zeros((stop - start, q + 3))
    tiles = (stop - start + TILE_ROWS - 1) // TILE_ROWS
    for t in numba.prange(threads):
        for tile in range(t, tiles, threads):
            first = start + tile * TILE_ROWS
            last = min(stop, first + TILE_ROWS)
            for i in range(first - start, last - start):
                out[i, q] = np.inf
                out[i, q + 1] = -np.inf
                out[i, q + 2] = max(m - (start + i) - 1, 0)
            sims = np.empty((4, TILE_COLUMNS))
            for column in range(first + 1, m, TILE_COLUMNS):
                end = min(m, column + TILE_COLUMNS)
                for group in range(first, last, 4):  # four rows share each column's loads
                    rows = min(4, last - group)
                    begin = max(column, group + 1)
                    if begin >= end:
                        continue
                    width = end - begin
                    for c in range(width):
                        v = begin + c
                        s0 = s1 = s2 = s3 = 0.0
                        for k in range(d):
                            x = unit[v, k]
                            s0 += unit[group, k] * x
                            s1 += unit[min(group + 1, m - 1), k] * x
                            s2 += unit[min(group + 2, m - 1), k] * x
                            s3 += unit[min(group + 3, m - 1), k] * x
                        sims[0, c], sims[1, c], sims[2, c], sims[3, c] = s0, s1, s2, s3
                    for r in range(rows):
                        u = group + r
                        i = u - start
                        skip = max(u + 1 - begin, 0)  # the columns v <= u of this row
                        if skip >= width:
                            continue
                        lo, hi = out[i, q], out[i, q + 1]
                        for c in range(skip, width):
                            lo = min(lo, sims[r, c])
                            hi = max(hi, sims[r, c])
                        out[i, q], out[i, q + 1] = lo, hi
                        for j in range(q):  # the fold, vectorised over the columns
                            su = scores[j, u]
                            total = 0.0
                            for c in range(skip, width):
                                total += sims[r, c] * abs(su - scores[j, begin + c])
                            out[i, j] += total
    return out
