"""Compiled row loops (numba) of a UF-kind variant over a similarity computed from the shared
items' counts (``userfair.streamed._plugin_kernels.KINDS``: the raw cosine or Jaccard): the
streamed route of ``userfair.engine.uf_engine``. The visits of the fused passes
(``userfair.streamed._streaming_kernels``): each unordered pair u < v once, from its smaller
row, only the pairs that share a train item (the others have s = 0: they count in the
moments and add nothing to the sum). Two passes: the moments of s over all pairs (UF's
threshold mean + SD), then each row's sum of s k^2 d_L over its similar pairs
(``_streaming_kernels.list_distance``)."""

from __future__ import annotations

import numba
import numpy as np

from userfair.streamed._plugin_kernels import _raw
from userfair.streamed._streaming_kernels import _count_row, _merge, list_distance, pair_scratch


@numba.njit(cache=True, parallel=True)
def moment_rows(row_ptr, row_items, col_ptr, col_users, degrees, kind, threads):
    """Per row u (one output row each): the count, mean and sum of squared deviations of
    the raw similarity over the pairs u < v, a pair sharing no item with s = 0."""
    m = degrees.shape[0]
    out = np.zeros((m, 3))
    for t in numba.prange(threads):
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        values = np.empty(m)
        for u in range(t, m, threads):
            pairs = m - 1 - u
            if pairs <= 0:
                continue
            n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            row_sum = 0.0
            for a in range(n):
                v = touched[a]
                values[a] = _raw(kind, float(counts[v]), degrees[u], degrees[v])
                row_sum += values[a]
                counts[v] = 0
            mean = row_sum / pairs
            m2 = (pairs - n) * mean * mean
            for a in range(n):
                m2 += (values[a] - mean) ** 2
            out[u, 0], out[u, 1], out[u, 2] = pairs, mean, m2
    return out


@numba.njit(cache=True)
def merged(rows):
    """(count, mean, M2) of the rows of :func:`moment_rows`, merged in row order."""
    n, mean, m2 = 0.0, 0.0, 0.0
    for row in range(rows.shape[0]):
        n, mean, m2 = _merge(n, mean, m2, rows[row, 0], rows[row, 1], rows[row, 2])
    return n, mean, m2


@numba.njit(cache=True, parallel=True)
def similar_rows(
    row_ptr, row_items, col_ptr, col_users, degrees, kind, threshold,
    lists, k, dense, cosines, c_ptr, c_items, c_values, r, threads,
):  # fmt: skip
    """Per row u: the sum over the v > u sharing an item with s >= ``threshold`` of
    s k^2 d_L(u, v), and their number."""
    m = degrees.shape[0]
    out = np.zeros((m, 2))
    for t in numba.prange(threads):
        counts, touched, partners, weights, to_items = pair_scratch(m, r)
        for u in range(t, m, threads):
            if u >= m - 1:
                continue
            n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            similar = 0
            for a in range(n):
                v = touched[a]
                s = _raw(kind, float(counts[v]), degrees[u], degrees[v])
                if s >= threshold:
                    partners[similar] = v
                    weights[similar] = s
                    similar += 1
                counts[v] = 0
            out[u, 0] = list_distance(
                u, partners, weights, similar, lists, k, dense, cosines, c_ptr, c_items,
                c_values, to_items,
            )  # fmt: skip
            out[u, 1] = similar
    return out
