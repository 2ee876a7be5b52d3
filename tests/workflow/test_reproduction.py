"""The paper's printed numbers beside a run (userfair.workflow.reproduction, rule paper_gap): the
packaged CSVs equal the cells of the paper's LaTeX (tests/data/paper_tables.tex) and
hand-checked spot values; the printed-row mapping; which datasets have published numbers;
the gap cells, verdict, Kendall tau and figure on synthetic numbers. The rule itself on tiny
data presented as lastfm, beside ml-100k, which has no published numbers:
tests/runs/test_two_datasets_workflow.py."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

from userfair.measures import NAMES
from userfair.workflow import analysis_figures, catalogue, figure_style, models, reproduction

from conftest import REPO

TEX = Path(__file__).parents[1] / "data" / "paper_tables.tex"


# --- the paper's LaTeX, parsed independently of the packaged CSVs --------------------------


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split("\\\\")[0].split("&")]


def _number(text: str) -> float:
    return float(text.replace("\\bfseries", "").replace("\\%", "").replace(",", "").strip())


def parse_paper_tables(tex: str):
    """(Table 1, 2, 3) of the LaTeX as lists of tuples:
    Table 1 (dataset, column, field, value), Table 2 (dataset, row, column, value),
    Table 3 (dataset, column, printed text)."""
    tables = re.findall(r"\\begin\{table\}.*?\\end\{table\}", tex, re.S)
    assert len(tables) == 3
    stats, scores, times = [], [], []
    body = tables[0].split("\\midrule")[1].split("\\bottomrule")[0]
    for line in body.strip().splitlines():
        cells = _cells(line)
        name = re.sub(r"\\cite\{[^}]*\}", "", cells[0]).strip()
        users, test_users = cells[1].split("/")
        stats += [
            (name, "#users (all/test)", "users", _number(users)),
            (name, "#users (all/test)", "test_users", _number(test_users)),
            (name, "#items", "items", _number(cells[2])),
            (name, "#interactions", "interactions", _number(cells[3])),
            (name, "sparsity (%)", "sparsity", _number(cells[4])),
        ]
    dataset = header = None
    for line in tables[1].splitlines():
        cells = _cells(line)
        if len(cells) == 10 and cells[3] == "U-KNN":
            header = cells[3:]
        name = re.search(
            r"\\multirow\[c\]\{18\}\{\*\}\{\\rotatebox\[origin=c\]\{90\}\{([^}]*)\}", line
        )
        if name:
            dataset = name.group(1)
        row = re.search(r"\\text\{([^}]*)\}", line)
        if row and len(cells) == 10:
            scores += [(dataset, row.group(1), c, _number(v)) for c, v in zip(header, cells[3:])]
    header = None
    for line in tables[2].splitlines():
        cells = _cells(line)
        if len(cells) == 13 and cells[1] == "SD-P":
            header = cells[1:]
        elif header and len(cells) == 13:
            times += [(cells[0], column, text) for column, text in zip(header, cells[1:])]
    return stats, scores, times


@pytest.fixture(scope="module")
def latex():
    return parse_paper_tables(TEX.read_text())


def test_the_fixture_names_its_source():
    head = TEX.read_text().split("\\begin{table}")[0]
    assert "Measuring Individual User Fairness with User Similarity and Effectiveness" in head
    assert "Rampisela" in head and "Lioma" in head


def test_table2_equals_the_latex_cell_by_cell(latex):
    _, scores, _ = latex
    table = reproduction.paper_table(2)
    assert len(scores) == len(table) == 18 * 7 * 4
    printed = list(
        zip(table["dataset_printed"], table["row_printed"], table["column_printed"], table["value"])
    )
    assert printed == scores  # same cells, same order, same values
    assert (table["printed"].astype(float) == table["value"]).all()
    assert set(table["paper"]) == {reproduction.PAPER} and set(table["table"]) == {"Table 2"}


def test_table1_and_table3_equal_the_latex(latex):
    stats, _, times = latex
    table1 = reproduction.paper_table(1)
    got = list(
        zip(table1["dataset_printed"], table1["column_printed"], table1["field"], table1["value"])
    )
    assert got == stats and len(stats) == 4 * 5
    table3 = reproduction.paper_table(3)
    assert list(zip(table3["dataset_printed"], table3["column_printed"], table3["printed"])) == (
        times
    )
    below = table3["printed"] == "<0.01"
    assert table3.loc[below, "value"].isna().all() and below.sum() == 4 + 0 + 2 + 4
    assert (table3.loc[~below, "value"] == table3.loc[~below, "printed"].astype(float)).all()


def test_hand_checked_spot_values():
    """Read off the PDF by hand, one per dataset and table, the swapped rows included."""

    def score(dataset, row, column):
        t = reproduction.paper_table(2)
        hit = t[
            (t.dataset_printed == dataset) & (t.row_printed == row) & (t.column_printed == column)
        ]
        return hit.iloc[0]

    assert score("Lastfm", "HR", "NCL")["value"] == 0.7930
    qk = score("QK-video", "ME", "MVAE")
    assert (qk["value"], qk["measure"], qk["model"]) == (0.0412, "MME", "MultiVAE")
    ml10 = score("ML-10M", "NDCG-Jacc", "MVAE")
    assert (ml10["value"], ml10["measure"]) == (0.0245, "PUF-NDCG-Jacc")
    assert score("ML-20M", "MME", "U-KNN")[["value", "measure"]].tolist() == [0.0038, "ME"]
    assert score("QK-video", "Prec-Cos", "I-KNN")["printed"] == "0.0000"
    t1 = reproduction.paper_table(1).set_index(["dataset", "field"])["value"]
    assert t1[("ml-20m", "interactions")] == 10_588_141
    assert t1[("qk-video", "test_users")] == 3514 and t1[("lastfm", "sparsity")] == 98.64
    t3 = reproduction.paper_table(3).set_index(["dataset", "measure"])["value"]
    assert t3[("qk-video", "ME")] == 1867.81 and t3[("ml-20m", "UF")] == 1358.52
    scores = reproduction.paper_scores("lastfm")
    assert scores.loc["ME", "UserKNN"] == 0.0025 and scores.loc["MME", "UserKNN"] == 0.0897


def test_printed_labels_map_to_the_registries():
    table = reproduction.paper_table(2)
    mapped = table["row_printed"].map(reproduction.ROW_MEASURE)
    assert (mapped == table["measure"]).all()
    assert sorted(reproduction.ROW_MEASURE.values()) == sorted(NAMES)  # one row per measure
    assert reproduction.ROW_MEASURE["ME"] == "MME" and reproduction.ROW_MEASURE["MME"] == "ME"
    for column, model in set(zip(table["column_printed"], table["model"])):
        assert model in models.names() and models.label(model) == column
    for frame in map(reproduction.paper_table, (1, 2, 3)):
        assert (frame["dataset"] == frame["dataset_printed"].str.lower()).all()
        assert set(frame["dataset"]) <= set(catalogue.CATALOGUE)
    table3 = reproduction.paper_table(3)
    assert (table3["column_printed"].map(reproduction.TIMING_MEASURE) == table3["measure"]).all()


def test_the_paper_preprocessing_is_the_config_default():
    schema = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())
    properties = schema["properties"]["preprocessing"]["properties"]
    defaults = {key: spec["default"] for key, spec in properties.items()}
    assert defaults == reproduction.PAPER_PREPROCESSING
    measures = schema["properties"]["measures"]["properties"]
    assert {key: measures[key]["default"] for key in ("epsilon", "envy_utility", "gamma")} == {
        key: reproduction.PAPER_SETTINGS[key] for key in ("epsilon", "envy_utility", "gamma")
    }


def test_which_datasets_have_published_numbers():
    assert reproduction.paper_datasets() == [
        d.lower() for d in ("Lastfm", "QK-video", "ML-10M", "ML-20M")
    ]
    for dataset in reproduction.paper_datasets():
        assert reproduction.why_not_published(dataset, {}, reproduction.PAPER_PREPROCESSING) is None
    assert "does not use ml-100k" in reproduction.why_not_published("ml-100k")
    shop = {"shop": {"path": "x.csv", "columns": {"user": "u", "item": "i"}}}
    assert "custom_datasets" in reproduction.why_not_published("shop", shop)
    per_user = {**reproduction.PAPER_PREPROCESSING, "protocol": "per-user"}
    reason = reproduction.why_not_published("lastfm", {}, per_user)
    assert reason == "preprocessing.protocol = per-user (the paper's: protocol = global)"
    assert "preprocessing.core = 10" in reproduction.why_not_published("ml-10m", {}, {"core": 10})
    # the rating threshold matters only where there are ratings (not lastfm, qk-video)
    assert "min_rating = 4" in reproduction.why_not_published("ml-20m", {}, {"min_rating": 4})
    assert reproduction.why_not_published("lastfm", {}, {"min_rating": 4}) is None


# --- the gap on synthetic numbers ----------------------------------------------------------


def synthetic_run(dataset="qk-video", factors=None, resamples=40, seed=3):
    """Every model's measures = the print times a factor per measure; resamples spread
    around them by +-10 %. Returns (points, frames)."""
    paper = reproduction.paper_scores(dataset)
    rng = np.random.default_rng(seed)
    factors = factors or {}
    points, frames = {}, {}
    for model in paper.columns:
        points[model] = {m: float(paper.loc[m, model]) * factors.get(m, 1.0) for m in NAMES}
        spread = rng.uniform(0.9, 1.1, size=(resamples, len(NAMES)))
        frames[model] = pd.DataFrame(
            np.array([points[model][m] for m in NAMES]) * spread, columns=list(NAMES)
        )
    return points, frames


def test_gap_cells_ratio_interval_and_verdict():
    from userfair.bootstrap import inference

    factors = {"HR": 1.02, "UF": 1.5, "MME": 0.1}
    points, frames = synthetic_run(factors=factors)
    summary = inference.summary(frames, points, 0.95)
    cells = reproduction.gap_cells("qk-video", points, summary)
    assert list(cells.columns) == reproduction.CELL_COLUMNS and len(cells) == 126
    hr = cells[(cells.measure == "HR") & (cells.model == "NCL")].iloc[0]
    assert hr["paper"] == 0.1298 and hr["ours"] == pytest.approx(0.1298 * 1.02)
    assert hr["ratio"] == pytest.approx(1.02) and hr["lo"] < hr["paper"] < hr["hi"]
    assert hr["within"]
    uf = cells[cells.measure == "UF"]
    assert np.allclose(uf["ratio"], 1.5) and not uf["within"].any()  # +-10 % < 50 %
    zero = cells[(cells.measure == "PUF-P-Cos") & (cells.model == "ItemKNN")].iloc[0]
    assert zero["paper"] == 0.0 and math.isnan(zero["ratio"])  # printed 0.0000
    verdict = reproduction.verdict("qk-video", cells)
    # within 5 %: every cell but UF and MME (7 each); within 20 %: the same
    assert (verdict["cells"], verdict["within_5pct"], verdict["within_20pct"]) == (126, 112, 112)
    assert verdict["worst"].startswith("MME ") and verdict["worst"].count("x0.10") == 3
    assert verdict["line"].startswith("qk-video: ")
    assert f"{verdict['within_interval']}/126 cells within the interval" in verdict["line"]
    assert verdict["within_interval"] == int(cells["within"].sum()) <= 112


def test_a_model_the_paper_does_not_train_has_no_cells(tmp_path):
    points, _ = synthetic_run()
    points["LightGCN"] = dict(points["NCL"])
    stats = reproduction.paper_table(1).query("dataset == 'qk-video'")
    files = {"stats": {"qk-video": tmp_path / "stats.json"}, "measures": {}}
    files["stats"]["qk-video"].write_text(json.dumps(dict(zip(stats["field"], stats["value"]))))
    for model, record in points.items():
        path = tmp_path / f"{model}.json"
        conventions = dict.fromkeys(("envy_utility", "epsilon", "gamma", "uf_similarity",
                                     "puf_similarity"))  # fmt: skip
        path.write_text(json.dumps({**record, "seconds": {}, "conventions": conventions}))
        files["measures"][f"qk-video/{model}"] = path
    result = reproduction.paper_gap(
        ["qk-video", "ml-100k"], list(points), files["measures"], files["stats"]
    )
    assert len(result["cells"]) == 126 and "LightGCN" not in set(result["cells"]["model"])
    lines = result["verdicts"]["line"].tolist()
    assert lines[0].endswith("Table 1 exact; no published numbers for LightGCN")
    assert lines[1] == "ml-100k: no published numbers (the paper does not use ml-100k)"
    assert result["table1"]["exact"].all() and len(result["tau"]) == 18


def test_measures_settings_other_than_the_papers_are_named():
    assert reproduction.settings_note(reproduction.PAPER_SETTINGS) == ""
    note = reproduction.settings_note({**reproduction.PAPER_SETTINGS, "envy_utility": "ideal"})
    assert note == "measures not computed as the paper's: envy_utility = ideal (paper: precision)"


def test_rounding_of_the_print_is_forgiven():
    points, _ = synthetic_run()
    points["NCL"]["HR"] = 0.1298 + 0.00004  # prints as 0.1298
    cells = reproduction.gap_cells("qk-video", points)
    assert reproduction.relative_gap(cells).max() == 0.0 and cells["within"].isna().all()
    line = reproduction.verdict("qk-video", cells)["line"]
    assert "no intervals" in line and "126/126 within 5 %" in line


def test_order_agreement_tau_and_interval():
    points, frames = synthetic_run(factors={"P": 2.0})  # a common factor keeps the order
    frames = {m: f.assign(P=1.0) for m, f in frames.items()}  # every model ties: tau NaN
    tau = reproduction.order_agreement("qk-video", points, frames, 0.95).set_index("measure")
    assert tau.loc["P", "tau"] == pytest.approx(1.0) and tau.loc["P", "models"] == 7
    assert math.isnan(tau.loc["P", "lo"])  # every resample ties all models
    assert tau.loc["NDCG", "tau"] == pytest.approx(1.0)
    assert -1 <= tau.loc["NDCG", "lo"] <= tau.loc["NDCG", "hi"] <= 1
    reverse = {m: {k: -v for k, v in p.items()} for m, p in points.items()}
    assert reproduction.order_agreement("qk-video", reverse)["tau"].iloc[0] == pytest.approx(-1)


def test_table1_check():
    stats = {"users": 1859, "test_users": 1836, "items": 2823, "interactions": 71355,
             "sparsity": 98.6404}  # fmt: skip
    check = reproduction.table1_check("lastfm", stats)
    assert check["exact"].all() and len(check) == 5
    check = reproduction.table1_check("lastfm", {**stats, "test_users": 1835})
    assert not check.set_index("field").loc["test_users", "exact"]
    line = reproduction.verdict(
        "lastfm", reproduction.gap_cells("lastfm", synthetic_run("lastfm")[0]), check
    )["line"]
    assert "Table 1 differs: test_users 1,835 vs 1,836" in line


def test_the_figure_shows_each_model_per_measure_with_1_marked():
    from userfair.bootstrap import inference

    points, frames = synthetic_run(factors={"UF": 1.5})
    cells = reproduction.gap_cells("qk-video", points, inference.summary(frames, points))
    tau = reproduction.order_agreement("qk-video", points, frames)
    verdicts = pd.DataFrame(
        [reproduction.verdict("qk-video", cells), reproduction.no_numbers("ml-100k", "why")]
    )
    fig = analysis_figures.paper_gap_axes(
        cells, tau, verdicts, "grid g.yaml, 1 epoch", figure_style.Style()
    )
    try:
        (ax,) = [a for a in fig.axes if a.get_visible()]
        assert ax.get_ylabel() == analysis_figures.GAP_LABEL and ax.get_yscale() == "log"
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert [t.split(" (")[0] for t in ticks] == list(NAMES)
        assert ticks[NAMES.index("P")] == "P (tau 1.00)"
        assert ax.get_title().startswith("qk-video: ")
        assert any(
            np.allclose(line.get_ydata(), 1.0) and line.get_linestyle() == "--"
            for line in ax.get_lines()
        )
        series = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
        labels = [c.get_label() for c in series]
        assert labels == [models.label(m) for m in reproduction.paper_models()]
        uf = NAMES.index("UF")
        for container in series:
            y = container.lines[0].get_ydata()
            assert y[uf] == pytest.approx(1.5) and y[NAMES.index("HR")] == pytest.approx(1.0)
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend == labels
        notes = " ".join(t.get_text() for t in fig.texts)
        assert "grid g.yaml, 1 epoch" in notes and "ml-100k: no published numbers" in notes
    finally:
        plt.close(fig)


def test_a_figure_without_published_numbers_says_so(tmp_path):
    verdicts = pd.DataFrame([reproduction.no_numbers("ml-100k", "the paper does not use it")])
    empty = pd.DataFrame(columns=reproduction.CELL_COLUMNS)
    tau = pd.DataFrame(columns=["dataset", "measure", "models", "tau", "lo", "hi"])
    fig = analysis_figures.paper_gap_axes(empty, tau, verdicts, "run", figure_style.Style())
    try:
        texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
        assert "ml-100k: no published numbers (the paper does not use it)" in texts
    finally:
        plt.close(fig)
