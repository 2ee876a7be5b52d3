"""A figure is three files (docs/architecture.md, "Adding a figure"): its drawing declared in
a drawing module (userfair.workflow.figure_registry), its rule (``**figure_outputs(...)``,
scripts/figure.py) and its caption. Everything else follows from them: the script and step
(steps.figures.draw), the files (layout.figure_file), the log, the targets
(rules/targets.smk, stage_figures) and, for a new drawing module, its place among the
drawing modules (figure_registry.drawing_modules: the figures' step imports it, the figure
rules' ``code=`` inputs, DRAWING_CODE, list it)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.image import imread

from userfair.workflow import figure_registry, layout
from userfair.workflow.figure_registry import Figure, csv, figure
from userfair.workflow.figure_style import Style
from userfair.workflow.steps import figures as figure_steps

from conftest import REPO, make_workdir, snakemake

RULES = REPO / "workflow" / "rules"
REPORT = REPO / "workflow" / "report"
HEAD = re.compile(r"^(?:rule|checkpoint) (\w+):")


def rule_sections() -> dict[str, dict[str, str]]:
    """rule -> section (input, output, params, script, ...) -> its text, for every rule of
    workflow/rules/*.smk."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted(RULES.glob("*.smk")):
        rule = section = None
        for line in path.read_text().splitlines():
            if head := HEAD.match(line):
                rule, section = head.group(1), None
                found[rule] = {}
            elif line and not line[0].isspace():
                rule = section = None
            elif rule and re.match(r"    \w+:", line):
                section = line.strip().rstrip(":")
                found[rule][section] = ""
            elif rule and section:
                found[rule][section] += line + "\n"
    return found


SECTIONS = rule_sections()
#: The rules that run the one figure script.
FIGURE_RULES = {r for r, s in SECTIONS.items() if '"../scripts/figure.py"' in s.get("script", "")}


def names(section: str) -> set[str]:
    """The ``NAME=`` of a rule section (its named inputs, params)."""
    return set(re.findall(r"^ {8}(\w+)=", section, re.M))


def figure_outputs_call(section: str) -> ast.Call:
    """The ``figure_outputs(RULE, LABELS[, reading=...])`` call of an output section."""
    (keyword,) = ast.parse(f"f(\n{section})").body[0].value.keywords
    assert keyword.arg is None and keyword.value.func.id == "figure_outputs"
    return keyword.value


def test_the_figure_rules_are_the_declared_figures():
    assert FIGURE_RULES == set(figure_registry.FIGURES)
    assert {
        "fig_agreement",
        "fig_relevance",
        "fig_gamma",
        "fig_who",
        "fig_variants",
        "fig_groups",
    } <= FIGURE_RULES
    # every fig_ rule: no figure with a script of its own
    assert FIGURE_RULES == {rule for rule in SECTIONS if rule.startswith("fig_")}


@pytest.mark.parametrize("rule", sorted(FIGURE_RULES))
def test_a_figure_rule_is_its_declaration(rule):
    """Each figure rule states its inputs, params and label; its outputs, their parts, its
    reading and its captions match what its drawing module declares for it."""
    declared = figure_registry.of(rule)
    parts = SECTIONS[rule]
    call = figure_outputs_call(parts["output"])
    assert ast.literal_eval(call.args[0]) == rule
    labels = ast.literal_eval(call.args[1])
    assert sorted(labels if isinstance(labels, dict) else [""]) == sorted(f.part for f in declared)
    reading = any(k.arg == "reading" and ast.literal_eval(k.value) for k in call.keywords)
    assert reading == any(f.reading is not None for f in declared), "reading= and the declaration"
    for one in declared:
        assert set(one.reads) <= names(parts["input"]), f"{rule} reads {sorted(one.reads)}"
        assert {"style", *one.params} <= names(parts["params"])
        caption = f"{rule}_{one.part}.rst" if one.part else f"{rule}.rst"
        assert (REPORT / caption).is_file(), caption
        for kind in layout.FIGURE_KINDS:  # by the convention, or the rule's entry of OUTPUTS
            path = layout.output(rule, one.output(kind))
            if layout.is_conventional_figure(rule):
                assert path.startswith(f"{layout.FIGURES}/{rule.removeprefix('fig_')}"), path
            else:
                assert path in layout.files(rule), path
            # a figure per value of the wildcards it takes (fig_groups: per dataset)
            assert set(re.findall(r"\{(\w+)\}", path)) == set(one.wildcards), path
    assert f'layout.log("{rule}")' in parts["log"]
    assert "DRAWING_CODE" in parts["input"]  # an edit of the drawing redraws it


def test_no_figure_rule_is_a_target_by_hand():
    """targets.smk asks for a figure rule through its stage's stage_figures(), never by
    name: a new figure is a target by itself."""
    targets = (RULES / "targets.smk").read_text()
    named = {rule for rule in FIGURE_RULES if f"rules.{rule}." in targets}
    assert named == set()


def test_the_figure_registry_refuses_what_draw_could_not_run():
    with pytest.raises(ValueError, match="starts with fig_"):
        figure("table_x", reads={})
    with pytest.raises(ValueError, match="part 'models' declared twice"):
        figure("fig_gamma", part="models", reads={})(lambda *a: None)
    with pytest.raises(KeyError, match="no drawing module declares a figure of it"):
        figure_registry.of("fig_nothing")


@pytest.fixture
def example_figure(monkeypatch):
    """A throwaway figure, fig_example, declared as a drawing module would declare it."""
    monkeypatch.setattr(figure_registry, "FIGURES", dict(figure_registry.FIGURES))

    @figure("fig_example", reads={"table": csv}, params=("models",),
            reading=lambda table, *, models: f"{len(table)} rows, {len(models)} models.\n",
            )  # fmt: skip
    def example_axes(table: pd.DataFrame, style: Style, *, models: list[str]) -> plt.Figure:
        style.apply()
        fig, ax = plt.subplots(figsize=(3.0, 2.0), layout="constrained")
        ax.plot(table["x"], table["y"], label=", ".join(models))
        return fig

    return figure_registry.FIGURES["fig_example"]


def test_draw_draws_a_new_figure_from_its_declaration_alone(example_figure, tmp_path):
    """With the declaration alone, the one step draws the new figure into the files the
    layout gives its rule (results/figures/example.{pdf,png,rst}) and writes its reading."""
    assert example_figure == [example_figure[0]] and isinstance(example_figure[0], Figure)
    table = tmp_path / "table.csv"
    pd.DataFrame({"x": [0, 1, 2], "y": [1.0, 0.5, 0.2]}).to_csv(table, index=False)
    outputs = {
        kind: tmp_path / layout.output("fig_example", kind) for kind in ("pdf", "png", "reading")
    }
    assert outputs["png"] == tmp_path / "results/figures/example.png"
    for path in outputs.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    params = {"style": {"dpi": 50}, "models": ["BPR", "UserKNN"], "other": 1}
    figure_steps.draw("fig_example", {"table": str(table), "code": ["x.py"]}, outputs, params)
    assert outputs["pdf"].read_bytes().startswith(b"%PDF")
    height, width = imread(outputs["png"]).shape[:2]
    assert 140 < width < 170 and 90 < height < 120  # 3 x 2 inches at 50 dpi, the style's pad
    assert outputs["reading"].read_text() == "3 rows, 2 models.\n"  # the params it takes too


def test_the_drawing_modules_are_the_modules_that_declare_figures(tmp_path):
    """figure_registry.drawing_modules reads the package's sources: the modules whose
    drawings are declared, each once, and a new module that declares a figure, by itself."""
    declaring = {f.draw.__module__ for figures in figure_registry.FIGURES.values() for f in figures}
    found = figure_registry.drawing_modules()
    assert set(found) == declaring and len(found) == len(declaring)
    assert {m.__name__ for m in figure_steps.DRAWING_MODULES} == declaring
    package = tmp_path / "workflow"
    shutil.copytree(
        REPO / "workflow" / "userfair" / "workflow",
        package,
        ignore=shutil.ignore_patterns("__pycache__", "steps", "data", "paper_numbers"),
    )
    (package / "example_figures.py").write_text(EXAMPLE_MODULE)
    assert figure_registry.drawing_modules(package) == sorted(
        [*found, "userfair.workflow.example_figures"]
    )


#: A new drawing module that declares fig_example (as the fixture example_figure does).
EXAMPLE_MODULE = '''"""An example drawing module."""

import matplotlib.pyplot as plt

from userfair.workflow.figure_registry import csv, figure


@figure("fig_example", reads={"table": csv}, params=("models",))
def example_axes(table, style, *, models):
    style.apply()
    fig, ax = plt.subplots(figsize=(3.0, 2.0), layout="constrained")
    ax.plot(table["x"], table["y"], label=", ".join(models))
    return fig
'''


@pytest.mark.slow
def test_a_new_figure_rule_needs_no_other_workflow_file(tmp_path):
    """A copy of the workflow with one rule added to figures.smk, its caption and its
    drawing in a new drawing module, nothing else: the dry run of .test/ (the copy's library
    imported) plans the new figure's job with its files by the convention and the new
    module among its code inputs, and `all` asks for them (the drawing's declaration alone
    draws it: the test above)."""
    repo = tmp_path / "repo"
    shutil.copytree(
        REPO / "workflow", repo / "workflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    make_workdir(repo)
    shutil.copytree(REPO / ".test" / "config", repo / ".test" / "config")
    subprocess.run(
        [sys.executable, "-m", "userfair.workflow.testdata", ".test/resources/tiny-ml-100k"],
        cwd=repo,
        check=True,
    )
    rule = """

rule fig_example:
    input:
        table=rules.agreement.output[0],
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_example", "An example", reading=True),
    log:
        layout.log("fig_example"),
    conda:
        "../../envs/plots.yaml"
    params:
        style=config["plots"],
        models=MODELS,
    message:
        "An example figure"
    script:
        "../scripts/figure.py"
"""
    with open(repo / "workflow" / "rules" / "figures.smk", "a") as smk:
        smk.write(rule)
    (repo / "workflow" / "report" / "fig_example.rst").write_text("An example.\n")
    module = repo / "workflow" / "userfair" / "workflow" / "example_figures.py"
    module.write_text(EXAMPLE_MODULE)
    copy = {"PYTHONPATH": str(repo / "workflow")}  # the copy's userfair, not the repository's
    out = snakemake(repo, "--directory", ".test", "-n", env=copy).stdout
    job = out[out.index("An example figure") :].split("\n\n")[0]
    files = [f"results/figures/example.{suffix}" for suffix in ("pdf", "png", "rst")]
    assert all(path in job for path in files), job
    (asked,) = re.findall(r"^rule all:\n    input: (.*)$", out, re.M)
    assert set(files) <= set(asked.split(", "))
    graph = snakemake(repo, "--directory", ".test", "--filegraph", env=copy).stdout
    node = graph[graph.index(">fig_example<") :].split("</table>")[0]  # its inputs, outputs
    assert "/workflow/userfair/workflow/example_figures.py<" in node  # DRAWING_CODE lists it
