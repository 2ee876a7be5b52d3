"""Row blocks of a raw user similarity (``userfair.similarity.registry`` block functions):
how many rows a block holds and the unordered pairs u < v it covers. The generic engines
(``userfair.engine.generic_routes`` for pair measures, ``userfair.engine.uf_engine`` for the
UF kind) read every similarity through these, one (rows, m) block at a time, never m x m."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Entries of one dense (rows, m) block of pair terms (16 MiB of float64).
BLOCK_ENTRIES = 1 << 21


def block_rows(width: int, block_size: int) -> int:
    """Rows of a block whose rows hold ``width`` entries (at most ``block_size``)."""
    return max(1, min(block_size, BLOCK_ENTRIES // max(width, 1)))


def upper(block, start: int, m: int):
    """(u, v, raw) of the stored entries with v > u of a sparse block of rows start:."""
    block = sp.csr_matrix(block)
    u = np.repeat(np.arange(start, start + block.shape[0]), np.diff(block.indptr))
    keep = block.indices > u
    return u[keep], block.indices[keep].astype(np.int64), block.data[keep].astype(np.float64)


def dense_upper(block, start: int, m: int):
    """(u, v, raw) of every pair v > u of a block of rows start: (dense or sparse)."""
    dense = block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)
    b = dense.shape[0]
    u_local, v = np.nonzero(np.arange(m)[None, :] > np.arange(start, start + b)[:, None])
    return u_local + start, v, dense[u_local, v]


def pairs_of(block, start: int, m: int):
    """(u, v, raw) of the pairs u < v of a block that may be non-zero: the stored entries
    of a sparse block, every pair of a dense one."""
    return upper(block, start, m) if sp.issparse(block) else dense_upper(block, start, m)
