"""Compiled row loops (numba) of a plugin pair measure whose scalar term is compiled with
numba (``PairMeasure.term``, docs/plugins.md#a-compiled-term): the streamed route of
``userfair.engine.generic_routes`` for every similarity of the registry: those the kernels
compute from the shared items' counts (:data:`KINDS`: raw cosine |H_u & H_v| /
sqrt(|H_u| |H_v|), raw Jaccard |H_u & H_v| / |H_u | H_v|)), and the cosines of unit rows
(:data:`UNIT_KINDS`: RCos of the graded rows, Genre of the genre distributions, sparse,
from the shared entries' products; Vec of the user vectors, dense, a dot product a pair).

The same visits as ``userfair.streamed._streaming_kernels``: each unordered pair u < v once,
from its smaller row, only the pairs that share a train item when the term vanishes at
similarity 0 (``sparse``), else every pair (the pairs sharing nothing at raw similarity 0).
The term is an argument of the kernels (numba's first-class functions): each compiled term
compiles the kernels once per process (not cached on disk), then runs at the loops' speed.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from userfair.streamed._sample_kernels import _count_all
from userfair.streamed._streaming_kernels import _count_row

#: The similarities the kernels compute from the shared items (the registry's labels).
KINDS = {"Cos": 0, "Jacc": 1}
#: The similarities that are cosines of the registry's unit rows
#: (``userfair.similarity.registry.CosineBlocks``), sparse or dense.
UNIT_KINDS = ("RCos", "Vec", "Genre")
#: Every similarity a compiled term runs on inside these loops.
COMPILED = tuple(KINDS) + UNIT_KINDS


@numba.njit(cache=True, inline="always")
def _raw(kind, inter, du, dv):
    if kind == 0:
        return inter / math.sqrt(du * dv)
    return inter / (du + dv - inter)


@numba.njit(cache=True, parallel=True)
def range_rows(row_ptr, row_items, col_ptr, col_users, degrees, kind, threads):
    """(smallest, largest raw similarity of the pairs sharing an item, number of such
    pairs) over every unordered pair; (inf, -inf, 0) when no pair shares an item."""
    m = degrees.shape[0]
    lows, highs, counts_out = np.full(threads, np.inf), np.full(threads, -np.inf), np.zeros(threads)
    for t in numba.prange(threads):
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        low, high, shared = np.inf, -np.inf, 0.0
        for u in range(t, m, threads):
            n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            shared += n
            for a in range(n):
                v = touched[a]
                raw = _raw(kind, float(counts[v]), degrees[u], degrees[v])
                low = min(low, raw)
                high = max(high, raw)
                counts[v] = 0
        lows[t], highs[t], counts_out[t] = low, high, shared
    return lows.min(), highs.max(), counts_out.sum()


@numba.njit(inline="always")
def _row_total(u, first, n, counts, touched, degrees, kind, scores, lo, span, sparse, term):
    """Row u's sum of term(S_u, S_v, sim) over the n users v in touched (those sharing an
    item with u, when ``sparse``) or over every v in first:m but u; clears counts[v]."""
    su = scores[u]
    total = 0.0
    if sparse:
        for a in range(n):
            v = touched[a]
            raw = _raw(kind, float(counts[v]), degrees[u], degrees[v])
            sim = (raw - lo) / span if span > 0.0 else 0.0
            total += term(su, scores[v], sim)
            counts[v] = 0
    else:
        for v in range(first, degrees.shape[0]):
            if v == u:
                continue
            inter = float(counts[v])
            raw = _raw(kind, inter, degrees[u], degrees[v]) if inter > 0.0 else 0.0
            sim = (raw - lo) / span if span > 0.0 else 0.0
            total += term(su, scores[v], sim)
            counts[v] = 0
    return total


@numba.njit(parallel=True)
def term_rows(
    row_ptr, row_items, col_ptr, col_users, degrees, kind, scores, lo, span, sparse, term,
    rows, every, threads,
):  # fmt: skip
    """Per row u of ``rows`` (one value each): the sum of term(S_u, S_v, sim) over the v > u
    (``every`` False: each unordered pair once over all rows, the pairs' sum) or over every
    v != u (``every``: the row values of the sampled estimate, ``userfair.streamed.estimate``,
    whose total over all rows is twice the pairs' sum), with sim the raw similarity min-max
    normalised ((raw - lo) / span; 0 when span is 0); only the v sharing an item with u when
    ``sparse`` (the term is 0 at similarity 0 and lo is 0)."""
    m = degrees.shape[0]
    size = rows.shape[0]
    out = np.zeros(size)
    for t in numba.prange(threads):
        counts = np.zeros(m, np.int32)
        touched = np.empty(m, np.int32)
        for row in range(t, size, threads):
            u = rows[row]
            if every:
                n = _count_all(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            else:
                n = _count_row(u, row_ptr, row_items, col_ptr, col_users, counts, touched)
            first = 0 if every else u + 1
            out[row] = _row_total(
                u, first, n, counts, touched, degrees, kind, scores, lo, span, sparse, term
            )
    return out


@numba.njit
def apply_term(term, s_u, s_v, sim):
    """The term of each pair (arrays of one length): a compiled term as ``terms``."""
    out = np.empty(s_u.shape[0])
    for p in range(s_u.shape[0]):
        out[p] = term(s_u[p], s_v[p], sim[p])
    return out


# --- cosines of unit rows (RCos, Genre: sparse; Vec: dense) ---------------------------------


@numba.njit(cache=True, inline="always")
def _dot_row(u, upper, ptr, items, values, col_ptr, col_users, col_values, acc, mark, touched):
    """acc[v] = sum over the entries i shared by the unit rows u and v of x_u[i] x_v[i], for
    every v > u (``upper``; ``col_users`` ascending within each column) or every v != u
    that shares an entry with u; the distinct such v go to touched[:n] (mark[v] = 1);
    returns n."""
    n = 0
    for p in range(ptr[u], ptr[u + 1]):
        i, x = items[p], values[p]
        if upper:
            for q in range(col_ptr[i + 1] - 1, col_ptr[i] - 1, -1):
                v = col_users[q]
                if v <= u:
                    break
                n = _add(v, x * col_values[q], acc, mark, touched, n)
        else:
            for q in range(col_ptr[i], col_ptr[i + 1]):
                v = col_users[q]
                if v != u:
                    n = _add(v, x * col_values[q], acc, mark, touched, n)
    return n


@numba.njit(cache=True, inline="always")
def _add(v, product, acc, mark, touched, n):
    """acc[v] += product, v appended to touched[:n] the first time (mark[v] = 1); the new n."""
    if mark[v] == 0:
        mark[v] = 1
        touched[n] = v
        n += 1
    acc[v] += product
    return n


@numba.njit(inline="always")
def _dot_total(u, first, n, acc, mark, touched, scores, lo, span, sparse, term):
    """Row u's sum of term(S_u, S_v, sim) over the n users v in touched (``sparse``) or over
    every v in first:m but u (raw 0 where u and v share no entry); clears acc and mark."""
    su = scores[u]
    total = 0.0
    if sparse:
        for a in range(n):
            v = touched[a]
            sim = (acc[v] - lo) / span if span > 0.0 else 0.0
            total += term(su, scores[v], sim)
            acc[v] = 0.0
            mark[v] = 0
    else:
        for v in range(first, scores.shape[0]):
            if v == u:
                continue
            sim = (acc[v] - lo) / span if span > 0.0 else 0.0
            total += term(su, scores[v], sim)
            acc[v] = 0.0
            mark[v] = 0
    return total


@numba.njit(cache=True, parallel=True)
def unit_range_rows(ptr, items, values, col_ptr, col_users, col_values, m, threads):
    """(smallest, largest raw cosine of the pairs sharing an entry, number of such pairs)
    of the sparse unit rows; (inf, -inf, 0) when no pair shares one."""
    lows, highs, shared_out = np.full(threads, np.inf), np.full(threads, -np.inf), np.zeros(threads)
    for t in numba.prange(threads):
        acc = np.zeros(m)
        mark = np.zeros(m, np.int8)
        touched = np.empty(m, np.int32)
        low, high, shared = np.inf, -np.inf, 0.0
        for u in range(t, m, threads):
            n = _dot_row(u, True, ptr, items, values, col_ptr, col_users, col_values, acc,
                         mark, touched)  # fmt: skip
            shared += n
            for a in range(n):
                v = touched[a]
                low = min(low, acc[v])
                high = max(high, acc[v])
                acc[v] = 0.0
                mark[v] = 0
        lows[t], highs[t], shared_out[t] = low, high, shared
    return lows.min(), highs.max(), shared_out.sum()


@numba.njit(parallel=True)
def unit_term_rows(
    ptr, items, values, col_ptr, col_users, col_values, scores, lo, span, sparse, term, rows,
    every, threads,
):  # fmt: skip
    """Per row u of ``rows``: the sum of term(S_u, S_v, sim) over the v > u or, ``every``,
    over every v != u (as :func:`term_rows`), sim the raw cosine of the sparse unit rows
    min-max normalised; only the v sharing an entry with u when ``sparse``."""
    m = scores.shape[0]
    size = rows.shape[0]
    out = np.zeros(size)
    for t in numba.prange(threads):
        acc = np.zeros(m)
        mark = np.zeros(m, np.int8)
        touched = np.empty(m, np.int32)
        for row in range(t, size, threads):
            u = rows[row]
            n = _dot_row(u, not every, ptr, items, values, col_ptr, col_users, col_values, acc,
                         mark, touched)  # fmt: skip
            first = 0 if every else u + 1
            out[row] = _dot_total(u, first, n, acc, mark, touched, scores, lo, span, sparse, term)
    return out


@numba.njit(cache=True, inline="always")
def _dot(unit, u, v):
    total = 0.0
    for j in range(unit.shape[1]):
        total += unit[u, j] * unit[v, j]
    return total


@numba.njit(cache=True, parallel=True)
def dense_range_rows(unit, threads):
    """(smallest, largest) raw cosine over every unordered pair of the dense unit rows."""
    m = unit.shape[0]
    lows, highs = np.full(threads, np.inf), np.full(threads, -np.inf)
    for t in numba.prange(threads):
        low, high = np.inf, -np.inf
        for u in range(t, m, threads):
            for v in range(u + 1, m):
                raw = _dot(unit, u, v)
                low = min(low, raw)
                high = max(high, raw)
        lows[t], highs[t] = low, high
    return lows.min(), highs.max()


@numba.njit(parallel=True)
def dense_term_rows(unit, scores, lo, span, sparse, term, rows, every, threads):
    """Per row u of ``rows``: the sum of term(S_u, S_v, sim) over v > u (``every`` False:
    each unordered pair once over all rows) or over every v != u (``every``: the sampled
    rows), sim the dense unit rows' cosine min-max normalised. ``sparse`` is not read (the
    signature is :func:`unit_term_rows`'s): dense rows share an entry in every pair, so
    every pair is visited."""
    m = unit.shape[0]
    size = rows.shape[0]
    out = np.zeros(size)
    for t in numba.prange(threads):
        for row in range(t, size, threads):
            u = rows[row]
            su = scores[u]
            total = 0.0
            for v in range(0 if every else u + 1, m):
                if v == u:
                    continue
                sim = (_dot(unit, u, v) - lo) / span if span > 0.0 else 0.0
                total += term(su, scores[v], sim)
            out[row] = total
    return out
