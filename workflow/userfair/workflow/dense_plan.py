"""What the dense route's jobs ask for, from their dataset's size (docs/cluster.md#dense-requests).

The dense route holds (m, m) user similarities: the ``similarity`` job builds one and the
``measures`` job reads them, so their memory grows as m^2 and their time as m^2 plus the
sparse products' work and size (the item visits: the sum over items of deg (deg - 1) / 2,
deg the evaluated users with the item in train). ``benchmarks/dense_requests.py`` times both jobs
through the workflow at several sizes and writes the calibration (package data
:data:`CALIBRATION`: one row per job and size, its seconds and peak RSS). :func:`fit` fits
each rule's

    peak MB = a0 + a1 m^2 + a2 visits          seconds = c0 + c1 m^2 + c2 visits

by non-negative least squares, and :func:`requests` asks for that times the cost model's
margins (``userfair.workflow.costs``), memory at least ``costs.BASE_MB`` rounded up to
100 MB, runtime at least ``costs.MIN_RUNTIME`` minutes,
times the retry attempt, at most ``training.max_runtime``. A size beyond the measured ones
is extrapolated (the plan says so); the fit's residuals on the measured rows are in
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from userfair.engine import route
from userfair.files.io import atomic_path
from userfair.workflow import costs, scatter_plan

#: The packaged calibration (userfair/workflow/data/dense_parts.json).
CALIBRATION = "dense_parts.json"
#: The dense route's jobs (workflow/rules/measures.smk), each sized by :func:`requests`.
RULES = ("similarity", "measures")


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

    def time_s(self, m: int, visits: float, threads: int) -> float:
        c0, c1, c2 = self.seconds
        # fewer threads than measured: as if the work did not share at all (an upper bound)
        return (c0 + c1 * m * m + c2 * visits) * max(1.0, self.threads / max(1, threads))


@cache
def calibration() -> dict:
    """The packaged calibration (:data:`CALIBRATION`)."""
    path = resources.files("userfair.workflow") / "data" / CALIBRATION
    return json.loads(path.read_text(encoding="utf-8"))


def write_calibration(record: dict, path: str | Path) -> None:
    """``record`` (``machine``, ``rows``: each with ``rule``, ``users``, ``visits``,
    ``threads``, ``seconds``, ``peak_mb``) as the calibration file :func:`requests` reads."""
    for rule in RULES:
        fit(record, rule)  # refuse a record that cannot be fitted
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


def fit(record: dict, rule: str) -> Fit:
    """The :class:`Fit` of ``rule``'s rows of ``record`` (at least two sizes)."""
    rows = [row for row in record["rows"] if row["rule"] == rule]
    if len({row["users"] for row in rows}) < 2:
        raise ValueError(f"{rule}: the calibration needs rows of at least two sizes")
    m2 = np.array([float(row["users"]) ** 2 for row in rows])
    visits = np.array([float(row["visits"]) for row in rows])
    ones = np.ones(len(rows))
    features = np.column_stack([ones, m2, visits])
    mem = _nnls(features, np.array([row["peak_mb"] for row in rows]))
    seconds = _nnls(features, np.array([row["seconds"] for row in rows]))
    threads = min(int(row["threads"]) for row in rows)
    users = max(int(row["users"]) for row in rows)
    return Fit(tuple(mem), tuple(seconds), threads, users)


def matrices_scale(gamma: float) -> float:
    """How much more (m, m) memory the ``measures`` job holds at ``gamma`` than at 1, where
    it was timed: the similarity files it reads (cosine and Jaccard, plus the genre one
    when gamma < 1) and the matrices ``evaluate`` holds (``route.dense_matrices``), counted
    from the code, not measured (the calibration runs at gamma 1)."""
    held = 2 + (gamma < 1.0) + route.dense_matrices(gamma)
    return held / (2 + route.dense_matrices(1.0))


def requests(
    size: costs.Size, max_runtime: int, attempt: int = 1, threads: int = 1,
    gamma: float = 1.0, record=None,
) -> dict[str, costs.Request]:  # fmt: skip
    """What each dense job of a dataset of ``size`` asks for, per rule of :data:`RULES`
    (module docstring; the measures job's memory times :func:`matrices_scale` of UF's
    ``gamma``); ``record`` defaults to :func:`calibration`."""
    record = record or calibration()
    m = int(size.evaluated_users)
    visits, _ = scatter_plan.visits_of(size, scatter_plan.calibration())
    out = {}
    for rule in RULES:
        found = fit(record, rule)
        scale = matrices_scale(gamma) if rule == "measures" else 1.0
        memory = max(costs.BASE_MB, found.mem_mb(m, visits) * scale)
        mem_mb = int(math.ceil(memory * costs.MEM_MARGIN / 100) * 100)
        minutes = max(
            costs.MIN_RUNTIME, math.ceil(found.time_s(m, visits, threads) / 60 * costs.TIME_MARGIN)
        )
        basis = "measured" if m <= found.users and scale == 1.0 else "extrapolated"
        out[rule] = costs.Request(
            mem_mb, min(minutes * max(1, int(attempt)), int(max_runtime)), 0, basis
        )
    return out


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
    parser.add_argument("--write-calibration", type=Path, help="write the merged rows here")
    args = parser.parse_args(argv)
    records = [json.loads(path.read_text(encoding="utf-8")) for path in args.measured]
    record = {
        "machine": records[0]["machine"],
        "rows": [row for found in records for row in found["rows"]],
    }
    for rule in RULES:
        print(f"{rule}: {coefficients(record, rule)}")
        for row in record["rows"]:
            if row["rule"] != rule:
                continue
            size = costs.Size("d", row["users"], 0, row["train"], 0, row["users"], "stats",
                              row["visits"])  # fmt: skip
            asked = requests(size, 10**9, threads=row["threads"], record=record)[rule]
            print(
                f"  {row['density']} {row['users']:>6} users, {row['visits']:.3g} visits: "
                f"{row['seconds']:.1f} s, {row['peak_mb']:.0f} MB -> asks "
                f"{asked.runtime} min, {asked.mem_mb} MB"
            )
    if args.write_calibration:
        write_calibration(record, args.write_calibration)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
