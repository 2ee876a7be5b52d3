"""The plan lines of the scattered streamed measures (userfair.workflow.scatter_plan,
docs/cluster.md#scatter-plan): read from benchmarks/scatter_cluster.py's JSON or a sampled
row of benchmarks/streaming.py, they give back the measured parts at the measured size and
scale pair work as (M/m)^2 and per-user work as M/m, saying so."""

from __future__ import annotations

import json
import math

import pytest

from userfair.workflow import costs, scatter_plan


def cluster_result(parts: int = 4) -> dict:
    """A benchmarks/scatter_cluster.py JSON: 100,000 users, ``parts`` parts of equal work,
    each job 10 s beyond its pass, the measures gather 40 s."""
    one = [20.0 / parts] * parts
    two = [[60.0 / parts, 3.0, 8.0 / parts]] * parts
    jobs = [{"rule": "pairs_part", "elapsed_s": s + 10, "max_rss_mb": 900.0} for s in one]
    jobs += [{"rule": "pairs", "elapsed_s": 5, "max_rss_mb": 200.0}]
    jobs += [{"rule": "measure_sums", "elapsed_s": sum(s) + 10, "max_rss_mb": 1200.0} for s in two]
    jobs += [{"rule": "measures", "elapsed_s": 40, "max_rss_mb": 1100.0}]
    run = {"parts": parts, "load_before": 1.0, "load_after": 2.0, "jobs": jobs,
           "pass_one_s": one, "pass_two_s": two}  # fmt: skip
    small = {**run, "parts": 1, "jobs": jobs[-1:], "pass_one_s": [20.0], "pass_two_s": []}
    return {"users": 100_000, "density": "qk", "train_interactions": 1_900_000,
            "item_visits": 1.6e9, "runs": [small, run]}  # fmt: skip


def test_the_cluster_measurement_is_read_from_the_run_of_most_parts():
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    assert (measured.pass_one_s, measured.pairs_s, measured.envy_s) == (20.0, 60.0, 8.0)
    assert measured.uf_setup_s == 3.0  # per part: every part recomputes UF's item cosines
    assert measured.overhead_s == pytest.approx(10.0)
    assert (measured.gather_s, measured.job_mb, measured.base_mb) == (40, 1200.0, 200.0)
    assert measured.share == 1.0
    assert "4 timed SLURM parts of 100,000 QK-like users (load 1.0-2.0)" in measured.source


def test_at_the_measured_size_the_plan_gives_the_measured_parts_back():
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    p = scatter_plan.plan(measured, 100_000, nodes=4)
    assert p.pass_one_part_s == pytest.approx(5.0 + 10.0)
    assert p.pass_two_part_s == pytest.approx(15.0 + 3.0 + 2.0 + 10.0)
    assert p.wall_s == pytest.approx(15.0 + 30.0 + 40.0)
    assert p.job_mb == pytest.approx(1200.0)
    assert p.cpu_hours == pytest.approx((4 * 45.0 + 40.0) / 3600)


def test_pair_work_grows_as_the_square_and_per_user_work_linearly():
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    p = scatter_plan.plan(measured, 1_000_000, nodes=100, threads=2)
    assert (p.pair_scale, p.user_scale) == pytest.approx((100.0, 10.0))
    assert p.pass_one_part_s == pytest.approx(20.0 * 100 / 200 + 10.0 * 10)
    assert p.pass_two_part_s == pytest.approx(68.0 * 100 / 200 + 3.0 * 10 + 10.0 * 10)
    assert p.item_visits == pytest.approx(1.6e11)
    assert p.train == pytest.approx(19_000_000)
    assert p.job_mb == pytest.approx(200.0 + 1000.0 * 10)
    text = scatter_plan.line(p)
    assert text.startswith("1,000,000 users (19.0 M train interactions, 1.6e+11 item visits)")
    assert "on 100 nodes x 2 thread(s)" in text
    assert "EXTRAPOLATED from 4 timed SLURM parts" in text
    assert "pair work x 100 ((M/m)^2" in text and "memory x 10 (M/m)" in text
    assert "OVER" not in text  # 3-minute parts: far within training.max_runtime


def test_parts_longer_than_the_longest_job_are_said_so():
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    p = scatter_plan.plan(measured, 10_000_000, nodes=100)
    assert p.pass_two_part_s / 60 * 1.5 > 120
    assert scatter_plan.over(p, max_runtime=120) == (
        f"OVER the longest job: a part's {p.pass_two_part_s / 60:,.0f} min (x 1.5 margin) "
        "exceed training.max_runtime = 120 min (scatter finer or raise it)"
    )
    assert scatter_plan.over(p) == ""  # within the default 2,880 minutes
    assert scatter_plan.over(scatter_plan.plan(measured, 100_000, nodes=4)) == ""


def test_a_sampled_range_of_streaming_py_counts_as_its_share_of_the_work():
    row = {"size": 1_000_000, "density": "qk", "train_interactions": 19_100_000,
           "item_visits": 1.6e11, "sample_share": 0.01, "range_pass_one_s": 40.0,
           "range_pass_two_parts_s": [100.0, 30.0, 5.0], "ranges": [[0, 1]] * 100,
           "peak_rss_gib": 3.0, "rss_before_gib": 2.0, "load_after": [1.5, 1, 1],
           "range_s": 100.0, "range_cpu_s": 100.0}  # fmt: skip
    measured = scatter_plan.Measured.from_sample(row)
    p = scatter_plan.plan(measured, 1_000_000, nodes=100)
    assert p.pass_one_part_s == pytest.approx(40.0)  # the timed range is one of the 100
    assert p.pass_two_part_s == pytest.approx(100.0 + 30.0 + 5.0)
    assert p.pair_scale == 1.0 and p.gather_s == 0.0
    assert "1 timed range of 100 at 1,000,000 QK-like users, in-process (load 1.5" in p.source


def test_the_command_prints_a_line_per_size(tmp_path, capsys):
    path = tmp_path / "scatter.json"
    path.write_text(json.dumps(cluster_result()))
    assert scatter_plan.main([str(path), "--users", "1000000", "10000000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" users")[0] for line in lines] == ["1,000,000", "10,000,000"]
    ten = scatter_plan.plan(scatter_plan.Measured.from_cluster(cluster_result()), 10**7, 100)
    assert math.isclose(ten.pair_scale, 1e4) and "EXTRAPOLATED" in lines[1]


def test_seconds_of_jobs_that_shared_their_core_count_as_on_a_core_of_their_own():
    result = cluster_result()
    run = result["runs"][1]
    for job in run["jobs"]:  # pass one's parts had half a core, the rest all of one
        job["cpu_s"] = job["elapsed_s"] * (0.5 if job["rule"] == "pairs_part" else 1.0)
        job["min_rss_mb"] = 250.0
    measured = scatter_plan.Measured.from_cluster(result)
    assert measured.pass_one_s == pytest.approx(10.0) and measured.pairs_s == 60.0
    assert measured.overhead_s == pytest.approx(5.0)  # pass one's jobs: 10 s at half a core
    assert measured.base_mb == 250.0  # the smallest step: an interpreter with its imports


def test_a_sampled_range_on_two_threads_counts_its_thread_seconds():
    row = {"size": 1_000_000, "density": "qk", "train_interactions": 19_100_000,
           "item_visits": 1.6e11, "sample_share": 0.01, "range_pass_one_s": 40.0,
           "range_pass_two_parts_s": [100.0, 30.0, 5.0], "ranges": [[0, 1]] * 100,
           "peak_rss_gib": 3.0, "rss_before_gib": 2.0, "range_s": 100.0,
           "range_cpu_s": 180.0}  # fmt: skip
    measured = scatter_plan.Measured.from_sample(row)
    assert (measured.pass_one_s, measured.pairs_s) == pytest.approx((72.0, 180.0))
    assert "load nan" in measured.source  # no load recorded: said so


# --- the workflow's own requests -----------------------------------------------------------


def _size(users, train, visits=None, items=20_000):
    return costs.Size("d", users, items, train, 100, users, "stats", visits)


def test_the_requests_at_the_measured_size_are_the_measured_parts_with_the_margins():
    """At the calibration's own size and parts, each job asks for its measured seconds and
    the largest measured peak, times the cost model's margins; at least its floors."""
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    size = _size(100_000, 1_900_000, 1.6e9)
    found = scatter_plan.requests(size, 4, 2880, measured=measured)
    assert set(found) == set(scatter_plan.RULES)
    assert {r.mem_mb for r in found.values()} == {math.ceil(1200 * 1.3 / 100) * 100}
    seconds = {"pairs_part": 15.0, "pairs": 10.0, "measure_sums": 30.0, "measures": 40.0}
    for rule, s in seconds.items():
        assert found[rule].runtime == max(costs.MIN_RUNTIME, math.ceil(s / 60 * 1.5)), rule
    # ten times the pair work (item visits) in one part: pass one and two grow with them
    big = scatter_plan.requests(_size(100_000, 1_900_000, 1.6e11), 1, 2880, measured=measured)
    assert big["pairs_part"].runtime == math.ceil((20.0 * 100 + 10.0) / 60 * 1.5)
    assert big["measure_sums"].runtime == math.ceil((68.0 * 100 + 3.0 + 10.0) / 60 * 1.5)
    # retries ask for more time, never above the cap; memory stays
    third = scatter_plan.requests(_size(100_000, 1_900_000, 1.6e11), 1, 100, 3, measured=measured)
    assert big["pairs_part"].runtime == 51 and third["pairs_part"].runtime == 100  # not 153
    assert third["pairs"].mem_mb == big["pairs"].mem_mb
    # with one part there are no parts: the gathers make the passes themselves
    assert big["pairs"].runtime == big["pairs_part"].runtime
    assert big["measures"].runtime == math.ceil((68.0 * 100 + 3.0 + 10.0 + 40.0) / 60 * 1.5)
    # two threads a job halve the pair work of a part
    two = scatter_plan.requests(size, 1, 2880, threads=2, measured=measured)
    one = scatter_plan.requests(size, 1, 2880, measured=measured)
    assert two["measure_sums"].runtime <= one["measure_sums"].runtime


def test_memory_follows_the_users_and_a_tiny_dataset_asks_for_the_floor():
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    ten = scatter_plan.requests(_size(1_000_000, 19_000_000, 1.6e11), 100, 2880, measured=measured)
    assert ten["measure_sums"].mem_mb == math.ceil((200 + 1000 * 10) * 1.3 / 100) * 100
    tiny = scatter_plan.requests(_size(83, 49_015, 2e7), 2, 2880, measured=measured)
    assert {r.mem_mb for r in tiny.values()} == {math.ceil(costs.BASE_MB * 1.3 / 100) * 100}
    assert {r.runtime for r in tiny.values()} == {costs.MIN_RUNTIME}


def test_unknown_item_visits_are_estimated_from_the_shape_and_said_so():
    measured = scatter_plan.Measured(**{**vars(scatter_plan.calibration()), "items": 20_000})
    known, how = scatter_plan.visits_of(_size(10, 100, 12345), measured)
    assert (known, how) == (12345.0, "its stats.json's item visits")
    guess, how = scatter_plan.visits_of(_size(200_000, 2 * measured.train, None, 40_000), measured)
    assert guess == pytest.approx(measured.item_visits * 4 / 2)  # twice the train, twice the items
    assert how == "item visits estimated from its shape"
    # a split that evaluates a tenth of the users: the evaluated users' train, squared
    tenth = costs.Size("d", 200_000, 40_000, 2 * measured.train, 100, 20_000, "catalogue")
    assert scatter_plan.visits_of(tenth, measured)[0] == pytest.approx(guess / 100)


def test_the_packaged_calibration_is_a_timed_scatter(tmp_path):
    measured = scatter_plan.calibration()
    assert measured.users > 0 and measured.item_visits > 0 and measured.items > 0
    assert "timed" in measured.source
    path = tmp_path / "c.json"
    scatter_plan.write_calibration(measured, path)
    assert scatter_plan.Measured(**json.loads(path.read_text())) == measured


def test_the_command_writes_a_calibration(tmp_path, capsys):
    source = tmp_path / "scatter.json"
    source.write_text(json.dumps(cluster_result()))
    out = tmp_path / "calibration.json"
    argv = [str(source), "--items", "20000", "--write-calibration", str(out), "--users", "100000"]
    assert scatter_plan.main(argv) == 0
    written = scatter_plan.Measured(**json.loads(out.read_text()))
    assert written == scatter_plan.Measured(
        **{**vars(scatter_plan.Measured.from_cluster(cluster_result())), "items": 20_000}
    )
    assert f"{out}: the calibration of 4 timed SLURM parts" in capsys.readouterr().out


def test_a_scatter_that_cannot_finish_is_refused_with_the_parts_that_would():
    """The longest job's estimate (no margin) against training.max_runtime: 100 times the
    calibration's visits in 4 parts take pass two 68 x 100 / 4 + 3 + 10 s = 29 min; 16
    parts fit 10 minutes; the default shape never stops a run."""
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    size = _size(100_000, 1_900_000, 1.6e11)
    said = scatter_plan.infeasible(size, 4, 10, measured=measured)
    assert said.startswith(
        "the streamed measures of d in 4 part(s) of 1 thread(s) cannot finish within "
        "training.max_runtime = 10 min: their longest job is estimated at 29 min"
    )
    assert said.endswith("raise measures.scatter to 16 or more, or training.max_runtime")
    assert (
        scatter_plan._longest_s(scatter_plan._of_size(size, 16, 1, measured), 16, measured) <= 600
    )
    assert scatter_plan._longest_s(scatter_plan._of_size(size, 8, 1, measured), 8, measured) > 600
    assert scatter_plan.infeasible(size, 16, 10, measured=measured) is None
    ten = _size(1_000_000, 19_000_000, 1.6e11)  # the gather alone: 40 s x 10 > 5 min
    assert "no scatter up to 4,096 parts fits" in scatter_plan.infeasible(
        ten, 4, 5, measured=measured
    )
    unknown = costs.Size("d", 100_000, 20_000, 1_900_000, 100, 100_000, "default", 1.6e13)
    assert scatter_plan.infeasible(unknown, 1, 10, measured=measured) is None


def test_the_streamed_decomposition_asks_for_the_one_part_measures_times_its_ratio():
    """The streamed users job: the one-part measures job's memory, its seconds x 1.25 (the
    measured CPU ratio of the streamed decomposition); from 10 minutes up it asks for more
    time than that job, and a retry for more still."""
    size = _size(1_000_000, 19_000_000, 4e10)
    one_part = scatter_plan.requests(size, 1, 10**6)["measures"]
    users = scatter_plan.decomposition_request(size, 10**6)
    assert users.mem_mb == one_part.mem_mb and users.basis == "extrapolated"
    assert one_part.runtime > costs.MIN_RUNTIME
    ratio = users.runtime / one_part.runtime
    assert 1.25 * 0.98 < ratio < 1.25 * 1.02  # minutes rounded up on both sides
    assert scatter_plan.decomposition_request(size, 10**6, attempt=2).runtime == 2 * users.runtime
    assert scatter_plan.decomposition_request(size, 30).runtime == 30  # at most max_runtime
