"""Per-user effectiveness at k with binary relevance (docs/method.md#effectiveness,
RecBole's definitions)."""

from __future__ import annotations

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


def per_user(topk: np.ndarray, relevant: sp.csr_matrix, k: int = 10) -> dict[str, np.ndarray]:
    """The effectiveness measures (``userfair.measures.EFF``: HR, MRR, P, MAP, R, NDCG) at k
    of every user, each an (m,) float64 array, in registry order.

    A user without relevant items scores 0 everywhere (evaluated users always have some).
    """
    hit = hits(topk, relevant, k).astype(np.float64)
    n_relevant = relevant_counts(relevant)
    ideal_hits = np.minimum(n_relevant, k)
    ranks = np.arange(1, k + 1, dtype=np.float64)
    n_hits = hit.sum(axis=1)
    first_hit = np.where(n_hits > 0, hit.argmax(axis=1) + 1, np.inf)
    precision_at = np.cumsum(hit, axis=1) / ranks
    discount = 1.0 / np.log2(ranks + 1.0)
    idcg = np.cumsum(discount)[np.maximum(ideal_hits.astype(np.int64) - 1, 0)]
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = {
            "HR": (n_hits > 0).astype(np.float64),
            "MRR": np.where(n_hits > 0, 1.0 / first_hit, 0.0),
            "P": n_hits / k,
            "MAP": np.where(ideal_hits > 0, (precision_at * hit).sum(axis=1) / ideal_hits, 0.0),
            "R": np.where(n_relevant > 0, n_hits / n_relevant, 0.0),
            "NDCG": np.where(ideal_hits > 0, (hit * discount).sum(axis=1) / idcg, 0.0),
        }
    return {name: scores[name] for name in EFF}


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
