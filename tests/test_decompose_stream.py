"""The streamed route of the per-user decomposition (userfair.dstream.stream_decompose):
the same shares as the in-memory route (<= 1e-9) on random inputs with small blocks, row
ranges that add up (a scatter), the awkward ranges (every pair shares an item, 1-3 users),
the route choice, and the worst cases without the m x m matrix."""

import math

import numpy as np
import pandas as pd
import pytest

from test_decompose import assert_sums, cold_split, inputs_args, split_files  # noqa: F401
from userfair.cli import main
from userfair.decomposition import decompose as dec
from userfair.decomposition import decompose_stream as dstream
from userfair.decomposition import worst_cases
from userfair.engine import route
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.streamed import streaming

from measures_data import random_split, write_item_file

TOL = 1e-9


def assert_same_frames(a: pd.DataFrame, b: pd.DataFrame):
    assert list(a.columns) == list(b.columns)
    assert list(a.user_id) == list(b.user_id)
    for name in a.columns[1:]:
        x, y = a[name].to_numpy(dtype=float), b[name].to_numpy(dtype=float)
        assert np.array_equal(np.isnan(x), np.isnan(y)), name
        both = ~np.isnan(x)
        assert np.all(np.abs(x[both] - y[both]) <= TOL), (name, np.abs(x - y).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
@pytest.mark.parametrize("utility", ["precision", "ideal"])
def test_streamed_shares_equal_the_in_memory_ones(tmp_path, seed, gamma, utility):
    train, test, topk, item_genres = cold_split(seed)
    write_item_file(tmp_path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=tmp_path / "d.item")
    dense = dec.decompose(inputs, gamma=gamma, envy_utility=utility, route="dense")
    stream = dec.decompose(inputs, gamma=gamma, envy_utility=utility, route="stream", block_size=3)
    assert_same_frames(dense, stream)
    assert not stream["UF"].isna().any() and (stream["MME:envied"] > 0).any()
    result = evaluate(inputs, gamma=gamma, envy_utility=utility, route="stream", device="cpu")
    assert_sums(stream, result)


def test_row_ranges_add_up_to_the_whole(tmp_path):
    train, test, topk, item_genres = random_split(5)
    inputs = load_inputs(train, test, topk)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    whole = dstream.stream_parts(inputs, stats, block_size=4)
    cuts = [(0, 7), (7, 8), (8, 30)]
    parts = [dstream.stream_parts(inputs, stats, a, b, block_size=2) for a, b in cuts]
    summed = {name: np.sum([part[name] for part in parts], axis=0) for name in dstream.PARTS}
    for name in dstream.PARTS:
        assert np.allclose(summed[name], whole[name], rtol=0, atol=1e-12), name
    # a row range alone carries only its own rows' envies
    assert np.all(parts[0]["envies"][7:] == 0) and parts[0]["envies"][:7].sum() > 0
    frame = dstream.finish_parts(inputs, stats, summed)
    assert_same_frames(frame, dec.decompose(inputs, route="dense"))


def test_every_pair_sharing_an_item_shifts_the_minimum():
    """When every pair shares an item the raw minimum is > 0 and every pair is visited."""
    rng = np.random.default_rng(3)
    users = [f"u{u}" for u in range(9)]
    rows = [(u, "common") for u in users]
    rows += [(u, f"i{j}") for u in users for j in rng.choice(12, 3, replace=False)]
    train = pd.DataFrame(rows, columns=["user_id", "item_id"]).drop_duplicates()
    test = pd.DataFrame([(u, f"i{j}") for u in users for j in (1, 5, 9)], columns=train.columns)
    topk = pd.DataFrame(
        [(u, f"i{j}", r + 1) for u in users for r, j in enumerate(rng.permutation(12)[:4])],
        columns=["user_id", "item_id", "rank"],
    )
    inputs = load_inputs(train, test, topk, k=4)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    assert stats.cos_range[0] > 0 and stats.sharing_pairs == stats.pairs
    stream = dec.decompose(inputs, k=4, route="stream", block_size=2)
    assert_same_frames(dec.decompose(inputs, k=4, route="dense"), stream)
    assert_sums(stream, evaluate(inputs, k=4, device="cpu", route="stream"))


@pytest.mark.parametrize("m", [1, 2, 3])
def test_few_users_follow_the_in_memory_route(m):
    if m == 1:
        train = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["i1", "i2", "i1"]})
        test = pd.DataFrame({"user_id": ["a"], "item_id": ["i3"]})
        topk = pd.DataFrame({"user_id": ["a", "a"], "item_id": ["i3", "i1"], "rank": [1, 2]})
        inputs, k = load_inputs(train, test, topk, k=2), 2
    else:
        inputs, k = load_inputs(*random_split(1, m=m)[:3]), 10
    stream = dec.decompose(inputs, k=k, route="stream")
    assert_same_frames(dec.decompose(inputs, k=k, route="dense"), stream)
    if m == 1:
        assert stream["PUF-P-Cos"].isna().all() and math.isnan(stream.mean_similarity.iloc[0])


def test_route_choice_follows_evaluate():
    m = route.DENSE_MAX_USERS
    assert route.choose_route(m + 1, available=10**15, purpose="decompose") == "stream"
    assert route.choose_route(1000, available=10**12, purpose="decompose") == "dense"
    # three m x m matrices of 8 bytes: 24 MB at 1000 users, streamed when > half available
    assert route.dense_bytes(1000, purpose="decompose") == 24 * 10**6
    assert route.dense_bytes(1000, 0.5, "decompose") == 40 * 10**6
    assert route.choose_route(1000, available=47 * 10**6, purpose="decompose") == "stream"
    assert route.choose_route(1000, available=49 * 10**6, purpose="decompose") == "dense"
    assert route.choose_route(10, route="stream", purpose="decompose") == "stream"
    with pytest.raises(ValueError, match="route must be one of"):
        route.choose_route(10, route="sparse", purpose="decompose")


@pytest.mark.parametrize("kind", ["cos", "jacc"])
def test_similarity_rows_and_worst_cases_without_the_matrix(kind):
    inputs = load_inputs(*cold_split(2)[:3])
    sims = dec.similarities_of(inputs)
    rows = np.array([0, 5, 2, 29])
    got = worst_cases.similarity_rows(inputs, rows, kind)
    assert np.allclose(got, sims[kind].sim[rows], rtol=0, atol=1e-12)
    frame = dec.decompose(inputs, route="stream")
    measure = "PUF-NDCG-Cos" if kind == "cos" else "PUF-P-Jacc"
    by_rows = worst_cases.worst_cases(
        frame, lambda r: worst_cases.similarity_rows(inputs, r, kind), 6, measure, neighbours=5
    )
    expected = worst_cases.worst_cases(frame, sims[kind].sim, 6, measure, neighbours=5)
    pd.testing.assert_frame_equal(by_rows, expected)
    assert (by_rows.better > 0).any()


def test_users_command_streams(split_files, capsys):  # noqa: F811
    path = split_files
    for way in ("dense", "stream"):
        out = path / f"{way}.parquet"
        args = ["users", *inputs_args(path), "--route", way, "--out", str(out)]
        assert main([*args, "--worst", "2"]) == 0
        printed = capsys.readouterr().out.splitlines()
        assert printed[1] == "the 2 users most disadvantaged by PUF-P-Cos:"
        if way == "dense":
            lines = printed[2:]
        else:
            assert printed[2:] == lines
    assert_same_frames(pd.read_parquet(path / "dense.parquet"), pd.read_parquet(out))


@pytest.mark.parametrize("cosines", ["dense", "sparse"])
@pytest.mark.parametrize("k", [2, 10])
def test_uf_terms_by_either_kernel_branch(monkeypatch, cosines, k):
    """k = 2 on 60 items takes the k^2 look-ups for rows with few similar partners, k = 10
    the row sums; sparse: UF's item cosines as CSR rows."""
    from userfair.formulas import fairness

    if cosines == "sparse":
        monkeypatch.setattr(fairness, "UF_DENSE_ITEMS", 0)
        monkeypatch.setattr(streaming, "DENSE_COSINES_SHARE", math.inf)
    train, test, topk, _ = random_split(6)
    inputs = load_inputs(train, test, topk[topk["rank"] <= k], k=k)
    stream = dec.decompose(inputs, k=k, route="stream", block_size=4)
    assert_same_frames(dec.decompose(inputs, k=k, route="dense"), stream)
    assert not stream.UF.isna().any()
