"""Step of the models stage's rule select (workflow/rules/models.smk): the grid points'
records -> the tuning table and the winner. Apart from :mod:`userfair.workflow.steps.models`
because it needs no torch or RecBole, whose import would be most of its job's cost."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from userfair.files.io import check_fields, read_json, write_csv, write_json
from userfair.workflow import tuning
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)


def select(
    valid: Sequence[Path], checkpoints: Sequence[Path], tuning_out: Path, best_out: Path,
    *, model: str,
) -> dict:  # fmt: skip
    """Rule select: every grid point's valid metrics -> the tuning table (TSV); the best
    valid NDCG (userfair.workflow.tuning.select_best) -> best.json with its checkpoint's
    path."""
    records = [
        check_fields(read_json(path), path, {"params": dict, "valid": dict}, "valid.json")
        for path in valid
    ]
    table, best = tuning.select_best(records, label=model)
    best["checkpoint"] = str(checkpoints[best["point"]])
    write_csv(table, tuning_out, sep="\t")
    write_json(best, best_out)
    log.info(
        "best point %d: %s (valid NDCG %.6f)", best["point"], best["params"], best["valid"]["NDCG"]
    )
    return best
