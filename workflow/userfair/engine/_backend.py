"""Where the pairwise block products run: numpy/scipy on the CPU, or torch (CPU or CUDA).

``device`` values: ``cpu`` numpy/scipy; ``cuda`` torch on the GPU; ``torch-cpu`` torch on
the CPU (the GPU code path, testable without a GPU); ``auto`` CUDA when torch sees one,
else numpy. torch is imported only when a torch path is chosen or ``auto`` looks for a GPU.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

DEVICES = ("auto", "cpu", "cuda", "torch-cpu")


def resolve(device: str):
    """``None`` for the numpy path, else the ``torch.device`` to run the block products on."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if device == "cpu":
        return None
    if device == "auto":
        try:
            import torch
        except ImportError:
            return None
        return torch.device("cuda") if torch.cuda.is_available() else None
    try:
        import torch
    except ImportError as error:
        raise ValueError(
            f"device={device!r} needs torch, which is not installed "
            "(pip install 'userfair[gpu]'); device='cpu' or 'auto' runs on numpy"
        ) from error

    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but torch sees no CUDA device")
    return torch.device("cuda" if device == "cuda" else "cpu")


def to_torch(array: np.ndarray, device):
    """A float64 (or int64 for integer input) tensor of ``array`` on ``device``."""
    import torch

    array = np.ascontiguousarray(array)
    dtype = torch.int64 if np.issubdtype(array.dtype, np.integer) else torch.float64
    return torch.as_tensor(array, dtype=dtype).to(device)


def blocks(m: int, block_size: int):
    """Consecutive (start, stop) row ranges of at most ``block_size`` rows covering ``m``."""
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    for start in range(0, m, block_size):
        yield start, min(start + block_size, m)


def binary_csr(matrix) -> sp.csr_matrix:
    """A float64 CSR copy of ``matrix`` with 1 at every nonzero entry (duplicates merged,
    explicit zeros dropped, sorted indices)."""
    matrix = sp.csr_matrix(matrix, dtype=np.float64, copy=True)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    matrix.data[:] = 1.0
    return matrix
