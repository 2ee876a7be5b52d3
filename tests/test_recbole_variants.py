"""userfair.recbole's opt-in metrics (docs/recbole.md#opt-in-measures): gNDCG, its SD and
Gini and the PUF variants over RCos, Vec and Genre, on a real RecBole run (BPR, 1 epoch, the
tiny ml-100k with its ratings as grades) against the library on the same lists."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_recbole_plugin import RECBOLE_METRICS, build, ranked_lists, settings
from userfair import recbole as plugin
from userfair.files.inputs import load_inputs
from userfair.measures import FAIR, OPT_IN
from userfair.opt_in import variants
from userfair.similarity.registry import read_user_vectors

DATASET = "tinyg"
EXTRA = ["rcos", "vec", "genre"]
TOPK = [5, 10]


@pytest.fixture(scope="module")
def files(tiny_ml100k, tmp_path_factory) -> dict:
    """The tiny ml-100k (with ratings) as RecBole dataset ``tinyg``, its item genres outside
    the dataset folder, random vectors for every user; RecBole's trainer writes into the
    working directory: a temporary one while the module runs."""
    root = tmp_path_factory.mktemp("recbole-graded")
    (root / DATASET).mkdir()
    source = Path(tiny_ml100k)
    shutil.copy(source / "ml-100k.inter", root / DATASET / f"{DATASET}.inter")
    shutil.copy(source / "ml-100k.item", root / "genres.item")
    users = pd.read_csv(source / "ml-100k.inter", sep="\t", dtype=str).iloc[:, 0].unique()
    vectors = np.random.default_rng(5).normal(size=(len(users), 4))
    frame = pd.DataFrame(vectors, columns=["a", "b", "c", "d"]).assign(user_id=users)
    frame.to_csv(root / "vectors.csv", index=False)
    return {"root": root, "item": root / "genres.item", "vectors": root / "vectors.csv"}


def config_dict(files, workdir, **extra) -> dict:
    """test_recbole_plugin's settings with the ratings loaded, every default and opt-in
    metric at TOPK and the files the opt-in ones read."""
    wanted = {
        "load_col": {"inter": ["user_id", "item_id", "rating"]},
        "metrics": RECBOLE_METRICS + list(plugin.METRICS) + list(plugin.OPT_IN_METRICS),
        "topk": TOPK,
        "userfair_grade": "rating",
        "userfair_user_vectors": str(files["vectors"]),
        "userfair_item_features": str(files["item"]),
    }
    return settings(files["root"], workdir, **{**wanted, **extra})


def graded_frame(config, data) -> pd.DataFrame:
    """The interactions of a RecBole dataset with external ids and their ratings."""
    uid, iid = config["USER_ID_FIELD"], config["ITEM_ID_FIELD"]
    feat = data.inter_feat
    return pd.DataFrame(
        {
            "user_id": data.id2token(uid, feat[uid].numpy()),
            "item_id": data.id2token(iid, feat[iid].numpy()),
            "rating": feat["rating"].numpy().astype(np.float64),
        }
    )


@pytest.mark.slow
def test_opt_in_metrics_equal_the_library(files, tmp_path):
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        plugin.register()
        config, dataset, train, valid, test, trainer = build(
            "BPR", config_dict(files, tmp_path), dataset=DATASET
        )
        trainer.fit(train, valid, saved=False, show_progress=False)
        result = trainer.evaluate(test, load_best_model=False)
        lists = ranked_lists(config, dataset, trainer, test, max(TOPK))
    finally:
        os.chdir(before)
    frames = {
        name: graded_frame(config, loader.dataset)
        for name, loader in (("train", train), ("valid", valid), ("test", test))
    }
    checked = 0
    for k in TOPK:
        ours = plugin.measure_values(result, k)
        assert list(ours) == list(FAIR) + list(OPT_IN)
        inputs = load_inputs(
            frames["train"], frames["test"], lists, k=k, valid=frames["valid"], grade="rating",
            item_features=files["item"],
        )  # fmt: skip
        vectors = read_user_vectors(files["vectors"], inputs.users)
        library, _ = variants.evaluate_variants(inputs, k, EXTRA, vectors)
        assert list(library) == list(OPT_IN)
        for key in OPT_IN:
            a, b = ours[key], library[key]
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(
                b, rel=1e-9, abs=1e-11
            ), (k, key, a, b)
            checked += not math.isnan(b)
    assert checked == 2 * len(OPT_IN)
    # the grades are not all one: gNDCG differs from NDCG
    assert ours["gNDCG"] != pytest.approx(result["ndcg@10"], rel=1e-6)


def test_an_opt_in_metric_without_its_data_names_the_key(files, tmp_path):
    from recbole.config import Config
    from recbole.evaluator import Evaluator

    plugin.register()
    for metric, key in (
        ("PUF_gNDCG_Cos", "userfair_grade"),
        ("PUF_P_Vec", "userfair_user_vectors"),
        ("PUF_NDCG_Genre", "userfair_item_features"),
    ):
        settings = config_dict(files, tmp_path, metrics=["NDCG", metric])
        settings[key] = None
        config = Config(model="BPR", dataset=DATASET, config_dict=settings)
        with pytest.raises(ValueError, match=f"{metric} needs .*config key {key}"):
            Evaluator(config)
    # gNDCG is higher-is-better: early stopping on it keeps the largest value
    settings = config_dict(files, tmp_path, valid_metric="gNDCG@10")
    assert Config(model="BPR", dataset=DATASET, config_dict=settings)["valid_metric_bigger"]
