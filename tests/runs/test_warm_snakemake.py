"""The suite's warm Snakemake start (tests/warm_snakemake.py) behaves as the `snakemake`
script does: the working folder, the environment, the exit status and both streams of the
request; the workflow's code read fresh by every command; a timeout stops the command and its
jobs; the CPU seconds of the command and its jobs counted. A tiny Snakefile of its own, not
the project's, keeps each command under a second."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

import warm_jobs

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

rule script_job:
    output: "script.json"
    script: "job.py"

rule script_fails:
    output: "fails.txt"
    script: "fails.py"

rule script_slow:
    output: "script_slow.txt"
    script: "slow.py"

rule script_path:
    output: "path.json"
    script: "path.py"

rule script_shadow:
    output: "shadow.txt"
    script: "shadow.py"
"""
# A rule's script: what it sees of its process (pyarrow: imported by the warm server, not by
# Snakemake's preamble, so loaded before the script runs only when the job started warm)
JOB = """\
import json, os, sys
preloaded = "pyarrow" in sys.modules
facts = {
    "cwd": os.getcwd(), "mark": os.environ.get("MARK"),
    "argv": [a.endswith(".job.py") for a in sys.argv], "path0": sys.path[0],
    "executable": sys.executable, "output": list(snakemake.output), "main": __name__,
    "stdin": os.isatty(0),
}
print("job stdout line")
print("job stderr line", file=sys.stderr)
with open(snakemake.output[0], "w") as out:
    json.dump({"preloaded": preloaded, **facts}, out)
"""
# A rule's script that imports from PYTHONPATH's folders: where they sit on its path, what
# it loaded from them, and (for the torch, numba, pyplot and seaborn a warm job server learns)
# which of those it found loaded before it imported them itself (with IMPORT_LEARNT set)
PATH_JOB = """\
import json, os, sys
import warm_jobs_learnt as learnt
found = [name for name in learnt.NAMES if name in sys.modules]
import plugin_mod
if os.environ.get("IMPORT_LEARNT"):
    for name in learnt.NAMES:
        __import__(name)
with open(snakemake.output[0], "w") as out:
    json.dump({"found": found, "plugin": plugin_mod.VALUE, "path": sys.path[1:3]}, out)
"""
SHADOW = """\
import scipy
with open(snakemake.output[0], "w") as out:
    out.write(getattr(scipy, "FROM", "real"))
"""
FAILS = "raise ValueError('boom from the script')\n"
SLOW = "import time\ntime.sleep(60)\n"

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
    for name, text in (
        ("job.py", JOB),
        ("fails.py", FAILS),
        ("slow.py", SLOW),
        ("path.py", PATH_JOB),
        ("shadow.py", SHADOW),
    ):
        (tmp_path / name).write_text(text)
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
    assert warm_snakemake.wanted({"PYTHONPATH": "x"})  # the command puts it on its path
    assert not warm_snakemake.wanted({"PYTHONHOME": "x"})
    assert not warm_snakemake.wanted({"SLURM_CONF": "x"})


def test_a_pythonpath_folder_that_shadows_a_loaded_module_goes_cold(tmp_path):
    plain, shadowing, archive = (tmp_path / name for name in ("plain", "shadowing", "a.zip"))
    (plain / "plugin_mod").mkdir(parents=True)
    (plain / "plugin_mod-1.0.dist-info").mkdir()
    (shadowing / "yaml").mkdir(parents=True)  # loaded here (conftest.py), as in the server
    archive.write_bytes(b"PK")
    assert not warm_snakemake._shadowed([str(plain), str(tmp_path / "missing")])
    assert warm_snakemake._shadowed([str(plain), str(shadowing)])
    assert warm_snakemake._shadowed([str(archive)])


@pytest.mark.slow
def test_pythonpath_reaches_a_warm_command_and_its_jobs_where_a_fresh_one_puts_it(
    project, tmp_path_factory
):
    """PYTHONPATH's folders come right after the script's own folder, for the command and
    its warm jobs, as in a fresh interpreter; a folder with a namesake of a module the warm
    server has loaded (scipy here, which neither Snakemake nor the script needs before it
    imports it) makes the command a fresh interpreter, whose job then loads the namesake.
    The job server learns what a job loads of warm_jobs.LEARNT: the second of two jobs in
    one command finds it loaded."""
    site = tmp_path_factory.mktemp("site")
    (site / "plugin_mod.py").write_text("VALUE = 'from-pythonpath'\n")
    (site / "warm_jobs_learnt.py").write_text(f"NAMES = {list(warm_jobs.LEARNT)!r}\n")
    other = tmp_path_factory.mktemp("other")
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(other)])}
    cold = subprocess.run(
        [str(BIN / "snakemake"), "--cores", "1", "path.json"],
        cwd=project, capture_output=True, text=True, timeout=120, env={**ENV, **env},
    )  # fmt: skip
    assert cold.returncode == 0, cold.stderr
    seen_cold = json.loads((project / "path.json").read_text())
    assert seen_cold == {
        "found": [], "plugin": "from-pythonpath", "path": [str(site), str(other)],
    }  # fmt: skip
    warm = run(project, "path.json", "--forceall", env=env)
    assert warm.returncode == 0, warm.stderr
    assert json.loads((project / "path.json").read_text()) == seen_cold
    # the job server has learnt: a second job of the same command finds them loaded
    (project / "Snakefile").write_text(
        (project / "Snakefile").read_text()
        + 'rule twice:\n    input: "path.json"\n    output: "twice.json"\n    script: "twice.py"\n'
    )
    (project / "twice.py").write_text(PATH_JOB)
    learnt = run(project, "twice.json", "--forceall", env={**env, "IMPORT_LEARNT": "1"})
    assert learnt.returncode == 0, learnt.stderr
    assert json.loads((project / "twice.json").read_text())["found"] == list(warm_jobs.LEARNT)
    # a namesake of a module the server has loaded: the command runs a fresh interpreter
    (other / "scipy").mkdir()
    (other / "scipy" / "__init__.py").write_text("FROM = 'shadow'\n")
    assert run(project, "shadow.txt").returncode == 0
    assert (project / "shadow.txt").read_text() == "real"  # not on the path
    shadowed = run(project, "shadow.txt", "--forceall", env=env)
    assert shadowed.returncode == 0, shadowed.stderr
    assert (project / "shadow.txt").read_text() == "shadow"


@pytest.mark.slow
def test_a_rule_script_starts_warm_and_runs_as_a_fresh_interpreter_runs_it(project, monkeypatch):
    """tests/warm_jobs.py: a rule's script starts in a fork of the command's job server (the
    third-party modules already loaded), with what a fresh `python SCRIPT` would have: the
    working folder, environment, argv, sys.path[0], sys.executable, __main__ and the
    streams; a failing script's traceback and status reach Snakemake."""
    warm = run(project, "script.json")
    assert warm.returncode == 0, warm.stderr
    seen_warm = json.loads((project / "script.json").read_text())
    monkeypatch.setenv(warm_jobs.SWITCH, "0")
    cold = run(project, "script.json", "--forceall")
    assert cold.returncode == 0, cold.stderr
    seen_cold = json.loads((project / "script.json").read_text())
    assert seen_warm.pop("preloaded") and not seen_cold.pop("preloaded")
    assert seen_warm == seen_cold and seen_cold["executable"] == sys.executable
    for done in (warm, cold):
        assert "job stdout line" in done.stdout and "job stderr line" in done.stderr
    monkeypatch.delenv(warm_jobs.SWITCH)
    failed = run(project, "fails.txt")
    assert failed.returncode == 1 and "ValueError: boom from the script" in failed.stderr
    assert not (project / "fails.txt").exists()


@pytest.mark.slow
def test_a_killed_client_takes_its_warm_job_with_it(project):
    """SIGKILL to the client Snakemake started for a script (it cannot pass that on): the
    job's monitor sees the client's socket close and kills the job; Snakemake sees the job
    fail, and nothing is left working in the folder."""
    killed = []

    def kill_the_client():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for process in psutil.process_iter():
                with contextlib.suppress(psutil.Error):
                    if any(part.endswith("warm_jobs.py") for part in process.cmdline()):
                        if process.cwd() == str(project):
                            time.sleep(1.0)  # the job has started
                            process.kill()
                            killed.append(process.pid)
            time.sleep(0.1)

    killer = threading.Thread(target=kill_the_client)
    killer.start()
    start = time.monotonic()
    done = run(project, "script_slow.txt", timeout=120)
    killer.join()
    assert killed and done.returncode == 1, done.stderr[-3000:]
    assert time.monotonic() - start < 40
    assert left_in(project) == []
