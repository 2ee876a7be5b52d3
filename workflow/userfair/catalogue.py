"""The datasets the workflow knows: where their raw files come from and how to read them.

Every place that needs to know something about a dataset asks :func:`get`, which raises a
clear error for a name that is not in the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .io import InputError

RAW_DIR = "resources/raw"

# Tenrec is licensed by its authors; the workflow never downloads it.
TENREC_HELP = (
    "QK-video.csv is part of Tenrec (Yuan et al., NeurIPS 2022; "
    "https://github.com/yuangh-x/2022-NIPS-Tenrec), which its authors distribute under a "
    "CC BY-NC 4.0 licence; the workflow never downloads it. Obtain it as that page says, then "
    "put QK-video.csv at {path} or set "
    "'dataset_options: {{qk-video: {{path: /your/QK-video.csv}}}}' in the config."
)


@dataclass(frozen=True)
class Dataset:
    """How one dataset is obtained and read.

    ``source`` is ``recbole-embedded`` (the ml-100k inside the recbole wheel),
    ``recbole-archive`` (a RecBole atomic-file zip, downloaded from ``url``) or ``tenrec``
    (a CSV the user places at ``default_path``). Column names are those of the raw file;
    ``item_columns`` and ``genre_columns`` list accepted names, the first present is used.
    """

    name: str
    source: str
    user_column: str = "user_id"
    item_columns: tuple[str, ...] = ("item_id",)
    rating_column: str | None = None
    timestamp_column: str | None = None
    genre_columns: tuple[str, ...] = ()
    feedback_column: str | None = None
    url: str = ""
    default_path: str = ""
    mem_mb: int = 2000  # memory of the preprocess/split jobs (SLURM)

    @property
    def temporal(self) -> bool:
        """Split by time (the dataset has timestamps) rather than by a seeded shuffle."""
        return self.timestamp_column is not None

    @property
    def has_genres(self) -> bool:
        return bool(self.genre_columns)


# Addresses equal to recbole/properties/dataset/url.yaml of recbole 1.2.1 (a test checks it).
RECBOLE_URL = "https://recbole.s3-accelerate.amazonaws.com/ProcessedDatasets"

CATALOGUE: dict[str, Dataset] = {
    "ml-100k": Dataset(
        "ml-100k",
        "recbole-embedded",
        rating_column="rating",
        timestamp_column="timestamp",
        genre_columns=("class",),
    ),
    "lastfm": Dataset(
        "lastfm",
        "recbole-archive",
        item_columns=("artist_id", "item_id"),
        url=f"{RECBOLE_URL}/LastFM/lastfm.zip",
    ),
    "ml-10m": Dataset(
        "ml-10m",
        "recbole-archive",
        rating_column="rating",
        timestamp_column="timestamp",
        genre_columns=("genre", "class", "type", "genres"),
        url=f"{RECBOLE_URL}/MovieLens/ml-10m.zip",
        mem_mb=12000,
    ),
    "ml-20m": Dataset(
        "ml-20m",
        "recbole-archive",
        rating_column="rating",
        timestamp_column="timestamp",
        genre_columns=("genre", "class", "type", "genres"),
        url=f"{RECBOLE_URL}/MovieLens/ml-20m.zip",
        mem_mb=24000,
    ),
    "qk-video": Dataset(
        "qk-video",
        "tenrec",
        feedback_column="share",
        default_path=f"{RAW_DIR}/qk-video/QK-video.csv",
        mem_mb=32000,
    ),
}


def get(name: str) -> Dataset:
    """The catalogue entry of ``name``; a clear error for an unknown name."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise InputError(
            f"dataset '{name}' is not in the catalogue; known datasets: {', '.join(CATALOGUE)}"
        ) from None


def options_of(name: str, dataset_options: dict | None) -> dict:
    """The config's ``dataset_options`` of ``name`` with every key present (empty = unset)."""
    given = (dataset_options or {}).get(name) or {}
    return {
        "url": given.get("url", ""),
        "sha256": given.get("sha256", ""),
        "path": given.get("path", ""),
    }


def download_url(name: str, dataset_options: dict | None = None) -> str:
    """The configured address of ``name``'s archive, else the catalogue's."""
    return options_of(name, dataset_options)["url"] or get(name).url


def downloaded_archive(name: str) -> str:
    """Where the ``download`` rule puts ``name``'s archive."""
    return f"{RAW_DIR}/{name}/{name}.zip"


def raw_source(name: str, dataset_options: dict | None = None) -> str:
    """The raw file, folder or archive that preprocessing reads for ``name``.

    A configured ``path`` wins; qk-video defaults to its placed CSV; the others to the
    archive the ``download`` rule writes.
    """
    dataset = get(name)
    path = options_of(name, dataset_options)["path"]
    if path:
        return path
    if dataset.source == "tenrec":
        return dataset.default_path
    return downloaded_archive(name)


def needs_download(name: str, dataset_options: dict | None = None) -> bool:
    """True when the workflow fetches ``name`` itself (no ``path`` and not Tenrec)."""
    return get(name).source != "tenrec" and not options_of(name, dataset_options)["path"]


def tracked_raw_input(name: str, dataset_options: dict | None = None) -> list[str]:
    """The raw source as a rule input: when a rule makes it or it exists. Otherwise none, so
    the DAG still resolves and the job fails with a message saying where the file comes from."""
    source = raw_source(name, dataset_options)
    if needs_download(name, dataset_options) or Path(source).exists():
        return [source]
    return []


def tenrec_help(path: str | Path) -> str:
    return TENREC_HELP.format(path=path)
