"""userfair.workflow.steps: the plain values a rule script hands over, and the rule-script contract
(one script per rule, named as the rule, one library call)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from userfair.workflow import figure_registry, steps
from userfair.workflow.steps import figures as figure_steps
from userfair.workflow.steps import measures, uncertainty, variants, who

from conftest import REPO

SCRIPTS = REPO / "workflow" / "scripts"
RULES = REPO / "workflow" / "rules"


def test_only_gives_the_one_path_of_an_optional_input():
    assert steps.only([]) is None and steps.only(None) is None
    assert steps.only(["a.item"]) == "a.item" and steps.only("a.item") == "a.item"
    with pytest.raises(ValueError, match="at most one path"):
        steps.only(["a", "b"])


def test_named_inputs_by_prefix_and_by_key():
    inputs = {"measures:d/A": "x.json", "measures:d/B": "y.json", "resamples:d/A": "z", "cos": "c"}
    assert steps.named(inputs, prefix="measures:") == {"d/A": "x.json", "d/B": "y.json"}
    given = {"cos": Path("c.npz"), "genre": [], "sums": ["1.json", "2.json"], "train": "t"}
    assert steps.named(given, keys=("cos", "jacc", "genre", "sums")) == {
        "cos": "c.npz",
        "genre": [],
        "sums": ["1.json", "2.json"],
    }


def test_the_settings_values_take_a_rules_params_and_refuse_an_unknown_one():
    """What a measure computes (MeasureSettings, the rule's params), what the users job adds
    (WhoSettings) and how fast (Speed, the config's speed-only keys) are frozen values; a
    param that no value takes nor the script passes by name is an error."""
    params = {"k": 5, "epsilon": 0.1, "envy_utility": "ndcg", "gamma": 0.8, "seed": 3,
              "extra_similarities": ["rcos"], "route": "dense", "features": ["age"], "worst": 2,
              "source": "raw.csv"}  # fmt: skip
    who = (steps.WhoSettings, "route", "source")
    settings = steps.MeasureSettings.of(params, besides=who)
    assert settings == steps.MeasureSettings(
        k=5, epsilon=0.1, envy_utility="ndcg", gamma=0.8, seed=3, extra_similarities=("rcos",)
    )
    assert steps.WhoSettings.of(params, besides=(steps.MeasureSettings, "route", "source")) == (
        steps.WhoSettings(features=("age",), worst=2)
    )
    with pytest.raises(ValueError, match=r"params \['features', 'source', 'worst'\]"):
        steps.MeasureSettings.of(params, besides=("route",))
    with pytest.raises(AttributeError):
        settings.k = 10  # frozen
    config = {"measures": {"block_size": 64, "device": "cpu", "threads": 4}}
    assert steps.Speed.of(config) == steps.Speed(block_size=64, device="cpu")


def test_a_route_is_the_workflows_decision_with_its_files():
    """The route a step gets is the param's, whatever files came with it; a route without
    the files it reads is named, and so is a route that is none."""
    inputs = {"cos": "c.npz", "jacc": "j.npz", "genre": [], "train": "t", "item": []}
    route = steps.route_of("dense", inputs)
    assert route == steps.Route("dense", cos="c.npz", jacc="j.npz", genre=[])
    assert not route.streamed and route.require() is route
    streamed = steps.route_of("stream", {"pairs": "p.json", "sums": ["1.json", "2.json"]})
    assert streamed.streamed and streamed.require().sums == ["1.json", "2.json"]
    with pytest.raises(
        ValueError, match=r"route 'stream': the rule gave no input \['pairs', 'sums'\]"
    ):
        steps.route_of("stream", inputs).require()
    with pytest.raises(ValueError, match=r"route 'dense': the rule gave no input \['cos'\]"):
        steps.Route("dense").require(dense=("cos",))
    with pytest.raises(ValueError, match="route must be one of"):
        steps.Route("auto")


def test_side_files_are_one_value_and_name_what_is_missing(tmp_path):
    """A rule's optional inputs reach a step as one SideFiles: a list of none or one path
    becomes the path or None, an input the rule lacks is None, and a similarity that needs
    a file the rule did not give is named."""
    files = steps.SideFiles.of({"train": "t", "item": ["i.csv"], "vectors": [], "grades": "g"})
    assert files == steps.SideFiles(item="i.csv", vectors=None, grades="g", raw=None)
    assert files.item_features() == "i.csv" and files.item_features(False) is None
    assert files.user_vectors(("rcos", "genre"), ["u1"]) is None  # no vec: nothing read
    with pytest.raises(ValueError, match="embedding:MODEL .* needs the user vectors file"):
        files.user_vectors(("vec",), ["u1"])
    with pytest.raises(ValueError, match="genre similarity .* needs the item genres"):
        steps.SideFiles().user_vectors(("genre",), ["u1"])
    with pytest.raises(ValueError, match="at most one path"):
        steps.SideFiles(item=["a", "b"])
    vectors = tmp_path / "vectors.csv"
    vectors.write_text("user_id,a,b\nu2,3,4\nu1,1,2\n")
    read = steps.SideFiles(vectors=str(vectors)).user_vectors(("vec",), ["u1", "u2"])
    assert read.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_no_step_takes_a_side_file_one_by_one():
    """Every step that reads the item genres, user vectors, grades or the raw file takes
    them as the one ``files`` value, never as loose keyword arguments."""
    takers = []
    for module in (measures, uncertainty, variants, who):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module.__name__:
                continue
            parameters = inspect.signature(function).parameters
            loose = set(parameters) & set(steps.SIDE_FILES)
            assert not loose, f"{module.__name__}.{name} takes {sorted(loose)} one by one"
            if "files" in parameters:
                takers.append(name)
    assert set(takers) >= {
        "similarity", "pairs_part", "measure_sums", "measures", "uncertainty", "exp_variants",
        "users",
    }  # fmt: skip


def _rule_scripts() -> dict[str, str]:
    pairs = {}
    for smk in RULES.glob("*.smk"):
        rule = None
        for line in smk.read_text().splitlines():
            if match := re.match(r"^(?:rule|checkpoint) (\w+):", line):
                rule = match.group(1)
            elif match := re.search(r'"\.\./scripts/(\w+)\.py"', line):
                pairs[rule] = match.group(1)
    return pairs


def _aliases_only(node: ast.stmt) -> bool:
    """``p = snakemake.params`` or ``p, out = snakemake.params, snakemake.output``."""
    if not isinstance(node, ast.Assign):
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    return all(isinstance(v, (ast.Attribute, ast.Name)) for v in values)


#: The one script that several rules share: every figure rule whose figures a drawing module
#: declares (userfair.workflow.figure_registry) runs scripts/figure.py, whose one call is
#: steps.figures.draw(RULE, ...); no other rule may run it.
FIGURE_SCRIPT = "figure"


def test_every_script_is_named_as_its_rule_and_makes_one_library_call():
    pairs = _rule_scripts()
    own = {rule: script for rule, script in pairs.items() if script != FIGURE_SCRIPT}
    assert own and all(rule == script for rule, script in own.items()), own
    assert sorted(set(pairs.values())) == sorted(p.stem for p in SCRIPTS.glob("*.py"))
    for script in SCRIPTS.glob("*.py"):
        tree = ast.parse(script.read_text())
        (block,) = [node for node in tree.body if isinstance(node, ast.With)]
        # job_log ends a rule script's process when its block is done (joblog.leave):
        # a statement after the block would never run
        assert tree.body[-1] is block, f"{script.name}: the job block must be its last statement"
        calls = [n for n in block.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
        others = [n for n in block.body if n not in calls and not _aliases_only(n)]
        assert len(calls) == 1 and not others, (
            f"{script.name}: its job block must be one library call with plain values "
            f"(found {len(calls)} calls and {[type(n).__name__ for n in others]})"
        )


def test_other_config_counts_every_recorded_key_not_the_speed_only_ones(tmp_path):
    from userfair.workflow.steps.targets import other_config, run_config

    record = tmp_path / "run.json"
    config = {"k": 10, "measures": {"epsilon": 0.05, "threads": 2, "block_size": 64}}
    run_config(["d"], ["M"], record, config)
    faster = {"k": 10, "measures": {"epsilon": 0.05, "threads": 8, "block_size": 4096}}
    assert other_config(record, ["d"], ["M"], faster) is None
    assert other_config(record, ["d"], ["M"]) is None  # datasets and models alone: the same
    why = other_config(record, ["d"], ["M"], {**config, "k": 5})
    assert "same datasets and models" in why and "k 10 there, 5 here" in why, why
    why = other_config(record, ["d"], ["M"], {"k": 10, "measures": {"epsilon": 0.1}})
    assert "measures.epsilon 0.05 there, 0.1 here" in why, why
    run_config(["d"], ["M"], record)  # a record without the config: it may differ
    assert "does not record" in other_config(record, ["d"], ["M"], config)


def test_other_config_names_the_configuration_results_hold(tmp_path):
    from userfair.files.io import InputError
    from userfair.workflow.steps.targets import other_config, run_config

    record = tmp_path / "run.json"
    assert other_config(record, ["d"], ["M"]) is None  # no complete run yet
    run_config(["d"], ["M", "N"], record)
    assert other_config(record, ["d"], ["M", "N"]) is None
    why = other_config(record, ["d"], ["M"])
    assert "another configuration" in why and "models ['M', 'N']" in why
    assert "snakemake --directory DIR" in why
    record.write_text("{trunc")
    with pytest.raises(InputError, match="run.json: truncated or unreadable"):
        other_config(record, ["d"], ["M"])


#: The rules whose step lives in another stage's module than their rule file's, and why
#: (docs/architecture.md#the-workflow lists them too); every other rule R of
#: workflow/rules/STAGE.smk runs userfair.workflow.steps.STAGE.R.
STEP_ELSEWHERE = {
    # its job reads JSON records only and must not import torch and RecBole
    "select": "selection",
    # it retrains the winning grid point: the training steps
    "replicate": "models",
    # the record is also read at parse time (rules/common/checks.smk), with the targets
    "run_config": "targets",
}


def _rule_stages() -> dict[str, str]:
    """rule -> the stem of its rule file, for every rule and checkpoint."""
    return {
        match.group(1): smk.stem
        for smk in RULES.glob("*.smk")
        for match in re.finditer(r"^(?:rule|checkpoint) (\w+):", smk.read_text(), re.M)
    }


def _imported(script: str) -> set[tuple[str, str]]:
    """(module, name) of every ``from MODULE import NAME`` of scripts/SCRIPT.py."""
    tree = ast.parse((SCRIPTS / f"{script}.py").read_text())
    return {
        (node.module, alias.name)
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_every_rule_runs_the_step_of_its_name_in_its_stages_module():
    """Rule R of rules/STAGE.smk -> scripts/R.py -> userfair.workflow.steps.STAGE.R (the
    exceptions named in STEP_ELSEWHERE, each with its reason), or, for a figure rule of
    the one documented pattern, rule fig_R -> scripts/figure.py ->
    userfair.workflow.steps.figures.draw("fig_R") -> the figures a drawing module declares
    for fig_R (figure_registry.figure; a rule with none declared fails here)."""
    scripts, wrong = _rule_scripts(), []
    for rule, stage in _rule_stages().items():
        if scripts.get(rule) == FIGURE_SCRIPT:
            if rule not in figure_registry.FIGURES:
                wrong.append(f"{rule}: runs scripts/figure.py, no drawing module declares it")
            continue
        module = f"userfair.workflow.steps.{STEP_ELSEWHERE.get(rule, stage)}"
        imported = _imported(rule)
        if (module, rule) not in imported:
            wrong.append(f"{rule}: imports {sorted(imported)}, not {module}.{rule}")
    assert wrong == []
    assert set(STEP_ELSEWHERE) <= set(_rule_stages())
    assert _imported(FIGURE_SCRIPT) == {
        ("userfair.workflow.joblog", "job_log"),
        ("userfair.workflow.steps.figures", "draw"),
    }
    shared = {rule for rule, script in scripts.items() if script == FIGURE_SCRIPT}
    assert shared == set(figure_registry.FIGURES)  # and every declared figure has its rule
    assert not set(STEP_ELSEWHERE) & shared
    # the drawing modules draw() imports are the ones that declare figures
    declaring = {f.draw.__module__ for figures in figure_registry.FIGURES.values() for f in figures}
    assert declaring == {module.__name__ for module in figure_steps.DRAWING_MODULES}
