"""The group stage's steps (userfair.workflow.steps.groups; workflow/rules/groups.smk) on
real files of a random split and three "models": the groups files against the library,
the resamples against the uncertainty stage's (the same users drawn), and the table's
intervals, Holm-adjusted comparisons and tau rows."""

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap import inference, uncertainty
from userfair.evaluate import as_json, evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import read_json, write_inter, write_json, write_parquet
from userfair.formulas import groups as G
from userfair.measures import FAIR_GROUP
from userfair.workflow.steps.groups import INDIVIDUAL, groups, specs_of, table_groups

from measures_data import random_split

K, B, SEED = 10, 25, 4
MODELS = ["A", "B", "C"]


def test_specs_default_to_activity_and_the_declared_features():
    assert specs_of(None, ["gender"]) == ["activity:0.05", "feature:gender"]
    assert specs_of(["activity:0.2"], ["gender"]) == ["activity:0.2"] and specs_of([], []) == []


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("groups-stage")
    train, test, topk, _ = random_split(5, m=30)
    paths = {name: folder / f"d.{name}.inter" for name in ("train", "valid", "test")}
    write_inter(train, paths["train"])
    write_inter(test, paths["valid"])
    write_inter(test, paths["test"])
    raw = folder / "raw"
    raw.mkdir()
    users = sorted(test["user_id"].unique())
    lines = [f"{u}\t{'FM'[i % 2]}\t{20 + i % 4}" for i, u in enumerate(users)]
    (raw / "d.user").write_text("user_id:token\tgender:token\tage:token\n" + "\n".join(lines))
    files = {"groups": {}, "group_resamples": {}, "measures": {}, "resamples": {}}
    for model in MODELS:
        # other models: the lists of other random splits (the same user and item ids)
        lists = topk if model == "A" else random_split(5 + MODELS.index(model), m=30)[2]
        path = folder / f"{model}.topk.csv"
        lists.to_csv(path, index=False)
        key = f"d/{model}"
        out = {name: folder / f"{model}.{name}" for name in ("json", "parquet")}
        groups(
            paths["train"], paths["valid"], paths["test"], str(path), [str(raw)],
            out["json"], out["parquet"], dataset="d", source=str(raw), groups=None,
            features=["gender", "height"], k=K, resamples=B, seed=SEED,
        )  # fmt: skip
        inputs = load_inputs(train, test, lists, k=K, valid=test)
        weights = uncertainty.resample_weights(len(inputs.users), B, SEED)
        frame = uncertainty.bootstrap(inputs, weights, k=K, device="cpu")
        files["groups"][key], files["group_resamples"][key] = str(out["json"]), str(out["parquet"])
        files["measures"][key] = str(folder / f"{model}.measures.json")
        files["resamples"][key] = str(folder / f"{model}.boot.parquet")
        write_json(as_json(evaluate(inputs, k=K, device="cpu")), files["measures"][key])
        write_parquet(frame, files["resamples"][key])
    outputs = {name: folder / f"{name}.csv" for name in ("table", "significance", "agreement")}
    table = table_groups(
        files["groups"], files["group_resamples"], files["measures"], files["resamples"],
        ["d"], MODELS, level=0.9, csv=outputs["table"],
        significance_csv=outputs["significance"], agreement_csv=outputs["agreement"],
    )  # fmt: skip
    return folder, files, outputs, table, (train, test)


@pytest.mark.slow
def test_groups_files_equal_the_library_and_the_uncertainty_resamples(run):
    folder, files, _, _, (train, test) = run
    record = read_json(files["groups"]["d/B"])
    assert list(record["groupings"]) == ["activity:0.05", "feature:gender"]  # height skipped
    lists = pd.read_csv(folder / "B.topk.csv")
    inputs = load_inputs(train, test, lists, k=K, valid=test)
    found = G.groups_of(inputs, "feature:gender", G.read_user_features(folder / "raw/d.user"))
    weights = uncertainty.resample_weights(len(inputs.users), B, SEED)
    expected = uncertainty.bootstrap(inputs, weights, k=K, device="cpu", groups=found)
    stored = pd.read_parquet(files["group_resamples"]["d/B"])
    for column in ("UserMAD-P", "UserMAD-NDCG", "P[F]", "NDCG[M]"):
        assert np.allclose(stored[f"feature:gender|{column}"], expected[column], atol=1e-12)
    point = evaluate(inputs, k=K, device="cpu", groups=found)
    gender = record["groupings"]["feature:gender"]
    assert gender["values"]["UserMAD-P"] == pytest.approx(point["UserMAD-P"], abs=1e-12)
    assert gender["rows"] == point["groups"]["rows"]


@pytest.mark.slow
def test_table_intervals_tests_and_tau(run):
    _, files, outputs, table, _ = run
    stored = pd.read_csv(outputs["table"])
    assert list(stored.columns[:4]) == ["dataset", "by", "model", "measure"]
    row = stored[(stored.by == "activity:0.05") & (stored.model == "C")]
    row = row[row.measure == "UserMAD-NDCG"].iloc[0]
    frame = pd.read_parquet(files["group_resamples"]["d/C"])["activity:0.05|UserMAD-NDCG"]
    low, high = inference.percentile_interval(frame.to_numpy(), 0.9)
    assert (row["low"], row["high"]) == pytest.approx((low, high), abs=1e-12)
    tests = pd.read_csv(outputs["significance"])
    assert set(tests["measure"]) == set(FAIR_GROUP) and len(tests) == 2 * 2 * 3
    part = tests[(tests.by == "feature:gender") & (tests.measure == "UserMAD-P")]
    assert np.allclose(part["p_holm"], inference.holm(part["p"].to_numpy()), equal_nan=True)
    tau = pd.read_csv(outputs["agreement"])
    assert set(tau["measure_a"]) == set(FAIR_GROUP) and set(tau["measure_b"]) == set(INDIVIDUAL)
    assert len(tau) == 2 * len(FAIR_GROUP) * len(INDIVIDUAL)


@pytest.mark.slow
def test_figure_per_dataset(run):
    from userfair.workflow.group_figure import groups_of_run
    from userfair.workflow.plots import Style, save

    folder, files, outputs, _, _ = run
    frames = {m: pd.read_parquet(files["resamples"][f"d/{m}"]) for m in MODELS}
    points = {m: read_json(files["measures"][f"d/{m}"]) for m in MODELS}
    intervals = inference.summary(frames, points, 0.9).assign(dataset="d")
    pdf, png = folder / "fig.pdf", folder / "fig.png"
    unread = pd.DataFrame()  # the reading's tables
    fig = groups_of_run(pd.read_csv(outputs["table"]), intervals, unread, unread, unread,
                        Style(), dataset="d", models=MODELS)  # fmt: skip
    save(fig, pdf, png, Style())
    assert png.stat().st_size > 1000 and pdf.read_bytes().startswith(b"%PDF")


@pytest.mark.slow
def test_without_the_bootstrap_tau_has_no_interval(run, tmp_path):
    """resamples 0: groups_agreement.csv still gives each group measure's tau against the
    individual ones (Fig. 1's group panel), equal to tau-b of the point values."""
    _, files, _, _, _ = run
    out = {name: tmp_path / f"{name}.csv" for name in ("table", "significance", "agreement")}
    table_groups(
        files["groups"], files["group_resamples"], files["measures"], {}, ["d"], MODELS,
        level=0.9, csv=out["table"], significance_csv=out["significance"],
        agreement_csv=out["agreement"],
    )  # fmt: skip
    tau = pd.read_csv(out["agreement"])
    assert list(tau.columns) == ["dataset", "by", "measure_a", "measure_b", "tau"]
    assert len(tau) == 2 * len(FAIR_GROUP) * len(INDIVIDUAL)
    row = tau[(tau.by == "feature:gender") & (tau.measure_a == "UserMAD-P")]
    row = row[row.measure_b == "UF"].iloc[0]
    group = [read_json(files["groups"][f"d/{m}"])["groupings"]["feature:gender"]["values"]
             for m in MODELS]  # fmt: skip
    uf = [read_json(files["measures"][f"d/{m}"])["UF"] for m in MODELS]
    # both lower-is-fairer: the raw values' tau-b, a direct pairwise count
    a = [g["UserMAD-P"] for g in group]
    pairs = [(i, j) for i in range(len(MODELS)) for j in range(i + 1, len(MODELS))]
    signs = [(np.sign(a[i] - a[j]), np.sign(uf[i] - uf[j])) for i, j in pairs]
    n0 = len(pairs)
    n1 = sum(1 for s, _ in signs if s == 0)
    n2 = sum(1 for _, t in signs if t == 0)
    expected = sum(s * t for s, t in signs) / np.sqrt((n0 - n1) * (n0 - n2))
    assert row["tau"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
def test_group_measures_over_replicates_and_users(run, tmp_path):
    """table_replicates with the groups files of two replicates per model (here another
    model's files stand for replicate 1; C's replicates are identical, as a KNN model's):
    every table but the tau intervals holds each grouping's group measures and means, with
    the two-level inference of userfair.bootstrap.replicates on the group resamples."""
    from userfair.bootstrap import replicates as two_level
    from userfair.workflow.steps.replicates import table_replicates

    _, files, _, _, _ = run
    other = {"A": "B", "B": "C", "C": "C"}
    named = {kind: {f"d/{m}/{r}": files[kind][f"d/{m if r == 0 else other[m]}"]
                    for m in MODELS for r in (0, 1)} for kind in files}  # fmt: skip
    out = {n: tmp_path / f"{n}.csv" for n in (
        "values", "variance", "scores", "significance", "agreement", "conclusions")}  # fmt: skip
    table_replicates(
        named["measures"], named["resamples"], ["d"], MODELS, 2, level=0.9, seed=1,
        **{f"{n}_csv": path for n, path in out.items()},
        group_files=named["groups"], group_resamples=named["group_resamples"],
    )  # fmt: skip
    gap, mean = "UserMAD-P (feature:gender)", "NDCG[F] (feature:gender)"
    values = pd.read_csv(out["values"])
    for model in MODELS:
        for r in (0, 1):
            record = read_json(named["groups"][f"d/{model}/{r}"])
            row = values[(values.model == model) & (values.replicate == r)]
            assert row[row.measure == gap]["value"].item() == pytest.approx(
                record["groupings"]["feature:gender"]["values"]["UserMAD-P"], abs=1e-15
            )
    # Table 2 over both sources: the mean of the replicates, the t interval of the two
    # levels computed here from the group resamples themselves
    scores = pd.read_csv(out["scores"]).set_index(["model", "measure"])
    for measure, column in ((gap, "feature:gender|UserMAD-P"), (mean, "feature:gender|NDCG[F]")):
        y = np.stack([pd.read_parquet(named["group_resamples"][f"d/A/{r}"])[column]
                      for r in (0, 1)])  # fmt: skip
        full = [read_json(named["groups"][f"d/A/{r}"])["groupings"]["feature:gender"]
                ["values"][column.split("|")[1]] for r in (0, 1)]  # fmt: skip
        m = two_level.moments(y, np.array(full))
        row = scores.loc[("A", measure)]
        assert row["value"] == pytest.approx(np.mean(full), abs=1e-15)
        assert (row["low"], row["high"]) == pytest.approx(two_level.t_interval(m, 0.9), abs=1e-12)
    assert scores.loc[("C", gap), "var_training"] == 0  # identical replicates: no seed
    tests = pd.read_csv(out["significance"])
    part = tests[tests.measure == gap]
    assert len(part) == 3 and np.allclose(part.p_holm, inference.holm(part.p.to_numpy()))
    variance = pd.read_csv(out["variance"])
    assert {gap, mean, "UserMAD-NDCG (activity:0.05)", "PUF-P-Cos"} <= set(variance.measure)
    conclusions = pd.read_csv(out["conclusions"]).set_index("measure")
    means = scores.xs(gap, level="measure")["value"]
    assert conclusions.loc[gap, "best"] == means.idxmin()  # lower is fairer
    assert not {n for n in conclusions.index if "[" in n}  # group means: no conclusion
    agreement = pd.read_csv(out["agreement"])
    assert not agreement.measure_a.str.contains("UserMAD").any()
