"""The load time of ``dataset.pth`` (rule recbole_dataset's file, docs/training.md#dataset) in
the format of ``userfair.files.safe_pth`` against the pickle it replaced, on a synthetic dataset of
a paper dataset's shape (``paper_scale.SHAPES``, scaled with ``--scale``).

The dataset is built once (``shared_dataset.build_shared``); the same object is written both
ways (``write_shared``; ``torch.save`` of the pickle as before) and each file is read
``--repeats`` times (``read_shared``; ``torch.load(weights_only=False)``), then unpacked for
a job's config (``load_shared``). Prints one JSON record.

    .venv/bin/python benchmarks/dataset_file.py --shape ml-20m --scale 0.25
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import paper_scale  # noqa: E402


def timed(func, repeats: int) -> list[float]:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        func()
        seconds.append(time.perf_counter() - started)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(paper_scale.SHAPES), default="ml-20m")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("results/benchmarks/paper_scale_cache"))
    args = parser.parse_args(argv)

    import torch

    from userfair.workflow import recbole_setup, recommenders, shared_dataset

    shape = paper_scale.SHAPES[args.shape].scaled(args.scale)
    folder = args.cache.resolve() / shape.name
    got = paper_scale.prepare_data(shape, folder)["shape"]
    training = recbole_setup.Training(epochs=1, device="cpu", seed=2024)
    started = time.perf_counter()
    shared = shared_dataset.build_shared(folder, shape.dataset, folder / "build", training)
    build = time.perf_counter() - started
    safe, pickled = folder / "dataset.pth", folder / "dataset-pickle.pth"
    write_safe = timed(lambda: shared_dataset.write_shared(shared, safe), 1)[0]
    write_pickle = timed(lambda: torch.save(shared, pickled, pickle_protocol=4), 1)[0]
    read_safe = timed(lambda: shared_dataset.read_shared(safe), args.repeats)
    read_pickle = timed(lambda: torch.load(pickled, weights_only=False), args.repeats)
    parts = shared_dataset.read_shared(safe)
    config = recommenders.Config(
        model=recbole_setup.model_class("BPR"),
        dataset=recbole_setup.recbole_name(shape.dataset),
        config_dict=recbole_setup.recbole_settings(
            "BPR", {}, recbole_setup.link_split(folder, shape.dataset, folder / "build"),
            folder / "build", training,
        ),
    )  # fmt: skip
    unpack = timed(lambda: shared_dataset.load_shared(parts, config), 1)[0]
    record = {
        "benchmark": "dataset_file",
        "shape": {"name": shape.name, **{k: got[k] for k in ("users", "items", "train")}},
        "load_1min": round(os.getloadavg()[0], 2),
        "build_s": round(build, 2),
        "safe": {
            "bytes": safe.stat().st_size,
            "write_s": round(write_safe, 3),
            "read_s_median": round(statistics.median(read_safe), 3),
            "read_s_min": round(min(read_safe), 3),
        },
        "pickle": {
            "bytes": pickled.stat().st_size,
            "write_s": round(write_pickle, 3),
            "read_s_median": round(statistics.median(read_pickle), 3),
            "read_s_min": round(min(read_pickle), 3),
        },
        "load_shared_s": round(unpack, 3),
    }
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
