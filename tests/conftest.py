"""Fixtures shared by the whole suite (tests/README.md says when to use which).

- ``tiny_ml100k`` (session): the tiny ml-100k of .test/ in a folder (120 users).
- ``tiny_run`` (session): ONE real run of the .test/ workflow (the README's "first run on
  tiny data": every table, figure, experiment and model of UserKNN, ItemKNN and BPR), done
  once per pytest session, as ``TinyRun(repo, test_dir)``. Tests that only read its outputs
  or dry-run it (``snakemake -n`` without a new output) use it directly: they must not write
  into it.
- ``copy_run(tiny_run, dest)``: a private copy of that run for a test that changes
  something (edits code, truncates a file, forces a rule, runs with another config): file
  times and ``.snakemake/`` are kept, so Snakemake sees nothing to redo in the copy and
  reruns only what the test's change asks for. Use ``tmp_path`` (or ``tmp_path_factory``
  in a module fixture) for ``dest``.
- ``tiny_split`` (session): one seeded 60/20/20 split of the tiny ml-100k (RecBole benchmark
  files ``tiny.{train,valid,test}.inter``, ratings >= 3), for tests that train RecBole models
  outside Snakemake and need no split of their own (``write_seeded_split`` makes another).
- ``make_workdir`` / ``snakemake``: a fresh run directory that links the repository's
  workflow, and the real ``snakemake`` of this environment in it. A test that builds its own
  working directory repeats preprocess, split, recbole_dataset and training (tens of
  seconds): prefer ``copy_run`` unless the test needs another dataset or to watch the first
  build happen.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

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


class TinyRun(NamedTuple):
    """A finished run of the .test/ workflow: ``repo`` is a repository copy (``workflow/``
    copied, so a test of a copy may edit the code; the rest linked) and ``test_dir`` its
    ``.test`` (config/, resources/, results/, .snakemake/)."""

    repo: Path
    test_dir: Path

    def snakemake(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        """``snakemake --directory .test ARGS`` in this run (see ``snakemake``)."""
        return snakemake(self.repo, "--directory", ".test", *args, **kwargs)


# Seconds the session's tiny run took, printed at the end (docs/performance.md#test-suite):
# its wall time and its CPU time (this process and every process it waited for).
_TINY_RUN_SECONDS: list[float] = []
_TINY_RUN_CPU: list[float] = []


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of every finished child process
    (Snakemake, its jobs, pip): unlike wall time, hardly moved by other load on the cores."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> TinyRun:
    """The tiny run exactly as config/README.md tells a person: the tiny data from
    `python -m userfair.workflow.testdata .test/resources/tiny-ml-100k`, then
    `snakemake --directory .test --cores 2`, in a repository copy. Shared read-only: a test
    that changes anything in it works on ``copy_run(tiny_run, tmp_path)``.

    In the inner loop, ``USERFAIR_TINY_RUN=DIR`` reuses a finished run made by an earlier
    session (DIR is its repository copy, the folder holding ``.test``), as is: its
    ``workflow/`` is that session's code, so leave the variable unset to test a change of the
    workflow itself."""
    reuse = os.environ.get("USERFAIR_TINY_RUN")
    if reuse:
        repo = Path(reuse)
        if not (repo / ".test" / "results" / "tables" / "scores.csv").is_file():
            raise pytest.UsageError(f"USERFAIR_TINY_RUN={reuse}: no finished .test/ run there")
        return TinyRun(repo, repo / ".test")
    start, cpu = time.perf_counter(), cpu_seconds()
    repo = tmp_path_factory.mktemp("tiny-run")
    shutil.copytree(
        REPO / "workflow", repo / "workflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    make_workdir(repo)
    shutil.copytree(REPO / ".test" / "config", repo / ".test" / "config")
    subprocess.run(
        [sys.executable, "-m", "userfair.workflow.testdata", ".test/resources/tiny-ml-100k"],
        cwd=repo,
        check=True,
    )
    snakemake(repo, "--directory", ".test", "--cores", "2")
    _TINY_RUN_SECONDS.append(time.perf_counter() - start)
    _TINY_RUN_CPU.append(cpu_seconds() - cpu)
    return TinyRun(repo, repo / ".test")


def copy_run(run: TinyRun, dest: Path) -> TinyRun:
    """A private copy of ``run`` at ``dest`` (which must not exist yet, or be empty): links
    copied as links, file and folder times kept (``shutil.copy2``), ``.snakemake/`` with
    them, so that ``snakemake -n`` in the copy says "Nothing to be done" as in the original.
    """
    if dest.exists():
        dest.rmdir()
    shutil.copytree(run.repo, dest, symlinks=True)
    return TinyRun(dest, dest / ".test")


@pytest.fixture(scope="session")
def tiny_split(tiny_ml100k, tmp_path_factory) -> Path:
    """One seeded (seed 7) 60/20/20 split of the tiny ml-100k as ``tiny.*.inter``: the
    shared input of the tests that train RecBole models outside Snakemake. Read-only."""
    return write_seeded_split(tiny_ml100k, tmp_path_factory.mktemp("tiny-split"), "tiny", seed=7)


#: The stages of the suite, in the order they run (.ci/run: lint and unit first): a test's
#: stage follows from its markers (:func:`stage_of`).
STAGES = ("lint", "unit", "workflow", "packaging", "slurm")
_STAGE_SECONDS: dict[str, float] = {}
_STAGE_CPU: dict[str, float] = {}
_TEST_CPU: dict[str, float] = {}


def stage_of(markers) -> str:
    """The stage of a test with these marker names: lint, slurm, packaging, then workflow
    (slow) or unit."""
    for name in ("lint", "slurm", "packaging"):
        if name in markers:
            return name
    return "workflow" if "slow" in markers else "unit"


def pytest_collection_modifyitems(items):
    """Run the stages in order, each test's order within its stage kept: a lint error or a
    fast test's failure shows before the minutes of the workflow tests."""
    rank = {stage: i for i, stage in enumerate(STAGES)}
    items.sort(key=lambda item: rank[stage_of({m.name for m in item.iter_markers()})])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """CPU seconds of each test, setup and teardown included (a session fixture's build is
    counted where it is first used)."""
    start = cpu_seconds()
    yield
    used = cpu_seconds() - start
    _TEST_CPU[item.nodeid] = used
    stage = stage_of({m.name for m in item.iter_markers()})
    _STAGE_CPU[stage] = _STAGE_CPU.get(stage, 0.0) + used


def pytest_runtest_logreport(report):
    stage = stage_of(set(report.keywords))
    _STAGE_SECONDS[stage] = _STAGE_SECONDS.get(stage, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """Each stage's time, and the session's tiny run time beside the suite's: the suite's
    yardstick."""
    if _STAGE_SECONDS:
        terminalreporter.write_line(
            "seconds per stage (setup, call and teardown): "
            + ", ".join(f"{s} {_STAGE_SECONDS[s]:.0f}" for s in STAGES if s in _STAGE_SECONDS)
        )
    if _STAGE_CPU:
        terminalreporter.write_line(
            "CPU seconds per stage (this process and its children): "
            + ", ".join(f"{s} {_STAGE_CPU[s]:.0f}" for s in STAGES if s in _STAGE_CPU)
        )
        terminalreporter.write_line("the tests that took the most CPU seconds:")
        for nodeid, cpu in sorted(_TEST_CPU.items(), key=lambda kv: -kv[1])[:15]:
            terminalreporter.write_line(f"  {cpu:6.1f}  {nodeid}")
    if _TINY_RUN_SECONDS:
        terminalreporter.write_line(
            f"tiny .test/ workflow run (fixture tiny_run): {_TINY_RUN_SECONDS[0]:.0f} s, "
            f"{_TINY_RUN_CPU[0]:.0f} CPU s"
        )
