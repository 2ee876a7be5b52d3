"""The plan lines of the scattered streamed measures (userfair.workflow.scatter_plan,
docs/cluster.md#scatter-plan): read from benchmarks/scatter_cluster.py's JSON or a sampled
row of benchmarks/streaming.py, they give back the measured parts at the measured size and
scale pair work as (M/m)^2 and per-user work as M/m, saying so."""

from __future__ import annotations

import json
import math

import pytest

from userfair.workflow import scatter_plan


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
    assert text.endswith(
        "OVER the rules' requests: a part's 10.0 GiB exceed the jobs' 7.8 GiB (raise it: "
        "finer parts need as much)"
    )  # 10,200 MB against the rules' 8,000 MB; the parts' 3 min fit their 120


def test_parts_longer_than_the_rules_runtime_are_said_so():
    measured = scatter_plan.Measured.from_cluster(cluster_result())
    p = scatter_plan.plan(measured, 10_000_000, nodes=100)
    assert p.pass_two_part_s / 60 > scatter_plan.RULE_RUNTIME_MIN
    assert "min exceed the jobs' 120-minute runtime" in scatter_plan.over(p)
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
