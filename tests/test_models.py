"""The model registry: every RecBole general recommender plus UserKNN, read from RecBole's
source without importing it, checked against the imported classes."""

import inspect

import pytest

from userfair.files.io import InputError
from userfair.workflow import models


def test_registry_matches_recbole_classes():
    import recbole.model.general_recommender as general
    from recbole.model.abstract_recommender import GeneralRecommender
    from recbole.utils import ModelType

    from userfair import recbole_patches  # noqa: F401  (RecBole on current numpy)

    classes = {
        name: cls
        for name, cls in inspect.getmembers(general, inspect.isclass)
        if issubclass(cls, GeneralRecommender) and cls is not GeneralRecommender
    }
    assert set(models.names()) == set(classes) | {"UserKNN"}
    for name, cls in classes.items():
        assert models.get(name).trainable == (cls.type != ModelType.TRADITIONAL), name


def test_the_paper_models_and_their_grid_keys():
    paper = ["UserKNN", "ItemKNN", "BPR", "MultiVAE", "NGCF", "NeuMF", "NCL"]
    assert [models.get(m).trainable for m in paper] == [False, False] + [True] * 5
    assert models.get("UserKNN").grid_keys == ("k", "shrink")
    assert {"k", "shrink"} <= set(models.get("ItemKNN").grid_keys)
    lightgcn = models.get("LightGCN")
    assert {"embedding_size", "n_layers", "reg_weight", "learning_rate"} <= set(lightgcn.grid_keys)
    assert "learning_rate" not in models.get("EASE").grid_keys  # not trained by epochs


def test_gpus_follow_the_class_and_the_device():
    assert models.get("LightGCN").gpus("auto") == 1
    assert models.get("LightGCN").gpus("cpu") == 0
    assert models.get("ItemKNN").gpus("cuda") == 0 and models.get("EASE").gpus("auto") == 0


def test_labels():
    assert [models.label(m) for m in ("UserKNN", "NeuMF", "LightGCN")] == [
        "U-KNN",
        "NMF",
        "LightGCN",
    ]


def test_unknown_model_names_close_matches():
    with pytest.raises(InputError, match=r"model 'LightGNC' is not .* did you mean LightGCN"):
        models.get("LightGNC")
