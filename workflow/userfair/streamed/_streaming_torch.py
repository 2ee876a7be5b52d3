"""Row blocks of the streamed measures on a torch device (``userfair.streamed.streaming`` with
``device`` ``cuda``, or ``torch-cpu`` to run this code on the CPU).

A block of b evaluated users u = lo .. hi - 1 meets the users v >= lo in dense (b, m - lo)
arrays. The intersections |H_u & H_v| are one sparse-dense product of the train rows in
float32 (exact for counts below 2^24); the raw cosine, Jaccard and genre similarity follow
with the floating-point operations of ``userfair.streamed._streaming_kernels``, in float64, and so
do all sums. Only the pairs v > u count (each unordered pair once, as in the kernels), and
envy takes the ordered pairs (u, v), v != u, over all m users. Each function returns one
row laid out as the kernel's per-thread output (``ONE_*``, ``TWO_*`` columns; envy: sum,
sum of max envy, envious users), so ``userfair.streamed.streaming`` reduces both paths alike.

Memory on the device: the train rows and the relevant items as CSR, the lists, UF's item
cosines (dense (r, r) or CSR, as chosen for the CPU), and per block about
:data:`PAIR_BYTES` bytes per pair plus a few (b, n) and (b, r) rows: :func:`block_rows`
bounds b by :data:`MEMORY_SHARE` of the free memory.
"""

from __future__ import annotations

import warnings

import numpy as np
import psutil
import scipy.sparse as sp
import torch

from userfair.decomposition import _decompose_kernels as parts
from userfair.streamed import _streaming_kernels as kern

#: Bytes a block holds per (u, v) entry at most: the intersections, cosine, Jaccard, their
#: temporaries and masks (and the genre similarity's when gamma < 1).
PAIR_BYTES = 128
#: A block may take this share of the device's free memory.
MEMORY_SHARE = 0.5
#: UF's item cosines, CSR on the host, are made dense (r, r) on the device when that takes
#: at most this share of its free memory.
DENSE_COSINES_MEMORY = 0.25
F64 = torch.float64


def free_bytes(device) -> int:
    """Memory free for new tensors on ``device`` (the caching allocator's spare included)."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return psutil.virtual_memory().available


def block_rows(block_size: int, row_bytes: int, device) -> int:
    """Rows per block: ``block_size``, fewer when ``row_bytes`` per row would not fit."""
    fit = int(MEMORY_SHARE * free_bytes(device)) // max(row_bytes, 1)
    return max(1, min(block_size, fit))


def _tensor(array, device, dtype=None):
    return torch.as_tensor(np.ascontiguousarray(array), dtype=dtype, device=device)


def _csr(indptr, indices, values, shape):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(indptr, indices, values, shape, check_invariants=False)


class Rows:
    """The rows of a binary CSR matrix on the device; :meth:`dense` gives a block of them."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, width: int, device):
        self.indptr = np.asarray(indptr, dtype=np.int64)  # on the host: block bounds
        self.crow = _tensor(self.indptr, device)
        self.columns = _tensor(indices, device, torch.int64)
        self.owner = torch.repeat_interleave(
            torch.arange(len(self.indptr) - 1, device=device), torch.diff(self.crow)
        )
        self.width, self.device = width, device

    def dense(self, lo: int, hi: int, dtype=torch.float32):
        """(hi - lo, width) rows lo:hi, 1 at each entry."""
        p, q = int(self.indptr[lo]), int(self.indptr[hi])
        out = torch.zeros((hi - lo, self.width), dtype=dtype, device=self.device)
        out[self.owner[p:q] - lo, self.columns[p:q]] = 1.0
        return out

    def times(self, lo: int, block):
        """rows lo: (all later rows) @ ``block``: (m - lo, block.shape[1]) float32."""
        p = int(self.indptr[lo])
        later = _csr(
            self.crow[lo:] - p,
            self.columns[p:],
            torch.ones(len(self.columns) - p, dtype=torch.float32, device=self.device),
            (len(self.indptr) - 1 - lo, self.width),
        )
        return later @ block


class Train:
    """The evaluated users' train rows (``streaming._Rows``) on ``device`` and the pair
    values of a block of them."""

    def __init__(self, data, gamma: float, device):
        self.m, self.gamma, self.device = data.m, float(gamma), device
        self.rows = Rows(data.row_ptr, data.row_items, data.items, device)
        self.degrees = _tensor(data.degrees, device, F64)
        self.genres = _tensor(data.dist.T, device, F64)  # (g, m): one genre a row
        self.entropy = _tensor(data.own, device, F64)

    def row_bytes(self) -> int:
        """Device bytes of one row of a block, at most."""
        return PAIR_BYTES * self.m + 4 * self.rows.width

    def block(self, lo: int, hi: int):
        """``(upper, sharing, cosine, jaccard)``, (b, m - lo) each, of the users lo:hi
        (rows) against lo:m (columns): ``upper`` marks the pairs v > u, ``sharing`` those
        of them sharing an item; cosine and Jaccard are read only where ``sharing``."""
        inter = self.rows.times(lo, self.rows.dense(lo, hi).T).T
        inter = inter.to(F64, memory_format=torch.contiguous_format)
        b, w = inter.shape
        upper = (
            torch.arange(w, device=self.device)[None, :]
            > torch.arange(b, device=self.device)[:, None]
        )
        sharing = upper & (inter > 0.0)
        du, dv = self.degrees[lo:hi, None], self.degrees[None, lo:]
        cosine = inter / torch.sqrt(du * dv)
        jaccard = inter / (du + dv - inter)
        return upper, sharing, cosine, jaccard

    def uf_similarity(self, lo: int, hi: int, sharing, jaccard):
        """Raw sim_UF = gamma * jacc + (1 - gamma) * (1 - JS) of the block (jacc 0 for a
        pair sharing no item); the Jaccard itself when gamma = 1."""
        jaccard = torch.where(sharing, jaccard, 0.0)
        if self.gamma == 1.0:
            return jaccard
        mixed = torch.zeros_like(jaccard)  # sum over genres of x log2 x, x the mixture
        for genre in self.genres:
            x = (genre[lo:hi, None] + genre[None, lo:]) / 2.0
            mixed += torch.where(x > 0.0, x * torch.log2(x), 0.0)
        js = -mixed - (self.entropy[lo:hi, None] + self.entropy[None, lo:]) / 2.0
        similarity = 1.0 - js.clamp(0.0, 1.0)
        return self.gamma * jaccard + (1.0 - self.gamma) * similarity

    def pass_one_rows(self, lo: int, hi: int) -> np.ndarray:
        """(1, 8): the columns of ``kern.pass_one_rows`` over the pairs u < v, u in lo:hi."""
        upper, sharing, cosine, jaccard = self.block(lo, hi)
        out = np.zeros((1, 8))
        out[0, kern.ONE_COS_MIN : kern.ONE_JACC_MAX + 1] = (np.inf, -np.inf, np.inf, -np.inf)
        cosine, shared_jaccard = cosine[sharing], jaccard[sharing]
        if len(cosine):
            out[0, kern.ONE_SHARING] = len(cosine)
            out[0, kern.ONE_COS_MIN] = cosine.min().item()
            out[0, kern.ONE_COS_MAX] = cosine.max().item()
            out[0, kern.ONE_JACC_MIN] = shared_jaccard.min().item()
            out[0, kern.ONE_JACC_MAX] = shared_jaccard.max().item()
        del cosine, shared_jaccard
        values = self.uf_similarity(lo, hi, sharing, jaccard)[upper]
        if len(values):
            mean = values.mean()
            out[0, kern.ONE_UF_N] = len(values)
            out[0, kern.ONE_UF_MEAN] = mean.item()
            out[0, kern.ONE_UF_M2] = ((values - mean) ** 2).sum().item()
        return out


class Lists:
    """The top-k lists (re-indexed into the r recommended items) on the device and UF's
    item cosines C (from the arguments ``streaming.item_cosines_for`` gives): dense (r, r)
    when they come dense or fit :data:`DENSE_COSINES_MEMORY`, else CSR."""

    def __init__(self, local, r, dense, cosines, c_ptr, c_items, c_values, device):
        self.local = _tensor(local, device, torch.int64)  # (m, k)
        self.r, self.device = r, device
        self.sparse = not dense
        if dense:
            self.cosines = _tensor(cosines, device, F64)
            return
        matrix = sp.csr_matrix((c_values, c_items, c_ptr), shape=(r, r))
        matrix.sort_indices()
        self.cosines = _csr(
            _tensor(matrix.indptr, device, torch.int64),
            _tensor(matrix.indices, device, torch.int64),
            _tensor(matrix.data, device, F64),
            (r, r),
        )
        if 8 * r * r <= DENSE_COSINES_MEMORY * free_bytes(device):  # made dense there
            self.cosines, self.sparse = self.cosines.to_dense(), False

    def row_bytes(self) -> int:
        return 16 * self.r

    def cosine_sums(self, lo: int, u, v):
        """sum over i in L_u, j in L_v of C[i, j] for the pairs (u, v) (u, v: user indices,
        u relative to ``lo``, v absolute), by the cheaper way as the kernel chooses it:
        with dense C, k^2 look-ups per pair when they are fewer than the row sums
        t_u = sum_{i in L_u} C[i, .] (k r per user, counted at 1/8: they stream); else the
        row sums of the block's users and k look-ups per pair."""
        k = self.local.shape[1]
        b = int(u.max()) + 1
        if not self.sparse and len(u) * k * k <= k * self.r * b // 8 + len(u) * k:
            theirs = self.local[v]  # (pairs, k)
            out = torch.zeros(len(u), dtype=F64, device=self.device)
            for item in self.local[u + lo].T:  # i in L_u, in rank order
                out += self.cosines[item[:, None], theirs].sum(dim=1)
            return out
        return self.row_sums(lo, lo + b)[u[:, None], self.local[v]].sum(dim=1)

    def row_sums(self, lo: int, hi: int):
        """(b, r): sum over i in L_u of C[i, j], for the users u of lo:hi."""
        lists = self.local[lo:hi]
        if not self.sparse:  # each list's rows of C summed (in rank order on the CPU)
            return torch.nn.functional.embedding_bag(lists, self.cosines, mode="sum")
        onehot = torch.zeros((hi - lo, self.r), dtype=F64, device=self.device)
        rows = torch.arange(hi - lo, device=self.device)[:, None].expand_as(lists)
        onehot.index_put_((rows, lists), torch.ones_like(lists, dtype=F64), accumulate=True)
        return (self.cosines @ onehot.T).T


def pass_two_rows(train, lists, precision, ndcg, jacc_lo, threshold, lo, hi):
    """(1, 4): the columns of ``kern.pass_two_rows`` over the pairs u < v, u in lo:hi
    (``precision``, ``ndcg``: the per-user scores as (m,) float64 tensors on the device)."""
    upper, sharing, cosine, jaccard = train.block(lo, hi)
    del cosine  # the cosine PUF is by the items (userfair.streamed.puf_items)
    out = np.zeros((1, 4))
    u, v = sharing.nonzero(as_tuple=True)
    u, v = u + lo, v + lo
    gap_p = (precision[u] - precision[v]).abs()
    gap_n = (ndcg[u] - ndcg[v]).abs()
    shared_jaccard = jaccard[sharing] - jacc_lo
    out[0, kern.TWO_P_JACC] = (shared_jaccard * gap_p).sum().item()
    out[0, kern.TWO_NDCG_JACC] = (shared_jaccard * gap_n).sum().item()
    del u, v, gap_p, gap_n, shared_jaccard
    values = train.uf_similarity(lo, hi, sharing, jaccard)
    # at gamma = 1 a pair sharing no item is never similar (the kernel visits only sharing
    # pairs there); with the genre similarity every pair is
    similar = (sharing if train.gamma == 1.0 else upper) & (values >= threshold)
    u, v = similar.nonzero(as_tuple=True)
    if len(u):
        k = lists.local.shape[1]
        cosine_sums = lists.cosine_sums(lo, u, v + lo)
        out[0, kern.TWO_UF] = (values[u, v] * (k * k - cosine_sums)).sum().item()
        out[0, kern.TWO_UF_PAIRS] = len(u)
    return out


def envy_rows(relevant, lists, own, denominator, epsilon, lo, hi):
    """(1, 3) as ``kern.envy_rows`` over u in lo:hi: sum of envy(u, v) over v != u, sum of
    each u's max envy, the number of u whose max envy exceeds ``epsilon`` (``relevant``: the
    relevant recommended items as :class:`Rows`; ``own``, ``denominator``: (m,) float64)."""
    hits = relevant.dense(lo, hi).T.contiguous()  # (r, b): R_u as columns
    # (m, b): |L_v & R_u|, the rows of L_v's items summed, a row per v
    counts = torch.nn.functional.embedding_bag(lists.local, hits, mode="sum")
    gain = counts.to(F64) / denominator[None, lo:hi] - own[None, lo:hi]
    del counts
    rows = torch.arange(hi - lo, device=gain.device)
    gain[rows + lo, rows] = 0.0  # v = u is no pair
    gain.clamp_(min=0.0)
    worst = gain.max(dim=0).values
    return np.array(
        [[gain.sum().item(), worst.sum().item(), float((worst > epsilon).sum().item())]]
    )


def decompose_pair_rows(train, lists, precision, ndcg, cos_lo, jacc_lo, threshold, lo, hi):
    """(m, ``parts.PAIR_ROWS``): the per-user columns of ``parts.pair_rows`` over the pairs
    u < v, u in lo:hi: each PUF term (s - lo) |S_u - S_v| to the worse-served user's
    ``*_DIS`` and the better-served one's ``*_ADV`` column, the shifted cosine to both, UF's
    terms of the similar pairs to both (``precision``, ``ndcg``: (m,) float64 tensors)."""
    upper, sharing, cosine, jaccard = train.block(lo, hi)
    out = torch.zeros((parts.PAIR_ROWS, train.m), dtype=F64, device=train.device)
    u, v = sharing.nonzero(as_tuple=True)
    shifted = {"cos": cosine[u, v] - cos_lo, "jacc": jaccard[u, v] - jacc_lo}
    del cosine
    u, v = u + lo, v + lo
    columns = (
        (parts.P_COS_DIS, parts.P_COS_ADV, "cos", precision),
        (parts.P_JACC_DIS, parts.P_JACC_ADV, "jacc", precision),
        (parts.N_COS_DIS, parts.N_COS_ADV, "cos", ndcg),
        (parts.N_JACC_DIS, parts.N_JACC_ADV, "jacc", ndcg),
    )
    for dis, adv, kind, score in columns:
        gap = score[u] - score[v]  # < 0: u is the worse served (a tie adds 0)
        term = shifted[kind] * gap.abs()
        out[dis].index_add_(0, torch.where(gap < 0, u, v), term)
        out[adv].index_add_(0, torch.where(gap < 0, v, u), term)
    out[parts.COS_SUM].index_add_(0, u, shifted["cos"]).index_add_(0, v, shifted["cos"])
    del u, v, shifted
    values = train.uf_similarity(lo, hi, sharing, jaccard)
    similar = (sharing if train.gamma == 1.0 else upper) & (values >= threshold)
    u, v = similar.nonzero(as_tuple=True)
    if len(u):
        k = lists.local.shape[1]
        terms = values[u, v] * (k * k - lists.cosine_sums(lo, u, v + lo))
        out[parts.UF_TERMS].index_add_(0, u + lo, terms).index_add_(0, v + lo, terms)
    return out.T.cpu().numpy()


def decompose_envy_rows(relevant, lists, own, denominator, lo, hi):
    """(m, ``parts.ENVY_ROWS``): the per-user columns of ``parts.envy_rows`` over u in
    lo:hi: u's envies, what each v is envied, u's max envy, and that max shared equally by
    the v attaining it (nobody when it is 0); arguments as :func:`envy_rows`'s."""
    hits = relevant.dense(lo, hi).T.contiguous()
    counts = torch.nn.functional.embedding_bag(lists.local, hits, mode="sum")
    gain = counts.to(F64) / denominator[None, lo:hi] - own[None, lo:hi]  # (m, b): v, u
    del counts
    rows = torch.arange(hi - lo, device=gain.device)
    gain[rows + lo, rows] = 0.0
    gain.clamp_(min=0.0)
    worst = gain.max(dim=0).values
    attains = (gain == worst[None, :]) & (worst[None, :] > 0.0)
    share = torch.where(worst > 0.0, worst / attains.sum(dim=0).clamp(min=1), 0.0)
    out = torch.zeros((parts.ENVY_ROWS, gain.shape[0]), dtype=F64, device=gain.device)
    out[parts.ENVIES, lo:hi] = gain.sum(dim=0)
    out[parts.ENVIED] = gain.sum(dim=1)
    out[parts.MAX_ENVY, lo:hi] = worst
    out[parts.MAX_ENVIED] = (attains * share[None, :]).sum(dim=1)
    return out.T.cpu().numpy()


def weighted_spread(unit, scores: np.ndarray, device) -> np.ndarray:
    """(q,) A_S = sum over the pairs u < v of (unit_u . unit_v) |S_u - S_v| for each row S of
    ``scores`` (q, m), ``unit`` the (m, n) unit rows (CSR or dense; its zeros join no
    pair): ``userfair.streamed.puf_items.weighted_spread`` on ``device``. The same
    column-by-column gap sums, sum_p (x_{p+1} - x_p) W_{<=p} W_{>p}, in float64: each column's
    entries ordered by score with one sort of the keys (column, rank of the user's score),
    the W's of every column from one running sum over all entries (less its value at the
    column's start), the columns' sums added in column order on the host. Memory on the
    device: up to about 150 bytes per stored entry (int64 keys and float64 temporaries)."""
    unit = sp.csr_matrix(unit, dtype=np.float64, copy=True)
    unit.sum_duplicates()
    n = unit.shape[1]
    indptr = _tensor(unit.indptr, device, torch.int64)
    columns = _tensor(unit.indices, device, torch.int64)
    weights = _tensor(unit.data, device, F64)
    m = len(indptr) - 1
    owner = torch.repeat_interleave(torch.arange(m, device=device), torch.diff(indptr))
    counts = torch.bincount(columns, minlength=n)
    col_end = torch.cumsum(counts, 0)  # one past each column's last entry
    col_start = col_end - counts
    out = np.zeros(len(scores))
    for j, x in enumerate(np.atleast_2d(np.asarray(scores, dtype=np.float64))):
        x = _tensor(x, device, F64)
        rank = torch.empty(m, dtype=torch.int64, device=device)
        rank[torch.argsort(x, stable=True)] = torch.arange(m, device=device)
        order = torch.argsort(columns * m + rank[owner])  # keys are distinct: no ties
        col, xs, ws = columns[order], x[owner[order]], weights[order]
        running = torch.cumsum(ws, 0)
        start = col_start[col]
        before = torch.where(start > 0, running[(start - 1).clamp(min=0)], 0.0)
        below = running - before  # W_{<=p} inside the column
        above = running[col_end[col] - 1] - running  # W_{>p}
        same = col[1:] == col[:-1]
        terms = torch.where(same, (xs[1:] - xs[:-1]) * below[:-1] * above[:-1], 0.0)
        sums = torch.zeros(n, dtype=F64, device=device).index_add_(0, col[:-1], terms)
        out[j] = float(sum(sums.cpu().numpy().tolist()))
    return out
