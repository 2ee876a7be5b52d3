"""The analysis of the PUF variants in the real workflow (docs/analyses.md#variants): on a
copy of the shared tiny run with graded relevance and the RCos and Genre similarities
switched on, the bootstrap, Table 2 with intervals, the variants' tau table and Figs. 3
and 4 with each similarity, with no model retrained (the grades beside the split); without
them, the run as it was. The functions themselves:
tests/test_variant_analysis.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap.uncertainty import resample_weights
from userfair.files.io import read_json
from userfair.measures import NAMES, optional_names
from userfair.opt_in.variant_uncertainty import bootstrap_variants
from userfair.opt_in.variants import evaluate_variants

from conftest import copy_run, snakemake
from graded_run import NO_RERUN, job_counts, previous_design_inputs, run_config

OVERLAY = """\
measures:
  relevance: [binary, graded]
  similarities: [cos, jacc, rcos, genre]
"""
OPT_IN = optional_names(True, ("RCos", "Genre"))
LABELS = ["U-KNN", "I-KNN", "BPR"]


@pytest.mark.slow
def test_default_run_has_no_variant_job_and_18_resampled_columns(tiny_run):
    dry = tiny_run.snakemake("-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr
    results = tiny_run.test_dir / "results"
    assert not list(results.rglob("*variants*"))
    frame = pd.read_parquet(results / "ml-100k" / "uncertainty" / "UserKNN.parquet")
    assert list(frame.columns) == list(NAMES)


@pytest.mark.slow
def test_variants_end_to_end(tiny_run, tmp_path):
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    (test_dir / "overlay.yaml").write_text(OVERLAY)
    tiny_run_results = tiny_run.test_dir / "results"
    run = snakemake(
        repo, "--directory", ".test", "--cores", "2", "table_uncertainty", "table_variants",
        "fig_variants", "--configfile", str(test_dir / "overlay.yaml"),
    )  # fmt: skip
    results = test_dir / "results"

    # graded relevance retrains nothing: its grades beside the split, read by the measure jobs
    jobs = job_counts(run)
    assert jobs["grades"] == 1 and jobs["measures"] == 3 and jobs["uncertainty"] == 3, jobs
    assert not NO_RERUN & set(jobs), jobs
    # the graded measures as the previous design (grades in the split) gave them, to 1e-12
    raw = test_dir / "resources" / "tiny-ml-100k"
    for model in ("UserKNN", "ItemKNN", "BPR"):
        written = read_json(results / "ml-100k" / "measures" / f"{model}.json")
        inputs = previous_design_inputs(results / "ml-100k", raw, model)
        expected, _ = evaluate_variants(inputs, 10, ["rcos", "genre"], route="dense")
        for name in OPT_IN:
            assert written[name] == pytest.approx(expected[name], rel=0, abs=1e-12), name
    # and so are their bootstrap resamples (the run's resamples and seed, its same weights)
    inputs = previous_design_inputs(results / "ml-100k", raw, "UserKNN")
    config = run_config(repo, test_dir)
    resamples = config["uncertainty"]["resamples"]
    weights = resample_weights(len(inputs.users), resamples, config["seed"])
    expected = bootstrap_variants(inputs, weights, 10, ["rcos", "genre"])
    frame = pd.read_parquet(results / "ml-100k" / "uncertainty" / "UserKNN.parquet")
    np.testing.assert_allclose(frame[list(OPT_IN)], expected[list(OPT_IN)], rtol=0, atol=1e-12)

    # the bootstrap: the 18 columns as in the default run (the same weights), then the opt-in
    for model in ("UserKNN", "ItemKNN", "BPR"):
        frame = pd.read_parquet(results / "ml-100k" / "uncertainty" / f"{model}.parquet")
        default = pd.read_parquet(tiny_run_results / "ml-100k" / "uncertainty" / f"{model}.parquet")
        assert list(frame.columns) == list(NAMES) + list(OPT_IN)
        pd.testing.assert_frame_equal(frame[list(NAMES)], default)

    # Table 2 with intervals: the 18 rows unchanged, the opt-in rows with intervals
    table = pd.read_csv(results / "tables" / "scores_ci.csv", index_col="Measure")
    before = pd.read_csv(tiny_run_results / "tables" / "scores_ci.csv", index_col="Measure")
    pd.testing.assert_frame_equal(table.loc[list(NAMES)], before.loc[list(NAMES)])
    assert [m for m in table.index if m not in before.index] == list(OPT_IN)
    for measure in OPT_IN:
        for label in LABELS:
            value, low, high = table.loc[measure, [label, f"{label} low", f"{label} high"]]
            assert low <= value <= high, (measure, label)
    intervals = pd.read_csv(results / "tables" / "intervals.csv")
    assert set(OPT_IN) <= set(intervals["measure"])
    significance = pd.read_csv(results / "tables" / "significance.csv")
    assert set(OPT_IN) <= set(significance["measure"])

    # the variants' tau: every variant of the run, 1 with itself, symmetric, intervals
    tau = pd.read_csv(results / "tables" / "variants_tau.csv")
    variants = [n for n in NAMES + OPT_IN if n.startswith("PUF-")]
    assert set(tau["measure_a"]) == set(variants) and len(tau) == len(variants) ** 2
    indexed = tau.set_index(["measure_a", "measure_b"])
    for a in variants:
        assert indexed.loc[(a, a), "tau"] == 1.0 and indexed.loc[(a, a), "change"] == "none"
        for b in variants:
            assert indexed.loc[(a, b), "tau"] == indexed.loc[(b, a), "tau"]
            assert indexed.loc[(a, b), "low"] <= indexed.loc[(a, b), "high"]
    summary = pd.read_csv(results / "tables" / "variants_summary.csv")
    assert set(summary["change"]) == {"similarity", "graded", "score", "both"}
    assert summary["pairs"].sum() == len(variants) * (len(variants) - 1) // 2

    # Figs. 3 and 4 with each similarity; Jacc's observed rows are Fig. 3's own
    data = results / "ml-100k" / "experiments"
    observed = pd.read_parquet(data / "similarity_variants.parquet")
    assert list(dict.fromkeys(observed["similarity"])) == ["Cos", "Jacc", "RCos", "Genre"]
    fig3 = pd.read_parquet(data / "similarity.parquet")
    fig3 = fig3[fig3["distribution"] == "observed"].set_index("measure")["value"]
    jacc = observed[observed["similarity"] == "Jacc"].set_index("measure")["value"]
    np.testing.assert_allclose(jacc[fig3.index], fig3, rtol=1e-9, atol=1e-12)
    extreme = pd.read_parquet(data / "extreme_variants.parquet")
    puf = extreme[extreme["measure"] == "PUF"].pivot_table(
        index=["similarity", "share", "score"], columns="assignment", values="value"
    )
    assert len(puf) == 4 * 11 * 2 and (puf["MostFair"] <= puf["MostUnfair"] + 1e-12).all()
    for name in ("variants_tau", "similarity_variants", "extreme_variants"):
        assert (results / "figures" / f"{name}.png").stat().st_size > 10_000
    # each figure's reading, which its caption includes, says this run's numbers
    reading = (results / "figures" / "variants_tau.rst").read_text()
    lowest = summary.set_index("change").loc["similarity"]
    assert f"least agreeing {lowest['lowest_a']} / {lowest['lowest_b']}" in reading
    assert "mean tau 1.00 over 18 pairs" in reading  # 4 similarities x 3 scores: 3 x 6 pairs
    fig3_reading = (results / "figures" / "similarity_variants.rst").read_text()
    cos = observed[(observed["similarity"] == "Cos") & (observed["measure"] == "PUF-P")]
    assert (
        f"Cos {cos['value'].iloc[0]:.3f} at skewness {cos['skewness'].iloc[0]:.2f}" in fig3_reading
    )
    assert "50 % switched" in (results / "figures" / "extreme_variants.rst").read_text()
