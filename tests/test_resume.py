"""Killed training jobs resume (docs/training.md#resume): SIGTERM writes resume.pth, the next
run resumes from it and ends bit-identical to an uninterrupted run (valid.json's record and
model.pth's tensors), resume.pth of other settings is ignored; through the real Snakemake, a
job killed with SIGKILL mid-training resumes after --unlock and --rerun-incomplete."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from userfair.files.io import read_pth

from conftest import BIN, copy_run

pytestmark = pytest.mark.slow

DATASET = "tiny"
# Enough epochs that a signal lands mid-training; early stopping never ends it before.
EPOCHS = 20
PARAMS = {"BPR": {"learning_rate": 0.01}, "MultiVAE": {"learning_rate": 0.01}}


@pytest.fixture(scope="module")
def split_dir(tiny_split):
    """The suite's shared seeded 60/20/20 split of the tiny ml-100k (conftest
    ``tiny_split``: seed 7, ratings >= 3, dataset ``tiny``)."""
    return tiny_split


def training(**changes):
    from userfair.workflow.recbole_setup import Training

    settings = dict(epochs=EPOCHS, stopping_step=EPOCHS, device="cpu", train_batch_size=256)
    return Training(**{**settings, "seed": 11, **changes})


@pytest.fixture(scope="module")
def uninterrupted(split_dir, tmp_path_factory):
    """model -> (record, state_dict) of an uninterrupted run."""
    from userfair.workflow import recommenders

    cache = {}

    def get(model):
        if model not in cache:
            work = tmp_path_factory.mktemp(f"whole-{model}")
            record = recommenders.train_point(
                model, PARAMS[model], split_dir, DATASET, work, training()
            )
            assert not (work / "resume.pth").exists()  # removed on success
            cache[model] = (record, state_dict(work / "model.pth"))
        return cache[model]

    return get


def state_dict(path: Path) -> dict:
    return read_pth(path)["state_dict"]


def same_run(a: dict, b: dict) -> None:
    """Equal records (wall-clock seconds aside), curve included."""
    a, b = dict(a), dict(b)
    a.pop("seconds"), b.pop("seconds")
    assert a == b


def same_tensors(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name


# A training run in its own process, logging RecBole's messages to a file, so that the test
# can watch its epochs and signal it.
CHILD = """
import logging, sys
from userfair.workflow import recbole_setup, recommenders
logging.basicConfig(filename=sys.argv[5], level=logging.INFO, force=True)
recommenders.train_point(
    sys.argv[1], {params}, sys.argv[2], sys.argv[3], sys.argv[4],
    recbole_setup.Training(**{training}), checkpoint_every=int(sys.argv[6]),
)
"""


def start_training(model, split_dir, work: Path, every: int, **changes) -> subprocess.Popen:
    code = CHILD.format(params=repr(PARAMS[model]), training=repr(training(**changes).__dict__))
    log = work / "child.log"
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            model,
            str(split_dir),
            DATASET,
            str(work),
            str(log),
            str(every),
        ]
    )


def wait_for(condition, proc: subprocess.Popen, what: str, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the training process ended before {what}"
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def evaluated_epochs(log: Path) -> int:
    return log.read_text().count(" evaluating") if log.exists() else 0


@pytest.mark.parametrize("model", ["BPR", "MultiVAE"])
def test_sigterm_writes_resume_pth_and_the_resumed_run_is_bit_identical(
    model, split_dir, uninterrupted, tmp_path, caplog
):
    from userfair.workflow import recommenders

    work = tmp_path / "point"
    work.mkdir()
    # checkpoint_every far beyond the epochs: only SIGTERM writes resume.pth
    proc = start_training(model, split_dir, work, every=10**6)
    wait_for(lambda: evaluated_epochs(work / "child.log") >= 2, proc, "two epochs")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 128 + signal.SIGTERM
    state = read_pth(work / "resume.pth")
    assert 0 <= state["epoch"] < EPOCHS - 1  # the last finished epoch when signalled
    assert not (work / "model.pth").exists()
    assert "SIGTERM received" in (work / "child.log").read_text()

    with caplog.at_level(logging.INFO):
        record = recommenders.train_point(
            model, PARAMS[model], split_dir, DATASET, work, training(), checkpoint_every=3
        )
    assert f"resumed from epoch {state['epoch'] + 1}" in caplog.text
    assert not (work / "resume.pth").exists()
    whole, whole_state = uninterrupted(model)
    same_run(record, whole)
    same_tensors(state_dict(work / "model.pth"), whole_state)


def test_periodic_checkpoint_and_a_resume_pth_of_other_settings_is_ignored(
    split_dir, uninterrupted, tmp_path, caplog
):
    from userfair.workflow import recommenders

    work = tmp_path / "point"
    work.mkdir()
    # another seed: the state of another run; killed (SIGKILL) after its 2nd checkpoint
    proc = start_training("BPR", split_dir, work, every=2, seed=99)
    wait_for(
        lambda: (work / "resume.pth").exists() and evaluated_epochs(work / "child.log") >= 4,
        proc,
        "a checkpoint",
    )
    proc.kill()
    proc.wait(timeout=60)
    state = read_pth(work / "resume.pth")
    assert (state["epoch"] + 1) % 2 == 0  # written at every 2nd epoch only

    with caplog.at_level(logging.INFO):
        record = recommenders.train_point(
            "BPR", PARAMS["BPR"], split_dir, DATASET, work, training()
        )
    assert "written with other settings" in caplog.text
    assert "resumed from epoch" not in caplog.text
    whole, whole_state = uninterrupted("BPR")
    same_run(record, whole)
    same_tensors(state_dict(work / "model.pth"), whole_state)


def test_an_unreadable_resume_pth_is_ignored(split_dir, uninterrupted, tmp_path, caplog):
    from userfair.workflow import recommenders

    work = tmp_path / "point"
    work.mkdir()
    (work / "resume.pth").write_bytes(b"PK\x03\x04 truncated")
    with caplog.at_level(logging.INFO):
        record = recommenders.train_point(
            "BPR", PARAMS["BPR"], split_dir, DATASET, work, training()
        )
    assert "unreadable" in caplog.text
    same_run(record, uninterrupted("BPR")[0])


# --- through Snakemake ---------------------------------------------------------------------


def workflow_config(run) -> str:
    """An overlay of the .test/ config: BPR alone, on a grid point the .test/ run did not
    train, for EPOCHS epochs."""
    (run.test_dir / "grid-resume.yaml").write_text(
        yaml.safe_dump({"BPR": {"learning_rate": [0.01]}})
    )
    (run.test_dir / "resume.yaml").write_text(
        yaml.safe_dump(
            {
                "models": ["BPR"],
                "experiments": {"model": "BPR"},
                "grid": "grid-resume.yaml",
                "training": {"epochs": EPOCHS, "stopping_step": EPOCHS, "device": "cpu"},
            }
        )
    )
    return str(run.test_dir / "resume.yaml")


POINT = "results/ml-100k/models/BPR/grid/0"
TARGETS = [f"{POINT}/valid.json", f"{POINT}/model.pth"]


def test_a_job_killed_mid_training_resumes_after_unlock_and_rerun_incomplete(tmp_path, tiny_run):
    """On two copies of the session's tiny run (conftest ``tiny_run``): its split and RecBole
    dataset are reused, only the grid point trains (the new settings retrain it)."""
    whole_run = copy_run(tiny_run, tmp_path / "whole")
    whole = whole_run.test_dir
    whole_run.snakemake(*TARGETS, "--cores", "1", "--configfile", workflow_config(whole_run))

    killed_run = copy_run(tiny_run, tmp_path / "killed")
    killed = killed_run.test_dir
    args = ["--cores", "1", "--configfile", workflow_config(killed_run)]
    # the whole process group (Snakemake and its job) dies at once, as on a lost node
    proc = subprocess.Popen(
        [str(BIN / "snakemake"), "--directory", ".test", *TARGETS, *args],
        cwd=killed_run.repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    log = killed / "results/logs/tune/ml-100k/BPR/0.log"
    try:
        wait_for(
            lambda: (killed / POINT / "resume.pth").exists() and evaluated_epochs(log) >= 2,
            proc,
            "the first checkpoint",
        )
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert not (killed / POINT / "valid.json").exists()
    assert killed_run.snakemake(*TARGETS, *args, check=False).returncode != 0  # locked

    killed_run.snakemake(*TARGETS, "--unlock", *args)
    killed_run.snakemake(*TARGETS, "--rerun-incomplete", *args)
    assert "resumed from epoch" in log.read_text()
    assert not (killed / POINT / "resume.pth").exists()
    a, b = (json.loads((d / POINT / "valid.json").read_text()) for d in (whole, killed))
    same_run(a, b)
    same_tensors(state_dict(whole / POINT / "model.pth"), state_dict(killed / POINT / "model.pth"))
