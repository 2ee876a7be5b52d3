"""userfair.recbole: the 12 fairness measures as RecBole 1.2.1 metrics, on real RecBole runs
(tiny data or the ml-100k inside recbole, 1-4 epochs), against ``userfair.evaluate_frames``
on the same top-k lists (docs/recbole.md)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from userfair import recbole as plugin
from userfair.measures import FAIR, FAIR_GROUP, OPT_IN

from conftest import REPO

DATASET = "tiny"  # not "ml-100k": RecBole would read its own bundled copy instead
TOPK = [3, 5, 10]
RECBOLE_METRICS = ["Hit", "MRR", "NDCG", "Precision", "Recall", "MAP"]


def settings(data_path: Path, workdir: Path, **extra) -> dict:
    return {
        "data_path": str(data_path),
        "checkpoint_dir": str(workdir),
        "metrics": RECBOLE_METRICS + list(plugin.METRICS),
        "topk": TOPK,
        "valid_metric": "NDCG@10",
        "metric_decimal_place": 12,
        "epochs": 1,
        "train_batch_size": 512,
        # several users per batch and several batches: the collected users and positive
        # items must line up across batches
        "eval_batch_size": 20_000,
        "seed": 7,
        "reproducibility": True,
        "show_progress": False,
        "save_dataset": False,
        "save_dataloaders": False,
        "log_wandb": False,
        "worker": 0,
        **extra,
    }


@pytest.fixture(scope="module", autouse=True)
def in_a_temporary_directory(tmp_path_factory):
    """RecBole's trainer writes log_tensorboard/ into the working directory, while it runs."""
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(before)


@pytest.fixture(scope="module")
def data_path(tiny_ml100k, tmp_path_factory) -> Path:
    """The tiny ml-100k as a RecBole atomic dataset named ``tiny`` (RecBole's default
    random 8:1:1 split, full-sort evaluation)."""
    root = tmp_path_factory.mktemp("recbole-data")
    (root / DATASET).mkdir()
    inter = (Path(tiny_ml100k) / "ml-100k.inter").read_text()
    (root / DATASET / f"{DATASET}.inter").write_text(inter)
    return root


def build(model: str, config_dict: dict, dataset: str = DATASET):
    """Config, dataset, dataloaders and trainer of a fresh model."""
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.utils import get_model, get_trainer, init_seed

    config = Config(model=model, dataset=dataset, config_dict=config_dict)
    init_seed(config["seed"], config["reproducibility"])
    dataset = create_dataset(config)
    train, valid, test = data_preparation(config, dataset)
    init_seed(config["seed"], config["reproducibility"])
    net = get_model(model)(config, train.dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, net)
    return config, dataset, train, valid, test, trainer


def frame(config, data) -> pd.DataFrame:
    """The interactions of a RecBole dataset with external ids."""
    uid, iid = config["USER_ID_FIELD"], config["ITEM_ID_FIELD"]
    feat = data.inter_feat
    return pd.DataFrame(
        {
            "user_id": data.id2token(uid, feat[uid].numpy()),
            "item_id": data.id2token(iid, feat[iid].numpy()),
        }
    )


def ranked_lists(config, dataset, trainer, loader, k: int) -> pd.DataFrame:
    """The lists RecBole's full-sort evaluation ranks: its scores with the history masked
    (``Trainer._full_sort_batch_eval``) and the same ``torch.topk``."""
    import torch

    uid, iid = config["USER_ID_FIELD"], config["ITEM_ID_FIELD"]
    parts = []
    with torch.no_grad():
        for batch in loader:
            interaction, scores, _, _ = trainer._full_sort_batch_eval(batch)
            _, top = torch.topk(scores, k, dim=-1)
            users = interaction[uid].numpy()
            parts.append(
                pd.DataFrame(
                    {
                        "user_id": np.repeat(dataset.id2token(uid, users), k),
                        "item_id": dataset.id2token(iid, top.numpy().ravel()),
                        "rank": np.tile(np.arange(1, k + 1), len(users)),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def trained(data_path, tmp_path_factory):
    """BPR trained one epoch with every fairness metric configured; its valid result (from
    fit) and test result, and what is needed to recompute them with the library."""
    plugin.register()
    work = tmp_path_factory.mktemp("bpr")
    config, dataset, train, valid, test, trainer = build("BPR", settings(data_path, work))
    _, valid_result = trainer.fit(train, valid, saved=True, show_progress=False)
    test_result = trainer.evaluate(test, load_best_model=False)
    return {
        "config": config,
        "dataset": dataset,
        "loaders": {"train": train, "valid": valid, "test": test},
        "trainer": trainer,
        "results": {"valid": valid_result, "test": test_result},
        "checkpoint": trainer.saved_model_file,
        "work": work,
    }


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-11)


# --- registration -------------------------------------------------------------------------


def test_register_is_idempotent_and_adds_lower_is_better_metrics():
    from recbole.evaluator import register as registry

    first = plugin.register()
    classes = {name: registry.metrics_dict[name.lower()] for name in first}
    assert plugin.register() == first == list(plugin.ALL_METRICS)
    names = plugin.ALL_METRICS
    assert [names[n] for n in first] == list(FAIR) + list(FAIR_GROUP) + list(OPT_IN)
    for name in first:
        lower = name.lower()
        assert registry.metrics_dict[lower] is classes[name]  # the same class, once
        # every fairness measure lower-is-better; gNDCG (effectiveness) higher
        assert registry.smaller_metrics.count(lower) == (0 if name == "gNDCG" else 1), name
        assert "rec.items" in registry.metric_information[lower]
    assert "ndcg" not in registry.smaller_metrics  # RecBole's own flags untouched


@pytest.mark.parametrize(
    ("valid_metric", "bigger"),
    [("PUF_P_Cos@10", False), ("puf_ndcg_jacc@5", False), ("Uf@10", False), ("NDCG@10", True)],
)
def test_names_are_case_insensitive_and_fairness_is_smaller_is_better(valid_metric, bigger):
    from recbole.config import Config

    plugin.register()
    config = Config(
        model="BPR",
        dataset="ml-100k",
        config_dict={"metrics": ["ndcg", "Puf_P_Cos", "PUF_NDCG_JACC", "uf"],
                     "valid_metric": valid_metric, "topk": [5, 10]},
    )  # fmt: skip
    assert config["valid_metric_bigger"] is bigger


def test_a_missing_valid_metric_is_evaluated_too():
    """RecBole's default valid_metric (MRR@10) is added to a metric list without it."""
    from recbole.config import Config

    plugin.register()
    config = Config(
        model="BPR", dataset="ml-100k", config_dict={"metrics": ["NDCG", "PUF_P_Cos", "UF"]}
    )
    assert config["valid_metric"] == "MRR@10"
    assert config["metrics"] == ["NDCG", "PUF_P_Cos", "UF", "MRR"]


def test_another_recbole_version_is_a_clear_error(monkeypatch):
    import recbole

    monkeypatch.setattr(recbole, "__version__", "1.3.0")
    with pytest.raises(plugin.RecBoleVersionError, match=r"RecBole 1\.2\.1 only.*is 1\.3\.0"):
        plugin.register()


def test_an_unknown_metric_is_still_recboles_error():
    from recbole.config import Config

    plugin.register()
    with pytest.raises(NotImplementedError, match="PUF_X"):
        Config(model="BPR", dataset="ml-100k", config_dict={"metrics": ["NDCG", "PUF_X"]})


# --- the same numbers as the library ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["valid", "test"])
def test_every_measure_equals_the_library_at_every_k(trained, phase):
    """Users in RecBole's order, its history masking and positive items, every topk value:
    the plugin's values equal userfair.evaluate_frames on the lists RecBole ranked."""
    config, dataset, trainer = trained["config"], trained["dataset"], trained["trainer"]
    loaders = trained["loaders"]
    train = frame(config, loaders["train"].dataset)
    valid = frame(config, loaders["valid"].dataset)
    test = frame(config, loaders["test"].dataset)
    evaluated, other = (valid, test) if phase == "valid" else (test, valid)
    lists = ranked_lists(config, dataset, trainer, loaders[phase], max(TOPK))
    result = trained["results"][phase]
    checked = 0
    for k in TOPK:
        ours = plugin.measure_values(result, k)
        assert list(ours) == list(FAIR)
        library = __import__("userfair").evaluate_frames(train, evaluated, lists, valid=other, k=k)
        for key in FAIR:
            assert close(ours[key], library[key]), (phase, k, key, ours[key], library[key])
            checked += not math.isnan(library[key])
    assert checked >= 12 * len(TOPK) - 3  # the measures are numbers, not NaN everywhere
    assert len(lists["user_id"].unique()) == evaluated["user_id"].nunique()


WITHOUT_PLUGIN = """
import json, sys
sys.path[:0] = {tests!r}  # this module's folder and tests/ (conftest)
from userfair import recbole_patches
recbole_patches.apply()
import torch
from test_recbole_plugin import build
config_dict = json.loads({config!r})
config, dataset, train, valid, test, trainer = build("BPR", config_dict)
from userfair.files.io import read_pth
state = read_pth({checkpoint!r})
trainer.model.load_state_dict(state["state_dict"])
result = trainer.evaluate(test, load_best_model=False)
print(json.dumps({{key: float(value) for key, value in result.items()}}))
"""


@pytest.mark.slow
def test_recboles_own_metrics_are_the_same_without_the_plugin(trained, data_path, tmp_path):
    """The same checkpoint evaluated by a process that never registers the plugin (RecBole's
    metrics only) gives exactly the values of the run with the 12 fairness metrics."""
    config_dict = settings(data_path, tmp_path, metrics=RECBOLE_METRICS)
    code = WITHOUT_PLUGIN.format(
        tests=[str(REPO / "tests" / "library"), str(REPO / "tests")],
        config=json.dumps(config_dict),
        checkpoint=trained["checkpoint"],
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "workflow"), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    without = json.loads(proc.stdout.strip().splitlines()[-1])
    with_plugin = trained["results"]["test"]
    own = {key: float(value) for key, value in with_plugin.items() if key in without}
    assert set(without) == {f"{m.lower()}@{k}" for m in RECBOLE_METRICS for k in TOPK}
    assert own == without
    assert len(with_plugin) == len(without) + 12 * len(TOPK)


@pytest.mark.slow
def test_evaluation_without_fit_needs_the_train_matrix(trained):
    """A reloaded model evaluated without fit: a clear error, and add_metrics fixes it."""
    config, loaders = trained["config"], trained["loaders"]
    from recbole.utils import get_trainer

    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, trained["trainer"].model)
    with pytest.raises(RuntimeError, match="data_collect"):
        trainer.evaluate(loaders["test"], load_best_model=False)
    plugin.add_metrics(trainer, loaders["train"])
    again = trainer.evaluate(loaders["test"], load_best_model=False)
    assert dict(again) == dict(trained["results"]["test"])


# --- model selection on fairness ----------------------------------------------------------


def expected_epochs(scores: list[float], stopping_step: int) -> int:
    """Epochs RecBole trains when a lower score is better: it stops once more than
    ``stopping_step`` consecutive epochs were above the best so far."""
    best, bad = math.inf, 0
    for epoch, score in enumerate(scores):
        if score <= best:
            best, bad = score, 0
        else:
            bad += 1
            if bad > stopping_step:
                return epoch + 1
    return len(scores)


@pytest.mark.slow
def test_early_stopping_keeps_the_fairest_epoch(data_path, tmp_path):
    plugin.register()
    metric = "PUF_NDCG_Jacc@5"
    config_dict = settings(
        data_path, tmp_path, valid_metric=metric, epochs=4, stopping_step=1,
        learning_rate=0.05, metrics=["NDCG", "PUF_NDCG_Jacc"],
    )  # fmt: skip
    config, _, train, valid, _, trainer = build("BPR", config_dict)
    assert config["valid_metric_bigger"] is False and trainer.best_valid_score == math.inf
    scores = []
    best_score, best_result = trainer.fit(
        train, valid, saved=True, show_progress=False,
        callback_fn=lambda epoch, score: scores.append(score),
    )  # fmt: skip
    assert len(scores) == expected_epochs(scores, 1)
    assert best_score == min(scores) == best_result[metric.lower()]
    assert len(set(scores)) > 1  # the epochs differ, so the choice of the minimum matters


def quick_start():
    """recbole.quick_start (imports ray), after register(); skip where ray is missing."""
    plugin.register()
    try:
        import recbole.quick_start as quick_start
    except ImportError as error:  # ray is in the recbole extra, not in every environment
        pytest.skip(f"recbole.quick_start cannot be imported ({error}): pip install "
                    "'userfair[recbole]' or bash scripts/setup-venv.sh")  # fmt: skip
    return quick_start


@pytest.mark.slow
def test_run_recbole_reports_the_measures_on_the_embedded_ml100k(tmp_path, monkeypatch):
    """The unchanged RecBole call of docs/recbole.md (plus one epoch)."""
    run_recbole = quick_start().run_recbole
    monkeypatch.chdir(tmp_path)
    result = run_recbole(
        model="BPR",
        dataset="ml-100k",
        config_dict={"metrics": ["NDCG", "PUF_P_Cos", "UF"], "topk": [10], "epochs": 1,
                     "checkpoint_dir": str(tmp_path), "show_progress": False},
    )  # fmt: skip
    for phase in ("best_valid_result", "test_result"):
        values = result[phase]
        assert {"ndcg@10", "puf_p_cos@10", "uf@10"} <= set(values), values
        assert 0 < values["puf_p_cos@10"] < 1 and 0 < values["uf@10"] < 1
    assert result["valid_score_bigger"] is True  # MRR@10, RecBole's default valid metric


@pytest.mark.slow
def test_the_example_script_selects_the_fairest_epoch(tmp_path, tiny_ml100k):
    """examples/recbole_puf.py as README and docs/recbole.md run it (with --select), on the
    tiny ml-100k (--data-path: the embedded ml-100k runs in the test above)."""
    quick_start()  # skips where ray is missing
    data = tmp_path.parent / f"{tmp_path.name}-data"
    shutil.copytree(tiny_ml100k, data / "ml-100k")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "recbole_puf.py"), "--epochs", "1", "--select",
         "--data-path", str(data)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.strip().splitlines()
    assert "best epoch chosen by valid PUF_P_Cos@10 (lower is better)" in lines
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no log/, log_tensorboard/, saved/
    for phase in ("best_valid_result", "test_result"):
        (line,) = [line for line in lines if line.startswith(phase)]
        assert all(f"'{key}@10'" in line for key in ("ndcg", "puf_p_cos", "uf")), line


@pytest.mark.slow
def test_hyper_tuning_picks_the_fairest_parameters(data_path, tmp_path, monkeypatch):
    """RecBole's HyperTuning (run_hyper) with valid_metric PUF_P_Cos@10 keeps the smallest."""
    objective_function = quick_start().objective_function
    pytest.importorskip("hyperopt")
    from hyperopt import hp
    from recbole.trainer import HyperTuning

    monkeypatch.chdir(tmp_path)
    fixed = {"model": "BPR", "dataset": DATASET,
             **settings(data_path, tmp_path, metrics=["NDCG", "PUF_P_Cos"], topk=[10],
                        valid_metric="PUF_P_Cos@10")}  # fmt: skip
    (tmp_path / "fixed.yaml").write_text(json.dumps(fixed))  # JSON is YAML
    tuner = HyperTuning(
        objective_function,
        space={"learning_rate": hp.choice("learning_rate", [0.05, 0.0005])},
        fixed_config_file_list=[str(tmp_path / "fixed.yaml")],
        algo="exhaustive",
    )
    tuner.run()
    scores = {p: r["best_valid_score"] for p, r in tuner.params2result.items()}
    assert len(scores) == 2 and len(set(scores.values())) == 2
    assert all(r["valid_score_bigger"] is False for r in tuner.params2result.values())
    assert tuner.best_score == min(scores.values())
    assert tuner.params2str(tuner.best_params) == min(scores, key=scores.get)


# --- the workflow's model: the plugin against the measures job ----------------------------


@pytest.mark.slow
def test_plugin_on_the_workflows_model_reports_the_measures_of_the_measures_job(tiny_run, tmp_path):
    """One definition, two entry points: the fairness measures of a RecBole test evaluation
    of the workflow's trained BPR (through the plugin) equal those the measures job computes
    from the exported lists (BPR of the session's tiny run, conftest ``tiny_run``: read
    only). The topk job itself does not evaluate the plugin (a speed-only measures setting
    must not rerun it)."""
    from userfair.files.io import read_json
    from userfair.workflow import recbole_setup, recommenders

    work = tiny_run.test_dir
    models = work / "results/ml-100k/models"
    measures = json.loads((work / "results/ml-100k/measures/BPR.json").read_text())
    assert not (models / "BPR/recbole_fairness.json").exists()
    best = read_json(models / "BPR/best.json")
    training = recbole_setup.Training(
        epochs=1, stopping_step=1, device="cpu", seed=2024, k=10, threads=1
    )
    names = [n for n in plugin.METRICS if n != "UF" or measures["conventions"]["gamma"] == 1]
    settings = {"userfair_epsilon": measures["conventions"]["epsilon"], "userfair_device": "cpu"}
    lists, test = recommenders.export_topk(
        "BPR", best["params"], work / best["checkpoint"], work / "results/ml-100k/data",
        "ml-100k", tmp_path / "export", training,
        fairness={"names": names, "settings": settings},
        shared=models / "dataset.pth",
    )  # fmt: skip
    assert sorted(plugin.METRICS[n] for n in names) == sorted(FAIR)
    for key in FAIR:
        assert close(test[key], measures[key]), (key, test[key], measures[key])
    assert sum(not math.isnan(measures[key]) for key in FAIR) == len(FAIR)
    recbole_test = json.loads((models / "BPR/recbole_test.json").read_text())
    assert list(recbole_test) == ["HR", "MRR", "P", "R", "MAP", "NDCG"]
    assert recbole_test["NDCG"] == pytest.approx(measures["NDCG"], abs=1e-9)
    assert test["NDCG"] == pytest.approx(measures["NDCG"], abs=1e-9)


# --- group measures (docs/recbole.md#group-measures) ----------------------------------------


@pytest.mark.slow
def test_group_metrics_equal_the_library(trained, tmp_path):
    """UserMAD_P and UserMAD_NDCG of RecBole's test evaluation (activity groups and a
    user-groups file of external ids) equal userfair.evaluate with the same groups; without
    userfair_user_groups they are a clear error."""
    from recbole.evaluator import Evaluator
    from recbole.utils import get_trainer

    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs
    from userfair.formulas.groups import groups_of

    config, dataset, loaders = trained["config"], trained["dataset"], trained["loaders"]
    train = frame(config, loaders["train"].dataset)
    valid = frame(config, loaders["valid"].dataset)
    test = frame(config, loaders["test"].dataset)
    lists = ranked_lists(config, dataset, trained["trainer"], loaders["test"], 10)
    users = sorted(test["user_id"].unique())
    groups_file = tmp_path / "groups.csv"
    labels = [f"g{i % 3}" for i in range(len(users))]
    pd.DataFrame({"user_id": users, "group": labels}).to_csv(groups_file, index=False)
    metrics, before = list(config["metrics"]), config["userfair_user_groups"]
    try:
        config["metrics"] = metrics + list(plugin.GROUP_METRICS)
        with pytest.raises(ValueError, match="userfair_user_groups"):
            Evaluator(config)
        for spec in ("activity:0.2", str(groups_file)):
            config["userfair_user_groups"] = spec  # the trainer builds its evaluator
            model = trained["trainer"].model
            trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, model)
            plugin.add_metrics(
                trainer, loaders["train"], list(plugin.GROUP_METRICS),
                {"userfair_user_groups": spec},
            )  # fmt: skip
            ours = plugin.measure_values(trainer.evaluate(loaders["test"], False), 10)
            inputs = load_inputs(train, test, lists, k=10, valid=valid)
            library = evaluate(inputs, k=10, device="cpu", groups=groups_of(inputs, spec))
            for key in FAIR_GROUP:
                assert close(ours[key], library[key]), (spec, key, ours[key], library[key])
                assert not math.isnan(ours[key])
    finally:
        config["metrics"], config["userfair_user_groups"] = metrics, before


@pytest.mark.slow
def test_plugin_measures_are_recbole_metrics_equal_to_the_library(trained):
    """A plugin UserMeasure and PairMeasure (docs/plugins.md), registered with
    ``register(plugins=...)``, are RecBole metrics of the test evaluation equal to
    userfair.evaluate on the same lists."""
    from recbole.utils import get_trainer

    from userfair import plugins
    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs

    specs = ["test_plugins:Spread", "test_plugins:Squared"]
    try:
        names = plugin.register(specs, entry_points=False)
        assert {"MAD_NDCG", "PUF2_P_Jacc"} <= set(names)
        config, dataset, loaders = trained["config"], trained["dataset"], trained["loaders"]
        model = trained["trainer"].model
        trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, model)
        metrics = list(config["metrics"])
        try:
            plugin.add_metrics(trainer, loaders["train"], ["MAD_NDCG", "PUF2_P_Jacc"])
            ours = plugin.measure_values(trainer.evaluate(loaders["test"], False), 10)
        finally:
            config["metrics"] = metrics
        lists = ranked_lists(config, dataset, trained["trainer"], loaders["test"], 10)
        inputs = load_inputs(
            frame(config, loaders["train"].dataset), frame(config, loaders["test"].dataset),
            lists, k=10, valid=frame(config, loaders["valid"].dataset),
        )  # fmt: skip
        library = evaluate(inputs, k=10, device="cpu")
        for key in ("MAD-NDCG", "PUF2-P-Jacc"):
            assert close(ours[key], library[key]), (key, ours[key], library[key])
    finally:
        plugins.clear()
