"""A damaged file between rules is never consumed silently: a truncated or unreadable parquet,
npz, JSON or pth stops its reader with one line naming the file, the rule that writes it and
the command that rebuilds it (userfair.workflow.layout.PRODUCERS, from the layout the rules'
outputs read);
through Snakemake, a truncated model.pth stops the top-k export. The RecBole dataset built
once per split (rule recbole_dataset) gives the same results as a job's own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from userfair.files import io, runfiles
from userfair.files.io import DamagedFileError
from userfair.similarity import pairwise
from userfair.workflow import catalogue, layout

from conftest import REPO, copy_run, snakemake

DATASET = "tiny"


def test_a_file_of_a_used_rule_names_that_rule():
    """genre.npz is written by genre_similarity, a `use rule` of similarity for kind genre
    (so is its replicates' by replicate_genre_similarity): a damaged one names it."""
    text = "".join(p.read_text() for p in (REPO / "workflow" / "rules").rglob("*.smk"))
    for template, rule in layout.USED_RULES.items():
        base = layout.PRODUCERS[template.replace("genre.npz", "{kind}.npz")]
        assert f"use rule {base} as {rule} with:" in text
        assert layout.producer(template.format(dataset="d", replicate=1)) == rule
    assert layout.producer("results/d/similarity/jacc.npz") == "similarity"


def test_the_named_components_are_the_rules_file_names_with_the_dataset():
    """layout.NAMED_COMPONENTS, from which the longest dataset name is derived
    (schema.longest_file_name), is every file name of the rules' outputs and logs (the
    layout, which the rules read: tests/workflow/test_layout.py) that holds the dataset name
    beside other text, the download rule's raw file (catalogue.RAW_TEMPLATE) among them."""
    assert set(layout.NAMED_COMPONENTS) == {
        "{dataset}.item", "{dataset}.log", "{dataset}.pdf", "{dataset}.png", "{dataset}.rst",
        "{dataset}.train.inter", "{dataset}.valid.inter", "{dataset}.test.inter",
        "{dataset}.{suffix}", "{dataset}.{suffix}.log",
        "{dataset}_{kind}.log", "{dataset}_{model}.log", "{dataset}_{model}_{replicate}.log",
        "{dataset}_{model}_{replicate}_{scatteritem}.log", "{dataset}_{model}_{scatteritem}.log",
        "{dataset}_{replicate}.log", "{dataset}_{replicate}_{kind}.log",
        "{dataset}_{scatteritem}.log",
    }  # fmt: skip
    assert catalogue.RAW_TEMPLATE.split("/")[-1] in layout.NAMED_COMPONENTS


def test_a_rules_one_file_is_read_from_the_layout():
    """The parse-time checks (rules/common/checks.smk) read stats.json and
    preprocessed.parquet from the layout, not from literals of their own."""
    assert layout.template("stats") == "results/{dataset}/data/stats.json"
    assert layout.template("preprocess") == "results/{dataset}/data/preprocessed.parquet"
    for rule in ("tune", "no_such_rule"):  # two files; none
        with pytest.raises(ValueError, match=f"rule {rule} writes"):
            layout.template(rule)
    checks = (REPO / "workflow" / "rules" / "common" / "checks.smk").read_text()
    assert "results/{dataset}" not in checks  # no path template of its own


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def one_line_naming(error: Exception, path: Path, rule: str) -> None:
    """The library names the file; the workflow's explanation adds its rule and rebuild."""
    assert str(error).startswith(f"{path}: truncated or unreadable"), error
    assert "written by rule" not in str(error)  # the library knows no rule
    message = layout.explain(error)
    assert "\n" not in message, message
    assert message.startswith(f"{path}: truncated or unreadable"), message
    assert f"written by rule {rule}" in message, message
    assert message.endswith(f"snakemake --force {path}"), message


def write_parquet(path: Path) -> None:
    users, items = ["1", "2"] * 500, [str(i) for i in range(1000)]
    pd.DataFrame(
        {"user_id": users, "item_id": items, "rank": np.arange(1000) % 500 + 1}
    ).to_parquet(path)


def write_npz(path: Path) -> None:
    users = np.array([str(u) for u in range(40)])
    sim = np.random.default_rng(0).random((40, 40))
    pairwise.save(path, pairwise.Similarity(users, sim, 0.1, 0.0, 1.0))


def write_json(path: Path) -> None:
    io.write_json({"model": "x", "curve": list(range(200))}, path)


def write_pth(path: Path) -> None:
    torch.save({"state_dict": {"w": torch.arange(5000.0)}, "epoch": 3}, path)


KINDS = {
    # kind: (file under results/, writer, reader as the consuming job calls it, its rule)
    "parquet": (
        "tiny/models/BPR/topk.parquet",
        write_parquet,
        runfiles.read_run,
        "topk",
    ),
    "npz": (
        "tiny/similarity/cos.npz",
        write_npz,
        pairwise.load,
        "similarity",
    ),
    "json": ("tiny/models/BPR/grid/0/valid.json", write_json, io.read_json, "tune"),
    "pth": ("tiny/models/BPR/grid/0/model.pth", write_pth, io.read_pth, "tune"),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage"])
def test_a_damaged_file_stops_its_reader_naming_file_rule_and_command(
    kind, damage, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    relative, write, read, rule = KINDS[kind]
    path = Path("results") / relative
    path.parent.mkdir(parents=True)
    write(path)
    read(path)  # the intact file reads
    if damage == "truncated":
        truncate(path)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"\x00\xffnot a file of this kind" * 10)
    with pytest.raises(DamagedFileError) as caught:
        read(path)
    one_line_naming(caught.value, path, rule)


def test_a_file_of_no_rule_is_named_without_a_rule(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text("{")
    with pytest.raises(DamagedFileError, match=r"mine\.json: truncated or unreadable JSON") as e:
        io.read_json(path)
    assert "written by rule" not in layout.explain(e.value)
    best = tmp_path / "results/D/models/M/best.json"
    best.parent.mkdir(parents=True)
    best.write_text("{")
    with pytest.raises(DamagedFileError) as e:
        io.read_json(best)
    assert "written by rule select" in layout.explain(e.value)


def test_a_missing_file_says_which_rule_writes_it(tmp_path):
    path = tmp_path / "results/D/models/M/grid/0/model.pth"
    with pytest.raises(io.InputError, match=r"model\.pth: file not found") as e:
        io.read_pth(path)
    assert layout.explain(e.value) == (
        f"{path}: file not found; written by rule tune, rebuild it: snakemake --force {path}"
    )


# --- through Snakemake and RecBole ------------------------------------------------------------


@pytest.mark.slow
def test_a_truncated_checkpoint_stops_the_export_with_one_line(tmp_path, tiny_run):
    work = copy_run(tiny_run, tmp_path / "run").test_dir  # UserKNN's export, then truncated
    target = "results/ml-100k/models/UserKNN/topk.parquet"
    checkpoint = "results/ml-100k/models/UserKNN/grid/0/model.pth"
    truncate(work / checkpoint)
    proc = snakemake(work.parent, "--directory", ".test", target, "--cores", "2", check=False)
    assert proc.returncode != 0
    log = (work / "results/logs/topk/ml-100k/UserKNN.log").read_text()
    line = (
        f"{checkpoint}: truncated or unreadable pth file (RuntimeError: PytorchStreamReader "
        "failed reading zip archive"
    )
    assert line in log, log[-3000:]
    assert f"snakemake --force {checkpoint}" in log


@pytest.fixture(scope="module")
def split_dir(tiny_split):
    """The suite's shared seeded split (conftest ``tiny_split``, dataset ``tiny``)."""
    return tiny_split


@pytest.mark.slow
@pytest.mark.parametrize(
    "model, params",
    [
        ("BPR", {}),
        ("BPR", {"train_neg_sample_args": {"distribution": "popularity", "alpha": 0.5}}),
        ("MultiVAE", {}),
        ("UserKNN", {"k": 20}),
        ("NeuMF", {}),
    ],
)
def test_the_shared_dataset_gives_the_results_of_a_jobs_own(model, params, split_dir, tmp_path):
    """valid.json, model.pth and the top-k lists are the same whether the job builds its
    dataset or loads the one of rule recbole_dataset (re-targeted to its own sampling)."""
    from userfair.workflow import recbole_setup, recommenders, shared_dataset

    training = recbole_setup.Training(
        epochs=2, stopping_step=2, device="cpu", train_batch_size=256, seed=5
    )
    shared = tmp_path / "dataset.pth"
    shared_dataset.write_shared(
        shared_dataset.build_shared(split_dir, DATASET, tmp_path / "build", training), shared
    )
    runs = {}
    for name, source in (("own", None), ("shared", shared)):
        work = tmp_path / name
        record = recommenders.train_point(
            model, params, split_dir, DATASET, work, training, shared=source
        )
        record.pop("seconds")
        lists, test = recommenders.export_topk(
            model, params, work / "model.pth", split_dir, DATASET, tmp_path / f"x{name}",
            training, shared=source,
        )  # fmt: skip
        state = io.read_pth(work / "model.pth")["state_dict"]
        runs[name] = (record, lists, test, state)
    (a, lists_a, test_a, state_a), (b, lists_b, test_b, state_b) = runs["own"], runs["shared"]
    assert a == b
    pd.testing.assert_frame_equal(lists_a, lists_b, check_exact=True)
    assert test_a == test_b
    assert state_a.keys() == state_b.keys()
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)


@pytest.mark.slow
def test_a_point_that_changes_the_dataset_settings_builds_its_own(split_dir, tmp_path, caplog):
    import logging

    from userfair.workflow import recbole_setup, recommenders, shared_dataset

    training = recbole_setup.Training(epochs=1, device="cpu", seed=5)
    shared = tmp_path / "dataset.pth"
    shared_dataset.write_shared(
        shared_dataset.build_shared(split_dir, DATASET, tmp_path / "build", training), shared
    )
    with caplog.at_level(logging.INFO):
        recommenders.train_point(
            "BPR", {"eval_batch_size": 1000}, split_dir, DATASET, tmp_path / "p", training,
            shared=shared,
        )  # fmt: skip
    assert "built with other settings (eval_batch_size)" in caplog.text
