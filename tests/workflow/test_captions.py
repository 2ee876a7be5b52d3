"""Captions say what the data show: Fig. 2's reading (userfair.workflow.figure_reading) on
data made to make each sentence true and made to make it false, and every caption template
of workflow/report rendered as snakemake --report renders it (jinja2 with trim_blocks, then
docutils), in every branch, without sentences glued together or a directive swallowed
into a paragraph."""

from __future__ import annotations

import math
import re

import jinja2
import numpy as np
import pandas as pd
import pytest
from docutils.core import publish_parts

from userfair.workflow.figure_reading import relevance_reading

from conftest import REPO

SHARES = np.round(np.linspace(0, 1, 11), 2)


def relevance(shape, dataset="d", gini_last=math.nan):
    """A relevance frame whose four disparity measures follow ``shape(share)``; Gini is
    ``gini_last`` at 100 %, 0.5 elsewhere."""
    rows = []
    for share in SHARES:
        for measure in ("SD-P", "SD-NDCG", "PUF-P-Jacc", "PUF-NDCG-Jacc"):
            rows.append((dataset, share, measure, shape(share)))
        for measure in ("Gini-P", "Gini-NDCG"):
            rows.append((dataset, share, measure, gini_last if share == 1 else 0.5))
    return pd.DataFrame(rows, columns=["dataset", "share", "measure", "value"])


def flat(text):
    return " ".join(text.split())


def test_zero_at_both_ends_and_peaking_at_half_is_said_only_when_true():
    text = flat(relevance_reading(relevance(lambda s: s * (1 - s))))
    assert "SD-P is 0 at 0 % and 0 at 100 %, highest (0.25) at 50 %." in text
    assert "All of them are 0 at both ends." in text
    assert "Gini-P and Gini-NDCG have no point at 100 %" in text


def test_the_default_runs_shape_is_read_as_it_is():
    """The shape of the default run (SD-P 0.348 at 0 %, peaking at 20-30 %): the reading
    gives the values at the ends and the peak, and does not say 0 at both ends."""
    values = {0.0: 0.348, 0.2: 0.46, 0.3: 0.47, 1.0: 0.103}
    text = flat(relevance_reading(relevance(lambda s: values.get(s, 0.4), gini_last=0.4)))
    assert "SD-P is 0.348 at 0 % and 0.103 at 100 %, highest (0.47) at 30 %." in text
    assert "They are not all 0 at both ends." in text and "All of them are 0" not in text
    assert "no point at 100 %" not in text  # Gini is defined there in this data


def test_a_sums_rounding_reads_as_zero():
    """The tiny run's SD-NDCG at 0 % is 1.25e-16: it reads as 0, and counts as 0."""
    text = flat(relevance_reading(relevance(lambda s: 1.25e-16 if s == 0 else s * (1 - s))))
    assert "SD-P is 0 at 0 % and 0 at 100 %" in text and "e-16" not in text
    assert "All of them are 0 at both ends." in text


def test_a_measure_highest_at_an_end_says_so():
    text = flat(relevance_reading(relevance(lambda s: s)))
    assert "SD-P is 0 at 0 % and 1 at 100 %; it is highest at 100 %." in text
    assert "They are not all 0 at both ends." in text


def test_one_line_per_dataset_and_valid_rst():
    frame = pd.concat([relevance(lambda s: s, "a"), relevance(lambda s: 0 * s, "b")])
    text = relevance_reading(frame)
    assert text.count("\n- ") == 1 and text.startswith("- **a**:")
    body = publish_parts(text, writer="html", settings_overrides={"report_level": 2})
    assert "System Message" not in body["html_body"]


class Anything:
    """Every attribute, item and call gives the same value: a stand-in for the job's
    ``snakemake`` object in a caption template (its params, wildcards, output, config)."""

    def __init__(self, value):
        self.value = value

    def __getattr__(self, name):
        if name == "items":
            return lambda: [("x", "why")]
        return self if name != "output" else Output()

    def __getitem__(self, key):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter(["x", "y"])

    def __len__(self):
        return 2

    def __str__(self):
        return str(self.value)

    def __gt__(self, other):
        return self.value > other

    def __lt__(self, other):
        return self.value < other

    def __eq__(self, other):
        return self.value == other

    __hash__ = None

    def __bool__(self):
        return bool(self.value)


class Output:
    def __getattr__(self, name):
        return f"{name}.rst"


TEMPLATES = sorted((REPO / "workflow" / "report").glob("*.rst"))
# a sentence's full stop directly followed by the next sentence's capital: "seed.With"
GLUED = re.compile(r"[a-z)`]\.[A-Z]")


@pytest.mark.parametrize("value", [0, 1, 3])
@pytest.mark.parametrize("template", TEMPLATES, ids=[t.name for t in TEMPLATES])
def test_no_caption_glues_sentences_or_swallows_a_directive(template, value):
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    text = env.from_string(template.read_text()).render(snakemake=Anything(value))
    assert not GLUED.search(text), (template.name, GLUED.search(text).group())
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(".. ") and index > 0:
            assert not lines[index - 1].strip(), (template.name, lines[index - 1], line)


def test_fig_agreement_caption_had_seed_with_glued():
    """The case that was wrong: with intervals over the users only, 'seed.' ended its
    sentence and the next began on the same word."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    template = (REPO / "workflow" / "report" / "fig_agreement.rst").read_text()
    params = type("P", (), {"replicates": 1, "resamples": 100})
    text = env.from_string(template).render(snakemake=type("S", (), {"params": params}))
    assert "seed.With" not in text and "seed.\nWith" in text
