"""A real run on two datasets: a copy of the shared tiny run with a second dataset beside its
ml-100k, the same tiny data presented as lastfm (which has published numbers). The claims
say on how many of the two datasets each holds (claims_across.csv and the first page), and
rule paper_gap compares lastfm with the paper's print, says ml-100k has no published numbers
and asks for none of ml-100k's measures. One run serves both, since training a second
dataset is what such a test costs."""

import json
import shutil

import pandas as pd
import pytest
import yaml

from dag_jobs import scheduled
from userfair.measures import NAMES
from userfair.workflow import claims, models, reproduction

from conftest import TEST_CONFIG, copy_run

MODELS = TEST_CONFIG["models"]
DATASETS = ["ml-100k", "lastfm"]


@pytest.fixture(scope="module")
def two_run(tiny_run, tmp_path_factory):
    """The tiny run's copy, then lastfm (the tiny ml-100k's interactions as lastfm.inter) to
    the claims, the bootstrap intervals and the paper gap; returns the run and its
    configuration overlay."""
    root = tmp_path_factory.mktemp("two-datasets")
    run = copy_run(tiny_run, root / "run")
    lastfm = root / "lastfm"
    lastfm.mkdir()
    tiny = run.test_dir / TEST_CONFIG["dataset_options"]["ml-100k"]["path"]
    shutil.copyfile(tiny / "ml-100k.inter", lastfm / "lastfm.inter")
    config = run.test_dir / "config" / "two.yaml"
    config.write_text(
        yaml.safe_dump({"datasets": DATASETS, "dataset_options": {"lastfm": {"path": str(lastfm)}}})
    )
    targets = ["results/tables/claims.csv", "results/tables/intervals.csv", "paper_gap"]
    run.snakemake(*targets, "--cores", "2", "--configfile", str(config))
    return run, str(config)


@pytest.mark.slow
def test_the_claims_say_on_how_many_datasets_each_holds(two_run):
    """One verdict per claim and dataset, and a line per claim that says on how many of the
    two it holds, in claims_across.csv and on the first page."""
    run, _ = two_run
    tables = run.test_dir / "results" / "tables"
    verdicts = pd.read_csv(tables / "claims.csv")
    assert len(verdicts) == 2 * len(claims.CLAIMS)
    assert verdicts.groupby("dataset")["claim"].apply(list).to_dict() == {
        d: [c.id for c in claims.CLAIMS] for d in DATASETS
    }
    across = pd.read_csv(tables / "claims_across.csv").set_index("claim")
    assert (across["datasets"] == 2).all()
    for claim, row in across.iterrows():
        held = set(
            verdicts[(verdicts["claim"] == claim) & (verdicts["verdict"] == "holds")]["dataset"]
        )
        assert row["holds"] == len(held) and row["line"].startswith(
            f"holds on {len(held)} of 2 datasets"
        )
    front = (run.test_dir / "results" / "report" / "front.rst").read_text()
    assert front.startswith("**What ran.** 2 datasets: ml-100k") and "lastfm" in front
    assert "Each claim across the datasets" in front


@pytest.mark.slow
def test_the_paper_gap_compares_lastfm_and_says_ml100k_has_no_numbers(two_run):
    run, config = two_run
    tables = run.test_dir / "results" / "tables"
    cells = pd.read_csv(tables / "paper_gap.csv")
    assert list(cells.columns) == reproduction.CELL_COLUMNS
    assert set(cells["dataset"]) == {"lastfm"} and len(cells) == 18 * len(MODELS)
    paper = reproduction.paper_scores("lastfm")
    name = {models.label(m): m for m in models.names()}  # the table shows U-KNN, as Table 2
    # the interval is the run's bootstrap interval (a percentile interval: for a max-type
    # measure such as MME it need not hold the point itself)
    intervals = pd.read_csv(tables / "intervals.csv").set_index(["dataset", "model", "measure"])
    for row in cells.itertuples():
        record = json.loads(
            (run.test_dir / f"results/lastfm/measures/{name[row.model]}.json").read_text()
        )
        assert row.ours == pytest.approx(record[row.measure], rel=1e-12)
        assert row.paper == paper.loc[row.measure, name[row.model]]
        assert row.ratio == pytest.approx(row.ours / row.paper)
        interval = intervals.loc[("lastfm", row.model, row.measure)]
        assert (row.lo, row.hi) == (interval["low"], interval["high"]) and row.lo <= row.hi
        assert row.ours == pytest.approx(interval["value"], rel=1e-12)
    assert cells.loc[(cells.measure == "ME") & (cells.model == "U-KNN"), "paper"].item() == 0.0025
    verdicts = pd.read_csv(tables / "paper_gap_verdicts.csv").set_index("dataset")
    assert verdicts.loc["ml-100k", "line"] == (
        "ml-100k: no published numbers (the paper does not use ml-100k)"
    )
    lastfm = verdicts.loc["lastfm"]
    assert lastfm["published"] and lastfm["cells"] == 18 * len(MODELS)
    assert lastfm["within_interval"] == cells["within"].sum()
    assert "Table 1 differs: users 120 vs 1,859" in lastfm["line"]  # tiny data, not Last.fm
    stats = pd.read_csv(tables / "paper_gap_stats.csv")
    assert stats["field"].tolist() == ["users", "test_users", "items", "interactions", "sparsity"]
    assert not stats["exact"].any()
    tau = pd.read_csv(tables / "paper_gap_tau.csv")
    assert tau["measure"].tolist() == list(NAMES) and (tau["models"] == len(MODELS)).all()
    log = (run.test_dir / "results" / "logs" / "paper_gap" / "paper_gap.log").read_text()
    assert lastfm["line"] in log and verdicts.loc["ml-100k", "line"] in log
    resamples = TEST_CONFIG["uncertainty"]["resamples"]
    assert (
        f"grid {TEST_CONFIG['grid']} ({len(MODELS)} points), at most 1 epoch, "
        f"{resamples} resamples" in log
    ), log
    for suffix in ("pdf", "png"):
        path = run.test_dir / "results" / "figures" / f"paper_gap.{suffix}"
        assert path.stat().st_size > 10_000
    # what paper_gap needs: lastfm's measures, none of ml-100k's (it has no published numbers)
    planned = run.snakemake("paper_gap", "-n", "--forceall", "--configfile", config)
    assert scheduled(planned.stdout)["measures"] == len(MODELS), planned.stdout[-3000:]
