"""Graded relevance: gNDCG@k per user (docs/method.md#graded-relevance).

The gain of a listed item is its test grade (linear gains, trec_eval's ``ndcg_cut``
convention), 0 for an item the user did not interact with in TEST; the ideal DCG is that of
the user's test grades sorted in descending order and cut at k; gNDCG is 0 when the ideal
is 0. The arithmetic follows ``userfair.formulas.effectiveness.per_user``'s NDCG step by step, so
with every grade 1 the two arrays are equal (``==``), not merely close.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from userfair.formulas.effectiveness import validate_lists


def discounts(k: int) -> np.ndarray:
    """(k,) 1 / log2(rank + 1) for ranks 1..k (as ``effectiveness.per_user`` computes it)."""
    ranks = np.arange(1, k + 1, dtype=np.float64)
    return 1.0 / np.log2(ranks + 1.0)


def gains(topk: np.ndarray, grades: sp.csr_matrix, k: int = 10) -> np.ndarray:
    """(m, k) float64: the test grade of the item at each rank of each list (0 when the item
    is not among the user's test interactions)."""
    topk = validate_lists(topk, k, grades.shape)
    grades = sp.csr_matrix(grades)
    grades.sort_indices()
    n = grades.shape[1]
    rows = np.repeat(np.arange(grades.shape[0], dtype=np.int64), np.diff(grades.indptr))
    keys = rows * n + grades.indices.astype(np.int64)
    if len(keys) == 0:
        return np.zeros(topk.shape, dtype=np.float64)
    queries = np.arange(topk.shape[0], dtype=np.int64)[:, None] * n + topk
    found = np.searchsorted(keys, queries).clip(max=len(keys) - 1)
    values = np.asarray(grades.data, dtype=np.float64)[found]
    return np.where(keys[found] == queries, values, 0.0)


def ideal_gains(grades: sp.csr_matrix, k: int = 10) -> np.ndarray:
    """(m, k) float64: each user's k largest test grades in descending order, 0-padded."""
    grades = sp.csr_matrix(grades)
    m = grades.shape[0]
    counts = np.diff(grades.indptr)
    rows = np.repeat(np.arange(m, dtype=np.int64), counts)
    data = np.asarray(grades.data, dtype=np.float64)
    order = np.lexsort((-data, rows))  # by row, each row's grades descending
    position = np.arange(len(order)) - np.repeat(grades.indptr[:-1], counts)
    keep = position < k
    out = np.zeros((m, k), dtype=np.float64)
    out[rows[keep], position[keep]] = data[order][keep]
    return out


def gndcg(topk: np.ndarray, grades: sp.csr_matrix, k: int = 10) -> np.ndarray:
    """(m,) gNDCG@k of every user: sum_r g(L_u[r]) / log2(r + 1) over the ideal's
    sum_r g*_r / log2(r + 1) (g* the grades sorted descending, cut at k); 0 when the ideal
    is 0 (no test grade above 0)."""
    discount = discounts(k)
    dcg = (gains(topk, grades, k) * discount).sum(axis=1)
    # a running sum, like NDCG's cumsum of the discounts: equal to it when all grades are 1
    idcg = np.cumsum(ideal_gains(grades, k) * discount, axis=1)[:, -1] if k else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(idcg > 0, dcg / idcg, 0.0)
