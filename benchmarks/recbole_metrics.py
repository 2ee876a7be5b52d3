"""Cost of the 12 fairness metrics of userfair.recbole inside RecBole's own evaluation;
results go to docs/performance.md#recbole.

    python benchmarks/recbole_metrics.py [--data ml-100k qk] [--repeats 5] [--batch 4096 409600]

For each dataset, BPR is trained one epoch by RecBole 1.2.1; then its full-sort **test**
evaluation (``Trainer.evaluate``) is timed with RecBole's six ranking metrics alone (Hit, MRR,
NDCG, Precision, Recall, MAP at k = 10) and with the same six plus the 12 fairness metrics,
alternating, ``--repeats`` times each; the user similarities are recomputed in every timed
evaluation (the plugin's cache is cleared: a single test evaluation's cost; the valid
evaluations of later epochs reuse them and cost less, reported as ``warm``).
``--batch``: RecBole's ``eval_batch_size`` (4096 is RecBole's default, 409600 the workflow's).

* ``ml-100k``: the ml-100k inside recbole, RecBole's default random 8:1:1 split.
* ``qk``: a QK-video-sized synthetic split (benchmarks/measures.py: 4,656 users of whom
  3,514 evaluated, 6,423 items, about 52k interactions), given as train/valid/test files;
  also the fairness metrics alone on the streamed route and on ``device="torch-cpu"``
  (``userfair_route``, ``userfair_device``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from userfair import recbole as plugin  # noqa: E402
from userfair import recbole_measures  # noqa: E402

OWN = ["Hit", "MRR", "NDCG", "Precision", "Recall", "MAP"]


def write_qk(folder: Path) -> tuple[str, Path]:
    """The QK-video-sized synthetic split as RecBole benchmark files; (name, data_path)."""
    from measures import synthetic

    train, test, _ = synthetic(3514, seed=0)
    rng = np.random.default_rng(1)
    held = rng.random(len(train)) < 0.1  # a valid split from the train interactions
    name = "qksynth"
    (folder / name).mkdir(parents=True, exist_ok=True)
    parts = {"train": train[~held], "valid": train[held], "test": test}
    for split, frame in parts.items():
        frame.rename(columns={"user_id": "user_id:token", "item_id": "item_id:token"}).to_csv(
            folder / name / f"{name}.{split}.inter", sep="\t", index=False
        )
    return name, folder


def build(model: str, dataset: str, config_dict: dict):
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.utils import get_model, get_trainer, init_seed

    config = Config(model=model, dataset=dataset, config_dict=config_dict)
    init_seed(config["seed"], config["reproducibility"])
    data = create_dataset(config)
    train, valid, test = data_preparation(config, data)
    net = get_model(model)(config, train.dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, net)
    return config, train, valid, test, trainer


INSIDE: list[float] = []  # wall seconds of each userfair.recbole.compute call
_compute = plugin.compute


def _timed_compute(*args, **kwargs):
    start = time.perf_counter()
    result = _compute(*args, **kwargs)
    INSIDE.append(time.perf_counter() - start)
    return result


plugin.compute = _timed_compute  # what the metrics call: their whole computation, timed


def timed(trainer, loader, clear: bool) -> tuple[float, dict]:
    """Wall seconds of one evaluation (and its result); CPU seconds of this process are
    appended to CPU (steadier than wall time when other work shares the cores)."""
    if clear:
        recbole_measures.clear_cache()
    start, cpu = time.perf_counter(), time.process_time()
    result = trainer.evaluate(loader, load_best_model=False)
    CPU.append(time.process_time() - cpu)
    return time.perf_counter() - start, result


CPU: list[float] = []


def measure(dataset: str, data_path: Path | None, batch: int, repeats: int, work: Path) -> dict:
    from recbole.utils import get_trainer

    settings = {
        "metrics": OWN,
        "topk": [10],
        "valid_metric": "NDCG@10",
        "epochs": 1,
        "eval_batch_size": batch,
        "checkpoint_dir": str(work),
        "show_progress": False,
        "save_dataset": False,
        "save_dataloaders": False,
        "log_wandb": False,
        "worker": 0,
        "metric_decimal_place": 12,
    }
    if data_path is not None:
        settings.update(
            {
                "data_path": str(data_path),
                "benchmark_filename": ["train", "valid", "test"],
                "load_col": {"inter": ["user_id", "item_id"]},
            }
        )
    config, train, valid, test, own = build("BPR", dataset, settings)
    own.fit(train, valid, saved=False, show_progress=False)
    own.eval_collector.data_collect(train)

    def fairness_trainer(**options):
        trainer = get_trainer(config["MODEL_TYPE"], config["model"])(
            copy.deepcopy(config), own.model
        )
        plugin.add_metrics(trainer, train, settings=options)
        return trainer

    both = fairness_trainer()
    timed(own, test, False), timed(both, test, True)  # warm-up: numba, torch, caches
    seconds = {"own": [], "with_fairness": [], "warm": []}
    cpu = {key: [] for key in seconds}
    inside = {"cold": [], "warm": []}
    for _ in range(repeats):
        for key, trainer, clear in (
            ("own", own, False),
            ("with_fairness", both, True),
            ("warm", both, False),
        ):
            INSIDE.clear()
            seconds[key].append(timed(trainer, test, clear)[0])
            cpu[key].append(CPU[-1])
            if key != "own":
                inside["cold" if clear else "warm"].append(sum(INSIDE))
    _, result = timed(both, test, True)
    med = {key: statistics.median(values) for key, values in seconds.items()}
    record = {
        "dataset": dataset,
        "eval_batch_size": batch,
        "evaluated_users": int(len(test.uid_list)),
        "items": int(test._dataset.item_num - 1),
        "median_s": med,
        "min_s": {key: min(values) for key, values in seconds.items()},
        "added_over_own": (med["with_fairness"] - med["own"]) / med["own"],
        "added_over_own_warm": (med["warm"] - med["own"]) / med["own"],
        "median_cpu_s": {key: statistics.median(values) for key, values in cpu.items()},
        "fairness_compute_median_s": {k: statistics.median(v) for k, v in inside.items()},
        "fairness_compute_min_s": {k: min(v) for k, v in inside.items()},
        "puf_p_cos@10": result["puf_p_cos@10"],
        "load": os.getloadavg(),
    }
    if dataset != "ml-100k":
        routes = {}
        for label, options in {
            "dense": {"userfair_route": "dense"},
            "stream": {"userfair_route": "stream"},
            "torch-cpu": {"userfair_device": "torch-cpu"},
        }.items():
            trainer = fairness_trainer(**options)
            timed(trainer, test, True)
            runs = [timed(trainer, test, True) for _ in range(repeats)]
            routes[label] = {
                "median_s": statistics.median(r[0] for r in runs),
                "puf_p_cos@10": runs[-1][1]["puf_p_cos@10"],
                "uf@10": runs[-1][1]["uf@10"],
            }
        record["fairness_routes"] = routes
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=["ml-100k", "qk"], choices=["ml-100k", "qk"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", nargs="+", type=int, default=[4096, 409600])
    args = parser.parse_args()
    plugin.register()
    import torch

    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.chdir(work)
        for data in args.data:
            name, path = ("ml-100k", None) if data == "ml-100k" else write_qk(work / "data")
            for batch in args.batch:
                record = measure(name, path, batch, args.repeats, work)
                print(json.dumps(record), flush=True)


if __name__ == "__main__":
    pd.options.mode.copy_on_write = True
    main()
