"""The sampled estimate of the pair measures (userfair.streamed.estimate): a sample of every user is
the exact route, the estimators are unbiased over every possible sample of a tiny case, the
SE is the finite-population formula, and the command prints it."""

import itertools
import json
import math

import numpy as np
import pytest

from userfair.cli import main
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import read_json, write_inter
from userfair.measures import NAMES
from userfair.streamed import estimate, streaming
from userfair.workflow import tables
from userfair.workflow.steps import MeasureSettings, Route, Speed
from userfair.workflow.steps import measures as steps

from measures_data import random_split
from test_streaming import K, close, split_inputs


@pytest.mark.parametrize(
    "seed, options",
    [
        (0, {}),
        (1, {"envy_utility": "ideal"}),
        (2, {"share_all": True}),  # every pair shares an item: raw minima above 0
        (3, {"gamma": 0.6}),  # sim_UF mixes the dense genre similarity
    ],
)
def test_every_row_sampled_is_the_exact_route(tmp_path, seed, options):
    options = dict(options)
    gamma = options.pop("gamma", 1.0)
    utility = options.pop("envy_utility", "precision")
    inputs = split_inputs(seed, tmp_path, m=30, **options)
    exact = streaming.stream_evaluate(inputs, k=K, gamma=gamma, envy_utility=utility)
    found = estimate.stream_estimate(inputs, 1.0, seed, k=K, gamma=gamma, envy_utility=utility)
    bad = {key: (found[key], exact[key]) for key in NAMES if not close(found[key], exact[key])}
    assert not bad, bad
    record = found["estimate"]
    assert (record["rows"], record["users"], record["share"]) == (30, 30, 1.0)
    assert set(record["measures"]) == set(estimate.ESTIMATED)
    for key, entry in record["measures"].items():
        assert entry["se"] == 0.0 and entry["low"] == entry["value"] == entry["high"], key
        assert close(entry["value"], exact[key]), key


def test_row_values_do_not_depend_on_the_other_sampled_rows():
    inputs = split_inputs(4, m=25)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    every = estimate.row_values(inputs, stats, np.arange(25), k=K)
    some = np.array([1, 7, 8, 20])
    part = estimate.row_values(inputs, stats, some, k=K)
    np.testing.assert_array_equal(part.pairs, every.pairs[some])
    np.testing.assert_array_equal(part.envy, every.envy[some])


def test_every_estimate_is_unbiased_over_all_samples_and_its_variance_too():
    """Over all C(9, 3) samples, the mean of each estimated total is the exact total (the
    exact route's pass two), the mean of each linear measure is the exact measure, and the
    mean of SE^2 is the estimator's variance over the samples."""
    m, n = 9, 3
    inputs = split_inputs(5, m=m)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    exact_sums = streaming.pass_two(inputs, stats, k=K)
    exact = streaming.pair_measures(stats, exact_sums)
    every = estimate.row_values(inputs, stats, np.arange(m), k=K)
    names = ("puf_p_jacc", "puf_ndcg_jacc", "uf_sum", "envy_sum", "max_envy_sum")
    totals = {name: [] for name in names + ("envious_users",)}
    values = {key: [] for key in estimate.ESTIMATED}
    for rows in itertools.combinations(range(m), n):
        rows = np.array(rows)
        sample = estimate.RowValues(rows, every.pairs[rows], every.envy[rows], 0.0, 0.0, 0.0)
        found = estimate.totals(sample, m)
        for name in totals:
            totals[name].append(found[name])
        _, record = estimate.estimates(stats, sample, K)
        for key in values:
            values[key].append(record[key]["value"])
    for name, pairs in totals.items():
        total, se = np.array(pairs).T
        assert close(total.mean(), float(getattr(exact_sums, name))), name
        assert close((se**2).mean(), total.var(), 1e-9), name  # E[SE^2] = Var(T^)
    assert np.array(totals["uf_sum"]).T[1].max() > 0  # a varying sum, not a constant
    for key in ("ME", "MME", "PEU", "PUF-P-Jacc", "PUF-NDCG-Jacc"):
        assert close(float(np.mean(values[key])), exact[key]), key


def test_the_standard_error_of_a_hand_worked_sample():
    # m = 4 rows, sampled values 1 and 3: T^ = 4 * 2 = 8, s^2 = 2, f = 1/2,
    # SE = 4 * sqrt((1 - 1/2) * 2 / 2) = 4 * sqrt(1/2)
    total, se = estimate.total_estimate(np.array([1.0, 3.0]), 4)
    assert total == 8.0 and math.isclose(se, 4 * math.sqrt(0.5), rel_tol=1e-15)
    assert estimate.total_estimate(np.array([1.0, 3.0, 2.0, 6.0]), 4) == (12.0, 0.0)
    with pytest.raises(ValueError, match="a sample of 5 rows out of 4"):
        estimate.total_estimate(np.ones(5), 4)


def test_the_interval_is_the_total_interval_through_the_measure():
    inputs = split_inputs(6, m=30)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    rows = estimate.sample_rows(30, 0.4, 0)
    values = estimate.row_values(inputs, stats, rows, k=K)
    _, record = estimate.estimates(stats, values, K, level=0.9)
    quantile = 1.7958848187040433  # t(0.95, 11 degrees of freedom): 1.796 in printed tables
    assert len(rows) == 12
    for key in ("ME", "MME", "PUF-P-Jacc", "PUF-NDCG-Jacc"):
        entry = record[key]
        assert entry["se"] > 0, key
        assert math.isclose(entry["low"], entry["value"] - quantile * entry["se"], rel_tol=1e-9)
        assert math.isclose(entry["high"], entry["value"] + quantile * entry["se"], rel_tol=1e-9)
    uf = record["UF"]  # the log of the sum's interval, not symmetric
    total, se = estimate.totals(values, 30)["uf_sum"]
    pairs = 30 * 29 / 2
    assert math.isclose(uf["high"], math.log((total + quantile * se) / K**2) / math.log(pairs))
    assert math.isclose(uf["se"], se / (total * math.log(pairs)))
    assert uf["low"] < uf["value"] < uf["high"]


def test_samples_are_uniform_draws_of_the_asked_share():
    rows = estimate.sample_rows(1000, 0.05, 3)
    assert len(rows) == 50 and len(set(rows)) == 50 and list(rows) == sorted(rows)
    assert list(estimate.sample_rows(5, 1.0, 9)) == [0, 1, 2, 3, 4]
    assert len(estimate.sample_rows(10, 0.01, 0)) == 2  # at least 2: a variance
    assert not np.array_equal(rows, estimate.sample_rows(1000, 0.05, 4))
    counts = np.bincount(
        np.concatenate([estimate.sample_rows(20, 0.25, s) for s in range(2000)]), minlength=20
    )
    assert counts.min() > 400 and counts.max() < 600  # 500 expected per row
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"must lie in \(0, 1\]"):
            estimate.sample_rows(10, bad, 0)


def test_evaluate_samples_on_the_streamed_route_only():
    inputs = split_inputs(7, m=20)
    found = evaluate(inputs, k=K, sample_users=0.5, seed=3)
    assert found["estimate"]["rows"] == 10 and found["estimate"]["seed"] == 3
    with pytest.raises(ValueError, match="streamed route"):
        evaluate(inputs, k=K, route="dense", sample_users=0.5)


def _files(tmp_path, inputs_seed=8):
    train, test, topk, _ = random_split(inputs_seed, m=24)
    paths = [tmp_path / name for name in ("train.inter", "test.inter", "topk.tsv")]
    write_inter(train, paths[0])
    write_inter(test, paths[1])
    topk.to_csv(paths[2], sep="\t", index=False)
    return [f"--{flag}={path}" for flag, path in zip(("train", "test", "topk"), paths)]


def test_the_command_prints_the_estimate_beside_the_value(tmp_path, capsys):
    files = _files(tmp_path)
    assert main(["evaluate", *files, "--sample-users", "0.5", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "SE" in out.splitlines()[0] and "low" in out.splitlines()[0]
    line = next(line for line in out.splitlines() if line.startswith("PUF-P-Jacc "))
    assert len(line.split()) == 6, line  # measure, value, SE, low, high, seconds
    assert "estimated from 12 of 24 users" in out
    exact_line = next(line for line in out.splitlines() if line.startswith("PUF-P-Cos "))
    assert len(exact_line.split()) == 3, exact_line  # exact: no SE
    assert main(["evaluate", *files, "--sample-users", "0.5", "--seed", "1", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["estimate"]["measures"]["UF"]["se"] > 0
    assert main(["evaluate", *files, "--sample-users", "0.5", "--resamples", "5"]) == 2
    assert "--sample-users" in capsys.readouterr().err


def test_scattered_sample_parts_combine_to_the_one_process_estimate():
    inputs = split_inputs(9, m=40)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    whole = estimate.sample_part(inputs, stats, 0, 40, 0.3, 5, k=K)
    parts = [estimate.sample_part(inputs, stats, a, b, 0.3, 5, k=K) for a, b in
             [(0, 7), (7, 8), (8, 31), (31, 40)]]  # fmt: skip
    combined = estimate.combine_parts(json.loads(json.dumps(parts[::-1])))  # any order
    assert combined["rows"] == whole["rows"] == 12 == sum(part["rows"] for part in parts)
    one = estimate.finish_estimate(inputs, stats, whole)
    scattered = estimate.finish_estimate(inputs, stats, combined)
    for key in estimate.ESTIMATED:
        for part in ("value", "se", "low", "high"):
            found = scattered["estimate"]["measures"][key][part]
            assert close(found, one["estimate"]["measures"][key][part], 1e-12), (key, part)
    with pytest.raises(ValueError, match="do not tile"):
        estimate.combine_parts([parts[0], parts[2], parts[3]])
    with pytest.raises(ValueError, match="differ in"):
        other = estimate.sample_part(inputs, stats, 7, 8, 0.3, 6, k=K)  # another seed
        estimate.combine_parts([parts[0], other, parts[2], parts[3]])
    with pytest.raises(ValueError, match="sample covers rows 0:7"):
        estimate.finish_estimate(inputs, stats, parts[0])


def _workflow_measures(split, tmp, parts: int, estimate_key: dict | None) -> dict:
    """The real steps of pairs_part, pairs, measure_sums (``parts`` parts) and measures on
    the streamed route, with the config's measures.estimate ``estimate_key``."""
    tmp.mkdir()
    settings = MeasureSettings(
        k=K, gamma=1.0, epsilon=0.05, envy_utility="precision", estimate=estimate_key, seed=11
    )
    speed = Speed(block_size=7, device="cpu")
    names = [f"{i}-of-{parts}" for i in range(1, parts + 1)]
    ones = [str(tmp / f"pairs-{name}.json") for name in names]
    for name, out in zip(names, ones):
        steps.pairs_part(
            split["train"], split["test"], out, scatteritem=name, settings=settings,
            speed=speed,
        )  # fmt: skip
    steps.pairs(ones, str(tmp / "pairs.json"))
    sums = [str(tmp / f"sums-{name}.json") for name in names]
    for name, out in zip(names, sums):
        steps.measure_sums(
            split["train"], split["valid"], split["test"], split["topk"], str(tmp / "pairs.json"),
            out, scatteritem=name, settings=settings, speed=speed,
        )  # fmt: skip
    steps.measures(
        split["train"], split["valid"], split["test"], split["topk"], str(tmp / "m.json"),
        route=Route("stream", pairs=str(tmp / "pairs.json"), sums=sums),
        settings=settings, speed=speed,
    )  # fmt: skip
    return read_json(tmp / "m.json")


def test_the_workflow_steps_estimate_from_scattered_samples(tmp_path):
    train, test, topk, _ = random_split(12, m=36)
    split = {name: str(tmp_path / f"{name}.inter") for name in ("train", "valid", "test")}
    write_inter(train, split["train"])
    write_inter(test, split["test"])
    write_inter(test, split["valid"])
    split["topk"] = str(tmp_path / "topk.tsv")
    topk.to_csv(split["topk"], sep="\t", index=False)
    exact = _workflow_measures(split, tmp_path / "exact", 2, {})
    assert "estimate" not in exact
    whole = _workflow_measures(split, tmp_path / "whole", 3, {"pairs": 1.0})
    half = _workflow_measures(split, tmp_path / "half", 3, {"pairs": 0.5})
    assert all(close(whole[key], exact[key]) for key in NAMES)
    assert whole["estimate"]["rows"] == 36 and half["estimate"]["rows"] == 18
    inputs = load_inputs(split["train"], split["test"], split["topk"], k=K, valid=split["valid"])
    library = estimate.stream_estimate(inputs, 0.5, 11, k=K)
    for key in estimate.ESTIMATED:
        entry, found = library["estimate"]["measures"][key], half["estimate"]["measures"][key]
        assert all(close(found[part], entry[part], 1e-12) for part in entry), key
        assert found["se"] > 0, key
    records = {("d", "BPR"): half, ("d", "NCL"): exact}
    table, bold = tables.table_scores(records, ["d"], ["BPR", "NCL"])
    spread = ["BPR SE", "BPR low", "BPR high", "NCL SE", "NCL low", "NCL high"]
    assert list(table.columns[-6:]) == spread and not bold[spread].any().any()
    entry = half["estimate"]["measures"]["PUF-P-Jacc"]
    row = table.loc["PUF-P-Jacc"]
    assert (row["BPR SE"], row["BPR low"], row["BPR high"]) == (
        entry["se"],
        entry["low"],
        entry["high"],
    )
    assert row[spread[3:]].isna().all() and table.loc["PUF-P-Cos", spread].isna().all()
    assert r"uniform sample of 50\% of the users" in tables.estimate_caption(records)
    plain, _ = tables.table_scores({("d", "NCL"): exact}, ["d"], ["NCL"])
    assert not any(column.endswith(" SE") for column in plain.columns)


def test_intervals_stay_inside_the_measures_range():
    """A share near 1 (here every sampled user envious: PEU's interval would reach past 1
    without the clip) keeps every interval end inside the declared bounds."""
    inputs = split_inputs(10, m=30)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    every = estimate.row_values(inputs, stats, np.arange(30), k=K)
    envious = np.flatnonzero(every.envy[:, 2] == 1.0)
    calm = np.flatnonzero(every.envy[:, 2] == 0.0)
    assert len(calm) >= 1 and len(envious) >= 4
    rows = np.sort(np.r_[envious[:3], calm[:1]])  # 3 of 4 envious: the raw interval passes 1
    sample = estimate.RowValues(rows, every.pairs[rows], every.envy[rows], 0.0, 0.0, 0.0)
    _, record = estimate.estimates(stats, sample, K)
    total, se = estimate.totals(sample, 30)["envious_users"]
    assert (total + 3.182 * se) / 30 > 1.0  # t(0.975, 3 degrees of freedom) = 3.182
    assert record["PEU"]["high"] == 1.0 and 0.0 <= record["PEU"]["low"] < record["PEU"]["value"]
    for key, entry in record.items():
        assert 0.0 <= entry["low"] <= entry["high"] <= 1.0 or key == "UF", key
