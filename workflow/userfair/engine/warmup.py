"""Warm-up before the clock: every ``seconds`` the library reports times the computation
only, never the loading of its kernels (docs/performance.md#warm-up).

The first call of a compiled (numba) kernel in a process loads it from numba's on-disk
cache (or compiles it), and starts numba's thread pool; the first torch call on a device
initialises it. In a fresh process that is about 1 s for UF on 30 users (the computation
itself: under a millisecond). A timed function calls :func:`once` with a key naming what it
runs (e.g. ``("evaluate", device, ...)``) before it starts its clock: the first such call in
the process runs the same work on :func:`tiny_inputs`, untimed, and logs how long that took.
The warm-up runs the built-in measures only: a plugin measure may read what tiny inputs
lack (grades, user vectors), and its own kernels compile where it is first used.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable

import numpy as np
import scipy.sparse as sp

from userfair import measures
from userfair.files.inputs import Inputs

log = logging.getLogger(__name__)

_DONE: set = set()


def once(key: Hashable, function: Callable[[], object]) -> float:
    """Run ``function`` (the warm-up of ``key``) the first time ``key`` is seen in this
    process; its wall seconds then, else 0. The key is marked before the call, so a timed
    function may warm itself up by calling itself on tiny inputs."""
    if key in _DONE:
        return 0.0
    _DONE.add(key)
    start = time.perf_counter()
    with measures.builtins_only():
        function()
    seconds = time.perf_counter() - start
    log.info("warm-up %s (kernels loaded, not timed): %.3f s", key, seconds)
    return seconds


def tiny_inputs(m: int = 12, n: int = 16, k: int = 3, seed: int = 0) -> Inputs:
    """Synthetic inputs of ``m`` users and ``n`` items (3 genres), every user with train
    and test items and a top-k list of ``k`` distinct items: enough for every measure to
    run every kernel (similar pairs exist, the similarity range is not a point)."""
    rng = np.random.default_rng(seed)
    train = rng.random((m, n)) < 0.35
    train[np.arange(m), np.arange(m) % n] = True
    relevant = rng.random((m, n)) < 0.25
    relevant[np.arange(m), (np.arange(m) + 1) % n] = True
    topk = np.stack([rng.permutation(n)[:k] for _ in range(m)]).astype(np.int64)
    genres = np.zeros((n, 3), dtype=bool)
    genres[np.arange(n), np.arange(n) % 3] = True
    return Inputs(
        users=np.array([f"u{i:04d}" for i in range(m)]),
        items=np.array([f"i{i:04d}" for i in range(n)]),
        train=sp.csr_matrix(train, dtype=np.float64),
        train_rows=np.arange(m),
        relevant=sp.csr_matrix(relevant, dtype=np.float64),
        topk=topk,
        genres=sp.csr_matrix(genres, dtype=np.float64),
    )
