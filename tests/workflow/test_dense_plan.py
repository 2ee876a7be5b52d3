"""The dense route's requests (userfair.workflow.dense_plan, docs/cluster.md#dense-requests):
fitted on the packaged timings of the similarity, measures and experiment jobs, they cover every
measured job with the cost model's margins, grow with the users as m^2, say where they are
extrapolated, and refuse a calibration that cannot be fitted."""

from __future__ import annotations

import json

import pytest

from userfair.workflow import costs, dense_plan, experiments


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
    both = ("similarity", "measures")
    request = dense_plan.requests(
        _size(20_000, 0), 2880, threads=2, record=_record(rows), rules=both
    )
    measures = request["measures"]
    assert measures.mem_mb == 100 * -(-(16_300 * costs.MEM_MARGIN) // 100)
    assert measures.runtime == costs.MIN_RUNTIME  # 90 s x 1.5 is under the floor
    assert measures.basis == "extrapolated"  # beyond the largest measured size
    # at least an interpreter with the libraries loaded
    assert request["similarity"].mem_mb == 100 * -(-(costs.BASE_MB * costs.MEM_MARGIN) // 100)
    # a retry asks for more time; one thread for work timed on two: twice the seconds
    slow = _row("measures", 20_000, 10 + 0.2 * 4e8 / 1e6 * 100, 1000.0, 0)
    long = dense_plan.requests(
        _size(20_000, 0), 2880, 3, threads=1, record=_record(rows + [slow]), rules=both
    )
    assert long["measures"].runtime > 3 * costs.MIN_RUNTIME


def test_the_packaged_calibration_covers_every_measured_job():
    """At each measured size, each job's request (with its margins) is at least what the
    job used: its peak RSS and its seconds."""
    record = dense_plan.calibration()
    assert {row["rule"] for row in record["rows"]} == set(dense_plan.RULES)
    for row in record["rows"]:
        size = _size(row["users"], row["visits"], row.get("train"))
        request = dense_plan.requests(
            size, 2880, threads=row["threads"], repeats={row["rule"]: row.get("units", 1)}
        )[row["rule"]]
        assert request.mem_mb >= row["peak_mb"], row
        assert request.runtime * 60 >= row["seconds"], row
        assert request.basis == "measured"


def test_requests_grow_with_the_users_and_the_opt_in_settings():
    small = dense_plan.requests(_size(2_000, 6e5), 2880)["measures"]
    large = dense_plan.requests(_size(20_000, 6e7), 2880)["measures"]
    assert large.mem_mb > small.mem_mb
    # UF's genre mix holds more (m, m) matrices; graded relevance more per-user columns;
    # an opt-in similarity runs in row blocks, so it adds time, not memory worth a request
    for extra in ({"gamma": 0.5}, {"graded": True}, {"similarities": 1}):
        more = dense_plan.requests(_size(20_000, 6e7), 2880, **extra)["measures"]
        assert more.mem_mb >= large.mem_mb and more.basis == "extrapolated", extra
        if "similarities" not in extra:
            assert more.mem_mb > large.mem_mb, extra
    near = dense_plan.requests(_size(5_000, 2e6), 2880, threads=2, gamma=0.5)["measures"]
    assert near.basis == "measured"  # within the sizes timed with it
    # graded relevance reaches neither the experiments nor the decomposition
    plain = dense_plan.requests(_size(5_000, 2e6), 2880, rules=("exp_extreme", "users"))
    assert (
        dense_plan.requests(_size(5_000, 2e6), 2880, graded=True, rules=("exp_extreme", "users"))
        == plain
    )
    capped = dense_plan.requests(_size(20_000, 6e7), 5, 4)["measures"]
    assert capped.runtime == 5  # never above training.max_runtime


def test_the_experiments_repeat_their_evaluations_as_the_configuration_says():
    """exp_similarity evaluates once per Weibull shape and for the normal and the observed
    similarity, exp_gamma once per gamma for each model and relevance step (the steps of
    userfair.workflow.experiments, which dense_plan states without importing); the time
    fit takes the repeats in, so the requests grow with them and the memory does not."""
    assert dense_plan.RELEVANCE_STEPS == len(experiments.STEPS)
    config = {
        "models": ["UserKNN", "BPR", "NCL"],
        "experiments": {"weibull_shapes": [0.5, 1, 2], "gammas": [0, 0.5, 1]},
        "uncertainty": {"resamples": 1000},
        "measures": {"similarities": ["cos", "jacc"], "relevance": ["binary"]},
    }
    assert dense_plan.units("exp_similarity", config) == 3 + 2
    assert dense_plan.units("exp_gamma", config) == 3 * (3 + 11)
    assert dense_plan.units("exp_relevance", config) == dense_plan.units("users", config) == 1
    assert dense_plan.units("exp_variants", config) == 2  # cos and jacc
    assert dense_plan.units("uncertainty", config) == 1
    config["uncertainty"]["resamples"] = 30  # fewer: as much as the timed 1,000
    assert dense_plan.units("uncertainty", config) == 1
    config["uncertainty"]["resamples"] = 2500
    assert dense_plan.units("uncertainty", config) == 3
    config["measures"] = {"relevance": ["binary", "graded"]}  # and the opt-in genre, vec
    assert dense_plan.units("exp_variants", config, ["genre", "vec"]) == 2 + 3  # and rcos
    assert dense_plan.units("exp_variants", config, ["rcos"]) == 2 + 1  # rcos counted once
    # seconds = 4 + units x 1e-6 m^2 (hand-worked): rows at 2 and 8 units fit it exactly
    rows = [
        {**_row("exp_gamma", m, 4 + u * 1e-6 * m * m, 500 + 1e-5 * m * m, 0), "units": u}
        for m, u in ((1000, 2), (4000, 8), (4000, 2))
    ]
    found = dense_plan.fit(_record(rows), "exp_gamma")
    assert found.seconds[:2] == pytest.approx((4.0, 1e-6), rel=1e-9)
    assert found.time_s(10_000, 0, 2, units=70) == pytest.approx(4 + 70 * 100)
    size = _size(10_000, 0)
    few = dense_plan.requests(size, 2880, record=_record(rows), rules=("exp_gamma",))
    many = dense_plan.requests(
        size, 2880, record=_record(rows), repeats={"exp_gamma": 70}, rules=("exp_gamma",)
    )
    assert many["exp_gamma"].runtime > few["exp_gamma"].runtime
    assert many["exp_gamma"].mem_mb == few["exp_gamma"].mem_mb


def _extras(sizes=(1000, 4000)):
    """A sitting's base and extras rows: each extra doubles the base's time and adds
    50 + 40 m^2 / 1e6 MB."""
    rows = []
    for extra, reached in [(None, dense_plan.RULES), *dense_plan.EXTRAS.items()]:
        for rule in reached:
            for m in sizes:
                row = _row(rule, m, 10 + 0.2 * m * m / 1e6, 300 + 40 * m * m / 1e6, 0)
                if extra is not None:
                    row.update(extra=extra, seconds=2 * row["seconds"])
                    row["peak_mb"] += 50 + 40 * m * m / 1e6
                rows.append(row)
    return {"machine": "test", "rows": rows}


def test_a_calibration_of_one_size_is_refused(tmp_path):
    rows = [_row(rule, 1000, 5.0, 300.0) for rule in dense_plan.RULES]
    with pytest.raises(ValueError, match="at least two sizes"):
        dense_plan.write_calibration({**_record(rows), "extras": _extras()}, tmp_path / "d.json")
    assert not (tmp_path / "d.json").exists()
    rows += [_row(rule, 4000, 9.0, 900.0) for rule in dense_plan.RULES]
    with pytest.raises(ValueError, match="at least two sizes"):  # no extras: refused too
        dense_plan.write_calibration(_record(rows), tmp_path / "d.json")
    with pytest.raises(ValueError, match="at least two sizes"):
        dense_plan.write_calibration(
            {**_record(rows), "extras": _extras((1000,))}, tmp_path / "d.json"
        )
    assert not (tmp_path / "d.json").exists()
    record = {**_record(rows), "extras": _extras()}
    dense_plan.write_calibration(record, tmp_path / "d.json")
    assert json.loads((tmp_path / "d.json").read_text()) == record


def test_a_hand_worked_extra_adds_its_memory_and_stretches_the_time_by_its_ratio():
    """The sitting's base: peak 300 + 40 m^2/1e6 MB, 10 + 0.2 m^2/1e6 s; each extra doubles
    the time and adds 50 + 40 m^2/1e6 MB. The base the requests start from was timed on a
    machine three times as fast (a third of the seconds): the extras carry over as a
    ratio of time and a difference of memory."""
    base = [
        _row(rule, m, (10 + 0.2 * m * m / 1e6) / 3, 300 + 40 * m * m / 1e6, 0)
        for rule in dense_plan.RULES
        for m in (1000, 4000)
    ]
    record = {**_record(base), "extras": _extras()}
    m = 3000
    plain_s, plain_mb = (10 + 0.2 * m * m / 1e6) / 3, 300 + 40 * m * m / 1e6
    added_mb = 50 + 40 * m * m / 1e6
    extra = dense_plan.extra_fit(record, "measures", "graded")
    assert extra.added_mb(m, 0) == pytest.approx(added_mb, rel=1e-9)
    assert extra.ratio(m, 0, 2) == pytest.approx(2.0, rel=1e-9)
    assert extra.users == 4000

    def asked(**settings):
        return dense_plan.requests(_size(m, 0), 2880, threads=2, record=record, **settings)

    def request(mb, seconds):
        return costs.margined(max(costs.BASE_MB, mb), seconds / 60, 0, "measured", 2880, 1)

    assert asked()["measures"] == request(plain_mb, plain_s)
    assert asked(graded=True)["measures"] == request(plain_mb + added_mb, 2 * plain_s)
    # two extras: both memories, the time stretched by both (1 + 1 + 1)
    both = asked(gamma=0.5, graded=True)
    assert both["measures"] == request(plain_mb + 2 * added_mb, 3 * plain_s)
    assert both["exp_relevance"] == request(plain_mb + added_mb, 2 * plain_s)  # gamma alone
    assert both["exp_extreme"] == request(plain_mb, plain_s)  # reached by neither
    # each opt-in similarity adds as much as the timed one
    three = asked(similarities=3)["uncertainty"]
    assert three == request(plain_mb + 3 * added_mb, 4 * plain_s)
    # beyond the sitting's largest size: extrapolated, even within the base's
    far = dense_plan.requests(
        _size(5000, 0),
        2880,
        record={
            **record,
            "rows": base + [_row(rule, 9000, 1.0, 400.0, 0) for rule in dense_plan.RULES],
        },
        graded=True,
    )
    assert far["measures"].basis == "extrapolated"
    assert far["exp_extreme"].basis == "measured"


def test_the_packaged_extras_cover_every_job_timed_with_them():
    """Each job timed with an opt-in setting asks for at least its peak and its seconds:
    the packaged base (another machine) plus the setting's measured difference and ratio."""
    record = dense_plan.calibration()
    rows = record["extras"]["rows"]
    assert {row.get("extra") for row in rows} == {None, *dense_plan.EXTRAS}
    for row in rows:
        extra = row.get("extra")
        if extra is None:
            continue
        settings = {"gamma": {"gamma": 0.5}, "graded": {"graded": True},
                    "similarity": {"similarities": 1}}[extra]  # fmt: skip
        request = dense_plan.requests(
            _size(row["users"], row["visits"], row.get("train")), 2880, threads=row["threads"],
            repeats={row["rule"]: row.get("units", 1)}, rules=(row["rule"],), **settings,
        )[row["rule"]]  # fmt: skip
        assert request.mem_mb >= row["peak_mb"], row
        assert request.runtime * 60 >= row["seconds"], row
        assert request.basis == "measured", row
