"""The pair measures estimated from a uniform sample of users, with a standard error and an
interval (docs/method.md#estimate), where the exact pair pass is too slow.

Every pair measure that is a sum over pairs is a sum over users of a **row value**: the sum
over all other users of the pair's term (half of it for an unordered pair), or for MME and
PEU a value of the user's row alone. A uniform sample of n of the m rows without replacement,
each row against **all** columns, estimates such a total T = sum_u y_u by

    T^ = m * mean of y over the sample,  SE(T^) = m * sqrt((1 - n / m) * s^2 / n)

with s^2 the sample variance (ddof = 1) of the row values: T^ is unbiased, and so is
SE(T^)^2 for Var(T^) (simple random sampling, finite-population corrected). The interval is
T^ +- t_{n-1} SE(T^). Estimated this way:

* PUF-P-Jacc, PUF-NDCG-Jacc: T / ((hi - lo) m (m - 1) / 2), linear in T; the raw minimum lo
  and maximum hi stay exact (pass one, ``userfair.streamed.streaming.pass_one``);
* ME: T / (m (m - 1)); MME and PEU: T / m (a row's max envy reads all columns, so its row
  value is exact) -- all linear in T;
* UF: log(T / k^2) / log(m (m - 1) / 2) with UF's threshold exact (pass one's moments): T^
  is unbiased, UF's estimate is not (log is concave; the bias is of order SE^2 / T^2); its
  interval is the log of T's interval (so it covers exactly when T's does) and its SE the
  delta method's, SE(T^) / (T^ log(m (m - 1) / 2)).

Interval ends are clipped to the measure's range (``userfair.measures``' bounds: PEU, MME,
ME and PUF in [0, 1], UF at most 1), which the true value never leaves.

PUF-P-Cos and PUF-NDCG-Cos are not sampled: by the items (``userfair.streamed.puf_items``) they are
exact in O(interactions), cheaper than any sample. Nothing here is estimated that cannot be:
SD, Gini and the effectiveness means are exact per user anyway.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from userfair.engine import warmup
from userfair.engine._backend import binary_csr
from userfair.files.inputs import Inputs
from userfair.formulas import effectiveness, fairness
from userfair.measures import NAMES, fused, served
from userfair.measures import get as get_measure
from userfair.streamed import _sample_kernels as sk
from userfair.streamed import streaming
from userfair.streamed.pair_records import (
    FORMAT,
    PairStats,
    PairSums,
    check_stats,
    merge_moments,
    users_digest,
)
from userfair.streamed.stream_rows import numba_threads, prepare_rows

log = logging.getLogger(__name__)

#: The built-in measures estimated from the sample: those whose declaration names the
#: ``sample`` route (ME, MME, PEU, UF and the Jaccard PUF; the others are exact on this route).
ESTIMATED = served("sample", fused(NAMES))
#: Default interval level.
LEVEL = 0.95
#: The ``kind`` of a sampled part's record (:func:`sample_part`).
KIND = "pair-sample"


def sample_rows(m: int, fraction: float, seed: int) -> np.ndarray:
    """A uniform sample without replacement of ceil(fraction * m) of the rows 0..m-1 (at
    least 2 when m >= 2, at most m), sorted; ``numpy.random.default_rng(seed)``."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"the sampled share of users must lie in (0, 1], got {fraction}")
    n = min(m, max(2, math.ceil(fraction * m)))
    return np.sort(np.random.default_rng(seed).choice(m, n, replace=False)).astype(np.int64)


def total_estimate(values: np.ndarray, m: int) -> tuple[float, float]:
    """(T^, SE(T^)) of the total over m rows from the row ``values`` of a uniform sample
    without replacement (module docstring); SE is 0 when every row is sampled, NaN for a
    sample of one row out of more."""
    mean = float(np.mean(values)) if len(values) else 0.0
    return total_from_moments(len(values), mean, float(np.sum((values - mean) ** 2)), m)


@dataclass(frozen=True)
class RowValues:
    """The row values of the sampled ``rows``: ``pairs`` (n, 6) as
    ``userfair.streamed._sample_kernels.sampled_pair_rows`` (sums over every v != u, so an unordered
    pair's total is half their sum), ``envy`` (n, 3) as ``sampled_envy_rows``; seconds of
    the pair part, UF's item cosines and the envy part."""

    rows: np.ndarray
    pairs: np.ndarray
    envy: np.ndarray
    seconds_pairs: float
    seconds_uf_setup: float
    seconds_envy: float


def row_values(
    inputs: Inputs,
    stats: PairStats,
    rows: np.ndarray,
    k: int = 10,
    epsilon: float = 0.05,
    envy_utility: str = "precision",
) -> RowValues:
    """The :class:`RowValues` of ``rows`` (indices of the evaluated users) of ``inputs``,
    given the complete pass-one ``stats`` (the raw minima, UF's threshold and gamma)."""
    check_stats(stats, inputs)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    m = len(inputs.users)
    if len(rows) and (rows.min() < 0 or rows.max() >= m):
        raise ValueError(f"sampled rows outside 0:{m}")
    topk = effectiveness.validate_lists(inputs.topk, k, inputs.relevant.shape)
    relevant = binary_csr(inputs.relevant)
    scores = effectiveness.per_user(topk, relevant, k)
    threads = numba_threads()

    clock = time.perf_counter()
    items, local = fairness.recommended_items(topk)
    cosines = streaming.item_cosines_for(inputs, items, threads)
    uf_setup = time.perf_counter() - clock

    clock = time.perf_counter()
    data = prepare_rows(inputs.train_of_evaluated(), stats.gamma, inputs.genres)
    (cos_lo, _), (jacc_lo, _) = stats.cos_range, stats.jacc_range
    threshold = stats.uf_threshold if stats.pairs >= 2 else math.inf
    pairs = sk.sampled_pair_rows(
        *data.pair_arguments(), rows, float(stats.gamma), data.dist, data.own,
        np.ascontiguousarray(scores["P"]), np.ascontiguousarray(scores["NDCG"]),
        float(cos_lo), float(jacc_lo), float(threshold), np.ascontiguousarray(local), k,
        *cosines, len(items), threads,
    )  # fmt: skip
    seconds_pairs = time.perf_counter() - clock

    clock = time.perf_counter()
    relevant_rec, own, denominator = streaming.envy_setup(relevant, items, local, k, envy_utility)
    envy = sk.sampled_envy_rows(
        *streaming.envy_lists(relevant_rec, local, len(items)), own, denominator, rows,
        float(epsilon), threads,
    )  # fmt: skip
    seconds_envy = time.perf_counter() - clock
    return RowValues(rows, pairs, envy, seconds_pairs, uf_setup, seconds_envy)


#: The seconds a sample records.
_SECONDS = ("seconds_pairs", "seconds_uf_setup", "seconds_envy")

#: The PairSums field of each row-value column, and whether it is over unordered pairs
#: (half the row values' total) or over ordered pairs / users.
_FIELDS = (
    ("puf_p_jacc", "pairs", sk.ROW_P_JACC, True),
    ("puf_ndcg_jacc", "pairs", sk.ROW_NDCG_JACC, True),
    ("puf_p_cos", "pairs", sk.ROW_P_COS, True),
    ("puf_ndcg_cos", "pairs", sk.ROW_NDCG_COS, True),
    ("uf_sum", "pairs", sk.ROW_UF, True),
    ("uf_similar_pairs", "pairs", sk.ROW_UF_PAIRS, True),
    ("envy_sum", "envy", sk.ROW_ENVY, False),
    ("max_envy_sum", "envy", sk.ROW_MAX_ENVY, False),
    ("envious_users", "envy", sk.ROW_ENVIOUS, False),
)


def moments(values: RowValues) -> dict[str, tuple[int, float, float]]:
    """Each :class:`PairSums` field's (count, mean, sum of squared deviations) of the
    sample's row values: what a part of a scattered sample records, merged exactly across
    parts by ``userfair.streamed.pair_records.merge_moments``."""
    out = {}
    for name, part, column, _ in _FIELDS:
        y = getattr(values, part)[:, column]
        mean = float(np.mean(y)) if len(y) else 0.0
        out[name] = (len(y), mean, float(np.sum((y - mean) ** 2)))
    return out


def t_quantile(level: float, n: int) -> float:
    """The two-sided ``level`` quantile of Student's t with n - 1 degrees of freedom, the
    interval's half-width in SEs for a sample of n rows (NaN for n < 2)."""
    # scipy.stats here, not at the top: a second to import, which every evaluate would pay
    from scipy import stats as scipy_stats

    return float(scipy_stats.t.ppf((1.0 + level) / 2.0, n - 1)) if n >= 2 else math.nan


def total_from_moments(count: int, mean: float, m2: float, m: int) -> tuple[float, float]:
    """:func:`total_estimate` from the row values' count, mean and sum of squared
    deviations."""
    if count == m == 0:  # no user: nothing to estimate (the measures are NaN)
        return 0.0, 0.0
    if not 1 <= count <= m:
        raise ValueError(f"a sample of {count} rows out of {m}")
    total = m * mean
    if count == m:
        return total, 0.0
    if count == 1:
        return total, math.nan
    return total, m * math.sqrt((1.0 - count / m) * (m2 / (count - 1)) / count)


def totals(found, m: int) -> dict[str, tuple[float, float]]:
    """Each :class:`PairSums` total's (T^, SE(T^)) from the sample's :class:`RowValues` or
    their :func:`moments`."""
    if isinstance(found, RowValues):
        found = moments(found)
    out = {}
    for name, _, _, unordered in _FIELDS:
        total, se = total_from_moments(*found[name], m)
        out[name] = (total / 2, se / 2) if unordered else (total, se)
    return out


#: Estimated totals that pass two does not have: the cosine PUF's (the route takes it
#: exact by the items; estimable the same way, which the coverage benchmark checks).
_COSINE = {"PUF-P-Cos": "puf_p_cos", "PUF-NDCG-Cos": "puf_ndcg_cos"}


def _measures_at(stats: PairStats, found: dict, shift: float, settings: dict, seconds: dict):
    """(the :class:`PairSums`, the pair measures) of the totals ``T^ + shift SE(T^)``."""
    shifted = {name: total + shift * se for name, (total, se) in found.items()}
    m = stats.m
    sums = PairSums(
        m=m, start=0, stop=m, **settings, **seconds,
        **{name: value for name, value in shifted.items() if name not in _COSINE.values()},
    )  # fmt: skip
    out = streaming.pair_measures(stats, sums)
    if m >= 2:
        for key, name in _COSINE.items():
            out[key] = streaming.puf_value(shifted[name], stats.cos_range, stats.pairs)
    return sums, out


def estimates(
    stats: PairStats,
    values,
    k: int,
    epsilon: float = 0.05,
    envy_utility: str = "precision",
    level: float = LEVEL,
    measures=ESTIMATED,
) -> tuple[PairSums, dict]:
    """(the estimated :class:`PairSums`, ``{measure: {"value", "se", "low", "high"}}``) of
    the sample's ``values`` (:class:`RowValues`, or a complete record of
    :func:`combine_parts`): each measure's value, standard error and ``level`` interval
    from its total's (module docstring; ``measures`` may add PUF-P-Cos, PUF-NDCG-Cos,
    estimated the same way, for the coverage benchmark)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval level must lie in (0, 1), got {level}")
    m = stats.m
    if isinstance(values, RowValues):
        n, found = len(values.rows), totals(values, m)
        seconds = {name: getattr(values, name) for name in _SECONDS}
    else:
        n = values["rows"]
        found = totals({name: tuple(entry) for name, entry in values["moments"].items()}, m)
        seconds = {name: values[name] for name in _SECONDS}
    quantile = t_quantile(level, n)
    settings = {"k": k, "epsilon": float(epsilon), "envy_utility": envy_utility}
    sums, point = _measures_at(stats, found, 0.0, settings, seconds)
    low = _measures_at(stats, found, -quantile, settings, seconds)[1]
    high = _measures_at(stats, found, quantile, settings, seconds)[1]
    unit = _measures_at(stats, found, 1.0, settings, seconds)[1]
    record = {}
    for name in measures:
        if name == "UF":
            total, se = found["uf_sum"]
            usable = total > 0 and stats.pairs >= 2
            spread = se / (total * math.log(stats.pairs)) if usable else math.nan
            # the log of T's interval; unbounded below when T's reaches 0
            bottom = low[name] if total - quantile * se > 0 or not usable else -math.inf
            record[name] = {"value": point[name], "se": spread, "low": bottom, "high": high[name]}
        else:  # linear in its total: the SE scales as the value does
            record[name] = {
                "value": point[name],
                "se": unit[name] - point[name],
                "low": low[name],
                "high": high[name],
            }
    for name, entry in record.items():  # the true value lies in the measure's range
        bottom, top = get_measure(name).bounds
        entry["low"] = max(entry["low"], bottom) if not math.isnan(entry["low"]) else math.nan
        entry["high"] = min(entry["high"], top) if not math.isnan(entry["high"]) else math.nan
    return sums, record


def sample_part(
    inputs: Inputs,
    stats: PairStats,
    start: int,
    stop: int,
    share: float,
    seed: int,
    k: int = 10,
    epsilon: float = 0.05,
    envy_utility: str = "precision",
) -> dict:
    """The record of the sampled rows (:func:`sample_rows` of ``share`` and ``seed``) that
    fall in ``start:stop``: their number and each total's row-value :func:`moments`, with the
    settings and seconds (JSON; parts of a scatter go through :func:`combine_parts`)."""
    check_stats(stats, inputs)
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )
    m = len(inputs.users)
    rows = sample_rows(m, share, seed)
    rows = rows[(rows >= start) & (rows < stop)]
    values = row_values(inputs, stats, rows, k=k, epsilon=epsilon, envy_utility=envy_utility)
    return {
        "format": FORMAT,
        "kind": KIND,
        "m": m,
        "start": int(start),
        "stop": int(stop),
        "share": float(share),
        "seed": int(seed),
        "k": int(k),
        "epsilon": float(epsilon),
        "envy_utility": envy_utility,
        "rows": len(rows),
        "moments": {name: list(entry) for name, entry in moments(values).items()},
        **{name: getattr(values, name) for name in _SECONDS},
        "users_sha256": users_digest(inputs.users),
    }


def combine_parts(parts) -> dict:
    """One record of :func:`sample_part` records whose row ranges tile 0:m (any order),
    of the same users, sample and settings: counts and seconds added, moments merged in
    row order (``userfair.streamed.pair_records.merge_moments``)."""
    parts = sorted(parts, key=lambda part: part["start"])
    if not parts:
        raise ValueError("no sampled part to combine")
    same = ("kind", "format", "m", "share", "seed", "k", "epsilon", "envy_utility", "users_sha256")
    first = parts[0]
    for part in parts:
        differ = [key for key in same if part.get(key) != first.get(key)]
        if differ:
            raise ValueError(f"sampled parts differ in {differ}")
    position = 0
    for part in parts:
        if part["start"] != position:
            raise ValueError(f"sampled parts do not tile 0:{first['m']} at row {position}")
        position = part["stop"]
    if position != first["m"]:
        raise ValueError(f"sampled parts stop at row {position} of {first['m']}")
    merged = {}
    for name in first["moments"]:
        entry = (0, 0.0, 0.0)
        for part in parts:
            entry = merge_moments(entry, tuple(part["moments"][name]))
        merged[name] = list(entry)
    return {
        **first,
        "start": 0,
        "stop": first["m"],
        "rows": sum(part["rows"] for part in parts),
        "moments": merged,
        **{name: sum(part[name] for part in parts) for name in _SECONDS},
    }


def finish_estimate(inputs: Inputs, stats: PairStats, record: dict, level: float = LEVEL):
    """Every measure as ``userfair.streamed.streaming.finish`` returns it, the pair measures of
    :data:`ESTIMATED` from the complete sample ``record`` (:func:`combine_parts`), plus the
    record ``estimate``: share, seed, sampled rows, users, level and per estimated measure
    its value, SE and interval."""
    check_stats(stats, inputs)
    if record["start"] != 0 or record["stop"] != stats.m or record["m"] != stats.m:
        raise ValueError(f"the sample covers rows {record['start']}:{record['stop']}")
    if record["users_sha256"] != users_digest(inputs.users):
        raise ValueError("the sample is of other users (another split or order)")
    settings = (record["k"], record["epsilon"], record["envy_utility"])
    sums, found = estimates(stats, record, *settings, level=level)
    sums = PairSums(**{**sums.__dict__, "users_sha256": record["users_sha256"]})
    result = streaming.finish(inputs, stats, sums)
    result["estimate"] = {
        "share": record["share"],
        "seed": record["seed"],
        "rows": record["rows"],
        "users": stats.m,
        "level": float(level),
        "measures": found,
    }
    return result


def stream_estimate(
    inputs: Inputs,
    fraction: float,
    seed: int,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    envy_utility: str = "precision",
    block_size: int = 2048,
    level: float = LEVEL,
    stats: PairStats | None = None,
) -> dict:
    """Every measure as ``userfair.streamed.streaming.stream_evaluate`` returns it, the pair
    measures of :data:`ESTIMATED` estimated from a uniform sample of ``fraction`` of the
    evaluated users (``seed``) against all users (:func:`finish_estimate`). Pass one
    (``stats``, computed unless given) stays exact: the normalisation's minimum and maximum
    and UF's threshold."""
    tiny = warmup.tiny_inputs()
    warmup.once(
        ("estimate", gamma < 1.0, envy_utility),
        lambda: row_values(
            tiny,
            streaming.pass_one(tiny.train, gamma=gamma, genres=tiny.genres, users=tiny.users),
            np.arange(len(tiny.users)), k=3, epsilon=epsilon, envy_utility=envy_utility,
        ),
    )  # fmt: skip
    if stats is None:
        stats = streaming.pass_one(
            inputs.train_of_evaluated(), gamma=gamma, genres=inputs.genres,
            users=inputs.users, block_size=block_size,
        )  # fmt: skip
    elif stats.gamma != gamma:
        raise ValueError(f"pair stats were computed with gamma={stats.gamma}, not {gamma}")
    m = len(inputs.users)
    record = sample_part(inputs, stats, 0, m, fraction, seed, k, epsilon, envy_utility)
    log.info("sampled %d of %d users (share %g, seed %d)", record["rows"], m, fraction, seed)
    return finish_estimate(inputs, stats, record, level)
