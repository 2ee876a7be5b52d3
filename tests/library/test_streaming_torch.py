"""The streamed measures' torch path (userfair.streamed._streaming_torch, device torch-cpu: the code
that runs on a GPU) gives the numba path's PairStats and PairSums and the dense route's
measures, the cosine PUF by the items (userfair.streamed.puf_items) the numba kernels'
sums, and the per-user decomposition's accumulators (userfair.decomposition.decompose_stream)
the numba kernels' ones."""

import collections
import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from userfair.cli import main
from userfair.decomposition import decompose_stream
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.formulas import fairness
from userfair.similarity.registry import CosineBlocks
from userfair.streamed import pair_records, puf_items, stream_rows, streaming

from measures_data import random_split
from test_decompose import inputs_args, split_files  # noqa: F401
from test_streaming import K, assert_same, close, split_inputs
from test_variants import expected as variant_data

torch = pytest.importorskip("torch")
_streaming_torch = pytest.importorskip("userfair.streamed._streaming_torch")

M = 300  # a few hundred users
BLOCK = 16  # ~19 blocks of rows
COUNTS = {"m", "start", "stop", "sharing_pairs", "uf_pairs", "uf_similar_pairs", "envious_users"}
TIMES = {"seconds", "seconds_pairs", "seconds_uf_setup", "seconds_envy"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """{share_all: inputs}: with genres; every pair sharing an item (raw minimum > 0) or not."""
    folder = tmp_path_factory.mktemp("genres")
    return {share: split_inputs(21, folder, m=M, share_all=share) for share in (False, True)}


def assert_equal_records(torch_record, numba_record):
    bad = {}
    for field in dataclasses.fields(numba_record):
        a, b = getattr(torch_record, field.name), getattr(numba_record, field.name)
        if field.name in TIMES:
            continue
        if field.name in COUNTS or not isinstance(b, float):
            ok = a == b
        else:
            ok = close(a, b)
        if not ok:
            bad[field.name] = (a, b)
    assert not bad, bad


def both(function, *args, **options):
    """``function`` on the numba path and the torch path (torch first)."""
    return function(*args, device="torch-cpu", **options), function(*args, **options)


@pytest.mark.parametrize("share_all", [False, True])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
@pytest.mark.parametrize("cut", [(0, None), (37, 181)])
def test_pass_one_equals_numba(inputs, share_all, gamma, cut):
    data = inputs[share_all]
    rows = data.train_of_evaluated()
    one, numba = both(streaming.pass_one, rows, *cut, gamma=gamma, genres=data.genres,
                      users=data.users, block_size=BLOCK)  # fmt: skip
    assert_equal_records(one, numba)
    assert one.sharing_pairs > 0
    if cut == (0, None):
        assert (one.cos_range[0] > 0) == share_all  # lo > 0 exactly when every pair shares


@pytest.mark.parametrize("share_all", [False, True])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
@pytest.mark.parametrize("utility", ["precision", "ideal"])
@pytest.mark.parametrize("cut", [(0, None), (37, 181)])
def test_pass_two_equals_numba(inputs, share_all, gamma, utility, cut):
    data = inputs[share_all]
    stats = streaming.pass_one(data.train_of_evaluated(), gamma=gamma, genres=data.genres,
                               users=data.users)  # fmt: skip
    two, numba = both(streaming.pass_two, data, stats, *cut, k=K, envy_utility=utility,
                      block_size=BLOCK)  # fmt: skip
    assert_equal_records(two, numba)
    assert two.uf_similar_pairs > 0 and two.envious_users > 0


@pytest.mark.parametrize("on_device", ["csr", "dense"])
def test_pass_two_with_sparse_item_cosines(inputs, monkeypatch, on_device):
    # UF's item cosines come as CSR (what many recommended items take); on the device they
    # stay CSR or are made dense where they fit
    monkeypatch.setattr(fairness, "UF_DENSE_ITEMS", 0)
    monkeypatch.setattr(streaming, "DENSE_COSINES_SHARE", math.inf)
    monkeypatch.setattr(_streaming_torch, "DENSE_COSINES_MEMORY", 0 if on_device == "csr" else 1)
    data = inputs[False]
    stats = streaming.pass_one(data.train_of_evaluated(), users=data.users)
    assert_equal_records(*both(streaming.pass_two, data, stats, k=K, block_size=BLOCK))


def test_pass_two_with_many_items(monkeypatch):
    # many recommended items, few similar partners: UF's k^2 look-ups per pair
    train, test, topk, _ = random_split(16, m=80, n=1500)
    data = load_inputs(train, test, topk, k=K)
    stats = streaming.pass_one(data.train_of_evaluated(), users=data.users)
    calls = collections.Counter()

    def counted(name):
        real = getattr(_streaming_torch.Lists, name)
        return lambda *args: calls.update([name]) or real(*args)

    for name in ("cosine_sums", "row_sums"):
        monkeypatch.setattr(_streaming_torch.Lists, name, counted(name))
    assert_equal_records(*both(streaming.pass_two, data, stats, k=K, block_size=BLOCK))
    assert calls["cosine_sums"] > calls["row_sums"]  # some blocks took the look-ups


@pytest.mark.parametrize("gamma", [1.0, 0.4])
def test_scattered_ranges_combine_to_the_numba_whole(inputs, gamma):
    data = inputs[False]
    rows = data.train_of_evaluated()
    options = {"gamma": gamma, "genres": data.genres, "users": data.users}
    cuts = stream_rows.ranges(rows, 3, gamma)
    stats = pair_records.combine(
        streaming.pass_one(rows, a, b, block_size=BLOCK, device="torch-cpu", **options)
        for a, b in cuts
    )
    whole = streaming.pass_one(rows, **options)
    assert_equal_records(stats, whole)
    sums = pair_records.combine(
        streaming.pass_two(data, stats, a, b, k=K, block_size=BLOCK, device="torch-cpu")
        for a, b in cuts
    )
    assert_equal_records(sums, streaming.pass_two(data, whole, k=K))


@pytest.mark.parametrize("share_all", [False, True])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
@pytest.mark.parametrize("utility", ["precision", "ideal"])
def test_stream_evaluate_on_torch_equals_dense(inputs, share_all, gamma, utility):
    data = inputs[share_all]
    options = {"k": K, "gamma": gamma, "envy_utility": utility}
    streamed = streaming.stream_evaluate(data, block_size=BLOCK, device="torch-cpu", **options)
    dense = evaluate(data, block_size=256, device="cpu", route="dense", **options)
    assert_same(streamed, dense)
    assert not math.isnan(streamed["UF"])


def test_evaluate_passes_its_device_to_the_streamed_route(inputs, monkeypatch):
    data = inputs[False]
    devices = []
    real = streaming.pass_one
    spy = lambda *a, **kw: devices.append(kw["device"]) or real(*a, **kw)  # noqa: E731
    monkeypatch.setattr(streaming, "pass_one", spy)
    streamed = evaluate(data, k=K, block_size=64, route="stream", device="torch-cpu")
    assert devices == ["torch-cpu"]
    if not torch.cuda.is_available():  # auto without CUDA: the numba kernels, as before
        monkeypatch.setattr(_streaming_torch, "Train", None)  # any torch block would fail
        assert_same(evaluate(data, k=K, block_size=64, route="stream", device="auto"), streamed)
        assert devices[-1] == "cpu"


def test_blocks_shrink_to_the_free_memory(inputs, monkeypatch):
    data = inputs[False]
    rows = data.train_of_evaluated()
    train = _streaming_torch.Train(
        stream_rows.prepare_rows(rows, 1.0, None), 1.0, torch.device("cpu")
    )
    monkeypatch.setattr(_streaming_torch, "free_bytes", lambda device: 10 * train.row_bytes())
    assert _streaming_torch.block_rows(2048, train.row_bytes(), torch.device("cpu")) == 5
    assert _streaming_torch.block_rows(3, train.row_bytes(), torch.device("cpu")) == 3
    small = streaming.pass_one(rows, users=data.users, device="torch-cpu")  # 5 rows a block
    assert_equal_records(small, streaming.pass_one(rows, users=data.users))


def random_rows(seed: int, m: int, n: int, graded: bool) -> sp.csr_matrix:
    """(m, n) rows of a random sparse matrix: binary or graded, with empty rows and
    columns (no user or item is special-cased)."""
    rng = np.random.default_rng(seed)
    rows = sp.random(m, n, density=0.08, random_state=seed, format="lil")
    rows[rng.choice(m, 5, replace=False)] = 0  # users without items
    rows = sp.csr_matrix(rows)
    rows.data[:] = rng.integers(1, 6, rows.nnz) if graded else 1.0
    return rows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("graded", [False, True])
def test_cosine_puf_by_items_on_torch_equals_numba(seed, graded):
    """A_S of the cosine PUF by the items: the torch route's column sums equal the compiled
    kernels' to 1e-9 relative, on scores with ties, for CSR and dense unit rows; so do the
    PUF values."""
    m, n = 400, 60
    block = CosineBlocks(random_rows(seed, m, n, graded))
    rng = np.random.default_rng(100 + seed)
    scores = rng.random((3, m))
    scores[0, : m // 2] = np.round(scores[0, : m // 2], 1)  # many ties
    scores[2] = np.round(scores[2] * 10) / 10  # precision-like: few distinct values
    numba_sums = puf_items.weighted_spread(block.unit, scores)
    cpu = torch.device("cpu")
    for unit in (block.unit, block.unit.toarray()):
        torch_sums = puf_items.weighted_spread(unit, scores, cpu)
        np.testing.assert_allclose(torch_sums, numba_sums, rtol=1e-9, atol=0)
    found, extremes = puf_items.cosine_puf(block, scores, device=cpu)
    expected, _ = puf_items.cosine_puf(block, scores)
    np.testing.assert_allclose(found, expected, rtol=1e-9, atol=0)
    assert extremes.lo == 0.0  # the empty rows certify it


def test_finish_runs_the_cosine_puf_on_its_device(inputs, monkeypatch):
    data = inputs[False]
    devices = []
    real = puf_items.weighted_spread
    spy = lambda unit, scores, device=None: devices.append(device) or real(unit, scores, device)  # noqa: E731
    monkeypatch.setattr(puf_items, "weighted_spread", spy)
    stats = streaming.pass_one(data.train_of_evaluated(), users=data.users)
    sums = streaming.pass_two(data, stats, k=K)
    on_torch = streaming.finish(data, stats, sums, device="torch-cpu")
    assert devices[-1] == torch.device("cpu")
    assert_same(on_torch, streaming.finish(data, stats, sums))


def test_the_opt_in_cosine_family_runs_by_the_items_on_its_device(tmp_path, monkeypatch):
    """PUF over RCos and graded PUF over Cos on the streamed route: by the items on the
    device evaluate was given, equal to the compiled kernels to 1e-9 (Vec and Genre, dense
    rows, from their row sums on both)."""
    inputs, vectors, _ = variant_data(3, tmp_path, m=40)
    devices = []
    real = puf_items.weighted_spread
    spy = lambda unit, scores, device=None: devices.append(device) or real(unit, scores, device)  # noqa: E731
    monkeypatch.setattr(puf_items, "weighted_spread", spy)
    options = dict(k=K, route="stream", extra_similarities=("rcos", "vec", "genre"),
                   user_vectors=vectors, block_size=16)  # fmt: skip
    on_torch = evaluate(inputs, device="torch-cpu", **options)
    # the 18's cosine PUF, then the graded cosine's and RCos's (after an untimed warm-up)
    assert [d for d in devices if d is not None] == [torch.device("cpu")] * 3, devices
    devices.clear()
    on_numba = evaluate(inputs, device="cpu", **options)
    assert devices and set(devices) == {None}
    opt_in = [name for name in on_numba if name.startswith("PUF-") and "Jacc" not in name]
    assert {"PUF-P-RCos", "PUF-NDCG-Vec", "PUF-gNDCG-Genre", "PUF-gNDCG-Cos"} <= set(opt_in)
    for name in opt_in:
        assert on_torch[name] == pytest.approx(on_numba[name], rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize("share_all", [False, True])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
@pytest.mark.parametrize("utility", ["precision", "ideal"])
@pytest.mark.parametrize("cut", [(0, None), (37, 181)])
def test_decomposition_parts_on_torch_equal_numba(inputs, share_all, gamma, utility, cut):
    """Every per-user accumulator of the streamed decomposition (PUF's shares to the worse-
    and better-served user, UF's terms, the cosine sums, envies and the max envy's shares)
    equals the numba kernels' to 1e-9 relative, over the whole and over a row range."""
    data = inputs[share_all]
    options = {"gamma": gamma, "genres": data.genres, "users": data.users}
    stats = streaming.pass_one(data.train_of_evaluated(), **options)
    a, b = cut
    run = lambda **kw: decompose_stream.stream_parts(  # noqa: E731
        data, stats, a, b, k=K, envy_utility=utility, **kw
    )
    on_torch, on_numba = run(block_size=BLOCK, device="torch-cpu"), run()
    assert list(on_torch) == list(on_numba) == list(decompose_stream.PARTS)
    for name in decompose_stream.PARTS:
        np.testing.assert_allclose(on_torch[name], on_numba[name], rtol=1e-9, atol=1e-12,
                                   err_msg=name)  # fmt: skip
    assert on_numba["UF-terms"].any() and on_numba["max-envied"].any()


def test_streamed_decomposition_on_torch_equals_numba(inputs):
    data = inputs[False]
    frames = [decompose_stream.stream_decompose(data, k=K, gamma=0.4, device=device)
              for device in ("torch-cpu", "cpu")]  # fmt: skip
    pd.testing.assert_frame_equal(*frames, rtol=1e-9, atol=1e-12)


def test_users_command_takes_its_device_on_the_streamed_route(split_files):  # noqa: F811
    """`userfair users --route stream --device torch-cpu` (the option was once accepted and
    ignored) writes the frame the numba kernels write."""
    frames = []
    for device in ("torch-cpu", "cpu"):
        out = split_files / f"{device}.parquet"
        args = [*inputs_args(split_files), "--route", "stream", "--device", device]
        assert main(["users", *args, "--out", str(out)]) == 0
        frames.append(pd.read_parquet(out))
    pd.testing.assert_frame_equal(*frames, rtol=1e-9, atol=1e-12)
