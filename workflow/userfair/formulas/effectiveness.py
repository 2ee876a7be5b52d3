"""Per-user effectiveness at k with binary relevance (docs/method.md#effectiveness,
RecBole's definitions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from userfair.engine._backend import binary_csr
from userfair.measures import EFF


def hits(topk: np.ndarray, relevant: sp.csr_matrix, k: int = 10) -> np.ndarray:
    """(m, k) bool: whether the item at each rank of each list is relevant to its user."""
    topk = validate_lists(topk, k, relevant.shape)
    relevant = binary_csr(relevant)
    n = relevant.shape[1]
    # Sorted keys row * n + item of the relevant pairs; a hit is a key found among them.
    rows = np.repeat(np.arange(relevant.shape[0], dtype=np.int64), np.diff(relevant.indptr))
    keys = rows * n + relevant.indices.astype(np.int64)
    queries = np.arange(topk.shape[0], dtype=np.int64)[:, None] * n + topk
    if len(keys) == 0:
        return np.zeros(topk.shape, dtype=bool)
    found = np.searchsorted(keys, queries).clip(max=len(keys) - 1)
    return keys[found] == queries


def relevant_counts(relevant: sp.csr_matrix) -> np.ndarray:
    """(m,) |R_u|: the number of relevant items of each user."""
    return np.diff(binary_csr(relevant).indptr).astype(np.float64)


@dataclass(frozen=True)
class Hits:
    """What every per-user effectiveness at k reads of the lists: ``hit`` (m, k) float64,
    1 where the item at that rank is relevant; ``n_relevant`` (m,) |R_u|; ``ideal_hits``
    (m,) min(|R_u|, k); ``n_hits`` (m,) the hits in the top k; ``ranks`` 1..k; ``k``."""

    hit: np.ndarray
    n_relevant: np.ndarray
    ideal_hits: np.ndarray
    n_hits: np.ndarray
    ranks: np.ndarray
    k: int

    @classmethod
    def of(cls, topk: np.ndarray, relevant: sp.csr_matrix, k: int = 10) -> Hits:
        hit = hits(topk, relevant, k).astype(np.float64)
        n_relevant = relevant_counts(relevant)
        ranks = np.arange(1, k + 1, dtype=np.float64)
        return cls(hit, n_relevant, np.minimum(n_relevant, k), hit.sum(axis=1), ranks, k)


def hit_rate(h: Hits) -> np.ndarray:
    """HR@k: 1 when the top k hold a relevant item."""
    return (h.n_hits > 0).astype(np.float64)


def reciprocal_rank(h: Hits) -> np.ndarray:
    """MRR@k: 1 / the rank of the first relevant item in the top k (0 without one)."""
    first_hit = np.where(h.n_hits > 0, h.hit.argmax(axis=1) + 1, np.inf)
    return np.where(h.n_hits > 0, 1.0 / first_hit, 0.0)


def precision(h: Hits) -> np.ndarray:
    """P@k: the hits over k."""
    return h.n_hits / h.k


def average_precision(h: Hits) -> np.ndarray:
    """MAP@k: the precision at each hit's rank, summed, over min(|R_u|, k)."""
    precision_at = np.cumsum(h.hit, axis=1) / h.ranks
    return np.where(h.ideal_hits > 0, (precision_at * h.hit).sum(axis=1) / h.ideal_hits, 0.0)


def recall(h: Hits) -> np.ndarray:
    """R@k: the hits over |R_u|."""
    return np.where(h.n_relevant > 0, h.n_hits / h.n_relevant, 0.0)


def ndcg(h: Hits) -> np.ndarray:
    """NDCG@k: DCG with gains 1 and discounts 1 / log2(rank + 1), over the ideal DCG of
    min(|R_u|, k) hits."""
    discount = 1.0 / np.log2(h.ranks + 1.0)
    idcg = np.cumsum(discount)[np.maximum(h.ideal_hits.astype(np.int64) - 1, 0)]
    return np.where(h.ideal_hits > 0, (h.hit * discount).sum(axis=1) / idcg, 0.0)


#: The per-user formula of every effectiveness measure with binary relevance, by the name
#: it is declared under (``userfair.measures.effectiveness``): a new one is its formula
#: here and its declaration.
PER_USER = {
    "HR": hit_rate,
    "MRR": reciprocal_rank,
    "P": precision,
    "MAP": average_precision,
    "R": recall,
    "NDCG": ndcg,
}


def per_user(topk: np.ndarray, relevant: sp.csr_matrix, k: int = 10) -> dict[str, np.ndarray]:
    """The effectiveness measures (``userfair.measures.EFF``: HR, MRR, P, MAP, R, NDCG) at k
    of every user, each an (m,) float64 array, in registry order: each declared measure's
    formula of :data:`PER_USER` on the lists' :class:`Hits`.

    A user without relevant items scores 0 everywhere (evaluated users always have some).
    """
    missing = [name for name in EFF if name not in PER_USER]
    if missing:
        raise ValueError(f"{missing}: declared effectiveness without a formula in PER_USER")
    h = Hits.of(topk, relevant, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {name: PER_USER[name](h) for name in EFF}


def validate_lists(topk: np.ndarray, k: int, shape) -> np.ndarray:
    """The first k columns of ``topk`` as int64, checked against the relevance shape."""
    topk = np.asarray(topk)
    if topk.ndim != 2 or topk.shape[0] != shape[0]:
        raise ValueError(f"topk must be ({shape[0]}, >= {k}), got shape {topk.shape}")
    if topk.shape[1] < k:
        raise ValueError(f"topk has {topk.shape[1]} columns, fewer than k={k}")
    topk = topk[:, :k].astype(np.int64)
    if topk.size and (topk.min() < 0 or topk.max() >= shape[1]):
        raise ValueError(f"topk item indices must lie in [0, {shape[1]})")
    return topk
