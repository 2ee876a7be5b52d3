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

from userfair.workflow import figure_reading
from userfair.workflow.figure_reading import relevance_reading
from userfair.workflow.steps import figures as steps

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


# --- Figs. 3, 4 and the gamma figures: each sentence true on one frame, false on another ---


def similarity_frame(curves, observed=1.2):
    """Fig. 3's frame: each measure's value is ``curves[measure](skewness)``."""
    rows = [("d", f"w{i}", s, m, f(s)) for i, s in enumerate(np.linspace(-1, 3, 7))
            for m, f in curves.items()]  # fmt: skip
    rows += [("d", "observed", observed, m, 0.3) for m in curves]
    return pd.DataFrame(rows, columns=["dataset", "distribution", "skewness", "measure", "value"])


PAPER_FIG3 = {"SD-P": lambda s: 0.2, "SD-NDCG": lambda s: 0.25, "UF": lambda s: 0.5 - 0.05 * s,
              "PUF-P": lambda s: 0.1 - 0.02 * s, "PUF-NDCG": lambda s: 0.12 - 0.02 * s}  # fmt: skip


def test_fig3_reading_says_the_papers_shape_only_when_the_data_have_it():
    text = flat(figure_reading.similarity_reading(similarity_frame(PAPER_FIG3)))
    assert "skewness runs from -1.00 to 3.00; the dataset's own Jaccard similarity has 1.20" in text
    assert "SD-P flat (0); " in text and "UF falls (-0.2);" in text
    assert "SD is flat while UF and PUF fall, as in the paper." in text
    rising_sd = {**PAPER_FIG3, "SD-P": lambda s: 0.2 + 0.05 * s, "UF": lambda s: 0.5}
    text = flat(figure_reading.similarity_reading(similarity_frame(rising_sd)))
    assert "SD-P rises (+0.2)" in text and "UF flat (0)" in text
    assert "does not hold here for SD-P and UF." in text and "as in the paper" not in text


def extreme_frame(puf_gap, uf_gap):
    rows = [("d", share, a, score, m, (gap if a == "MostUnfair" else 0.0) + base)
            for share in np.linspace(0, 1, 6) for score in ("P", "NDCG")
            for m, gap, base in (("PUF", puf_gap, 0.0), ("UF", uf_gap, 0.45))
            for a in ("MostFair", "MostUnfair")]  # fmt: skip
    return pd.DataFrame(
        rows, columns=["dataset", "share", "assignment", "score", "measure", "value"]
    )


def test_fig4_reading_says_puf_separates_the_cases_only_when_it_does():
    text = flat(figure_reading.extreme_reading(extreme_frame(0.1, 0.003)))
    assert "PUF: MostUnfair - MostFair is on average +0.1 (P; MostFair from 0 to 0)" in text
    assert "PUF separates the two cases by more than UF (beyond 0.02), as in the paper." in text
    text = flat(figure_reading.extreme_reading(extreme_frame(0.1, 0.1)))
    assert "PUF does not separate the two cases by more than UF" in text
    assert "for P and NDCG, unlike the paper." in text and "as in the paper" not in text


def gamma_models_frame(uf):
    """UF of each model at each gamma: ``uf[model](gamma)``; PUF-P the same."""
    rows = [("d", m, g, measure, f(g)) for m, f in uf.items() for g in (0.0, 0.5, 1.0)
            for measure in ("UF", "PUF-P")]  # fmt: skip
    return pd.DataFrame(rows, columns=["dataset", "model", "gamma", "measure", "value"])


def test_gamma_reading_names_the_fairest_model_per_gamma_only_when_it_changes():
    steady = {"BPR": lambda g: 0.2 + g, "UserKNN": lambda g: 0.3 + g}
    text = flat(figure_reading.gamma_models_reading(gamma_models_frame(steady)))
    assert "UF runs from 0.2 to 1.3; the fairest model is BPR at every γ." in text
    crossing = {"BPR": lambda g: 0.2 + g, "UserKNN": lambda g: 0.9}
    text = flat(figure_reading.gamma_models_reading(gamma_models_frame(crossing)))
    assert "the fairest model changes with γ: BPR at γ = 0, BPR at γ = 0.5, U-KNN at γ = 1" in text
    assert "at every γ" not in text


def test_gamma_relevance_reading_groups_the_gammas_by_shape():
    rows = [("d", s, g, "UF", (0.5 if g == 1 else s * (1 - s))) for s in SHARES
            for g in (0.0, 1.0)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["dataset", "share", "gamma", "measure", "value"])
    text = flat(figure_reading.gamma_relevance_reading(frame))
    assert "UF's curve is an inverted U at γ = 0; flat at γ = 1" in text
    assert "the gammas differ by at most 0.5 at one share" in text
    same = frame.assign(value=0.5)
    text = flat(figure_reading.gamma_relevance_reading(same))
    assert "UF's curve is flat at γ = 0, 1, and the gammas differ by at most 0 at one share" in text


@pytest.mark.parametrize(
    "reading, frame",
    [
        (figure_reading.similarity_reading, similarity_frame(PAPER_FIG3)),
        (figure_reading.extreme_reading, extreme_frame(0.1, 0.0)),
        (figure_reading.gamma_models_reading, gamma_models_frame({"BPR": lambda g: g})),
    ],
)
def test_the_readings_are_valid_rst(reading, frame):
    body = publish_parts(reading(frame), writer="html", settings_overrides={"report_level": 2})
    assert "System Message" not in body["html_body"]


def test_the_figure_steps_write_their_readings(tmp_path):
    """Rules fig_similarity, fig_extreme and fig_gamma write the caption's reading beside the
    figure (the report includes it): steps.figures.draw writes each declared figure's."""
    style = {"style": {"dpi": 50}}
    similarity = tmp_path / "similarity.parquet"
    similarity_frame(PAPER_FIG3).to_parquet(similarity)
    outs = {kind: tmp_path / f"s.{kind}" for kind in ("pdf", "png", "reading")}
    steps.draw("fig_similarity", {"data": [similarity]}, outs, style)
    assert (tmp_path / "s.reading").read_text() == figure_reading.similarity_reading(
        similarity_frame(PAPER_FIG3)
    )
    extreme = tmp_path / "extreme.parquet"
    extreme_frame(0.1, 0.0).to_parquet(extreme)
    outs = {kind: tmp_path / f"e.{kind}" for kind in ("pdf", "png", "reading")}
    steps.draw("fig_extreme", {"data": [extreme]}, outs, style)
    assert "PUF separates the two cases" in (tmp_path / "e.reading").read_text()
    models = tmp_path / "gamma_models.parquet"
    gamma_models_frame({"BPR": lambda g: g, "UserKNN": lambda g: 1 - g}).to_parquet(models)
    lists = tmp_path / "gamma_relevance.parquet"
    pd.DataFrame(
        [("d", s, g, "UF", 0.5) for s in SHARES for g in (0.0, 1.0)],
        columns=["dataset", "share", "gamma", "measure", "value"],
    ).to_parquet(lists)
    outs = {
        f"{part}_{kind}": tmp_path / f"g_{part}.{kind}"
        for part in ("models", "relevance")
        for kind in ("pdf", "png", "reading")
    }
    steps.draw("fig_gamma", {"models": [models], "relevance": [lists]}, outs, style)
    assert "the fairest model changes with γ" in outs["models_reading"].read_text()
    assert "UF's curve is flat at γ = 0, 1" in outs["relevance_reading"].read_text()
    assert all(path.stat().st_size > 0 for path in outs.values())
