"""The file layout is stated once (userfair.workflow.layout): every rule's ``output:`` and
``log:`` are read from it, and no rule file holds a path of ``results/`` of its own."""

from __future__ import annotations

import ast
import re

import pytest

from userfair.workflow import catalogue, layout

from conftest import REPO

RULE_FILES = sorted((REPO / "workflow" / "rules").rglob("*.smk")) + [
    REPO / "workflow" / "Snakefile"
]
HEAD = re.compile(r"(?:rule|checkpoint|use rule \w+ as) (\w+)(?::| with:)")


def code(line: str) -> str:
    """``line`` without its comment (a ``#`` that starts the line or follows two spaces)."""
    return "" if line.lstrip().startswith("#") else line.split("  # ")[0]


def sections() -> dict[str, dict[str, list[str]]]:
    """rule -> section (output, log, ...) -> its lines, for every rule of the rule files."""
    found: dict[str, dict[str, list[str]]] = {}
    for path in RULE_FILES:
        rule = section = None
        for line in path.read_text().splitlines():
            head = HEAD.match(line)
            if head:
                rule, section = head.group(1), None
                found[rule] = {}
            elif line and not line[0].isspace():
                rule = section = None
            elif rule and re.match(r"    \w+:", line):
                section = line.strip().split(":")[0]
                found[rule][section] = [line.split(":", 1)[1]]
            elif rule and section:
                found[rule][section].append(code(line))
    return found


SECTIONS = sections()


def test_no_rule_file_holds_a_path_of_results():
    """A path of results/ in a rule file (an output, a log, a working folder, an argument)
    is a second statement of the layout: read it from userfair.workflow.layout instead."""
    loose = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in RULE_FILES
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"""[fr]?["'](?:results|resources)/""", code(line))
    ]
    assert loose == []


def test_no_workflow_module_holds_a_path_of_results():
    """The code of userfair.workflow names a file of results/ through the layout, never by a
    string of its own (docstrings may name it for the reader)."""
    loose = []
    for path in sorted((REPO / "workflow" / "userfair" / "workflow").rglob("*.py")):
        if path.name == "layout.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        loose += [
            f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and re.search(r"results/[\w{]", node.value)
        ]
    assert loose == []


@pytest.mark.parametrize("section", ["output", "log"])
def test_every_rule_reads_its_files_from_the_layout(section):
    """Each rule's outputs are ``layout.output("RULE")`` or ``NAME=...layout.output("RULE",
    "NAME")`` of its own name, its log ``layout.log("RULE")``; no string in the section
    names a path but a report caption (../report/*.rst)."""
    call = "output" if section == "output" else "log"
    wrong = []
    for rule, parts in SECTIONS.items():
        if section not in parts:
            continue
        text = "\n".join(parts[section])
        named = re.findall(rf'layout\.{call}\("(\w+)"(?:, "(\w+)")?\)', text)
        if not named and "**" not in text:
            wrong.append(f"{rule}: no layout.{call}")
        wrong += [f"{rule}: reads {other}'s {call}" for other, _ in named if other != rule]
        figures = re.findall(r'figure_outputs\(\s*"(\w+)"', text)  # the figures' convention
        wrong += [f"{rule}: figure_outputs of {other}" for other in figures if other != rule]
        for entry in re.findall(r"^ {8}(\w+)=", text, re.M):  # NAME=... of the section
            if (rule, entry) not in named:
                wrong.append(f"{rule}: output {entry} is not layout.output({rule!r}, {entry!r})")
        strings = re.findall(r'(caption=)?"([^"]*)"', text)
        path = re.compile(r"[\w.{}/-]*[./][\w.{}/-]*")  # no space, a dot or a slash
        paths = [s for key, s in strings if not key and path.fullmatch(s)]
        wrong += [f"{rule}: literal path {p}" for p in paths]
    assert wrong == []


def test_the_layout_is_the_rules_files():
    """The layout has an entry for every rule that states outputs or a log, and none for a
    rule that does not exist (a `use rule` that keeps its base's outputs has none); a figure
    rule whose outputs are ``**figure_outputs("RULE", ...)`` has none either: its files
    follow the figures' convention (layout.figure_file)."""
    with_outputs = {r for r, parts in SECTIONS.items() if "output" in parts}
    with_logs = {r for r, parts in SECTIONS.items() if "log" in parts}
    figures = {
        r for r, parts in SECTIONS.items() if "figure_outputs(" in "".join(parts.get("output", []))
    }
    conventional = {r for r in figures if layout.is_conventional_figure(r)}
    assert conventional and figures - conventional == {"fig_variants"}  # its files: OUTPUTS
    assert set(layout.OUTPUTS) == with_outputs - {"all"} - conventional
    assert set(layout.LOGS) == with_logs - conventional
    assert set(layout.OUTPUTS) <= set(SECTIONS)


def test_the_layout_reads_back():
    assert layout.output("measures") == "results/{dataset}/measures/{model}.json"
    assert layout.output("topk", "topk") == "results/{dataset}/models/{model}/topk.parquet"
    assert layout.files("tune") == [
        "results/{dataset}/models/{model}/grid/{point}/valid.json",
        "results/{dataset}/models/{model}/grid/{point}/model.pth",
    ]
    assert layout.log("measures") == "results/logs/measures/{dataset}_{model}.log"
    assert layout.output("download") == catalogue.RAW_TEMPLATE  # the catalogue's table
    with pytest.raises(ValueError, match="rule tune writes 2 files"):
        layout.output("tune")
    with pytest.raises(ValueError, match="one unnamed file"):
        layout.output("measures", "json")
    # a figure rule's files by the convention: results/figures/NAME[_PART].{pdf,png,rst}
    assert layout.output("fig_relevance", "pdf") == "results/figures/relevance.pdf"
    assert layout.output("fig_gamma", "models_reading") == "results/figures/gamma_models.rst"
    assert layout.log("fig_relevance") == "results/logs/fig_relevance/fig_relevance.log"
    assert layout.output("fig_groups", "reading") == "results/figures/groups/{dataset}.rst"
    with pytest.raises(ValueError, match=r"not \[PART_\]\{pdf,png,reading\}"):
        layout.output("fig_relevance", "svg")
    # the files passed between rules, each with the rule that writes it
    assert layout.PRODUCERS["results/{dataset}/models/{model}/best.json"] == "select"
    assert "results/tables/scores.csv" not in layout.PRODUCERS
    assert all(t.startswith(f"{layout.RESULTS}/") for r in layout.OUTPUTS for t in
               layout.files(r) if r != "download")  # fmt: skip
