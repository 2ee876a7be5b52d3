"""Rule claims' step on files as the workflow writes them (userfair.workflow.steps.claims):
two datasets, two training replicates, resamples: one verdict per claim and dataset, the
draws pooled over the replicates, the across-datasets line, the first page."""

import json

import numpy as np
import pandas as pd
import pytest

from userfair import measures
from userfair.workflow import claims, properties
from userfair.workflow.steps.claims import claims as claims_step
from userfair.workflow.steps.claims import read_run

from test_claims import MODELS, make_run

CONVENTIONS = measures.conventions("precision", 0.05, 1.0)


def write_run(tmp_path, dataset, run, replicates=2, resamples=20):
    """The named inputs of rule claims for one dataset: every replicate's measures file
    (replicate r shifts every value by r / 1000) and resamples, stats, no experiments."""
    named = {}
    rng = np.random.default_rng(len(dataset))
    for r in range(replicates):
        for m in MODELS:
            record = {n: run.points[m][n] + r / 1000 for n in measures.NAMES}
            record.update(seconds=run.seconds[m], conventions=CONVENTIONS)
            path = tmp_path / f"{dataset}-{m}-{r}.json"
            path.write_text(json.dumps(record))
            named[f"measures:{dataset}/{m}/{r}"] = str(path)
            frame = pd.DataFrame(
                {n: record[n] + rng.normal(0, 1e-4, resamples) for n in measures.NAMES}
            )
            frame.index.name = "resample"
            frame.to_parquet(tmp_path / f"{dataset}-{m}-{r}.parquet")
            named[f"resamples:{dataset}/{m}/{r}"] = str(tmp_path / f"{dataset}-{m}-{r}.parquet")
    stats = tmp_path / f"{dataset}-stats.json"
    stats.write_text(json.dumps({"test_users": 100}))
    named[f"stats:{dataset}"] = str(stats)
    return named


def test_read_run_pools_the_replicates_draws(tmp_path):
    named = write_run(tmp_path, "d1", make_run(experiments=False))
    run = read_run(named, "d1", MODELS, 0.95)
    assert run.users == 100 and sorted(run.replicates) == [0, 1]
    assert all(len(frame) == 40 for frame in run.draws.values())  # 2 replicates x 20
    assert run.relevance is None and run.points["A"]["UF"] == pytest.approx(
        make_run().points["A"]["UF"]
    )
    # replicate 1 moves every value by the same amount: no pair of models swaps
    assert properties.replicate_swap_rate(run, "PUF-P-Cos") == 0


def test_the_step_writes_one_verdict_per_claim_and_dataset(tmp_path):
    paper = make_run({"UF": [0.1, 0.5, 0.5, 0.5, 0.5]}, experiments=False)
    other = make_run({"UF": [0.5, 0.1, 0.5, 0.5, 0.5]}, experiments=False)  # UF picks B too
    named = {**write_run(tmp_path, "d1", paper), **write_run(tmp_path, "d2", other)}
    for kind in ("relevance", "similarity", "extreme"):  # d1 only: d2 lacks the experiments
        table = getattr(make_run(), kind)
        table.to_parquet(tmp_path / f"{kind}.parquet")
        named[f"{kind}:d1"] = str(tmp_path / f"{kind}.parquet")
    for p in measures.FAIR_PUF:  # every PUF picks B on both datasets
        for name, path in named.items():
            if name.startswith("measures:"):
                record = json.loads(open(path).read())
                model = name.split("/")[1]
                record[p] = 0.1 if model == "B" else 0.5
                open(path, "w").write(json.dumps(record))
    outputs = {k: str(tmp_path / f"{k}.out") for k in ("properties", "claims", "across", "front")}
    run = {"seed": 1, "replicates": 2, "resamples": 20, "level": 0.95, "grid": "g", "epochs": 1}
    claims_step(named, outputs, ["d1", "d2"], MODELS, 0.95, run)
    table = pd.read_csv(outputs["claims"])
    assert len(table) == 2 * len(claims.CLAIMS) and set(table["dataset"]) == {"d1", "d2"}
    verdicts = table.set_index(["claim", "dataset"])["verdict"]
    assert verdicts["uf-puf-differ", "d1"] == claims.HOLDS
    assert verdicts["uf-puf-differ", "d2"] == claims.FAILS
    assert verdicts["relevance-rise", "d2"] == claims.UNTESTABLE
    across = pd.read_csv(outputs["across"]).set_index("claim")["line"]
    assert across["uf-puf-differ"] == "holds on 1 of 2 datasets (d1); does not hold on d2"
    props = pd.read_csv(outputs["properties"])
    assert len(props) == 2 * len(measures.NAMES)
    assert props["swap_rate_replicates"].notna().all()
    front = open(outputs["front"]).read()
    assert "2 datasets: d1 (100 evaluated users), d2 (100 evaluated users)" in front
    assert "2 training replicates" in front and "Each claim across the datasets" in front
