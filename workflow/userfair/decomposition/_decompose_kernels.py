"""Compiled row loops (numba) of the streamed per-user decomposition
(``userfair.decomposition.decompose``).

The same visits as ``userfair.streamed._streaming_kernels`` (each unordered pair u < v once, from
its smaller row, only the pairs sharing a train item unless the genre similarity is mixed in),
but every pair's term is added to **per-user** accumulators of length m instead of one
total: the row's own entry (u) and the partner's entry (v). Each thread keeps its own
(columns, m) array; the caller adds the threads' arrays in a fixed order, so a result
depends only on the range and the number of threads. Memory per thread: O(m) (no m x m).

Formulas: docs/method.md#who (the shares) and docs/method.md (the measures); the pair
values are evaluated with the floating-point operations of ``_streaming_kernels``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from userfair.streamed._streaming_kernels import _count_row, _genre_partners, pair_scratch

#: Columns of :func:`pair_rows`'s per-thread (m, PAIR_ROWS) output, a user's entries side
#: by side (one pair touches two cache lines, not 2 x PAIR_ROWS): for each PUF
#: (effectiveness x similarity) the terms (s - lo) |S_u - S_v| given to the worse-served
#: user of the pair (``*_DIS``) and to the better-served one (``*_ADV``); UF's terms
#: sim_UF * (k^2 - cosine sum) of the similar pairs, given whole to both users; the sum of
#: (cos - lo) over the user's sharing pairs.
P_COS_DIS, P_COS_ADV, P_JACC_DIS, P_JACC_ADV = 0, 1, 2, 3
N_COS_DIS, N_COS_ADV, N_JACC_DIS, N_JACC_ADV = 4, 5, 6, 7
UF_TERMS, COS_SUM = 8, 9
PAIR_ROWS = 10
#: Columns of :func:`envy_rows`'s per-thread (m, ENVY_ROWS) output.
ENVIES, ENVIED, MAX_ENVY, MAX_ENVIED = 0, 1, 2, 3
ENVY_ROWS = 4


@numba.njit(cache=True, inline="always")
def _split(out, dis, adv, u, v, weight, score_u, score_v):
    """The pair's term weight |S_u - S_v| to the worse-served user's ``dis`` column and the
    better-served user's ``adv`` column (a tie has term 0)."""
    if score_u < score_v:
        term = weight * (score_v - score_u)
        out[u, dis] += term
        out[v, adv] += term
    elif score_u > score_v:
        term = weight * (score_u - score_v)
        out[u, adv] += term
        out[v, dis] += term


@numba.njit(cache=True, inline="always")
def _uf_terms(
    u, partners, weights, n, lists, k, dense, cosines, c_ptr, c_items, c_values, to_items, out
):
    """Adds weight * (k^2 - sum_{i in L_u, j in L_v} cos(i, j)) of each of the n partners v
    of u to out[u, UF_TERMS] and out[v, UF_TERMS], by the rule of
    ``_streaming_kernels.list_distance`` (dense cosines: the cheaper of k^2 look-ups per
    partner or the row sums t = sum_{i in L_u} cos(i, .) and k look-ups per partner; CSR
    cosines: the row sums). ``to_items`` (length r) is zero on entry and on exit."""
    if n == 0:
        return
    r = to_items.shape[0]
    own = lists[u]
    if dense and n * k * k <= k * r // 8 + n * k:  # few partners: k^2 look-ups each
        row_total = 0.0
        for a in range(n):
            v = partners[a]
            cosine_sum = 0.0
            for b in range(k):
                row = own[b]
                for c in range(k):
                    cosine_sum += cosines[row, lists[v, c]]
            term = weights[a] * (k * k - cosine_sum)
            row_total += term
            out[v, UF_TERMS] += term
        out[u, UF_TERMS] += row_total
        return
    if dense:
        for b in range(k):
            row = own[b]
            for j in range(r):
                to_items[j] += cosines[row, j]
    else:
        for b in range(k):
            i = own[b]
            for p in range(c_ptr[i], c_ptr[i + 1]):
                to_items[c_items[p]] += c_values[p]
    row_total = 0.0
    for a in range(n):
        v = partners[a]
        cosine_sum = 0.0
        for c in range(k):
            cosine_sum += to_items[lists[v, c]]
        term = weights[a] * (k * k - cosine_sum)
        row_total += term
        out[v, UF_TERMS] += term
    out[u, UF_TERMS] += row_total
    if dense:
        to_items[:] = 0.0
    else:
        touched = 0
        for b in range(k):
            touched += c_ptr[own[b] + 1] - c_ptr[own[b]]
        if 4 * touched >= r:  # most entries written: one sequential clear is cheaper
            to_items[:] = 0.0
        else:
            for b in range(k):
                i = own[b]
                for p in range(c_ptr[i], c_ptr[i + 1]):
                    to_items[c_items[p]] = 0.0


@numba.njit(cache=True, parallel=True)
def pair_rows(
    row_ptr, row_items, col_ptr, col_users, degrees, start, stop, gamma, dist, own,
    precision, ndcg, cos_lo, jacc_lo, threshold,
    lists, k, dense, cosines, c_ptr, c_items, c_values, r, threads,
):  # fmt: skip
    """(threads, m, PAIR_ROWS): per thread, over the pairs u < v with u in start:stop, the
    per-user PUF parts of the raw similarities shifted by their minimum (s - lo; only pairs
    sharing an item, see ``_streaming_kernels.pass_two_rows``), UF's pair terms of the
    pairs with sim_UF >= threshold (both users) and the shifted cosine sums (both users)."""
    m = degrees.shape[0]
    out = np.zeros((threads, m, PAIR_ROWS))
    for t in numba.prange(threads):
        mine = out[t]
        counts, touched, partners, weights, to_items = pair_scratch(m, r)
        for u in range(start + t, stop, threads):
            if u >= m - 1:
                continue
            n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            du = degrees[u]
            similar = 0
            cos_row = 0.0
            for a in range(n):
                v = touched[a]
                inter = float(counts[v])
                cosine = inter / math.sqrt(du * degrees[v])
                jacc = inter / (du + degrees[v] - inter)
                _split(
                    mine, P_COS_DIS, P_COS_ADV, u, v, cosine - cos_lo, precision[u], precision[v]
                )
                _split(
                    mine, P_JACC_DIS, P_JACC_ADV, u, v, jacc - jacc_lo, precision[u], precision[v]
                )
                _split(mine, N_COS_DIS, N_COS_ADV, u, v, cosine - cos_lo, ndcg[u], ndcg[v])
                _split(mine, N_JACC_DIS, N_JACC_ADV, u, v, jacc - jacc_lo, ndcg[u], ndcg[v])
                cos_row += cosine - cos_lo
                mine[v, COS_SUM] += cosine - cos_lo
                if gamma == 1.0 and jacc >= threshold:
                    partners[similar] = v
                    weights[similar] = jacc
                    similar += 1
            mine[u, COS_SUM] += cos_row
            if gamma == 1.0:
                for a in range(n):
                    counts[touched[a]] = 0
            else:
                similar = _genre_partners(
                    u, u + 1, m, du, degrees, counts, gamma, dist, own, threshold, partners,
                    weights, similar,
                )  # fmt: skip
            _uf_terms(
                u, partners, weights, similar, lists, k, dense, cosines, c_ptr, c_items,
                c_values, to_items, mine,
            )  # fmt: skip
    return out


@numba.njit(cache=True, parallel=True)
def envy_rows(rel_ptr, rel_items, list_ptr, list_users, own, denominator, start, stop,
              threads):  # fmt: skip
    """(threads, m, ENVY_ROWS): per thread, over u in start:stop, the sum of u's envies
    (row u), what each v is envied (row v), u's max envy and that max credited to the v
    attaining it (split equally among tied v; nobody when the max is 0). The visits of
    ``_streaming_kernels.envy_rows``; the gains are computed with the same operations."""
    m = own.shape[0]
    out = np.zeros((threads, m, ENVY_ROWS))
    for t in numba.prange(threads):
        mine = out[t]
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        for u in range(start + t, stop, threads):
            n = 0
            for p in range(rel_ptr[u], rel_ptr[u + 1]):
                i = rel_items[p]
                for q in range(list_ptr[i], list_ptr[i + 1]):
                    v = list_users[q]
                    if counts[v] == 0:
                        touched[n] = v
                        n += 1
                    counts[v] += 1
            worst, row_total = 0.0, 0.0
            for a in range(n):
                v = touched[a]
                if v != u:
                    gain = counts[v] / denominator[u] - own[u]
                    if gain > 0.0:
                        row_total += gain
                        mine[v, ENVIED] += gain
                        worst = max(worst, gain)
            if worst > 0.0:
                ties = 0
                for a in range(n):
                    v = touched[a]
                    if v != u and counts[v] / denominator[u] - own[u] == worst:
                        ties += 1
                for a in range(n):
                    v = touched[a]
                    if v != u and counts[v] / denominator[u] - own[u] == worst:
                        mine[v, MAX_ENVIED] += worst / ties
            for a in range(n):
                counts[touched[a]] = 0
            mine[u, ENVIES] += row_total
            mine[u, MAX_ENVY] += worst
    return out
