"""The whole default workflow on a tiny ml-100k: every table, figure and experiment file,
the HTML report, reproducible experiments, and partial reruns (a plot setting reruns only
figures)."""

import re
import shutil

import pandas as pd
import pytest
import yaml
from conftest import REPO, make_workdir, snakemake

from userfair.measures import NAMES

MODELS = ["UserKNN", "ItemKNN", "BPR"]  # >= 3 so that Kendall tau says something
FIGURES = ["agreement", "relevance", "similarity", "extreme", "gamma_models", "gamma_relevance"]
EXPERIMENTS = ["relevance", "similarity", "extreme", "gamma_models", "gamma_relevance"]
# One grid point per model (the quick grid's first) keeps training to seconds.
GRID = {
    "UserKNN": {"k": [50], "shrink": [0.0]},
    "ItemKNN": {"k": [50], "shrink": [0.0]},
    "BPR": {"learning_rate": [0.005], "embedding_size": [64]},
}


def _write_yaml(path, obj):
    path.write_text(yaml.safe_dump(obj))
    return str(path)


FIGURE_RULES = {"fig_agreement", "fig_relevance", "fig_similarity", "fig_extreme", "fig_gamma"}


def _scheduled_jobs(dry_run_output: str) -> dict[str, int]:
    """{rule: count} from the 'Job stats' table of `snakemake -n`."""
    match = re.search(r"Job stats:\n(.*?)\n\n", dry_run_output + "\n\n", re.S)
    if match is None:
        return {}
    jobs = {}
    for line in match.group(1).splitlines()[2:]:
        parts = line.split()
        if len(parts) == 2 and parts[0] != "total":
            jobs[parts[0]] = int(parts[1])
    return jobs


@pytest.fixture(scope="module")
def workflow_run(tmp_path_factory, tiny_ml100k):
    work = tmp_path_factory.mktemp("analyses-run")
    # A copy of workflow/ (not the symlink make_workdir would make), so that a test can
    # touch the plotting code without touching the repository.
    shutil.copytree(
        REPO / "workflow", work / "workflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    make_workdir(work)
    grid = _write_yaml(work / "grid.yaml", GRID)
    config = _write_yaml(
        work / "tiny.yaml",
        {
            "dataset_options": {"ml-100k": {"path": str(tiny_ml100k)}},
            "models": MODELS,
            "grid": grid,
            "training": {"epochs": 1, "stopping_step": 1},
            "measures": {"device": "cpu"},
        },
    )
    snakemake(work, "--cores", "2", "--configfile", config)
    return work, config


@pytest.mark.slow
def test_every_deliverable_is_built(workflow_run):
    work, _ = workflow_run
    results = work / "results"
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
    # experiments.model NCL is not trained here: the first model's lists stand in, logged
    log = (results / "logs" / "exp_similarity" / "ml-100k.log").read_text()
    assert "using the lists of UserKNN" in log
    assert (
        pd.read_parquet(results / "ml-100k" / "experiments" / "similarity.parquet")["model"]
        .eq("UserKNN")
        .all()
    )


@pytest.mark.slow
def test_html_report(workflow_run):
    work, config = workflow_run
    snakemake(work, "--configfile", config, "--report", "results/report.html")
    html = (work / "results" / "report.html").read_text(errors="replace")
    assert "Fig. 2: varying relevance" in html and "Table 2" in html


@pytest.mark.slow
def test_plot_setting_reruns_only_figures(workflow_run, tmp_path):
    work, config = workflow_run
    assert "Nothing to be done" in snakemake(work, "-n", "--configfile", config).stdout
    restyled = _write_yaml(tmp_path / "style.yaml", {"plots": {"dpi": 72, "font_scale": 1.2}})
    dry = snakemake(work, "-n", "--configfile", config, restyled)
    jobs = _scheduled_jobs(dry.stdout)
    assert set(jobs) - {"all"} == FIGURE_RULES, jobs


@pytest.mark.slow
def test_plotting_code_change_reruns_only_figures(workflow_run):
    work, config = workflow_run
    plotting_code = work / "workflow" / "userfair" / "plots.py"
    # a real edit: Snakemake compares checksums, so touching the file is not a change
    plotting_code.write_text(plotting_code.read_text() + "\n# edited by the rerun test\n")
    jobs = _scheduled_jobs(snakemake(work, "-n", "--configfile", config).stdout)
    assert set(jobs) - {"all"} == FIGURE_RULES, jobs
    snakemake(work, *sorted(FIGURE_RULES), "--cores", "2", "--configfile", config)
    assert "Nothing to be done" in snakemake(work, "-n", "--configfile", config).stdout


@pytest.mark.slow
def test_experiments_are_reproducible(workflow_run):
    work, config = workflow_run
    path = work / "results" / "ml-100k" / "experiments"
    before = {name: pd.read_parquet(path / f"{name}.parquet") for name in EXPERIMENTS}
    snakemake(
        work, "--cores", "2", "--configfile", config,
        "--forcerun", "exp_relevance", "exp_similarity", "exp_extreme", "exp_gamma",
        "--until", "exp_relevance", "exp_similarity", "exp_extreme", "exp_gamma",
    )  # fmt: skip
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
