"""The analysis of the PUF variants (userfair.workflow.variant_analysis): Kendall tau between
the variants' model orderings with bootstrap intervals and its summary, against loops
written from the definitions and hand-worked cases; Figs. 3 and 4 with each similarity;
Table 2 with intervals holding the opt-in rows. The workflow side:
tests/runs/test_variants_workflow.py."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from types import SimpleNamespace

import jinja2
import numpy as np
import pandas as pd
import pytest
from docutils.core import publish_parts
from scipy.stats import kendalltau, skew

from userfair.files.inputs import load_inputs, load_split_inputs
from userfair.formulas import effectiveness
from userfair.measures import GROUPS, NAMES, optional_names
from userfair.similarity.pairwise import compute
from userfair.similarity.registry import SimilarityData
from userfair.workflow import experiments, tables
from userfair.workflow import variant_analysis as va

import reference as ref
from measures_data import graded_split, python_views, write_item_file

REPO = Path(__file__).resolve().parents[2]
MODELS = ["UserKNN", "ItemKNN", "BPR", "NCL", "MultiVAE"]
VARIANTS = [n for n in NAMES + optional_names(True, ("RCos", "Genre")) if n.startswith("PUF-")]


def test_parts_and_change_by_hand():
    assert va.parts("PUF-gNDCG-RCos") == ("gNDCG", "RCos")
    assert va.change("PUF-P-Cos", "PUF-P-Genre") == "similarity"
    assert va.change("PUF-NDCG-Jacc", "PUF-gNDCG-Jacc") == "graded"
    assert va.change("PUF-P-Jacc", "PUF-gNDCG-Jacc") == "score"
    assert va.change("PUF-P-Cos", "PUF-NDCG-Jacc") == "both"
    assert va.change("PUF-P-Cos", "PUF-P-Cos") == "none"
    with pytest.raises(ValueError, match="not a PUF variant"):
        va.parts("SD-P")
    # score outer, similarity inner, whatever the order given
    assert va.puf_variants(["UF", "PUF-gNDCG-Cos", "PUF-P-Genre", "PUF-P-Cos"]) == [
        "PUF-P-Cos", "PUF-P-Genre", "PUF-gNDCG-Cos",
    ]  # fmt: skip


def _records_and_frames(seed: int, datasets=("d1", "d2"), resamples: int = 40):
    rng = np.random.default_rng(seed)
    records, frames = {}, {}
    for d in datasets:
        for m in MODELS:
            record = {n: float(rng.random()) for n in NAMES + optional_names(True, ("RCos",))}
            record.update({n: float(rng.random()) for n in VARIANTS if n not in record})
            records[(d, m)] = record
            frame = pd.DataFrame(
                {n: record[n] + rng.normal(0, 0.2, resamples) for n in VARIANTS}
            ).rename_axis("resample")
            frame.iloc[3, 0] = np.nan  # a resample where one variant is undefined
            frames[(d, m)] = frame
    # a tie: two models equal on one variant in one dataset
    records[("d1", "BPR")]["PUF-P-Genre"] = records[("d1", "NCL")]["PUF-P-Genre"]
    return records, frames


def _loop_tau(a, b):
    """tau-b from scipy over the models where both are finite; NaN below 2 or constant."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = np.isfinite(a) & np.isfinite(b)
    if keep.sum() < 2 or np.ptp(a[keep]) == 0 or np.ptp(b[keep]) == 0:
        return math.nan
    return float(kendalltau(-a[keep], -b[keep], variant="b").statistic)  # lower is fairer


def test_variant_tau_against_a_loop_over_pairs_and_resamples():
    records, frames = _records_and_frames(3)
    table = va.variant_tau(records, frames, ["d1", "d2"], MODELS, level=0.9)
    assert list(table.columns) == list(va.TAU_COLUMNS)
    names = va.puf_variants(VARIANTS)
    assert len(table) == 2 * len(names) ** 2
    indexed = table.set_index(["dataset", "measure_a", "measure_b"])
    # the loop on the variants with a NaN resample (P-Cos) and a tie (P-Genre) and two more
    checked = ["PUF-P-Cos", "PUF-P-Genre", "PUF-NDCG-Jacc", "PUF-gNDCG-RCos"]
    for d, a, b in itertools.product(["d1", "d2"], checked, checked):
        row = indexed.loc[(d, a, b)]
        tau = _loop_tau([records[(d, m)][a] for m in MODELS], [records[(d, m)][b] for m in MODELS])
        assert row["tau"] == pytest.approx(tau, abs=1e-12, nan_ok=True), (d, a, b)
        resampled = [
            _loop_tau(
                [frames[(d, m)][a].iloc[r] for m in MODELS],
                [frames[(d, m)][b].iloc[r] for m in MODELS],
            )
            for r in range(40)
        ]
        finite = [t for t in resampled if math.isfinite(t)]
        low, high = np.quantile(finite, [0.05, 0.95])
        assert row["low"] == pytest.approx(low, abs=1e-12) and row["high"] == pytest.approx(high)
        assert row["excludes_zero"] == (low > 0 or high < 0)
        assert row["change"] == va.change(a, b)
        assert (row["score_a"], row["similarity_a"]) == va.parts(a)
    for d, a, b in itertools.product(["d1", "d2"], names, names):
        row = indexed.loc[(d, a, b)]
        if a == b:
            assert row["tau"] == 1.0  # a variant orders the models as itself
        assert row["tau"] == pytest.approx(indexed.loc[(d, b, a)]["tau"], nan_ok=True)
        assert row["low"] <= row["high"]


def test_variant_tau_by_hand_and_without_resamples():
    # three models; P-Cos orders them 1 < 2 < 3, P-Genre 1 < 3 < 2: one discordant pair of 3
    points = {"A": (0.1, 0.1), "B": (0.2, 0.3), "C": (0.3, 0.2)}
    records = {
        ("d", m): {"PUF-P-Cos": cos, "PUF-P-Genre": genre, "UF": 1.0}
        for m, (cos, genre) in points.items()
    }
    table = va.variant_tau(records, None, ["d"], ["A", "B", "C"])
    tau = table.set_index(["measure_a", "measure_b"])["tau"]
    assert tau[("PUF-P-Cos", "PUF-P-Genre")] == pytest.approx(1 / 3)
    assert tau[("PUF-P-Genre", "PUF-P-Genre")] == 1.0
    assert table["low"].isna().all() and not table["excludes_zero"].any()
    assert set(table["measure_a"]) == {"PUF-P-Cos", "PUF-P-Genre"}  # UF is no variant


def test_tau_summary_against_a_loop():
    records, frames = _records_and_frames(4)
    table = va.variant_tau(records, frames, ["d1", "d2"], MODELS)
    summary = va.tau_summary(table)
    names = va.puf_variants(VARIANTS)
    for _, row in summary.iterrows():
        pairs = [
            (a, b)
            for i, a in enumerate(names)
            for b in names[i + 1 :]
            if va.change(a, b) == row["change"]
        ]
        indexed = table[table["dataset"] == row["dataset"]].set_index(["measure_a", "measure_b"])
        taus = [indexed.loc[p, "tau"] for p in pairs]
        finite = [t for t in taus if math.isfinite(t)]
        assert row["pairs"] == len(pairs) and row["defined"] == len(finite)
        assert row["mean_tau"] == pytest.approx(np.mean(finite))
        assert row["equivalent"] == sum(abs(t) >= 0.9 for t in finite)
        assert row["lowest_tau"] == pytest.approx(min(finite))
        lowest = [p for p in pairs if indexed.loc[p, "tau"] == min(finite)]
        least = min(lowest, key=lambda p: indexed.loc[p, "low"])  # ties: the lower interval
        assert (row["lowest_a"], row["lowest_b"]) == least
        assert row["lowest_low"] == indexed.loc[least, "low"]
        assert row["excluding_zero"] == sum(bool(indexed.loc[p, "excludes_zero"]) for p in pairs)
    assert set(summary["change"]) == {"similarity", "graded", "score", "both"}


def test_reading_says_the_summary_in_words():
    records = {
        ("d", m): {"PUF-P-Cos": c, "PUF-P-Genre": g, "PUF-NDCG-Cos": n}
        for m, (c, g, n) in {
            "A": (0.1, 0.1, 0.3),
            "B": (0.2, 0.3, 0.2),
            "C": (0.3, 0.2, 0.1),
        }.items()
    }
    summary = va.tau_summary(va.variant_tau(records, None, ["d"], ["A", "B", "C"]))
    lines = va.reading(summary)
    # P-Cos / P-Genre 1/3 (one discordant pair of 3); P-Cos / NDCG-Cos -1 (reversed)
    assert lines[0] == (
        "d, another similarity: mean tau 0.33 over 1 pairs (0 with abs(tau) >= 0.9); "
        "least agreeing PUF-P-Cos / PUF-P-Genre 0.33"
    )
    assert lines[1].startswith("d, another score: mean tau -1.00 over 1 pairs (1 with")
    assert len(lines) == 3 and lines[2].startswith("d, score and similarity: mean tau -0.33")


# --- Figs. 3 and 4 with each similarity -------------------------------------------------


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    path = tmp_path_factory.mktemp("graded")
    train, test, topk, item_genres = graded_split(8, m=14)
    write_item_file(path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=path / "d.item", grade="rating")
    split = load_split_inputs(train, test)
    return inputs, split, (train, test, topk, item_genres)


def test_fig3_rows_of_each_similarity(graded):
    inputs, split, (train, test, topk, item_genres) = graded
    settings = experiments.Settings(k=10, block_size=5, device="cpu")
    vectors = np.random.default_rng(4).normal(size=(len(inputs.users), 3))
    fig3, fig4 = va.experiment_rows(inputs, split, ["genre", "vec"], settings, 2, vectors)
    order = ["Cos", "Jacc", "RCos", "Vec", "Genre"]  # the registry's
    assert list(dict.fromkeys(fig3["similarity"])) == order
    assert list(dict.fromkeys(fig4["similarity"])) == order
    # Jacc: the observed rows of Fig. 3 itself (run_similarity on the stored Jaccard)
    jacc = compute("jacc", inputs.train_of_evaluated(), inputs.users, None, 5)
    base = experiments.run_similarity(inputs, jacc, [2.0], settings, seed=2)
    base = base[base["distribution"] == "observed"].set_index("measure")
    mine = fig3[fig3["similarity"] == "Jacc"].set_index("measure")
    for measure, row in base.iterrows():
        assert mine.loc[measure, "value"] == pytest.approx(row["value"], rel=1e-9, abs=1e-12)
        assert mine.loc[measure, "skewness"] == pytest.approx(row["skewness"], rel=1e-9)
    # Cos: PUF on the normalised cosine (the loop), skewness of its pair values
    lists, relevant, train_sets, _ = python_views(inputs, train, test, topk)
    cos = ref.cosine(train_sets)
    scores = ref.effectiveness(lists, relevant, 10)
    row = fig3[fig3["similarity"] == "Cos"].set_index("measure")
    assert row.loc["PUF-P", "value"] == pytest.approx(ref.puf(scores["P"], cos), rel=1e-9)
    assert row.loc["PUF-NDCG", "value"] == pytest.approx(ref.puf(scores["NDCG"], cos), rel=1e-9)
    assert row.loc["PUF-P", "skewness"] == pytest.approx(skew(list(cos.values())), rel=1e-9)


def test_fig4_with_a_similarity_is_the_sorted_assignment(graded):
    """MostFair pairs the largest similarity with the smallest gap: PUF is the sum of the
    products of the similarities sorted descending and the gaps sorted ascending (the
    least such sum of any assignment), MostUnfair the largest; checked step by step."""
    inputs, split, _ = graded
    settings = experiments.Settings(k=10, block_size=5, device="cpu")
    _, fig4 = va.experiment_rows(inputs, split, [], settings, seed=2)
    assert list(dict.fromkeys(fig4["similarity"])) == ["Cos", "Jacc", "RCos"]  # grades: RCos
    m = len(inputs.users)
    data = SimilarityData.of(inputs)
    raw = va.raw_similarity("rcos", data, 5)
    pairs = experiments.matrix_to_pairs(raw)
    normalised = (pairs - pairs.min()) / (pairs.max() - pairs.min())
    lists = experiments.relevance_lists(
        split.relevant, split.train_of_evaluated(), 10, np.random.default_rng(2)
    )
    part = fig4[(fig4["similarity"] == "RCos") & (fig4["measure"] == "PUF")]
    upper = np.triu_indices(m, 1)
    for share in experiments.STEPS:
        scores = effectiveness.per_user(lists.at(share), split.relevant, 10)
        for score in ("P", "NDCG"):
            gaps = np.abs(scores[score][upper[0]] - scores[score][upper[1]])
            fair = np.sort(normalised)[::-1] @ np.sort(gaps) / len(gaps)
            unfair = np.sort(normalised) @ np.sort(gaps) / len(gaps)
            got = part[(part["share"] == share) & (part["score"] == score)].set_index("assignment")
            assert got.loc["MostFair", "value"] == pytest.approx(fair, rel=1e-9, abs=1e-12)
            assert got.loc["MostUnfair", "value"] == pytest.approx(unfair, rel=1e-9, abs=1e-12)


def test_run_extreme_refuses_pair_values_of_another_size(graded):
    _, split, _ = graded
    with pytest.raises(ValueError, match="pair values for 14 users"):
        experiments.run_extreme(split, experiments.Settings(), 1, pair_sims=np.zeros(3))


# --- Table 2 with intervals and the opt-in rows -------------------------------------------


def _summary(names, models=("UserKNN", "BPR")):
    rng = np.random.default_rng(5)
    rows = []
    for model in models:
        for name in names:
            value = float(rng.random())
            rows.append(("d", model, name, value, value - 0.1, value + 0.1))
    return pd.DataFrame(rows, columns=["dataset", "model", "measure", "value", "low", "high"])


def test_table2_with_intervals_holds_the_opt_in_rows_after_their_groups():
    opt_in = optional_names(True, ("Genre",))
    records = {("d", m): {name: 0.5 for name in NAMES + opt_in} for m in ("UserKNN", "BPR")}
    groups = tables.table_groups(records)
    summary = _summary(NAMES + opt_in)
    csv, tex, bold = tables.table_scores_ci(summary, ["d"], ["UserKNN", "BPR"], None, groups)
    assert list(csv.index) == [n for names in groups.values() for n in names]
    assert "Fair (PUF variants)" in set(csv["Group"]) and "Eff (graded)" in set(csv["Group"])
    indexed = summary.set_index(["model", "measure"])
    for name in opt_in:
        for model, label in (("UserKNN", "U-KNN"), ("BPR", "BPR")):
            cells = csv.loc[name, [label, f"{label} low", f"{label} high"]].tolist()
            assert cells == indexed.loc[(model, name), ["value", "low", "high"]].tolist()
    # without opt-in groups: the rows of the 18, exactly as before
    plain, _, _ = tables.table_scores_ci(_summary(NAMES), ["d"], ["UserKNN", "BPR"])
    again, _, _ = tables.table_scores_ci(_summary(NAMES), ["d"], ["UserKNN", "BPR"], None, GROUPS)
    pd.testing.assert_frame_equal(plain, again)
    assert list(plain.index) == list(NAMES)


# --- the figures' readings, included by the report's captions ------------------------------


def test_fig3_and_fig4_readings_by_hand():
    sampled = pd.DataFrame(
        {
            "dataset": "d", "distribution": ["weibull", "weibull", "observed"],
            "skewness": [0.0, 2.0, 1.0], "measure": "PUF-P", "value": [0.2, 0.1, 0.3],
        }
    )  # fmt: skip
    observed = pd.DataFrame(
        {
            "dataset": "d", "model": "NCL", "similarity": ["Cos", "Genre", "Jacc"],
            "skewness": [1.0, 1.5, -1.0], "measure": "PUF-P", "value": [0.2, 0.1, 0.5],
        }
    )  # fmt: skip
    (line,) = va.similarity_reading(observed, sampled)
    # the curve (the observed row of Fig. 3 left out) is 0.15 at 1.0 and 0.125 at 1.5
    assert line == (
        "d (NCL's lists), PUF-P: Cos 0.200 at skewness 1.00 (above the curve's 0.150); "
        "Genre 0.100 at skewness 1.50 (below the curve's 0.125); "
        "Jacc 0.500 at skewness -1.00 (outside the curve's range)"
    )
    rows = [
        ("d", sim, 0.5, assignment, "P", measure, value)
        for sim, values in (("Cos", (0.1, 0.3, 0.60, 0.61)), ("Jacc", (0.05, 0.2, 0.5, 0.47)))
        for (assignment, measure), value in zip(
            [("MostFair", "PUF"), ("MostUnfair", "PUF"), ("MostFair", "UF"), ("MostUnfair", "UF")],
            values,
        )
    ]
    extreme = pd.DataFrame(
        rows, columns=["dataset", "similarity", "share", "assignment", "score", "measure", "value"]
    )
    extreme = pd.concat([extreme, extreme.assign(share=0.0, value=9.0)])  # another step
    assert va.extreme_reading(extreme) == [
        "d, P, 50 % switched: PUF from MostFair to MostUnfair Cos 0.100 to 0.300; Jacc 0.050 "
        "to 0.200; UF moves by at most 0.030"
    ]


@pytest.mark.parametrize(
    ("caption", "key"),
    [
        ("fig_variants_tau.rst", "tau_reading"),
        ("fig_variants_similarity.rst", "similarity_reading"),
        ("fig_variants_extreme.rst", "extreme_reading"),
    ],
)
def test_each_caption_includes_its_reading(tmp_path, monkeypatch, caption, key):
    """As snakemake --report renders a caption: jinja2 with the job, then docutils in the
    working directory, where the include resolves."""
    path = f"results/figures/{key}.rst"
    va.write_reading(["d, one: 1.00 [0.33, 1.00]", "d, two: 0.5"], tmp_path / path, "Seen")
    monkeypatch.chdir(tmp_path)
    params = SimpleNamespace(
        similarities=["cos", "jacc", "genre"], relevance=["binary"], resamples=30, level=0.95
    )
    job = SimpleNamespace(params=params, output=SimpleNamespace(**{key: path}))
    text = (REPO / "workflow" / "report" / caption).read_text()
    rendered = jinja2.Environment().from_string(text).render(snakemake=job)
    html = publish_parts(rendered, writer="html")["body"]
    assert "cos, jacc, genre" in html and "System Message" not in html
    assert "<strong>Seen</strong>" in html and "d, one: 1.00 [0.33, 1.00]" in html
