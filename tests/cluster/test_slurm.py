"""The workflow on a real SLURM cluster: tests/slurm/cluster.sh brings up a single-node
cluster with accounting on 127.0.0.1, the tiny ml-100k goes through profiles/slurm, and
every job must show up in `sacct` as COMPLETED with outputs equal to a local run's: the
session's tiny .test/ run (conftest ``tiny_run``) for the data and the lists, the streamed
measures of a copy of it for the rest. The measures stream (measures.stream_above: 0) and
both passes are scattered over two jobs (measures.scatter: 2), so the scatter/gather rules
are SLURM jobs too. A training job cancelled with scancel is retried (the profile's retries)
and resumes from its resume.pth.

The cluster is opt-in: bringing it up installs packages and starts system daemons (as root),
which a plain `pytest` must never do on a person's machine. The tests that need it run when
USERFAIR_SLURM=1, when USERFAIR_REQUIRE_SLURM=1 (set by .ci/run, which always runs them), or
when the marker is selected (`pytest -m slurm`); otherwise they are skipped and say how to run
them. Where the machine cannot host SLURM (not root, no apt-get), they are skipped and say
why, unless USERFAIR_REQUIRE_SLURM=1, which turns that into a failure."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dag_jobs import scheduled

from conftest import (
    BIN,
    REPO,
    SLURM_CONF_BEFORE,
    TEST_CONFIG,
    copy_run,
    make_workdir,
    slurm_opted_in,
    snakemake,
)

pytestmark = [pytest.mark.slurm]

CLUSTER_SCRIPT = REPO / "tests" / "slurm" / "cluster.sh"
CANNOT_HOST = 3  # exit status of cluster.sh when this machine cannot host SLURM
ACCOUNT, PARTITION, GPU_PARTITION = "userfair", "debug", "gpu"  # created by cluster.sh
# Snakemake ignores SIGTERM while the plugin waits: `timeout -k` kills a run past this limit.
# The tiny SLURM run took 272 s on an idle 2-core machine (2026-11-25; each job is a Python
# start plus status polls), so the former 300 s was exceeded at 71 % of the jobs under load.
# Beside the suite's other worker it took longer still: 600 s ran out at 20 of 21 jobs in
# the clean-clone CI of 2026-11-28 (the plugin adds 10 s to its polling interval after each
# status check that finds no job finished, up to 180 s, so a slow training job delays every
# later poll). The limit only guards against a hung run; it costs nothing when all is well.
RUN_LIMIT_S = 1200

# The .test/ run's configuration (the session's tiny run, conftest ``tiny_run``: one grid
# point per model, 1 epoch), the lists of its neural model (which asks for a GPU) sent
# through SLURM, the measures streamed (STREAMED). Every other job asks for no GPU (the data,
# selection, similarity and measures jobs, and the neural model's training once
# training.device is cpu), so a second, non-neural model would add five jobs (its training,
# lists and measures: about 8 CPU s each, for Snakemake's two parses in a SLURM job) and no
# other kind of request.
DATASET = "ml-100k"
MODELS = ("BPR",)
NEURAL = {"BPR"}
SCATTER = 2  # measures.scatter: each streamed pass in two SLURM jobs
STREAMED = {"device": "cpu", "stream_above": 0, "scatter": SCATTER}
# Deterministic outputs of the stages sent through SLURM, compared with a local run.
TARGETS = [
    f"results/{DATASET}/data/{DATASET}.train.inter",
    f"results/{DATASET}/data/{DATASET}.valid.inter",
    f"results/{DATASET}/data/{DATASET}.test.inter",
    f"results/{DATASET}/data/{DATASET}.item",
    f"results/{DATASET}/data/stats.json",
    "results/tables/stats.csv",
    *(
        f"results/{DATASET}/models/{model}/{name}"
        for model in MODELS
        for name in ("topk.parquet", "recbole_test.json")
    ),
]
# ... and those of the streamed measures, compared with the measures of a copy of the tiny
# run streamed alike on this machine
STREAMED_TARGETS = [
    f"results/{DATASET}/similarity/pairs.json",
    *(f"results/{DATASET}/measures/{model}.json" for model in MODELS),
]
# the fields of .json/.npz outputs that differ between runs: wall-clock timings
TIMINGS = ("seconds", "seconds_pairs", "seconds_uf_setup", "seconds_envy")
SUBMITTED = re.compile(
    r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/(?:([^/]+)/)?\d+\.log\)"
)
FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")


def machine_env() -> dict[str, str]:
    """The environment with the machine's SLURM configuration, not the suite's cluster-less
    one (conftest.py, NO_SLURM_CONF): for the cluster's daemons and every SLURM command."""
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    if SLURM_CONF_BEFORE is not None:
        env["SLURM_CONF"] = SLURM_CONF_BEFORE
    return env


@pytest.fixture(scope="module", autouse=True)
def slurm_conf():
    """This module's tests see the machine's SLURM configuration (:func:`machine_env`); the
    other modules get the cluster-less one back after. The session's cluster fixture is set
    up before this one, so it passes :func:`machine_env` itself."""
    with pytest.MonkeyPatch.context() as patch:
        if SLURM_CONF_BEFORE is None:
            patch.delenv("SLURM_CONF", raising=False)
        else:
            patch.setenv("SLURM_CONF", SLURM_CONF_BEFORE)
        yield


def cluster(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(CLUSTER_SCRIPT), command],
        capture_output=True,
        text=True,
        timeout=600,
        env=machine_env(),
    )


@pytest.fixture(scope="session")
def slurm_cluster(request):
    """The local cluster, brought up for this session (and stopped after it, if this
    session started it); skipped unless the run opted in."""
    if not slurm_opted_in(request.config):
        pytest.skip(
            "the SLURM tests install and start system daemons: opt in with "
            "USERFAIR_SLURM=1 or `pytest -m slurm` (docs/cluster.md#the-slurm-test)"
        )
    was_up = cluster("status").returncode == 0
    proc = cluster("up")
    if proc.returncode == CANNOT_HOST:
        reason = proc.stderr.strip().splitlines()[-1]
        if os.environ.get("USERFAIR_REQUIRE_SLURM") == "1":
            pytest.fail(f"USERFAIR_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    assert proc.returncode == 0, f"tests/slurm/cluster.sh up failed:\n{proc.stderr[-6000:]}"
    yield
    if not was_up:
        cluster("down")


def write_tiny_config(
    workdir: Path, tiny_dir: Path, name: str = "tiny", training: dict | None = None
) -> Path:
    """The .test/ configuration with the measures streamed (STREAMED), on ``tiny_dir`` (the
    same tiny ml-100k, conftest ``tiny_ml100k``); ``training`` overrides its keys."""
    config = {
        **TEST_CONFIG,
        "dataset_options": {DATASET: {"path": str(tiny_dir)}},
        "grid": str(REPO / ".test" / "config" / "grid.yaml"),
        "training": {**TEST_CONFIG["training"], **(training or {})},
        "measures": {**TEST_CONFIG.get("measures", {}), **STREAMED},
    }
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake_on_slurm(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command line (``snakemake ARGS`` under RUN_LIMIT_S) and environment (the
    profile's account and partitions, those of cluster.sh) of a Snakemake run here."""
    env = {
        **os.environ,
        "USERFAIR_SLURM_ACCOUNT": ACCOUNT,
        "USERFAIR_SLURM_PARTITION": PARTITION,
        "USERFAIR_SLURM_GPU_PARTITION": GPU_PARTITION,
    }
    return ["timeout", "-k", "10", str(RUN_LIMIT_S), str(BIN / "snakemake"), *args], env


def run_snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    command, env = snakemake_on_slurm(*args)
    proc = subprocess.run(command, cwd=workdir, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, (
        f"snakemake {' '.join(args)} failed ({proc.returncode}; 124 = timed out)\n"
        f"--- stderr ---\n{proc.stderr[-12000:]}"
    )
    return proc


def sacct_rows(job_ids: list[str]) -> dict[str, dict[str, str]]:
    out = subprocess.run(
        [
            "sacct",
            "-X",
            "-n",
            "-P",
            "-j",
            ",".join(job_ids),
            "-o",
            "JobID,State,Account,Partition,ExitCode,AllocTRES",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("|") for line in out.splitlines() if line]
    return {r[0]: dict(zip(["state", "account", "partition", "exit", "tres"], r[1:])) for r in rows}


def assert_same_file(local: Path, remote: Path) -> None:
    """Equal content; wall-clock timings aside."""
    if local.suffix == ".parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(local), pd.read_parquet(remote))
    elif local.suffix == ".npz":
        with np.load(local) as a, np.load(remote) as b:
            assert set(a.files) == set(b.files), remote
            for name in set(a.files) - set(TIMINGS):
                np.testing.assert_array_equal(a[name], b[name], err_msg=f"{remote}: {name}")
    elif local.suffix == ".json":
        a, b = json.loads(local.read_text()), json.loads(remote.read_text())
        assert a.keys() == b.keys(), remote
        # compared as JSON text, so that NaN scores (Gini, UF) count as equal
        same = [
            json.dumps({k: v for k, v in d.items() if k not in TIMINGS}, sort_keys=True)
            for d in (a, b)
        ]
        assert same[0] == same[1], f"{remote} differs from {local}"
    else:
        assert local.read_bytes() == remote.read_bytes(), f"{remote} differs from {local}"


@pytest.mark.slow
def test_workflow_runs_on_slurm_like_locally(tmp_path, tiny_ml100k, slurm_cluster, request):
    on_slurm = make_workdir(tmp_path / "slurm")
    config = str(write_tiny_config(on_slurm, tiny_ml100k))
    targets = [*TARGETS, *STREAMED_TARGETS]
    # the jobs a dry run plans (those behind the checkpoint `pairs` aside: pass two's parts)
    plan = run_snakemake(on_slurm, *targets, "-n", "--configfile", config).stdout
    slurm_log = run_snakemake(
        on_slurm,
        *targets,
        "--profile",
        "profiles/slurm",
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--configfile",
        config,
    ).stderr

    # Every job that ran was submitted to SLURM, none ran on the submit host: the plan's,
    # and pass two's parts, the streamed passes scattered (pass one per dataset, pass two
    # per model).
    submitted = SUBMITTED.findall(slurm_log)
    assert submitted, f"no SLURM submission in the log:\n{slurm_log[-6000:]}"
    rules = sorted(rule for _, rule, _ in submitted)
    assert sorted(FINISHED.findall(slurm_log)) == rules, slurm_log[-8000:]
    plan_rules = [rule for rule, count in scheduled(plan).items() for _ in range(count)]
    assert rules == sorted(plan_rules + ["measure_sums"] * SCATTER * len(MODELS)), rules
    assert {"tune", "select", "topk", "pairs", "measures"} <= set(rules)
    assert rules.count("pairs_part") == SCATTER, rules

    # ... and the accounting database saw each one complete, under the profile's account;
    # neural training and export had a GPU (one of the cluster's two fake ones) in the GPU
    # partition, every other job none, in the CPU partition.
    rows = sacct_rows([slurm_id for slurm_id, _, _ in submitted])
    assert sorted(rows) == sorted(slurm_id for slurm_id, _, _ in submitted), rows
    for slurm_id, rule, job in submitted:
        row = rows[slurm_id]
        wants_gpu = rule in {"tune", "topk"} and job.split("_")[1] in NEURAL
        assert (row["state"], row["account"], row["partition"], row["exit"]) == (
            "COMPLETED",
            ACCOUNT,
            GPU_PARTITION if wants_gpu else PARTITION,
            "0:0",
        ), (rule, job, row)
        assert ("gres/gpu=1" in row["tres"]) == wants_gpu, (rule, job, row)

    # The same outputs as on this machine: the data and the lists of the session's tiny run
    # (built meanwhile by another worker; the same configuration but the measures' route),
    # the streamed measures of a copy of it, streamed alike.
    tiny_run = request.getfixturevalue("tiny_run")
    for target in TARGETS:
        assert_same_file(tiny_run.test_dir / target, on_slurm / target)
    local = copy_run(tiny_run, tmp_path / "local")
    streamed = local.test_dir / "config" / "streamed.yaml"
    streamed.write_text(yaml.safe_dump({"measures": STREAMED}))
    local.snakemake(*STREAMED_TARGETS, "--cores", "2", "--configfile", str(streamed))
    for target in STREAMED_TARGETS:
        assert_same_file(local.test_dir / target, on_slurm / target)

    # training.device: cpu keeps a neural model's training on the CPU partition, no GPU
    # asked (the new device reruns the BPR grid point alone)
    (point,) = (on_slurm / f"results/{DATASET}/models/BPR/grid").iterdir()
    cpu_log = run_snakemake(
        on_slurm,
        str((point / "valid.json").relative_to(on_slurm)),
        "--profile",
        "profiles/slurm",
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--configfile",
        str(write_tiny_config(on_slurm, tiny_ml100k, "cpu", {"device": "cpu"})),
    ).stderr
    submitted = SUBMITTED.findall(cpu_log)
    assert [(rule, job.split("_")[1]) for _, rule, job in submitted] == [("tune", "BPR")], cpu_log
    row = sacct_rows([submitted[0][0]])[submitted[0][0]]
    assert (row["state"], row["partition"]) == ("COMPLETED", PARTITION), row
    assert "gres/gpu" not in row["tres"], row


@pytest.mark.parametrize(
    ("markexpr", "env", "expected"),
    [
        ("", {}, False),
        ("not slow", {}, False),
        ("not slurm", {"USERFAIR_SLURM": "0"}, False),
        ("slurm", {}, True),
        ("slow and slurm", {}, True),
        ("", {"USERFAIR_SLURM": "1"}, True),
        ("not slow", {"USERFAIR_REQUIRE_SLURM": "1"}, True),
    ],
)
def test_the_cluster_is_opt_in(markexpr, env, expected, monkeypatch, pytestconfig):
    _select(monkeypatch, pytestconfig, markexpr, env)
    assert slurm_opted_in(pytestconfig) is expected


def _select(monkeypatch, pytestconfig, markexpr: str, env: dict) -> None:
    """This run as if started with ``-m markexpr`` and only ``env`` of the SLURM switches."""
    for name in ("USERFAIR_SLURM", "USERFAIR_REQUIRE_SLURM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(pytestconfig.option, "markexpr", markexpr)


@pytest.mark.parametrize(
    ("markexpr", "env", "extra"),
    [
        ("", {}, 0),
        ("", {"USERFAIR_REQUIRE_SLURM": "1"}, 1),
        ("slurm", {}, 1),
        ("not slow", {"USERFAIR_REQUIRE_SLURM": "1"}, 0),
        ("not slow and not lint and not packaging and not slurm", {"USERFAIR_SLURM": "1"}, 0),
        ("slow and not  slurm", {"USERFAIR_SLURM": "1"}, 0),
    ],
)
def test_a_third_worker_only_when_the_waiting_slurm_tests_run(
    markexpr, env, extra, monkeypatch, pytestconfig
):
    from conftest import pytest_xdist_auto_num_workers

    _select(monkeypatch, pytestconfig, markexpr, env)
    assert pytest_xdist_auto_num_workers(pytestconfig) == (os.cpu_count() or 1) + extra


def test_cluster_script_says_why_a_machine_cannot_host_slurm():
    command = ["bash", str(CLUSTER_SCRIPT), "up"]
    if os.geteuid() == 0:  # the check under test is the one for non-root users
        command = ["runuser", "-u", "nobody", "--", *command]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode == CANNOT_HOST, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("cannot host SLURM: needs root")


@pytest.mark.slow
def test_cluster_daemons_listen_on_loopback_only(slurm_cluster):
    listening = subprocess.run(
        ["ss", "-H", "-ltnp"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    daemons = ("slurmctld", "slurmd", "slurmdbd", "mariadbd", "munged")
    sockets = {(d, line.split()[3]) for line in listening for d in daemons if f'"{d}"' in line}
    assert {d for d, _ in sockets} == {"slurmctld", "slurmd", "slurmdbd"}, sockets
    assert all(address.startswith("127.0.0.1:") for _, address in sockets), sockets


# --- a cancelled training job resumes in its retry ------------------------------------------

RESUME_EPOCHS = 150  # long enough that the job is still training when it is cancelled


def write_resume_config(workdir: Path, tiny_dir: Path) -> Path:
    (workdir / "grid.yaml").write_text(yaml.safe_dump({"BPR": {"learning_rate": [0.01]}}))
    path = workdir / "resume.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "dataset_options": {DATASET: {"path": str(tiny_dir)}},
                "datasets": [DATASET],
                "models": ["BPR"],
                "grid": str(workdir / "grid.yaml"),
                "training": {
                    "epochs": RESUME_EPOCHS,
                    "stopping_step": RESUME_EPOCHS,
                    "device": "cpu",
                    # no periodic resume.pth: only SLURM's SIGTERM can write one
                    "checkpoint_every": 10**6,
                },
            }
        )
    )
    return path


@pytest.mark.slow
def test_a_cancelled_training_job_is_retried_and_resumes(tmp_path, tiny_ml100k, slurm_cluster):
    point = f"results/{DATASET}/models/BPR/grid/0"
    targets = [f"{point}/valid.json", f"{point}/model.pth"]
    local = make_workdir(tmp_path / "local")
    snakemake(
        local, *targets, "--cores", "1",
        "--configfile", str(write_resume_config(local, tiny_ml100k)),
    )  # fmt: skip

    # the cluster trains the same grid point on a copy of the local run without it: its
    # data and RecBole dataset, with Snakemake's records of them (the test of the whole
    # workflow above sends those jobs through SLURM), so that only training is submitted
    on_slurm = tmp_path / "slurm"
    shutil.copytree(local, on_slurm, symlinks=True)
    shutil.rmtree(on_slurm / point)
    shutil.rmtree(on_slurm / "results" / "logs" / "tune")
    config = write_resume_config(on_slurm, tiny_ml100k)
    stderr = on_slurm / "snakemake.err"
    # squeue, not the profile's sacct: sacct reports a cancelled job as "CANCELLED by <uid>",
    # which the plugin (2.8.0) does not take for a failure, so it would wait for ever; squeue
    # says "CANCELLED" (docs/cluster.md#retries). A time limit (TIMEOUT) fails either way.
    command, env = snakemake_on_slurm(
        *targets, "--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks",
        "2", "--slurm-status-command", "squeue", "--configfile", str(config),
    )  # fmt: skip
    with stderr.open("w") as err:
        proc = subprocess.Popen(command, cwd=on_slurm, stdout=err, stderr=err, env=env)
        # cancelled once it has finished two epochs
        log = on_slurm / f"results/logs/tune/{DATASET}/BPR/0.log"
        deadline = time.monotonic() + RUN_LIMIT_S
        while not log.exists() or log.read_text().count(" evaluating") < 2:
            assert proc.poll() is None, stderr.read_text()[-6000:]
            assert time.monotonic() < deadline, "the tune job never finished two epochs"
            time.sleep(0.1)
        (tune_id,) = [i for i, rule, _ in SUBMITTED.findall(stderr.read_text()) if rule == "tune"]
        subprocess.run(["scancel", tune_id], check=True)
        assert proc.wait(timeout=RUN_LIMIT_S + 20) == 0, stderr.read_text()[-8000:]

    submitted = [(i, rule) for i, rule, _ in SUBMITTED.findall(stderr.read_text())]
    tune_ids = [i for i, rule in submitted if rule == "tune"]
    assert len(tune_ids) == 2 and tune_ids[0] == tune_id, submitted  # the job and its retry
    assert [rule for _, rule in submitted] == ["tune", "tune"], submitted  # nothing upstream
    rows = sacct_rows(tune_ids)
    assert rows[tune_ids[0]]["state"].startswith("CANCELLED"), rows
    assert rows[tune_ids[1]]["state"] == "COMPLETED", rows
    # Snakemake deletes the log of the failed attempt; the retry's says it resumed, from the
    # resume.pth that only the SIGTERM of scancel could have written
    log = log.read_text()
    assert "resumed from epoch" in log, log[-4000:]
    assert not (on_slurm / point / "resume.pth").exists()
    for name in ("valid.json", "model.pth"):
        a, b = local / point / name, on_slurm / point / name
        if name == "valid.json":
            assert_same_file(a, b)
        else:
            import torch

            from userfair.files.io import read_pth

            sa, sb = (read_pth(p)["state_dict"] for p in (a, b))
            assert all(torch.equal(sa[k], sb[k]) for k in sa) and sa.keys() == sb.keys()
