"""The who rules on the tiny run of .test/ (two models): users files whose columns sum to
the measures files, the group table with its intervals and the declared user features of
ml-100k's .user file, the worst-case table, the figure; rebuilding the figure or the group
table reruns nothing upstream; the streamed route gives the same users file."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from dag_jobs import scheduled
from userfair.decomposition import decompose_columns as cols
from userfair.workflow import models

from conftest import copy_run, snakemake

MODELS = ["UserKNN", "ItemKNN"]
FEATURES = ["age", "gender", "occupation"]
TARGETS = [
    "results/tables/who.csv",
    "results/tables/who_worst.csv",
    "results/figures/who.png",
    *[f"results/ml-100k/measures/{m}.json" for m in MODELS],
]


@pytest.fixture(scope="module")
def who_run(tiny_run, tmp_path_factory):
    """A copy of the session's tiny run (conftest ``tiny_run``) brought to two models and
    the who settings below: only the who jobs rerun, on the models the run already has."""
    repo, test_dir = copy_run(tiny_run, tmp_path_factory.mktemp("who") / "run")
    run = {"models": MODELS, "who": {"resamples": 200, "worst": 5, "features": FEATURES}}
    (test_dir / "run.yaml").write_text(yaml.safe_dump(run))
    args = ["--directory", ".test", "--configfile", str(test_dir / "run.yaml")]
    snakemake(repo, *args, "--cores", "2", *TARGETS)
    return repo, args


@pytest.mark.slow
def test_users_files_sum_to_the_measures_files(who_run):
    repo, _ = who_run
    results = repo / ".test" / "results"
    for model in MODELS:
        frame = pd.read_parquet(results / "ml-100k" / "measures" / model / "users.parquet")
        assert list(frame.columns) == list(cols.COLUMNS) + [
            "age",
            "gender",
            "occupation",
        ]
        assert frame.gender.isin(["M", "F"]).all()
        measures = json.loads((results / "ml-100k" / "measures" / f"{model}.json").read_text())
        for name in cols.SHARES:
            assert abs(frame[name].sum() - measures[name]) <= 1e-9, (model, name)
        worst = pd.read_csv(results / "ml-100k" / "measures" / model / "worst.csv")
        assert len(worst) == 5 and worst.text.str.startswith("user ").all()


@pytest.mark.slow
def test_group_and_worst_tables_and_figure(who_run):
    repo, _ = who_run
    tables = repo / ".test" / "results" / "tables"
    table = pd.read_csv(tables / "who.csv", dtype={"group": str})
    assert set(table.model) == {models.label(m) for m in MODELS}  # U-KNN as in Table 2
    assert set(table["by"]) == {"activity", "age", "gender", "occupation"}
    activity = table[table["by"] == "activity"]
    assert sorted(set(activity.group)) == ["Q1", "Q2", "Q3", "Q4", "Q5"]
    sums = table.groupby(["model", "by", "measure"])["share"].sum()
    assert np.allclose(sums.dropna(), 1.0) and sums.notna().sum() >= 0.9 * len(sums)
    puf = table[table.measure.str.startswith("PUF") & table.share.notna()]
    assert (puf.low <= puf.share + 1e-12).all() and (puf.share <= puf.high + 1e-12).all()
    worst = pd.read_csv(tables / "who_worst.csv")
    assert list(worst.model) == [models.label(m) for m in MODELS for _ in range(5)]
    figure = repo / ".test" / "results" / "figures" / "who.png"
    assert figure.stat().st_size > 20_000 and (figure.with_suffix(".pdf")).exists()


@pytest.mark.slow
def test_rebuilding_the_who_outputs_reruns_nothing_upstream(who_run):
    repo, args = who_run
    proc = snakemake(repo, *args, "-n", "--forcerun", "fig_who", "--", "results/figures/who.png")
    assert scheduled(proc.stdout + proc.stderr) == {"fig_who": 1}
    proc = snakemake(repo, *args, "-n", "--forcerun", "who_table", "--", *TARGETS)
    assert "users" not in scheduled(proc.stdout + proc.stderr)
    assert scheduled(proc.stdout + proc.stderr) == {"who_table": 1, "fig_who": 1}
    # another number of groups: the group table and the figure, not the decomposition
    (repo / ".test" / "groups.yaml").write_text(yaml.safe_dump({"who": {"groups": 4}}))
    groups = [*args, str(repo / ".test" / "groups.yaml")]
    proc = snakemake(repo, *groups, "-n", *TARGETS)
    assert scheduled(proc.stdout + proc.stderr) == {"who_table": 1, "fig_who": 1}


@pytest.mark.slow
def test_the_streamed_route_gives_the_same_users_file(who_run):
    repo, args = who_run
    path = repo / ".test" / "results" / "ml-100k" / "measures" / "UserKNN" / "users.parquet"
    dense = pd.read_parquet(path)
    (repo / ".test" / "stream.yaml").write_text(yaml.safe_dump({"measures": {"stream_above": 10}}))
    stream_args = [*args, str(repo / ".test" / "stream.yaml")]
    proc = snakemake(repo, *stream_args, "--cores", "2", str(path.relative_to(repo / ".test")))
    assert "(Rule: pairs)" in proc.stdout + proc.stderr  # pass one, not the similarity files
    stream = pd.read_parquet(path)
    assert list(stream.columns) == list(dense.columns)
    numbers = [c for c in dense.columns if c not in ("user_id", "age", "gender", "occupation")]
    assert np.allclose(stream[numbers], dense[numbers], rtol=0, atol=1e-9, equal_nan=True)
