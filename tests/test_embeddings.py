"""User vectors of trained models (userfair.workflow.embeddings) for PUF's Vec: real
RecBole models trained one epoch on the tiny ml-100k, reloaded from their checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

from userfair.files.io import InputError, read_inter, read_pth, write_inter
from userfair.similarity import registry

pytestmark = pytest.mark.slow

DATASET = "tiny"
MODELS = ["BPR", "NeuMF", "LightGCN", "NGCF", "NCL", "MultiVAE"]


@pytest.fixture(scope="module")
def split_dir(tiny_ml100k, tmp_path_factory):
    frame = read_inter(tiny_ml100k / "ml-100k.inter")
    frame = frame[frame["rating"] >= 3][["user_id", "item_id"]]
    frame = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    cut = [int(len(frame) * 0.6), int(len(frame) * 0.8)]
    parts = {"train": frame.iloc[: cut[0]], "valid": frame.iloc[cut[0] : cut[1]],
             "test": frame.iloc[cut[1] :]}  # fmt: skip
    counts = parts["train"]["user_id"].value_counts()
    keep = set(counts[counts >= 5].index)
    out = tmp_path_factory.mktemp("split")
    for name, part in parts.items():
        write_inter(part[part["user_id"].isin(keep)], out / f"{DATASET}.{name}.inter")
    return out


@pytest.mark.parametrize("model", MODELS)
def test_vectors_of_every_test_user_from_the_checkpoint(model, split_dir, tmp_path):
    from userfair.workflow import embeddings, recbole_setup, recommenders

    training = recbole_setup.Training(
        epochs=1, stopping_step=1, device="cpu", train_batch_size=512, seed=5
    )
    params = {"num_clusters": 10} if model == "NCL" else {}
    recommenders.train_point(model, params, split_dir, DATASET, tmp_path / "grid", training)
    checkpoint = tmp_path / "grid" / "model.pth"
    args = (model, params, checkpoint, split_dir, DATASET, tmp_path / "w", training)
    frame = embeddings.export_user_vectors(*args)
    assert list(frame.columns[:2]) == ["user_id", "e0"]
    assert frame["user_id"].is_unique and np.isfinite(frame.iloc[:, 1:].to_numpy()).all()
    path = tmp_path / "vectors.parquet"
    frame.to_parquet(path)
    test_users = np.unique(read_inter(split_dir / f"{DATASET}.test.inter")["user_id"])
    vectors = registry.read_user_vectors(path, test_users)  # every test user has one
    assert vectors.shape == (len(test_users), frame.shape[1] - 1)
    again = embeddings.export_user_vectors(*args[:-2], tmp_path / "w2", training)
    assert again.equals(frame)  # the checkpoint's, deterministically
    state = read_pth(checkpoint)["state_dict"]
    table = {"BPR": "user_embedding.weight", "NeuMF": "user_mf_embedding.weight"}.get(model)
    if table is not None:  # the stored table itself, rows 1.. (0 is RecBole's padding)
        np.testing.assert_array_equal(frame.iloc[:, 1:].to_numpy(), state[table][1:].numpy())
    elif model == "NGCF":  # the ego embeddings, then each propagated layer
        raw = state["user_embedding.weight"][1:].numpy()
        width = raw.shape[1]
        assert frame.shape[1] - 1 > width
        np.testing.assert_allclose(frame.iloc[:, 1 : 1 + width].to_numpy(), raw, rtol=1e-6)
        assert not np.allclose(frame.iloc[:, 1 + width : 1 + 2 * width].to_numpy(), raw)
    elif model != "MultiVAE":  # the layer mean: not the raw ego embeddings
        raw = state["user_embedding.weight"][1:].numpy()
        assert frame.shape[1] - 1 == raw.shape[1]
        assert not np.allclose(frame.iloc[:, 1:].to_numpy(), raw)


def test_knn_models_and_networks_without_users_are_refused():
    from userfair.workflow import embeddings

    for model in ("UserKNN", "ItemKNN"):
        with pytest.raises(InputError, match=f"embedding:{model}: a KNN model has no user"):
            embeddings.check_model(model)
    embeddings.check_model("BPR")
    with pytest.raises(InputError, match="embedding:Pop: the trained model holds no user"):
        embeddings.representation(object(), "Pop")
