"""Validation curves of the seven recommenders under the configured training.

    python benchmarks/training_curves.py [--models MultiVAE NCL] [--datasets ml-100k synthetic]
        [--grid config/grids/quick.yaml] [--configfile config/config.yaml]
        [--epochs N] [--stopping-step S] [--horizon H] [--out results/benchmarks/training_curves]

Every grid point of every chosen model is trained through
``userfair.workflow.recommenders.train_point`` (the code path of the workflow's ``tune``
rule), which records per epoch the train loss and the valid NDCG@k. Datasets:

- ``ml-100k``: the default split of the workflow (the ml-100k inside recbole, preprocessed
  and split by ``userfair.workflow.preprocess`` with the config's settings;
  ``results/ml-100k/data/`` is
  reused when the data stage already wrote it);
- ``synthetic``: a denser seeded dataset (1,500 users, 400 items, about 70 interactions per
  user, power-law item popularity, 8 latent taste factors), preprocessed and randomly split
  by ``userfair.workflow.preprocess`` like a dataset without timestamps (Last.fm).

``--horizon H`` trains H epochs without early stopping instead (RecBole's training is
seeded, so the first epochs of a long run are those of a short one) and replays the
configured stopping rule on the recorded curve: the table then also tells how much better
the model gets when trained longer; ``--replay DIR`` replays another (epochs, stopping_step)
on the curves of such a run without training. Results: ``curves.csv`` (one row per epoch:
train loss, valid NDCG@k), ``summary.csv`` and ``summary.md`` in ``--out`` (git-ignored),
and the table on stdout. Summary columns: best and stop epoch (0-based, as RecBole logs
them), valid NDCG@k of the best epoch, ``rising_at_stop`` (the epoch budget, not early
stopping, ended the run within half a patience window of its best epoch), the trend of the
valid curve and the fall of the train loss over the last stopping_step + 1 epochs, and with
a horizon its best epoch and ``gain_after_stop`` (its best over the rule's best, minus 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]

from userfair.files.io import write_inter  # noqa: E402
from userfair.workflow import grids, rawfiles  # noqa: E402
from userfair.workflow import preprocess as data  # noqa: E402
from userfair.workflow.download import recbole_ml100k_dir  # noqa: E402

# The paper's models: those of the default config.
MODELS = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["models"]
DATASETS = ("ml-100k", "synthetic")


def load_config(path: Path) -> dict:
    """The workflow config with the schema's defaults filled in (as the Snakefile does)."""
    from snakemake.utils import validate

    config = yaml.safe_load(path.read_text()) or {}
    validate(config, str(ROOT / "config" / "config.schema.yaml"))
    return config


def write_splits(splits: dict, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split in data.SPLITS:
        write_inter(data.as_written(splits[split]), folder / f"{name}.{split}.inter")
    return folder


def ml100k_split(config: dict, out: Path) -> Path:
    """The workflow's ml-100k split: results/ml-100k/data when present, else made here with
    the same library calls and settings as the preprocess and split rules."""
    existing = ROOT / "results" / "ml-100k" / "data"
    if all((existing / f"ml-100k.{s}.inter").is_file() for s in data.SPLITS):
        return existing
    pre = config["preprocessing"]
    raw = rawfiles.read_interactions("ml-100k", recbole_ml100k_dir())
    frame = data.preprocess(raw, min_rating=pre["min_rating"], core=pre["core"])
    splits = data.make_splits(
        frame,
        temporal=True,
        seed=config["seed"],
        valid_share=pre["valid_share"],
        test_share=pre["test_share"],
        min_train=pre["min_train_interactions"],
        label="ml-100k",
    )
    return write_splits(splits, out / "data" / "ml-100k", "ml-100k")


def synthetic_interactions(
    seed: int, users: int = 1500, items: int = 400, per_user: float = 70.0, factors: int = 8
) -> pd.DataFrame:
    """Implicit feedback with power-law item popularity and low-rank tastes: user u picks
    its items without replacement with weights exp(popularity logit + u·v_i) (Gumbel top-k);
    user activity is log-normal around ``per_user`` (at least 20)."""
    rng = np.random.default_rng(seed)
    popularity = np.log(1.0 / (np.arange(items) + 5.0) ** 0.8)
    popularity = rng.permutation(popularity)
    taste_u = rng.normal(0.0, 1.0, (users, factors)) / np.sqrt(factors)
    taste_i = rng.normal(0.0, 1.0, (items, factors))
    logits = popularity[None, :] + 1.5 * taste_u @ taste_i.T
    degrees = np.clip(rng.lognormal(np.log(per_user) - 0.08, 0.4, users), 20, items // 2)
    gumbel = logits + rng.gumbel(size=logits.shape)
    order = np.argsort(-gumbel, axis=1)
    rows = [(u, i) for u in range(users) for i in order[u, : int(degrees[u])]]
    frame = pd.DataFrame(rows, columns=["user_id", "item_id"])
    frame = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return frame.astype(str)


def synthetic_split(config: dict, out: Path, seed: int) -> Path:
    pre = config["preprocessing"]
    frame = data.preprocess(
        synthetic_interactions(seed), min_rating=pre["min_rating"], core=pre["core"]
    )
    splits = data.make_splits(
        frame,
        temporal=False,
        seed=config["seed"],
        valid_share=pre["valid_share"],
        test_share=pre["test_share"],
        min_train=pre["min_train_interactions"],
        label="synthetic",
    )
    return write_splits(splits, out / "data" / "synthetic", "synthetic")


def replay_stopping(scores: list[float], epochs: int, stopping_step: int) -> tuple[int, int]:
    """(best epoch, stop epoch) of RecBole's rule on a valid curve: the best is the last
    epoch with a score >= the best so far; training stops after ``stopping_step + 1``
    validations in a row below it, or after ``epochs`` epochs."""
    best, best_epoch, bad = -np.inf, 0, 0
    for epoch, score in enumerate(scores[:epochs]):
        if score >= best:
            best, best_epoch, bad = score, epoch, 0
        else:
            bad += 1
            if bad > stopping_step:
                return best_epoch, epoch
    return best_epoch, min(epochs, len(scores)) - 1


def slope(values: np.ndarray) -> float:
    """Least-squares slope per epoch (0 for fewer than 2 values)."""
    if len(values) < 2:
        return 0.0
    return float(np.polyfit(np.arange(len(values)), values, 1)[0])


def summarise(record: dict, epochs: int, stopping_step: int, trainable: bool) -> dict:
    curve = pd.DataFrame(record["curve"])
    scores = curve["valid_NDCG"].to_list()
    best_epoch, stop_epoch = replay_stopping(scores, epochs, stopping_step)
    seen = curve.iloc[: stop_epoch + 1]
    tail = seen.iloc[-(stopping_step + 1) :]
    row = {
        "best_epoch": best_epoch if trainable else None,
        "stop_epoch": stop_epoch if trainable else None,
        "epochs_run": stop_epoch + 1,
        "valid_NDCG": scores[best_epoch],
        # Trend of the valid curve over the last stopping_step + 1 epochs trained, and how
        # much the train loss fell over them.
        "valid_slope_at_stop": slope(tail["valid_NDCG"].to_numpy()),
        "loss_drop_at_stop": float(1 - tail["train_loss"].iloc[-1] / tail["train_loss"].iloc[0])
        if len(tail) > 1 and tail["train_loss"].iloc[0]
        else 0.0,
        # Still rising when stopped: the budget ended the run within half a patience window
        # of its best epoch (early stopping always ends stopping_step + 1 epochs after it).
        "rising_at_stop": bool(trainable and stop_epoch - best_epoch < (stopping_step + 1) / 2),
    }
    if len(scores) > stop_epoch + 1:  # a longer horizon was trained
        horizon_best = int(np.argmax(scores))
        row.update(
            {
                "horizon_epochs": len(scores),
                "horizon_best_epoch": horizon_best,
                "horizon_valid_NDCG": scores[horizon_best],
                # How much better the model gets when trained on: > 0 means stopped
                # too early (or the budget was too short).
                "gain_after_stop": scores[horizon_best] / scores[best_epoch] - 1
                if scores[best_epoch]
                else float("nan"),
            }
        )
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--configfile", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument(
        "--grid", type=Path, default=None, help="grid file (default: the config's 'grid')"
    )
    parser.add_argument("--epochs", type=int, default=None, help="default: training.epochs")
    parser.add_argument(
        "--stopping-step", type=int, default=None, help="default: training.stopping_step"
    )
    parser.add_argument(
        "--horizon",
        type=int,
        default=None,
        help="train this many epochs without early stopping and replay the "
        "stopping rule on the curve",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        default=None,
        help="a previous --out folder of a --horizon run: replay the stopping "
        "rule on its curves.csv instead of training",
    )
    parser.add_argument("--synthetic-seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "results" / "benchmarks" / "training_curves"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore", category=FutureWarning)  # RecBole on pandas 2

    from userfair.workflow import (  # torch and RecBole: after argument parsing
        recbole_setup,
        recommenders,
    )

    config = load_config(args.configfile)
    train_cfg = config["training"]
    epochs = args.epochs or train_cfg["epochs"]
    stopping_step = args.stopping_step or train_cfg["stopping_step"]
    grid_file = args.grid or ROOT / config["grid"]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.replay:
        if args.replay.resolve() == out.resolve():
            parser.error("--replay needs another --out folder (it writes summary.csv there)")
        rows = replay(args.replay, args.models, args.datasets, epochs, stopping_step)
        header = (
            f"epochs {epochs}, stopping_step {stopping_step}, replayed on the curves of "
            f"{args.replay}"
        )
        return report(pd.DataFrame(rows), out, header)
    points = grids.load_points(grid_file, args.models)
    split_dirs = {}
    for name in args.datasets:
        split_dirs[name] = (
            ml100k_split(config, out)
            if name == "ml-100k"
            else synthetic_split(config, out, args.synthetic_seed)
        )
        sizes = {
            s: len(pd.read_csv(split_dirs[name] / f"{name}.{s}.inter", sep="\t"))
            for s in data.SPLITS
        }
        print(f"{name}: {split_dirs[name]} {sizes}", flush=True)

    trained_epochs = args.horizon or epochs
    training = recbole_setup.Training(
        epochs=trained_epochs,
        stopping_step=trained_epochs if args.horizon else stopping_step,
        device="cpu",
        train_batch_size=train_cfg["train_batch_size"],
        eval_batch_size=train_cfg["eval_batch_size"],
        threads=args.threads,
        seed=config["seed"],
        k=config["k"],
    )
    rows, curves = [], []
    for name, split_dir in split_dirs.items():
        for model in args.models:
            for point, params in enumerate(points[model]):
                work = out / "work" / name / model / str(point)
                started = time.perf_counter()
                record = recommenders.train_point(model, params, split_dir, name, work, training)
                seconds = time.perf_counter() - started
                trainable = grids.trainable(model)
                row = {
                    "dataset": name,
                    "model": model,
                    "point": point,
                    "params": json.dumps(params, sort_keys=True),
                    **summarise(record, epochs, stopping_step, trainable),
                    "epochs_trained": len(record["curve"]),
                    "seconds": round(seconds, 1),
                }
                rows.append(row)
                curves += [
                    {
                        "dataset": name,
                        "model": model,
                        "point": point,
                        "params": row["params"],
                        **entry,
                    }
                    for entry in record["curve"]
                ]
                print(
                    " ".join(
                        f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()
                    ),
                    flush=True,
                )
                pd.DataFrame(curves).to_csv(out / "curves.csv", index=False)

    header = (
        f"epochs {epochs}, stopping_step {stopping_step}"
        + (f", horizon {args.horizon} epochs" if args.horizon else "")
        + f", grid {os.path.relpath(grid_file, ROOT)}; {platform.node()}, "
        f"{os.cpu_count()} CPUs, {args.threads} torch thread(s), device cpu"
    )
    return report(pd.DataFrame(rows), out, header)


def replay(
    folder: Path, models: list[str], datasets: list[str], epochs: int, stopping_step: int
) -> list[dict]:
    """The summary rows of the stopping rule (epochs, stopping_step) replayed on the curves
    of an earlier --horizon run."""
    curves = pd.read_csv(folder / "curves.csv")
    rows = []
    for (name, model, point), curve in curves.groupby(["dataset", "model", "point"], sort=False):
        if model not in models or name not in datasets:
            continue
        record = {"curve": curve.sort_values("epoch").to_dict("records")}
        trainable = grids.trainable(model)
        rows.append(
            {
                "dataset": name,
                "model": model,
                "point": point,
                "params": curve["params"].iloc[0] if "params" in curve else "",
                **summarise(record, epochs, stopping_step, trainable),
                "epochs_trained": len(curve),
            }
        )
    return rows


def report(summary: pd.DataFrame, out: Path, header: str) -> int:
    for column in ("best_epoch", "stop_epoch", "horizon_best_epoch", "horizon_epochs"):
        if column in summary:
            summary[column] = summary[column].astype("Int64")
    summary.to_csv(out / "summary.csv", index=False)
    table = summary.to_markdown(index=False, floatfmt=".4f")
    (out / "summary.md").write_text(f"{header}\n\n{table}\n")
    print(f"\n{header}\n\n{table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
