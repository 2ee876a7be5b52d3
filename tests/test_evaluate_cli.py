"""evaluate() and the `userfair evaluate` command: keys, agreement with the loops, inputs
from files, and every bad-input case."""

import dataclasses
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from userfair.cli import main
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import InputError, write_inter
from userfair.measures import NAMES as KEYS
from userfair.similarity import pairwise

import reference as ref
from measures_data import python_views, random_split, write_item_file

K = 10


def close(a, b):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


@pytest.fixture()
def split_files(tmp_path):
    """train/test .inter, topk .tsv and .parquet, and a .item file on disk."""
    train, test, topk, item_genres = random_split(5)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_csv(tmp_path / "topk.tsv", sep="\t", index=False)
    topk.to_parquet(tmp_path / "topk.parquet")
    write_item_file(tmp_path / "d.item", item_genres)
    return tmp_path, train, test, topk


@pytest.mark.parametrize("utility", ["precision", "ideal"])
def test_evaluate_matches_the_loops(split_files, utility):
    _, train, test, topk = split_files
    inputs = load_inputs(train, test, topk)
    result = evaluate(inputs, k=K, block_size=7, device="cpu", envy_utility=utility)
    assert list(result)[:18] == list(KEYS)
    assert set(result) == set(KEYS) | {"seconds", "conventions"}
    assert result["conventions"] == {
        "envy_utility": utility,
        "epsilon": 0.05,
        "gamma": 1.0,
        "uf_similarity": "raw",
        "puf_similarity": "min-max",
    }
    assert set(result["seconds"]) == set(KEYS) | {"similarity-cos", "similarity-jacc"}
    assert all(isinstance(result[key], float) for key in KEYS)
    lists, relevant, train_sets, all_train = python_views(inputs, train, test, topk)
    eff = ref.effectiveness(lists, relevant)
    cos, jacc = ref.cosine(train_sets), ref.jaccard(train_sets)
    expected = {name: sum(values) / len(values) for name, values in eff.items()}
    for name in ("P", "NDCG"):
        expected[f"SD-{name}"] = ref.sd(eff[name])
        expected[f"Gini-{name}"] = ref.gini(eff[name])
        expected[f"PUF-{name}-Cos"] = ref.puf(eff[name], cos)
        expected[f"PUF-{name}-Jacc"] = ref.puf(eff[name], jacc)
    expected.update(ref.envy(lists, relevant, utility=utility))
    expected["UF"] = ref.uf(lists, all_train, ref.jaccard_raw(train_sets))
    for key in KEYS:
        assert close(result[key], expected[key]), (key, result[key], expected[key])


def test_precomputed_similarities_give_the_same_scores(split_files, tmp_path):
    _, train, test, topk = split_files
    inputs = load_inputs(train, test, topk)
    rows = inputs.train_of_evaluated()
    for kind in ("cos", "jacc"):  # through the files, as the workflow does
        pairwise.save(tmp_path / f"{kind}.npz", pairwise.compute(kind, rows, inputs.users))
    given = {
        kind: pairwise.load(tmp_path / f"{kind}.npz", inputs.users) for kind in ("cos", "jacc")
    }
    given["cos"] = dataclasses.replace(given["cos"], seconds=2.5)
    computed = evaluate(inputs, device="cpu")
    reused = evaluate(inputs, similarities=given, device="torch-cpu")
    for key in KEYS:
        assert close(reused[key], computed[key]), key
    assert reused["seconds"]["similarity-cos"] == 2.5
    assert reused["seconds"]["similarity-jacc"] == given["jacc"].seconds > 0
    wrong = pairwise.Similarity(inputs.users[:2], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="similarities"):
        evaluate(inputs, similarities={"cos": wrong})


def test_unknown_envy_utility_is_an_error(split_files):
    _, train, test, topk = split_files
    with pytest.raises(ValueError, match="envy utility"):
        evaluate(load_inputs(train, test, topk), envy_utility="recall")


def test_gamma_mixes_genres_and_needs_them(split_files):
    path, train, test, topk = split_files
    plain = load_inputs(train, test, topk)
    with pytest.raises(ValueError, match="genres"):
        evaluate(plain, gamma=0.5)
    inputs = load_inputs(train, test, topk, item_features=path / "d.item")
    lists, _, train_sets, all_train = python_views(inputs, train, test, topk)
    item_genres = random_split(5)[3]  # the split of the fixture
    genres = sorted({g for gs in item_genres.values() for g in gs})
    sim_uf = ref.uf_similarity(
        ref.jaccard_raw(train_sets), ref.genre_js_similarity(train_sets, item_genres, genres), 0.5
    )
    result = evaluate(inputs, gamma=0.5, device="cpu")
    assert result["conventions"]["gamma"] == 0.5
    assert close(result["UF"], ref.uf(lists, all_train, sim_uf))
    assert close(result["PUF-P-Jacc"], evaluate(plain, device="cpu")["PUF-P-Jacc"])
    rows = inputs.train_of_evaluated()
    genre = pairwise.compute("genre", rows, inputs.users, inputs.genres)
    given = evaluate(plain, gamma=0.5, similarities={"genre": genre}, device="cpu")
    assert close(given["UF"], result["UF"])


def test_canonical_order_and_train_rows(split_files):
    _, train, test, topk = split_files
    inputs = load_inputs(train, test, topk)
    assert list(inputs.users) == sorted(test.user_id.unique())
    assert list(inputs.items) == sorted(set(train.item_id) | set(test.item_id))
    assert inputs.topk.shape == (len(inputs.users), K) and inputs.topk.dtype == np.int64
    for row, user in zip(inputs.train_rows, inputs.users):
        got = set(inputs.items[inputs.train[row].indices])
        assert got == set(train[train.user_id == user].item_id)
    first = topk[topk.user_id == inputs.users[0]].sort_values("rank").item_id.tolist()
    assert inputs.items[inputs.topk[0]].tolist() == first


def cli_args(path, topk_path, *extra: str) -> list[str]:
    """argv of `userfair evaluate` on the split files of ``path`` and ``topk_path``."""
    return [
        "evaluate",
        "--train",
        str(path / "d.train.inter"),
        "--test",
        str(path / "d.test.inter"),
        "--topk",
        str(topk_path),
        *extra,
    ]


@pytest.mark.parametrize("fmt", ["tsv", "parquet"])
def test_cli_json_equals_evaluate(split_files, capsys, fmt):
    path, train, test, topk = split_files
    code = main(cli_args(path, path / f"topk.{fmt}", "--json", "--device", "cpu"))
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    expected = evaluate(load_inputs(train, test, topk), device="cpu")
    assert list(printed) == list(KEYS) + ["seconds", "conventions"]
    assert printed["conventions"]["envy_utility"] == "precision"
    for key in KEYS:
        assert close(printed[key], expected[key]), key


def test_cli_envy_utility_ideal(split_files, capsys):
    path, train, test, topk = split_files
    argv = cli_args(path, path / "topk.tsv", "--json", "--envy-utility", "ideal")
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    inputs = load_inputs(train, test, topk)
    lists, relevant, _, _ = python_views(inputs, train, test, topk)
    expected = ref.envy(lists, relevant, utility="ideal")
    assert printed["conventions"]["envy_utility"] == "ideal"
    for key in ("ME", "MME", "PEU"):
        assert close(printed[key], expected[key]), key
    with pytest.raises(SystemExit):
        main(cli_args(path, path / "topk.tsv", "--envy-utility", "recall"))


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_cli_table_and_entry_point(split_files):
    path, _, _, _ = split_files
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "userfair"),
            "evaluate",
            "--train",
            str(path / "d.train.inter"),
            "--test",
            str(path / "d.test.inter"),
            "--topk",
            str(path / "topk.tsv"),
            "--item-features",
            str(path / "d.item"),
            "--gamma",
            "0.25",
            "--k",
            "5",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["measure", "value", "seconds"]
    assert [line.split()[0] for line in lines[1:19]] == list(KEYS)
    assert lines[-1] == (
        "conventions: envy_utility=precision, epsilon=0.05, gamma=0.25, "
        "uf_similarity=raw, puf_similarity=min-max"
    )


def bad_topk(topk: pd.DataFrame, case: str) -> pd.DataFrame:
    first = topk.user_id.iloc[0]
    if case == "missing user":
        return topk[topk.user_id != first]
    if case == "short list":
        return topk[~((topk.user_id == first) & (topk["rank"] == 10))]
    if case == "repeated item":
        bad = topk.copy()
        rows = bad.index[bad.user_id == first]
        bad.loc[rows[1], "item_id"] = bad.loc[rows[0], "item_id"]
        return bad
    if case == "unknown item":
        bad = topk.copy()
        bad.loc[bad.index[0], "item_id"] = "no-such-item"
        return bad
    if case == "bad rank":
        return topk.assign(rank=topk["rank"].astype(str).replace("3", "three"))
    raise AssertionError(case)


CASES = {
    "missing user": "field 'user_id' lacks 1 TEST user",
    "short list": "fewer than k=10",
    "repeated item": "field 'item_id' repeats item",
    "unknown item": "field 'item_id' names 1 item.*'no-such-item'",
    "bad rank": "field 'rank' must be an integer",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_rejects_bad_topk(split_files, capsys, case):
    path, _, _, topk = split_files
    bad_topk(topk, case).to_csv(path / "bad.tsv", sep="\t", index=False)
    code = main(cli_args(path, path / "bad.tsv"))
    assert code == 2
    err = capsys.readouterr().err
    assert "bad.tsv" in err
    assert re.search(CASES[case], err), err


def test_missing_columns_and_files_are_named(split_files, tmp_path):
    path, train, test, topk = split_files
    with pytest.raises(InputError, match=r"topk\.tsv.*'rank'"):
        topk.drop(columns="rank").to_csv(path / "topk.tsv", sep="\t", index=False)
        load_inputs(train, test, path / "topk.tsv")
    with pytest.raises(InputError, match="not found"):
        load_inputs(path / "nope.inter", test, topk)
    with pytest.raises(InputError, match=r"TRAIN.*'item_id'"):
        load_inputs(train.drop(columns="item_id"), test, topk)
    (path / "x.item").write_text("item_id:token\tname:token_seq\ni001\ta b\n")
    with pytest.raises(InputError, match=r"x\.item.*genre column"):
        load_inputs(train, test, topk, item_features=path / "x.item")


@pytest.mark.parametrize("users", [["a"], ["a", "b"]])
def test_one_or_two_users_give_nan_not_errors(users):
    train = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["1", "2", "3"]})
    test = pd.DataFrame({"user_id": users, "item_id": ["3"] * len(users)})
    topk = pd.DataFrame(
        {
            "user_id": [u for u in users for _ in range(2)],
            "item_id": ["1", "3"] * len(users),
            "rank": [1, 2] * len(users),
        }
    )
    result = evaluate(load_inputs(train, test, topk, k=2), k=2, device="cpu")
    assert result["P"] == 0.5 and result["SD-P"] == 0.0
    assert math.isnan(result["UF"])  # at most one pair: log(1) = 0 below
    pair_measures = ("ME", "MME", "PEU", "PUF-P-Cos", "PUF-NDCG-Jacc")
    assert all(math.isnan(result[key]) == (len(users) == 1) for key in pair_measures)


def test_an_item_seen_only_in_validation_is_accepted_with_valid(split_files, tmp_path, capsys):
    """RecBole ranks every item, so a list may hold an item of the valid split only: known
    with --valid (never relevant, no train column), an error without it."""
    path, train, test, topk = split_files
    topk = topk.copy()
    first = topk[topk["user_id"] == topk["user_id"].iloc[0]].sort_values("rank").index[-1]
    topk.loc[first, "item_id"] = "valid-only"
    topk.to_csv(path / "with_valid_item.tsv", sep="\t", index=False)
    valid = pd.DataFrame({"user_id": [str(topk["user_id"].iloc[0])], "item_id": ["valid-only"]})
    write_inter(valid, path / "d.valid.inter")
    args = cli_args(path, path / "with_valid_item.tsv")
    capsys.readouterr()
    assert main(args) == 2
    error = capsys.readouterr().err.strip()
    assert "absent from TRAIN and TEST" in error and "(--valid D.valid.inter" in error
    assert len(error.splitlines()) == 1
    assert main(args + ["--valid", str(path / "d.valid.inter")]) == 0
    inputs = load_inputs(train, test, topk, valid=valid)
    column = list(inputs.items).index("valid-only")
    assert inputs.train[:, column].nnz == 0 and inputs.relevant[:, column].nnz == 0
    assert column in inputs.topk
