"""The report says what the run did (issue 33): its front page is rendered from the config
(protocol, epochs with their plural, bootstrap, models, datasets), and every table the
README lists is a report() output of some rule."""

import json
import re
from pathlib import Path

import jinja2
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from userfair.workflow import layout, models, tables

REPO = Path(__file__).resolve().parents[2]
FRONT = REPO / "workflow" / "report" / "workflow.rst"


def front_page(**changes) -> str:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for key, value in changes.items():
        node = config
        *parents, last = key.split("__")
        for name in parents:
            node = node.setdefault(name, {})
        node[last] = value
    validate(config, str(REPO / "config" / "config.schema.yaml"))  # fills the defaults

    class Snakemake:  # what snakemake --report passes to the front page
        pass

    Snakemake.config = config
    # the environment of snakemake --report (snakemake/report/__init__.py)
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(FRONT.read_text()).render(snakemake=Snakemake)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_front_page_follows_the_config():
    default = flat(front_page())
    assert "split globally" in default and "split per user" not in default
    assert "at most 30 epochs per grid point" in default
    assert "the dataset ml-100k with the recommenders UserKNN, ItemKNN, BPR" in default
    assert "With 1000 bootstrap resamples" in default and "level 0.95" in default
    assert "fewer than 5 train interactions" in default

    changed = flat(front_page(
        preprocessing__protocol="per-user", training__epochs=1, uncertainty__resamples=0,
        models=["BPR"], datasets=["ml-100k", "lastfm"], experiments__model="BPR", k=20,
    ))  # fmt: skip
    assert "split per user" in changed and "split globally" not in changed
    assert "no user is dropped" in changed and "train interactions" not in changed
    assert "at most 1 epoch per grid point" in changed and "1 epochs" not in changed
    assert "the bootstrap is off" in changed.lower() and "resamples of" not in changed
    assert "the datasets ml-100k, lastfm with the recommender BPR" in changed
    assert "``NDCG@20``" in changed and "top-20" in changed and "NDCG@10" not in changed


@pytest.mark.parametrize("protocol", ["global", "per-user"])
@pytest.mark.parametrize("resamples", [0, 30])
def test_the_front_page_reads_as_sentences(protocol, resamples):
    """Valid reStructuredText, and no words glued together where a block ended (the issue's
    report read 'andsplit', 'Fig. 1.30 bootstrap')."""
    from docutils.core import publish_parts

    text = front_page(preprocessing__protocol=protocol, uncertainty__resamples=resamples)
    parts = publish_parts(text, writer="html", settings_overrides={"report_level": 2})
    assert "System Message" not in parts["html_body"]
    text = re.sub(r"\.\. raw:: html\n\n(?:   .*\n|\n)*", "", text)  # the page's style: not prose
    assert "<style>" not in text
    words = set(flat(text).split())
    assert not {"andsplit", "1;every", "1.30", "1.The", "tau).The"} & words
    prose = re.sub(r"``[^`]*``", "", flat(text))  # file names keep their dots
    assert not re.search(r"[a-z0-9][;.)][A-Za-z]", prose), prose
    assert "mailto:" not in parts["html_body"]  # NDCG@10 is no e-mail address


def readme_tables() -> list[str]:
    """The table files of README's "What you get" block, braces expanded."""
    text = (REPO / "README.md").read_text()
    block = text.split("## What you get", 1)[1].split("```", 2)[1]
    files = []
    for line in block.splitlines():
        path = line.split()[0] if line.strip() else ""
        if not path.startswith("results/tables/"):
            continue
        stem, _, tail = path.partition("{")
        if not tail:
            files.append(path)
            continue
        inside, _, rest = tail.partition("}")  # name.{csv,tex} or {a,b}.csv
        files += [stem + choice + rest for choice in inside.split(",")]
    return files


def report_outputs() -> set[str]:
    """Every path wrapped in report(...) in a rule file (the first argument), and those of
    report_when(shown, ...) (rules/common/paths.smk), in the report when ``shown`` (the
    paper-gap tables: when a dataset has published numbers; without one they are
    header-only and the report says why)."""
    found = set()
    for path in (REPO / "workflow" / "rules").glob("*.smk"):
        # the path is read from the file layout: layout.output("RULE"[, "NAME"])
        found |= {
            layout.output(rule, name or None)
            for rule, name in re.findall(
                r'(?:report|report_when)\(\s*(?:\w+,\s*)?layout\.output\("(\w+)"(?:, "(\w+)")?\)',
                path.read_text(),
            )
        }
    return found


def test_every_table_the_readme_lists_is_in_the_report():
    tables = readme_tables()
    assert len(tables) >= 10 and "results/tables/intervals.csv" in tables
    shown = report_outputs()
    missing = [t for t in tables if t not in shown]
    assert not missing, f"README lists tables the report leaves out: {missing}"


def test_one_model_label_in_every_table():
    """The tables name models as Table 2 does (models.label: U-KNN), once or twice applied."""
    frame = pd.DataFrame(
        {"model": ["UserKNN", "BPR"], "model_a": ["ItemKNN", "NeuMF"], "model_b": ["NCL", "x"]}
    )
    labelled = tables.label_models(frame)
    assert labelled["model"].tolist() == ["U-KNN", "BPR"]
    assert labelled["model_a"].tolist() == ["I-KNN", "NMF"]
    pd.testing.assert_frame_equal(tables.label_models(labelled), labelled)
    assert frame["model"].tolist() == ["UserKNN", "BPR"]  # not modified in place
    # no label is another model's registry name, so a label never reads as a name
    assert all(
        models.label(m) == m or models.label(m) not in models.names() for m in models.names()
    )


def test_the_front_page_names_the_opt_in_variants_only_when_on():
    assert "PUF variants" not in front_page()
    on = flat(front_page(measures__similarities=["cos", "jacc", "genre"]))
    assert "opt-in PUF variants are on (relevance binary; similarities cos, jacc, genre)" in on
    graded = flat(front_page(measures__relevance=["binary", "graded"]))
    assert "relevance binary, graded; similarities cos, jacc)" in graded


def rule_graph(report: Path) -> list[str]:
    """The rules the report's rule graph draws (its Vega spec's nodes), in order."""
    html = report.read_text()
    start = html.index("rulegraph_spec = ") + len("rulegraph_spec = ")
    spec, _ = json.JSONDecoder().raw_decode(html[start:])
    return [n["rule"] for d in spec["data"] if d["name"] == "node-data" for n in d["values"]]


@pytest.mark.slow
def test_the_reports_rule_graph_draws_each_rule_once(tiny_run, tmp_path):
    """Snakemake's report draws a rule once per step of the job graph it has jobs in; the
    genre similarity waits one step more (for the item genres), so it is its own rule
    (genre_similarity): `similarity` was drawn twice."""
    report = tmp_path / "report.html"
    tiny_run.snakemake("--report", str(report))
    drawn = rule_graph(report)
    assert {"similarity", "genre_similarity", "run_config"} <= set(drawn), drawn
    assert len(drawn) == len(set(drawn)), sorted(r for r in drawn if drawn.count(r) > 1)
