"""The opt-in PUF of a cosine on the streamed route two ways, for
docs/performance.md#opt-in-by-the-items: by the items (``puf_items.cosine_puf``: the raw
extremes, then the sums column by column) against the pair row sums
(``variants.row_sums`` + ``finish``: every pair in blocks, the extremes beside), on random
dense vectors (Vec-like), genre distributions (Genre-like) and sparse graded rows
(RCos-like); the values agree to 1e-12 relative.

    PYTHONPATH=workflow .venv/bin/python benchmarks/opt_in_by_items.py [--users 20000] \
        [--kinds vec genre rcos]
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp

from userfair.opt_in.variants import finish, row_sums
from userfair.similarity import registry
from userfair.streamed import puf_items


def both(rows, scores) -> dict:
    """Seconds of each way, the extremes' part of the first, and the largest difference."""
    block = registry.CosineBlocks(rows)
    clock = time.perf_counter()
    found = puf_items.extremes(block)
    extremes_s = time.perf_counter() - clock
    clock = time.perf_counter()
    by_items, _ = puf_items.cosine_puf(block, scores, (found.lo, found.hi))
    items_s = extremes_s + time.perf_counter() - clock
    clock = time.perf_counter()
    by_pairs = finish(row_sums(block, scores, 0, rows.shape[0], 2048), scores)
    pairs_s = time.perf_counter() - clock
    diff = float(np.max(np.abs(by_items - by_pairs) / np.abs(by_pairs)))
    assert diff < 1e-12, diff
    return {"items_s": items_s, "extremes_s": extremes_s, "pairs_s": pairs_s,
            "extremes_by": found.lo_by, "max_rel_diff": diff}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--kinds", nargs="+", default=["vec", "genre", "rcos"])
    args = parser.parse_args()
    m = args.users
    rng = np.random.default_rng(0)
    scores = rng.random((2, m))
    graded = sp.random(m, 20_000, density=20 / 20_000, format="csr", random_state=1)
    graded.data = rng.integers(1, 6, graded.nnz).astype(float)
    inputs = {
        "vec-like (32 dims)": rng.normal(size=(m, 32)),
        "genre-like (18 genres)": rng.dirichlet(np.ones(18) * 0.3, size=m),
        "rcos-like (20 graded items of 20,000)": graded,
    }
    inputs = {name: rows for name, rows in inputs.items() if name.split("-")[0] in args.kinds}
    for rows in inputs.values():  # compile both routes' kernels before the clock
        both(rows[:200], scores[:, :200])
    for name, rows in inputs.items():
        found = both(rows, scores)
        print(
            f"{m:,} users, {name}: by the items {found['items_s']:.2f} s (extremes "
            f"{found['extremes_s']:.2f} s, {found['extremes_by']}), pair row sums "
            f"{found['pairs_s']:.2f} s, max relative difference {found['max_rel_diff']:.1e}"
        )


if __name__ == "__main__":
    main()
