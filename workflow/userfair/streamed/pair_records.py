"""The pair records of the streamed measures: what the row passes of ``userfair.streamed.streaming``
produce and consume, as data.

* :class:`PairStats`: pass one's result for a row range (the pairs sharing a train item, the
  raw extremes of cosine and Jaccard, UF's moments of sim_UF), with the whole range's cosine
  and Jaccard ranges and UF's threshold;
* :class:`PairSums`: pass two's sums behind PUF, UF and the envy measures over a row range;
* both as JSON records (``to_dict``/``from_dict``, ``save``/``load``; format :data:`FORMAT`),
  stamped with :func:`users_digest` of the evaluated users;
* :func:`combine` merges the records of row ranges that tile one range
  (:func:`merge_moments` merges UF's moments); :func:`check_stats` checks complete stats
  against the model's inputs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, fields
from typing import ClassVar

import numpy as np

from userfair.files.inputs import Inputs
from userfair.files.io import InputError, atomic_path, read_json

#: Version of the pass-one and pass-two file format (``to_dict``/``from_dict``).
FORMAT = 1


def users_digest(users) -> str:
    """SHA-256 of the evaluated users' external ids in canonical order (one per line)."""
    text = "\n".join(np.asarray(users).astype(str).tolist())
    return hashlib.sha256(text.encode()).hexdigest()


def json_number(value):
    """A JSON-safe float: None for an infinite value (no pair)."""
    return None if value is None or not math.isfinite(value) else float(value)


class _Record:
    """A pass's result for the rows ``start:stop`` of ``m`` users, as a JSON record
    (``{"format", "kind", fields...}``; infinite floats as null)."""

    KIND: ClassVar[str]
    OPTIONAL: ClassVar[tuple[str, ...]]  # fields a record may lack

    @property
    def complete(self) -> bool:
        return self.start == 0 and self.stop == self.m

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "kind": self.KIND,
            **{
                name: json_number(value) if isinstance(value, float) else value
                for name, value in asdict(self).items()
            },
        }

    @classmethod
    def from_dict(cls, data: dict):
        if data.get("kind") != cls.KIND or data.get("format") != FORMAT:
            raise InputError(
                f"not a {cls.KIND} record of format {FORMAT}: kind={data.get('kind')!r}, "
                f"format={data.get('format')!r}"
            )
        names = [f.name for f in fields(cls)]
        missing = [name for name in names if name not in data and name not in cls.OPTIONAL]
        if missing:
            raise InputError(f"{cls.KIND} record lacks field(s) {missing}")
        return cls(**{name: data[name] for name in names if name in data})

    def save(self, path) -> None:
        with atomic_path(path) as tmp:
            with open(tmp, "w") as handle:
                json.dump(self.to_dict(), handle, indent=2)
                handle.write("\n")

    @classmethod
    def load(cls, path):
        if not os.path.isfile(path):
            raise InputError(f"{path}: file not found")
        return cls.from_dict(read_json(path))


@dataclass(frozen=True)
class PairStats(_Record):
    """What pass two needs from pass one, for the rows ``start:stop`` of ``m`` users.

    Pairs are the unordered pairs u < v with u in ``start:stop``. ``sharing_pairs`` of them
    share a train item; ``cos_min``/``cos_max``/``jacc_min``/``jacc_max`` are the raw extremes
    over those sharing pairs (None when there is none). ``uf_pairs``, ``uf_mean`` and
    ``uf_m2`` are the count, mean and sum of squared deviations of the raw sim_UF (gamma
    ``gamma``) over all the pairs. ``seconds``: wall time of the pass (summed over combined
    ranges). ``users_sha256``: :func:`users_digest` of the evaluated users, or None.
    """

    m: int
    start: int
    stop: int
    gamma: float
    sharing_pairs: int
    cos_min: float | None
    cos_max: float | None
    jacc_min: float | None
    jacc_max: float | None
    uf_pairs: int
    uf_mean: float
    uf_m2: float
    seconds: float = 0.0
    users_sha256: str | None = None

    KIND: ClassVar[str] = "pair-stats"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("seconds", "users_sha256")

    @property
    def pairs(self) -> int:
        """The number of unordered pairs of all m users."""
        return self.m * (self.m - 1) // 2

    def _range(self, lo: float | None, hi: float | None) -> tuple[float, float]:
        self._require_complete()
        if self.m < 2 or self.sharing_pairs == 0:
            return 0.0, 0.0
        # a pair sharing no item has raw similarity 0, the smallest possible value
        return (lo if self.sharing_pairs == self.pairs else 0.0), hi

    @property
    def cos_range(self) -> tuple[float, float]:
        """(min, max) of the raw cosine over all pairs; (0, 0) for m < 2."""
        return self._range(self.cos_min, self.cos_max)

    @property
    def jacc_range(self) -> tuple[float, float]:
        """(min, max) of the raw Jaccard over all pairs; (0, 0) for m < 2."""
        return self._range(self.jacc_min, self.jacc_max)

    @property
    def uf_threshold(self) -> float:
        """mean + SD (ddof = 0) of sim_UF over all pairs: UF's similar pairs reach it."""
        self._require_complete()
        if self.pairs == 0:
            return math.nan
        return self.uf_mean + math.sqrt(max(self.uf_m2, 0.0) / self.pairs)

    def _require_complete(self):
        if not self.complete:
            raise ValueError(
                f"pair stats cover rows {self.start}:{self.stop} of {self.m}; combine every "
                "range first"
            )


@dataclass(frozen=True)
class PairSums(_Record):
    """Pass two's sums over the rows ``start:stop`` (pairs u < v, u in the rows; for envy
    the ordered pairs (u, v), u in the rows).

    ``puf_*``: sum of (s - lo) |S(u) - S(v)| over the pairs sharing an item (s the raw
    Jaccard, S the per-user P@k or NDCG@k; the cosine PUF is by the items,
    ``userfair.streamed.puf_items``, and a record of an older version with cosine sums loads with
    them ignored); ``uf_sum``: sum of sim_UF * k^2 d_L over
    the similar pairs, ``uf_similar_pairs`` their number; ``envy_sum``: sum of envy(u, v);
    ``max_envy_sum``: sum of each u's max envy; ``envious_users``: users whose max envy
    exceeds ``epsilon``. ``k``, ``epsilon``, ``envy_utility``: the settings the sums were
    computed with. ``seconds_pairs`` (PUF and UF, one pass), ``seconds_uf_setup`` (UF's
    item cosines), ``seconds_envy``: wall times, summed over combined ranges.
    """

    m: int
    start: int
    stop: int
    k: int
    epsilon: float
    envy_utility: str
    puf_p_jacc: float
    puf_ndcg_jacc: float
    uf_sum: float
    uf_similar_pairs: int
    envy_sum: float
    max_envy_sum: float
    envious_users: int
    seconds_pairs: float = 0.0
    seconds_uf_setup: float = 0.0
    seconds_envy: float = 0.0
    users_sha256: str | None = None

    KIND: ClassVar[str] = "pair-sums"
    OPTIONAL: ClassVar[tuple[str, ...]] = (
        "seconds_pairs",
        "seconds_uf_setup",
        "seconds_envy",
        "users_sha256",
    )


def _check_tiles(parts) -> list:
    parts = sorted(parts, key=lambda part: part.start)
    if not parts:
        raise ValueError("nothing to combine")
    m = parts[0].m
    digests = {part.users_sha256 for part in parts} - {None}
    if any(part.m != m for part in parts) or len(digests) > 1:
        raise ValueError("cannot combine results of different users")
    position = parts[0].start
    for part in parts:
        if part.start != position:
            raise ValueError(
                f"row ranges do not tile: expected one starting at {position}, got "
                f"{part.start}:{part.stop}"
            )
        position = part.stop
    return parts


def merge_moments(a, b):
    """(count, mean, M2) of two groups together (Chan et al.)."""
    (n_a, mean_a, m2_a), (n_b, mean_b, m2_b) = a, b
    if n_b == 0:
        return a
    if n_a == 0:
        return b
    n = n_a + n_b
    delta = mean_b - mean_a
    return n, mean_a + delta * (n_b / n), m2_a + m2_b + delta * delta * (n_a * (n_b / n))


def _min(values):
    values = [v for v in values if v is not None]
    return min(values) if values else None


def _max(values):
    values = [v for v in values if v is not None]
    return max(values) if values else None


def combine(parts):
    """One :class:`PairStats` (or :class:`PairSums`) of adjacent row ranges (any order;
    they must tile one range without gap or overlap)."""
    parts = _check_tiles(list(parts))
    first, last = parts[0], parts[-1]
    digest = next((p.users_sha256 for p in parts if p.users_sha256), None)
    if isinstance(first, PairStats):
        if any(p.gamma != first.gamma for p in parts):
            raise ValueError("cannot combine pair stats of different gamma")
        moments = (0, 0.0, 0.0)
        for part in parts:  # in row order: the same result however the ranges were run
            moments = merge_moments(moments, (part.uf_pairs, part.uf_mean, part.uf_m2))
        return PairStats(
            m=first.m,
            start=first.start,
            stop=last.stop,
            gamma=first.gamma,
            sharing_pairs=sum(p.sharing_pairs for p in parts),
            cos_min=_min(p.cos_min for p in parts),
            cos_max=_max(p.cos_max for p in parts),
            jacc_min=_min(p.jacc_min for p in parts),
            jacc_max=_max(p.jacc_max for p in parts),
            uf_pairs=int(moments[0]),
            uf_mean=float(moments[1]),
            uf_m2=float(moments[2]),
            seconds=sum(p.seconds for p in parts),
            users_sha256=digest,
        )
    if isinstance(first, PairSums):
        settings = ("k", "epsilon", "envy_utility")
        if any(getattr(p, name) != getattr(first, name) for p in parts for name in settings):
            raise ValueError("cannot combine pair sums of different k, epsilon or envy utility")
        total = {
            f.name: sum(getattr(p, f.name) for p in parts)
            for f in fields(PairSums)
            if f.name not in ("m", "start", "stop", "users_sha256") + settings
        }
        return PairSums(
            m=first.m,
            start=first.start,
            stop=last.stop,
            users_sha256=digest,
            **{name: getattr(first, name) for name in settings},
            **total,
        )
    raise TypeError(f"cannot combine {type(first).__name__}")


def check_stats(stats: PairStats, inputs: Inputs) -> None:
    m = len(inputs.users)
    if stats.m != m:
        raise ValueError(f"pair stats are of {stats.m} users, the inputs have {m}")
    if stats.users_sha256 is not None and stats.users_sha256 != users_digest(inputs.users):
        raise ValueError("pair stats are of other users (another split or order)")
    stats._require_complete()
