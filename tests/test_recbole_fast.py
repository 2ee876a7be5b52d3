"""userfair.workflow.recbole_fast against RecBole's own methods, on real RecBole models built from a
small ml-100k split (one user's train interactions appear twice: RecBole keeps duplicates)."""

from __future__ import annotations

import contextlib

import pandas as pd
import pytest
import torch

from userfair.files.io import read_inter, write_inter
from userfair.workflow import recbole_fast

pytestmark = pytest.mark.slow

DATASET = "tiny"
AUTOENCODERS = ["MultiVAE", "MultiDAE", "RecVAE", "MacridVAE"]
GRAPHS = ["NGCF", "LightGCN", "NCL"]
PARAMS = {"NCL": {"num_clusters": 10}}


@pytest.fixture(scope="module")
def split_dir(tiny_ml100k, tmp_path_factory):
    """A seeded 60/20/20 split of the tiny ml-100k; the first user's train rows twice."""
    frame = read_inter(tiny_ml100k / "ml-100k.inter")[["user_id", "item_id"]]
    frame = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    n_valid = n_test = len(frame) // 5
    n_train = len(frame) - n_valid - n_test
    train = frame.iloc[:n_train]
    heavy = train[train["user_id"] == train["user_id"].iloc[0]]
    parts = {
        "train": pd.concat([train, heavy], ignore_index=True),
        "valid": frame.iloc[n_train : n_train + n_valid],
        "test": frame.iloc[n_train + n_valid :],
    }
    out = tmp_path_factory.mktemp("split")
    for name, part in parts.items():
        write_inter(part, out / f"{DATASET}.{name}.inter")
    return out


@pytest.fixture(scope="module")
def training():
    from userfair.workflow.recbole_setup import Training

    return Training(epochs=2, stopping_step=5, device="cpu", train_batch_size=256, seed=5)


@pytest.fixture(scope="module")
def prepared(split_dir, training, tmp_path_factory):
    """model -> userfair.workflow.recbole_setup.Run built with the fast methods (once per model)."""
    from userfair.workflow import recommenders

    cache = {}

    def get(model, **params):
        key = (model, repr(sorted(params.items())))
        if key not in cache:
            work = tmp_path_factory.mktemp(model)
            with contextlib.chdir(work):
                cache[key] = recommenders.prepare(
                    model, {**PARAMS.get(model, {}), **params}, split_dir, DATASET, work, training
                )
        return cache[key]

    return get


def original(cls, name):
    """RecBole's own method ``name`` as ``cls`` resolves it without the fast ones."""
    with recbole_fast.recbole_methods():
        return getattr(cls, name)


def trained(model, split_dir, training, workdir):
    from userfair.workflow import recommenders

    return recommenders.train_point(
        model, PARAMS.get(model, {}), split_dir, DATASET, workdir, training
    )


def assert_same_training(fast: dict, slow: dict) -> None:
    assert len(fast["curve"]) == len(slow["curve"]) == 2
    for ours, theirs in zip(fast["curve"], slow["curve"], strict=True):
        assert ours["train_loss"] == pytest.approx(theirs["train_loss"], rel=1e-6, abs=1e-6)
        assert ours["valid_NDCG"] == pytest.approx(theirs["valid_NDCG"], abs=1e-6)
    for metric, value in slow["valid"].items():
        assert fast["valid"][metric] == pytest.approx(value, abs=1e-6), metric


# ----------------------------------------------------------------------- history rows
@pytest.mark.parametrize("model", AUTOENCODERS)
def test_history_rows_equal_recbole_dense_rows(model, prepared):
    """The rows scattered from the CSR equal RecBole's rows from its dense history matrix,
    the duplicated user included; the CSR holds one entry per train interaction."""
    from recbole.model.abstract_recommender import AutoEncoderMixin

    run = prepared(model)
    net, dataset = run.model, run.train.dataset
    assert net.history_indices.numel() == len(dataset.inter_feat)
    assert not hasattr(net, "history_item_id")
    original(AutoEncoderMixin, "build_histroy_items")(net, dataset)
    longest = torch.bincount(dataset.inter_feat[dataset.uid_field]).max()
    assert net.history_item_id.shape == (dataset.user_num, longest)  # RecBole's dense width
    rows_of = original(AutoEncoderMixin, "get_rating_matrix")
    users = torch.arange(1, dataset.user_num)
    for batch in (users, users.flip(0)[:7], users[:1]):
        ours, theirs = net.get_rating_matrix(batch), rows_of(net, batch)
        assert ours.dtype == theirs.dtype == torch.float32
        assert torch.equal(ours, theirs)
    assert net.get_rating_matrix(users).sum() < len(dataset.inter_feat)  # duplicates count once


def test_history_build_draws_what_recbole_draws(prepared):
    """RecBole shuffles a copy of the interactions; the fast build draws the same
    permutation, so the weights initialised after it are RecBole's."""
    from recbole.model.abstract_recommender import AutoEncoderMixin

    run = prepared("MultiVAE")
    torch.manual_seed(0)
    original(AutoEncoderMixin, "build_histroy_items")(run.model, run.train.dataset)
    theirs = torch.rand(3)
    torch.manual_seed(0)
    run.model.build_histroy_items(run.train.dataset)
    assert torch.equal(torch.rand(3), theirs)


@pytest.mark.parametrize("model", ["MultiVAE", "MultiDAE"])
def test_autoencoder_trains_like_recbole(model, split_dir, training, tmp_path):
    """Two seeded epochs give RecBole's train losses and valid metrics."""
    fast = trained(model, split_dir, training, tmp_path / "fast")
    with recbole_fast.recbole_methods():
        slow = trained(model, split_dir, training, tmp_path / "recbole")
    assert_same_training(fast, slow)


# ----------------------------------------------------------------------- NeuMF
def spread_weights(net, seed=0):
    """Embeddings far from NeuMF's near-constant initial scores (its layers keep torch's
    initialisation), so a wrong item order or a wrong layer cannot pass the comparison."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in net.named_parameters():
            if "embedding" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator))


@pytest.mark.parametrize(
    "params",
    [{}, {"mf_train": False}, {"mlp_train": False}, {"mlp_hidden_size": [32, 16, 8]}],
    ids=["both", "mlp-only", "mf-only", "three-layers"],
)
@pytest.mark.parametrize("chunk", [2**40, recbole_fast.NEUMF_CHUNK_FLOATS, 1000])
def test_neumf_full_sort_equals_the_pointwise_path(params, chunk, prepared, monkeypatch):
    """Full-sort scores of every valid batch equal RecBole's point-wise path (each user
    repeated over all items, NeuMF.predict), in one item chunk and in many."""
    monkeypatch.setattr(recbole_fast, "NEUMF_CHUNK_FLOATS", chunk)
    run = prepared("NeuMF", **params)
    spread_weights(run.model)
    run.model.eval()
    trainer = run.trainer  # what Trainer.evaluate sets before its batches
    trainer.tot_item_num = run.dataset.item_num
    trainer.item_tensor = run.valid._dataset.get_item_feature().to(trainer.device)
    batches = list(run.valid)[:3]
    with torch.no_grad():
        ours = [trainer._full_sort_batch_eval(batch)[1] for batch in batches]
        with recbole_fast.recbole_methods():
            theirs = [trainer._full_sort_batch_eval(batch)[1] for batch in batches]
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape == (a.shape[0], run.model.n_items)
        finite = torch.isfinite(b)
        assert torch.equal(torch.isfinite(a), finite)
        assert (a[finite] - b[finite]).abs().max() <= 1e-6
        assert b[finite].std() > 1e-3  # scores differ by far more than the tolerance


def test_neumf_full_sort_refuses_training_mode(prepared):
    """In training mode (dropout active) the trainer's point-wise fallback is used."""
    run = prepared("NeuMF")
    run.model.train()
    batch = next(iter(run.valid))
    with pytest.raises(NotImplementedError):
        run.model.full_sort_predict(batch[0])
    run.model.eval()


def test_neumf_trains_and_validates_like_recbole(split_dir, training, tmp_path):
    fast = trained("NeuMF", split_dir, training, tmp_path / "fast")
    with recbole_fast.recbole_methods():
        slow = trained("NeuMF", split_dir, training, tmp_path / "recbole")
    assert_same_training(fast, slow)


# ----------------------------------------------------------------------- adjacency
@pytest.mark.parametrize("model", GRAPHS)
def test_normalised_adjacency_is_recbole_s(model, prepared):
    """The same sparse matrix (indices and float32 values, bit for bit) and, for NCL, the
    same degree vector as RecBole's dok_matrix construction."""
    run = prepared(model)
    net = run.model
    ours = net.get_norm_adj_mat().coalesce()
    ours_diag = getattr(net, "diag", None)
    theirs = original(type(net), "get_norm_adj_mat")(net).coalesce()
    assert ours.shape == theirs.shape == (net.n_users + net.n_items,) * 2
    assert ours.dtype == theirs.dtype == torch.float32
    assert torch.equal(ours.indices(), theirs.indices())
    assert torch.equal(ours.values(), theirs.values())
    if model == "NCL":
        assert torch.equal(ours_diag, net.diag)


@pytest.mark.parametrize("model", ["NGCF", "LightGCN"])
def test_graph_model_trains_like_recbole(model, split_dir, training, tmp_path):
    fast = trained(model, split_dir, training, tmp_path / "fast")
    with recbole_fast.recbole_methods():
        slow = trained(model, split_dir, training, tmp_path / "recbole")
    assert_same_training(fast, slow)


# ----------------------------------------------------------------------- apply
def test_apply_is_idempotent_and_keeps_recbole_s_methods():
    from recbole.model.abstract_recommender import AutoEncoderMixin, GeneralRecommender
    from recbole.model.general_recommender import NGCF, NeuMF

    recbole_fast.apply()
    recbole_fast.apply()
    assert AutoEncoderMixin.get_rating_matrix is recbole_fast.rating_rows
    assert NGCF.get_norm_adj_mat is recbole_fast.norm_adj_mat
    assert recbole_fast.ORIGINAL[(NGCF, "get_norm_adj_mat")].__module__.startswith("recbole")
    with recbole_fast.recbole_methods():
        assert NeuMF.full_sort_predict is GeneralRecommender.full_sort_predict
        assert AutoEncoderMixin.get_rating_matrix.__module__.startswith("recbole")
    assert NeuMF.full_sort_predict is recbole_fast.neumf_full_sort_predict
