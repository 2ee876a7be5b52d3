"""The generic engine: the routes of the plugin measures (docs/plugins.md#routes) and of the
built-in pair measures declared with a term (``userfair.formulas.pair_terms``, served here
as a PairMeasure: ``userfair.plugins.builtin_pair``), generic over their two kinds:
a UserMeasure is called on the per-user scores it declares (with bootstrap multiplicities
as weights), a PairMeasure's terms are summed over the unordered pairs u < v in row blocks
of the raw similarity (``userfair.similarity.registry`` block functions), min-max normalised
over those pairs as PUF's. Memory: one (rows, m) block at a time, never m x m. A
declaration of the UF kind other than the paper's UF is handed to the generic UF engine
(``userfair.engine.uf_engine``) on every route: its value, its resamples, its shares.

When the term is 0 wherever the similarity is 0 (checked at load:
``userfair.plugins.zero_at_zero``) and the smallest raw similarity is 0, only the stored
entries of a sparse block (the pairs that share an item, for Cos and Jacc) are visited;
otherwise every pair is, in dense blocks, which the streamed route says once. A term
compiled with numba (``PairMeasure.term``) runs on the streamed route inside compiled row
loops instead (``userfair.streamed._plugin_kernels``), no block at all: for Cos and Jacc
the raw similarity from the shared items' counts, for RCos, Vec and Genre the cosine of
the registry's unit rows (the shared entries' products; a dot product a pair for Vec's
dense rows).

Bootstrap: with W the (B, m) multiplicities, the weighted pair sum of every resample is
sum_{u<v} w_u w_v t(u, v), one product of each block with W per block, over the
P_w = (N^2 - sum w^2) / 2 pairs of distinct copies of distinct users; a user's copies
never pair (as the built-in measures' bootstrap).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from userfair import plugins
from userfair.engine import uf_engine
from userfair.engine.pair_blocks import block_rows
from userfair.engine.pair_blocks import dense_upper as _dense_upper
from userfair.engine.pair_blocks import upper as _upper
from userfair.formulas import effectiveness, graded
from userfair.measures import generic, get, unserved
from userfair.opt_in import variants
from userfair.similarity import registry
from userfair.similarity.pairwise import BLOCK_SIZE
from userfair.streamed import _plugin_kernels, stream_rows
from userfair.streamed import estimate as sampled
from userfair.streamed.pair_records import check_stats

log = logging.getLogger(__name__)

_said: set[str] = set()


def scores_of(inputs, k: int, needed, per_user=None) -> dict[str, np.ndarray]:
    """The per-user scores ``needed`` (effectiveness names, gNDCG with grades; None, what
    a measure of the UF kind reads, is skipped)."""
    needed = {name for name in needed if name is not None}
    out = dict(per_user or {})
    if any(name not in out and name != "gNDCG" for name in needed):
        out.update(effectiveness.per_user(inputs.topk, inputs.relevant, k))
    if "gNDCG" in needed and "gNDCG" not in out:
        if inputs.grades is None:
            raise ValueError("a plugin reads gNDCG: load the inputs with grades (--grade FIELD)")
        out["gNDCG"] = graded.gndcg(inputs.topk, inputs.grades, k)
    return out


def raw_range(block, m: int, block_size: int = BLOCK_SIZE) -> tuple[float, float]:
    """The smallest and largest raw similarity over the unordered pairs (unstored entries
    of sparse blocks count as 0); (0, 0) without pairs."""
    lo, hi, unstored = math.inf, -math.inf, False
    step = block_rows(m, block_size)
    for start in range(0, m, step):
        stop = min(m, start + step)
        raw = block(start, stop)
        if sp.issparse(raw):
            u, _, values = _upper(raw, start, m)
            pairs = sum(m - 1 - row for row in range(start, stop))
            unstored |= u.size < pairs
        else:
            _, _, values = _dense_upper(raw, start, m)
        if values.size:
            lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
    if unstored:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return (0.0, 0.0) if lo > hi else (lo, hi)


class PairPass:
    """The pair terms of one plugin PairMeasure over one similarity's blocks."""

    def __init__(self, name: str, block, m: int, lo: float, hi: float, block_size: int):
        self.declaration = get(name)
        self.plugin = plugins.instance(name)
        self.block, self.m, self.lo, self.span = block, m, lo, hi - lo
        self.step = block_rows(m, block_size)
        self.sparse_only = plugins.zero_at_zero(name) and lo == 0.0

    def _terms(self, s, u, v, raw):
        sim = (raw - self.lo) / self.span if self.span > 0 else np.zeros_like(raw)
        return plugins.checked_terms(self.plugin, self.declaration, s[u], s[v], sim)

    def blocks(self, s):
        """(u, v, terms) of each row block (only stored pairs when ``sparse_only``)."""
        for start in range(0, self.m, self.step):
            raw = self.block(start, min(self.m, start + self.step))
            if self.sparse_only and sp.issparse(raw):
                u, v, values = _upper(raw, start, self.m)
            else:
                u, v, values = _dense_upper(raw, start, self.m)
            yield start, u, v, self._terms(s, u, v, values)

    def mean(self, s) -> float:
        pairs = self.m * (self.m - 1) / 2
        if pairs == 0:
            return math.nan
        total = math.fsum(float(terms.sum()) for _, _, _, terms in self.blocks(s))
        return total / pairs

    def weighted_means(self, s, weights: np.ndarray) -> np.ndarray:
        """(B,) the mean over the pairs of distinct copies of distinct users of each
        resample of ``weights`` ((B, m) multiplicities)."""
        w = weights.astype(np.float64)
        totals = np.zeros(w.shape[0])
        for _, u, v, terms in self.blocks(s):
            if u.size:
                totals += (w[:, u] * w[:, v]) @ terms
        n = w.sum(axis=1)
        pairs = (n * n - (w * w).sum(axis=1)) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(pairs > 0, totals / pairs, np.nan)


def _similarity_blocks(inputs, label: str, vectors, cache: dict):
    if label not in cache:
        data = registry.SimilarityData.of(inputs, vectors)
        entry = registry.entry(label)
        cache[label] = registry.block_function(entry.name, data)
    return cache[label]


def _pass(name, inputs, vectors, block_size, cache, route):
    decl = get(name)
    block = _similarity_blocks(inputs, decl.similarity, vectors, cache)
    m = len(inputs.users)
    key = ("range", decl.similarity)
    if key not in cache:
        cache[key] = raw_range(block, m, block_size)
    pair_pass = PairPass(name, block, m, *cache[key], block_size)
    if route == "stream" and not pair_pass.sparse_only and name not in _said:
        _said.add(name)
        why = (
            "its term is not 0 where the similarity is 0"
            if not plugins.zero_at_zero(name)
            else f"the smallest {decl.similarity} similarity is not 0"
        )
        log.warning("%s: %s, so every pair is visited (dense blocks of rows)", name, why)
    return pair_pass


@dataclass(frozen=True)
class _CompiledRoute:
    """A pair plugin's compiled term on the row loops: ``total(scores, lo, span, sparse)``
    is the sum over the unordered pairs, ``by_row(scores, lo, span, sparse, sample)`` each
    sampled row's sum over every other user; ``lo``, ``hi`` the raw similarity's range;
    ``sparse``: only the pairs sharing an item (entry) are visited."""

    total: Callable
    by_row: Callable
    lo: float
    hi: float
    sparse: bool
    m: int


def _counted(decl, term, inputs, cache: dict, stats):
    """Cos and Jacc: the raw similarity from the shared items' counts."""
    kind = _plugin_kernels.KINDS[decl.similarity]
    if "rows" not in cache:
        cache["rows"] = stream_rows.prepare_rows(inputs.train_of_evaluated(), 1.0, None)
        cache["threads"] = stream_rows.numba_threads()
    rows, threads = cache["rows"], cache["threads"]
    args = rows.pair_arguments()
    key = ("compiled range", decl.similarity)
    if key not in cache and stats is not None:  # pass one's raw values: no pass of its own
        check_stats(stats, inputs)
        cache[key] = stats.cos_range if decl.similarity == "Cos" else stats.jacc_range
    if key not in cache:
        low, high, shared = _plugin_kernels.range_rows(*args, kind, threads)
        cache[key] = _shared_range(low, high, shared, rows.m)
    lo, hi = cache[key]

    every_row = np.arange(rows.m, dtype=np.int64)

    def total(s, lo, span, sparse):
        return _plugin_kernels.term_rows(
            *args, kind, s, lo, span, sparse, term, every_row, False, threads
        ).sum()

    def by_row(s, lo, span, sparse, sample):
        return _plugin_kernels.term_rows(
            *args, kind, s, lo, span, sparse, term, sample, True, threads
        )

    return total, by_row, lo, hi, rows.m


def _shared_range(low: float, high: float, shared: float, m: int) -> tuple[float, float]:
    """The raw range over every pair from the extremes over the pairs sharing an item: a
    pair sharing none has raw 0, the smallest possible."""
    low = 0.0 if shared < m * (m - 1) / 2 else low
    high = 0.0 if shared == 0 else high
    return low, high


def unit_arguments(blocks) -> tuple[bool, tuple]:
    """(sparse, the kernels' first arguments) of a cosine's unit rows
    (``registry.CosineBlocks``): the CSR rows and columns (users ascending), or the dense
    (m, d) rows."""
    if blocks.sparse:
        unit, columns = blocks.unit, blocks.columns
        return True, (unit.indptr, unit.indices, unit.data,
                      columns.indptr, columns.indices, columns.data)  # fmt: skip
    return False, (np.ascontiguousarray(blocks.unit, dtype=np.float64),)


def unit_range(sparse_rows: bool, args: tuple, m: int, threads: int) -> tuple[float, float]:
    """The raw range of a cosine of unit rows over every unordered pair (compiled)."""
    if m < 2:
        return 0.0, 0.0
    if sparse_rows:
        return _shared_range(*_plugin_kernels.unit_range_rows(*args, m, threads), m)
    return _plugin_kernels.dense_range_rows(*args, threads)


def _unit(decl, term, inputs, cache: dict, vectors):
    """RCos, Vec and Genre: the raw cosine of the registry's unit rows."""
    blocks = _similarity_blocks(inputs, decl.similarity, vectors, cache)
    m = len(inputs.users)
    threads = stream_rows.numba_threads()
    sparse_rows, args = unit_arguments(blocks)
    key = ("compiled range", decl.similarity)
    if key not in cache:
        cache[key] = unit_range(sparse_rows, args, m, threads)
    lo, hi = cache[key]
    every_row = np.arange(m, dtype=np.int64)
    kernel = _plugin_kernels.unit_term_rows if sparse_rows else _plugin_kernels.dense_term_rows

    def total(s, lo, span, sparse):
        return kernel(*args, s, lo, span, sparse, term, every_row, False, threads).sum()

    def by_row(s, lo, span, sparse, sample):
        return kernel(*args, s, lo, span, sparse, term, sample, True, threads)

    return total, by_row, lo, hi, m


def _compiled(name: str, inputs, cache: dict, stats=None, vectors=None) -> _CompiledRoute | None:
    """The compiled route of a pair plugin with a compiled term on the streamed row loops
    (:class:`_CompiledRoute`), or None (no compiled term). Cos and Jacc from the shared
    items' counts, their range from pass one's ``stats`` (a complete
    ``userfair.streamed.pair_records.PairStats`` of these users) when given, else one
    compiled pass of its own; RCos, Vec and Genre from their unit rows (``vectors``: the
    user vectors Vec needs), their range by one compiled pass; each once per similarity."""
    decl = get(name)
    term = plugins.compiled_term(plugins.instance(name))
    if term is None:
        return None
    if decl.similarity in _plugin_kernels.KINDS:
        total, by_row, lo, hi, m = _counted(decl, term, inputs, cache, stats)
    else:  # dense unit rows (Vec) visit every pair whatever sparse says
        total, by_row, lo, hi, m = _unit(decl, term, inputs, cache, vectors)
    sparse = plugins.zero_at_zero(name) and lo == 0.0
    return _CompiledRoute(total, by_row, lo, hi, sparse, m)


def compiled_mean(
    name: str, inputs, s: np.ndarray, cache: dict, stats=None, vectors=None
) -> float | None:  # fmt: skip
    """The mean over the unordered pairs of a pair plugin with a compiled term, inside the
    streamed route's row loops (``userfair.streamed._plugin_kernels``): the raw similarity
    (Cos and Jacc from the shared items, their range from pass one's ``stats`` else a pass
    of its own; RCos, Vec and Genre from their unit rows), the terms in one pass; only the
    pairs sharing an item (entry) when the term vanishes at 0 and some pair shares none.
    None when the plugin has no compiled term."""
    found = _compiled(name, inputs, cache, stats, vectors)
    if found is None:
        return None
    m = found.m
    if m < 2:
        return math.nan
    scores = np.ascontiguousarray(s, dtype=np.float64)
    total = plugins.call(
        get(name).source, "term", found.total, scores, found.lo, found.hi - found.lo,
        found.sparse,
    )  # fmt: skip
    return float(total) / (m * (m - 1) / 2)


def compiled_estimate(
    name: str, inputs, s: np.ndarray, cache: dict, sample: np.ndarray, level: float,
    stats=None, vectors=None,
) -> dict | None:  # fmt: skip
    """A pair plugin with a compiled term estimated as the built-in pair measures are
    (``userfair.streamed.estimate``, docs/method.md#estimate): each sampled row's sum over
    every other user, T^ = m mean / 2 over the unordered pairs with its finite-population
    SE, the value T^ / pairs, and the ``level`` t interval, clipped to the declared bounds
    (the range of the similarity stays exact). ``{"value", "se", "low", "high"}``, or None
    where :func:`compiled_mean` has no route."""
    found = _compiled(name, inputs, cache, stats, vectors)
    if found is None:
        return None
    decl, m = get(name), found.m
    if m < 2:
        return {"value": math.nan, "se": math.nan, "low": math.nan, "high": math.nan}
    sample = np.ascontiguousarray(sample, dtype=np.int64)
    values = plugins.call(
        decl.source, "term", found.by_row, np.ascontiguousarray(s, dtype=np.float64),
        found.lo, found.hi - found.lo, found.sparse, sample,
    )  # fmt: skip
    total, se = sampled.total_estimate(values, m)
    pairs = m * (m - 1) / 2
    value, spread = plugins.value_of(decl, total / 2 / pairs), se / 2 / pairs
    quantile = sampled.t_quantile(level, len(sample))
    bottom, top = decl.bounds
    return {
        "value": value,
        "se": spread,
        "low": max(value - quantile * spread, bottom),
        "high": min(value + quantile * spread, top),
    }


def evaluate_generic(
    inputs, k: int, names: Sequence[str] | None = None, per_user=None, route: str = "dense",
    block_size: int = BLOCK_SIZE, vectors=None, stats=None, sample: dict | None = None,
) -> tuple[dict[str, float], dict[str, float], dict[str, dict]]:  # fmt: skip
    """The generic engine's measures ``names`` (default: ``userfair.measures.generic()``, the
    built-in pair measures with a term and every loaded plugin) of ``inputs`` at k, each
    one's seconds (its similarity's range included for the first pair measure that reads
    it, unless pass one's ``stats`` give it) and the estimated ones' entries.

    ``sample`` (streamed route: the result's ``estimate`` record, its ``share``, ``seed``
    and ``level``): each pair plugin with a compiled term is estimated from the same sample
    of users as the built-in pair measures (:func:`compiled_estimate`), its value, SE and
    interval in the third dict; any other is computed exact, which is said once."""
    names = list(generic()) if names is None else list(names)
    scores = scores_of(inputs, k, {get(name).effectiveness for name in names}, per_user)
    values, seconds, estimated, cache = {}, {}, {}, {}
    rows = None
    if sample is not None:
        rows = sampled.sample_rows(len(inputs.users), sample["share"], sample["seed"])
    for name in names:
        start = time.perf_counter()
        decl = get(name)
        s = scores.get(decl.effectiveness)
        if decl.kind == "uf":
            if rows is not None:
                unserved("sample", [name], "computed exact")
            values[name] = uf_value(name, inputs, k, block_size, vectors, cache, route)
        elif s.size < 2:
            values[name] = math.nan
        elif decl.kind == "statistic":
            values[name] = statistic_value(name, s)
        elif rows is not None and "sample" in decl.routes:
            entry = compiled_estimate(name, inputs, s, cache, rows, sample["level"], stats, vectors)
            values[name], estimated[name] = entry["value"], entry
        else:
            if rows is not None:
                unserved("sample", [name], "computed exact (the sampled route needs a "
                         "compiled term)")  # fmt: skip
            mean = (
                compiled_mean(name, inputs, s, cache, stats, vectors) if route == "stream" else None
            )
            if mean is None:
                mean = _pass(name, inputs, vectors, block_size, cache, route).mean(s)
            values[name] = plugins.value_of(decl, mean)
        seconds[name] = time.perf_counter() - start
        log.info("%s = %.6g (%.3f s)", name, values[name], seconds[name])
    return values, seconds, estimated


def bootstrap_generic(
    inputs, weights: np.ndarray, k: int, names: Sequence[str] | None = None,
    block_size: int = BLOCK_SIZE, vectors=None,
) -> dict[str, np.ndarray]:  # fmt: skip
    """(B,) values of each of the generic engine's measures ``names`` (default: all of
    ``userfair.measures.generic()``) over the resamples of ``weights``."""
    names = list(generic()) if names is None else list(names)
    scores = scores_of(inputs, k, {get(n).effectiveness for n in names})
    out, cache = {}, {}
    for name in names:
        decl = get(name)
        if decl.kind == "uf":
            out[name] = uf_resampled(name, inputs, weights, k, block_size, vectors, cache)
            continue
        s = scores[decl.effectiveness]
        if decl.kind == "statistic":
            compute = plugins.instance(name).compute
            rows = weights.astype(np.float64)  # once, not per resample
            raw = [plugins.call(decl.source, "compute", compute, s, row) for row in rows]
            out[name] = np.array([plugins.value_of(decl, value) for value in raw])
        else:
            out[name] = _pass(name, inputs, vectors, block_size, cache, "dense").weighted_means(
                s, weights
            )
    return out


def pair_shares(
    inputs, k: int, names: Sequence[str] | None = None, route: str = "dense",
    block_size: int = BLOCK_SIZE, vectors=None,
) -> dict[str, np.ndarray]:  # fmt: skip
    """Each evaluated user's share of every plugin PairMeasure ``names`` (default: every
    loaded one), as PUF's (docs/method.md#who): each pair's term split evenly between its
    two users, share_u = sum over v != u of t(u, v) / (m (m - 1)); the shares sum to the
    measure. Row blocks, never m x m."""
    names = list(generic()) if names is None else list(names)
    names = [name for name in names if get(name).kind in ("pair", "uf")]
    scores = scores_of(inputs, k, {get(n).effectiveness for n in names})
    m = len(inputs.users)
    out, cache = {}, {}
    for name in names:
        if get(name).kind == "uf":
            block = _similarity_blocks(inputs, get(name).similarity, vectors, cache)
            out[name] = uf_engine.shares(block, inputs.topk, inputs.train, k, block_size)
            continue
        share = np.zeros(m)
        pair_pass = _pass(name, inputs, vectors, block_size, cache, route)
        for _, u, v, terms in pair_pass.blocks(scores[get(name).effectiveness]):
            share += np.bincount(u, terms, minlength=m) + np.bincount(v, terms, minlength=m)
        out[name] = share / (m * (m - 1)) if m > 1 else np.full(m, math.nan)
    return out


def uf_value(name, inputs, k, block_size=BLOCK_SIZE, vectors=None, cache=None, route="dense"):
    """A declaration of the UF kind (not UF's own, which its fused kernels serve): on the
    streamed route over Cos or Jacc in compiled row loops, else on the row blocks of its raw
    similarity (``userfair.engine.uf_engine``); never m x m."""
    found = uf_engine.compiled_value(get(name).similarity, inputs, k) if route == "stream" else None
    if found is not None:
        return found
    block = _similarity_blocks(
        inputs, get(name).similarity, vectors, {} if cache is None else cache
    )
    return uf_engine.value(block, inputs.topk, inputs.train, k, block_size)


def dense_raw(inputs, label: str, block_size: int = BLOCK_SIZE, vectors=None, cache=None):
    """The (m, m) raw similarity ``label`` of ``inputs`` stacked from its row blocks: what
    a UF-kind measure reads on the dense routes (the bootstrap, the experiments)."""
    block = _similarity_blocks(inputs, label, vectors, {} if cache is None else cache)
    return variants.stacked(block, len(inputs.users), block_size)


def uf_resampled(name, inputs, weights, k, block_size=BLOCK_SIZE, vectors=None, cache=None):
    """(B,) a UF-kind declaration's value in each resample of ``weights``: its raw
    similarity held (m, m) as the bootstrap holds the others, each resample's own
    threshold (``userfair.engine.uf_engine.resampled``)."""
    sim = dense_raw(inputs, get(name).similarity, block_size, vectors, cache)
    thresholds = uf_engine.resampled_thresholds(sim, weights)
    return uf_engine.resampled(inputs.topk, inputs.train, sim, thresholds, weights, k, block_size)


def dense_similarity(inputs, label: str, block_size: int = BLOCK_SIZE, vectors=None) -> np.ndarray:
    """The (m, m) similarity ``label`` of ``inputs``, min-max normalised over the unordered
    pairs (userfair.opt_in.variants.dense_similarity): for the experiments, which are dense."""
    block = _similarity_blocks(inputs, label, vectors, {})
    return variants.dense_similarity(block, len(inputs.users), block_size)


def pair_values(name: str, scores: np.ndarray, sim: np.ndarray) -> float:
    """A plugin PairMeasure on a given (m, m) normalised similarity (the experiments of
    Figs. 2-4, where the similarity is the dataset's or a sampled one)."""
    decl = get(name)
    plugin = plugins.instance(name)
    u, v = np.triu_indices(scores.size, 1)
    terms = plugins.checked_terms(plugin, decl, scores[u], scores[v], sim[u, v])
    return plugins.value_of(decl, float(np.mean(terms))) if u.size else math.nan


def statistic_value(name: str, scores: np.ndarray) -> float:
    """A plugin UserMeasure on the per-user ``scores`` (unit weights)."""
    decl = get(name)
    plugin = plugins.instance(name)
    raw = plugins.call(decl.source, "compute", plugin.compute, scores, np.ones(scores.size))
    return plugins.value_of(decl, raw)
