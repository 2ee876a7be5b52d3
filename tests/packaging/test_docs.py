"""The docs name only targets that exist: every `snakemake` command in README.md,
config/README.md and docs/*.md asks for rules Snakemake accepts as targets (or files a
rule writes), `--forcerun`/`--until` name real rules, and every backticked `results/...`
path is the output (or log) of some rule; in a table column headed rule, target or
"written by", every backticked name is a rule (a target rule under "target").
(`resources/` holds what the user or a command places there, and downloads.)"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shlex
import subprocess
from functools import cache
from pathlib import Path

import pytest

from userfair.engine.route import DENSE_MAX_USERS
from userfair.workflow import figure_registry, layout

from conftest import BIN, REPO

DOCS = [
    REPO / "README.md",
    REPO / "config" / "README.md",
    REPO / "tests" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
]
# Options of the commands in the docs that take one value.
VALUE_OPTIONS = {
    "--cores", "-c", "--jobs", "-j", "--configfile", "--directory", "-d", "--profile",
    "--sdm", "--report", "--set-resources", "--default-resources", "--conda-prefix",
    "--slurm-status-command", "--list-changes", "--config",
}  # fmt: skip
# Options followed by rule names (or files) up to the next option.
RULE_OPTIONS = {"--forcerun", "-R", "--until", "-U", "--omit-from", "-O"}
# Placeholders the docs write for a wildcard.
PLACEHOLDERS = {"D", "M", "P", "RULE", "KIND", "*", "<rule>"}


def _snakemake(*args: str) -> str:
    proc = subprocess.run(
        [str(BIN / "snakemake"), *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@cache
def rules() -> dict[str, set[str]]:
    """{'all': every rule, 'targets': the rules Snakemake accepts as targets}."""

    def names(text):
        return {line.split()[0] for line in text.splitlines() if line.strip()}

    # Every rule, read from the rule files (one Snakemake process less; a test below checks
    # the reading against `snakemake --list-rules` in the workflow stage).
    return {"all": rules_in_files(), "targets": names(_snakemake("--list-target-rules"))}


def rules_in_files() -> set[str]:
    """The rule (and checkpoint) names declared in the Snakefile and workflow/rules/*.smk,
    those of ``use rule BASE as NAME with:`` too."""
    files = [REPO / "workflow" / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    text = "\n".join(path.read_text() for path in files)
    return set(
        re.findall(r"^(?:rule|checkpoint|use rule \w+ as) (\w+)(?::| with:)", text, flags=re.M)
    )


@cache
def output_patterns() -> list[str]:
    """Every output and log path template of the rules: the file layout they read theirs
    from (userfair.workflow.layout; the download rule's is the catalogue's template), the
    figure rules' of the convention (layout.FIGURE_TEMPLATES) too."""
    found = {t for rule in layout.OUTPUTS for t in layout.files(rule)}
    figures = {rule for rule in rules_in_files() if layout.is_conventional_figure(rule)}
    logs = {layout.log(rule) for rule in {*layout.LOGS, *figures}}
    return sorted(found | set(layout.FIGURE_TEMPLATES) | logs)


def _pattern_regex(pattern: str) -> re.Pattern:
    parts = re.split(r"(\{[^}]+\})", pattern)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


def _doc_regex(path: str) -> re.Pattern:
    """A doc path with placeholders (D, M, P, RULE, *) as a regex."""
    parts = re.split(r"(\*|<rule>|\b(?:D|M|P|RULE|KIND)\b)", path)
    return re.compile("".join("[^/]+" if p in PLACEHOLDERS else re.escape(p) for p in parts))


def _alternatives(path: str) -> list[str]:
    """Expand one level of {a,b,c} braces."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", path)
    if not match:
        return [path]
    return [
        alt
        for choice in match.group(1).split(",")
        for alt in _alternatives(path[: match.start()] + choice + path[match.end() :])
    ]


#: Where the scripts of benchmarks/ write (git-ignored like every results/ file).
BENCHMARK_OUTPUT = "results/benchmarks/"


def is_rule_output(path: str) -> bool:
    """Whether a rule writes ``path`` (a file, or with a trailing ``/`` or ``...`` a folder
    or prefix); placeholders (D, M, P, RULE, *) and {a,b} braces stand for what they say."""
    path = path.rstrip(".,;:") if not path.endswith("...") else path
    prefix = path.endswith("/") or "..." in path
    path = path.split("...")[0]
    for concrete in _alternatives(path):
        doc = _doc_regex(concrete)
        samples = [re.sub(r"\{[^}]+\}", "W", p) for p in output_patterns()]
        if prefix:
            found = any(doc.match(sample) for sample in samples)
        else:
            found = any(doc.fullmatch(sample) for sample in samples) or any(
                _pattern_regex(p).fullmatch(concrete) for p in output_patterns()
            )
        if not found:
            return False
    return True


def _commands(text: str) -> list[tuple[str, str]]:
    """(source line, command) of every snakemake command: code-block lines and inline
    backticked snippets."""
    found = []
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code and re.match(r"\s*(\S*/)?snakemake\s", line):
            found.append((line, line.split("#")[0]))
        elif not in_code:
            for snippet in re.findall(r"`([^`]*\bsnakemake\s[^`]*)`", line):
                found.append((line, snippet))
    return found


def _table_rules(text: str) -> list[tuple[str, str, bool]]:
    """(row, name, must be a target) of every backticked name in a table column whose
    header says rule, target or written by."""
    found, columns = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if columns is None:
            columns = {
                i: "target" in c.lower()
                for i, c in enumerate(cells)
                if re.search(r"\brule\b|target|written by", c.lower())
            }
            continue
        for i, target in columns.items():
            if i < len(cells):
                for name in re.findall(r"`([a-z_]+\*?)`", cells[i]):
                    found.append((line, name, target))
    return found


def _doc_items():
    for path in DOCS:
        text = path.read_text()
        for line, name, target in _table_rules(text):
            yield path.relative_to(REPO), "target" if target else "rule", name, line
        for line, command in _commands(text):
            yield path.relative_to(REPO), "command", command, line
        for target in re.findall(r"`(results/[^`\s]*)`", text):
            yield path.relative_to(REPO), "path", target, target


def check_command(command: str) -> list[str]:
    tokens = shlex.split(command.replace("[", " ").replace("]", " "))
    tokens = tokens[next(i for i, t in enumerate(tokens) if t.endswith("snakemake")) + 1 :]
    problems, mode, i = [], "target", 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-"):
            mode = "rule" if token in RULE_OPTIONS else "target"
            if token in VALUE_OPTIONS:
                i += 1
        elif "/" in token or "." in token:
            if token.startswith("results/") and not is_rule_output(token):
                problems.append(f"{token}: no rule writes it")
        elif mode == "rule":
            if token not in rules()["all"]:
                problems.append(f"{token}: not a rule")
        elif token not in rules()["targets"]:
            kind = "a rule with wildcards" if token in rules()["all"] else "not a rule"
            problems.append(f"{token}: {kind}, not a target Snakemake accepts")
        i += 1
    return problems


@pytest.mark.slow  # a Snakemake process (snakemake --list-target-rules): not the fast lane
def test_the_checker_tells_targets_from_wildcard_rules():
    assert check_command("snakemake --cores 2 table_scores") == []
    assert check_command("snakemake results/ml-100k/models/NCL/topk.parquet") == []
    assert check_command("snakemake --cores 2 measures") == [
        "measures: a rule with wildcards, not a target Snakemake accepts"
    ]
    assert check_command("snakemake nothing --forcerun similarity") == [
        "nothing: not a rule, not a target Snakemake accepts"
    ]
    assert is_rule_output("results/D/data/D.{train,valid,test}.inter")
    assert not is_rule_output("results/D/data/D.csv")
    assert is_rule_output("results/logs/RULE/...log") and is_rule_output("results/D/models/")
    table = "| target (rule name) | files |\n| --- | --- |\n| `measures` | x |\n"
    assert _table_rules(table) == [("| `measures` | x |", "measures", True)]


@pytest.mark.slow
def test_the_rule_files_declare_exactly_snakemakes_rules():
    listed = {line.split()[0] for line in _snakemake("--list-rules").splitlines() if line.strip()}
    assert rules_in_files() == listed


def test_the_architectures_dag_names_every_rule():
    """docs/architecture.md's DAG names every rule the rule files declare (the same as
    `snakemake --list-rules`: test_the_rule_files_declare_exactly_snakemakes_rules), so a
    newcomer finds each rule there."""
    text = (REPO / "docs" / "architecture.md").read_text()
    start = text.index("The DAG (one dataset")
    block = text[text.index("```", start) + 3 :]
    block = block[: block.index("```")]
    named = set(re.findall(r"\w+", block))
    assert sorted(rules_in_files() - named) == []


@pytest.mark.parametrize("doc", [p.relative_to(REPO) for p in DOCS], ids=str)
@pytest.mark.slow  # a Snakemake process (snakemake --list-target-rules): not the fast lane
def test_every_target_a_doc_names_exists(doc):
    problems = []
    for source, kind, item, line in _doc_items():
        if source != doc:
            continue
        if kind == "command":
            problems += [f"{line.strip()}: {p}" for p in check_command(item)]
        elif kind in ("rule", "target"):
            names = rules()["targets" if kind == "target" else "all"]
            if item.endswith("*"):
                ok = any(name.startswith(item[:-1]) for name in names)
            else:
                ok = item in names
            if not ok:
                problems.append(f"{line.strip()[:80]}: `{item}` is not a {kind} rule name")
        elif item.startswith(BENCHMARK_OUTPUT):
            continue  # written by the scripts of benchmarks/, not by a rule
        elif not is_rule_output(item):
            problems.append(f"`{item}`: no rule writes it")
    assert not problems, "\n".join(problems)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path) -> set[str]:
    text = path.read_text()
    ids = set(re.findall(r'<a id="([^"]+)"></a>', text))
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return ids | {_slug(h) for h in headings}


def test_slug_follows_github():
    assert _slug("(a) QK-video input: 4,656 users, k = 10") == "a-qk-video-input-4656-users-k--10"
    assert _slug("The SLURM test") == "the-slurm-test"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_link_to_an_anchor_resolves(doc):
    """Links ``[text](file.md#anchor)`` and ``(#anchor)`` land on an explicit ``<a id>`` or a
    heading of the linked file."""
    broken = []
    for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", doc.read_text()):
        linked = (doc.parent / target).resolve() if target else doc
        if linked.suffix != ".md" or not linked.is_file():
            continue
        if anchor not in _anchors(linked):
            broken.append(f"{target}#{anchor}")
    assert not broken, f"{doc.name}: anchors that land nowhere: {broken}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_stream_threshold_the_docs_quote_is_the_codes(doc):
    """Every "above N users" of 10,000 or more in the docs is the threshold above which
    ``auto`` streams: it must be ``route.DENSE_MAX_USERS`` (the workflow's
    ``measures.stream_above`` default), not a number it had before."""
    text = " ".join(doc.read_text().split())
    quoted = {
        int(n.replace(",", "")) for n in re.findall(r"(?i)\babove (\d{1,3},\d{3}|\d{5,})\b", text)
    }
    assert quoted <= {DENSE_MAX_USERS}, (
        f"{doc.name}: quotes {sorted(quoted)}, the code streams above {DENSE_MAX_USERS:,}"
    )


def _resolves(dotted: str) -> bool:
    """Whether ``userfair.a.b.c`` names a module or an attribute that exists now."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_library_name_a_doc_quotes_exists(doc):
    """A module or function a doc names (``userfair.engine.route.choose_route``,
    ``userfair.workflow.costs``) exists under that name: moved code leaves no stale name."""
    placeholders = {"userfair.workflow.steps.STAGE.R"}
    names = set(re.findall(r"userfair(?:\.[A-Za-z_][A-Za-z0-9_]*)+", doc.read_text()))
    missing = sorted(n for n in names - placeholders if not _resolves(n))
    assert not missing, f"{doc.name} names what does not exist: {missing}"


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name), sorted."""
    root = REPO / "workflow" / "userfair"
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("userfair", *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _architecture_rows(heading: str) -> set[str]:
    """The names in the first column of docs/architecture.md's table under ``heading`` (a
    package's row is its bold heading: **`streamed/`**)."""
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    named = set()
    for line in section.splitlines():
        if line.startswith("| ") and "---" not in line:
            named |= set(re.findall(r"`([\w.]+)/?`", line.split("|")[1])) - {"__init__"}
    return named


def test_every_library_module_has_its_row_in_the_architecture():
    """docs/architecture.md#the-library is drawn from the code: every module of the library
    (outside userfair.workflow) is named in the first column of its table, and every name
    there is a module."""
    named = _architecture_rows("## The library")
    modules = {
        m.removeprefix("userfair.")
        for m in _modules()
        if not (m + ".").startswith("userfair.workflow.")
    }
    assert not modules - named, f"modules without a row: {sorted(modules - named)}"
    assert not named - modules, f"rows naming no module: {sorted(named - modules)}"


def test_every_workflow_module_has_its_row_in_the_architecture():
    """docs/architecture.md#the-workflow-subpackage names every module of userfair.workflow
    (steps included) in the first column of its table, and nothing else."""
    named = _architecture_rows("## The workflow subpackage")
    modules = {
        m.removeprefix("userfair.")
        for m in _modules()
        if (m + ".").startswith("userfair.workflow.")
    }
    assert not modules - named, f"modules without a row: {sorted(modules - named)}"
    assert not named - modules, f"rows naming no module: {sorted(named - modules)}"


# --- the map from code to tests (tests/README.md#where-the-tests-of-a-module-are) ----------

MAP_START, MAP_END = "<!-- tests map: start -->", "<!-- tests map: end -->"


def _package_modules() -> dict[str, Path]:
    """:func:`_modules` but the packages whose ``__init__`` holds no code (a docstring and
    imports at most): userfair.measures stays, userfair.streamed goes."""
    out = {}
    for name, path in _modules().items():
        if path.name == "__init__.py":
            body = ast.parse(path.read_text()).body
            if not [n for n in body if not isinstance(n, (ast.Expr, ast.ImportFrom))]:
                continue
        out[name] = path
    return out


def _imported(path: Path, known) -> set[str]:
    """The modules of ``known`` that the file imports (``from A import b``: A.b when it is a
    module, else A)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            if not all(n in known for n in names):  # a name of the module itself
                names.append(node.module)
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n in known}
    return found


def _tests_map() -> list[tuple[str, str]]:
    """(module, where its tests are) for every module of the package: the test files that
    import it, else those of the modules that import it ("via ..."), else the rule steps'
    runs."""
    modules = _package_modules()
    direct = {m: set() for m in modules}
    for path in sorted((REPO / "tests").glob("*/test_*.py")):
        for module in _imported(path, modules):
            direct[module].add(str(path.relative_to(REPO)))
    importers = {m: set() for m in modules}
    for module, path in modules.items():
        for used in _imported(path, modules) - {module}:
            importers[used].add(module)
    # the figures' step imports every drawing module by its declarations, not by name
    for used in figure_registry.drawing_modules():
        importers[used].add("userfair.workflow.steps.figures")
    rows = []
    for module in modules:
        if direct[module]:
            where = ", ".join(f"`{t}`" for t in sorted(direct[module]))
        elif module.startswith("userfair.workflow.steps."):
            where = "the rule scripts call it: the runs in `tests/runs/`"
        else:
            via = sorted(m for m in importers[module] if direct[m])
            where = "via " + ", ".join(f"`{m}`" for m in via) if via else "none"
        rows.append((module, where))
    return rows


def test_the_tests_map_is_the_code():
    """tests/README.md's map names, for every module of the package, the test files that
    import it (or those of its importers): computed from the code, so a moved test or a new
    module shows here. USERFAIR_WRITE_MAP=1 rewrites the map."""
    lines = ["| module | tests |", "| --- | --- |"]
    rows = _tests_map()
    lines += [f"| `{module}` | {where} |" for module, where in rows]
    table = "\n".join(lines)
    readme = REPO / "tests" / "README.md"
    text = readme.read_text()
    before, rest = text.split(MAP_START, 1)
    _, after = rest.split(MAP_END, 1)
    expected = f"{before}{MAP_START}\n{table}\n{MAP_END}{after}"
    if os.environ.get("USERFAIR_WRITE_MAP") == "1":
        readme.write_text(expected)
    assert text == expected, "tests/README.md's map is stale; rerun with USERFAIR_WRITE_MAP=1"
    assert not [m for m, where in rows if where == "none"], "modules without a test"
