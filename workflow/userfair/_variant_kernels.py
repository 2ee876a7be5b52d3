"""Compiled loops (numba) of the streamed PUF variants (``userfair.variants``): one row
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
