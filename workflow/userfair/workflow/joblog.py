"""Logging of one workflow job: every message of the process (RecBole's included) goes to
the rule's log file, and a failure is logged with its traceback before it propagates."""

from __future__ import annotations

import contextlib
import logging
import re
from typing import Iterator

ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class PlainFormatter(logging.Formatter):
    """Log lines without the terminal colour codes RecBole puts into its messages."""

    def format(self, record: logging.LogRecord) -> str:
        return ANSI_COLOUR.sub("", super().format(record))


@contextlib.contextmanager
def job_log(job) -> Iterator[None]:
    """Inside the block, log to the job's log file, ``job.log[0]``; an exception is logged
    with the rule and wildcards and re-raised. ``job`` is the ``snakemake`` object of a
    rule's script (duck-typed: ``log``, ``rule``, ``wildcards``)."""
    handler = logging.FileHandler(job.log[0])
    handler.setFormatter(PlainFormatter(FORMAT))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    try:
        yield
    except Exception:
        logging.exception("rule %s %s failed", job.rule, dict(job.wildcards))
        raise
