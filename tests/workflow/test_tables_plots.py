"""Tables 2-3 and every figure, on constructed inputs."""

import json

import numpy as np
import pandas as pd
import pytest

from userfair import measures
from userfair.files.io import InputError
from userfair.formulas.agreement import agreement_long
from userfair.measures import FAIR, NAMES
from userfair.workflow import analysis_figures, figure_style, gamma_figures, plots, tables
from userfair.workflow.models import label

MODELS = ["UserKNN", "BPR", "NCL"]


def _records(datasets=("ml-100k", "lastfm")):
    rng = np.random.default_rng(1)
    records = {}
    for dataset in datasets:
        for i, model in enumerate(MODELS):
            record = {m: float(rng.random()) for m in NAMES}
            record["seconds"] = {m: float(i + 1) for m in FAIR}
            record["seconds"].update({"similarity-cos": 2.0, "similarity-jacc": 4.0})
            record["conventions"] = measures.conventions("precision", 0.05, 1.0)
            records[(dataset, model)] = record
    return records


def test_best_per_row_is_direction_aware_and_marks_ties():
    records = _records(("d",))
    records[("d", "UserKNN")]["P"] = 0.9
    records[("d", "BPR")]["P"] = 0.1
    records[("d", "NCL")]["P"] = 0.9
    records[("d", "UserKNN")]["SD-P"] = 0.5
    records[("d", "BPR")]["SD-P"] = 0.1
    records[("d", "NCL")]["SD-P"] = float("nan")
    table, bold = tables.table_scores(records, ["d"], MODELS)
    p, sd = list(table.index).index("P"), list(table.index).index("SD-P")
    assert list(bold.iloc[p, 3:]) == [True, False, True]
    assert list(bold.iloc[sd, 3:]) == [False, True, False]
    assert not bold[["Dataset", "Group", "Better"]].to_numpy().any()
    assert list(table.columns) == ["Dataset", "Group", "Better", "U-KNN", "BPR", "NCL"]
    assert table.loc["P", "Better"] == "higher" and table.loc["SD-P", "Better"] == "lower"


def test_scores_table_files(tmp_path):
    records = _records()
    table = tables.write_scores(
        records, ["ml-100k", "lastfm"], MODELS, tmp_path / "s.csv", tmp_path / "s.tex"
    )
    assert len(table) == 2 * len(NAMES)
    csv = pd.read_csv(tmp_path / "s.csv", index_col=0)
    assert csv.loc[csv["Dataset"] == "lastfm", "NCL"].tolist() == pytest.approx(
        [records[("lastfm", "NCL")][m] for m in NAMES]
    )
    tex = (tmp_path / "s.tex").read_text()
    assert r"\toprule" in tex and r"\textbf{" in tex
    # every row has exactly one or more bold cells among the model columns
    assert tex.count(r"\textbf{") >= 2 * len(NAMES)
    # the caption names the conventions
    assert r"Envy utility $|L \cap R_u| / k$ (P@$k$)" in tex
    assert r"$\epsilon = 0.05$" in tex and r"$\gamma = 1$" in tex
    assert "UF on the raw similarity" in tex and "PUF on min-max normalised" in tex


def test_scores_table_refuses_mixed_conventions(tmp_path):
    records = _records()
    records[("lastfm", "NCL")]["conventions"] = measures.conventions("ideal", 0.05, 1.0)
    with pytest.raises(ValueError, match="different conventions"):
        tables.write_scores(
            records, ["ml-100k", "lastfm"], MODELS, tmp_path / "s.csv", tmp_path / "s.tex"
        )
    assert not list(tmp_path.iterdir())


def test_timing_table_means_over_models(tmp_path):
    table = tables.write_timing(
        _records(), ["ml-100k", "lastfm"], tmp_path / "t.csv", tmp_path / "t.tex"
    )
    assert table.loc["UF", "ml-100k"] == pytest.approx(2.0)  # mean of 1, 2, 3
    assert table.loc["similarity-jacc", "lastfm"] == pytest.approx(4.0)
    assert "Measure" in (tmp_path / "t.csv").read_text()


def test_measure_file_validation():
    good = _records(("d",))[("d", "BPR")]
    assert tables.check_measures(good, "x.json") is good
    bad = {k: v for k, v in good.items() if k != "PEU"}
    with pytest.raises(InputError, match=r"x\.json.*PEU"):
        tables.check_measures(bad, "x.json")
    with pytest.raises(InputError, match="'UF'"):
        tables.check_measures({**good, "UF": "high"}, "x.json")
    with pytest.raises(InputError, match="seconds"):
        tables.check_measures({**good, "seconds": 3}, "x.json")
    old = {k: v for k, v in good.items() if k != "conventions"}
    with pytest.raises(InputError, match=r"x\.json: field 'conventions'.*older version"):
        tables.check_measures(old, "x.json")


# --- figures ----------------------------------------------------------------------------

STYLE = plots.Style(dpi=60)


def _assert_figure_files(pdf, png):
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 1000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    assert not list(pdf.parent.glob(".*.part"))


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plotting functions hand to figure_style.save (which still writes
    them), as the paper's figures (plots, gamma_figures) and the analysis figures call it,
    so a test can read what was drawn: panels, titles, labels, the plotted data."""
    figures = []
    real = figure_style.save

    def keep(fig, *args, **kwargs):
        figures.append(fig)
        real(fig, *args, **kwargs)

    for module in (plots, gamma_figures, analysis_figures):
        monkeypatch.setattr(module, "save", keep)
    return figures


def _panels(fig):
    """The visible data panels of a figure (colour bars and hidden spares left out)."""
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def _lines(ax):
    """``{label: (x, y)}`` of an axes' labelled lines."""
    return {
        line.get_label(): (np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata()))
        for line in ax.get_lines()
        if not line.get_label().startswith("_")
    }


def _relevance_frame(datasets=("ml-100k",)):
    rows = []
    measures = sum(plots.RELEVANCE_PANELS.values(), [])
    for dataset in datasets:
        for share in np.linspace(0, 1, 11):
            for measure in measures:
                value = share * (1 - share) if measure != "Gini-P" or share < 1 else np.nan
                rows.append((dataset, share, measure, value))
    return pd.DataFrame(rows, columns=["dataset", "share", "measure", "value"])


def test_agreement_figure(tmp_path, drawn):
    long = agreement_long(tables.scores_frame(_records(("a", "b"))))
    plots.agreement_figure(long, STYLE, tmp_path / "a.pdf", tmp_path / "a.png")
    _assert_figure_files(tmp_path / "a.pdf", tmp_path / "a.png")
    (fig,) = drawn
    panels = [ax for ax in _panels(fig) if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    assert fig.get_size_inches()[0] == figure_style.PAGE_WIDTH_IN
    for ax, dataset in zip(panels, "ab"):
        # one lower triangle: rows from the second measure, columns to the last but one
        assert [t.get_text() for t in ax.get_xticklabels()] == list(NAMES[:-1])
        assert [t.get_text() for t in ax.get_yticklabels()] == list(NAMES[1:])
        part = long[long["dataset"] == dataset].set_index(["measure_a", "measure_b"])["tau"]
        colours = ax.collections[0].get_array().reshape(len(NAMES) - 1, len(NAMES) - 1)
        a, b = NAMES[-1], NAMES[0]  # the cell of the last and first measure: bottom left
        assert np.isclose(colours[-1, 0], part[(a, b)])
        assert not any(t.get_text() for t in ax.texts)  # two a row: too small for a tau


def test_the_tau_heatmap_is_seaborns_without_its_draws():
    """plots._tau_heatmap draws a panel as seaborn.heatmap(center=0, vmin=-1, vmax=1,
    cmap="vlag") does, pixel for pixel (masked and missing cells blank, light text on dark
    cells), its row labels level; and the figure turns crowded column labels upright once
    drawn whole, leaving roomy ones level."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    rng = np.random.default_rng(3)
    matrix = pd.DataFrame(rng.uniform(-1, 1, (4, 5)), index=list("abcd"), columns=list("vwxyz"))
    matrix.iloc[0, 4] = np.nan
    mask = np.triu(np.ones((4, 5), bool), k=2)
    annot = np.array([[f"{v:.2f}" for v in row] for row in matrix.to_numpy()])
    STYLE.apply()  # the figures' fonts, under which seaborn turns these labels upright
    drawn = []
    for draw in ("ours", "seaborn"):
        fig, ax = plt.subplots(figsize=(3, 2.5), dpi=72)
        if draw == "ours":
            plots._tau_heatmap(ax, matrix, annot, mask)
        else:
            sns.heatmap(matrix, ax=ax, vmin=-1, vmax=1, center=0, cmap="vlag", mask=mask,
                        annot=annot, fmt="", annot_kws={"fontsize": plots.ANNOTATION_POINTS},
                        linewidths=0.2, linecolor="white", cbar=False)  # fmt: skip
            ax.grid(False)  # as the figures' style draws grids
            ax.set(xlabel="", ylabel="")  # and every label level, as before the figure turns
            plt.setp([*ax.get_xticklabels(), *ax.get_yticklabels()], rotation=0)
        fig.canvas.draw()
        drawn.append(np.asarray(fig.canvas.buffer_rgba()).copy())
        plt.close(fig)
    assert np.array_equal(drawn[0], drawn[1])
    fig, (roomy, crowded) = plt.subplots(1, 2, figsize=(6, 2), dpi=72)
    plots._tau_heatmap(roomy, matrix, annot, mask)
    wide = pd.DataFrame(np.zeros((2, 12)), columns=[f"a long label {i}" for i in range(12)])
    plots._tau_heatmap(crowded, wide, np.full((2, 12), ""))
    plots._turn_crowded_labels(fig, [roomy, crowded])
    assert {t.get_rotation() for t in roomy.get_xticklabels()} == {0}
    assert {t.get_rotation() for t in crowded.get_xticklabels()} == {90}
    plt.close(fig)


def test_relevance_figure(tmp_path, drawn):
    frame = _relevance_frame(("ml-100k", "lastfm"))
    plots.relevance_figure(frame, STYLE, tmp_path / "r.pdf", tmp_path / "r.png")
    _assert_figure_files(tmp_path / "r.pdf", tmp_path / "r.png")
    (fig,) = drawn
    panels = _panels(fig)
    groups = list(plots.RELEVANCE_PANELS)
    assert len(panels) == 2 * len(groups)  # per dataset two rows of three groups of measures
    assert [ax.get_title() for ax in panels] == [
        f"{dataset}: {group}" for dataset in ("ml-100k", "lastfm") for group in groups
    ]
    assert fig.get_size_inches()[0] == figure_style.PAGE_WIDTH_IN
    assert fig.get_supxlabel() == plots.PERCENT_LABEL
    for row, dataset in enumerate(("ml-100k", "lastfm")):
        for col, (group, in_panel) in enumerate(plots.RELEVANCE_PANELS.items()):
            lines = _lines(panels[row * len(groups) + col])
            assert list(lines) == in_panel
            for measure, (x, y) in lines.items():
                want = frame[(frame.dataset == dataset) & (frame.measure == measure)]
                np.testing.assert_array_equal(x, np.arange(0, 101, 10))
                np.testing.assert_allclose(y, want.sort_values("share")["value"], equal_nan=True)


def test_similarity_figure(tmp_path, drawn):
    cases = [("weibull", 2.0), ("weibull", 0.5), ("normal", 0.0), ("observed", 1.3)]
    rows = [
        (dataset, dist, skewness, measure, skewness / 10)
        for dataset in ("ml-100k", "lastfm", "ml-10m")  # three panels: one spare is hidden
        for dist, skewness in cases
        for measure in plots.SIMILARITY_MEASURES
    ]
    frame = pd.DataFrame(rows, columns=["dataset", "distribution", "skewness", "measure", "value"])
    plots.similarity_figure(frame, STYLE, tmp_path / "s.pdf", tmp_path / "s.png")
    _assert_figure_files(tmp_path / "s.pdf", tmp_path / "s.png")
    (fig,) = drawn
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["ml-100k", "lastfm", "ml-10m"]
    for ax in panels:
        assert ax.get_xlabel() == "skewness of user similarity" and ax.get_ylabel() == "score"
        lines = _lines(ax)
        assert list(lines) == [*plots.SIMILARITY_MEASURES, "observed $sim_{Jacc}$"]
        x, y = lines[plots.SIMILARITY_MEASURES[0]]
        np.testing.assert_allclose(x, [0.0, 0.5, 2.0])  # the sampled cases, by skewness
        np.testing.assert_allclose(y, x / 10)
        np.testing.assert_allclose(lines["observed $sim_{Jacc}$"][0], [1.3, 1.3])


def test_extreme_figure(tmp_path, drawn):
    rows = [
        ("ml-100k", share, a, s, m, share / 3)
        for share in np.linspace(0, 1, 11)
        for a in ("MostFair", "MostUnfair")
        for s in ("P", "NDCG")
        for m in ("PUF", "UF")
    ]
    frame = pd.DataFrame(
        rows, columns=["dataset", "share", "assignment", "score", "measure", "value"]
    )
    plots.extreme_figure(frame, STYLE, tmp_path / "e.pdf", tmp_path / "e.png")
    _assert_figure_files(tmp_path / "e.pdf", tmp_path / "e.png")
    (fig,) = drawn
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["P", "NDCG"]
    for ax in panels:
        lines = _lines(ax)
        assert sorted(lines) == sorted(
            f"{m} {a}" for m in ("PUF", "UF") for a in ("MostFair", "MostUnfair")
        )
        x, y = lines["PUF MostUnfair"]
        np.testing.assert_array_equal(x, np.arange(0, 101, 10))
        np.testing.assert_allclose(y, np.linspace(0, 1, 11) / 3)
        assert {line.get_linestyle() for line in ax.get_lines()} == {"-", "--"}


def test_gamma_figures(tmp_path, drawn):
    gammas = [0, 0.5, 1]
    models = pd.DataFrame(
        [
            ("ml-100k", model, g, m, g + 0.1)
            for model in MODELS
            for g in gammas
            for m in ("UF", "PUF-P", "PUF-NDCG")
        ],
        columns=["dataset", "model", "gamma", "measure", "value"],
    )
    gamma_figures.gamma_models_figure(models, STYLE, tmp_path / "g.pdf", tmp_path / "g.png")
    _assert_figure_files(tmp_path / "g.pdf", tmp_path / "g.png")
    relevance = pd.DataFrame(
        [
            ("ml-100k", share, g, m, share * g)
            for share in np.linspace(0, 1, 11)
            for g in gammas
            for m in ("UF", "PUF-P", "PUF-NDCG")
        ],
        columns=["dataset", "share", "gamma", "measure", "value"],
    )
    gamma_figures.gamma_relevance_figure(relevance, STYLE, tmp_path / "h.pdf", tmp_path / "h.png")
    _assert_figure_files(tmp_path / "h.pdf", tmp_path / "h.png")
    by_model, lines = drawn
    for fig in (by_model, lines):
        assert [ax.get_title() for ax in _panels(fig)] == gamma_figures.GAMMA_MEASURES
    # the real runs: one line a model over gamma, the models in the legend
    (legend,) = by_model.legends
    assert [t.get_text() for t in legend.get_texts()] == [label(m) for m in MODELS]
    for ax in _panels(by_model):
        assert [line.get_label() for line in ax.get_lines()] == [label(m) for m in MODELS]
        for line in ax.get_lines():
            np.testing.assert_allclose(line.get_xdata(), gammas)
            np.testing.assert_allclose(line.get_ydata(), [g + 0.1 for g in gammas])
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "0.5", "1"]
    # the Fig. 2 lists: one line a gamma
    (legend,) = lines.legends
    assert [t.get_text() for t in legend.get_texts()] == ["0", "0.5", "1"]
    for ax in _panels(lines):
        values = sorted(round(v, 9) for line in ax.get_lines() for v in line.get_ydata())
        assert values == sorted(round(s * g, 9) for s in np.linspace(0, 1, 11) for g in gammas)


def test_figure_input_missing_column_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="missing columns.*measure"):
        plots.relevance_figure(
            pd.DataFrame({"dataset": [], "share": [], "value": []}),
            STYLE,
            tmp_path / "x.pdf",
            tmp_path / "x.png",
        )
    assert not (tmp_path / "x.pdf").exists()


def test_read_measure_files(tmp_path):
    records = _records(("d",))
    paths = {}
    for model in reversed(MODELS):  # matched by name, not by position
        path = tmp_path / f"{model}.json"
        path.write_text(json.dumps(records[("d", model)]))
        paths[f"d/{model}"] = path
    assert tables.read_measure_files(paths, ["d"], MODELS) == records
    assert list(tables.read_measure_files(paths, ["d"], MODELS)) == [("d", m) for m in MODELS]
    with pytest.raises(ValueError, match="no measures file named 'e/UserKNN'"):
        tables.read_measure_files(paths, ["d", "e"], MODELS)


def test_undefined_measure_row_has_no_bold_and_dashes(tmp_path):
    records = _records(("d",))
    for model in MODELS:
        records[("d", model)]["Gini-P"] = float("nan")  # every score 0: Gini undefined
    table, bold = tables.table_scores(records, ["d"], MODELS)
    assert table.loc["Gini-P", "NCL"] != table.loc["Gini-P", "NCL"]  # NaN
    assert not bold.iloc[list(table.index).index("Gini-P")].any()
    tables.write_scores(records, ["d"], MODELS, tmp_path / "s.csv", tmp_path / "s.tex")
    row = next(line for line in (tmp_path / "s.tex").read_text().splitlines() if "Gini-P" in line)
    assert row.count("--") == len(MODELS) and r"\textbf" not in row


def _summary(models=MODELS, datasets=("ml-100k",)):
    rng = np.random.default_rng(4)
    rows = []
    for dataset in datasets:
        for model in models:
            for measure in NAMES:
                value = float(rng.random())
                rows.append((dataset, model, measure, value, value - 0.1, value + 0.05))
    return pd.DataFrame(rows, columns=["dataset", "model", "measure", "value", "low", "high"])


def test_scores_ci_table(tmp_path):
    summary = _summary()
    summary.loc[(summary.model == "NCL") & (summary.measure == "UF"), ["low", "high"]] = np.nan
    conventions = measures.conventions("precision", 0.05, 1.0)
    frame = tables.write_scores_ci(
        summary,
        ["ml-100k"],
        MODELS,
        tmp_path / "c.csv",
        tmp_path / "c.tex",
        conventions,
        0.95,
        1000,
    )
    row = summary[(summary.model == "BPR") & (summary.measure == "PEU")].iloc[0]
    assert frame.loc["PEU", ["BPR", "BPR low", "BPR high"]].tolist() == pytest.approx(
        [row.value, row.low, row.high]
    )
    tex = (tmp_path / "c.tex").read_text()
    assert f"{row.value:.4f} [{row.low:.4f}, {row.high:.4f}]" in tex
    uf = summary[(summary.model == "NCL") & (summary.measure == "UF")].iloc[0]
    assert f" {uf.value:.4f} " in tex or f"{{{uf.value:.4f}}}" in tex  # no interval: value
    assert r"95\% percentile intervals over 1,000 bootstrap resamples" in tex
    assert "Envy utility" in tex and tex.count(r"\textbf{") >= len(NAMES)


def test_intervals_and_agreement_with_intervals_figures(tmp_path, drawn):
    style = plots.Style(dpi=60)
    summary = _summary()
    analysis_figures.intervals_figure(summary, FAIR, MODELS, style, tmp_path / "i.pdf",
                           tmp_path / "i.png")  # fmt: skip
    _assert_figure_files(tmp_path / "i.pdf", tmp_path / "i.png")
    # one panel per Fair measure, models on x, each dot the value, each bar its interval
    panels = _panels(drawn[0])
    assert [ax.get_title() for ax in panels] == list(FAIR)
    for ax, measure in zip(panels, FAIR):
        assert [t.get_text() for t in ax.get_xticklabels()] == [
            tables.model_label(m) for m in MODELS
        ]
        part = summary[summary.measure == measure].set_index("model").reindex(MODELS)
        assert len(ax.containers) == len(MODELS)  # one per model, in its colour and marker
        dots = [c.lines[0].get_ydata()[0] for c in ax.containers]
        assert np.allclose(dots, part["value"].to_numpy())
        bars = [c.lines[2][0].get_segments()[0] for c in ax.containers]
        assert np.allclose([b[0][1] for b in bars], part["low"].to_numpy())
        assert np.allclose([b[1][1] for b in bars], part["high"].to_numpy())
        looks = figure_style.model_styles([tables.model_label(m) for m in MODELS])
        assert [c.lines[0].get_marker() for c in ax.containers] == [m for _, m in looks.values()]
    long = tables.scores_frame(_records(("d",)))
    agreement = agreement_long(long)
    intervals = agreement.assign(low=agreement["tau"] - 0.5, high=agreement["tau"] + 0.5)
    intervals["excludes_zero"] = (intervals["low"] > 0) | (intervals["high"] < 0)
    plots.agreement_figure(
        agreement, style, tmp_path / "a.pdf", tmp_path / "a.png", intervals=intervals
    )
    _assert_figure_files(tmp_path / "a.pdf", tmp_path / "a.png")
    texts = plots._tau_annotations(intervals, list(NAMES))
    a, b = NAMES.index("NDCG"), NAMES.index("P")
    tau = intervals.set_index(["measure_a", "measure_b"]).loc[("NDCG", "P")]
    star = "*" if tau["excludes_zero"] else ""
    assert texts[a, b] == f"{plots.short(tau['tau'])}{star}"  # no interval in the cell
    assert texts[a, a] == ""
    # the drawn heat map (one dataset: cells large enough) carries those annotations
    (heat,) = [ax for ax in _panels(drawn[1])]
    shown = {t.get_text() for t in heat.texts}
    assert texts[a, b] in shown
    assert [t.get_text() for t in heat.get_xticklabels()] == list(NAMES[:-1])
    with pytest.raises(ValueError, match="tau intervals: missing columns"):
        plots.agreement_figure(
            agreement, style, tmp_path / "x.pdf", tmp_path / "x.png", intervals=agreement
        )


def test_the_same_figure_gives_the_same_pdf_bytes(tmp_path):
    """No creation date in the PDF: a rerun reproduces the file byte for byte."""
    out = []
    for run in ("a", "b"):
        # two panels of two models: what makes the bytes the same does not depend on the size
        analysis_figures.intervals_figure(_summary(MODELS[:2]), FAIR[:2], MODELS[:2], STYLE,
                               tmp_path / f"{run}.pdf", tmp_path / f"{run}.png")  # fmt: skip
        out.append((tmp_path / f"{run}.pdf").read_bytes())
    assert b"CreationDate" not in out[0] and out[0] == out[1]
