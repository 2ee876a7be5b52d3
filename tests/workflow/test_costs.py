"""The cost model of the training and export jobs (userfair.workflow.costs, docs/cluster.md#costs):
calibration from benchmarks/paper_scale.py's JSON, the shipped table, dataset sizes before
the data exists, requests and their growth on retries, the parse-time stop of a job the
configured device cannot finish, and (slow) `snakemake plan` against the resources that
Snakemake itself gives every job of the DAG."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from userfair.files.io import InputError
from userfair.workflow import (
    calibrate,
    catalogue,
    costs,
    dense_plan,
    grids,
    layout,
    models,
    scatter_plan,
)
from userfair.workflow import plan as plan_report

from conftest import BIN, REPO, copy_run, make_workdir, snakemake

PAPER_MODELS = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]


def benchmark_doc(model="NGCF", device="cpu", **stages) -> dict:
    """A paper_scale.json document of the benchmark's schema (version 1)."""
    doc = {
        "benchmark": "paper_scale",
        "version": 1,
        "machine": {
            "cpu": "Test CPU",
            "cores": 2,
            "ram_gib": 23.4,
            "gpu": "NVIDIA Test" if device == "cuda" else None,
            "load_1min_start": 1.2,
            "date": "2026-11-25T02:10Z",
        },
        "shape": {
            "name": "shape-a",
            "users": 20_000,
            "items": 5_000,
            "train": 1_000_000,
            "valid": 100_000,
            "test": 100_000,
            "max_history": 3_000,
            "evaluated_users": 2_000,
        },
        "model": model,
        "params": {"learning_rate": 0.001},
        "device": device,
        "threads": 2,
        "stages": {
            "dataset_build": {"seconds": 10.0, "peak_rss_mb": 900.0},
            "train_epoch": {
                "seconds": 400.0,
                "peak_rss_mb": 1500.0,
                "batches": 489,
                "batches_measured": 489,
                "extrapolated": False,
            },
            "validation": {
                "seconds": 20.0,
                "peak_rss_mb": 1700.0,
                "batches": 1,
                "batches_measured": 1,
                "extrapolated": False,
            },
        },
    }
    doc["stages"].update(stages)
    return doc


def write(tmp_path, name, doc) -> str:
    path = tmp_path / name / "paper_scale.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    return str(path)


def test_calibrated_row_gives_back_the_measured_seconds_and_memory(tmp_path):
    doc = benchmark_doc()
    (row,) = calibrate.calibrate([write(tmp_path, "a", doc)])
    assert (row.model, row.device, row.shape, row.train) == ("NGCF", "cpu", "shape-a", 1_000_000)
    assert row.basis == "measured" and row.threads == 2
    assert "paper_scale.py" in row.source and "Test CPU" in row.source
    assert row.epoch_driver == "graph"  # NGCF propagates the whole graph in every batch
    # the row reproduces the measurement at its own shape: load + one epoch + one validation
    size = costs.Size("shape-a", 20_000, 5_000, 1_000_000, 3_000, 2_000, "benchmark")
    job = costs.estimate("tune", "NGCF", size, costs.Settings(epochs=1, threads=2), gpus=0, row=row)
    assert job.minutes * 60 == pytest.approx(10.0 + 400.0 + 20.0)
    assert job.mem_mb == pytest.approx(1700.0)
    # 30 epochs at 1 thread: 30 epochs and validations, twice as slow
    job = costs.estimate("tune", "NGCF", size, costs.Settings(epochs=30), gpus=0, row=row)
    assert job.minutes * 60 == pytest.approx(2 * (10.0 + 30 * 420.0))
    # the graph driver: twice the batch size, half the propagations per epoch
    job = costs.estimate(
        "tune", "NGCF", size, costs.Settings(epochs=1, threads=2, train_batch_size=4096),
        gpus=0, row=row,
    )  # fmt: skip
    assert job.minutes * 60 == pytest.approx(10.0 + 400.0 * 245 / 489 + 20.0, rel=1e-3)


def test_calibration_reads_load_gpu_and_extrapolated_stages(tmp_path):
    gpu = benchmark_doc(
        "MultiVAE",
        "cuda",
        dataset_load={"seconds": 2.0, "peak_rss_mb": 700.0},
        topk={"seconds": 5.0, "peak_rss_mb": 800.0},
    )
    gpu["stages"]["train_epoch"]["extrapolated"] = True
    (row,) = calibrate.calibrate([write(tmp_path, "gpu", gpu)])
    assert (row.device, row.basis) == ("gpu", "extrapolated")
    assert "NVIDIA Test" in row.source
    assert row.build_s_per_train == pytest.approx(2.0 / 1_000_000)  # the load, not the build
    # the build is the recbole_dataset job's: its own coefficients
    assert row.dataset_s_per_train == pytest.approx(10.0 / 1_000_000)
    assert row.dataset_mb_per_train == pytest.approx((900.0 - costs.BASE_MB) / 1_000_000)
    assert row.epoch_driver == "users_items" and row.mem_driver == "none"
    assert row.epoch_s_per_unit == pytest.approx(400.0 / (20_000 * 5_000))
    # memory beyond the loaded dataset follows the train interactions (sparse history rows)
    assert row.mem_mb_per_unit == 0.0
    assert row.mem_mb_per_train == pytest.approx((1700.0 - costs.BASE_MB) / 1_000_000)


def test_calibration_of_a_one_thread_cpu_run_takes_its_cpu_seconds(tmp_path):
    """On a shared machine a one-thread run's wall time grows with the load; its CPU time is
    what the job costs with a core to itself. Several threads or a GPU: wall seconds."""
    doc = benchmark_doc("NGCF")
    doc["threads"] = 1
    for name, cpu in (("dataset_build", 8.0), ("train_epoch", 300.0), ("validation", 15.0)):
        doc["stages"][name]["cpu_seconds"] = cpu
    (row,) = calibrate.calibrate([write(tmp_path, "one", doc)])
    assert row.build_s_per_train == pytest.approx(8.0 / 1_000_000)
    size = costs.Size("shape-a", 20_000, 5_000, 1_000_000, 3_000, 2_000, "benchmark")
    job = costs.estimate("tune", "NGCF", size, costs.Settings(epochs=1), gpus=0, row=row)
    assert job.minutes * 60 == pytest.approx(8.0 + 300.0 + 15.0)
    for changes in ({"threads": 2}, {"device": "cuda"}):
        (row,) = calibrate.calibrate([write(tmp_path, str(changes), {**doc, **changes})])
        assert row.build_s_per_train == pytest.approx(10.0 / 1_000_000), changes


def test_merging_gives_unmeasured_gpu_rows_the_host_side_of_the_cpu_rows(tmp_path):
    """A GPU row that no file measures keeps its epoch and evaluation coefficients and takes
    the dataset load and host memory of the model's CPU row at the largest measured shape."""
    small, large = benchmark_doc("NGCF"), benchmark_doc("NGCF")
    large["shape"] = {**large["shape"], "name": "shape-b", "train": 4_000_000}
    large["stages"]["dataset_load"] = {"seconds": 4.0, "peak_rss_mb": 2500.0}
    rows = calibrate.calibrate([write(tmp_path, "a", small), write(tmp_path, "b", large)])
    gpu = costs.table()["NGCF", "gpu"][0]
    (refreshed,) = calibrate.refresh_gpu_rows(rows, {("NGCF", "gpu"): [gpu]})
    cpu = next(r for r in rows if r.shape == "shape-b")
    assert refreshed.build_s_per_train == pytest.approx(4.0 / 4_000_000)
    assert refreshed.mem_mb_per_train == cpu.mem_mb_per_train
    assert (refreshed.epoch_s_per_unit, refreshed.eval_s_per_unit, refreshed.basis) == (
        gpu.epoch_s_per_unit, gpu.eval_s_per_unit, gpu.basis,
    )  # fmt: skip
    assert "host memory as the shape-b CPU row" in refreshed.source
    assert refreshed.source.count("host memory as") == 1
    # a GPU row the files measure, or of a model without a CPU row, is not touched
    assert calibrate.refresh_gpu_rows(rows, {("BPR", "gpu"): costs.table()["BPR", "gpu"]}) == []
    measured = calibrate.calibrate([write(tmp_path, "g", benchmark_doc("NGCF", "cuda"))])
    assert calibrate.refresh_gpu_rows(rows + measured, {("NGCF", "gpu"): measured}) == []


def test_model_init_is_a_knn_epoch_and_a_trainable_models_set_up(tmp_path):
    """KNN neighbourhoods are built in model_init: they are the model's one epoch (and the
    top-k job rebuilds them); a trainable model's model_init (graph adjacency) is paid once
    per job, with the load."""
    init = {"model_init": {"seconds": 50.0, "peak_rss_mb": 950.0}}
    knn = benchmark_doc("UserKNN", **init)
    ngcf = benchmark_doc("NGCF", **init)
    (knn_row,) = calibrate.calibrate([write(tmp_path, "knn", knn)])
    (ngcf_row,) = calibrate.calibrate([write(tmp_path, "ngcf", ngcf)])
    assert knn_row.build_s_per_train == pytest.approx(10.0 / 1_000_000)
    assert knn_row.epoch_s_per_unit == pytest.approx((400.0 + 50.0) / 20_000**2)
    assert ngcf_row.build_s_per_train == pytest.approx((10.0 + 50.0) / 1_000_000)
    size = costs.Size("shape-a", 20_000, 5_000, 1_000_000, 3_000, 2_000, "benchmark")
    settings = costs.Settings(epochs=3, threads=2)
    job = costs.estimate("tune", "NGCF", size, settings, gpus=0, row=ngcf_row)
    assert job.minutes * 60 == pytest.approx(10.0 + 50.0 + 3 * (400.0 + 20.0))
    job = costs.estimate("topk", "UserKNN", size, settings, gpus=0, row=knn_row)
    assert job.minutes * 60 == pytest.approx(10.0 + 450.0 + 20.0)


def test_calibration_of_a_knn_model_without_an_epoch_of_its_own(tmp_path):
    doc = benchmark_doc("ItemKNN", topk={"seconds": 3.0, "peak_rss_mb": 950.0})
    del doc["stages"]["train_epoch"], doc["stages"]["validation"]
    (row,) = calibrate.calibrate([write(tmp_path, "knn", doc)])
    assert row.epoch_s_per_unit == 0.0 and row.eval_driver == "eval_items"
    assert row.eval_s_per_unit == pytest.approx(3.0 / (2_000 * 5_000))  # from the top-k


def test_calibration_writes_a_table_that_reads_back(tmp_path):
    paths = [
        write(tmp_path, "a", benchmark_doc("NGCF")),
        write(tmp_path, "b", benchmark_doc("UserKNN")),
    ]
    out = tmp_path / "costs.csv"
    assert calibrate.main([*paths, "--out", str(out)]) == 0
    rows = costs.read_table(out)
    assert sorted(rows) == [("NGCF", "cpu"), ("UserKNN", "cpu")]
    assert rows["NGCF", "cpu"][0].epoch_s_per_unit == pytest.approx(
        calibrate.calibrate([paths[0]])[0].epoch_s_per_unit, rel=1e-3
    )
    # --merge keeps the shipped rows the files do not measure
    assert calibrate.main([paths[0], "--out", str(out), "--merge"]) == 0
    merged = costs.read_table(out)
    assert len(merged["NGCF", "cpu"]) == len(costs.table()["NGCF", "cpu"]) + 1
    assert merged["NCL", "gpu"] == costs.table()["NCL", "gpu"]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("stages"), "not a paper_scale.json of version 1"),
        (lambda d: d.update(version=2), "not a paper_scale.json of version 1"),
        (lambda d: d["shape"].pop("max_history"), "max_history"),
        (lambda d: d["stages"].pop("train_epoch"), "train_epoch"),  # NGCF trains
        (lambda d: d["stages"].pop("dataset_build"), "dataset_build"),
    ],
)
def test_calibration_rejects_other_files_naming_them(tmp_path, change, message):
    doc = benchmark_doc()
    change(doc)
    path = write(tmp_path, "bad", doc)
    with pytest.raises(InputError, match=re.escape(path) + ".*" + message):
        calibrate.calibrate([path])


def test_shipped_table_covers_the_paper_models_and_says_its_basis():
    rows = costs.table()
    for model in PAPER_MODELS:
        assert (model, "cpu") in rows, model
        if models.get(model).trainable:
            assert (model, "gpu") in rows, model
    for found in rows.values():
        for row in found:
            assert row.basis in costs.BASES and row.source.strip()
            assert row.epoch_s_per_unit > 0 and row.build_s_per_train > 0
            if row.device == "gpu":
                # no GPU was lent to measure on: every GPU row says it is extrapolated
                assert row.basis == "extrapolated" and "RecBole" in row.source
    # the table is package data: in the sdist/wheel by pyproject's package-data
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"data/*.csv"' in pyproject


def test_dataset_size_from_catalogue_stats_or_default(tmp_path):
    ml20m = catalogue.get("ml-20m")
    size = costs.dataset_size("ml-20m", ml20m, tmp_path / "missing.json", 0.6)
    assert size.source == "catalogue"
    assert (size.users, size.items, size.max_history) == (89_917, 16_404, 9_254)
    assert size.train == round(10_588_141 * 0.6) and size.evaluated_users == 2_178
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"users": 943, "items": 1203, "train": 49015, "test_users": 83}))
    size = costs.dataset_size("ml-100k", catalogue.get("ml-100k"), stats)
    assert (size.source, size.train, size.evaluated_users) == ("stats", 49015, 83)
    custom = catalogue.declare("mine", {"path": "x.csv", "columns": {"user": "u", "item": "i"}})
    size = costs.dataset_size("mine", custom, tmp_path / "missing.json")
    assert size.source == "default" and size.users == catalogue.DEFAULT_SHAPE.users
    stats.write_text(json.dumps({"users": 1}))
    with pytest.raises(InputError, match="stats.json: truncated or unreadable stats file"):
        costs.dataset_size("mine", custom, stats)


def size_of(name, train_share=0.6):
    return costs.dataset_size(name, catalogue.get(name), None, train_share)


def test_requests_follow_model_dataset_and_attempt():
    settings = costs.Settings(epochs=100, threads=1)
    big, small = size_of("ml-20m"), size_of("lastfm")
    knn = costs.request("tune", "ItemKNN", big, settings, gpus=0, max_runtime=10080)
    assert knn.gpus == 0 and knn.runtime <= 60 and 1000 < knn.mem_mb < 8000
    ngcf = costs.request("tune", "NGCF", big, settings, gpus=1, max_runtime=10080)
    assert ngcf.gpus == 1 and ngcf.runtime > 10 * knn.runtime and ngcf.basis == "extrapolated"
    assert costs.request("tune", "NGCF", small, settings, 1, 10080).runtime < ngcf.runtime
    # MultiVAE's batch rows come from a sparse history: a heavier heaviest user costs no
    # memory (RecBole's users x longest-history matrix did), more train interactions do
    heavier = costs.Size(**{**big.__dict__, "max_history": 2 * big.max_history})
    more = costs.Size(**{**big.__dict__, "train": 2 * big.train})
    vae = costs.request("tune", "MultiVAE", big, settings, 1, 10080).mem_mb
    assert costs.request("tune", "MultiVAE", heavier, settings, 1, 10080).mem_mb == vae
    assert costs.request("tune", "MultiVAE", more, settings, 1, 10080).mem_mb > vae
    # the estimate x the margin, times the attempt, capped at max_runtime
    job = costs.estimate("tune", "NeuMF", big, settings, gpus=1)
    first = costs.request("tune", "NeuMF", big, settings, 1, 10080)
    assert first.runtime == max(costs.MIN_RUNTIME, -(-job.minutes * costs.TIME_MARGIN // 1))
    assert costs.request("tune", "NeuMF", big, settings, 1, 10080, attempt=3).runtime == (
        3 * first.runtime
    )
    assert costs.request("tune", "NeuMF", big, settings, 1, first.runtime + 1, 3).runtime == (
        first.runtime + 1
    )
    # a model without its own row borrows the costliest of its kind, extrapolated
    lightgcn = costs.request("tune", "LightGCN", big, settings, 1, 10080)
    assert lightgcn.basis == "extrapolated" and lightgcn.runtime >= ngcf.runtime


def test_a_job_the_device_cannot_finish_is_named_with_its_estimate():
    settings = costs.Settings(epochs=100, threads=1)
    big = size_of("ml-20m")
    message = costs.infeasible("tune", "NGCF", big, settings, gpus=0, max_runtime=10080)
    assert message.startswith("tune of NGCF on ml-20m cannot finish within")
    for key in ("training.device", "training.planned_epochs", "training.max_runtime"):
        assert key in message
    assert re.search(r"estimated [\d,.]+ h per job", message)
    assert costs.infeasible("tune", "ItemKNN", big, settings, 0, 10080) is None
    # an unknown size (the default shape) never stops a run
    unknown = costs.Size(**{**big.__dict__, "source": "default"})
    assert costs.infeasible("tune", "NGCF", unknown, settings, 0, 10080) is None


def test_plan_rows_sum_the_jobs_hours():
    jobs = [costs.Request(1000, 60, 0, "measured"), costs.Request(2000, 30, 0, "extrapolated")]
    row = plan_report.plan_row("tune", "d", "ItemKNN", jobs, threads=2)
    assert (row["jobs"], row["mem_mb"], row["runtime_min"]) == (2, 2000, 60)
    assert (row["cpu_hours"], row["gpu_hours"], row["basis"]) == (3.0, 0.0, "extrapolated")
    row = plan_report.plan_row("topk", "d", "NGCF", [costs.Request(1000, 90, 1, "measured")], 2)
    assert (row["cpu_hours"], row["gpu_hours"], row["basis"]) == (0.0, 1.5, "measured")


def test_a_plan_as_markdown_folds_topk_and_gives_the_totals(tmp_path, capsys):
    rows = [
        plan_report.plan_row(
            "recbole_dataset", "d", "", [costs.Request(3000, 12, 0, "measured")], 1
        ),
        plan_report.plan_row(
            "tune", "d", "ItemKNN", [costs.Request(2000, 30, 0, "measured")] * 4, 1
        ),
        plan_report.plan_row(
            "tune", "d", "NGCF", [costs.Request(8000, 600, 1, "extrapolated")] * 2, 1
        ),
        plan_report.plan_row("topk", "d", "ItemKNN", [costs.Request(2000, 30, 0, "measured")], 1),
        plan_report.plan_row("topk", "d", "NGCF", [costs.Request(8000, 60, 1, "measured")], 1),
    ]
    path = tmp_path / "plan.csv"
    plan_report.write_plan(rows, path)
    assert plan_report.main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # tune rows only, their dataset's topk hours added: ItemKNN 4 x 0.5 + 0.5 CPU-h
    assert "| d | ItemKNN | 4 | 2,000 | 30 | 0 | 2.5 CPU-h | measured |" in lines
    assert "| d | NGCF | 2 | 8,000 | 600 | 1 | 21.0 GPU-h | extrapolated |" in lines
    # totals: 1 + 4 + 2 + 1 + 1 jobs; CPU 0.2 (build) + 2 + 0.5; GPU 20 + 1
    assert "| d alone | 9 | 2.7 | 21.0 | 2 |" in lines
    assert "| **all** | 9 | 2.7 | 21.0 | 2 |" in lines


def test_plan_names_its_most_expensive_jobs_beside_the_totals(tmp_path):
    rows = [
        plan_report.plan_row("tune", "d", "ItemKNN", [costs.Request(2000, 30, 0, "measured")], 1),
        plan_report.plan_row(
            "tune", "d", "NGCF", [costs.Request(8000, 6000, 1, "extrapolated")] * 3, 1
        ),
        plan_report.plan_row("topk", "d", "NGCF", [costs.Request(8000, 60, 1, "measured")], 1),
    ]
    text = plan_report.write_plan(rows, tmp_path / "plan.csv")
    lines = text.splitlines()
    assert lines[0].startswith("d: 5 jobs") and lines[1].startswith("total: 5 jobs")
    assert lines[2] == "the 3 most expensive job groups (rule dataset model):"
    assert lines[3] == (
        "  tune d NGCF: 3 job(s) of up to 6,000 min and 8,000 MB, 1 GPU each; "
        "300.0 GPU-hours (extrapolated)"
    )
    assert lines[5].startswith("  tune d ItemKNN: 1 job(s) of up to 30 min")
    assert "0.5 CPU-hours (measured)" in lines[5]


def test_a_declared_dataset_is_sized_from_its_raw_file_before_the_split(tmp_path):
    """A 12k-row CSV is not sized as ML-20M: its raw file gives users, items and
    interactions (an upper bound of the split's), labelled as estimated before the split."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"u": rng.integers(0, 300, 12_000), "i": rng.integers(0, 500, 12_000)})
    frame.to_csv(tmp_path / "mine.csv", index=False)
    entry = catalogue.declare("mine", {"path": str(tmp_path / "mine.csv"),
                                       "columns": {"user": "u", "item": "i"}})  # fmt: skip
    size = costs.dataset_size("mine", entry, tmp_path / "no-stats.json", 0.6,
                              raw_path=tmp_path / "mine.csv")  # fmt: skip
    assert size.source == "raw" and "raw file" in costs.SOURCES[size.source]
    assert (size.users, size.items) == (frame["u"].nunique(), frame["i"].nunique())
    assert size.train == round(0.6 * 12_000)
    assert size.max_history == frame.groupby("u").size().max()
    default = costs.dataset_size("mine", entry, None, 0.6)
    assert default.source == "default" and default.users > 100 * size.users
    small = costs.request("tune", "BPR", size, costs.Settings(), 0, 10080)
    big = costs.request("tune", "BPR", default, costs.Settings(), 0, 10080)
    assert small.mem_mb < big.mem_mb and small.runtime <= big.runtime


# --- the workflow -----------------------------------------------------------------------

# Runs Snakemake with its job log showing every job's rule, wildcards and resources (the
# rules' `message:` hides them otherwise).
SHOW_RESOURCES = """
import sys
from snakemake import logging as snakemake_logging
from snakemake.cli import main
original = snakemake_logging.DefaultFormatter.format_job_info
snakemake_logging.DefaultFormatter.format_job_info = (
    lambda self, msg: original(self, {**msg, "rule_msg": None})
)
sys.exit(main(sys.argv[1:]))
"""


def job_resources(log: str) -> list[dict]:
    """Rule, wildcards and resources of every job in a Snakemake log written with
    SHOW_RESOURCES (a dry run's jobs are "rule", a local run's "localrule")."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) )", log):
        head = re.match(r"(?:local)?(?:rule|checkpoint) (\w+):", block)
        if not head:
            continue
        wildcards = re.search(r"^    wildcards: (.*)$", block, re.M)
        resources = re.search(r"^    resources: (.*)$", block, re.M)
        jobs.append(
            {
                "rule": head.group(1),
                "wildcards": dict(w.split("=", 1) for w in wildcards.group(1).split(", "))
                if wildcards
                else {},
                "resources": dict(r.split("=", 1) for r in resources.group(1).split(", ")),
            }
        )
    return jobs


def show_resources(workdir, *args) -> subprocess.CompletedProcess:
    """Run Snakemake with SHOW_RESOURCES in ``workdir``."""
    return subprocess.run(
        [sys.executable, "-c", SHOW_RESOURCES, *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
    )


def dag_resources(workdir, *args) -> list[dict]:
    """Rule, wildcards and resources of every job of a dry run in ``workdir``."""
    proc = show_resources(workdir, "-n", *args)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return job_resources(proc.stdout + proc.stderr)


def read_plan(path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def assert_plan_is_the_dag(plan: list[dict], jobs: list[dict]) -> None:
    """Every plan row has exactly the jobs of its rule x dataset x model in the DAG, and
    its largest mem_mb, runtime and GPUs are the DAG's."""
    assert plan, "empty plan"
    for row in plan:
        mine = [
            job["resources"]
            for job in jobs
            if job["rule"] == row["rule"]
            and job["wildcards"].get("dataset") == row["dataset"]
            and job["wildcards"].get("model", "") == row["model"]
        ]
        where = f"{row['rule']} {row['dataset']} {row['model']}"
        assert len(mine) == int(row["jobs"]), where
        assert max(int(r["mem_mb"]) for r in mine) == int(row["mem_mb"]), where
        assert max(int(r["runtime"]) for r in mine) == int(row["runtime_min"]), where
        assert max(int(r.get("gpu", 0)) for r in mine) == int(row["gpus"]), where


@pytest.mark.slow
def test_plan_of_the_paper_config_is_what_the_dag_asks_for(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    dry = snakemake(workdir, "plan", "-n", "--configfile", "config/paper.yaml")
    assert "plan" in dry.stdout and not (workdir / "results").exists()
    proc = snakemake(workdir, "plan", "--cores", "1", "--configfile", "config/paper.yaml")
    out = proc.stdout + proc.stderr
    assert re.search(r"total: 554 jobs, [\d,.]+ CPU-hours, [\d,.]+ GPU-hours", out), out[-3000:]
    plan = read_plan(workdir / "results" / "plan.csv")
    assert list(plan[0]) == list(plan_report.PLAN_COLUMNS)
    assert {r["dataset"] for r in plan} == {"lastfm", "qk-video", "ml-10m", "ml-20m"}
    # one recbole_dataset job per dataset, then tune and topk per dataset x model, then per
    # dataset (all on the dense route: at most 2,178 evaluated users) two similarity jobs
    # and a measures job per model, then per dataset x model uncertainty and users, then
    # the three experiments per dataset and exp_gamma on the two with genres (ml-10m, ml-20m)
    assert len(plan) == 4 + 2 * 4 * 7 + 4 * (1 + 7) + 4 * 2 * 7 + 3 * 4 + 2
    assert sum(int(r["jobs"]) for r in plan) == 4 + 416 + 28 + 4 * (2 + 7) + 56 + 14
    assert [r["dataset"] for r in plan if r["rule"] == "exp_gamma"] == ["ml-10m", "ml-20m"]
    assert [r["rule"] for r in plan[:4]] == ["recbole_dataset"] * 4
    assert all(r["model"] == "" and r["gpus"] == "0" for r in plan[:4])
    # no data was made: the sizes came from the catalogue
    assert sorted(p.name for p in (workdir / "results").iterdir()) == ["logs", "plan.csv"]
    # requests differ by model and dataset: KNN in minutes on the CPU, neural models on a GPU
    by = {(r["rule"], r["dataset"], r["model"]): r for r in plan}
    knn, ngcf = by["tune", "ml-20m", "ItemKNN"], by["tune", "ml-20m", "NGCF"]
    assert knn["gpus"] == "0" and int(knn["runtime_min"]) <= 60 and int(knn["mem_mb"]) < 8000
    assert ngcf["gpus"] == "1" and int(ngcf["runtime_min"]) > 600
    assert int(by["tune", "lastfm", "NGCF"]["runtime_min"]) < int(ngcf["runtime_min"])
    assert by["tune", "ml-20m", "NeuMF"]["gpus"] == "1"
    # the same numbers as the resources Snakemake gives each job of the DAG
    jobs = dag_resources(workdir, "--configfile", "config/paper.yaml")
    assert_plan_is_the_dag(plan, jobs)


@pytest.mark.slow
def test_plan_of_the_default_config_and_its_dag(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    proc = snakemake(workdir, "plan", "--cores", "1")
    points = grids.load_points(REPO / "config" / "grids" / "quick.yaml", PAPER_MODELS)
    # recbole_dataset + tune + topk, then the dense route's two similarity jobs and measures,
    # uncertainty and users per model, the four experiments (ml-100k has genres)
    models = len(PAPER_MODELS)
    jobs = 1 + sum(len(p) for p in points.values()) + models + 2 + models + 2 * models + 4
    assert f"total: {jobs} jobs" in proc.stdout + proc.stderr
    plan = read_plan(workdir / "results" / "plan.csv")
    assert {r["dataset"] for r in plan} == {"ml-100k"}
    assert len(plan) == 1 + 14 + 1 + 7 + 14 + 4
    assert_plan_is_the_dag(plan, dag_resources(workdir))


@pytest.mark.slow
def test_paper_config_on_the_cpu_stops_before_anything_runs(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    cpu = workdir / "cpu.yaml"
    cpu.write_text("training:\n  device: cpu\n")
    proc = snakemake(workdir, "-n", "--configfile", "config/paper.yaml", str(cpu), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "tune of NGCF on ml-20m cannot finish within training.max_runtime = 10080 min" in out
    assert "training.device (cpu -> cuda or auto" in out and "nothing was submitted" in out
    assert "tune of ItemKNN" not in out  # KNN models finish on the CPU
    assert not (workdir / "results").exists()


@pytest.mark.slow
def test_streamed_measures_that_cannot_finish_stop_before_anything_runs(tmp_path):
    """The paper's ml-20m on the streamed route in one part cannot finish in 2 minutes a
    job (its visits estimated from the catalogue's shape and its 2,178 evaluated users):
    the dry run stops, naming the dataset, the estimate and the scatter that would fit."""
    workdir = make_workdir(tmp_path / "run")
    short = workdir / "short.yaml"
    short.write_text("measures:\n  stream_above: 0\n  scatter: 1\ntraining:\n  max_runtime: 2\n")
    proc = snakemake(
        workdir, "-n", "--configfile", "config/paper.yaml", str(short), check=False
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "nothing was submitted" in out
    assert re.search(
        r"the streamed measures of ml-20m in 1 part\(s\) of 2 thread\(s\) cannot finish within "
        r"training.max_runtime = 2 min: their longest job is estimated at [\d.,]+ (s|min|h) "
        r"\(item visits estimated from its shape; EXTRAPOLATED from .*\); raise "
        r"measures.scatter to \d+ or more",
        out,
    ), out[-3000:]
    assert not (workdir / "results").exists()


@pytest.mark.slow
def test_a_retried_job_asks_for_more_time_each_attempt(tmp_path, tiny_run):
    """A tune job that fails (NCL with more clusters than the tiny data has users, a
    deterministic error) is retried by Snakemake with runtime x attempt, same memory. On a
    copy of the session's tiny run (conftest ``tiny_run``): its data stage is reused."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    (test_dir / "grid-ncl.yaml").write_text("NCL:\n  num_clusters: [100000]\n")
    (test_dir / "ncl.yaml").write_text(
        yaml.safe_dump(
            {
                "models": ["NCL"],
                "grid": "grid-ncl.yaml",
                "training": {"epochs": 1, "device": "cpu"},
                "experiments": {"model": "NCL"},  # one of models
            }
        )
    )
    target = "results/ml-100k/models/NCL/grid/0/valid.json"
    proc = show_resources(
        repo, "--directory", ".test", target, "--cores", "1", "--retries", "2",
        "--configfile", str(test_dir / "ncl.yaml"),
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "num_clusters=100000 must be below" in out
    tune = [job["resources"] for job in job_resources(out) if job["rule"] == "tune"]
    assert len(tune) == 3, out[-3000:]
    first = int(tune[0]["runtime"])
    assert [int(r["runtime"]) for r in tune] == [first, 2 * first, 3 * first]
    assert len({r["mem_mb"] for r in tune}) == 1 and tune[0]["gpu"] == "0"


def _sized_jobs(tmp_path, tiny_run, rules, requests_of, force, config: str = "", more=()):
    """On a copy of the session's tiny run (its data stage and models reused), with
    ``config`` (YAML text) if any: `snakemake plan`'s rows of ``rules``, checked equal to
    the resources Snakemake gives those jobs of the DAG (the measures files and ``more``
    targets) and to ``requests_of(size)[rule]`` of the dataset's stats.json; returns (the
    rows, the requests, the messages of a dry run forcing ``force``)."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    on = ["--directory", ".test"]
    if config:
        (test_dir / "route.yaml").write_text(config)
        on += ["--configfile", str(test_dir / "route.yaml")]  # last: it takes a list
    snakemake(repo, "plan", "--cores", "1", *on)
    plan = [r for r in read_plan(test_dir / "results" / "plan.csv") if r["rule"] in rules]
    targets = [f"results/ml-100k/measures/{m}.json" for m in ("UserKNN", "ItemKNN", "BPR")]
    targets += list(more)
    proc = show_resources(repo, "-n", *targets, "--forcerun", *rules, *on)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert_plan_is_the_dag(plan, job_resources(proc.stdout + proc.stderr))
    stats = json.loads((test_dir / "results/ml-100k/data/stats.json").read_text())
    size = costs.Size("ml-100k", stats["users"], stats["items"], stats["train"], 1,
                      stats["test_users"], "stats", stats["item_visits"])  # fmt: skip
    expected = requests_of(size)
    for row in plan:
        request = expected[row["rule"]]
        assert (int(row["mem_mb"]), int(row["runtime_min"])) == (request.mem_mb, request.runtime)
    messages = subprocess.run(
        [str(BIN / "snakemake"), "-n", *targets, "--forcerun", force, *on],
        cwd=repo, capture_output=True, text=True, timeout=600,
    ).stdout  # fmt: skip
    return plan, expected, messages


@pytest.mark.slow
def test_the_streamed_measures_ask_for_their_datasets_size_and_the_plan_says_so(tmp_path, tiny_run):
    """With the streamed route and two parts, pairs_part, pairs, measure_sums and measures
    ask for userfair.workflow.scatter_plan.requests of the dataset's stats.json (its item
    visits), their messages say so, and `snakemake plan` lists the same requests."""
    plan, expected, messages = _sized_jobs(
        tmp_path, tiny_run, scatter_plan.RULES, lambda size: scatter_plan.requests(size, 2, 2880),
        "pairs_part", "measures:\n  stream_above: 0\n  scatter: 2\n",
    )  # fmt: skip
    assert [r["rule"] for r in plan] == ["pairs_part", "pairs"] + ["measure_sums"] * 3 + [
        "measures"
    ] * 3, plan
    part = expected["pairs_part"]
    assert (
        f"Pass one of the streamed measures of ml-100k, part 1-of-2 ({part.mem_mb} MB, "
        f"{part.runtime} min)"
    ) in messages


@pytest.mark.slow
def test_the_dense_jobs_ask_for_their_datasets_size_and_the_plan_says_so(tmp_path, tiny_run):
    """On the dense route (the tiny run's), similarity, measures, uncertainty, users and
    the experiments ask for userfair.workflow.dense_plan.requests of the dataset's
    stats.json (the experiments' with the repeats of the run's Weibull shapes, gammas and 3
    models), their messages say so, and `snakemake plan` lists the same requests."""
    defaults = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config = {**defaults, "models": ["UserKNN", "ItemKNN", "BPR"], "uncertainty": {"resamples": 30},
              "measures": {"similarities": ["cos", "jacc"]}}  # fmt: skip
    repeats = {rule: dense_plan.units(rule, config) for rule in dense_plan.RULES}
    assert repeats["exp_similarity"] == 8 and repeats["exp_gamma"] == 5 * (3 + 11)
    outputs = [layout.output(rule) for rule in ("exp_relevance", "exp_similarity", "exp_extreme")]
    models = ("UserKNN", "ItemKNN", "BPR")
    plan, expected, messages = _sized_jobs(
        tmp_path, tiny_run, dense_plan.RULES,
        lambda size: dense_plan.requests(size, 2880, threads=2, repeats=repeats), "similarity",
        more=[path.format(dataset="ml-100k") for path in outputs]
        + [layout.output("exp_gamma", "models").format(dataset="ml-100k")]
        + [layout.output(rule, *key).format(dataset="ml-100k", model=model)
           for rule, key in (("uncertainty", ()), ("users", ("users",))) for model in models],
    )  # fmt: skip
    assert [(r["rule"], r["jobs"]) for r in plan] == [("similarity", "2")] + [
        ("measures", "1")
    ] * 3 + [("uncertainty", "1")] * 3 + [("users", "1")] * 3 + [
        (rule, "1") for rule in ("exp_relevance", "exp_similarity", "exp_extreme", "exp_gamma")
    ], plan
    similarity = expected["similarity"]
    assert (
        f"User similarity cos of ml-100k ({similarity.mem_mb} MB, {similarity.runtime} min)"
    ) in messages
    relevance = expected["exp_relevance"]
    assert (
        f"Fig. 2 experiment on ml-100k: varying relevance ({relevance.mem_mb} MB, "
        f"{relevance.runtime} min)"
    ) in messages
    # the appendix's job repeats its evaluations 70 times: it asks for more time than Fig. 2's
    assert expected["exp_gamma"].runtime >= relevance.runtime


def test_the_dataset_job_asks_for_the_build_not_a_jobs_load():
    """recbole_dataset builds the file: at ML-20M size it asks for at least the build's
    measured peak (2.4 GiB, the benchmark's dataset_build), more than a job's load (1.4)."""
    size = size_of("ml-20m")
    request = costs.dataset_request(size, 10080)
    rows = [r for found in costs.table().values() for r in found if r.shape == "ml-20m"]
    build = max(costs.BASE_MB + r.dataset_mb_per_train * size.train for r in rows)
    (bpr,) = [r for r in rows if r.model == "BPR" and r.device == "cpu"]
    load = costs.BASE_MB + bpr.mem_mb_per_train * size.train  # BPR: the load, little else
    assert build > load and request.mem_mb >= build * costs.MEM_MARGIN
    assert request.gpus == 0 and request.runtime >= costs.MIN_RUNTIME


@pytest.mark.slow
def test_the_dry_run_says_where_each_job_trains_and_where_its_requests_come_from(tmp_path):
    """Before the split exists the requests are labelled as estimated; a job says the GPUs it
    requests and where it trains here (this machine's CPU when it has no GPU)."""
    workdir = make_workdir(tmp_path / "run")
    dry = snakemake(workdir, "-n")
    out = dry.stdout + dry.stderr
    assert (
        "ml-100k: the requests of its training jobs are estimated before the split from "
        "the catalogue's Table-1 shape (943 users" in out
    )
    here = "on this machine (no GPU) the CPU" if not shutil.which("nvidia-smi") else "GPU)"
    assert re.search(r"Train BPR grid point 0 on ml-100k \(\d+ MB, \d+ min, 1 GPU", out)
    assert re.search(r"Train UserKNN grid point 0 on ml-100k \(\d+ MB, \d+ min, 0 GPU", out)
    assert here in out
    (workdir / "cpu.yaml").write_text("training:\n  device: cpu\n")
    out = snakemake(workdir, "-n", "--configfile", "cpu.yaml").stdout
    assert re.search(r"Train BPR grid point 0 on ml-100k \(\d+ MB, \d+ min, on the CPU", out)
    assert "GPU requested" not in out
