"""Rule claims in real runs of the .test/ workflow: its tables in the default targets with a
verdict for every claim, `userfair claims` on the run, a measure the paper never saw (the
opt-in PUF with the genre similarity) getting its properties and its answers on the first
page, and a report refused once a run of another configuration has started writing into
results/. The claims of a run on two datasets: tests/runs/test_two_datasets_workflow.py."""

import json

import pandas as pd
import pytest
import yaml

from userfair import measures
from userfair.cli import main as cli_main
from userfair.workflow import claims

from conftest import copy_run


def overlay(run, name, config):
    path = run.test_dir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.mark.slow
def test_the_tiny_run_has_every_claim_and_every_measures_properties(tiny_run, capsys):
    tables = tiny_run.test_dir / "results" / "tables"
    verdicts = pd.read_csv(tables / "claims.csv")
    assert list(verdicts.columns) == claims.COLUMNS
    assert list(verdicts["claim"]) == [c.id for c in claims.CLAIMS]
    assert set(verdicts["verdict"]) <= set(claims.VERDICTS) and set(verdicts["dataset"]) == {
        "ml-100k"
    }
    assert verdicts["evidence"].str.len().min() > 10
    props = pd.read_csv(tables / "measure_properties.csv")
    assert list(props["measure"]) == list(measures.NAMES)
    assert props["range_models_low"].notna().all()  # the bootstrap is on
    front = (tiny_run.test_dir / "results" / "report" / "front.rst").read_text()
    assert front.startswith("**What ran.** 1 dataset: ml-100k (15 evaluated users)")
    assert cli_main(["claims", str(tiny_run.test_dir), "--color", "never"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(claims.CLAIMS) + 1 and out[-1].startswith("12 verdicts: ")


@pytest.mark.slow
def test_a_measure_the_paper_never_saw_gets_its_properties(tiny_run, tmp_path):
    run = copy_run(tiny_run, tmp_path / "run")
    config = overlay(run, "genre.yaml", {"measures": {"similarities": ["cos", "jacc", "genre"]}})
    run.snakemake("results/tables/claims.csv", "--cores", "2", "--configfile", config)
    props = pd.read_csv(run.test_dir / "results" / "tables" / "measure_properties.csv")
    new = props.set_index("measure").loc[["PUF-P-Genre", "PUF-NDCG-Genre"]]
    assert new["declared"].all() and new["tau_eff_min"].notna().all()
    assert new["discriminative_power"].notna().all()
    assert set(new["similarity_trend"]) <= {"falls", "rises", "flat"}
    front = (run.test_dir / "results" / "report" / "front.rst").read_text()
    assert "Measures the paper never saw" in front and "PUF-P-Genre" in front
    assert "sensitive to the similarity distribution (Fig. 3): yes" in front


@pytest.mark.slow
def test_a_report_is_refused_once_another_configuration_writes_into_results(tiny_run, tmp_path):
    run = copy_run(tiny_run, tmp_path / "run")
    record = run.test_dir / "results" / "run.json"
    models = json.loads(record.read_text())["models"]
    other = overlay(run, "other.yaml", {"models": models[:2]})
    done = run.snakemake(
        "table_stats", "--forcerun", "table_stats", "--cores", "1", "--configfile", other
    )
    assert not record.exists()
    assert "results/run.json removed" in done.stdout + done.stderr
    for extra in ([], ["--configfile", other]):
        refused = run.snakemake("--report", "mixed.html", *extra, check=False)
        said = refused.stdout + refused.stderr
        assert refused.returncode != 0 and "no complete run is recorded" in said, said[-2000:]
        assert not (run.test_dir / "mixed.html").exists()
    run.snakemake("--cores", "1")  # the default config to the end: its record again
    assert json.loads(record.read_text())["models"] == models
    run.snakemake("--report", "results/report.html")


@pytest.mark.slow
def test_the_claims_of_a_real_run_with_two_replicates_use_the_replicates_draws(tiny_run, tmp_path):
    """training.replicates 2 on the tiny run (BPR retrained once; the KNN models' replicate
    is their own lists): the claims are read over replicates and users, each draw one
    replicate's lists on one resample of its users (2 x 30 draws), the replicate swap rate is
    measured, and the first page says what ran."""
    run = copy_run(tiny_run, tmp_path / "run")
    config = overlay(run, "replicates.yaml", {"training": {"replicates": 2}})
    run.snakemake("results/tables/claims.csv", "--cores", "2", "--configfile", config)
    tables = run.test_dir / "results" / "tables"
    verdicts = pd.read_csv(tables / "claims.csv").set_index("claim")
    assert list(verdicts.index) == [c.id for c in claims.CLAIMS]
    assert "of 60 draws" in verdicts.loc["uf-puf-differ", "evidence"], verdicts.loc[
        "uf-puf-differ", "evidence"
    ]  # 30 before: the draws of replicate 0 only
    props = pd.read_csv(tables / "measure_properties.csv")
    assert props["swap_rate_replicates"].notna().any()
    front = (run.test_dir / "results" / "report" / "front.rst").read_text()
    assert "2 training replicates" in front
    across = pd.read_csv(tables / "claims_across.csv")
    assert len(across) == len(claims.CLAIMS)
