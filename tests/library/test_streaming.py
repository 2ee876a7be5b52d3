"""Streamed measures (userfair.streamed.streaming): the same numbers as the dense route, row ranges
that combine to the whole, pass-one stats through JSON, and the route choice."""

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from userfair import evaluate as evaluate_module
from userfair.cli import main
from userfair.engine import route
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import write_inter
from userfair.formulas import fairness
from userfair.measures import NAMES as KEYS
from userfair.streamed import pair_records, stream_rows, streaming
from userfair.workflow.steps.measures import scatter_range

from measures_data import random_split, write_item_file

K = 10
BLOCK = 3  # tiny blocks: every pass runs over many blocks


def close(a, b, rel=1e-9):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rel, abs_tol=1e-15)


def assert_same(streamed: dict, dense: dict, rel=1e-9):
    bad = {
        key: (streamed[key], dense[key])
        for key in KEYS
        if not close(streamed[key], dense[key], rel)
    }
    assert not bad, bad


def split_inputs(seed, tmp_path=None, m=40, share_all=False, keep=None):
    """Inputs of a random split (with item genres when ``tmp_path`` is given);
    ``share_all``: every user also has item i000 in train, so every pair shares an item
    and the raw minimum of cosine and Jaccard is above 0; ``keep``: evaluate only the
    first ``keep`` users (the others stay train users)."""
    train, test, topk, item_genres = random_split(seed, m=max(m, 2))
    valid = test  # keeps every item known when users are dropped
    if keep is not None:
        test = test[test.user_id.isin(sorted(test.user_id.unique())[:keep])]
    if share_all:
        users = pd.DataFrame({"user_id": train.user_id.unique(), "item_id": "i000"})
        train = pd.concat([train[train.item_id != "i000"], users], ignore_index=True)
    features = None
    if tmp_path is not None:
        features = tmp_path / f"d{seed}.item"
        write_item_file(features, item_genres)
    return load_inputs(train, test, topk, k=K, item_features=features, valid=valid)


def both_routes(inputs, **options):
    dense = evaluate(inputs, k=K, block_size=BLOCK, device="cpu", route="dense", **options)
    streamed = evaluate(inputs, k=K, block_size=BLOCK, route="stream", **options)
    return streamed, dense


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("utility", ["precision", "ideal"])
def test_stream_equals_dense_at_gamma_1(seed, utility):
    inputs = split_inputs(seed)
    streamed, dense = both_routes(inputs, envy_utility=utility)
    assert_same(streamed, dense)
    assert set(streamed) == set(dense)
    assert set(streamed["seconds"]) == set(dense["seconds"])
    assert streamed["conventions"] == dense["conventions"]
    assert not math.isnan(streamed["UF"])


@pytest.mark.parametrize("gamma", [0.0, 0.4, 0.8])
def test_stream_equals_dense_with_genres(tmp_path, gamma):
    inputs = split_inputs(3, tmp_path)
    assert_same(*both_routes(inputs, gamma=gamma, envy_utility="ideal"))


@pytest.mark.parametrize("gamma", [1.0, 0.5])
def test_stream_equals_dense_when_every_pair_shares_an_item(tmp_path, gamma):
    inputs = split_inputs(4, tmp_path, share_all=True)
    stats = streaming.pass_one(inputs.train_of_evaluated(), gamma=gamma, genres=inputs.genres,
                               block_size=BLOCK)  # fmt: skip
    assert stats.sharing_pairs == stats.pairs
    assert stats.cos_range[0] > 0 and stats.jacc_range[0] > 0  # lo > 0
    assert_same(*both_routes(inputs, gamma=gamma))


def test_stream_equals_dense_on_the_measures_test_split():
    # the split of the other measure tests, larger: identical users, test-only items, ...
    inputs = split_inputs(5, m=150)
    assert_same(*both_routes(inputs))


def test_stream_equals_dense_with_sparse_item_cosines(monkeypatch):
    # UF's item cosines as CSR (what many recommended items take) on both routes
    monkeypatch.setattr(fairness, "UF_DENSE_ITEMS", 0)
    monkeypatch.setattr(streaming, "DENSE_COSINES_SHARE", math.inf)
    assert_same(*both_routes(split_inputs(15, m=60)))


def test_stream_equals_dense_with_many_items():
    # many recommended items and few similar partners per user: UF's k^2 look-ups per pair
    train, test, topk, _ = random_split(16, m=80, n=1500)
    assert_same(*both_routes(load_inputs(train, test, topk, k=K)))


@pytest.mark.parametrize("m", [1, 2, 3])
def test_few_users_give_the_same_nan_as_dense(m):
    inputs = split_inputs(6, m=3, keep=m)
    streamed, dense = both_routes(inputs)
    assert_same(streamed, dense)
    if m < 3:  # a single pair (or none): UF is NaN; envy and PUF are NaN without a pair
        assert math.isnan(streamed["UF"])
    assert math.isnan(streamed["ME"]) == (m < 2)


def test_no_pair_shares_an_item():
    # disjoint train items: every raw similarity 0, so PUF 0 and UF NaN (a sum of 0)
    users = [f"u{u}" for u in range(4)]
    train = pd.DataFrame({"user_id": users, "item_id": [f"t{u}" for u in range(4)]})
    test = pd.DataFrame({"user_id": users, "item_id": ["a", "b", "a", "c"]})
    topk = pd.DataFrame({"user_id": np.repeat(users, 2), "item_id": ["a", "b"] * 4,
                         "rank": [1, 2] * 4})  # fmt: skip
    inputs = load_inputs(train, test, topk, k=2)
    stats = streaming.pass_one(inputs.train_of_evaluated())
    assert stats.sharing_pairs == 0 and stats.cos_min is None and stats.cos_range == (0.0, 0.0)
    dense = evaluate(inputs, k=2, route="dense", device="cpu")
    streamed = evaluate(inputs, k=2, route="stream")
    assert_same(streamed, dense)
    assert streamed["PUF-P-Cos"] == 0.0 and math.isnan(streamed["UF"])


@pytest.mark.parametrize("gamma", [1.0, 0.5])
def test_ranges_combine_to_one_range(tmp_path, gamma):
    inputs = split_inputs(7, tmp_path, m=60)
    rows = inputs.train_of_evaluated()
    m = rows.shape[0]
    options = {"gamma": gamma, "genres": inputs.genres, "users": inputs.users}
    whole = streaming.pass_one(rows, block_size=BLOCK, **options)
    for cuts in (stream_rows.ranges(rows, 4, gamma), [(0, 5), (5, 6), (6, 31), (31, m)]):
        parts = [streaming.pass_one(rows, a, b, block_size=BLOCK, **options) for a, b in cuts]
        combined = pair_records.combine(parts[::-1])  # any order
        assert (combined.start, combined.stop) == (0, m)
        assert combined.sharing_pairs == whole.sharing_pairs
        assert combined.cos_range == whole.cos_range and combined.jacc_range == whole.jacc_range
        assert combined.uf_pairs == whole.uf_pairs == whole.pairs
        assert close(combined.uf_threshold, whole.uf_threshold, 1e-12)
        sums = pair_records.combine(
            streaming.pass_two(inputs, whole, a, b, k=K, block_size=BLOCK) for a, b in cuts
        )
        one = streaming.pass_two(inputs, whole, k=K, block_size=2048)
        for name in ("puf_p_jacc", "puf_ndcg_jacc", "uf_sum",
                     "envy_sum", "max_envy_sum"):  # fmt: skip
            assert close(getattr(sums, name), getattr(one, name), 1e-12), name
        assert sums.uf_similar_pairs == one.uf_similar_pairs > 0
        assert sums.envious_users == one.envious_users
        assert_same(streaming.finish(inputs, combined, sums),
                    streaming.finish(inputs, whole, one), 1e-12)  # fmt: skip


def test_ranges_balance_and_cover():
    inputs = split_inputs(8, m=80)
    rows = inputs.train_of_evaluated()
    cuts = stream_rows.ranges(rows, 5)
    assert cuts[0][0] == 0 and cuts[-1][1] == 80 and len(cuts) <= 5
    assert all(a < b and b == c for (a, b), (c, _) in zip(cuts, cuts[1:]))
    assert stream_rows.ranges(rows, 1) == [(0, 80)]
    assert len(stream_rows.ranges(rows, 500)) <= 80


def test_scatter_items_tile_the_rows_even_with_more_parts_than_users():
    rows = split_inputs(8).train_of_evaluated()[:6]
    for n in (1, 2, 5, 20):
        parts = [scatter_range(rows, f"{i}-of-{n}") for i in range(1, n + 1)]
        assert parts[0][0] == 0 and parts[-1][1] == 6, parts
        assert all(b == c for (_, b), (c, _) in zip(parts, parts[1:])), parts
    for bad in ("0-of-2", "3-of-2", "1of2"):
        with pytest.raises(ValueError, match="scatter item"):
            scatter_range(rows, bad)


def test_combine_refuses_gaps_overlaps_and_other_users():
    inputs = split_inputs(9)
    rows = inputs.train_of_evaluated()
    a = streaming.pass_one(rows, 0, 10, users=inputs.users)
    b = streaming.pass_one(rows, 12, 40, users=inputs.users)
    c = streaming.pass_one(rows, 5, 40, users=inputs.users)
    with pytest.raises(ValueError, match="do not tile"):
        pair_records.combine([a, b])
    with pytest.raises(ValueError, match="do not tile"):
        pair_records.combine([a, c])
    with pytest.raises(ValueError, match="combine every range"):
        a.uf_threshold
    reordered = streaming.pass_one(rows, users=inputs.users[::-1])
    with pytest.raises(ValueError, match="other users"):
        streaming.pass_two(inputs, reordered)
    with pytest.raises(ValueError, match="cannot combine results of different users"):
        pair_records.combine([a, streaming.pass_one(rows, 10, 40, users=inputs.users[::-1])])
    with pytest.raises(ValueError, match="of 40 users"):
        whole = pair_records.combine([a, dataclasses.replace(b, start=10)])
        streaming.pass_two(split_inputs(10, m=30), whole)


def test_finish_carries_the_settings_of_the_sums():
    inputs = split_inputs(17)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    sums = streaming.pass_two(inputs, stats, k=K, epsilon=0.1, envy_utility="ideal")
    result = streaming.finish(inputs, stats, sums)
    assert result["conventions"]["epsilon"] == 0.1
    assert result["conventions"]["envy_utility"] == "ideal"
    dense = evaluate(inputs, k=K, epsilon=0.1, envy_utility="ideal", route="dense",
                     device="cpu")  # fmt: skip
    assert_same(result, dense)
    other = streaming.pass_two(inputs, stats, 0, 20, k=K, epsilon=0.05, envy_utility="ideal")
    rest = streaming.pass_two(inputs, stats, 20, None, k=K, epsilon=0.1, envy_utility="ideal")
    with pytest.raises(ValueError, match="different k, epsilon"):
        pair_records.combine([other, rest])
    with pytest.raises(ValueError, match="pair sums cover rows"):
        streaming.finish(inputs, stats, rest)


def test_pair_stats_and_sums_round_trip_through_json(tmp_path):
    inputs = split_inputs(11, tmp_path)
    rows = inputs.train_of_evaluated()
    stats = streaming.pass_one(rows, gamma=0.5, genres=inputs.genres, users=inputs.users)
    text = json.dumps(stats.to_dict(), allow_nan=False)  # plain JSON: no NaN or inf
    assert pair_records.PairStats.from_dict(json.loads(text)) == stats
    stats.save(tmp_path / "pairs.json")
    assert pair_records.PairStats.load(tmp_path / "pairs.json") == stats
    sums = streaming.pass_two(inputs, stats, 0, 17, k=K)
    sums.save(tmp_path / "sums.json")
    assert pair_records.PairSums.load(tmp_path / "sums.json") == sums
    empty = streaming.pass_one(rows, 3, 3)  # no row: no sharing pair, extremes None
    assert pair_records.PairStats.from_dict(json.loads(json.dumps(empty.to_dict()))) == empty
    with pytest.raises(Exception, match="pair-stats"):
        pair_records.PairStats.from_dict(sums.to_dict())


def test_stream_evaluate_reuses_given_stats():
    inputs = split_inputs(12)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    result = streaming.stream_evaluate(inputs, k=K, stats=stats)
    assert result["seconds"]["similarity-jacc"] == stats.seconds
    assert_same(result, evaluate(inputs, k=K, route="dense", device="cpu"))
    with pytest.raises(ValueError, match="gamma"):
        streaming.stream_evaluate(inputs, k=K, gamma=0.5, stats=stats)


def test_choose_route():
    gib = 2**30
    assert route.choose_route(10_000, available=64 * gib) == "dense"  # 0.8 GB
    assert route.choose_route(10_000, available=gib) == "stream"
    assert route.choose_route(10_000, gamma=0.5, available=4 * gib) == "stream"  # 2.4 GB
    assert route.choose_route(100_000, available=2**50) == "stream"  # above the user cap
    assert route.choose_route(100_000, route="dense") == "dense"
    assert route.choose_route(10, route="stream") == "stream"
    assert route.choose_route(100) == "dense"  # 80 kB fit anywhere
    with pytest.raises(ValueError, match="route"):
        route.choose_route(10, route="fast")
    # what the callers used to decide each on their own, now here only
    assert route.choose_route(100_000, available=2**50, given=True) == "dense"
    assert route.choose_route(10, route="stream", given=True) == "stream"
    assert route.choose_route(10, sampled=True) == "stream"
    assert route.choose_route(10, route="stream", sampled=True) == "stream"
    for asked in ({"route": "dense"}, {"given": True}):
        with pytest.raises(ValueError, match="sampled estimate runs on the streamed route"):
            route.choose_route(10, sampled=True, **asked)


@pytest.mark.parametrize(
    "argv, decided",
    [([], "dense"), (["--route", "stream"], "stream"), (["--sample-users", "0.5"], "stream")],
)
def test_the_command_decides_the_route_once_and_passes_it_down(
    tmp_path, capsys, monkeypatch, argv, decided
):
    """`userfair evaluate` asks choose_route once; evaluate gets the decided route, never
    "auto", so no library function decides it again."""
    train, test, topk, _ = random_split(15)
    write_inter(train, tmp_path / "train.inter")
    write_inter(test, tmp_path / "test.inter")
    topk.to_csv(tmp_path / "topk.tsv", sep="\t", index=False)
    asked, seen = [], []
    real_choose, real_evaluate = route.choose_route, evaluate_module.evaluate
    monkeypatch.setattr(
        route, "choose_route", lambda *a, **kw: asked.append(kw) or real_choose(*a, **kw)
    )
    monkeypatch.setattr(
        evaluate_module,
        "evaluate",
        lambda *a, **kw: seen.append(kw["route"]) or real_evaluate(*a, **kw),
    )
    base = ["evaluate", "--train", str(tmp_path / "train.inter"), "--test",
            str(tmp_path / "test.inter"), "--topk", str(tmp_path / "topk.tsv"),
            "--json"]  # fmt: skip
    assert main(base + argv) == 0, capsys.readouterr().err
    assert asked and seen[0] == decided and "auto" not in seen


def test_evaluate_auto_route_streams_when_dense_would_not_fit(monkeypatch):
    inputs = split_inputs(13)
    called = []
    real = streaming.stream_evaluate
    monkeypatch.setattr(streaming, "stream_evaluate",
                        lambda *a, **kw: called.append(1) or real(*a, **kw))  # fmt: skip
    evaluate(inputs, k=K)
    assert not called
    monkeypatch.setattr(route, "DENSE_MAX_USERS", 10)
    evaluate(inputs, k=K)
    assert called


def test_cli_route_flag(tmp_path, capsys):
    train, test, topk, _ = random_split(14)
    write_inter(train, tmp_path / "train.inter")
    write_inter(test, tmp_path / "test.inter")
    topk.to_csv(tmp_path / "topk.tsv", sep="\t", index=False)
    base = ["evaluate", "--train", str(tmp_path / "train.inter"), "--test",
            str(tmp_path / "test.inter"), "--topk", str(tmp_path / "topk.tsv"),
            "--json"]  # fmt: skip
    results = {}
    for way in ("dense", "stream"):
        assert main(base + ["--route", way, "--device", "cpu"]) == 0
        results[way] = json.loads(capsys.readouterr().out)
    assert_same(results["stream"], results["dense"])


def test_a_pass_two_record_of_an_older_version_loads_without_its_cosine_sums():
    """Pass two no longer computes the cosine sums (the cosine PUF is by the items): a part
    file written before still loads, its cosine sums ignored, and gives the same measures."""
    inputs = split_inputs(4)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    sums = streaming.pass_two(inputs, stats, k=K)
    older = {**sums.to_dict(), "puf_p_cos": 1.5, "puf_ndcg_cos": 2.5}
    loaded = pair_records.PairSums.from_dict(json.loads(json.dumps(older)))
    assert loaded == sums and not hasattr(loaded, "puf_p_cos")
    assert_same(streaming.finish(inputs, stats, loaded), streaming.finish(inputs, stats, sums))
