"""The contract between the stages (workflow/rules/common/) and the rules' hygiene:
each stage file reads no global of another, a dropped include fails at the rule that needs
it, rules hold no inline logic, the measures rules have threads, a bad config fails at
parse time naming its key. (Which jobs get a GPU is checked on a real cluster by
tests/cluster/test_slurm.py.)"""

from __future__ import annotations

import ast
import re
import subprocess

import pytest
import yaml

from userfair import cli_parser
from userfair.engine import route
from userfair.files.io import InputError
from userfair.formulas import _kernels
from userfair.workflow import schema
from userfair.workflow.schema import config_errors, key_path

from conftest import REPO, make_workdir, snakemake
from test_envs import directive, rule_blocks

RULES = REPO / "workflow" / "rules"
# The contract between the stages, one file per concern (rules/common/*.smk).
COMMON = RULES / "common"
SNAKEFILE = REPO / "workflow" / "Snakefile"
# Every file the Snakefile includes, in its order: rules/common/*.smk, then the stage files.
INCLUDED = re.findall(r'^include: "rules/([\w/]+)\.smk"', SNAKEFILE.read_text(), re.M)
STAGES = [stage for stage in INCLUDED if "/" not in stage and stage != "targets"]
# No rule file grows past this many lines (issue 44: a file a reader takes in at once).
MAX_LINES = 500


def test_every_rule_file_is_a_stage_the_snakefile_includes():
    common = [name for name in INCLUDED if name.startswith("common/")]
    assert INCLUDED[: len(common)] == common and INCLUDED[-1] == "targets", INCLUDED
    assert sorted(common) == sorted(f"common/{p.stem}" for p in COMMON.glob("*.smk")), common
    assert sorted(INCLUDED[len(common) :]) == sorted(p.stem for p in RULES.glob("*.smk"))
    assert {"data", "models", "measures", "uncertainty", "experiments", "figures"} <= set(STAGES)


def test_no_rule_file_is_longer_than_the_limit():
    files = [SNAKEFILE, *RULES.rglob("*.smk")]
    assert len(files) > len(STAGES) + 1
    long = {
        str(path.relative_to(REPO)): n
        for path in files
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these by concern (at most {MAX_LINES} lines each): {long}"


def _python_of(smk: str) -> str:
    """The module-level Python of a rule file: its rule blocks (``use rule`` ones too) and
    directives (``ruleorder``) removed."""
    keep, skipping = [], False
    for line in smk.splitlines():
        if re.match(r"^(rule|checkpoint) \w+:|^use rule .* with:|^wildcard_constraints:", line):
            skipping = True
            continue
        if line.startswith("ruleorder:"):
            continue
        if skipping and (line.startswith(" ") or not line.strip()):
            continue
        skipping = False
        keep.append(line)
    return "\n".join(keep)


def _globals_defined(path) -> set[str]:
    tree = ast.parse(_python_of(path.read_text()))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_no_stage_file_uses_a_global_of_another_stage_file():
    defined = {stage: _globals_defined(RULES / f"{stage}.smk") for stage in STAGES}
    used_elsewhere = []
    for stage in STAGES:
        text = (RULES / f"{stage}.smk").read_text()
        for other in STAGES:
            if other != stage:
                used_elsewhere += [
                    f"{stage}.smk uses {name} of {other}.smk"
                    for name in defined[other]
                    if re.search(rf"\b{name}\b", text)
                ]
    assert not used_elsewhere, used_elsewhere


def test_rule_files_hold_no_lambdas_and_no_repeated_regex_joins():
    for path in RULES.rglob("*.smk"):
        text = path.read_text()
        assert "lambda" not in text, f"{path.name}: a lambda (use a named function, common/)"
        assert text.count("re.escape") <= 1, f"{path.name}: use one_of() of common/settings.smk"
    rules_text = "".join(p.read_text() for p in RULES.glob("*.smk") if p.stem != "targets")
    assert not re.search(r"^def ", rules_text, re.M), "functions belong in rules/common/"


def test_measures_rules_run_on_their_threads():
    blocks = rule_blocks()
    for rule in ("similarity", "measures", "exp_relevance", "exp_similarity", "exp_extreme",
                 "exp_gamma"):  # fmt: skip
        _, block = blocks[rule]
        assert re.search(r'^    threads: config\["measures"\]\["threads"\]$', block, re.M), rule
        assert directive(block, "resources") is not None


def test_job_threads_follow_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert _kernels.job_threads() == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert _kernels.job_threads() >= 1


def test_schema_errors_name_the_key_path():
    schema = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())
    errors = config_errors(
        {"datasets": ["ml100k"], "measures": {"gamma": 1.5, "epsilon": 1.5}}, schema
    )
    assert "config key datasets[0]: 'ml100k' is not one of" in errors[0] + errors[1] + errors[2]
    text = "\n".join(errors)
    assert "config key measures.epsilon: 1.5 is greater than the maximum of 1;" in text
    assert "config key measures.gamma: 1.5 is greater than the maximum of 1;" in text
    assert len(errors) == 3, errors  # each key once (userfair.bounds' keys are not repeated)
    assert key_path(["dataset_options", "ml-100k", "path"]) == "dataset_options.ml-100k.path"
    assert key_path([]) == "(top level)"
    assert (
        config_errors(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), schema) == []
    )


SCHEMA = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())


@pytest.mark.parametrize(
    "config, message",
    [
        (
            {"modles": ["BPR"]},
            "config key modles: not a key of the config; did you mean models?",
        ),
        (
            {"measures": {"epsilom": 0.1}},
            "config key measures.epsilom: not a key of measures; did you mean epsilon?",
        ),
        (
            {"dataset_options": {"ml-100k": {"pth": "x"}}},
            "config key dataset_options.ml-100k.pth: not a key of dataset_options.ml-100k; "
            "did you mean path?",
        ),
        (
            {"models": ["UserKNN", "BPR"], "experiments": {"model": "NCL"}},
            "config key experiments.model: 'NCL' is not one of the configured models",
        ),
        (
            {"models": ["UserKNN", "BPR"], "experiments": {"model": "BRP"}},
            "did you mean BPR?",
        ),
        ({"plots": {"palette": "notapalette"}}, "config key plots.palette: 'notapalette' is"),
        ({"download": {"max_mb": 0}}, "config key download.max_mb: 0 is less than or equal to"),
        ({"download": {"other_hosts": "cdn.org"}}, "config key download.other_hosts: 'cdn.org' is"),
        ({"plots": {"style": "grid"}}, "config key plots.style: 'grid' is not one of"),
    ],
)
def test_config_mistakes_are_named_with_a_suggestion(config, message):
    errors = "\n".join(config_errors(config, SCHEMA))
    assert message in errors, errors


def test_good_style_settings_and_a_null_experiment_model_pass():
    good = {
        "models": ["UserKNN", "BPR"],
        "experiments": {"model": None},
        "plots": {"palette": "Set2", "style": "ticks", "context": "talk"},
    }
    assert config_errors(good, SCHEMA) == []
    assert config_errors({"models": ["BPR"], "experiments": {"model": "BPR"}}, SCHEMA) == []
    palette = SCHEMA["properties"]["plots"]["properties"]["palette"]["default"]
    assert palette == schema.DEFAULT_PALETTE


def test_one_default_per_setting_the_library_and_the_workflow_share():
    keys = SCHEMA["properties"]
    assert keys["seed"]["default"] == cli_parser.DEFAULT_SEED
    stream_above = keys["measures"]["properties"]["stream_above"]["default"]
    assert stream_above == route.DENSE_MAX_USERS
    assert "seed" not in keys["uncertainty"]["properties"]  # one seed: the config's


def _dry_run(tmp_path, config: dict, *targets: str, snakefile: str | None = None):
    work = make_workdir(tmp_path / "run")
    if snakefile is not None:  # workflow/ of its own: the repository's files but the Snakefile
        (work / "workflow").unlink()
        (work / "workflow").mkdir()
        for entry in (REPO / "workflow").iterdir():
            if entry.name != "Snakefile":
                (work / "workflow" / entry.name).symlink_to(entry)
        (work / "workflow" / "Snakefile").write_text(snakefile)
    (work / "run.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(work, "-n", *targets, "--configfile", "run.yaml", check=False)
    return proc, proc.stdout + proc.stderr


SCHEMA_ERRORS = [
    ({"measures": {"epsilon": 1.5}}, "config key measures.epsilon: 1.5 is greater than"),
    ({"datasets": ["ml-100k", 5]}, "config key datasets[1]: 5 is not of type 'string'"),
]


@pytest.mark.parametrize("config, message", SCHEMA_ERRORS)
def test_check_config_names_the_bad_key(config, message):
    """The Snakefile's first call, in-process: every schema error names its key."""
    with pytest.raises(InputError) as error:
        schema.check_config(config, REPO / "config" / "config.schema.yaml")
    assert message in str(error.value)
    assert "config.schema.yaml" in str(error.value).splitlines()[0]


# One real dry run per kind of error: a schema error (check_config, above in-process) and a
# path that does not exist (the checks beyond the schema, rules/common/checks.smk).
@pytest.mark.parametrize(
    "config, message",
    [
        SCHEMA_ERRORS[0],
        (
            {"dataset_options": {"ml-100k": {"path": "no/such/folder"}}},
            "config dataset_options.ml-100k.path: 'no/such/folder' does not exist",
        ),
    ],
)
@pytest.mark.slow
def test_a_bad_config_fails_at_parse_time_naming_its_key(tmp_path, config, message):
    proc, output = _dry_run(tmp_path, config)
    assert proc.returncode != 0 and message in output, output[-3000:]
    assert not (tmp_path / "run" / "results").exists()


@pytest.mark.slow
def test_dropping_a_stage_fails_at_the_rule_that_needs_it(tmp_path):
    snakefile = SNAKEFILE.read_text()
    without = snakefile.replace('include: "rules/experiments.smk"\n', "")
    assert without != snakefile
    proc, output = _dry_run(tmp_path, {}, snakefile=without)
    assert proc.returncode != 0
    assert "Rule exp_relevance is not defined in this workflow" in output, output[-3000:]
    assert "figures.smk" in output


# --- one registry per kind of name ---------------------------------------------------------

# Files that are a registry themselves or implement a named model or dataset.
REGISTRIES = {
    "catalogue.py",  # the datasets
    "models.py",  # the models
    "recommenders.py",  # trains them (NCL's cluster check)
    "recbole_setup.py",  # UserKNN/ItemKNN are ours; RecBole's bundled ml-100k
    "shared_dataset.py",  # the reference model whose config builds the dataset file
    "userknn.py",
    "recbole_fast.py",  # leaner internals of named RecBole models (NeuMF, NGCF, ...)
    "download.py",  # the ml-100k inside recbole
    "testdata.py",
}


def _registered_names() -> list[str]:
    from userfair.workflow import catalogue

    paper_models = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]
    return [*paper_models, "LightGCN", *catalogue.CATALOGUE]


def _enums(node):
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            yield node["enum"]
        for value in node.values():
            yield from _enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from _enums(value)


def test_no_file_keeps_a_private_list_of_model_or_dataset_names():
    """Model names come from userfair.workflow.models, dataset names from
    userfair.workflow.catalogue (and
    the config's custom_datasets): rules, scripts, the library's other modules and the
    profiles hold no quoted model or dataset name, and the schema no enum of them."""
    names = _registered_names()
    literal = re.compile(r"""['"](%s)['"]""" % "|".join(map(re.escape, names)))
    files = [
        SNAKEFILE,
        *RULES.rglob("*.smk"),
        *(REPO / "workflow" / "scripts").glob("*.py"),
        *(p for p in (REPO / "workflow" / "userfair").rglob("*.py") if p.name not in REGISTRIES),
        *(REPO / "profiles").rglob("*.yaml"),
    ]
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert not found, (
        "private lists of names (use userfair.workflow.models / catalogue):\n" + "\n".join(found)
    )
    schema = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())
    closed = [enum for enum in _enums(schema) if set(enum) & set(names)]
    assert not closed, f"config.schema.yaml keeps closed lists of names: {closed}"


def test_training_jobs_take_their_partition_from_their_gpu_request():
    """tune and topk carry their SLURM partition as their own resource, decided by the
    number of GPUs they ask for; the profile keeps no per-model routing."""
    blocks = rule_blocks()
    for rule in ("tune", "topk"):
        block = blocks[rule][1]
        resources = block[block.index("    resources:") :].split("\n    params:")[0]
        assert "gpu=training_gpus," in resources, rule
        assert "slurm_partition=training_partition," in resources, rule
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert "set-resources" not in profile
    common = (COMMON / "resources.smk").read_text()
    body = common[common.index("def training_partition") :].split("\n\n\n")[0]
    assert "training_gpus(wildcards)" in body and "USERFAIR_SLURM_GPU_PARTITION" in body


def test_names_are_checked_against_the_registries():
    from userfair.workflow.schema import name_errors

    errors = name_errors(
        {
            "datasets": ["ml100k", "mine"],
            "models": ["BPR", "LightGNC"],
            "custom_datasets": {"mine": {"path": "x.csv", "columns": {"item": "i"}}},
        }
    )
    assert any(e.startswith("config custom_datasets.mine.columns.user: required") for e in errors)
    assert any(
        e.startswith("config key datasets[0]: 'ml100k' is not one of")
        and "did you mean ml-100k" in e
        for e in errors
    ), errors
    assert any(
        e.startswith("config key models[1]: 'LightGNC' is not one of")
        and "did you mean LightGCN?" in e
        for e in errors
    ), errors
    assert not any("datasets[1]" in e for e in errors)  # declared, though badly
    assert name_errors({"models": ["LightGCN", "EASE"], "datasets": ["ml-100k"]}) == []


# --- the library's imports ------------------------------------------------------------------

PACKAGE = REPO / "workflow" / "userfair"


def _module_name(path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_of(path) -> set[str]:
    """The userfair modules a module imports, at module level or inside functions."""
    tree = ast.parse(path.read_text())
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("userfair")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = (package or "userfair").split(".")
                parent = ".".join(parent[: len(parent) - (node.level - 1)])
                base = parent + ("." + base if base else "")
            if base.startswith("userfair"):
                found |= {f"{base}.{a.name}" for a in node.names} | {base}
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    return {name for name in found if name in modules} - {_module_name(path)}


def test_the_library_has_no_import_circle():
    graph = {_module_name(p): _imports_of(p) for p in PACKAGE.rglob("*.py")}
    graph = {m: {d for d in deps if d != "userfair"} for m, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(module, trail):
        if state.get(module) == 1:
            raise AssertionError("import circle: " + " -> ".join([*trail, module]))
        if state.get(module) == 2:
            return
        state[module] = 1
        for dependency in sorted(graph.get(module, ())):
            visit(dependency, [*trail, module])
        state[module] = 2

    for module in sorted(graph):
        visit(module, [])


def test_only_the_workflow_subpackage_imports_it():
    """userfair.workflow needs the workflow extra: no module outside it imports it, so that
    the base install imports cleanly (tests/packaging/test_packaging.py checks that by
    importing)."""
    found = {
        _module_name(p): sorted(d for d in _imports_of(p) if d.startswith("userfair.workflow"))
        for p in PACKAGE.rglob("*.py")
        if not _module_name(p).startswith("userfair.workflow")
    }
    assert not {m: d for m, d in found.items() if d}, found


def test_no_private_helper_is_used_across_modules():
    modules = {p.stem for p in PACKAGE.rglob("*.py")}
    pattern = re.compile(r"\b(%s)\._[a-z]\w*" % "|".join(map(re.escape, sorted(modules))))
    found = [
        f"{path.relative_to(REPO)}:{number}: {match.group(0)}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for match in pattern.finditer(line.split("#")[0])
        if match.group(1) != path.stem
    ]
    assert not found, "private names used across modules:\n" + "\n".join(found)


#: What a function may import itself: the optional packages (torch: the gpu extra; RecBole:
#: imported after userfair.recbole_patches.apply(); seaborn: only to check a palette name)
#: and the torch route's module; and scipy.stats (a second to import), which two functions
#: of modules that every Snakemake start imports need (a tau, a rank), so that parsing the
#: workflow does not pay for it; and numba's two modules that userfair.plugins needs only to
#: compute a pair term (0.3 s to import numba), so that neither parsing the workflow nor a job
#: that computes no measure pays for it (tests/packaging/test_packaging.py::test_parsing_the_
#: workflow_and_light_jobs_load_no_heavy_module). cli.py imports lazily on purpose:
#: `userfair evaluate --help` and `import userfair` load no numpy
#: (tests/packaging/test_packaging.py::test_import_footprint).
LOCAL_IMPORTS_ALLOWED = {
    "torch",
    "recbole",
    "seaborn",
    "userfair.streamed._streaming_torch",
    "scipy.stats",
    "userfair.formulas.pair_terms",
    "userfair.streamed._plugin_kernels",
}


def test_imports_sit_at_module_top_unless_optional_or_slow():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("cli.py", "__init__.py"):
            continue
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                if not any(
                    n.split(".")[0] in LOCAL_IMPORTS_ALLOWED or n in LOCAL_IMPORTS_ALLOWED
                    for n in names
                ):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {names[0]}")
    assert not found, found


def test_speed_only_settings_are_never_rule_params():
    """A changed param reruns its job: the measures' block size and device
    (steps.SPEED_KEYS) and training's eval batch size (steps.TRAINING_SPEED_KEYS) are read
    by the scripts from the config, never given as params (docs/cluster.md);
    measure_settings (rules/common/params.smk) refuses them, training_settings leaves them
    out."""
    from userfair.workflow.steps import SPEED_KEYS, TRAINING_SPEED_KEYS

    for path in sorted((REPO / "workflow" / "rules").rglob("*.smk")):
        code = "\n".join(line.split("#")[0] for line in path.read_text().splitlines())
        calls = re.findall(r"measure_settings\(([^)]*)\)", code)
        for key in SPEED_KEYS:
            assert f'["measures"]["{key}"]' not in code, (path.name, key)
            assert not any(f'"{key}"' in call for call in calls), (path.name, key)
        for key in TRAINING_SPEED_KEYS:
            assert f'["training"]["{key}"]' not in code and f'"{key}"' not in code, (path, key)


def test_a_fast_lane_test_cannot_start_a_process():
    """The fast lane stays in-process (the `slow` marker's definition): while a test of it
    runs, tests/conftest.py's audit hook refuses to start a process, naming the test."""
    with pytest.raises(RuntimeError, match="stays in-process; mark the test slow") as refused:
        subprocess.run(["true"], check=True)
    assert "test_a_fast_lane_test_cannot_start_a_process" in str(refused.value)
