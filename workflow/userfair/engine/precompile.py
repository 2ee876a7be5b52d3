"""Compile every cached numba kernel of the library into numba's on-disk cache, once after
install (``scripts/setup-venv.sh`` runs ``python -m userfair.engine.precompile``).

Without it, the first call of each kernel in a fresh checkout compiles it: about 110 CPU
seconds for the whole library on this project's 2-core machine, paid again by every process
that finds the cache cold (each test worker, each Snakemake job of a new checkout). With it,
a process loads the kernels from the cache in about 10 s in all. The cache lies beside the
sources (``__pycache__``, or ``NUMBA_CACHE_DIR``) and is keyed by each source file's time
stamp, so an edited module recompiles only its own kernels; the stamp file
(:data:`STAMP_NAME`) only lets a second setup skip the run when nothing changed.

Every route runs once on tiny inputs (:func:`userfair.engine.warmup.tiny_inputs`): dense and
streamed, gamma 1 and < 1, the sampled estimate, the opt-in measures, the bootstrap and the
per-user decomposition. :func:`uncompiled` lists the cached kernels still without a compiled
signature (tests/library/test_warmup.py keeps it empty). The kernels that take a plugin's
compiled term cannot be cached by numba and compile in the process that uses them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import logging
import pkgutil
import sys
import time
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp
from numba.core.dispatcher import Dispatcher

import userfair
from userfair.bootstrap import uncertainty
from userfair.decomposition.decompose import decompose
from userfair.engine import generic_routes, uf_engine
from userfair.engine.warmup import tiny_inputs
from userfair.evaluate import evaluate
from userfair.opt_in import variant_parts, variants
from userfair.similarity import registry
from userfair.streamed import _plugin_kernels, stream_rows, streaming

log = logging.getLogger(__name__)

#: The stamp beside the package's cache: the digest of the sources it was compiled from.
STAMP_NAME = "kernels.sha256"


def _blocks(graded, vectors):
    """The opt-in similarities' row blocks of every kind the row kernels take: sparse and
    dense cosine (RCos, Vec), sparse overlap (Jacc) and dense rows (a plugin's)."""
    data = registry.SimilarityData.of(graded, vectors)
    found = {name: registry.block_function(name, data) for name in ("rcos", "vec", "jacc")}
    found["dense"] = lambda start, stop: found["jacc"](start, stop).toarray()
    return found


def _steps():
    inputs = tiny_inputs(m=14, n=18, k=3)
    graded = dataclasses.replace(
        inputs,
        grades=inputs.relevant.multiply(2.0).tocsr(),
        train_grades=sp.csr_matrix(inputs.train * 3.0),
    )
    vectors = np.random.default_rng(0).random((14, 4))
    extra = {"extra_similarities": ("rcos", "vec", "genre"), "user_vectors": vectors}
    weights = uncertainty.resample_weights(14, 3, seed=1)
    rows = stream_rows.prepare_rows(inputs.train, 1.0, None)
    threads = stream_rows.numba_threads()
    blocks = _blocks(graded, vectors)
    scores = np.random.default_rng(1).random((2, 14))
    items = np.unique(inputs.topk)
    # one train item per user, none shared: the items' cosines are sparse (CSR rows)
    lonely = dataclasses.replace(inputs, train=sp.csr_matrix(sp.eye(14, 18)))
    return {
        "dense": lambda: evaluate(inputs, k=3, route="dense"),
        "dense, gamma < 1": lambda: evaluate(inputs, k=3, route="dense", gamma=0.5),
        "streamed": lambda: evaluate(inputs, k=3, route="stream"),
        "streamed, gamma < 1": lambda: evaluate(inputs, k=3, route="stream", gamma=0.5),
        "streamed, ideal envy": lambda: evaluate(inputs, k=3, route="stream", envy_utility="ideal"),
        "sampled estimate": lambda: evaluate(inputs, k=3, sample_users=0.5),
        "opt-in, dense": lambda: evaluate(graded, k=3, route="dense", **extra),
        "opt-in, streamed": lambda: evaluate(graded, k=3, route="stream", **extra),
        "bootstrap": lambda: uncertainty.bootstrap(inputs, weights, k=3),
        "bootstrap, gamma < 1": lambda: uncertainty.bootstrap(inputs, weights, k=3, gamma=0.5),
        "decomposition": lambda: decompose(inputs, k=3),
        "decomposition, streamed": lambda: decompose(inputs, k=3, route="stream"),
        "decomposition, streamed, gamma < 1": lambda: decompose(
            inputs, k=3, route="stream", gamma=0.5
        ),
        "UF variants, streamed": lambda: [
            uf_engine.compiled_value(label, inputs, 3) for label in _plugin_kernels.KINDS
        ],
        "UF item cosines, sparse": lambda: streaming.item_cosines_for(
            lonely, items, threads, dense_items=0
        ),
        "opt-in row sums (scattered parts)": lambda: [
            variants.row_sums(block, scores, 0, 14, 4) for block in blocks.values()
        ],
        "opt-in per-user parts": lambda: [
            variant_parts.streamed_parts(block, scores, 4) for block in blocks.values()
        ],
        "plugin range": lambda: [
            *(
                _plugin_kernels.range_rows(*rows.pair_arguments(), kind, threads)
                for kind in _plugin_kernels.KINDS.values()
            ),
            *(  # the cosines of unit rows: sparse (RCos) and dense (Vec)
                generic_routes.unit_range(*generic_routes.unit_arguments(blocks[name]), 14, threads)
                for name in ("rcos", "vec")
            ),
        ],
    }


def _kernel_modules():
    for info in pkgutil.walk_packages(userfair.__path__, "userfair."):
        if info.name.startswith("userfair.workflow") or info.name.startswith("userfair.recbole"):
            continue
        source = Path(userfair.__path__[0], *info.name.split(".")[1:]).with_suffix(".py")
        if source.is_file() and "numba" in source.read_text():
            yield importlib.import_module(info.name)


def cached_kernels() -> dict[str, object]:
    """Every public numba dispatcher of the library compiled with ``cache=True``, by dotted
    name: what Python calls. A private or inlined one (``_count_row``, ``envy_row``) is a
    helper that kernels call, compiled into them."""
    out = {}
    for module in _kernel_modules():
        for name, value in vars(module).items():
            if not isinstance(value, Dispatcher):
                continue
            if value.__module__ != module.__name__ or name.startswith("_"):
                continue  # imported from another module (counted there), or a helper
            if value.targetoptions.get("inline") == "always":
                continue  # compiled into its callers
            if type(value._cache).__name__ != "NullCache":  # numba: cache=True
                out[f"{module.__name__}.{name}"] = value
    return out


def uncompiled() -> list[str]:
    """The cached kernels (:func:`cached_kernels`) without a compiled signature in this
    process."""
    return sorted(name for name, kernel in cached_kernels().items() if not kernel.signatures)


def digest() -> str:
    """sha256 of the library's sources (but the workflow's) and the numba version."""
    root = Path(userfair.__path__[0])
    sha = hashlib.sha256(numba.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        if "workflow" not in path.relative_to(root).parts:
            sha.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return sha.hexdigest()


def precompile(force: bool = False) -> dict[str, float]:
    """Run every route once on tiny inputs, so that each cached kernel is compiled (or
    loaded) and written to numba's cache; the wall seconds of each step (empty when the
    stamp says the sources are those of the last run and ``force`` is off)."""
    stamp = Path(userfair.__path__[0], "__pycache__", STAMP_NAME)
    want = digest()
    if not force and stamp.is_file() and stamp.read_text().strip() == want:
        return {}
    seconds = {}
    for name, step in _steps().items():
        start = time.perf_counter()
        step()
        seconds[name] = time.perf_counter() - start
        log.info("%s: %.1f s", name, seconds[name])
    missing = uncompiled()
    if missing:
        raise RuntimeError(f"kernels no step compiled: {', '.join(missing)}")
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(want + "\n")
    return seconds


def main(argv=None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    force = "--force" in (sys.argv[1:] if argv is None else argv)
    start = time.perf_counter()
    seconds = precompile(force)
    if seconds:
        print(
            f"[setup] numba kernels compiled into their cache: {len(cached_kernels())} "
            f"kernels, {time.perf_counter() - start:.0f} s"
        )
    else:
        print("[setup] numba kernels: cache up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
