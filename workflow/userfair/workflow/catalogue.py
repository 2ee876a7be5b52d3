"""The datasets the workflow knows: where their raw files come from and how to read them.

Every place that needs to know something about a dataset asks :func:`get`, which raises a
clear error for a name that is not in the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from userfair.files.io import InputError

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
class Shape:
    """A dataset's size after preprocessing, known before its files exist (the cost model,
    :mod:`userfair.workflow.costs`, turns it into cluster requests). ``interactions`` is Table 1's
    count over all splits; ``test_users`` the users with a test interaction;
    ``max_history`` the heaviest user's interactions (an upper bound of its train
    history)."""

    users: int
    items: int
    interactions: int
    test_users: int
    max_history: int


@dataclass(frozen=True)
class Dataset:
    """How one dataset is obtained and read.

    ``source`` is ``recbole-embedded`` (the ml-100k inside the recbole wheel),
    ``recbole-archive`` (a RecBole atomic-file zip, downloaded from ``url``), ``tenrec``
    (a CSV the user places at ``default_path``) or ``custom`` (declared in the config's
    ``custom_datasets``, see :func:`declare`). Column names are those of the raw file;
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
    # How the raw file is read: RecBole atomic files, or a csv/tsv/parquet table.
    format: str = "recbole"
    separator: str | None = None  # text tables; None: the format's own (',' or tab)
    feedback_equals: str | float = "1"  # a row is an interaction when feedback_column equals it
    min_rating: float | None = None  # None: the config's preprocessing.min_rating
    genre_separator: str = " "  # between the genres of one item in the genre column
    # A count per interaction (Last.fm's play counts) graded 1..5 within each user
    # (userfair.workflow.preprocess.count_grades); read only for graded relevance.
    count_column: str | None = None
    shape: Shape | None = None  # the size after preprocessing, where it is known (Table 1)
    # The items of the catalogue's own raw file, an upper bound of the items after any
    # preprocessing: config key k is checked against it before the split exists.
    raw_items: int | None = None

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
        # measured on the default config (docs/data.md); the heaviest user rated 737 movies
        shape=Shape(943, 1203, 81697, 83, 737),
        # counted: the distinct items of recbole's ml-100k.inter (a test counts them again)
        raw_items=1682,
    ),
    "lastfm": Dataset(
        "lastfm",
        "recbole-archive",
        item_columns=("artist_id", "item_id"),
        count_column="weight",  # the user's play count of the artist
        url=f"{RECBOLE_URL}/LastFM/lastfm.zip",
        # Table 1 of the paper; hetrec-2011 keeps each user's 50 most played artists
        shape=Shape(1859, 2823, 71355, 1836, 50),
        # published, not counted here: the 17,632 artists of hetrec2011-lastfm-2k's readme
        raw_items=17632,
    ),
    "ml-10m": Dataset(
        "ml-10m",
        "recbole-archive",
        rating_column="rating",
        timestamp_column="timestamp",
        genre_columns=("genre", "class", "type", "genres"),
        url=f"{RECBOLE_URL}/MovieLens/ml-10m.zip",
        mem_mb=12000,
        # Table 1; the heaviest ML-10M user has 7,359 ratings
        shape=Shape(49378, 9821, 5362685, 1523, 7359),
        # published, not counted here: the 10,681 movies of GroupLens' ML-10M README
        raw_items=10681,
    ),
    "ml-20m": Dataset(
        "ml-20m",
        "recbole-archive",
        rating_column="rating",
        timestamp_column="timestamp",
        genre_columns=("genre", "class", "type", "genres"),
        url=f"{RECBOLE_URL}/MovieLens/ml-20m.zip",
        mem_mb=24000,
        # Table 1; the heaviest ML-20M user has 9,254 ratings
        shape=Shape(89917, 16404, 10588141, 2178, 9254),
        # published, not counted here: the 27,278 movies of GroupLens' ML-20M README
        raw_items=27278,
    ),
    "qk-video": Dataset(
        "qk-video",
        "tenrec",
        feedback_column="share",
        format="csv",
        feedback_equals=1,
        default_path=f"{RAW_DIR}/qk-video/QK-video.csv",
        mem_mb=32000,
        # Table 1; the heaviest user is not published: bounded by the items
        shape=Shape(4656, 6423, 51777, 3514, 6423),
    ),
}

# A dataset whose size is unknown before it is split (a custom dataset without stats.json)
# is costed as the largest of the paper's (userfair.workflow.costs.dataset_size).
DEFAULT_SHAPE = CATALOGUE["ml-20m"].shape

FORMATS = ("recbole", "csv", "tsv", "parquet")
#: The one table of raw formats beside FORMATS: the suffix of the file the ``download`` rule
#: writes for each (a RecBole archive is a zip), and the template of that file, which the rule's
#: output (workflow/rules/data.smk) and :func:`downloaded_archive` both read.
RAW_SUFFIX = {"recbole": "zip", "csv": "csv", "tsv": "tsv", "parquet": "parquet"}
RAW_TEMPLATE = f"{RAW_DIR}/{{dataset}}/{{dataset}}.{{suffix}}"
#: The keys of one custom_datasets entry (config.schema.yaml describes each).
CUSTOM_KEYS = (
    "path",
    "url",
    "sha256",
    "format",
    "separator",
    "columns",
    "genre_separator",
    "min_rating",
    "feedback",
    "mem_mb",
)
COLUMN_KEYS = ("user", "item", "rating", "timestamp", "genres")


def declare(name: str, spec: dict) -> Dataset:
    """The :class:`Dataset` of one ``custom_datasets`` entry; an InputError naming the
    dataset and the key when the declaration is incomplete or contradicts itself."""
    where = f"config custom_datasets.{name}"
    if name in CATALOGUE:
        raise InputError(f"{where}: '{name}' is a built-in dataset; choose another name")
    spec = dict(spec or {})
    unknown = sorted(set(spec) - set(CUSTOM_KEYS))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown} (allowed: {', '.join(CUSTOM_KEYS)})")
    if bool(spec.get("path")) == bool(spec.get("url")):
        raise InputError(
            f"{where}: give exactly one of 'path' (a local file or folder) and "
            "'url' (a download address)"
        )
    format = spec.get("format") or _format_of(spec.get("path") or spec.get("url"), where)
    if format not in FORMATS:
        raise InputError(f"{where}.format: {format!r} is not one of {', '.join(FORMATS)}")
    columns = dict(spec.get("columns") or {})
    unknown = sorted(set(columns) - set(COLUMN_KEYS))
    if unknown:
        raise InputError(
            f"{where}.columns: unknown key(s) {unknown} (allowed: {', '.join(COLUMN_KEYS)})"
        )
    for key in ("user", "item"):
        if not columns.get(key):
            raise InputError(
                f"{where}.columns.{key}: required (the name of the file's {key} column)"
            )
    feedback = spec.get("feedback")
    min_rating = spec.get("min_rating")
    if feedback is not None and min_rating is not None:
        raise InputError(
            f"{where}: 'min_rating' and 'feedback' exclude each other (an "
            "interaction is either a rating >= min_rating or a feedback value)"
        )
    if min_rating is not None and not columns.get("rating"):
        raise InputError(
            f"{where}.columns.rating: required by min_rating (the ratings that "
            ">= min_rating become interactions)"
        )
    if columns.get("rating") and min_rating is None:
        raise InputError(
            f"{where}.min_rating: columns.rating is named but min_rating is not "
            "set; set min_rating (ratings >= it become interactions) or drop "
            "columns.rating (every row is an interaction)"
        )
    if feedback is not None and (
        not isinstance(feedback, dict) or set(feedback) != {"column", "equals"}
    ):
        raise InputError(
            f"{where}.feedback: expected {{column: NAME, equals: VALUE}}, got {feedback!r}"
        )
    separator = spec.get("separator")
    if separator is not None and format in ("recbole", "parquet"):
        raise InputError(f"{where}.separator: only text formats (csv, tsv) take a separator")
    return Dataset(
        name,
        "custom",
        user_column=columns["user"],
        item_columns=(columns["item"],),
        rating_column=columns.get("rating"),
        timestamp_column=columns.get("timestamp"),
        genre_columns=(columns["genres"],) if columns.get("genres") else (),
        feedback_column=feedback["column"] if feedback else None,
        feedback_equals=feedback["equals"] if feedback else "1",
        url=spec.get("url") or "",
        default_path=spec.get("path") or "",
        mem_mb=int(spec.get("mem_mb") or 4000),
        format=format,
        separator=separator,
        min_rating=None if min_rating is None else float(min_rating),
        genre_separator=spec.get("genre_separator") or ("|" if format != "recbole" else " "),
    )


def _format_of(location: str, where: str) -> str:
    """The format a file name implies: .csv, .tsv/.txt/.dat, .parquet, .inter/.zip/folder."""
    suffixes = {
        ".csv": "csv",
        ".tsv": "tsv",
        ".txt": "tsv",
        ".dat": "tsv",
        ".parquet": "parquet",
        ".inter": "recbole",
        ".zip": "recbole",
    }
    path = Path(location.split("?")[0])
    if path.suffix.lower() in suffixes:
        return suffixes[path.suffix.lower()]
    if not path.suffix and Path(location).is_dir():
        return "recbole"
    raise InputError(
        f"{where}.format: cannot tell the format of {location!r} from its name; "
        f"set format to one of {', '.join(FORMATS)}"
    )


def resolve(name: str, custom_datasets: dict | None = None) -> Dataset:
    """The dataset ``name``: a built-in one, or the declaration of ``custom_datasets``."""
    if custom_datasets and name in custom_datasets:
        return declare(name, custom_datasets[name])
    return get(name)


def names(custom_datasets: dict | None = None) -> list[str]:
    """Every dataset name a config may list: the built-ins, then the declared ones."""
    return list(CATALOGUE) + [n for n in (custom_datasets or {}) if n not in CATALOGUE]


def get(name: str) -> Dataset:
    """The catalogue entry of ``name``; a clear error for an unknown name."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise InputError(
            f"dataset '{name}' is not in the catalogue; known datasets: {', '.join(CATALOGUE)} "
            "(or declare it under custom_datasets, docs/your-data.md)"
        ) from None


def items_bound(dataset: str | Dataset, dataset_options: dict | None) -> int | None:
    """The most items the dataset can have after preprocessing, known before its files
    are read: the catalogue's raw item count when the run reads the catalogue's own file
    (no configured ``path``), else None."""
    dataset = _dataset(dataset)
    if options_of(dataset.name, dataset_options)["path"]:
        return None
    return dataset.raw_items


def options_of(name: str, dataset_options: dict | None) -> dict:
    """The config's ``dataset_options`` of ``name`` with every key present (empty = unset)."""
    given = (dataset_options or {}).get(name) or {}
    return {
        "url": given.get("url", ""),
        "sha256": given.get("sha256", ""),
        "path": given.get("path", ""),
    }


def _dataset(dataset: str | Dataset) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else get(dataset)


def download_url(dataset: str | Dataset, dataset_options: dict | None = None) -> str:
    """The configured address of the dataset's raw file, else the catalogue's."""
    dataset = _dataset(dataset)
    return options_of(dataset.name, dataset_options)["url"] or dataset.url


def downloaded_archive(dataset: str | Dataset) -> str:
    """Where the ``download`` rule puts the dataset's raw file: ``NAME.zip`` for RecBole
    archives, ``NAME.<format>`` for a declared table."""
    dataset = _dataset(dataset)
    return RAW_TEMPLATE.format(dataset=dataset.name, suffix=RAW_SUFFIX[dataset.format])


def raw_source(dataset: str | Dataset, dataset_options: dict | None = None) -> str:
    """The raw file, folder or archive that preprocessing reads for the dataset.

    A configured ``path`` wins (for a declared dataset: its ``path``); qk-video defaults to
    its placed CSV; the others to the file the ``download`` rule writes.
    """
    dataset = _dataset(dataset)
    path = options_of(dataset.name, dataset_options)["path"]
    if path:
        return path
    if dataset.source == "tenrec" or dataset.default_path:
        return dataset.default_path
    return downloaded_archive(dataset)


def needs_download(dataset: str | Dataset, dataset_options: dict | None = None) -> bool:
    """True when the workflow fetches the dataset itself (no ``path`` and not Tenrec)."""
    dataset = _dataset(dataset)
    return (
        dataset.source != "tenrec"
        and not dataset.default_path
        and not options_of(dataset.name, dataset_options)["path"]
    )


def tracked_raw_input(dataset: str | Dataset, dataset_options: dict | None = None) -> list[str]:
    """The raw source as a rule input: when a rule makes it or it exists. Otherwise none, so
    the DAG still resolves and the job fails with a message saying where the file comes from."""
    source = raw_source(dataset, dataset_options)
    if needs_download(dataset, dataset_options) or Path(source).exists():
        return [source]
    return []


def tenrec_help(path: str | Path) -> str:
    return TENREC_HELP.format(path=path)
