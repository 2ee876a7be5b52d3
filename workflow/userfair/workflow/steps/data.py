"""Steps of the data stage (workflow/rules/data.smk): download, preprocess, grades, split,
genres, stats, table_stats."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pandas as pd

from userfair.files.io import (
    InputError,
    read_inter,
    read_json,
    read_parquet,
    write_inter,
    write_json,
    write_parquet,
)
from userfair.workflow import catalogue, config_bounds, rawfiles, tables
from userfair.workflow import preprocess as data
from userfair.workflow.download import fetch
from userfair.workflow.latex import write_table as write_csv_and_tex
from userfair.workflow.steps import GRADE, Path

log = logging.getLogger(__name__)

TABLE1_CAPTION = (
    "Dataset statistics: counts and sparsity after the 5-core step; test users, split sizes "
    "and split counts after the split (protocol global: after dropping users with few train "
    "interactions; per-user: RecBole's ratio split of each user's interactions)."
)


def download(
    dataset: str, declaration: dict, out: Path, *, url: str, sha256: str,
    other_hosts=(), max_mb: float = 1000,
) -> None:  # fmt: skip
    """Rule download: put the raw file of one dataset at ``out`` (userfair.workflow.download.fetch),
    which must be the catalogue's place for it (userfair.workflow.catalogue.downloaded_archive);
    ``other_hosts``, ``max_mb``: config ``download`` (redirects allowed, size cap)."""
    entry = catalogue.resolve(dataset, declaration)
    if str(out) != catalogue.downloaded_archive(entry):
        raise InputError(
            f"{out}: the raw file of {entry.name} is {catalogue.downloaded_archive(entry)}"
        )
    fetch(
        entry, out, url=url, sha256=sha256, other_hosts=other_hosts,
        max_bytes=int(max_mb * 10**6),
    )  # fmt: skip


def preprocess(
    dataset: str, declaration: dict, source: Path, out: Path, *, min_rating, core, k=None
) -> None:
    """Rule preprocess: steps 1-3 of docs/method.md#data
    (userfair.workflow.preprocess.preprocess_file) on
    the raw interactions of one dataset, resolved by userfair.workflow.catalogue.resolve;
    binary: no grade is kept (rule grades keeps them beside it). ``k`` (config key k) is
    checked against the items kept, before any later job: no list is longer than them."""
    entry = catalogue.resolve(dataset, declaration)
    frame = data.preprocess_file(entry, source, min_rating=min_rating, core=core)
    items = frame["item_id"].nunique()
    config_bounds.check_items(k, items, f"{dataset} (after preprocessing {source})")
    write_parquet(data.as_written(frame), out, index=False)


def grades(
    dataset: str, declaration: dict, source: Path, out: Path, *, min_rating, core
) -> pd.DataFrame:
    """Rule grades (only with graded relevance, config measures.relevance): the grade of
    every interaction that rule preprocess keeps, as user_id, item_id, grade (float): the
    same steps 1-3 with ``grades=True`` (userfair.workflow.preprocess.preprocess_file: the
    rating, a count's quintile among its user's counts, else 1). It covers every kept
    interaction, so any split of them (also a replicate's) looks its grades up by
    (user_id, item_id) (userfair.workflow.steps.graded_splits); the split, and so the models,
    stay those of the binary run."""
    entry = catalogue.resolve(dataset, declaration)
    frame = data.as_written(
        data.preprocess_file(entry, source, min_rating=min_rating, core=core, grades=True)
    )
    table = pd.DataFrame(
        {
            "user_id": frame["user_id"],
            "item_id": frame["item_id"],
            GRADE: frame["rating"].to_numpy(dtype="float64"),
        }
    )
    write_parquet(table, out, index=False)
    log.info("%s: grades of %d interactions", out, len(table))
    return table


def split(
    preprocessed: Path, outs: Mapping[str, Path], *, temporal: bool, seed: int,
    valid_share: float, test_share: float, min_train: int, protocol: str, k=None,
) -> None:  # fmt: skip
    """Rule split: steps 4-5 of docs/method.md#data (userfair.workflow.preprocess.make_splits);
    writes the RecBole atomic files of train/valid/test (``outs`` by split name); ``k``
    (config key k) is checked against the split's items before anything is written."""
    splits = data.make_splits(
        read_parquet(preprocessed), temporal=temporal, seed=seed, valid_share=valid_share,
        test_share=test_share, min_train=min_train, label=preprocessed, protocol=protocol,
    )  # fmt: skip
    items = pd.concat([splits[name]["item_id"].astype(str) for name in data.SPLITS]).nunique()
    config_bounds.check_items(k, items, f"the split of {preprocessed}")
    for name in data.SPLITS:
        write_inter(data.as_written(splits[name]), outs[name])
        log.info("%s: %d interactions", outs[name], len(splits[name]))


def _read_splits(paths) -> dict[str, pd.DataFrame]:
    """The train/valid/test files (in that order) as frames, by split name."""
    return dict(zip(data.SPLITS, map(read_inter, paths)))


def genres(dataset: str, declaration: dict, source: Path, splits, out: Path) -> None:
    """Rule genres: the .item file (userfair.workflow.preprocess.write_item_genres) of the genres
    (userfair.workflow.rawfiles.read_item_genres) of the items in one dataset's split."""
    entry = catalogue.resolve(dataset, declaration)
    items = data.split_item_genres(rawfiles.read_item_genres(entry, source), _read_splits(splits))
    data.write_item_genres(items, out)
    log.info("%s: %d items", out, len(items))


def stats(preprocessed: Path, splits, out: Path, *, protocol: str) -> dict:
    """Rule stats: stats.json of one dataset (userfair.workflow.preprocess.dataset_stats, a Table 1
    row)."""
    result = data.dataset_stats(read_parquet(preprocessed), _read_splits(splits), protocol=protocol)
    write_json(result, out)
    log.info("%s: %s", out, result)
    return result


def table_stats(files: Mapping[str, Path], datasets: list[str], csv: Path, tex: Path):
    """Rule table_stats: Table 1 (userfair.workflow.tables.table1) as CSV and booktabs LaTeX, from
    the
    named inputs ``D/stats``, ``D/train``, ``D/valid``, ``D/test`` (rules/common/paths.smk,
    per_dataset)."""
    rows = {}
    for name in datasets:
        splits = {part: read_inter(files[f"{name}/{part}"]) for part in data.SPLITS}
        rows[name] = {**read_json(files[f"{name}/stats"]), **data.split_counts(splits)}
    table = tables.table1(rows)
    write_csv_and_tex(
        table, csv, tex, float_format="{:.2f}", caption=TABLE1_CAPTION, label="tab:stats"
    )
    log.info("Table 1:\n%s", table.to_string())
    return table
