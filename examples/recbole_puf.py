"""PUF and the other fairness measures inside an unchanged RecBole run (docs/recbole.md).

    pip install 'userfair[recbole]'        # or: bash scripts/setup-venv.sh
    python examples/recbole_puf.py [--epochs 2] [--model BPR] [--select]
                                   [--dataset NAME --data-path DIR]

Trains a model on the ml-100k that ships inside the recbole package (no download; or on
RecBole atomic files ``DIR/NAME/NAME.inter`` with ``--dataset`` and ``--data-path``) and prints
the valid and test results: RecBole's NDCG@10 beside PUF-P-Cos@10 and UF@10. With
``--select``, the best epoch is the *fairest* one (``valid_metric: PUF_P_Cos@10``, lower is
better) instead of RecBole's default (MRR@10). RecBole writes its logs (``log/``,
``log_tensorboard/``) and checkpoints (``saved/``) under the working directory: the run
works in a temporary directory, removed afterwards, so nothing is left where it started.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

# Run from a clone without installing: the library lives in workflow/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from userfair.recbole import register  # noqa: E402

register()  # before recbole.quick_start is imported: it needs the runtime fixes

from recbole.quick_start import run_recbole  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="BPR")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--select", action="store_true", help="select the fairest epoch")
    parser.add_argument("--dataset", default="ml-100k", help="RecBole dataset name")
    parser.add_argument(
        "--data-path", type=Path, help="folder holding NAME/NAME.inter (default: recbole's own)"
    )
    args = parser.parse_args()
    config = {"metrics": ["NDCG", "PUF_P_Cos", "UF"], "topk": [10], "epochs": args.epochs}
    if args.data_path is not None:
        config["data_path"] = str(args.data_path.resolve())
    if args.select:
        config["valid_metric"] = "PUF_P_Cos@10"
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="recbole_puf_") as scratch:
        os.chdir(scratch)  # RecBole's log/, log_tensorboard/ and saved/ go here
        try:
            result = run_recbole(model=args.model, dataset=args.dataset, config_dict=config)
        finally:
            os.chdir(here)
    metric = config.get("valid_metric", "MRR@10")  # RecBole's default valid metric
    better = "higher" if result["valid_score_bigger"] else "lower"
    print(f"best epoch chosen by valid {metric} ({better} is better)")
    for phase in ("best_valid_result", "test_result"):
        print(phase, dict(result[phase]))


if __name__ == "__main__":
    main()
