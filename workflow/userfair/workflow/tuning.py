"""Model selection: the tuning table of one model's grid points and the winner.

Light (pandas only), so the ``select`` job loads neither torch nor RecBole.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from userfair.files.io import FileError, InputError, check_fields, read_json
from userfair.workflow import grids


def select_best(records: list[dict], *, label: str = "grid") -> tuple[pd.DataFrame, dict]:
    """The tuning table (one row per grid point, in grid order: params, valid metrics,
    best epoch, seconds) and the winner: best valid NDCG, ties to the first in grid order."""
    if not records:
        raise InputError(f"{label}: no grid point to select from")
    for i, record in enumerate(records):
        if "NDCG" not in record.get("valid", {}):
            raise InputError(f"{label}: grid point {i}: valid.json has no 'valid' -> 'NDCG'")
    rows = [
        {
            "point": i,
            "params": json.dumps(r["params"], sort_keys=True),
            **r["valid"],
            "best_epoch": r.get("best_epoch"),
            "seconds": r.get("seconds"),
        }
        for i, r in enumerate(records)
    ]
    table = pd.DataFrame(rows)
    winner = int(np.argmax(table["NDCG"].to_numpy()))  # argmax: first maximum
    return table, {**records[winner], "point": winner}


def read_best(path, model: str) -> dict:
    """The winner rule select wrote to ``path`` (``results/D/models/M/best.json``), checked
    before anything of it is used: ``params`` a mapping of ``model``'s grid keys to numbers
    (as a grid file must give them), ``point`` a grid point number, and ``checkpoint`` that
    point's ``model.pth`` in the same model folder (never a file elsewhere). Anything else is
    a one-line :class:`userfair.files.io.FileError` naming the file and the field."""
    best = check_fields(
        read_json(path), path, {"params": dict, "checkpoint": str, "point": int}, "best.json"
    )

    def refuse(problem: str):
        raise FileError(path, f"{path}: not a best.json file ({problem})")

    point = best["point"]
    if isinstance(point, bool) or point < 0:
        refuse(f"field 'point' is {point!r}, not a grid point number")
    expected = Path(path).parent / "grid" / str(point) / "model.pth"
    if Path(best["checkpoint"]).resolve() != expected.resolve():
        refuse(f"field 'checkpoint' is {best['checkpoint']!r}, not {expected}")
    try:
        grids.validate_grid({model: {k: [v] for k, v in best["params"].items()}}, [model])
    except InputError as error:
        refuse(f"field 'params': {str(error).split(': ', 1)[1]}")
    return best
