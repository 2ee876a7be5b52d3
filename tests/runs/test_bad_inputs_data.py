"""The bad inputs of docs/bad-inputs.md that the data, the results folder or the command
line bring (non-finite numbers, empty files, ratings all below min_rating, a k above the
items, a dataset name too long for a file name, every pickle protocol of a crafted .pth, a
best.json pointing elsewhere, negative counts in stats.json, incomplete rows given to
`userfair evaluate`): each stopped with one line naming the file, key or field."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle

import pandas as pd
import pytest
import yaml

from userfair.cli import main
from userfair.files import io
from userfair.files.io import InputError
from userfair.workflow import catalogue, costs, download, layout, rawfiles, schema, tuning
from userfair.workflow import preprocess as data
from userfair.workflow.steps import data as data_steps

from conftest import REPO, make_workdir, snakemake

SCHEMA = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())


def declared(tmp_path, body: str, **spec):
    """A custom dataset ``mine`` of a CSV file holding ``body``."""
    path = tmp_path / "mine.csv"
    path.write_text(body)
    columns = {"user": "u", "item": "i", "rating": "r", "timestamp": "t"}
    spec = {"min_rating": 3, **spec}
    entry = catalogue.declare("mine", {"path": str(path), "columns": columns, **spec})
    return entry, path


# --- non-finite numbers, empty files, every rating below min_rating --------------------


@pytest.mark.parametrize(
    "row, column, held",
    [
        ("1,2,inf,5", "r", "inf"),
        ("1,2,-inf,5", "r", "-inf"),
        ("1,2,4,inf", "t", "inf"),
        ("1,2,4,nan", "t", "nan"),
    ],
)
def test_a_non_finite_rating_or_timestamp_is_refused_naming_its_row(tmp_path, row, column, held):
    entry, path = declared(tmp_path, f"u,i,r,t\n1,1,4,1\n{row}\n2,2,4,3\n")
    with pytest.raises(InputError) as error:
        rawfiles.read_interactions(entry, path)
    message = str(error.value)
    assert message.startswith(f"{path}: column '{column}' must hold finite numbers; data row 2"), (
        message
    )
    assert held in message and "\n" not in message


def test_an_empty_data_file_is_named_as_empty_not_blamed_on_the_separator(tmp_path):
    entry, path = declared(tmp_path, "")
    with pytest.raises(InputError) as error:
        rawfiles.read_interactions(entry, path)
    assert str(error.value) == (
        f"{path}: the file is empty (the raw interactions of mine; config "
        "custom_datasets.mine.path): expected a header line, then one interaction a line"
    )


def test_a_header_without_rows_is_named(tmp_path):
    entry, path = declared(tmp_path, "u,i,r,t\n")
    with pytest.raises(InputError, match=r"mine\.csv: no interactions \(a header and no data"):
        rawfiles.read_interactions(entry, path)


@pytest.mark.parametrize("own", [None, 4.5])
def test_every_rating_below_min_rating_names_the_key_not_the_split(tmp_path, own):
    entry, path = declared(tmp_path, "u,i,r,t\n1,1,1,1\n1,2,2.5,2\n2,1,2,3\n", min_rating=own or 3)
    if own is None:  # a catalogue dataset's min_rating is the config's
        entry = dataclasses.replace(entry, min_rating=None)
    with pytest.raises(InputError) as error:
        data.preprocess_file(entry, path, min_rating=own or 3, core=1)
    key = "preprocessing.min_rating" if own is None else "custom_datasets.mine.min_rating"
    assert str(error.value) == (
        f"{path}: every rating is below min_rating {own or 3} (they range from 1 to 2.5); "
        f"lower config key {key} to the data's scale"
    )


# --- k against the items: before the split exists, and as soon as the items are known ---


def test_k_above_the_items_stops_preprocess_and_split_before_writing(tmp_path):
    entry, path = declared(
        tmp_path, "u,i,r,t\n" + "".join(f"{u},{i},4,{i}\n" for u in range(4) for i in range(3))
    )
    out = tmp_path / "results/mine/data/preprocessed.parquet"
    out.parent.mkdir(parents=True)
    spec = {
        "path": str(path),
        "columns": {"user": "u", "item": "i", "rating": "r", "timestamp": "t"},
        "min_rating": 3,
    }
    with pytest.raises(ValueError) as error:
        data_steps.preprocess("mine", {"mine": spec}, str(path), out, min_rating=3, core=1, k=4)
    assert str(error.value) == (
        f"config key k: 4 is more than the 3 items of mine (after preprocessing {path}); "
        "give k <= 3"
    )
    assert not out.exists()
    data_steps.preprocess("mine", {"mine": spec}, str(path), out, min_rating=3, core=1, k=3)
    outs = {part: tmp_path / f"mine.{part}.inter" for part in data.SPLITS}
    options = dict(temporal=True, seed=0, valid_share=0.25, test_share=0.25, min_train=1)
    with pytest.raises(ValueError, match=r"config key k: 4 is more than the 3 items of the split"):
        data_steps.split(out, outs, **options, protocol="per-user", k=4)
    assert not any(p.exists() for p in outs.values())
    data_steps.split(out, outs, **options, protocol="per-user", k=3)
    assert all(p.exists() for p in outs.values())


def test_the_catalogue_knows_an_upper_bound_of_its_items_only_for_its_own_file():
    assert catalogue.items_bound("ml-100k", {}) == 1682
    assert catalogue.items_bound("ml-100k", {"ml-100k": {"path": "elsewhere"}}) is None
    assert catalogue.items_bound("qk-video", {}) is None
    for name, entry in catalogue.CATALOGUE.items():
        if entry.raw_items is not None:
            assert entry.raw_items >= entry.shape.items, name


@pytest.mark.slow
def test_k_above_the_catalogues_items_stops_a_fresh_dry_run_before_any_job(tmp_path):
    """A fresh folder, the catalogue's own ml-100k: no stats.json, no split, yet k is
    refused when the workflow is parsed (it ran preprocess, split, stats and the similarity
    jobs before recbole_dataset refused it)."""
    work = make_workdir(tmp_path / "run")
    (work / "k.yaml").write_text("k: 100000\n")
    proc = snakemake(work, "-n", "--configfile", "k.yaml", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    assert (
        "config key k: 100000 is more than the 1682 items of ml-100k (the catalogue's raw "
        "file, before preprocessing); give k <= 1682"
    ) in output, output[-3000:]
    assert "Job stats" not in output and not (work / "results").exists()


# --- a dataset name too long for a file name --------------------------------------------


def _declared(name: str, **config) -> dict:
    return {
        "datasets": [name],
        "custom_datasets": {name: {"path": "x.csv", "columns": {"user": "u", "item": "i"}}},
        **config,
    }


@pytest.mark.parametrize(
    "config",
    [{}, {"models": ["BPR"]}, {"models": ["SLIMElastic"], "training": {"replicates": 12},
                                "measures": {"scatter": 1000}}],
)  # fmt: skip
def test_a_dataset_name_too_long_for_a_file_name_is_refused_at_parse_time(config):
    """The longest name that fits is derived from the layout's longest file name with the
    run's models, replicates and scatter (layout.NAMED_COMPONENTS), not a guessed reserve:
    that name passes, one byte more is refused naming the file name it would make."""
    _, reserve = schema.longest_file_name("", config)
    most = layout.COMPONENT_BYTES - reserve
    assert "\n".join(schema.config_errors(_declared("d" * most, **config), SCHEMA)) == ""
    name = "d" * (most + 1)
    errors = schema.config_errors(_declared(name, **config), SCHEMA)
    assert errors[0].startswith(
        f"config key custom_datasets.{name}: the dataset name is {most + 1} bytes long, and "
        f"the longest file name this run makes with it would be 256 bytes ("
    ), errors
    assert errors[0].endswith(
        f"over the 255 a file name holds; give a name of at most {most} bytes"
    )
    assert any(
        e.startswith(f"config key datasets[0]: the dataset name is {most + 1}") for e in errors
    )
    longest, size = schema.longest_file_name(name, config)
    assert size == 256 and len(longest.encode()) == 256 and name in longest


def test_the_longest_file_name_follows_the_run():
    """More replicates, more scatter jobs or a longer model name leave less room for the
    name; the file names are those the rules and RecBole make."""
    _, plain = schema.longest_file_name("d", {"models": ["BPR"]})
    _, scattered = schema.longest_file_name("d", {"models": ["BPR"], "measures": {"scatter": 1000}})
    _, longer = schema.longest_file_name("d", {"models": ["SLIMElastic"]})
    assert scattered > plain and longer > plain
    longest, _ = schema.longest_file_name(
        "d", {"models": ["SLIMElastic"], "measures": {"scatter": 64}}
    )
    assert longest == "d_SLIMElastic_1_64-of-64.log"  # results/logs/replicate_sums/...


def test_the_catalogues_item_count_of_ml_100k_is_counted_from_its_file():
    """The one catalogue item count whose raw file ships with the environment (recbole's
    ml-100k) is counted; the others are their datasets' published counts (catalogue.py)."""
    inter = io.read_inter(download.recbole_ml100k_dir() / "ml-100k.inter")
    assert catalogue.CATALOGUE["ml-100k"].raw_items == inter["item_id"].nunique()


# --- every pickle protocol of a crafted model.pth ----------------------------------------


class _Runs:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", range(6))
def test_a_crafted_pickle_of_every_protocol_is_refused_by_name(tmp_path, protocol):
    path = tmp_path / "results/D/models/M/grid/0/model.pth"
    path.parent.mkdir(parents=True)
    marker = tmp_path / "ran"
    path.write_bytes(pickle.dumps(_Runs(marker), protocol=protocol))
    with pytest.raises(io.UnsafeFileError) as caught:
        io.read_pth(path)
    text = layout.explain(caught.value)
    assert text.startswith(f"{path}: refused, not loaded: it names the Python global posix.system")
    assert "weights_only" not in text and "likely succeed" not in text and "\n" not in text
    assert text.endswith(f"written by rule tune, rebuild it: snakemake --force {path}")
    assert not marker.exists()


def test_a_damaged_pth_is_named_without_torchs_advice_to_run_it(tmp_path):
    path = tmp_path / "results/D/models/M/grid/0/model.pth"
    path.parent.mkdir(parents=True)
    path.write_bytes(pickle.dumps({"a": [1, 2]}, protocol=5)[:-3] + b"\x95zzz")
    with pytest.raises(io.DamagedFileError) as caught:
        io.read_pth(path)
    text = layout.explain(caught.value)
    assert text.startswith(f"{path}: truncated or unreadable pth file"), text
    assert "weights_only" not in text and "likely succeed" not in text


# --- best.json: confined to its model folder, its values checked ------------------------


def best_file(tmp_path, **fields):
    path = tmp_path / "results/ml-100k/models/BPR/best.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "params": {"learning_rate": 0.01},
        "point": 0,
        "checkpoint": str(path.parent / "grid/0/model.pth"),
        **fields,
    }
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"checkpoint": "/etc/passwd"}, "field 'checkpoint' is '/etc/passwd', not "),
        (
            {"checkpoint": "results/ml-100k/models/BPR/grid/0/../../../../../../etc/passwd"},
            "field 'checkpoint' is 'results/ml-100k/models/BPR/grid/0/../../",
        ),
        ({"params": {"learning_rate": "0.01"}}, "field 'params': model 'BPR', key "),
        ({"params": {"no_such_key": 1}}, "field 'params': model 'BPR': unknown grid key"),
        ({"point": "x"}, "field 'point' is a str"),
        ({"point": -1}, "field 'point' is -1, not a grid point number"),
        ({"point": 1}, "field 'checkpoint' is "),
    ],
)
def test_a_best_json_pointing_elsewhere_or_holding_bad_values_is_one_line(
    tmp_path, fields, problem
):
    path = best_file(tmp_path, **fields)
    with pytest.raises(io.FileError) as error:
        tuning.read_best(path, "BPR")
    text = layout.explain(error.value)
    assert text.startswith(f"{path}: not a best.json file ({problem}"), text
    assert text.endswith(f"written by rule select, rebuild it: snakemake --force {path}")
    assert "\n" not in text


def test_a_good_best_json_is_read(tmp_path):
    path = best_file(tmp_path)
    assert tuning.read_best(path, "BPR")["params"] == {"learning_rate": 0.01}


# --- stats.json: negative counts are damaged data, not a bad k ---------------------------


@pytest.mark.parametrize("field", ["items", "users", "train", "test_users"])
def test_negative_counts_in_stats_json_are_damaged_data(tmp_path, field):
    path = tmp_path / "stats.json"
    counts = {"users": 120, "items": 610, "train": 5625, "test_users": 15, field: -5}
    path.write_text(json.dumps(counts))
    with pytest.raises(InputError) as error:
        costs.read_stats(path)
    message = str(error.value)
    assert message.startswith(f"{path}: damaged stats file (field '{field}' is -5"), message
    assert "config key k" not in message and message.endswith(f"rm {path} && snakemake {path}")


# --- userfair evaluate: an empty TRAIN file, a test row without its item ----------------


def write_inter(path, rows):
    frame = pd.DataFrame(rows, columns=["user_id", "item_id"])
    io.write_inter(frame, path)
    return path


def test_userfair_evaluate_names_an_empty_train_file(tmp_path, capsys):
    train = tmp_path / "train.inter"
    train.write_text("user_id:token\titem_id:token\n")
    test = write_inter(tmp_path / "test.inter", [("1", "2"), ("2", "3")])
    topk = tmp_path / "k.tsv"
    topk.write_text("user_id\titem_id\trank\n1\t3\t1\n2\t2\t1\n")
    argv = ["evaluate", "--train", str(train), "--test", str(test), "--topk", str(topk)]
    assert main([*argv, "--k", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"userfair: error: {train}: no interactions; TRAIN holds"), err


@pytest.mark.parametrize(
    "row, where", [(b"3\n", "line 3 has 1 fields"), (b"3\t\n", "line 3: field 'item_id' is empty")]
)
def test_userfair_evaluate_refuses_a_test_row_without_its_item(tmp_path, capsys, row, where):
    test = tmp_path / "test.inter"
    test.write_bytes(b"user_id:token\titem_id:token\n1\t2\n" + row)
    with pytest.raises(InputError) as error:
        io.read_inter(test)
    assert str(error.value).startswith(f"{test}: {where}"), error.value
    train = write_inter(tmp_path / "train.inter", [("1", "3"), ("3", "2")])
    topk = tmp_path / "k.tsv"
    topk.write_text("user_id\titem_id\trank\n1\t3\t1\n3\t3\t1\n")
    argv = ["evaluate", "--train", str(train), "--test", str(test), "--topk", str(topk)]
    assert main([*argv, "--k", "1"]) == 2
    assert capsys.readouterr().err.strip() == f"userfair: error: {error.value}"
