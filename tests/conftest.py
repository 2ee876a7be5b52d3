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

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from filelock import FileLock

# Each worker of a parallel run (pytest-xdist) is a one-core job, as a Snakemake job is one of
# `threads` cores: the thread pools of BLAS, OpenMP and torch (sized to every core when
# their library loads, hence before the first numpy import below) and numba's parallel
# loops (userfair.formulas._kernels.job_threads follows OMP_NUM_THREADS) get one thread each. With
# every worker's pools sized to all cores, the fast lane spent a third of its CPU seconds
# in threads competing for the same cores (docs/performance.md#test-suite). A value the
# caller set is kept; Snakemake sets each job's own.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

# Bytecode caches are written even where PYTHONDONTWRITEBYTECODE is set (a container's usual
# default, and this project's CI machine's): pytest keeps each test module's assertion
# rewrite there, and without it every worker of each of .ci/run's three pytest runs rewrote
# all the modules again (5 CPU s of its 7 to 12 s of collection). The caches go to the
# repository's __pycache__ folders, which git ignores. Workers, Snakemake runs and their jobs
# inherit the setting through the environment.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# (after the thread settings: these load numpy)
from userfair.files.io import read_inter, write_inter  # noqa: E402
from userfair.workflow.meter import cpu_seconds  # noqa: E402  (of finished children too)
from userfair.workflow.testdata import write_tiny_ml100k  # noqa: E402

import warm_snakemake  # noqa: E402  (tests/)

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: The .test/ configuration (config/README.md's "A first run"), as the tiny run reads it.
#: Shared read-only: a test builds its own dict from it, never changes it.
TEST_CONFIG = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())


def suite_cpu_seconds() -> float:
    """CPU seconds of this test process and its finished children, with the Snakemake
    commands the warm server ran for it (its children, not this process's)."""
    return cpu_seconds() + warm_snakemake.CPU[0]


# Snakemake's SLURM executor plugin runs `scontrol show config` whenever Snakemake starts
# (for the help text of its status-command setting). Where SLURM's client is installed but
# no controller answers (this machine once the SLURM test has stopped its cluster), that
# call waits 9 s before it gives up: 9 s of every Snakemake process, dry runs included.
# The tests that need no cluster (all but tests/cluster/test_slurm.py, which restores
# SLURM_CONF_BEFORE) see a configuration whose controller port is closed and whose message
# timeout is 1 s, which scontrol gives up on at once (the plugin then offers no default
# status command, which only a SLURM run reads). The value before the session is kept for
# pytest-xdist's workers, which inherit the override.
os.environ.setdefault("USERFAIR_TESTS_SLURM_CONF", os.environ.get("SLURM_CONF", ""))
SLURM_CONF_BEFORE = os.environ["USERFAIR_TESTS_SLURM_CONF"] or None
NO_SLURM_CONF = Path(tempfile.gettempdir()) / f"userfair-tests-no-slurm-{os.getuid()}.conf"
_NO_SLURM = (
    "ClusterName=none\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=9\nMessageTimeout=1\n"
)


def _without_slurm() -> None:
    if not NO_SLURM_CONF.exists() or NO_SLURM_CONF.read_text() != _NO_SLURM:
        partial = NO_SLURM_CONF.with_name(f"{NO_SLURM_CONF.name}.{os.getpid()}")
        partial.write_text(_NO_SLURM)
        os.replace(partial, NO_SLURM_CONF)
    os.environ["SLURM_CONF"] = str(NO_SLURM_CONF)


_without_slurm()


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
    for name in ("config", "workflow", "envs", "profiles"):
        if not (path / name).exists():
            (path / name).symlink_to(REPO / name)
    return path


def snakemake(
    workdir: Path, *args: str, check: bool = True, timeout: float = 1800, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the real `snakemake` of this environment in ``workdir``; output is captured.
    The command line starts warm (tests/warm_snakemake.py) unless ``env`` sets what an
    interpreter reads as it starts or ``USERFAIR_WARM_SNAKEMAKE=0``."""
    full_env = {**os.environ, **(env or {})}
    if warm_snakemake.wanted(env):
        proc = warm_snakemake.run(list(args), workdir, full_env, BIN, timeout)
    else:
        proc = subprocess.run(
            [str(BIN / "snakemake"), *args],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
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


# The tiny run's wall and CPU seconds, once this process has built it: reported with the
# next test's teardown, so that the summary (in the controlling process when the suite runs
# on several workers) prints it beside the suite's time (docs/performance.md#test-suite).
_TINY_RUN_BUILT: list[tuple[float, float]] = []


def session_dir(tmp_path_factory) -> Path:
    """The folder every worker of this session shares: pytest's base temporary folder (of
    the controlling process when pytest-xdist runs the suite on several workers)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> TinyRun:
    """The tiny run exactly as config/README.md tells a person: the tiny data from
    `python -m userfair.workflow.testdata .test/resources/tiny-ml-100k`, then
    `snakemake --directory .test --cores 2`, in a repository copy. Built once per session,
    by the first worker that needs it (the others wait for it: a file lock). Shared
    read-only: a test that changes anything in it works on ``copy_run(tiny_run, tmp_path)``.

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
    shared = session_dir(tmp_path_factory)
    repo, done = shared / "tiny-run", shared / "tiny-run.done"
    with FileLock(str(shared / "tiny-run.lock")):
        if not done.exists():
            start, cpu = time.perf_counter(), suite_cpu_seconds()
            shutil.rmtree(repo, ignore_errors=True)  # a build that failed in another worker
            shutil.copytree(
                REPO / "workflow", repo / "workflow", ignore=shutil.ignore_patterns("__pycache__")
            )
            make_workdir(repo)
            shutil.copytree(REPO / ".test" / "config", repo / ".test" / "config")
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "userfair.workflow.testdata",
                    ".test/resources/tiny-ml-100k",
                ],
                cwd=repo,
                check=True,
            )
            snakemake(repo, "--directory", ".test", "--cores", "2")
            _TINY_RUN_BUILT.append((time.perf_counter() - start, suite_cpu_seconds() - cpu))
            done.touch()
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


def stage_of(markers) -> str:
    """The stage of a test with these marker names: lint, slurm, packaging, then workflow
    (slow) or unit."""
    for name in ("lint", "slurm", "packaging"):
        if name in markers:
            return name
    return "workflow" if "slow" in markers else "unit"


#: Seconds each module keeps a worker busy (its CPU seconds, the tiny run's build left out;
#: wall seconds for the SLURM module, which mostly waits on its daemons), from a measured
#: run: the order in which the modules go to the workers. `USERFAIR_MODULE_SECONDS=write`
#: rewrites it from the session's own numbers (a module missing from it counts as the median).
MODULE_SECONDS = Path(__file__).with_name("module_seconds.json")


def read_module_seconds() -> dict[str, float]:
    """:data:`MODULE_SECONDS` as a dict (empty without the file)."""
    return json.loads(MODULE_SECONDS.read_text()) if MODULE_SECONDS.is_file() else {}


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def slurm_opted_in(config: pytest.Config) -> bool:
    """Whether this run asked for the SLURM cluster (tests/cluster/test_slurm.py's docstring)."""
    selected = re.search(r"(?<!not )\bslurm\b", config.option.markexpr or "")
    return bool(selected) or "1" in (
        os.environ.get("USERFAIR_SLURM"),
        os.environ.get("USERFAIR_REQUIRE_SLURM"),
    )


def pytest_xdist_auto_num_workers(config):
    """One worker per core, and one more when the SLURM tests run: they wait on the
    cluster's daemons for minutes, which would leave a core idle. Not when the marker
    expression leaves them out (`not slow` or `not slurm`: .ci/run's fast lane, which runs
    with USERFAIR_REQUIRE_SLURM=1 set), where the third worker only added its own
    collection and a third process on two cores: 67 s against 59 s (2026-11-29)."""
    waiting = slurm_opted_in(config) and not re.search(
        r"\bnot\s+(slow|slurm)\b", config.option.markexpr or ""
    )
    return (os.cpu_count() or 1) + (1 if waiting else 0)


def pytest_collection_modifyitems(config, items):
    """The order in which the modules reach the workers (each test's order within its module
    kept). In one process (``-n 0``): the stages in order, lint first, so that a lint error
    or a fast test's failure shows before the minutes of the workflow tests. On several
    workers, for the shortest wall time: lint first; then the first module that needs the
    tiny run, so that one worker builds it at once; the SLURM module (it mostly waits); the
    modules that do not need the tiny run, the longest first, which keep the other workers
    busy meanwhile; then the modules that read or copy it, the longest first, so that no long
    module starts last (:data:`MODULE_SECONDS`). .ci/run's lint and unit stages still run
    first, each on its own."""
    rank = {stage: i for i, stage in enumerate(STAGES)}
    stage = {item.nodeid: stage_of({m.name for m in item.iter_markers()}) for item in items}
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # one process (the workers collect)
        items.sort(key=lambda item: rank[stage[item.nodeid]])
        return
    known = read_module_seconds()
    default = statistics.median(known.values()) if known else 1.0
    needs_run = {module_of(i.nodeid) for i in items if "tiny_run" in i.fixturenames}
    first = max(needs_run, key=lambda m: known.get(m, default), default=None)

    def order(item):
        module = module_of(item.nodeid)
        if stage[item.nodeid] == "lint":
            group = 0
        elif module == first:
            group = 1
        elif stage[item.nodeid] == "slurm":
            group = 2
        else:
            group = 4 if module in needs_run else 3
        return (group, -known.get(module, default), module)

    items.sort(key=order)  # kept by xdist: --no-loadscope-reorder (pyproject.toml)


_CPU_AT_SETUP = pytest.StashKey[float]()

#: The fast lane's test now running (its node id), while one runs: it must not start a
#: process (the `slow` marker's definition, pyproject.toml), which the audit hook refuses.
_FAST_TEST: list[str] = []
_PROCESS_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.system", "os.spawn")


def _refuse_a_process_in_the_fast_lane(event: str, args) -> None:
    if _FAST_TEST and event in _PROCESS_EVENTS:
        raise RuntimeError(
            f"{_FAST_TEST[0]} starts a process ({event}: {str(args[0])[:80]}): the fast lane "
            "stays in-process; mark the test slow (pyproject.toml's markers)"
        )


sys.addaudithook(_refuse_a_process_in_the_fast_lane)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A fast-lane test (stage unit) runs, with its fixtures, under the audit hook above."""
    fast = stage_of({m.name for m in item.iter_markers()}) == "unit"
    if fast:
        _FAST_TEST.append(item.nodeid)
    try:
        yield
    finally:
        if fast:
            _FAST_TEST.clear()


def pytest_sessionfinish(session):
    """The warm Snakemake server ends with its test process, having reaped its children."""
    warm_snakemake.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_CPU_AT_SETUP] = suite_cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The teardown report carries the test's CPU seconds (setup and teardown included; a
    session fixture's build is counted where it is first used) and, once, the tiny run's
    time: a worker's reports reach the controlling process, which sums them."""
    outcome = yield
    report = outcome.get_result()
    if call.when == "teardown" and _CPU_AT_SETUP in item.stash:
        report.user_properties.append(
            ("cpu_seconds", suite_cpu_seconds() - item.stash[_CPU_AT_SETUP])
        )
        if _TINY_RUN_BUILT:
            report.user_properties.append(("tiny_run", _TINY_RUN_BUILT.pop()))


_TEST_CPU: dict[str, float] = {}
_STAGE_CPU: dict[str, float] = {}
_TINY_RUN: list[tuple[float, float]] = []


_MODULE_BUSY: dict[str, float] = {}


def pytest_runtest_logreport(report):
    stage = stage_of(set(report.keywords))
    _STAGE_SECONDS[stage] = _STAGE_SECONDS.get(stage, 0.0) + report.duration
    module = module_of(report.nodeid)
    if stage == "slurm":  # it waits on the cluster: its wall seconds keep a worker
        _MODULE_BUSY[module] = _MODULE_BUSY.get(module, 0.0) + report.duration
    for name, value in report.user_properties:
        if name == "cpu_seconds":
            _TEST_CPU[report.nodeid] = value
            _STAGE_CPU[stage] = _STAGE_CPU.get(stage, 0.0) + value
            if stage != "slurm":
                _MODULE_BUSY[module] = _MODULE_BUSY.get(module, 0.0) + value
        elif name == "tiny_run":
            _TINY_RUN.append(tuple(value))
            _MODULE_BUSY[module] = _MODULE_BUSY.get(module, 0.0) - value[1]


def write_module_seconds() -> None:
    """:data:`MODULE_SECONDS` from this session, the modules it did not run kept."""
    known = read_module_seconds()
    known.update({m: round(max(v, 0.0), 1) for m, v in _MODULE_BUSY.items()})
    ordered = dict(sorted(known.items(), key=lambda kv: -kv[1]))
    MODULE_SECONDS.write_text(json.dumps(ordered, indent=1) + "\n")


def pytest_terminal_summary(terminalreporter):
    """Each stage's time, the costliest tests by CPU seconds, and the session's tiny run
    beside them: the suite's yardstick."""
    write = terminalreporter.write_line
    if _STAGE_SECONDS:
        write(
            "seconds per stage (setup, call and teardown, summed over workers): "
            + ", ".join(f"{s} {_STAGE_SECONDS[s]:.0f}" for s in STAGES if s in _STAGE_SECONDS)
        )
    if _STAGE_CPU:
        write(
            "CPU seconds per stage (the tests' processes and their children): "
            + ", ".join(f"{s} {_STAGE_CPU[s]:.0f}" for s in STAGES if s in _STAGE_CPU)
        )
        write("the tests that took the most CPU seconds:")
        for nodeid, cpu in sorted(_TEST_CPU.items(), key=lambda kv: -kv[1])[:15]:
            write(f"  {cpu:6.1f}  {nodeid}")
    if _TINY_RUN:
        seconds, cpu = _TINY_RUN[0]
        write(f"tiny .test/ workflow run (fixture tiny_run): {seconds:.0f} s, {cpu:.0f} CPU s")
    if os.environ.get("USERFAIR_MODULE_SECONDS") == "write" and _MODULE_BUSY:
        write_module_seconds()
        write(f"wrote {MODULE_SECONDS} ({len(_MODULE_BUSY)} modules of this session)")
