"""The workflow on a real SLURM cluster: tests/slurm/cluster.sh brings up a single-node
cluster with accounting on 127.0.0.1, the tiny ml-100k goes through profiles/slurm, and
every job must show up in `sacct` as COMPLETED with outputs equal to a local run's.

Where the machine cannot host SLURM (not root, no apt-get), the test is skipped and says why."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import BIN, REPO, make_workdir

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

CLUSTER_SCRIPT = REPO / "tests" / "slurm" / "cluster.sh"
CANNOT_HOST = 3  # exit status of cluster.sh when this machine cannot host SLURM
ACCOUNT, PARTITION = "userfair", "debug"  # created by cluster.sh
RUN_LIMIT_S = 300  # snakemake ignores SIGTERM while the plugin waits: `timeout -k` kills it

# Deterministic outputs of the stages sent through SLURM, compared with a local run.
DATASET = "ml-100k"
TARGETS = [
    f"results/{DATASET}/data/{DATASET}.train.inter",
    f"results/{DATASET}/data/{DATASET}.valid.inter",
    f"results/{DATASET}/data/{DATASET}.test.inter",
    f"results/{DATASET}/data/{DATASET}.item",
    f"results/{DATASET}/data/stats.json",
    "results/tables/stats.csv",
]
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: .*/rule_([^/]+)/")
FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")


def cluster(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(CLUSTER_SCRIPT), command], capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="session")
def slurm_cluster():
    """The local cluster, brought up for this session (and stopped after it, if this
    session started it)."""
    was_up = cluster("status").returncode == 0
    proc = cluster("up")
    if proc.returncode == CANNOT_HOST:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, f"tests/slurm/cluster.sh up failed:\n{proc.stderr[-6000:]}"
    yield
    if not was_up:
        cluster("down")


def write_tiny_config(workdir: Path, tiny_dir: Path) -> Path:
    path = workdir / "tiny.yaml"
    path.write_text(yaml.safe_dump({
        "dataset_options": {DATASET: {"path": str(tiny_dir)}},
        "datasets": [DATASET],
    }))
    return path


def run_snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        ["timeout", "-k", "10", str(RUN_LIMIT_S), str(BIN / "snakemake"), *args],
        cwd=workdir, capture_output=True, text=True,
        env={**os.environ, "USERFAIR_SLURM_ACCOUNT": ACCOUNT,
             "USERFAIR_SLURM_PARTITION": PARTITION},
    )
    assert proc.returncode == 0, (
        f"snakemake {' '.join(args)} failed ({proc.returncode}; 124 = timed out)\n"
        f"--- stderr ---\n{proc.stderr[-12000:]}")
    return proc


def sacct_rows(job_ids: list[str]) -> dict[str, dict[str, str]]:
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-j", ",".join(job_ids),
         "-o", "JobID,State,Account,Partition,ExitCode"],
        capture_output=True, text=True, check=True).stdout
    rows = [line.split("|") for line in out.splitlines() if line]
    return {r[0]: dict(zip(["state", "account", "partition", "exit"], r[1:])) for r in rows}


def assert_same_file(local: Path, remote: Path) -> None:
    if local.suffix == ".parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(local), pd.read_parquet(remote))
    else:
        assert local.read_bytes() == remote.read_bytes(), f"{remote} differs from {local}"


def test_workflow_runs_on_slurm_like_locally(tmp_path, tiny_ml100k, slurm_cluster):
    local = make_workdir(tmp_path / "local")
    on_slurm = make_workdir(tmp_path / "slurm")
    local_log = run_snakemake(local, *TARGETS, "--cores", "2",
                              "--configfile", str(write_tiny_config(local, tiny_ml100k))).stderr
    slurm_log = run_snakemake(
        on_slurm, *TARGETS, "--profile", "profiles/slurm",
        "--slurm-init-seconds-before-status-checks", "5",
        "--configfile", str(write_tiny_config(on_slurm, tiny_ml100k))).stderr

    # Every job of the local plan was submitted to SLURM, none ran on the submit host.
    submitted = SUBMITTED.findall(slurm_log)
    assert submitted, f"no SLURM submission in the log:\n{slurm_log[-6000:]}"
    local_rules = sorted(FINISHED.findall(local_log))
    assert sorted(rule for _, _, rule in submitted) == local_rules
    assert sorted(FINISHED.findall(slurm_log)) == local_rules

    # ... and the accounting database saw each one complete, under the profile's account.
    slurm_ids = [slurm_id for _, slurm_id, _ in submitted]
    rows = sacct_rows(slurm_ids)
    assert sorted(rows) == sorted(slurm_ids), rows
    for slurm_id, row in rows.items():
        assert row == {"state": "COMPLETED", "account": ACCOUNT, "partition": PARTITION,
                       "exit": "0:0"}, (slurm_id, row)

    for target in TARGETS:
        assert_same_file(local / target, on_slurm / target)
