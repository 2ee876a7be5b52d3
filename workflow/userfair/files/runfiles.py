"""Top-k lists as other tools write them: one reader, three formats.

- ``native``: columns ``user_id``, ``item_id``, ``rank`` (1-based), as ``.parquet`` or
  tab-separated text with a header (what the workflow's ``topk.parquet`` holds; RecBole-style
  ``name:type`` headers are accepted).
- ``trec``: a TREC run, whitespace-separated, no header: ``qid Q0 docid rank score tag``
  (what trec_eval and ranx read). As trec_eval and ranx do, the lists are ordered by
  ``score``, highest first; the ``rank`` column is not used. Ties are broken by item id.
- ``scores``: a user/item/score table without ranks (what Elliot, LensKit and RecPack
  export): ``.parquet``, or text with a header naming a user column (``user_id``, ``user``,
  ``uid``), an item column (``item_id``, ``item``, ``iid``) and a score column (``score``,
  ``prediction``, ``rating``), or headerless ``user item score`` lines. Ranked by score,
  highest first; ties broken by item id (string order).

``format="auto"`` detects the format from the file: ``Q0`` in the second field of the first
line is a TREC run; a ``rank`` column is native; a score column (or three headerless
fields) is a score table. Every result is a frame with ``user_id``, ``item_id`` (str) and
``rank`` (int, 1-based).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from userfair.files.io import InputError, read_parquet

FORMATS = ("auto", "native", "trec", "scores")
USER_COLUMNS = ("user_id", "user", "uid")
ITEM_COLUMNS = ("item_id", "item", "iid")
SCORE_COLUMNS = ("score", "prediction", "rating")


def read_run(source, format: str = "auto") -> tuple[pd.DataFrame, str]:
    """(frame with user_id, item_id, rank; a label for errors) of a path or DataFrame."""
    if format not in FORMATS:
        raise ValueError(f"unknown run format {format!r}; expected one of {FORMATS}")
    if isinstance(source, pd.DataFrame):
        frame, label = source.copy(), "TOPK (DataFrame)"
    else:
        path = Path(source)
        label = str(path)
        if not path.is_file():
            raise InputError(f"{label}: file not found")
        if format == "trec" or (format == "auto" and _looks_like_trec(path)):
            return _trec(path, label), label
        frame = _read_table(path, label)
    frame.columns = [str(c).split(":")[0] for c in frame.columns]
    if format == "auto":
        if "rank" not in frame.columns and not set(SCORE_COLUMNS) & set(frame.columns):
            raise InputError(
                f"{label}: missing column 'rank' (lists need user_id, item_id, rank; a score "
                f"table needs one of {list(SCORE_COLUMNS)}; found {list(frame.columns)})"
            )
        format = "native" if "rank" in frame.columns else "scores"
    if format == "native":
        return _native(frame, label), label
    return _ranked_by_score(_score_columns(frame, label), label), label


def _looks_like_trec(path: Path) -> bool:
    if path.suffix == ".parquet":
        return False
    with path.open() as handle:
        fields = handle.readline().split()
    return len(fields) == 6 and fields[1] == "Q0"


def _read_table(path: Path, label: str) -> pd.DataFrame:
    """A .parquet file, or text (tab-, comma- or space-separated) with or without header."""
    if path.suffix == ".parquet":
        return read_parquet(path)
    with path.open() as handle:
        first = handle.readline()
    separator = "\t" if "\t" in first else "," if "," in first else r"\s+"
    fields = first.split() if separator == r"\s+" else first.rstrip("\r\n").split(separator)
    names = [field.strip().split(":")[0] for field in fields]
    known = set(USER_COLUMNS + ITEM_COLUMNS + SCORE_COLUMNS + ("rank",))
    has_header = bool(known & set(names))
    if not has_header and len(names) != 3:
        raise InputError(
            f"{label}: no header naming user/item columns and {len(names)} fields per line; "
            "expected a header (user_id, item_id, rank or score), 'user item score' lines, "
            "or a TREC run 'qid Q0 docid rank score tag'"
        )
    return pd.read_csv(
        path,
        sep=separator,
        header=0 if has_header else None,
        names=None if has_header else ["user_id", "item_id", "score"],
        dtype=str,
        keep_default_na=False,
        engine="python" if separator == r"\s+" else "c",
    )


def _native(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    for column in ("user_id", "item_id", "rank"):
        if column not in frame.columns:
            raise InputError(
                f"{label}: missing column '{column}' (expected user_id, item_id, rank)"
            )
    ranks = pd.to_numeric(frame["rank"], errors="coerce")
    bad = ranks.isna() | (ranks != np.floor(ranks)) | (ranks < 1)
    if bad.any():
        raise InputError(
            f"{label}: field 'rank' must be an integer >= 1, got {frame['rank'][bad].iloc[0]!r}"
        )
    return pd.DataFrame(
        {
            "user_id": frame["user_id"].astype(str).to_numpy(),
            "item_id": frame["item_id"].astype(str).to_numpy(),
            "rank": ranks.astype(np.int64).to_numpy(),
        }
    )


def _trec(path: Path, label: str) -> pd.DataFrame:
    frame = pd.read_csv(
        path, sep=r"\s+", header=None, dtype=str, keep_default_na=False, engine="python"
    )
    if frame.shape[1] != 6:
        raise InputError(
            f"{label}: a TREC run has 6 fields per line (qid Q0 docid rank score tag), "
            f"found {frame.shape[1]}"
        )
    frame.columns = ["user_id", "Q0", "item_id", "rank", "score", "tag"]
    return _ranked_by_score(frame, label, score_field="score (the 5th field)")


def _score_columns(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """user_id, item_id, score columns of a score table, whichever names it uses."""
    chosen = {}
    for target, candidates in (
        ("user_id", USER_COLUMNS),
        ("item_id", ITEM_COLUMNS),
        ("score", SCORE_COLUMNS),
    ):
        column = next((c for c in candidates if c in frame.columns), None)
        if column is None:
            raise InputError(
                f"{label}: missing column '{target}' (a score table needs one of "
                f"{list(candidates)}; found {list(frame.columns)})"
            )
        chosen[target] = frame[column]
    return pd.DataFrame(chosen)


def _ranked_by_score(frame: pd.DataFrame, label: str, score_field: str = "score") -> pd.DataFrame:
    """Each user's rows ordered by score (highest first), ties by item id; ranks 1, 2, ..."""
    scores = pd.to_numeric(frame["score"], errors="coerce")
    if scores.isna().any():
        bad = frame["score"][scores.isna()].iloc[0]
        raise InputError(f"{label}: field '{score_field}' must be numeric, got {bad!r}")
    ranked = pd.DataFrame(
        {
            "user_id": frame["user_id"].astype(str).to_numpy(),
            "item_id": frame["item_id"].astype(str).to_numpy(),
            "score": scores.to_numpy(dtype=np.float64),
        }
    )
    ranked = ranked.sort_values(
        ["user_id", "score", "item_id"], ascending=[True, False, True], kind="stable"
    )
    ranked["rank"] = ranked.groupby("user_id", sort=False).cumcount() + 1
    return ranked[["user_id", "item_id", "rank"]].reset_index(drop=True)
