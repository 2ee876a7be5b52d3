"""Compiled row loops (numba) of the streamed measures (``userfair.streamed.streaming``).

Every kernel visits the rows ``u`` of a range and, for each, the users ``v > u`` that share
a train item with ``u`` (or every ``v > u`` when the genre similarity is mixed in), so each
unordered pair is seen exactly once and nothing of size m x m is ever held: a thread keeps
a few arrays of length m (the intersection counts of one row and the partners touched) and
one of length r (UF's item-cosine row sums). Rows are dealt to threads round-robin
(``u = start + t, start + t + T, ...``), and each row's results are written to a row of
the output of its own, which the caller adds in row order (:func:`merge_rows` for the
moments): a result depends on the range only, not on the number of threads.

Formulas (docs/method.md): cos = inter / sqrt(d_u d_v), jacc = inter / (d_u + d_v - inter),
1 - JS with base-2 logarithms clipped to [0, 1], k^2 d_L(u, v) = k^2 - sum_{i in L_u, j in L_v}
cos(x_i, x_j); they are evaluated with the same floating-point operations as the dense route.
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: Columns of :func:`pass_one_rows`'s per-row output.
ONE_SHARING, ONE_COS_MIN, ONE_COS_MAX, ONE_JACC_MIN, ONE_JACC_MAX = 0, 1, 2, 3, 4
ONE_UF_N, ONE_UF_MEAN, ONE_UF_M2 = 5, 6, 7
#: Columns of :func:`pass_two_rows`'s per-row output (the cosine PUF is not among them: it
#: is computed by the items, ``userfair.streamed.puf_items``, without a pair pass).
TWO_P_JACC, TWO_NDCG_JACC, TWO_UF, TWO_UF_PAIRS = 0, 1, 2, 3


@numba.njit(cache=True, inline="always")
def pair_scratch(m, r):
    """One thread's scratch of a loop over pair rows that visits the similar partners: the
    shared-item ``counts`` (zero) and the ``touched`` users of :func:`_count_row`, the
    ``partners`` and their ``weights``, and ``to_items`` (zero, ``r`` item slots) of the
    list distances."""
    return (
        np.zeros(m, np.int32), np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m),
        np.zeros(r),
    )  # fmt: skip


@numba.njit(cache=True, inline="always")
def _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched):
    """counts[v] = |H_u & H_v| for every v > u sharing an item with u; the distinct such v
    go to touched[:n]; returns n. ``col_users`` is sorted ascending within each item."""
    n = 0
    for p in range(row_ptr[u], row_ptr[u + 1]):
        i = row_items[p]
        for q in range(col_ptr[i + 1] - 1, col_ptr[i] - 1, -1):
            v = col_users[q]
            if v <= u:
                break
            if counts[v] == 0:
                touched[n] = v
                n += 1
            counts[v] += 1
    return n


@numba.njit(cache=True, inline="always")
def _genre_js_similarity(dist, own, u, v):
    """1 - JS(g_u, g_v): H((p + q) / 2) - (H(p) + H(q)) / 2, clipped to [0, 1]."""
    h = 0.0
    for j in range(dist.shape[1]):
        x = (dist[u, j] + dist[v, j]) / 2.0
        if x > 0.0:
            h += x * np.log2(x)
    js = -h - (own[u] + own[v]) / 2.0
    js = min(max(js, 0.0), 1.0)
    return 1.0 - js


@numba.njit(cache=True, inline="always")
def _genre_partners(
    u, first, m, du, degrees, counts, gamma, dist, own, threshold, partners, weights, similar
):  # fmt: skip
    """UF's similar partners of row u when the genre similarity is mixed in (gamma < 1):
    every v in first:m but u with sim_UF = gamma * jacc + (1 - gamma) * (1 - JS) >= threshold
    (jacc from counts[v], 0 where u and v share nothing) appended to partners/weights from
    index ``similar``; clears counts[v]; returns the new number of partners. Pass two and
    the decomposition visit v > u (first = u + 1), the sampled rows every v != u (first = 0)."""
    for v in range(first, m):
        if v == u:
            continue
        inter = float(counts[v])
        jacc = inter / (du + degrees[v] - inter) if inter > 0.0 else 0.0
        value = gamma * jacc + (1.0 - gamma) * _genre_js_similarity(dist, own, u, v)
        if value >= threshold:
            partners[similar] = v
            weights[similar] = value
            similar += 1
        counts[v] = 0
    return similar


@numba.njit(cache=True, inline="always")
def _merge(n_a, mean_a, m2_a, n_b, mean_b, m2_b):
    """Count, mean and sum of squared deviations of two groups together (Chan et al.)."""
    if n_b == 0:
        return n_a, mean_a, m2_a
    if n_a == 0:
        return n_b, mean_b, m2_b
    n = n_a + n_b
    delta = mean_b - mean_a
    return n, mean_a + delta * (n_b / n), m2_a + m2_b + delta * delta * (n_a * (n_b / n))


@numba.njit(cache=True, parallel=True)
def pass_one_rows(
    row_ptr, row_items, col_ptr, col_users, degrees, start, stop, gamma, dist, own, threads
):
    """Per row u of start:stop (one output row each): the number of pairs u < v sharing an
    item, the min and max of their raw cosine and Jaccard (+-inf when none), and the count,
    mean and sum of squared deviations of sim_UF = gamma * jacc + (1 - gamma) * (1 - JS)
    over every pair u < v (pairs sharing no item included, with jacc = 0)."""
    m = degrees.shape[0]
    out = np.zeros((stop - start, 8))
    out[:, ONE_COS_MIN] = np.inf  # a row without pairs (the last one) keeps these
    out[:, ONE_COS_MAX] = -np.inf
    out[:, ONE_JACC_MIN] = np.inf
    out[:, ONE_JACC_MAX] = -np.inf
    for t in numba.prange(threads):
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        values = np.empty(m)
        for u in range(start + t, stop, threads):
            pairs = m - 1 - u
            if pairs <= 0:
                continue
            row = u - start
            cos_min, cos_max, jacc_min, jacc_max = np.inf, -np.inf, np.inf, -np.inf
            n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            du = degrees[u]
            row_sum = 0.0
            for a in range(n):
                v = touched[a]
                inter = float(counts[v])
                cosine = inter / math.sqrt(du * degrees[v])
                jacc = inter / (du + degrees[v] - inter)
                cos_min = min(cos_min, cosine)
                cos_max = max(cos_max, cosine)
                jacc_min = min(jacc_min, jacc)
                jacc_max = max(jacc_max, jacc)
                values[a] = jacc
                row_sum += jacc
            if gamma == 1.0:  # sim_UF = jacc: pairs sharing no item are exact zeros
                row_mean = row_sum / pairs
                row_m2 = (pairs - n) * row_mean * row_mean
                for a in range(n):
                    row_m2 += (values[a] - row_mean) ** 2
                for a in range(n):
                    counts[touched[a]] = 0
            else:  # every pair: the genre similarity is dense
                row_sum = 0.0
                for v in range(u + 1, m):
                    inter = float(counts[v])
                    jacc = inter / (du + degrees[v] - inter) if inter > 0.0 else 0.0
                    value = gamma * jacc + (1.0 - gamma) * _genre_js_similarity(dist, own, u, v)
                    values[v - u - 1] = value
                    row_sum += value
                    counts[v] = 0
                row_mean = row_sum / pairs
                row_m2 = 0.0
                for a in range(pairs):
                    row_m2 += (values[a] - row_mean) ** 2
            out[row, ONE_SHARING] = n
            out[row, ONE_COS_MIN] = cos_min
            out[row, ONE_COS_MAX] = cos_max
            out[row, ONE_JACC_MIN] = jacc_min
            out[row, ONE_JACC_MAX] = jacc_max
            out[row, ONE_UF_N] = pairs
            out[row, ONE_UF_MEAN] = row_mean
            out[row, ONE_UF_M2] = row_m2
    return out


@numba.njit(cache=True)
def merge_rows(out, n, mean, m2):
    """(count, mean, M2) of the group (n, mean, m2) and then the groups of the rows of
    ``out`` (columns ONE_UF_N, ONE_UF_MEAN, ONE_UF_M2), merged one after the other in row
    order (Chan et al.)."""
    for row in range(out.shape[0]):
        n, mean, m2 = _merge(
            n, mean, m2, out[row, ONE_UF_N], out[row, ONE_UF_MEAN], out[row, ONE_UF_M2]
        )
    return n, mean, m2


@numba.njit(cache=True, inline="always")
def list_distance(
    u, partners, weights, n, lists, k, dense, cosines, c_ptr, c_items, c_values, to_items
):
    """sum over the n partners v of u of weight * (k^2 - sum_{i in L_u, j in L_v} cos(i, j)).

    With dense cosines: the cheaper of k^2 look-ups per partner or the row sums
    t = sum_{i in L_u} cos(i, .) formed once and k look-ups per partner (the rule of
    ``userfair.formulas._kernels``); with sparse (CSR) cosines always the row sums, built from the
    nonzero entries of L_u's rows. ``to_items`` (length r) is zero on entry and on exit."""
    if n == 0:
        return 0.0
    total = 0.0
    r = to_items.shape[0]
    own = lists[u]
    if dense and n * k * k <= k * r // 8 + n * k:
        for a in range(n):
            v = partners[a]
            cosine_sum = 0.0
            for b in range(k):
                row = own[b]
                for c in range(k):
                    cosine_sum += cosines[row, lists[v, c]]
            total += weights[a] * (k * k - cosine_sum)
        return total
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
    for a in range(n):
        v = partners[a]
        cosine_sum = 0.0
        for c in range(k):
            cosine_sum += to_items[lists[v, c]]
        total += weights[a] * (k * k - cosine_sum)
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
    return total


@numba.njit(cache=True, parallel=True)
def pass_two_rows(
    row_ptr, row_items, col_ptr, col_users, degrees, start, stop, gamma, dist, own,
    precision, ndcg, jacc_lo, threshold,
    lists, k, dense, cosines, c_ptr, c_items, c_values, r, threads,
):  # fmt: skip
    """Per row u of start:stop (one output row each), over the pairs u < v: the Jaccard
    PUF sums sum (s - lo) |S(u) - S(v)| over the pairs sharing an item (s the raw Jaccard,
    lo its minimum over all pairs: a pair sharing no item has s = 0 = lo whenever one
    exists), for S = P and NDCG; UF's sum of sim_UF * k^2 d_L over the pairs with
    sim_UF >= threshold, and their number."""
    m = degrees.shape[0]
    out = np.zeros((stop - start, 4))
    for t in numba.prange(threads):
        counts, touched, partners, weights, to_items = pair_scratch(m, r)
        for u in range(start + t, stop, threads):
            if u >= m - 1:
                continue
            n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            du = degrees[u]
            similar = 0
            row_p_jacc, row_n_jacc = 0.0, 0.0
            for a in range(n):
                v = touched[a]
                inter = float(counts[v])
                jacc = inter / (du + degrees[v] - inter)
                row_p_jacc += (jacc - jacc_lo) * abs(precision[u] - precision[v])
                row_n_jacc += (jacc - jacc_lo) * abs(ndcg[u] - ndcg[v])
                if gamma == 1.0 and jacc >= threshold:
                    partners[similar] = v
                    weights[similar] = jacc
                    similar += 1
            # row sums, then the rows' (the caller's): rounding grows with rows + row
            # length, not with the number of pairs
            row = u - start
            out[row, TWO_P_JACC] = row_p_jacc
            out[row, TWO_NDCG_JACC] = row_n_jacc
            if gamma == 1.0:
                for a in range(n):
                    counts[touched[a]] = 0
            else:
                similar = _genre_partners(
                    u, u + 1, m, du, degrees, counts, gamma, dist, own, threshold, partners,
                    weights, similar,
                )  # fmt: skip
            out[row, TWO_UF] = list_distance(
                u, partners, weights, similar, lists, k, dense, cosines, c_ptr, c_items,
                c_values, to_items,
            )  # fmt: skip
            out[row, TWO_UF_PAIRS] = similar
    return out


@numba.njit(cache=True, inline="always")
def envy_row(u, rel_ptr, rel_items, list_ptr, list_users, own, denominator, counts, touched):
    """(sum of envy(u, v) over v != u, u's max envy). ``counts`` (length m) is zero on entry
    and on exit; ``touched`` is scratch of length m. Only a nonzero count |L_v & R_u| can
    give a positive envy, so only those v are visited."""
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
                worst = max(worst, gain)
        counts[v] = 0
    return row_total, worst


@numba.njit(cache=True, parallel=True)
def envy_rows(rel_ptr, rel_items, list_ptr, list_users, own, denominator, start, stop,
              epsilon, threads):  # fmt: skip
    """Per row u of start:stop (one output row each): the sum of envy(u, v) over v != u,
    u's max envy and whether it exceeds ``epsilon`` (1.0 or 0.0) (:func:`envy_row`).

    ``rel_items``: u's relevant items among the recommended ones (CSR by user);
    ``list_users``: the users whose list holds each recommended item (CSR by item)."""
    m = own.shape[0]
    out = np.zeros((stop - start, 3))
    for t in numba.prange(threads):
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        for u in range(start + t, stop, threads):
            row_total, worst = envy_row(
                u, rel_ptr, rel_items, list_ptr, list_users, own, denominator, counts, touched
            )
            out[u - start, 0] = row_total
            out[u - start, 1] = worst
            out[u - start, 2] = 1.0 if worst > epsilon else 0.0
    return out


@numba.njit(cache=True, parallel=True)
def item_cosine_counts(column_ptr, column_users, row_ptr, row_items, r, threads):
    """The number of nonzero cosines of each of r items (the distinct items co-occurring
    with it in some user's row), from the unit columns as CSC and CSR."""
    nonzeros = np.zeros(r, np.int64)
    for t in numba.prange(threads):
        marker = np.full(r, -1, np.int64)
        for i in range(t, r, threads):
            count = 0
            for p in range(column_ptr[i], column_ptr[i + 1]):
                w = column_users[p]
                for q in range(row_ptr[w], row_ptr[w + 1]):
                    j = row_items[q]
                    if marker[j] != i:
                        marker[j] = i
                        count += 1
            nonzeros[i] = count
    return nonzeros


@numba.njit(cache=True, parallel=True)
def item_cosines_csr(
    column_ptr, column_users, column_values, row_ptr, row_items, row_values, r, indptr, threads
):
    """The nonzero cosines of r items as CSR rows (``indptr`` from
    :func:`item_cosine_counts`; column indices unsorted), each summed in the order of
    ``userfair.formulas._kernels.item_cosines`` (so the values equal its dense ones)."""
    indices = np.empty(indptr[-1], np.int32)
    data = np.empty(indptr[-1])
    for t in numba.prange(threads):
        sums = np.zeros(r)
        marker = np.full(r, -1, np.int64)
        for i in range(t, r, threads):
            position = indptr[i]
            for p in range(column_ptr[i], column_ptr[i + 1]):
                w, x = column_users[p], column_values[p]
                for q in range(row_ptr[w], row_ptr[w + 1]):
                    j = row_items[q]
                    if marker[j] != i:
                        marker[j] = i
                        indices[position] = j
                        position += 1
                    sums[j] += x * row_values[q]
            for p in range(indptr[i], indptr[i + 1]):
                data[p] = sums[indices[p]]
                sums[indices[p]] = 0.0
    return indices, data
