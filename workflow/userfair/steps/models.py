"""Steps of the models stage (workflow/rules/models.smk): select (tune and topk call
userfair.recommenders directly)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from userfair import tuning
from userfair.io import read_json, write_csv, write_json
from userfair.steps import Path

log = logging.getLogger(__name__)


def select(
    valid: Sequence[Path], checkpoints: Sequence[Path], tuning_out: Path, best_out: Path,
    *, model: str,
) -> dict:  # fmt: skip
    """Rule select: every grid point's valid metrics -> the tuning table (TSV); the best
    valid NDCG (userfair.tuning.select_best) -> best.json with its checkpoint's path."""
    records = [read_json(path) for path in valid]
    table, best = tuning.select_best(records, label=model)
    best["checkpoint"] = str(checkpoints[best["point"]])
    write_csv(table, tuning_out, sep="\t")
    write_json(best, best_out)
    log.info(
        "best point %d: %s (valid NDCG %.6f)", best["point"], best["params"], best["valid"]["NDCG"]
    )
    return best
