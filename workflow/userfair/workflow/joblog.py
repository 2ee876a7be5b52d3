"""Logging of one workflow job: every message of the process (RecBole's included) goes to
the rule's log file, and a failure is logged before it propagates: an expected failure (an
:class:`~userfair.io.InputError` or ValueError, bad input that the message names) as one
line, any other with its traceback. A bad file of a rule is named with that rule and the
command that rebuilds it (:func:`userfair.workflow.layout.explain`). ``USERFAIR_DEBUG=1`` in
the environment logs the traceback of every failure."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from typing import Iterator

from userfair.io import InputError
from userfair.workflow import layout

ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Failures that are bad input named by their message: one log line, no traceback.
EXPECTED = (InputError, ValueError)
#: The environment variable that brings the traceback back for every failure.
DEBUG = "USERFAIR_DEBUG"


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
    traceback; always with it under ``USERFAIR_DEBUG=1``) and re-raised. ``job`` is the
    ``snakemake`` object of a rule's script (duck-typed: ``log``, ``rule``, ``wildcards``)."""
    handler = logging.FileHandler(job.log[0])
    handler.setFormatter(PlainFormatter(FORMAT))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    try:
        yield
    except EXPECTED as error:
        if layout.explain(error) != str(error):  # what Snakemake prints says it too
            error.args = (layout.explain(error),)
        if debugging():
            logging.exception("rule %s %s failed", job.rule, dict(job.wildcards))
        else:
            text = " ".join(layout.explain(error).split("\n"))
            logging.error(
                "rule %s %s failed: %s (%s=1 shows the traceback)",
                job.rule, dict(job.wildcards), text, DEBUG,
            )  # fmt: skip
        raise
    except Exception:
        logging.exception("rule %s %s failed", job.rule, dict(job.wildcards))
        raise
