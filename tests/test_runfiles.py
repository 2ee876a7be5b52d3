"""Run files as other tools write them (TREC runs, score tables): the same lists give the
same measures as the native format; detection; every bad-input case names the file."""

import json
import math

import pandas as pd
import pytest

from userfair.cli import main
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import InputError, write_inter
from userfair.files.runfiles import read_run
from userfair.measures import NAMES as KEYS

from measures_data import random_split


@pytest.fixture()
def split(tmp_path):
    train, test, topk, _ = random_split(3)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    # Scores strictly decreasing with rank, so every format encodes the same order.
    topk = topk.assign(score=1.0 / topk["rank"] + 0.25)
    return tmp_path, train, test, topk


def write_trec(topk, path, shuffle_seed=0):
    # trec_eval ignores the rank column: write zero-based ranks in a shuffled row order.
    rows = topk.sample(frac=1.0, random_state=shuffle_seed)
    lines = [
        f"{r.user_id} Q0 {r.item_id} {r.rank - 1} {r.score:.6f} myrun" for r in rows.itertuples()
    ]
    path.write_text("\n".join(lines) + "\n")


def measures(train, test, topk, **kwargs):
    result = evaluate(load_inputs(train, test, topk, **kwargs), device="cpu")
    return [result[key] for key in KEYS]


def same(a, b):
    return all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def test_every_format_gives_the_native_measures(split):
    path, train, test, topk = split
    native = measures(train, test, topk[["user_id", "item_id", "rank"]])
    write_trec(topk, path / "run.trec")
    elliot = topk.sample(frac=1.0, random_state=1)[["user_id", "item_id", "score"]]
    elliot.to_csv(path / "elliot.tsv", sep="\t", header=False, index=False)
    lenskit = topk.rename(columns={"user_id": "user", "item_id": "item"})[["user", "item", "score"]]
    lenskit.to_csv(path / "lenskit.csv", index=False)
    lenskit.to_parquet(path / "lenskit.parquet")
    recpack = topk.rename(columns={"user_id": "uid", "item_id": "iid"})[["uid", "iid", "score"]]
    recpack.to_csv(path / "recpack.tsv", sep="\t", index=False)
    for name in ("run.trec", "elliot.tsv", "lenskit.csv", "lenskit.parquet", "recpack.tsv"):
        assert same(measures(train, test, path / name), native), name
    assert same(measures(train, test, path / "run.trec", topk_format="trec"), native)
    assert same(measures(train, test, path / "elliot.tsv", topk_format="scores"), native)


def test_score_ties_are_broken_by_item_id(tmp_path):
    frame = pd.DataFrame(
        {"user_id": ["u", "u", "u", "v"], "item_id": ["b", "c", "a", "x"], "score": [1, 2, 1, 0]}
    )
    ranked, _ = read_run(frame, "scores")
    assert ranked.sort_values(["user_id", "rank"])["item_id"].tolist() == ["c", "a", "b", "x"]
    assert ranked.sort_values(["user_id", "rank"])["rank"].tolist() == [1, 2, 3, 1]


def test_detection(tmp_path, split):
    path, _, _, topk = split
    write_trec(topk, path / "run.txt")
    assert read_run(path / "run.txt")[0].shape == (len(topk), 3)
    topk[["user_id", "item_id", "rank"]].to_csv(path / "native.tsv", sep="\t", index=False)
    got, _ = read_run(path / "native.tsv")
    assert got.equals(read_run(path / "native.tsv", "native")[0])


@pytest.mark.parametrize(
    "content, format, message",
    [
        ("u i 1 2\n", "auto", r"no header naming user/item columns and 4 fields"),
        ("u Q0 i 1 high run\n", "auto", r"field 'score \(the 5th field\)' must be numeric"),
        ("u Q0 i 1\n", "trec", r"a TREC run has 6 fields per line .*found 4"),
        ("user\titem\tvalue\nu\ti\t1\n", "auto", r"missing column 'rank'.*'prediction'"),
        ("user\titem\tvalue\nu\ti\t1\n", "scores", r"missing column 'score'.*'prediction'"),
        ("user_id\titem_id\trank\nu\ti\tfirst\n", "auto", r"field 'rank' must be an integer"),
    ],
)
def test_bad_run_files_name_the_file_and_field(tmp_path, content, format, message):
    (tmp_path / "bad.run").write_text(content)
    with pytest.raises(InputError, match=r"bad\.run: " + message):
        read_run(tmp_path / "bad.run", format)


def test_unknown_format_is_an_error():
    with pytest.raises(ValueError, match="unknown run format 'csv'"):
        read_run(pd.DataFrame(), "csv")


def test_cli_reads_a_trec_run(split, capsys):
    path, train, test, topk = split
    write_trec(topk, path / "run.trec")
    argv = ["evaluate", "--train", str(path / "d.train.inter"), "--test",
            str(path / "d.test.inter"), "--topk", str(path / "run.trec"), "--json"]  # fmt: skip
    assert main(argv + ["--format", "trec"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = measures(train, test, topk[["user_id", "item_id", "rank"]])
    assert same([printed[key] for key in KEYS], expected)
    assert main(argv + ["--format", "scores"]) == 2  # a TREC run is no score table
    assert "run.trec: no header naming user/item columns" in capsys.readouterr().err
