"""What the dense route's jobs ask for, from their dataset's size (docs/cluster.md#dense-requests).

The dense route holds (m, m) user similarities: the ``similarity`` job builds one and the
``measures`` job reads them, as do the bootstrap (``uncertainty``), the per-user
decomposition (``users``) and the experiments of Figs. 2-4, the appendix and the opt-in
similarities (``exp_relevance``, ``exp_similarity``, ``exp_extreme``, ``exp_gamma``,
``exp_variants``), so their memory
grows as m^2 and their time as m^2 plus the sparse products' work and size (the item
visits: the sum over items of deg (deg - 1) / 2, deg the evaluated users with the item in
train). ``benchmarks/dense_requests.py`` times these jobs through the workflow at several
sizes and writes the calibration (package data :data:`CALIBRATION`: one row per job and
size, its seconds and peak RSS, and its ``units``, :func:`units`). :func:`fit` fits each
rule's

    peak MB = a0 + a1 m^2 + a2 visits      seconds = c0 + units (c1 m^2 + c2 visits)

by non-negative least squares, its constant then raised where a measured row exceeds
the fit times the margin below (so every measured job is covered), and :func:`requests`
asks for that times the cost model's
margins (``userfair.workflow.costs``), memory at least ``costs.BASE_MB`` rounded up to
100 MB, runtime at least ``costs.MIN_RUNTIME`` minutes,
times the retry attempt, at most ``training.max_runtime``. A size beyond the measured ones
is extrapolated (the plan says so); the fit's residuals on the measured rows are in
``docs/performance.md``.

The opt-in settings that add work to these jobs (:data:`EXTRAS`: UF's gamma below 1,
graded relevance, opt-in similarities) are timed beside the base in one sitting (the
calibration's ``extras``); each adds the difference of its memory fit and the sitting's
base fit, and stretches the time by the ratio of the two time fits (:class:`Extra`), so
that a base timed on one machine takes extras timed on another.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from userfair.files.io import atomic_path
from userfair.workflow import costs, scatter_plan

#: The packaged calibration (userfair/workflow/data/dense_parts.json).
CALIBRATION = "dense_parts.json"
#: The jobs on (m, m) matrices (workflow/rules/measures.smk, uncertainty.smk, who.smk,
#: experiments.smk, variants.smk), each sized by :func:`requests`.
RULES = (
    "similarity", "measures", "exp_relevance", "exp_similarity", "exp_extreme", "exp_gamma",
    "uncertainty", "users", "exp_variants",
)  # fmt: skip
#: The bootstrap resamples one ``units`` of the ``uncertainty`` job stands for (its timed
#: rows ran the default 1,000; fewer ask for as much, more for each started 1,000).
RESAMPLES_PER_UNIT = 1000
#: The relevance steps of Figs. 2 and 4 (``len(userfair.workflow.experiments.STEPS)``, not
#: imported: that module is too heavy for the Snakefile's parse; a test keeps them equal).
RELEVANCE_STEPS = 11


def units(rule: str, config: Mapping, extra_similarities: Sequence[str] = ()) -> int:
    """How many times a job of ``rule`` evaluates the measures on (m, m) matrices where that
    count follows the workflow's ``config``: ``exp_similarity`` once per Weibull shape of
    ``experiments.weibull_shapes`` and for the normal and the observed similarity;
    ``exp_gamma`` once per gamma of ``experiments.gammas`` for each of the ``models`` and
    each relevance step; ``uncertainty`` once per started :data:`RESAMPLES_PER_UNIT` of
    ``uncertainty.resamples``; ``exp_variants`` once per similarity it repeats Figs. 3 and
    4 with (cos, jacc and ``extra_similarities``, the registry names ``measures.similarities``
    adds, the Snakefile's EXTRA_SIMILARITIES; rcos too with graded relevance); 1 for every
    other rule (a count fixed by the code is in its fit). The whole
    job's time scales with them: an upper bound where part of it does not repeat."""
    if rule == "exp_similarity":
        return len(config["experiments"]["weibull_shapes"]) + 2
    if rule == "exp_gamma":
        return len(config["experiments"]["gammas"]) * (len(config["models"]) + RELEVANCE_STEPS)
    if rule == "uncertainty":
        return max(1, math.ceil(config["uncertainty"]["resamples"] / RESAMPLES_PER_UNIT))
    if rule == "exp_variants":
        extra = set(extra_similarities)
        if "graded" in config["measures"].get("relevance", ()):
            extra.add("rcos")
        return 2 + len(extra)
    return 1


@dataclass(frozen=True)
class Fit:
    """One rule's fitted costs: ``mem`` (a0, a1, a2) of MB, ``seconds`` (c0, c1, c2), the
    ``threads`` they were measured on and the largest measured ``users``."""

    mem: tuple[float, float, float]
    seconds: tuple[float, float, float]
    threads: int
    users: int

    def mem_mb(self, m: int, visits: float) -> float:
        a0, a1, a2 = self.mem
        return a0 + a1 * m * m + a2 * visits

    def time_s(self, m: int, visits: float, threads: int, units: int = 1) -> float:
        c0, c1, c2 = self.seconds
        # fewer threads than measured: as if the work did not share at all (an upper bound)
        work = c0 + units * (c1 * m * m + c2 * visits)
        return work * max(1.0, self.threads / max(1, threads))


@cache
def calibration() -> dict:
    """The packaged calibration (:data:`CALIBRATION`)."""
    path = resources.files("userfair.workflow") / "data" / CALIBRATION
    return json.loads(path.read_text(encoding="utf-8"))


def write_calibration(record: dict, path: str | Path) -> None:
    """``record`` (``machine``, ``rows``: each with ``rule``, ``users``, ``visits``,
    ``threads``, ``seconds``, ``peak_mb`` and, where not 1, ``units``; ``extras``: the
    ``machine`` and ``rows`` of one sitting, the base rows and those of each of
    :data:`EXTRAS` marked ``extra``) as the calibration file :func:`requests` reads."""
    for rule in RULES:
        fit(record, rule)  # refuse a record that cannot be fitted
    for extra, reached in EXTRAS.items():
        for rule in reached:
            extra_fit(record, rule, extra)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def _nnls(features: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Non-negative least squares of a few columns, exactly: the best unconstrained fit on
    every subset of the columns, the smallest residual among those with no negative
    coefficient (2^3 subsets here)."""
    scale = features.max(axis=0)  # columns of 1, m^2 and visits differ by 10 orders
    scale[scale == 0] = 1.0
    scaled = features / scale
    best, best_residual = np.zeros(features.shape[1]), float(np.sum(target**2))
    for mask in range(1, 2 ** features.shape[1]):
        columns = [j for j in range(features.shape[1]) if mask >> j & 1]
        found, *_ = np.linalg.lstsq(scaled[:, columns], target, rcond=None)
        if np.any(found < 0):
            continue
        residual = float(np.sum((scaled[:, columns] @ found - target) ** 2))
        if residual < best_residual:
            best, best_residual = np.zeros(features.shape[1]), residual
            best[columns] = found
    return best / scale


def _covering(features: np.ndarray, target: np.ndarray, margin: float) -> np.ndarray:
    """:func:`_nnls` with its constant (the first column, all ones) raised by the largest
    shortfall on a row of the fit times the cost model's ``margin``: with its margin, the
    fit covers every measured row (the least squares alone leave some rows above it)."""
    found = _nnls(features, target)
    found[0] += max(0.0, float(np.max(target / margin - features @ found)))
    return found


def fit(record: dict, rule: str) -> Fit:
    """The :class:`Fit` of ``rule``'s rows of ``record`` (at least two sizes)."""
    rows = [row for row in record["rows"] if row["rule"] == rule]
    if len({row["users"] for row in rows}) < 2:
        raise ValueError(f"{rule}: the calibration needs rows of at least two sizes")
    m2 = np.array([float(row["users"]) ** 2 for row in rows])
    visits = np.array([float(row["visits"]) for row in rows])
    repeats = np.array([float(row.get("units", 1)) for row in rows])
    ones = np.ones(len(rows))
    peaks = np.array([row["peak_mb"] for row in rows])
    mem = _covering(np.column_stack([ones, m2, visits]), peaks, costs.MEM_MARGIN)
    seconds = _covering(
        np.column_stack([ones, repeats * m2, repeats * visits]),
        np.array([row["seconds"] for row in rows]),
        costs.TIME_MARGIN,
    )
    threads = min(int(row["threads"]) for row in rows)
    users = max(int(row["users"]) for row in rows)
    return Fit(tuple(mem), tuple(seconds), threads, users)


def similarity_files(gamma: float) -> int:
    """The (m, m) similarity files a dataset's dense measures read: the cosine and the
    Jaccard, and the genre one when UF mixes it in (gamma < 1; rule uf_genre_similarity's
    input)."""
    return 2 + int(gamma < 1.0)


#: The opt-in settings that add work to the dense jobs, and the jobs they reach: UF's
#: ``gamma`` below 1 (the genre similarity mixed into UF's, in every job that evaluates
#: UF), graded relevance (``graded``: the graded measures) and each opt-in similarity of
#: ``measures.similarities`` (``similarity``: its PUF), both in the jobs that compute the
#: opt-in measures. Each is timed beside the base in one sitting (the calibration's
#: ``extras``, ``benchmarks/dense_requests.py --extras``).
EXTRAS = {
    "gamma": ("measures", "exp_relevance", "uncertainty", "users"),
    "graded": ("measures", "uncertainty"),
    "similarity": ("measures", "uncertainty"),
}


@dataclass(frozen=True)
class Extra:
    """What an opt-in setting adds to one rule's job, from the base and the extra's rows of
    one sitting: its memory as the difference of the two fits (``added``), its time as
    their ratio (``ratio``), so that it applies to a base timed on another machine; the
    largest measured ``users``."""

    base: Fit
    extra: Fit
    users: int

    def added_mb(self, m: int, visits: float) -> float:
        return max(0.0, self.extra.mem_mb(m, visits) - self.base.mem_mb(m, visits))

    def ratio(self, m: int, visits: float, threads: int, units: int = 1) -> float:
        base = self.base.time_s(m, visits, threads, units)
        return max(1.0, self.extra.time_s(m, visits, threads, units) / base)


def extra_fit(record: dict, rule: str, extra: str) -> Extra:
    """The :class:`Extra` of ``extra`` (of :data:`EXTRAS`) on ``rule`` from ``record``'s
    ``extras`` (the base rows, without ``extra``, and the extra's rows of one sitting)."""
    rows = record.get("extras", {}).get("rows", [])
    base = fit({"rows": [row for row in rows if "extra" not in row]}, rule)
    found = fit({"rows": [row for row in rows if row.get("extra") == extra]}, rule)
    return Extra(base, found, min(base.users, found.users))


def requests(
    size: costs.Size, max_runtime: int, attempt: int = 1, threads: int = 1,
    gamma: float = 1.0, record=None, repeats: dict[str, int] | None = None, rules=RULES,
    graded: bool = False, similarities: int = 0,
) -> dict[str, costs.Request]:  # fmt: skip
    """What each dense job of a dataset of ``size`` asks for, per rule of ``rules`` (of
    :data:`RULES`) (module docstring; ``repeats``: each rule's :func:`units` where not 1).
    The opt-in settings of :data:`EXTRAS` a job's rule is reached by (UF's ``gamma`` below
    1, ``graded`` relevance, and ``similarities``, the count of opt-in similarities, each
    adding as much as the timed one) add their measured memory and time
    (:class:`Extra`). ``record`` defaults to :func:`calibration`."""
    repeats = repeats or {}
    m = int(size.evaluated_users)
    visits, _ = scatter_plan.visits_of(size, scatter_plan.calibration())
    counts = {"gamma": int(gamma < 1.0), "graded": int(graded), "similarity": similarities}
    out = {}
    for rule in rules:
        found = _packaged_fit(rule) if record is None else fit(record, rule)
        units = repeats.get(rule, 1)
        memory = found.mem_mb(m, visits)
        seconds = found.time_s(m, visits, threads, units)
        measured = found.users
        stretch = 1.0
        for extra, count in counts.items():
            if count and rule in EXTRAS[extra]:
                added = _packaged_extra(rule, extra) if record is None else extra_fit(
                    record, rule, extra
                )  # fmt: skip
                memory += count * added.added_mb(m, visits)
                stretch += count * (added.ratio(m, visits, threads, units) - 1.0)
                measured = min(measured, added.users)
        basis = "measured" if m <= measured else "extrapolated"
        memory = max(costs.BASE_MB, memory)
        out[rule] = costs.margined(memory, seconds * stretch / 60, 0, basis, max_runtime, attempt)
    return out


@cache
def _packaged_fit(rule: str) -> Fit:
    """:func:`fit` of the packaged calibration, once per rule and process (the Snakefile
    asks once per job)."""
    return fit(calibration(), rule)


@cache
def _packaged_extra(rule: str, extra: str) -> Extra:
    """:func:`extra_fit` of the packaged calibration, once per rule, extra and process."""
    return extra_fit(calibration(), rule, extra)


def extra_coefficients(record: dict, rule: str, extra: str) -> str:
    """One line of what ``extra`` adds to ``rule``'s job, for the benchmark's output."""
    found = extra_fit(record, rule, extra)
    rows = [
        (row.get("density", ""), row["users"], row["visits"], row["threads"], row.get("units", 1))
        for row in record["extras"]["rows"]
        if row["rule"] == rule and row.get("extra") == extra
    ]
    said = ", ".join(
        f"{m:,} {d} users +{found.added_mb(m, v):.0f} MB x{found.ratio(m, v, t, u):.2f} time"
        for d, m, v, t, u in sorted(rows)
    )
    return f"adds {said} (fits of one sitting, measured to {found.users:,} users)"


def coefficients(record: dict, rule: str) -> str:
    """One line of ``rule``'s fit, for the benchmark's output."""
    found = fit(record, rule)
    a0, a1, a2 = found.mem
    c0, c1, c2 = found.seconds
    return (
        f"peak MB = {a0:.0f} + {a1 * 1e6:.3f} m^2/1e6 + {a2 * 1e6:.4f} visits/1e6; seconds = "
        f"{c0:.1f} + {c1 * 1e6:.4f} m^2/1e6 + {c2 * 1e6:.4f} visits/1e6 (threads {found.threads})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m userfair.workflow.dense_plan",
        description="Fit the dense route's requests on benchmarks/dense_requests.py's JSON "
        "files; print each rule's fit and, per measured job, what it used and asks for.",
    )
    parser.add_argument(
        "measured", nargs="+", type=Path, help="benchmarks/dense_requests.py --json"
    )
    parser.add_argument(
        "--extras", nargs="+", type=Path, default=[],
        help="benchmarks/dense_requests.py --extras --json: the opt-in settings, one sitting",
    )  # fmt: skip
    parser.add_argument("--write-calibration", type=Path, help="write the merged rows here")
    args = parser.parse_args(argv)
    records = [json.loads(path.read_text(encoding="utf-8")) for path in args.measured]
    record = {
        "machine": records[0]["machine"],
        "rows": [row for found in records for row in found["rows"] if "extra" not in row],
    }
    if args.extras:
        extras = [json.loads(path.read_text(encoding="utf-8")) for path in args.extras]
        record["extras"] = {
            "machine": extras[0]["machine"],
            "rows": [row for found in extras for row in found["rows"]],
        }
    elif "extras" in calibration():  # the packaged sitting's, kept
        record["extras"] = calibration()["extras"]
    present = {row["rule"] for row in record["rows"]}
    for rule in [rule for rule in RULES if rule in present]:
        print(f"{rule}: {coefficients(record, rule)}")
        for row in record["rows"]:
            if row["rule"] != rule:
                continue
            size = costs.Size("d", row["users"], 0, row["train"], 0, row["users"], "stats",
                              row["visits"])  # fmt: skip
            asked = requests(
                size, 10**9, threads=row["threads"], record=record,
                repeats={rule: row.get("units", 1)}, rules=(rule,),
            )[rule]  # fmt: skip
            print(
                f"  {row['density']} {row['users']:>6} users, {row['visits']:.3g} visits: "
                f"{row['seconds']:.1f} s, {row['peak_mb']:.0f} MB -> asks "
                f"{asked.runtime} min, {asked.mem_mb} MB"
            )
    for extra, reached in EXTRAS.items() if "extras" in record else ():
        for rule in reached:
            print(f"{rule} with {extra}: {extra_coefficients(record, rule, extra)}")
    if args.write_calibration:
        write_calibration(record, args.write_calibration)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
