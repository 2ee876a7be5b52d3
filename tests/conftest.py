"""Fixtures shared by the whole suite: the embedded ml-100k, a tiny slice of it, and a
helper that runs the real Snakemake workflow in a temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from userfair.io import read_inter, write_inter
from userfair.workflow.testdata import write_tiny_ml100k

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def tiny_ml100k(tmp_path_factory) -> Path:
    """The tiny ml-100k of .test/ (userfair.workflow.testdata: the first 120 users, about 14k
    ratings) in a folder; point a config at it with
    ``dataset_options: {ml-100k: {path: <folder>}}``."""
    return write_tiny_ml100k(tmp_path_factory.mktemp("tiny-ml-100k"))


def write_seeded_split(tiny_dir: Path, out: Path, dataset: str, seed: int) -> Path:
    """A seeded 60/20/20 random split of the tiny ml-100k in ``tiny_dir`` (ratings >= 3), as
    RecBole benchmark files ``out/DATASET.{train,valid,test}.inter``; returns ``out``."""
    frame = read_inter(tiny_dir / "ml-100k.inter")
    frame = frame[frame["rating"] >= 3][["user_id", "item_id"]]
    frame = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    fifth = len(frame) // 5
    for name, part in {
        "train": frame.iloc[: 3 * fifth],
        "valid": frame.iloc[3 * fifth : 4 * fifth],
        "test": frame.iloc[4 * fifth :],
    }.items():
        write_inter(part, out / f"{dataset}.{name}.inter")
    return out


def make_workdir(path: Path) -> Path:
    """A fresh run directory that sees the repository's workflow through symlinks, so
    results/ and resources/ of a test never touch the repository's own."""
    path.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config", "workflow", "envs", "profiles"):
        if not (path / name).exists():
            (path / name).symlink_to(REPO / name)
    return path


def snakemake(
    workdir: Path, *args: str, check: bool = True, timeout: float = 1800, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the real `snakemake` of this environment in ``workdir``; output is captured."""
    proc = subprocess.run(
        [str(BIN / "snakemake"), *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode})\n"
            f"--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-12000:]}"
        )
    return proc
