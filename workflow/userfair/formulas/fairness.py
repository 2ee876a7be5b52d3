"""Fairness measures (docs/method.md#fairness); lower is fairer for all of them.

Pairwise measures work in row blocks of ``block_size`` users, so memory stays
O(block_size * m) beyond the inputs. ``device`` chooses numpy/scipy or torch for the block
products (see ``userfair.engine._backend``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from userfair.engine import _backend
from userfair.formulas import _kernels, envy_reductions
from userfair.formulas.effectiveness import hits, relevant_counts, validate_lists
from userfair.measures import envy_measures
from userfair.similarity.pairwise import BLOCK_SIZE

#: Entries of a cache-sized chunk (1 MiB of float64) for elementwise passes over pairs.
CACHE_ENTRIES = 1 << 17
#: Entries of the largest dense (rows, items) block UF builds (256 MiB of float64).
UF_BLOCK_ENTRIES = 1 << 25
#: UF keeps the item-item cosines dense up to this many entries (256 MiB of float64).
UF_DENSE_ITEMS = 1 << 25


def recommended_items(topk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct recommended items and the lists re-indexed into them."""
    items, local = np.unique(topk, return_inverse=True)
    return items, local.reshape(topk.shape).astype(np.int64)


def lists_matrix(local: np.ndarray, r: int) -> sp.csr_matrix:
    """(m, r) binary list matrix: row u has ones at the items of L_u."""
    m, k = local.shape
    indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
    return sp.csr_matrix((np.ones(m * k), local.ravel(), indptr), shape=(m, r))


#: The utilities envy may use: P@k (the default) or |L & R_u| / min(k, |R_u|).
ENVY_UTILITIES = ("precision", "ideal")


def envy_denominators(relevant: sp.spmatrix, k: int, utility: str = "precision") -> np.ndarray:
    """Per user, what |L & R_u| is divided by: k (``precision``, P@k) or min(k, |R_u|)
    (``ideal``; 1 for a user without relevant items, whose counts are all 0)."""
    if utility == "precision":
        return np.full(relevant.shape[0], float(k))
    if utility == "ideal":
        denominator = np.minimum(relevant_counts(relevant), k).astype(np.float64)
        denominator[denominator == 0] = 1.0
        return denominator
    raise ValueError(f"unknown envy utility {utility!r}; expected one of {ENVY_UTILITIES}")


def envy(
    topk: np.ndarray,
    relevant: sp.spmatrix,
    k: int = 10,
    epsilon: float = 0.05,
    block_size: int = BLOCK_SIZE,
    device: str = "auto",
    utility: str = "precision",
) -> dict[str, float]:
    """Every envy measure (ME, MME, PEU: ``userfair.measures.envy_measures``) from the
    utilities phi_u(L_v) = |L_v & R_u| / d_u, with d_u = k (``utility="precision"``, P@k)
    or min(k, |R_u|) (``"ideal"``).

    envy(u, v) = max(phi_u(L_v) - phi_u(L_u), 0). Each user's row is reduced to its sum,
    its maximum and whether that maximum exceeds ``epsilon``; each measure's declared
    reduction (``userfair.formulas.envy_reductions``) turns their totals into its value:
    ME the mean over ordered pairs u != v, MME the mean over u of max_{v != u} envy(u, v),
    PEU the share of users whose max envy exceeds ``epsilon``. NaN for fewer than 2 users.
    A user without relevant items has utility 0 for every list.
    """
    relevant = _backend.binary_csr(relevant)
    topk = validate_lists(topk, k, relevant.shape)
    denominator = envy_denominators(relevant, k, utility)
    m = topk.shape[0]
    if m < 2:
        return {measure.name: math.nan for measure in envy_measures()}
    items, local = recommended_items(topk)
    relevant_rec = relevant[:, items]  # only recommended items can be shared hits
    own_counts = hits(local, relevant_rec, k).sum(axis=1)
    own = own_counts / denominator
    target = _backend.resolve(device)
    if target is None:
        total, max_envy = _envy_numpy(relevant_rec, local, own, denominator, block_size)
    else:
        total, max_envy = _envy_torch(relevant_rec, local, own, denominator, block_size, target)
    envious = int((max_envy > epsilon).sum())
    totals = envy_reductions.Totals.of_users(total, float(max_envy.sum()), envious, m)
    return envy_reductions.values(envy_measures(), totals)


def _envy_numpy(relevant_rec, local, own, denominator, block_size):
    """Sum of envy and each user's max envy, from the sparse count blocks R_u . L_v."""
    m = local.shape[0]
    lists_t = lists_matrix(local, relevant_rec.shape[1]).T.tocsr()
    total, max_envy = 0.0, np.zeros(m)
    for start, stop in _backend.blocks(m, block_size):
        counts = (relevant_rec[start:stop] @ lists_t).tocsr()  # (b, m), zeros implicit
        rows = np.repeat(np.arange(start, stop), np.diff(counts.indptr))
        # Only a nonzero count can beat the user's own utility (envy >= 0 otherwise 0).
        gain = np.maximum(counts.data / denominator[rows] - own[rows], 0.0)
        total += gain.sum()
        np.maximum.at(max_envy, rows, gain)
    return float(total), max_envy


def _envy_torch(relevant_rec, local, own, denominator, block_size, device):
    """As ``_envy_numpy`` with dense count blocks gathered on ``device``."""
    import torch

    m, k = local.shape
    lists = _backend.to_torch(local, device)
    own_t = _backend.to_torch(own, device)
    denominator_t = _backend.to_torch(denominator, device)
    total = torch.zeros((), dtype=torch.float64, device=device)
    max_envy = torch.zeros(m, dtype=torch.float64, device=device)
    for start, stop in _backend.blocks(m, block_size):
        dense = _backend.to_torch(relevant_rec[start:stop].toarray(), device)
        counts = torch.zeros((stop - start, m), dtype=torch.float64, device=device)
        for rank in range(k):
            counts += dense[:, lists[:, rank]]
        utility = counts / denominator_t[start:stop, None]
        gain = torch.clamp(utility - own_t[start:stop, None], min=0.0)
        total += gain.sum()
        max_envy[start:stop] = gain.max(dim=1).values
    return float(total), max_envy.cpu().numpy()


def unit_item_columns(train: sp.spmatrix, items: np.ndarray) -> sp.csc_matrix:
    """Columns ``items`` of the binarised train matrix, each scaled to unit L2 norm (an
    item without train interaction keeps its zero column)."""
    columns = _backend.binary_csr(train).tocsc()[:, items]
    counts = np.diff(columns.indptr)
    scale = 1.0 / np.sqrt(np.maximum(counts, 1)).astype(np.float64)
    return sp.csc_matrix(
        (np.repeat(scale, counts), columns.indices, columns.indptr), shape=columns.shape
    )


def _cache_rows(m: int, block_size: int) -> int:
    """Rows per chunk so that an elementwise pass over a (rows, m) slice stays in cache."""
    return max(1, min(block_size, CACHE_ENTRIES // max(m, 1)))


def recommended_item_cosines(train: sp.spmatrix, items: np.ndarray):
    """The (r, r) cosines of the binarised train columns of ``items``: dense (compiled) when
    they fit in :data:`UF_DENSE_ITEMS` entries, else CSR (a sparse product)."""
    unit_columns = unit_item_columns(train, items)  # (users, r)
    r = len(items)
    if r * r <= UF_DENSE_ITEMS:
        rows = unit_columns.tocsr()
        return _kernels.item_cosines(
            unit_columns.indptr, unit_columns.indices, unit_columns.data,
            rows.indptr, rows.indices, rows.data, r,
        )  # fmt: skip
    return (unit_columns.T @ unit_columns).tocsr()


def uf(
    topk: np.ndarray,
    train: sp.spmatrix,
    sim_uf: np.ndarray,
    k: int = 10,
    block_size: int = BLOCK_SIZE,
    device: str = "auto",
) -> float:
    """log(sum over similar pairs of sim_UF * d_L) / log(m (m - 1) / 2).

    ``sim_uf`` is taken as it is (the workflow passes the raw Jaccard, or its mix with the
    genre similarity, docs/method.md#uf). Similar pairs: unordered pairs with
    sim_UF >= mean + SD of sim_UF over all pairs.
    d_L(u, v) = (1/k^2) sum_{i in L_u, j in L_v} (1 - cos(x_i, x_j)) over the item
    columns x of the binarised ``train`` (all users); an item without train interaction
    has cosine 0 to everything. With s_u the sum of L_u's unit item columns,
    k^2 d_L(u, v) = k^2 - s_u . s_v. NaN with a single pair or a sum of 0.
    """
    sim_uf = np.asarray(sim_uf, dtype=np.float64)
    m = sim_uf.shape[0]
    topk = validate_lists(topk, k, (m, train.shape[1]))
    if sim_uf.shape != (m, m):
        raise ValueError(f"sim_uf must be ({m}, {m}), got {sim_uf.shape}")
    n_pairs = m * (m - 1) // 2
    if n_pairs < 2:
        return math.nan

    threshold = _kernels.pair_threshold(sim_uf)
    items, local = recommended_items(topk)
    r = len(items)
    target = _backend.resolve(device)
    item_cos = recommended_item_cosines(train, items)
    if target is None and not sp.issparse(item_cos):  # dense: one compiled pass over the pairs
        _kernels.use_job_cores()
        total = _kernels.similar_pairs_distance(sim_uf, threshold, local, item_cos, k)
        return uf_value(total / (k * k), n_pairs)
    lists = lists_matrix(local, r)
    rows_per_block = max(1, min(block_size, UF_BLOCK_ENTRIES // max(r, m)))
    buffer = np.empty((min(rows_per_block, m), r))
    total = 0.0
    for start, stop in _backend.blocks(m, rows_per_block):
        # (b, r): sum_{i in L_u} cos(x_i, x_j) for the users u of the block, every item j
        to_items = lists[start:stop] @ item_cos
        if sp.issparse(to_items):
            to_items = to_items.toarray(out=buffer[: stop - start])
        if target is None:
            total += _similar_pairs_distance(to_items, local, sim_uf, threshold, start, k)
        else:
            total += _dense_distance(to_items, local, sim_uf, threshold, start, k, target)
    return uf_value(total / (k * k), n_pairs)  # d_L has the factor 1/k^2


def uf_value(total: float, n_pairs: int) -> float:
    """log(total) / log(number of pairs); NaN when the sum is 0."""
    if total <= 0:
        return math.nan
    return math.log(total) / math.log(n_pairs)


def _similar_pairs_distance(to_items, local, sim_uf, threshold, start, k) -> float:
    """sum over the similar pairs u < v, u in the block, of sim_UF * k^2 d_L(u, v); only
    those pairs are gathered (numpy)."""
    stop = start + to_items.shape[0]
    upper = sim_uf[start:stop, start:]  # columns v >= start: each pair once, from u < v
    u, v = np.nonzero(upper >= threshold)
    keep = u < v
    u, v = u[keep], v[keep]
    weights = upper[u, v]
    # flat positions of to_items[u, j] for j in L_v: (pairs, k)
    positions = local[v + start]
    positions += (u * to_items.shape[1])[:, None]
    cosine_sums = np.take(to_items.reshape(-1), positions).sum(axis=1)
    return float((weights * (k * k - cosine_sums)).sum())


def _dense_distance(to_items, local, sim_uf, threshold, start, k, target) -> float:
    """As ``_similar_pairs_distance`` with dense (b, m) blocks on a torch device."""
    import torch

    stop = start + to_items.shape[0]
    to_items_t = _backend.to_torch(to_items, target)
    lists = _backend.to_torch(local, target)
    cosine_sums = torch.zeros((stop - start, local.shape[0]), dtype=torch.float64, device=target)
    for rank in range(k):
        cosine_sums += to_items_t[:, lists[:, rank]]
    sim = _backend.to_torch(sim_uf[start:stop], target)
    rows = torch.arange(start, stop, device=target)[:, None]
    columns = torch.arange(local.shape[0], device=target)[None, :]
    similar = (sim >= threshold) & (columns > rows)  # pairs u < v, each once
    weights = torch.where(similar, sim, torch.zeros_like(sim))
    return float((weights * (k * k - cosine_sums)).sum())


def puf(scores, sim: np.ndarray, block_size: int = BLOCK_SIZE, device: str = "auto") -> float:
    """Mean over unordered pairs {u, v} of sim(u, v) * |S(u) - S(v)|; NaN for m < 2."""
    scores = np.asarray(scores, dtype=np.float64)
    m = scores.size
    if sim.shape != (m, m):
        raise ValueError(f"sim must be ({m}, {m}), got {sim.shape}")
    if m < 2:
        return math.nan
    target = _backend.resolve(device)
    total = 0.0
    if target is None:
        rows = _cache_rows(m, block_size)
        buffer = np.empty((rows, m))
        for start, stop in _backend.blocks(m, rows):
            gaps = buffer[: stop - start]
            np.subtract(scores[start:stop, None], scores[None, :], out=gaps)
            np.abs(gaps, out=gaps)
            gaps *= sim[start:stop]
            total += gaps.sum()
    else:
        scores_t = _backend.to_torch(scores, target)
        for start, stop in _backend.blocks(m, block_size):
            gaps = (scores_t[start:stop, None] - scores_t[None, :]).abs()
            total += float((gaps * _backend.to_torch(sim[start:stop], target)).sum())
    total = float(total)
    # The diagonal contributes |S(u) - S(u)| = 0; ordered pairs count each pair twice.
    return total / (m * (m - 1))
