"""The log of one workflow job (userfair.workflow.joblog)."""

import logging
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


def test_a_failure_is_logged_with_rule_and_wildcards_then_raised(tmp_path):
    with pytest.raises(KeyError):
        with job_log(job(tmp_path)):
            raise KeyError("user_id")
    text = (tmp_path / "job.log").read_text()
    assert "rule split {'dataset': 'ml-100k'} failed" in text
    assert "Traceback" in text and "KeyError: 'user_id'" in text
