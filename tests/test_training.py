"""Each of the seven models trains one epoch on a small ml-100k split and exports valid
top-k lists whose effectiveness equals RecBole's own test metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from userfair.files.io import InputError, read_inter, write_inter

pytestmark = pytest.mark.slow

K = 10
DATASET = "tiny"
MODELS = ["UserKNN", "ItemKNN", "BPR", "MultiVAE", "NGCF", "NeuMF", "NCL"]
# Small but real settings: one epoch, few clusters (the split has about 110 users).
PARAMS = {"UserKNN": {"k": 20}, "ItemKNN": {"k": 20}, "NCL": {"num_clusters": 10}}


@pytest.fixture(scope="module")
def split_dir(tiny_ml100k, tmp_path_factory):
    """A seeded random 60/20/20 split of the tiny ml-100k (ratings >= 3), users with fewer
    than 5 train interactions dropped: enough test users for the checks below."""
    frame = read_inter(tiny_ml100k / "ml-100k.inter")
    frame = frame[frame["rating"] >= 3][["user_id", "item_id"]]
    frame = frame.sample(frac=1.0, random_state=7).reset_index(drop=True)
    n_valid = n_test = len(frame) // 5
    n_train = len(frame) - n_valid - n_test
    parts = {
        "train": frame.iloc[:n_train],
        "valid": frame.iloc[n_train : n_train + n_valid],
        "test": frame.iloc[n_train + n_valid :],
    }
    counts = parts["train"]["user_id"].value_counts()
    keep = set(counts[counts >= 5].index)
    out = tmp_path_factory.mktemp("split")
    for name, part in parts.items():
        write_inter(part[part["user_id"].isin(keep)], out / f"{DATASET}.{name}.inter")
    return out


@pytest.fixture(scope="module")
def training():
    from userfair.workflow.recbole_setup import Training

    return Training(epochs=1, stopping_step=1, device="cpu", train_batch_size=512, seed=11)


@pytest.fixture(scope="module")
def exported(split_dir, training, tmp_path_factory):
    """model -> (lists, RecBole test metrics, valid record); trained once per module."""
    from userfair.workflow import recommenders

    cache = {}

    def get(model):
        if model not in cache:
            work = tmp_path_factory.mktemp(model)
            params = PARAMS.get(model, {})
            record = recommenders.train_point(
                model, params, split_dir, DATASET, work / "grid" / "0", training
            )
            lists, test = recommenders.export_topk(
                model,
                params,
                work / "grid" / "0" / "model.pth",
                split_dir,
                DATASET,
                work / "export",
                training,
            )
            record["checkpoint"] = str(work / "grid" / "0" / "model.pth")
            cache[model] = (lists, test, record)
        return cache[model]

    return get


def effectiveness(lists: pd.DataFrame, test: pd.DataFrame, k: int) -> dict:
    """HR, MRR, P, R, MAP, NDCG@k averaged over users, written from docs/method.md#effectiveness."""
    relevant = test.groupby("user_id")["item_id"].apply(set).to_dict()
    totals = dict.fromkeys(["HR", "MRR", "P", "R", "MAP", "NDCG"], 0.0)
    for user, group in lists.sort_values("rank").groupby("user_id"):
        rel = relevant[user]
        hits = np.array([item in rel for item in group["item_id"]], dtype=float)
        ranks = np.arange(1, k + 1)
        ideal = min(k, len(rel))
        totals["HR"] += float(hits.any())
        totals["MRR"] += 1.0 / ranks[hits > 0][0] if hits.any() else 0.0
        totals["P"] += hits.sum() / k
        totals["R"] += hits.sum() / len(rel)
        totals["MAP"] += (np.cumsum(hits) / ranks * hits).sum() / ideal
        totals["NDCG"] += (hits / np.log2(ranks + 1)).sum() / (1 / np.log2(ranks[:ideal] + 1)).sum()
    users = lists["user_id"].nunique()
    return {name: value / users for name, value in totals.items()}


@pytest.mark.parametrize("model", MODELS)
def test_lists_are_k_distinct_unseen_items_for_exactly_the_test_users(model, exported, split_dir):
    lists, _, record = exported(model)
    splits = {s: read_inter(split_dir / f"{DATASET}.{s}.inter") for s in ("train", "valid", "test")}
    assert list(lists.columns) == ["user_id", "item_id", "rank", "score"]
    assert lists["user_id"].map(type).eq(str).all() and lists["item_id"].map(type).eq(str).all()
    assert set(lists["user_id"]) == set(splits["test"]["user_id"])
    per_user = lists.groupby("user_id")
    assert per_user.size().eq(K).all()
    assert per_user["item_id"].nunique().eq(K).all()
    assert per_user["rank"].apply(lambda r: sorted(r) == list(range(1, K + 1))).all()
    ordered = lists.sort_values(["user_id", "rank"])
    assert ordered.groupby("user_id")["score"].apply(lambda s: s.is_monotonic_decreasing).all()
    known = set(pd.concat(splits.values())["item_id"])
    assert set(lists["item_id"]) <= known
    seen = pd.concat([splits["train"], splits["valid"]])[["user_id", "item_id"]]
    clash = lists.merge(seen, on=["user_id", "item_id"])
    assert clash.empty, f"{model} recommends train/valid items: {clash.head()}"
    assert set(record["valid"]) == {"HR", "MRR", "P", "R", "MAP", "NDCG"}


@pytest.mark.parametrize("model", MODELS)
def test_effectiveness_of_the_lists_equals_recbole_test_metrics(model, exported, split_dir):
    lists, recbole_test, _ = exported(model)
    test = read_inter(split_dir / f"{DATASET}.test.inter")
    ours = effectiveness(lists, test, K)
    assert set(recbole_test) == set(ours)
    for name, value in ours.items():
        assert value == pytest.approx(recbole_test[name], abs=1e-6), name
    assert recbole_test["NDCG"] > 0  # a trained model finds some test items


@pytest.mark.parametrize("model", ["BPR", "NCL"])
def test_two_cpu_runs_give_identical_lists(model, exported, split_dir, training, tmp_path):
    from userfair.workflow import recommenders

    first, _, _ = exported(model)
    params = PARAMS.get(model, {})
    recommenders.train_point(model, params, split_dir, DATASET, tmp_path / "grid", training)
    again, _ = recommenders.export_topk(
        model,
        params,
        tmp_path / "grid" / "model.pth",
        split_dir,
        DATASET,
        tmp_path / "export",
        training,
    )
    pd.testing.assert_frame_equal(first, again, check_exact=True)


def test_export_uses_the_checkpoint_not_a_fresh_model(exported, split_dir, training, tmp_path):
    """Lists from another checkpoint of the same model differ: nothing is retrained."""
    from userfair.workflow import recbole_setup, recommenders

    lists, _, _ = exported("BPR")
    other = recbole_setup.Training(**{**training.__dict__, "epochs": 3, "seed": 5})
    recommenders.train_point(
        "BPR", {"learning_rate": 0.01}, split_dir, DATASET, tmp_path / "other", other
    )
    swapped, _ = recommenders.export_topk(
        "BPR",
        {},
        tmp_path / "other" / "model.pth",
        split_dir,
        DATASET,
        tmp_path / "export",
        training,
    )
    assert not lists["item_id"].equals(swapped["item_id"])


def test_recbole_evaluate_reloads_our_checkpoint(exported, split_dir, training, tmp_path):
    """RecBole's own Trainer.evaluate(load_best_model=True) reads the checkpoint (the
    torch.load patch) and gives the exported test metrics."""
    import contextlib

    from userfair.workflow import recbole_setup, recommenders

    _, test, record = exported("BPR")
    with contextlib.chdir(tmp_path):
        run = recommenders.prepare("BPR", {}, split_dir, DATASET, tmp_path, training)
        result = run.trainer.evaluate(
            run.test, load_best_model=True, model_file=record["checkpoint"]
        )
    assert recbole_setup.external_metrics(result, K) == pytest.approx(test, abs=1e-9)


def test_batchwise_itemknn_scores_equal_recboles_itemknn(split_dir, training, tmp_path):
    """Our ItemKNN only moves RecBole's X @ W to evaluation time: same scores."""
    import contextlib

    import torch
    from recbole.model.general_recommender import ItemKNN as RecBoleItemKNN

    from userfair.workflow import recommenders, userknn

    with contextlib.chdir(tmp_path):
        run = recommenders.prepare(
            "ItemKNN", {"k": 20, "shrink": 1.0}, split_dir, DATASET, tmp_path, training
        )
    assert isinstance(run.model, userknn.ItemKNN)
    reference = RecBoleItemKNN(run.config, run.train.dataset)
    users = torch.arange(1, run.dataset.user_num)
    ours = run.model.full_sort_predict({run.model.USER_ID: users})
    theirs = reference.full_sort_predict({reference.USER_ID: users})
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-7)
    pairs = {run.model.USER_ID: users[:50], run.model.ITEM_ID: torch.arange(1, 51)}
    np.testing.assert_allclose(
        run.model.predict(pairs).numpy(), reference.predict(pairs).numpy(), rtol=1e-5, atol=1e-7
    )


def test_ncl_with_as_many_clusters_as_users_is_a_clear_error(split_dir, training, tmp_path):
    from userfair.workflow import recommenders

    with pytest.raises(InputError, match="num_clusters=100000 must be below the number of users"):
        recommenders.train_point(
            "NCL", {"num_clusters": 100000}, split_dir, DATASET, tmp_path, training
        )


def test_missing_split_names_the_file(training, tmp_path):
    from userfair.workflow import recommenders

    with pytest.raises(InputError, match=r"nowhere\.train\.inter: split file not found"):
        recommenders.train_point("BPR", {}, tmp_path, "nowhere", tmp_path / "w", training)
