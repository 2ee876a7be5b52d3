"""The whole workflow on the tiny run of .test/ (what CI and config/README.md run): every
table, figure and experiment file, the HTML report, reproducible experiments, and partial
reruns (a plot setting reruns only figures). The run is conftest's session fixture
``tiny_run``; tests that change something work on a copy (``copy_run``)."""

import json
import os

import pandas as pd
import pytest
import yaml

from dag_jobs import scheduled
from userfair.measures import NAMES

from conftest import TEST_CONFIG, copy_run, make_workdir, snakemake

MODELS = TEST_CONFIG["models"]
FIGURES = [
    "agreement",
    "relevance",
    "similarity",
    "extreme",
    "gamma_models",
    "gamma_relevance",
    "intervals",
]
EXPERIMENTS = ["relevance", "similarity", "extreme", "gamma_models", "gamma_relevance"]


def _write_yaml(path, obj):
    path.write_text(yaml.safe_dump(obj))
    return str(path)


FIGURE_RULES = {
    "fig_agreement",
    "fig_relevance",
    "fig_similarity",
    "fig_extreme",
    "fig_gamma",
    "fig_intervals",
    "paper_gap",  # the paper's numbers beside the run's (docs/reproduction.md)
    "fig_who",
    "fig_groups",  # group against individual unfairness, per dataset
    # the claims and the report's first page read paper_gap's verdicts, which the rerun
    # paper_gap job writes again (a 10-s job; docs/analyses.md#claims)
    "claims",
}


def _run(repo, *args, **kwargs):
    """snakemake on the tiny run (.test), from the repository copy."""
    return snakemake(repo, "--directory", ".test", *args, **kwargs)


@pytest.mark.slow
def test_every_deliverable_is_built(tiny_run):
    test_dir = tiny_run.test_dir
    results = test_dir / "results"
    for table in ("scores", "timing", "stats"):
        assert (results / "tables" / f"{table}.csv").stat().st_size > 0
        assert r"\toprule" in (results / "tables" / f"{table}.tex").read_text()
    scores = pd.read_csv(results / "tables" / "scores.csv", index_col=0)
    assert list(scores.index) == list(NAMES)
    assert list(scores.columns[3:]) == ["U-KNN", "I-KNN", "BPR"]
    for name in FIGURES:
        assert (results / "figures" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
        assert (results / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    for name in EXPERIMENTS:
        frame = pd.read_parquet(results / "ml-100k" / "experiments" / f"{name}.parquet")
        assert len(frame) and frame["dataset"].eq("ml-100k").all()
    agreement = pd.read_csv(results / "tables" / "agreement.csv")
    assert len(agreement) == len(NAMES) ** 2
    # the paper prints no ml-100k: paper_gap says so instead of failing
    verdicts = pd.read_csv(results / "tables" / "paper_gap_verdicts.csv")
    assert verdicts["line"].tolist() == [
        "ml-100k: no published numbers (the paper does not use ml-100k)"
    ]
    assert pd.read_csv(results / "tables" / "paper_gap.csv").empty
    assert not (results / "figures" / "paper_gap.png").exists()  # nothing to show: not drawn
    # experiments.model: UserKNN in .test/config
    assert (
        pd.read_parquet(results / "ml-100k" / "experiments" / "similarity.parquet")["model"]
        .eq("UserKNN")
        .all()
    )


@pytest.mark.slow
def test_bootstrap_outputs(tiny_run):
    test_dir = tiny_run.test_dir
    results = test_dir / "results"
    resamples = TEST_CONFIG["uncertainty"]["resamples"]
    for model in MODELS:
        frame = pd.read_parquet(results / "ml-100k" / "uncertainty" / f"{model}.parquet")
        assert len(frame) == resamples and list(frame.columns) == list(NAMES)
    scores = pd.read_csv(results / "tables" / "scores.csv", index_col=0)
    with_intervals = pd.read_csv(results / "tables" / "scores_ci.csv", index_col=0)
    individual, grouped = with_intervals.iloc[: len(scores)], with_intervals.iloc[len(scores) :]
    for label in ("U-KNN", "I-KNN", "BPR"):  # the point estimates are Table 2's
        pd.testing.assert_series_equal(individual[label], scores[label])
        assert {f"{label} low", f"{label} high"} <= set(with_intervals.columns)
    # then the group measures of the one grouping (groups null, no user feature)
    assert list(grouped.index) == ["UserMAD-P (activity:0.05)", "UserMAD-NDCG (activity:0.05)"]
    assert set(grouped["Group"]) == {"Fair (groups)"}
    tex = (results / "tables" / "scores_ci.tex").read_text()
    assert f"95\\% percentile intervals over {resamples:,} bootstrap resamples" in tex
    significance = pd.read_csv(results / "tables" / "significance.csv")
    assert len(significance) == len(NAMES) * 3  # three model pairs per measure
    assert (
        significance["p"].between(0, 1).all()
        and (significance["p_holm"] >= significance["p"]).all()
    )
    taus = pd.read_csv(results / "tables" / "agreement_ci.csv")
    assert len(taus) == len(NAMES) ** 2 and {"low", "high", "excludes_zero"} <= set(taus.columns)
    groups = pd.read_csv(results / "tables" / "groups.csv")
    assert set(groups["by"]) == {"activity:0.05"}  # .test declares no user feature
    assert set(groups["measure"]) >= {"UserMAD-P", "UserMAD-NDCG", "P[active]"}
    assert groups["low"].notna().all()  # the tiny run bootstraps
    for measure in ("UserMAD-P", "UserMAD-NDCG"):  # Table 2's group rows are groups.csv's
        row = groups[groups["measure"] == measure].set_index("model")
        label = f"{measure} (activity:0.05)"
        for column in ("U-KNN", "I-KNN", "BPR"):  # groups.csv labels models as Table 2
            assert with_intervals.loc[label, f"{column} low"] == row.loc[column, "low"]
    assert (results / "figures" / "groups" / "ml-100k.png").read_bytes()[:4] == b"\x89PNG"
    agreement = pd.read_csv(results / "tables" / "agreement.csv")
    pd.testing.assert_series_equal(taus["tau"], agreement["tau"])  # Fig. 1's full-data tau


@pytest.mark.slow
def test_resamples_zero_turns_the_bootstrap_off(tiny_run, tmp_path):
    repo = tiny_run.repo  # a dry run: reads only
    off = _write_yaml(tmp_path / "off.yaml", {"uncertainty": {"resamples": 0}})
    jobs = scheduled(_run(repo, "-n", "--configfile", off).stdout)
    # no bootstrap job, no other output touched: only Fig. 1 is redrawn, without intervals,
    # the paper's numbers beside the run's (whose note names the resamples), and the group
    # measures (their files hold the resamples; fig_groups is then not a target)
    # and the claims, whose inputs are then the measures without resamples
    expected = {"fig_agreement", "paper_gap", "groups", "table_groups", "claims"}
    assert set(jobs) - {"all", "run_config"} == expected, jobs


@pytest.mark.slow
def test_html_report(tiny_run, tmp_path):
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")  # writes results/report.html
    _run(repo, "--report", "results/report.html")
    html = (test_dir / "results" / "report.html").read_text(errors="replace")
    assert "Fig. 2: varying relevance" in html and "Table 2" in html
    # Fig. 2's caption reads this run's numbers (results/figures/relevance.rst)
    reading = (test_dir / "results" / "figures" / "relevance.rst").read_text()
    assert reading.startswith("- **ml-100k**: SD-P is ") and "at 100 %" in reading
    assert " ".join(reading.split()[3:9]) in " ".join(html.replace("\\n", " ").split())
    assert "Table 1: dataset statistics" in html
    # no dataset of this run has published numbers: no paper_gap figure, the verdicts say why
    assert "Ours / paper" not in html and "No figure and no cell tables" in html
    assert "Every measure's interval" in html and "Fig. 1's tau with intervals" in html
    # the workflow page describes this run (workflow/report/workflow.rst, from the config)
    assert "UserKNN, ItemKNN, BPR" in html
    flat = " ".join(html.replace("\\n", " ").split())  # the page is a JS string with \n
    assert "at most 1 epoch per grid point" in flat and "1 epochs" not in flat
    # so do the captions of Figs. 3, 4 and the gamma figures (results/figures/NAME.rst)
    readings = {"similarity": "Over that range", "extreme": "PUF: MostUnfair",
                "gamma_models": "UF runs from", "gamma_relevance": "gammas differ by"}  # fmt: skip
    for name, words in readings.items():
        reading = (test_dir / "results" / "figures" / f"{name}.rst").read_text()
        assert reading.startswith("- **ml-100k**:") and words in reading, reading
        sentence = reading.split(words)[1].split(";")[0].split(".")[0]
        assert " ".join(f"{words}{sentence}".split()) in flat, (name, sentence)


@pytest.mark.slow
def test_plot_setting_reruns_only_figures(tiny_run, tmp_path):
    repo = tiny_run.repo  # dry runs: read only
    assert "Nothing to be done" in _run(repo, "-n").stdout
    restyled = _write_yaml(tmp_path / "style.yaml", {"plots": {"dpi": 72, "font_scale": 1.2}})
    dry = _run(repo, "-n", "--configfile", restyled)
    jobs = scheduled(dry.stdout)
    assert set(jobs) - {"all", "run_config"} == FIGURE_RULES, jobs


@pytest.mark.slow
def test_outputs_of_another_config_are_named_not_mixed(tiny_run, tmp_path):
    """results/run.json names the configuration every table covers; another configuration
    is told so (a partial run would mix), and its report stops instead of mixing them."""
    repo, test_dir = tiny_run  # dry runs and a refused report: read only
    record = json.loads((test_dir / "results" / "run.json").read_text())
    assert (record["datasets"], record["models"]) == (["ml-100k"], MODELS)
    assert (
        record["config"]["k"] == TEST_CONFIG.get("k", 10)
        and "threads" not in record["config"]["measures"]
    )  # the config as far as it decides the outputs
    other = _write_yaml(tmp_path / "other.yaml", {"models": MODELS[:2]})
    dry = _run(repo, "-n", "table_scores", "--configfile", other)
    said = dry.stdout + dry.stderr
    assert "results/ holds the tables and figures of another configuration" in said
    assert f"models {MODELS}" in said and f"models {MODELS[:2]}" in said
    report = _run(repo, "--report", "mixed.html", "--configfile", other, check=False)
    said = report.stdout + report.stderr
    assert report.returncode != 0 and "the report would mix them" in said
    assert not (test_dir / "mixed.html").exists()
    same = _run(repo, "-n")
    assert "another configuration" not in same.stdout + same.stderr


@pytest.mark.slow
def test_a_report_after_a_partial_run_of_another_config_stops(tiny_run, tmp_path):
    """A partial run of another configuration (Table 2 of two models) starts jobs beside
    the complete run's outputs (three models): it removes results/run.json, and a report
    with the first config, which would show Table 2 of one run and the figures of the
    other, stops; so it does, naming the newer file, when the record is there but older
    than a table; a complete run of the first config rewrites Table 2 and the record, and
    the report is made."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    recorded = (test_dir / "results" / "run.json").read_text()
    other = _write_yaml(tmp_path / "other.yaml", {"models": MODELS[:2]})
    _run(repo, "table_scores", "--cores", "1", "--configfile", other)
    report = _run(repo, "--report", "mixed.html", check=False)
    said = report.stdout + report.stderr
    assert report.returncode != 0, said[-3000:]
    assert "no complete run is recorded in results/run.json" in said, said
    assert not (test_dir / "mixed.html").exists()
    # the record back (as a complete run of the first config left it), the table newer
    (test_dir / "results" / "run.json").write_text(recorded)
    scores = test_dir / "results" / "tables" / "scores.csv"
    os.utime(scores, (scores.stat().st_mtime + 60,) * 2)
    report = _run(repo, "--report", "mixed.html", check=False)
    said = report.stdout + report.stderr
    assert report.returncode != 0, said[-3000:]
    assert "results/tables/scores.csv" in said and "is newer than results/run.json" in said, said
    assert not (test_dir / "mixed.html").exists()
    _run(repo, "--cores", "1")
    _run(repo, "--report", "same.html")
    assert (test_dir / "same.html").is_file()


@pytest.mark.slow
def test_a_config_with_other_keys_but_the_same_datasets_and_models_is_not_mixed(tiny_run, tmp_path):
    """Another config with the same datasets and models (here uncertainty.level) is another
    configuration too: its report is refused naming the key that differs (the front page
    would describe it beside the tables of the recorded run), and a partial run of it (one
    table) removes the record, so that no report, of either config, mixes the two; a
    speed-only key (threads) changes nothing."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    record = test_dir / "results" / "run.json"
    other = _write_yaml(tmp_path / "other.yaml", {"uncertainty": {"level": 0.9}})
    refused = _run(repo, "--report", "mixed.html", "--configfile", other, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "the report would mix them" in said, said[-3000:]
    assert "uncertainty.level 0.95 there, 0.9 here" in said, said[-3000:]
    threads = _write_yaml(tmp_path / "threads.yaml", {"measures": {"threads": 1}})
    dry = _run(repo, "-n", "--configfile", threads)
    assert "another configuration" not in dry.stdout + dry.stderr
    done = _run(repo, "table_stats", "--forcerun", "table_stats", "--cores", "1",
                "--configfile", other)  # fmt: skip
    assert "results/run.json removed" in done.stdout + done.stderr and not record.exists()
    for extra in ([], ["--configfile", other]):
        refused = _run(repo, "--report", "mixed.html", *extra, check=False)
        said = refused.stdout + refused.stderr
        assert refused.returncode != 0 and "no complete run is recorded" in said, said[-3000:]
    assert not (test_dir / "mixed.html").exists()


@pytest.mark.slow
def test_speed_only_settings_rerun_nothing(tiny_run, tmp_path):
    """Block size, device and threads of the measures, and training's eval batch size,
    threads and checkpoint interval change how fast a job runs, never what it writes: they are
    not params (userfair.workflow.steps.SPEED_KEYS, TRAINING_SPEED_KEYS), so changing them
    schedules nothing: no dataset.pth rebuilt, no model retrained."""
    repo = tiny_run.repo  # a dry run: reads only
    faster = _write_yaml(
        tmp_path / "speed.yaml",
        {
            "measures": {"block_size": 64, "device": "auto", "threads": 1},
            "training": {"eval_batch_size": 12345, "threads": 2, "checkpoint_every": 3},
        },
    )
    dry = _run(repo, "-n", "--configfile", faster)
    assert "Nothing to be done" in dry.stdout, scheduled(dry.stdout)


@pytest.mark.slow
def test_an_estimate_reruns_no_dense_route_job(tiny_run, tmp_path):
    """measures.estimate samples the streamed route's pair measures; the tiny run's
    datasets take the dense route, which computes every measure exactly, so asking for an
    estimate reruns none of their measures jobs (the param is the default {} there,
    rules/common/route.smk: estimate_param); at most the record of the config is new."""
    repo = tiny_run.repo  # a dry run: reads only
    sampled = _write_yaml(tmp_path / "estimate.yaml", {"measures": {"estimate": {"pairs": 0.5}}})
    dry = _run(repo, "-n", "--configfile", sampled)
    jobs = scheduled(dry.stdout)
    assert "Nothing to be done" in dry.stdout or set(jobs) <= {"run_config", "all"}, jobs


@pytest.mark.slow
# After an edit of plots.py one figure is rebuilt: a rebuilt job is settled (the next dry run
# no longer schedules it) while the others still wait for theirs. Snakemake records the new
# code with each job, so one job shows what rebuilding all ten would (a tenth of the cost).
# An edit of the figures' step schedules the same jobs, which the dry run shows.
@pytest.mark.parametrize(
    "module, build", [("workflow/plots.py", True), ("workflow/steps/figures.py", False)]
)
def test_drawing_code_change_reruns_only_figures(tiny_run, module, build, tmp_path):
    repo, _ = copy_run(tiny_run, tmp_path / "run")
    drawing_code = repo / "workflow" / "userfair" / module
    drawing_code.write_text(drawing_code.read_text() + "\n# edited by the rerun test\n")
    jobs = scheduled(_run(repo, "-n").stdout)
    assert set(jobs) - {"all", "run_config"} == FIGURE_RULES, jobs
    if not build:
        return
    _run(repo, "fig_extreme", "--cores", "2")
    jobs = scheduled(_run(repo, "-n").stdout)
    assert set(jobs) - {"all", "run_config"} == FIGURE_RULES - {"fig_extreme"}, jobs


@pytest.mark.slow
def test_computing_code_change_reruns_nothing(tiny_run, tmp_path):
    repo, _ = copy_run(tiny_run, tmp_path / "run")
    computing_code = repo / "workflow" / "userfair" / "formulas" / "fairness.py"
    computing_code.write_text(computing_code.read_text() + "\n# edited by the rerun test\n")
    assert "Nothing to be done" in _run(repo, "-n").stdout


@pytest.mark.slow
def test_experiments_are_reproducible(tiny_run, tmp_path):
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    path = test_dir / "results" / "ml-100k" / "experiments"
    before = {name: pd.read_parquet(path / f"{name}.parquet") for name in EXPERIMENTS}
    rules = ["exp_relevance", "exp_similarity", "exp_extreme", "exp_gamma"]
    _run(repo, "--cores", "2", "--forcerun", *rules, "--until", *rules)
    for name, frame in before.items():
        pd.testing.assert_frame_equal(pd.read_parquet(path / f"{name}.parquet"), frame)


@pytest.mark.slow
def test_gamma_below_one_without_genres_is_a_clear_error(tmp_path):
    work = make_workdir(tmp_path / "run")
    config = _write_yaml(
        tmp_path / "gamma.yaml", {"datasets": ["ml-100k", "lastfm"], "measures": {"gamma": 0.5}}
    )
    proc = snakemake(work, "-n", "--configfile", config, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "needs item genres" in output and "['lastfm']" in output
