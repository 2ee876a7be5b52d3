"""The streamed route of the opt-in measures scattered as the 18 are (docs/measures.md
#in-the-workflow): the real steps of pairs_part, pairs, measure_sums (parts i-of-N) and
measures, in-process on a random graded split, against the dense route's measures; and
once through the real rules on a copy of the tiny run."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from userfair.files.io import InputError, read_json, write_inter, write_json
from userfair.measures import NAMES, OPT_IN
from userfair.opt_in.variants import evaluate_variants
from userfair.workflow.steps import MeasureSettings, Route, SideFiles, Speed
from userfair.workflow.steps import measures as steps

from conftest import copy_run, snakemake
from graded_run import NO_RERUN, job_counts, previous_design_inputs
from measures_data import graded_split, write_item_file

EXTRA = ["rcos", "vec", "genre"]
SETTINGS = MeasureSettings(
    k=10, gamma=1.0, epsilon=0.05, envy_utility="precision", graded=True,
    extra_similarities=EXTRA,
)  # fmt: skip
SPEED = Speed(block_size=7, device="cpu")


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """Binary split files, the grades file beside them (as rule grades writes it: user_id,
    item_id, grade of every interaction), a top-k list, item genres and user vectors of a
    random graded split."""
    root = tmp_path_factory.mktemp("split")
    train, test, topk, item_genres = graded_split(21, m=40)
    paths = {name: root / f"d.{name}.inter" for name in ("train", "valid", "test")}
    write_inter(train.drop(columns="rating"), paths["train"])
    write_inter(test.drop(columns="rating"), paths["test"])
    write_inter(test.drop(columns="rating").sample(frac=0.3, random_state=0), paths["valid"])
    paths["grades"] = root / "grades.parquet"
    pd.concat([train, test]).drop_duplicates(["user_id", "item_id"])[
        ["user_id", "item_id", "rating"]
    ].rename(columns={"rating": "grade"}).to_parquet(paths["grades"])
    paths["topk"] = root / "topk.parquet"
    topk.assign(score=0.0).to_parquet(paths["topk"])
    paths["item"] = root / "d.item"
    write_item_file(paths["item"], item_genres)
    users = sorted(test.user_id.unique())
    vectors = np.random.default_rng(3).normal(size=(len(users), 3))
    paths["vectors"] = root / "vectors.csv"
    frame = pd.DataFrame(vectors, columns=["a", "b", "c"]).assign(user_id=users)
    frame.to_csv(paths["vectors"], index=False)
    return {key: str(value) for key, value in paths.items()}


def streamed(split, tmp, parts: int) -> dict:
    """The measures of the streamed route with pass one and two in ``parts`` parts."""
    tmp.mkdir()
    files = SideFiles(item=[split["item"]], vectors=[split["vectors"]], grades=split["grades"])
    names = [f"{i}-of-{parts}" for i in range(1, parts + 1)]
    ones = [str(tmp / f"pairs-{name}.json") for name in names]
    for name, out in zip(names, ones):
        steps.pairs_part(
            split["train"], split["test"], out, scatteritem=name, settings=SETTINGS,
            speed=SPEED,
        )  # fmt: skip
    steps.pairs(ones, str(tmp / "pairs.json"))
    sums = [str(tmp / f"sums-{name}.json") for name in names]
    for name, out in zip(names, sums):
        steps.measure_sums(
            split["train"], split["valid"], split["test"], split["topk"], str(tmp / "pairs.json"),
            out, scatteritem=name, settings=SETTINGS, speed=SPEED, files=files,
        )  # fmt: skip
    return steps.measures(
        split["train"], split["valid"], split["test"], split["topk"], str(tmp / "m.json"),
        route=Route("stream", pairs=str(tmp / "pairs.json"), sums=sums), files=files,
        settings=SETTINGS, speed=SPEED,
    )  # fmt: skip


def test_scattered_opt_in_measures_equal_the_dense_route(split, tmp_path):
    sims = {}
    for kind in ("cos", "jacc"):
        sims[kind] = str(tmp_path / f"{kind}.npz")
        steps.similarity(
            kind, split["train"], split["test"], sims[kind], block_size=7, stream_above=100
        )
    dense = steps.measures(
        split["train"], split["valid"], split["test"], split["topk"], str(tmp_path / "d.json"),
        route=Route("dense", **sims), settings=SETTINGS, speed=SPEED,
        files=SideFiles(item=split["item"], vectors=split["vectors"], grades=[split["grades"]]),
    )  # fmt: skip
    one = streamed(split, tmp_path / "one", 1)
    three = streamed(split, tmp_path / "three", 3)
    assert set(OPT_IN) <= set(dense)
    for key in (*NAMES, *OPT_IN):
        for got in (one, three):
            if math.isnan(dense[key]):
                assert math.isnan(got[key]), key
            else:
                assert got[key] == pytest.approx(dense[key], rel=1e-9, abs=1e-12), key
    # each part holds its row range's sums of every similarity the opt-in measures read
    parts = [
        json.loads((tmp_path / "three" / f"sums-{i}-of-3.json").read_text()) for i in (1, 2, 3)
    ]
    assert all(set(part["variants"]) == {"cos", "jacc", "rcos", "vec", "genre"} for part in parts)
    ranges = [(part["variants"]["vec"]["start"], part["variants"]["vec"]["stop"]) for part in parts]
    assert ranges[0][0] == 0 and ranges[1][0] == ranges[0][1] and ranges[2][0] == ranges[1][1]
    assert ranges[2][1] == 40


def test_a_part_without_the_opt_in_sums_is_named(split, tmp_path):
    part = tmp_path / "sums-1-of-1.json"
    write_json({"kind": "pass-two"}, part)
    with pytest.raises(InputError, match=f"{part}: no opt-in PUF sums.*measure_sums"):
        steps.gathered_variants([str(part)])


@pytest.mark.slow
def test_scattered_opt_in_measures_in_the_workflow(tiny_run, tmp_path):
    """The real rules on a copy of the tiny run: streamed in two parts with graded relevance
    and the genre similarity, each measure_sums part holds its rows' opt-in sums (the grades
    joined from rule grades) and the measures file equals the dense route (the tiny run's
    18, the opt-in ones computed here with the grades in the split, the design before rule
    grades); no model retrained."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        "measures:\n  relevance: [binary, graded]\n  similarities: [cos, jacc, genre]\n"
        "  device: cpu\n  stream_above: 0\n  scatter: 2\n"
    )
    target = "results/ml-100k/measures/UserKNN.json"
    configs = ("--configfile", str(overlay))
    run = snakemake(repo, "--directory", ".test", "--cores", "2", target, *configs)
    jobs = job_counts(run)
    assert jobs["grades"] == 1 and jobs["measure_sums"] == 2 and not NO_RERUN & set(jobs), jobs
    results = test_dir / "results" / "ml-100k"
    parts = sorted((results / "measures" / "UserKNN" / "sums").glob("*-of-2.json"))
    assert len(parts) == 2
    records = [json.loads(path.read_text())["variants"]["genre"] for path in parts]
    assert records[0]["start"] == 0 and records[0]["stop"] == records[1]["start"]
    written = read_json(results / "measures" / "UserKNN.json")
    default = read_json(tiny_run.test_dir / "results" / "ml-100k" / "measures" / "UserKNN.json")
    for name in NAMES:
        if default[name] is not None:
            assert written[name] == pytest.approx(default[name], rel=1e-9, abs=1e-12), name
    inputs = previous_design_inputs(results, test_dir / "resources" / "tiny-ml-100k", "UserKNN")
    dense, _ = evaluate_variants(inputs, 10, ["genre"], route="dense")
    assert {"gNDCG", "PUF-gNDCG-Genre", "PUF-P-Genre"} <= set(dense)
    for name, value in dense.items():
        assert written[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name
