"""Model selection: the tuning table of one model's grid points and the winner.

Light (pandas only), so the ``select`` job loads neither torch nor RecBole.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from userfair.io import InputError


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
