"""Compiled row loops (numba) of the sampled estimate (``userfair.streamed.estimate``): for
each row u of a given set of rows, the sums over **every** other column v != u (both v < u
and v > u), so that a uniform sample of rows gives unbiased estimates of the sums over all pairs.

Formulas and floating-point operations as ``userfair.streamed._streaming_kernels`` (docs/method.md):
jacc = inter / (d_u + d_v - inter), the PUF sums shifted by the raw minimum (only pairs
sharing an item contribute: a pair sharing none has s = 0 = lo whenever one exists), UF's
terms sim_UF * k^2 d_L over the pairs with sim_UF >= threshold, envy over the ordered pairs
(u, v). Rows are dealt to threads round-robin and each row writes an output row of its own.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from userfair.streamed._streaming_kernels import (
    _genre_partners,
    envy_row,
    list_distance,
    pair_scratch,
)

#: Columns of :func:`sampled_pair_rows`'s per-row output.
ROW_P_JACC, ROW_NDCG_JACC, ROW_UF, ROW_UF_PAIRS, ROW_P_COS, ROW_NDCG_COS = 0, 1, 2, 3, 4, 5
#: Columns of :func:`sampled_envy_rows`'s per-row output.
ROW_ENVY, ROW_MAX_ENVY, ROW_ENVIOUS = 0, 1, 2


@numba.njit(cache=True, inline="always")
def _count_all(u, row_ptr, row_items, col_ptr, col_users, counts, touched):
    """counts[v] = |H_u & H_v| for every v != u sharing an item with u; the distinct such v
    go to touched[:n]; returns n."""
    n = 0
    for p in range(row_ptr[u], row_ptr[u + 1]):
        i = row_items[p]
        for q in range(col_ptr[i], col_ptr[i + 1]):
            v = col_users[q]
            if v == u:
                continue
            if counts[v] == 0:
                touched[n] = v
                n += 1
            counts[v] += 1
    return n


@numba.njit(cache=True, parallel=True)
def sampled_pair_rows(
    row_ptr, row_items, col_ptr, col_users, degrees, rows, gamma, dist, own,
    precision, ndcg, cos_lo, jacc_lo, threshold,
    lists, k, dense, cosines, c_ptr, c_items, c_values, r, threads,
):  # fmt: skip
    """Per row u of ``rows`` (one output row each), over every v != u: the PUF row sums
    sum_v (s - lo) |S(u) - S(v)| for s the raw Jaccard (and cosine) and S = P and NDCG, UF's
    sum of sim_UF * k^2 d_L(u, v) over the v with sim_UF >= threshold, and their number."""
    m = degrees.shape[0]
    size = rows.shape[0]
    out = np.zeros((size, 6))
    for t in numba.prange(threads):
        counts, touched, partners, weights, to_items = pair_scratch(m, r)
        for row in range(t, size, threads):
            u = rows[row]
            n = _count_all(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            du = degrees[u]
            similar = 0
            p_jacc, n_jacc, p_cos, n_cos = 0.0, 0.0, 0.0, 0.0
            for a in range(n):
                v = touched[a]
                inter = float(counts[v])
                cosine = inter / math.sqrt(du * degrees[v])
                jacc = inter / (du + degrees[v] - inter)
                gap_p = abs(precision[u] - precision[v])
                gap_n = abs(ndcg[u] - ndcg[v])
                p_jacc += (jacc - jacc_lo) * gap_p
                n_jacc += (jacc - jacc_lo) * gap_n
                p_cos += (cosine - cos_lo) * gap_p
                n_cos += (cosine - cos_lo) * gap_n
                if gamma == 1.0 and jacc >= threshold:
                    partners[similar] = v
                    weights[similar] = jacc
                    similar += 1
            if gamma == 1.0:
                for a in range(n):
                    counts[touched[a]] = 0
            else:  # every pair: the genre similarity is dense
                similar = _genre_partners(
                    u, 0, m, du, degrees, counts, gamma, dist, own, threshold, partners,
                    weights, similar,
                )  # fmt: skip
            out[row, ROW_P_JACC] = p_jacc
            out[row, ROW_NDCG_JACC] = n_jacc
            out[row, ROW_P_COS] = p_cos
            out[row, ROW_NDCG_COS] = n_cos
            out[row, ROW_UF] = list_distance(
                u, partners, weights, similar, lists, k, dense, cosines, c_ptr, c_items,
                c_values, to_items,
            )  # fmt: skip
            out[row, ROW_UF_PAIRS] = similar
    return out


@numba.njit(cache=True, parallel=True)
def sampled_envy_rows(rel_ptr, rel_items, list_ptr, list_users, own, denominator, rows,
                      epsilon, threads):  # fmt: skip
    """Per row u of ``rows`` (one output row each): the sum of envy(u, v) over v != u, u's
    max envy and whether it exceeds ``epsilon`` (1.0 or 0.0), as
    ``userfair.streamed._streaming_kernels.envy_rows``."""
    m = own.shape[0]
    size = rows.shape[0]
    out = np.zeros((size, 3))
    for t in numba.prange(threads):
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        for row in range(t, size, threads):
            total, worst = envy_row(
                rows[row], rel_ptr, rel_items, list_ptr, list_users, own, denominator, counts,
                touched,
            )  # fmt: skip
            out[row, ROW_ENVY] = total
            out[row, ROW_MAX_ENVY] = worst
            out[row, ROW_ENVIOUS] = 1.0 if worst > epsilon else 0.0
    return out
