"""Logging of one workflow job: every message of the process (RecBole's included) goes to
the rule's log file, and a failure is logged before it propagates: an expected failure (an
:class:`~userfair.files.io.InputError` or ValueError, bad input that the message names) as one
line, which is also all the terminal shows of it (stderr, no traceback), any other with its
traceback. A bad file of a rule is named with that rule and the command that rebuilds it
(:func:`userfair.workflow.layout.explain`). ``USERFAIR_DEBUG=1`` in the environment logs
the traceback of every failure. A job that succeeds ends its log with one line of its cost:
wall and CPU seconds since its process started, and how many of the CPU seconds went before
the step (the interpreter and its imports). A rule's own script process then ends at once
(:func:`leave`), its log flushed: the interpreter's teardown, which frees every module it
imported, would cost each job 0.2 CPU s, a job that imported torch 0.6 s
(docs/performance.md#thirteenth-step-jobs-that-end-at-once-2026-11-29)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import time
from typing import Iterator

import psutil

from userfair.files.io import InputError
from userfair.workflow import layout
from userfair.workflow.meter import cpu_seconds
from userfair.workflow.steps import load_plugins

ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Failures that are bad input named by their message: one log line, no traceback.
EXPECTED = (InputError, ValueError)
#: The module of the ``snakemake`` object that Snakemake gives a rule's Python script, in the
#: script's own process (a test's duck-typed job is not one).
SCRIPT_JOB = "snakemake.iocontainers"
#: The environment variable that brings the traceback back for every failure.
DEBUG = "USERFAIR_DEBUG"


def cost_line(started: float, cpu_before: float) -> str:
    """The last line of a job's log: ``done in W s wall, C CPU s (B before the step)``;
    ``started`` is the process's start (epoch seconds), ``cpu_before`` its CPU seconds
    when the step began."""
    return (
        f"done in {time.time() - started:.1f} s wall, {cpu_seconds():.1f} CPU s "
        f"({cpu_before:.1f} before the step: interpreter and imports)"
    )


def debugging() -> bool:
    """Whether ``USERFAIR_DEBUG`` asks for tracebacks (set and not 0/empty)."""
    return os.environ.get(DEBUG, "") not in ("", "0")


class PlainFormatter(logging.Formatter):
    """Log lines without the terminal colour codes RecBole puts into its messages."""

    def format(self, record: logging.LogRecord) -> str:
        return ANSI_COLOUR.sub("", super().format(record))


@contextlib.contextmanager
def job_log(job) -> Iterator[None]:
    """Inside the block, log to the job's log file, ``job.log[0]``; an exception is logged
    with the rule and wildcards (one line for an :data:`EXPECTED` one, else with its
    traceback; always with it under ``USERFAIR_DEBUG=1``) and re-raised, except that an
    expected one without ``USERFAIR_DEBUG`` ends the process with status 1 after printing
    its line to stderr (which Snakemake shows), instead of Python's traceback. ``job`` is the
    ``snakemake`` object of a rule's script (duck-typed: ``log``, ``rule``, ``wildcards``)."""
    handler = logging.FileHandler(job.log[0])
    handler.setFormatter(PlainFormatter(FORMAT))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    cpu_before = cpu_seconds()
    try:
        config = getattr(job, "config", None)
        if config:  # the plugin measures of the run (docs/plugins.md), as at the parse
            load_plugins(config)
        yield
    except EXPECTED as error:
        if layout.explain(error) != str(error):  # what Snakemake prints says it too
            error.args = (layout.explain(error),)
        if debugging():
            logging.exception("rule %s %s failed", job.rule, dict(job.wildcards))
            raise
        text = " ".join(layout.explain(error).split("\n"))
        line = (
            f"rule {job.rule} {dict(job.wildcards)} failed: {text} ({DEBUG}=1 shows the traceback)"
        )
        logging.error(line)
        # the terminal gets the same line, not Python's traceback of an expected failure
        print(line, file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    except Exception:
        logging.exception("rule %s %s failed", job.rule, dict(job.wildcards))
        raise
    logging.getLogger("userfair.job").info(
        "rule %s %s %s",
        job.rule, dict(job.wildcards), cost_line(psutil.Process().create_time(), cpu_before),
    )  # fmt: skip
    if type(job).__module__ == SCRIPT_JOB:  # the process is the rule's script: nothing follows
        leave(0)


def leave(status: int) -> None:
    """End this process with ``status`` now: the logging handlers and the standard streams
    flushed, Python's teardown skipped (``os._exit``). Only for a job's own script process
    whose step has returned, its outputs written and closed (the steps write them
    atomically): atexit handlers and finalizers do not run."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(status)
