"""Bad input stopped before any job starts (docs/bad-inputs.md): the shared bounds of the
command and the config (userfair.bounds), dataset names, duplicate YAML keys and tags
(userfair.workflow.yamlfile), the config check (userfair.workflow.schema) in-process, and one real
`snakemake -n` per kind of error."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import time

import pytest
import yaml

from dag_jobs import scheduled
from userfair import bounds
from userfair.cli import main
from userfair.files import io
from userfair.files.io import InputError
from userfair.workflow import config_bounds, costs, grids, layout, schema, yamlfile
from userfair.workflow.steps import models as steps

from conftest import REPO, make_workdir, snakemake, write_seeded_split

SCHEMA = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())
SCHEMA_PATH = REPO / "config" / "config.schema.yaml"


def errors(config: dict) -> str:
    return "\n".join(schema.config_errors(config, SCHEMA))


def schema_key(key: str) -> dict:
    node = SCHEMA
    for part in key.split("."):
        node = node["properties"][part]
    return node


# --- one definition of the bounds for the command and the config ------------------------


@pytest.mark.parametrize("key, name", sorted(config_bounds.CONFIG_KEYS.items()))
def test_the_schema_states_the_bounds_of_userfair_bounds(key, name):
    node, bound = schema_key(key), bounds.BOUNDS[name]
    assert node["type"] == ("integer" if bound.integer else "number"), key
    for ours, theirs in (
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("above", "exclusiveMinimum"),
        ("below", "exclusiveMaximum"),
    ):
        assert getattr(bound, ours) == node.get(theirs), (key, theirs)


@pytest.mark.parametrize("key, name", sorted(config_bounds.CONFIG_KEYS.items()))
def test_the_command_and_the_config_refuse_the_same_values(key, name, capsys):
    bound = bounds.BOUNDS[name]
    probes = [-1, 0, 1, 0.5, 5, 2**32, math.nan, math.inf, 10.0]
    option = bounds.option(name)
    for value in probes:
        config = {"leaf": value}
        for part in reversed(key.split(".")):  # nested: measures.estimate.pairs
            config = {part: config.pop("leaf")} if "leaf" in config else {part: config}
        refused_by_config = f"config key {key}:" in errors(config)
        try:
            option(repr(value) if isinstance(value, float) else str(value))
            refused_by_command = False
        except Exception:
            refused_by_command = True
        if bound.integer and isinstance(value, float) and value == 10.0:
            # the command reads "10.0" as text: refused as not an integer, as the config is
            assert refused_by_config and refused_by_command
            continue
        assert refused_by_config == refused_by_command, (key, value)
        assert refused_by_config == (bound.error(value) is not None), (key, value)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epsilon", "5"], "argument --epsilon: 5.0 is greater than the maximum of 1"),
        (["--epsilon", "-1"], "argument --epsilon: -1.0 is less than the minimum of 0"),
        (["--epsilon", "nan"], "argument --epsilon: nan is not a finite number"),
        (["--k", "10.0"], "argument --k: '10.0' is not an integer"),
        (["--k", "0"], "argument --k: 0 is less than the minimum of 1"),
        (["--gamma", "1.5"], "argument --gamma: 1.5 is greater than the maximum of 1"),
        (["--seed", "-1"], "argument --seed: -1 is less than the minimum of 0"),
        (["--level", "1"], "argument --level: 1.0 is not less than 1"),
        (["--block-size", "0"], "argument --block-size: 0 is less than the minimum of 1"),
    ],
)
def test_userfair_evaluate_refuses_what_the_schema_refuses(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["evaluate", "--train", "a", "--test", "b", "--topk", "c", *argv])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()[-1]) > len(message), err


# --- the config check, in-process -------------------------------------------------------


@pytest.mark.parametrize(
    "config, message",
    [
        ({"k": 10.0}, "config key k: 10.0 is not an integer"),
        ({"k": True}, "config key k: True is not an integer"),
        ({"k": 0}, "config key k: 0 is less than the minimum of 1"),
        ({"seed": -1}, "config key seed: -1 is less than the minimum of 0"),
        ({"seed": 2**32}, "config key seed: 4294967296 is greater than the maximum"),
        ({"measures": {"epsilon": math.nan}}, "config key measures.epsilon: nan is not a finite"),
        ({"uncertainty": {"level": 1}}, "config key uncertainty.level: 1 is not less than 1"),
        ({"training": {"epochs": 3.0}}, "config key training.epochs: 3.0 is not of type"),
        ({"training": {"train_batch_size": 0}}, "training.train_batch_size: 0 is less than"),
        ({"preprocessing": {"test_share": 0.5}}, "preprocessing.test_share: 0.5 is greater"),
        ({"plots": {"dpi": 100000}}, "config key plots.dpi: 100000 is greater than"),
        ({"plots": {"font_scale": math.inf}}, "config key plots.font_scale: inf is not of type"),
        ({"datasets": ["../../../escaped"]}, "datasets[0]: '../../../escaped' is not a usable"),
        ({"datasets": ["a/b"]}, "config key datasets[0]: 'a/b' is not a usable dataset name"),
        ({"datasets": ["/abs"]}, "config key datasets[0]: '/abs' is not a usable dataset name"),
        (
            {"custom_datasets": {"../x": {"path": "x.csv", "columns": {"user": "u", "item": "i"}}}},
            "config key custom_datasets.../x: '../x' is not a usable dataset name",
        ),
    ],
)
def test_the_config_check_names_the_key(config, message):
    assert message in errors(config), errors(config)


def test_every_numeric_key_of_the_schema_has_a_lower_bound():
    """A number without a bound is a value that can crash a job (a negative epoch count, a
    zero batch size): every one has a minimum, except min_rating (any rating scale) and
    feedback.equals (a value compared with the data, never a count)."""
    unbounded = []

    def walk(node, path):
        for key, child in (node.get("properties") or {}).items():
            walk(child, f"{path}.{key}" if path else key)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            walk(extra, f"{path}.*")
        items = node.get("items")
        if isinstance(items, dict):
            walk(items, f"{path}[]")
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if {"integer", "number"} & set(types):
            if "minimum" not in node and "exclusiveMinimum" not in node:
                unbounded.append(path)

    walk(SCHEMA, "")
    assert sorted(unbounded) == [
        "custom_datasets.*.feedback.equals",
        "custom_datasets.*.min_rating",
        "preprocessing.min_rating",
    ], unbounded


def test_good_names_and_values_pass():
    good = {
        "datasets": ["ml-100k", "my_data.v2"],
        "custom_datasets": {"my_data.v2": {"path": "x.csv", "columns": {"user": "u", "item": "i"}}},
        "k": 20,
        "seed": 0,
        "measures": {"epsilon": 1, "gamma": 0},
        "uncertainty": {"resamples": 0, "level": 0.5},
    }
    assert errors(good) == ""


# --- duplicate keys and tags in the YAML files the workflow reads -------------------------


def test_a_key_given_twice_is_named_with_both_lines(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("measures:\n  epsilon: 0.1\nk: 5\nmeasures:\n  gamma: 1\n")
    with pytest.raises(InputError) as error:
        yamlfile.load(path)
    assert str(error.value) == f"{path}: key 'measures' is given twice (lines 1 and 4); keep one"


def test_a_nested_key_given_twice_is_named(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("custom_datasets:\n  mine:\n    path: a.csv\n  mine:\n    path: b.csv\n")
    assert schema.duplicate_key_errors([path]) == [
        f"{path}: key 'mine' is given twice (lines 2 and 4); keep one"
    ]


def test_a_python_tag_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text("BPR: !!python/object/apply:os.system ['touch pwned']\n")
    with pytest.raises(InputError) as error:
        grids.load_grid(path)
    message = str(error.value)
    assert message.startswith(f"{path}: line 1: the tag !!python/object/apply:os.system"), message
    assert "\n" not in message
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "text, start",
    [
        # FullLoader (Snakemake's, through YTE) builds a reference to an imported name
        ("k: !!python/name:os.system\n", "line 1: the tag !!python/name:os.system is refused"),
        ("k: !!python/tuple [1, 2]\n", "line 1: the tag !!python/tuple is refused"),
        # YTE ran the ?-expression while Snakemake loaded the file: refused, said so
        ("__use_yte__: true\nk: ?5 + 5\n", "__use_yte__ made Snakemake read this file as a YTE"),
    ],
)
def test_a_config_file_snakemake_accepted_is_refused_naming_the_file(tmp_path, text, start):
    """What Snakemake's loader lets through of a --configfile is refused by the Snakefile's
    check, naming the file; the same file without the tag or the template passes."""
    path = tmp_path / "run.yaml"
    path.write_text(text)
    found = schema.duplicate_key_errors([path])
    assert len(found) == 1 and found[0].startswith(f"{path}: {start}"), found
    path.write_text("k: 5\n")
    assert schema.duplicate_key_errors([path]) == []


def test_a_grid_with_a_model_twice_is_refused(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text("BPR:\n  learning_rate: [0.01]\nBPR:\n  learning_rate: [0.1]\n")
    with pytest.raises(InputError, match=r"key 'BPR' is given twice \(lines 1 and 3\)"):
        grids.load_grid(path)


# --- stats.json, read when the workflow is parsed ---------------------------------------


@pytest.mark.parametrize(
    "text", ['{"users": 120, "items": 6', "garbage", '{"users": 1}', '{"users": "x"}', ""]
)
def test_a_damaged_stats_file_is_named_with_its_rebuild(tmp_path, text):
    path = tmp_path / "stats.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        costs.read_stats(path)
    message = str(error.value)
    assert message.startswith(f"{path}: truncated or unreadable stats file"), message
    assert message.endswith(f"rm {path} && snakemake {path}") and "\n" not in message


def test_k_above_the_items_is_refused_naming_both():
    with pytest.raises(ValueError) as error:
        config_bounds.check_items(100000, 610, "ml-100k (results/ml-100k/data/stats.json)")
    assert str(error.value) == (
        "config key k: 100000 is more than the 610 items of ml-100k "
        "(results/ml-100k/data/stats.json); give k <= 610"
    )
    config_bounds.check_items(610, 610, "x")


def test_stats_counts_are_read(tmp_path):
    path = tmp_path / "stats.json"
    path.write_text(json.dumps({"users": 3, "items": 4, "train": 5, "test_users": 2, "x": 1.5}))
    assert costs.read_stats(path) == {"users": 3, "items": 4, "train": 5, "test_users": 2}


# --- one real `snakemake -n` per kind of error ------------------------------------------

STATS = {"users": 120, "items": 610, "train": 5625, "test_users": 15}
# The outputs up to one model's lists, oldest first (as the jobs would write them).
FAKE_RUN = [
    ["data/preprocessed.parquet"],
    ["data/ml-100k.train.inter", "data/ml-100k.valid.inter", "data/ml-100k.test.inter"],
    ["data/stats.json", "models/dataset.pth"],
    ["models/UserKNN/grid/0/valid.json", "models/UserKNN/grid/0/model.pth"],
    ["models/UserKNN/best.json", "models/UserKNN/tuning.tsv"],
    [
        "models/UserKNN/topk.parquet",
        "models/UserKNN/recbole_test.json",
        "models/UserKNN/recbole_fairness.json",
    ],
]


def dry_run(work, *args: str):
    proc = snakemake(work, "-n", *args, check=False)
    return proc, proc.stdout + proc.stderr


@pytest.fixture()
def work(tmp_path, tiny_ml100k):
    """A run folder whose config trains UserKNN on the tiny ml-100k, and whose results hold
    (placeholder) outputs up to UserKNN's lists, each newer than its inputs."""
    work = make_workdir(tmp_path / "run")
    (work / "grid.yaml").write_text("UserKNN: {k: [20]}\n")
    config = {
        "dataset_options": {"ml-100k": {"path": str(tiny_ml100k)}},
        "models": ["UserKNN"],
        "grid": "grid.yaml",
    }
    (work / "c.yaml").write_text(yaml.safe_dump(config))
    raw = [tiny_ml100k, *tiny_ml100k.iterdir()]
    start = max(p.stat().st_mtime for p in raw)
    assert start < time.time()
    for age, files in enumerate(FAKE_RUN, start=1):
        for name in files:
            path = work / "results/ml-100k" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(STATS) if name.endswith("stats.json") else "x")
            when = min(start + 0.1 * age, time.time())
            os.utime(path, (when, when))
    return work


# Config errors the Snakefile's first call (schema.check_config) finds, checked in-process
# on the file as Snakemake loads it; the dry runs below check the wiring once per kind.
@pytest.mark.parametrize(
    "config, message",
    [
        (
            "datasets: [../../../escaped]\n",
            "config key datasets[0]: '../../../escaped' is not a usable dataset name",
        ),
        (
            "measures:\n  epsilon: 0.1\nk: 5\nmeasures:\n  gamma: 1\n",
            "run.yaml: key 'measures' is given twice (lines 1 and 4); keep one",
        ),
        ("seed: -1\n", "config key seed: -1 is less than the minimum of 0"),
    ],
)
def test_check_config_names_the_input(tmp_path, config, message):
    path = tmp_path / "run.yaml"
    path.write_text(config)
    defaults = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    loaded = {**defaults, **yaml.safe_load(config)}
    with pytest.raises(InputError) as error:
        schema.check_config(loaded, REPO / "config" / "config.schema.yaml", [path])
    assert message in str(error.value)


# One dry run per kind of error (a Snakemake process: the workflow stage): one of ours (a
# duplicate key: the Snakefile hands the --configfile files to check_config), one tag that
# Snakemake's loader builds and the Snakefile's check refuses, and one of Snakemake's own (a
# tag its loader refuses, before the workflow runs: its message names no file; no code runs).
@pytest.mark.parametrize(
    "config, message",
    [
        (
            "measures:\n  epsilon: 0.1\nk: 5\nmeasures:\n  gamma: 1\n",
            "run.yaml: key 'measures' is given twice (lines 1 and 4); keep one",
        ),
        ("k: !!python/object/apply:os.mkdir [pwned]\n", "Config file is not valid JSON or YAML"),
        ("k: !!python/name:os.mkdir\n", "run.yaml: line 1: the tag !!python/name:os.mkdir is"),
    ],
)
@pytest.mark.slow
def test_a_dry_run_stops_at_parse_time_naming_the_input(tmp_path, config, message):
    work = make_workdir(tmp_path / "run")
    (work / "run.yaml").write_text(config)
    proc, output = dry_run(work, "--configfile", "run.yaml")
    assert proc.returncode != 0 and message in output, output[-3000:]
    assert "jobs" not in output.split(message)[0].lower().split("job stats")[-1][-200:]
    assert not (work / "results").exists()
    assert not (work / "pwned").exists()


@pytest.mark.slow
def test_a_tag_in_the_workflows_own_config_file_is_named(tmp_path):
    """config/config.yaml (the Snakefile's configfile, the file a user edits) is read
    strictly before Snakemake loads it: a !!python/object tag stops the dry run in one line
    naming the file, the line and the tag, and its call never runs."""
    work = tmp_path / "run"
    work.mkdir()
    (work / "config").mkdir()
    text = (REPO / "config" / "config.yaml").read_text()
    (work / "config" / "config.yaml").write_text(
        text + "\nmeasures_extra: !!python/object/apply:os.mkdir [pwned]\n"
    )
    (work / "config" / "config.schema.yaml").symlink_to(REPO / "config" / "config.schema.yaml")
    make_workdir(work)
    lines = text.count("\n") + 2
    proc, output = dry_run(work)
    expected = (
        f"config/config.yaml: line {lines}: the tag !!python/object/apply:os.mkdir is refused"
    )
    assert proc.returncode != 0 and expected in output, output[-3000:]
    assert "Config file is not valid JSON or YAML" not in output
    assert not (work / "pwned").exists() and not (work / "results").exists()


@pytest.mark.slow
def test_snakemakes_refusal_of_a_configfile_tag_is_named_only_by_verbose(tmp_path):
    """docs/bad-inputs.md, honestly: Snakemake loads a --configfile before any code of the
    workflow runs and refuses a !!python/object tag without naming the file (nothing the
    workflow can change); with --verbose its traceback holds PyYAML's line naming the file,
    the line and the tag. The tag's call never runs."""
    work = make_workdir(tmp_path / "run")
    (work / "run.yaml").write_text("k: !!python/object/apply:os.mkdir [pwned]\n")
    proc, output = dry_run(work, "--configfile", "run.yaml")
    assert proc.returncode != 0 and "run.yaml" not in output.split("Config file is not")[-1]
    proc, output = dry_run(work, "--configfile", "run.yaml", "--verbose")
    assert proc.returncode != 0, output[-3000:]
    assert (
        "could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.mkdir'" in output
    ), output[-3000:]
    assert re.search(r'in ".*run\.yaml", line 1, column 4', output), output[-3000:]
    assert not (work / "pwned").exists() and not (work / "results").exists()


@pytest.mark.slow
def test_a_missing_qk_video_file_is_named_by_a_dry_run_and_stops_a_run(tmp_path):
    """QK-video.csv, which the user must place, is named at parse time: a dry run (and the
    plan, which needs no data) says so and goes on; a run stops before any job."""
    work = make_workdir(tmp_path / "run")
    (work / "run.yaml").write_text("datasets: [qk-video]\n")
    message = "resources/raw/qk-video/QK-video.csv: not found. QK-video"
    proc, output = dry_run(work, "--configfile", "run.yaml")
    assert proc.returncode == 0 and message in output and "A run stops here" in output
    run = snakemake(work, "--cores", "1", "--configfile", "run.yaml", check=False)
    said = run.stdout + run.stderr
    assert run.returncode != 0 and message in said, said[-3000:]
    assert not (work / "results").exists()


@pytest.mark.slow
def test_a_damaged_stats_file_stops_every_command_with_a_rebuild_of_just_it(work):
    stats = work / "results/ml-100k/data/stats.json"
    stats.write_text('{"users": 120, "ite')
    proc, output = dry_run(work, "--configfile", "c.yaml")
    assert proc.returncode != 0, output[-3000:]
    line = next(x for x in output.splitlines() if "truncated or unreadable stats file" in x)
    assert line.startswith("results/ml-100k/data/stats.json: "), line
    assert "JSONDecodeError" not in output.replace(line, ""), output[-3000:]
    remove, rebuild = line.split("rebuild just it: ")[1].split(" && ")
    assert shlex.split(remove) == ["rm", "results/ml-100k/data/stats.json"]
    stats.unlink()
    command = shlex.split(rebuild)
    assert command[0] == "snakemake"
    proc, output = dry_run(work, *command[1:], "--configfile", "c.yaml")
    assert proc.returncode == 0 and scheduled(output) == {"stats": 1}, output[-3000:]


@pytest.mark.slow
def test_k_above_the_items_stops_a_dry_run_once_stats_json_exists(work):
    (work / "k.yaml").write_text("k: 1000\n")
    proc, output = dry_run(work, "--configfile", "c.yaml", "k.yaml")
    message = (
        "config key k: 1000 is more than the 610 items of ml-100k "
        "(results/ml-100k/data/stats.json); give k <= 610"
    )
    assert proc.returncode != 0 and message in output, output[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, rule",
    [
        ("models/UserKNN/topk.parquet", "topk"),
        ("models/UserKNN/grid/0/model.pth", "tune"),
        ("models/UserKNN/best.json", "select"),  # a bad point or checkpoint: this rebuild
    ],
)
def test_the_damaged_file_rebuild_command_schedules_exactly_its_job(work, path, rule):
    path = f"results/ml-100k/{path}"
    message = layout.explain(io.damaged(path, "parquet", ValueError("truncated")))
    command = shlex.split(message.split("rebuild it: ")[1])
    assert command[0] == "snakemake", message
    proc, output = dry_run(work, *command[1:], "--configfile", "c.yaml")
    assert proc.returncode == 0 and scheduled(output) == {rule: 1}, output[-3000:]
    # the form it replaces read the path as a second --forcerun value: every rule after topk
    proc, output = dry_run(work, "--forcerun", rule, path, "--configfile", "c.yaml")
    assert len(scheduled(output)) > 1


# --- data files: one line naming the file and the line or field ---------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        (b"user_id:token\titem_id:token\trating:float\n1\t2\t3\n1\t5\n", "line 3 has 2 fields"),
        (b"user_id:token\titem_id:token\n1\t2\n1\t\xe9t\n", "line 3: byte 0xe9 is not UTF-8"),
        (b"user_id:token\titem_id:token\n1\t2\n1\t3\t4\n", "line 3 has 3 fields, the header 2"),
        (
            b"user_id:token\titem_id:token\trating:float\n1\t2\tgood\n",
            "line 2: field 'rating' is 'good', not a number",
        ),
    ],
)
def test_a_bad_inter_file_is_named_with_its_line(tmp_path, body, message, capsys):
    path = tmp_path / "d.train.inter"
    path.write_bytes(body)
    with pytest.raises(InputError) as error:
        io.read_inter(path)
    assert str(error.value).startswith(f"{path}: {message}"), error.value
    (tmp_path / "d.test.inter").write_text("user_id:token\titem_id:token\n1\t2\n")
    (tmp_path / "k.tsv").write_text("user_id\titem_id\trank\n1\t2\t1\n")
    argv = ["--train", str(path), "--test", str(tmp_path / "d.test.inter")]
    assert main(["evaluate", *argv, "--topk", str(tmp_path / "k.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"userfair: error: {error.value}", err


@pytest.mark.parametrize(
    "doc, problem",
    [
        ({"point": 0, "checkpoint": "x.pth"}, "field 'params' is missing"),
        ({"params": [], "checkpoint": "x.pth"}, "field 'params' is a list"),
        ([1, 2], "it holds a list, not a mapping"),
    ],
)
def test_a_best_json_of_the_wrong_shape_stops_topk_naming_it(tmp_path, doc, problem):
    path = tmp_path / "results/ml-100k/models/BPR/best.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as error:
        steps.topk("ml-100k", "BPR", path, *[tmp_path] * 5, training={}, threads=1)
    assert layout.explain(error.value) == (
        f"{path}: not a best.json file ({problem}); written by rule select, rebuild it: "
        f"snakemake --force {path}"
    )


def test_k_above_the_items_stops_recbole_dataset_before_any_training(tmp_path, tiny_ml100k):
    split = write_seeded_split(tiny_ml100k, tmp_path / "split", "ml-100k", 0)
    items = set()
    for part in ("train", "valid", "test"):
        items |= set(io.read_inter(split / f"ml-100k.{part}.inter")["item_id"])
    training = {"eval_batch_size": 4096, "seed": 1, "k": len(items) + 1}
    out = tmp_path / "dataset.pth"
    with pytest.raises(ValueError) as error:
        steps.recbole_dataset("ml-100k", split, tmp_path / "build", out, training=training)
    assert str(error.value) == (
        f"config key k: {len(items) + 1} is more than the {len(items)} items of ml-100k "
        f"(the split in {split}); give k <= {len(items)}"
    )
    assert not out.exists()


def test_every_test_docs_bad_inputs_names_exists():
    text = (REPO / "docs" / "bad-inputs.md").read_text()
    named = re.findall(r"`(?:(tests/test_\w+\.py)::)?(test_\w+)`", text)
    assert len(named) > 15
    for path, test in named:
        files = [REPO / path] if path else [REPO / "tests" / "runs" / "test_bad_inputs.py"]
        assert any(f"def {test}(" in f.read_text() for f in files), (path, test)
