"""The dense route's requests (userfair.workflow.dense_plan, docs/cluster.md#dense-requests):
fitted on the packaged timings of the similarity and measures jobs, they cover every
measured job with the cost model's margins, grow with the users as m^2, say where they are
extrapolated, and refuse a calibration that cannot be fitted."""

from __future__ import annotations

import json

import pytest

from userfair.workflow import costs, dense_plan


def _size(users, visits, train=None):
    return costs.Size("d", users, 20_000, train or 19 * users, 100, users, "stats", visits)


def _record(rows):
    return {"machine": "test", "rows": rows}


def _row(rule, users, seconds, peak_mb, visits=None):
    visits = users * 30 if visits is None else visits
    return {"rule": rule, "users": users, "visits": visits, "threads": 2,
            "seconds": seconds, "peak_mb": peak_mb}  # fmt: skip


def test_a_hand_worked_fit_gives_back_its_line():
    """Two sizes on the line peak = 300 + 40 m^2 / 1e6 MB, seconds = 10 + 0.2 m^2 / 1e6."""
    rows = [_row("measures", m, 10 + 0.2 * m * m / 1e6, 300 + 40 * m * m / 1e6, 0)
            for m in (1000, 10_000)]  # fmt: skip
    rows += [_row("similarity", m, 5.0, 250.0, 0) for m in (1000, 10_000)]
    found = dense_plan.fit(_record(rows), "measures")
    assert found.mem[:2] == pytest.approx((300.0, 40e-6), rel=1e-9)
    assert found.seconds[:2] == pytest.approx((10.0, 0.2e-6), rel=1e-9)
    # 20,000 users: 300 + 16,000 MB, 10 + 80 s; with the margins, rounded up
    request = dense_plan.requests(_size(20_000, 0), 2880, threads=2, record=_record(rows))
    measures = request["measures"]
    assert measures.mem_mb == 100 * -(-(16_300 * costs.MEM_MARGIN) // 100)
    assert measures.runtime == costs.MIN_RUNTIME  # 90 s x 1.5 is under the floor
    assert measures.basis == "extrapolated"  # beyond the largest measured size
    # at least an interpreter with the libraries loaded
    assert request["similarity"].mem_mb == 100 * -(-(costs.BASE_MB * costs.MEM_MARGIN) // 100)
    # a retry asks for more time; one thread for work timed on two: twice the seconds
    slow = _row("measures", 20_000, 10 + 0.2 * 4e8 / 1e6 * 100, 1000.0, 0)
    long = dense_plan.requests(_size(20_000, 0), 2880, 3, threads=1, record=_record(rows + [slow]))
    assert long["measures"].runtime > 3 * costs.MIN_RUNTIME


def test_the_packaged_calibration_covers_every_measured_job():
    """At each measured size, each job's request (with its margins) is at least what the
    job used: its peak RSS and its seconds."""
    record = dense_plan.calibration()
    assert {row["rule"] for row in record["rows"]} == set(dense_plan.RULES)
    for row in record["rows"]:
        size = _size(row["users"], row["visits"], row.get("train"))
        request = dense_plan.requests(size, 2880, threads=row["threads"])[row["rule"]]
        assert request.mem_mb >= row["peak_mb"], row
        assert request.runtime * 60 >= row["seconds"], row
        assert request.basis == "measured"


def test_requests_grow_with_the_users_and_gamma_below_one_holds_more_matrices():
    small = dense_plan.requests(_size(2_000, 6e5), 2880)["measures"]
    large = dense_plan.requests(_size(20_000, 6e7), 2880)["measures"]
    assert large.mem_mb > small.mem_mb
    mixed = dense_plan.requests(_size(20_000, 6e7), 2880, gamma=0.5)["measures"]
    assert mixed.mem_mb > large.mem_mb and mixed.basis == "extrapolated"
    assert dense_plan.matrices_scale(1.0) == 1.0 and dense_plan.matrices_scale(0.5) == 2.0
    capped = dense_plan.requests(_size(20_000, 6e7), 5, 4)["measures"]
    assert capped.runtime == 5  # never above training.max_runtime


def test_a_calibration_of_one_size_is_refused(tmp_path):
    rows = [_row(rule, 1000, 5.0, 300.0) for rule in dense_plan.RULES]
    with pytest.raises(ValueError, match="at least two sizes"):
        dense_plan.write_calibration(_record(rows), tmp_path / "dense.json")
    assert not (tmp_path / "dense.json").exists()
    rows += [_row(rule, 4000, 9.0, 900.0) for rule in dense_plan.RULES]
    dense_plan.write_calibration(_record(rows), tmp_path / "dense.json")
    assert json.loads((tmp_path / "dense.json").read_text())["rows"] == rows
