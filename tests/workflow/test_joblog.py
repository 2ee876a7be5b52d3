"""The log of one workflow job (userfair.workflow.joblog)."""

import logging
import os
import re
import time
from types import SimpleNamespace

import pytest

from userfair.workflow.joblog import job_log


def job(tmp_path):
    return SimpleNamespace(
        log=[str(tmp_path / "job.log")], rule="split", wildcards={"dataset": "ml-100k"}
    )


def test_messages_go_to_the_log_without_colour_codes(tmp_path):
    with job_log(job(tmp_path)):
        logging.getLogger("recbole").info("\x1b[1;36mepoch 1\x1b[0m done")
    text = (tmp_path / "job.log").read_text()
    assert "epoch 1 done" in text and "\x1b" not in text


def test_a_finished_job_ends_its_log_with_its_cost(tmp_path):
    from userfair.workflow.meter import cpu_seconds

    before = cpu_seconds()
    with job_log(job(tmp_path)):
        spin = time.process_time()  # 0.3 CPU seconds inside the step, whatever the machine
        while time.process_time() - spin < 0.3:
            pass
    last = (tmp_path / "job.log").read_text().splitlines()[-1]
    match = re.search(
        r"rule split \{'dataset': 'ml-100k'\} done in ([0-9.]+) s wall, ([0-9.]+) CPU s "
        r"\(([0-9.]+) before the step: interpreter and imports\)$",
        last,
    )
    assert match, last
    wall, cpu, start = map(float, match.groups())
    # the line rounds to 0.1 s: the step's 0.3 CPU seconds show as at least 0.2
    assert start == pytest.approx(before, abs=0.15) and cpu >= start + 0.2 and wall > 0


def test_a_failure_is_logged_with_rule_and_wildcards_then_raised(tmp_path):
    with pytest.raises(KeyError):
        with job_log(job(tmp_path)):
            raise KeyError("user_id")
    text = (tmp_path / "job.log").read_text()
    assert "rule split {'dataset': 'ml-100k'} failed" in text
    assert "Traceback" in text and "KeyError: 'user_id'" in text


def test_an_expected_failure_is_one_line_without_traceback(tmp_path, monkeypatch, capsys):
    """In the log and on the terminal (stderr, which Snakemake shows): one line, and the
    process ends with status 1 instead of printing Python's traceback."""
    from userfair.files.io import InputError

    monkeypatch.delenv("USERFAIR_DEBUG", raising=False)
    with pytest.raises(SystemExit) as stop:
        with job_log(job(tmp_path)):
            raise InputError("results/D/data/x.inter: line 3 has 2 fields, the header 3")
    assert stop.value.code == 1
    text = (tmp_path / "job.log").read_text()
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if "failed" in line]
    assert len(lines) == 1 and "line 3 has 2 fields" in lines[0], text
    assert "USERFAIR_DEBUG=1 shows the traceback" in lines[0]
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [lines[0].split(": ", 1)[1]], err


@pytest.mark.slow
def test_a_failing_job_script_prints_one_line_and_no_traceback(tmp_path, monkeypatch):
    """The job as Snakemake starts it, a fresh Python process running a rule script: its
    stderr (what the terminal shows) holds the one line, no traceback; with
    USERFAIR_DEBUG=1 the traceback is back."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "rule.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from types import SimpleNamespace
            from userfair.files.io import InputError
            from userfair.workflow.joblog import job_log
            job = SimpleNamespace(
                log=[{str(tmp_path / "job.log")!r}], rule="split", wildcards={{"dataset": "d"}}
            )
            with job_log(job):
                raise InputError("d.csv: column 'rating' must hold finite numbers")
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "USERFAIR_DEBUG"}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "rule split {'dataset': 'd'} failed: d.csv: column 'rating' must hold finite numbers "
        "(USERFAIR_DEBUG=1 shows the traceback)"
    ], proc.stderr
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True,
        env={**env, "USERFAIR_DEBUG": "1"},
    )  # fmt: skip
    assert proc.returncode == 1 and "Traceback" in proc.stderr, proc.stderr


def test_the_debug_switch_brings_the_traceback_back(tmp_path, monkeypatch):
    monkeypatch.setenv("USERFAIR_DEBUG", "1")
    with pytest.raises(ValueError):
        with job_log(job(tmp_path)):
            raise ValueError("config key k: 1000 is more than the 610 items")
    text = (tmp_path / "job.log").read_text()
    assert "Traceback" in text and "ValueError: config key k" in text


RULE_SCRIPT = """
import atexit, logging, sys
from pathlib import Path
from types import SimpleNamespace
from snakemake.iocontainers import (
    InputFiles, Log, Namedlist, OutputFiles, Params, Snakemake, Wildcards
)
from userfair.workflow.joblog import job_log

here = Path(sys.argv[1])
atexit.register(lambda: (here / "teardown").write_text("ran"))
log = str(here / "job.log")
if sys.argv[2] == "snakemake":  # what Snakemake's preamble unpickles in a rule's script
    job = Snakemake(InputFiles(), OutputFiles(), Params(), Wildcards(fromdict={"d": "x"}), 1,
                    Namedlist(), Log([log]), {}, "split", None)
else:
    job = SimpleNamespace(log=[log], rule="split", wildcards={"d": "x"})
with job_log(job):
    (here / "out.txt").write_text("written")
    print("printed by the step")  # buffered: stdout is a pipe
    logging.getLogger("recbole").info("epoch 1 done")
print("after the block")
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["snakemake", "duck"])
def test_a_rule_scripts_process_ends_at_once_with_its_log_and_output_flushed(tmp_path, kind):
    """A rule's own script process (the ``snakemake`` object of Snakemake's preamble) ends
    when its step returns, status 0, its stdout and log flushed, Python's teardown skipped
    (the atexit handler never runs, nor the line after the block); a job that is not a
    rule's script (a duck-typed one, as in-process here) goes on as before."""
    import subprocess
    import sys

    script = tmp_path / "rule.py"
    script.write_text(RULE_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path), kind], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.txt").read_text() == "written"
    log = (tmp_path / "job.log").read_text()
    assert "epoch 1 done" in log and "rule split {'d': 'x'} done in" in log.splitlines()[-1]
    if kind == "snakemake":
        assert proc.stdout.splitlines() == ["printed by the step"], proc.stdout
        assert not (tmp_path / "teardown").exists()
    else:
        assert proc.stdout.splitlines() == ["printed by the step", "after the block"]
        assert (tmp_path / "teardown").read_text() == "ran"
