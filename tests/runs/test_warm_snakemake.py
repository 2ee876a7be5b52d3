"""The suite's warm Snakemake start (tests/warm_snakemake.py) behaves as the `snakemake`
script does: the working folder, the environment, the exit status and both streams of the
request; the workflow's code read fresh by every command; a timeout stops the command and its
jobs; the CPU seconds of the command and its jobs counted. A tiny Snakefile of its own, not
the project's, keeps each command under a second."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest

import warm_snakemake
from conftest import BIN

SNAKEFILE = """\
import sys
sys.path.insert(0, workflow.basedir)
import marker  # a module of this folder: the workflow's own code

rule all:
    output: "out.txt"
    shell: "echo {marker.VALUE} $MARK > {output}"

rule busy:
    output: "busy.txt"
    shell: "{python} -c '{spin}' && touch {output}"

rule slow:
    output: "slow.txt"
    shell: "sleep 60 && touch {output}"
"""
# 0.3 CPU seconds, the busy job's
SPIN = "import time\\nend = time.process_time() + 0.3\\nwhile time.process_time() < end: pass"


# (the tests' cluster-less SLURM configuration: conftest.py)
ENV = {"PATH": "/usr/bin:/bin", "MARK": "from-env", "SLURM_CONF": os.environ["SLURM_CONF"]}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "Snakefile").write_text(
        SNAKEFILE.replace("{python}", sys.executable).replace("{spin}", SPIN)
    )
    (tmp_path / "marker.py").write_text("VALUE = 'first'\n")
    return tmp_path


def same_run(text):
    """The printout without what differs between any two runs: the date, the run's id and
    the job lines' times."""
    varying = re.compile(r"  Date: |  Workflow ID: |\[\w{3} \w{3} [ \d:]+\]$")
    return [line for line in text.splitlines() if not varying.match(line)]


def run(project, *args, env=None, timeout=120):
    env = {**ENV, **(env or {})}
    return warm_snakemake.run(["--cores", "1", *args], project, env, BIN, timeout)


@pytest.mark.slow
def test_the_command_runs_in_its_folder_with_its_environment_and_fresh_code(project):
    done = run(project)
    assert done.returncode == 0, done.stderr
    assert (project / "out.txt").read_text().split() == ["first", "from-env"]
    assert "Finished job" in done.stderr or "steps (100%) done" in done.stderr
    (project / "marker.py").write_text("VALUE = 'second'\n")
    again = run(project, "--forceall")
    assert again.returncode == 0, again.stderr
    assert (project / "out.txt").read_text().split() == ["second", "from-env"]


@pytest.mark.slow
def test_a_dry_run_prints_what_the_script_prints_and_a_failure_its_status(project):
    cold = subprocess.run(
        [str(BIN / "snakemake"), "--cores", "1", "-n"],
        cwd=project, capture_output=True, text=True, timeout=120,
        env=ENV,
    )  # fmt: skip
    warm = run(project, "-n")
    assert warm.returncode == cold.returncode == 0
    assert same_run(warm.stdout) == same_run(cold.stdout) and warm.stderr == cold.stderr
    (project / "Snakefile").write_text("rule broken\n")
    failed = run(project, "-n")
    assert failed.returncode == 1 and "SyntaxError" in failed.stderr


def left_in(project) -> list:
    """The processes that work in the project's folder: the command and its jobs."""
    left = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.cwd() == str(project):
                left.append(process.cmdline())
    return left


@pytest.mark.slow
def test_a_timeout_or_ctrl_c_stops_the_command_and_its_jobs_and_cpu_is_counted(project):
    before = warm_snakemake.CPU[0]
    assert run(project, "busy.txt").returncode == 0
    assert warm_snakemake.CPU[0] - before >= 0.3  # the job's CPU seconds, a grandchild's
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run(project, "slow.txt", timeout=3)
    assert time.monotonic() - start < 30
    assert left_in(project) == []

    def ctrl_c(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, ctrl_c)
    try:
        signal.setitimer(signal.ITIMER_REAL, 3.0)
        with pytest.raises(KeyboardInterrupt):
            run(project, "slow.txt", "--rerun-incomplete", "--nolock")  # after the kill
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert left_in(project) == []


def test_an_environment_read_at_start_goes_cold():
    assert warm_snakemake.wanted(None) and warm_snakemake.wanted({"USERFAIR_DEBUG": "1"})
    assert not warm_snakemake.wanted({"PYTHONPATH": "x"})
    assert not warm_snakemake.wanted({"SLURM_CONF": "x"})
