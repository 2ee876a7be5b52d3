"""Datasets declared in the config (custom_datasets): every format, column names, feedback
rules, genres, and every incomplete or contradicting declaration as a clear error."""

import pandas as pd
import pytest

from userfair.files.io import InputError
from userfair.workflow import catalogue, rawfiles
from userfair.workflow import preprocess as data

RATINGS = pd.DataFrame(
    {
        "userId": ["u1", "u1", "u2", "u2", "u3"],
        "movieId": ["m1", "m2", "m1", "m3", "m2"],
        "stars": [5.0, 2.0, 4.0, 3.5, 1.0],
        "when": [10, 11, 12, 13, 14],
        "kinds": ["Action|Sci Fi", "Drama", "Action|Sci Fi", "(no genres listed)", "Drama"],
    }
)


def declared(**spec):
    spec.setdefault("columns", {"user": "userId", "item": "movieId"})
    return catalogue.declare("mine", spec)


def test_csv_with_other_column_names_separator_and_rating_threshold(tmp_path):
    path = tmp_path / "ratings.txt"
    RATINGS.to_csv(path, sep=";", index=False)
    dataset = declared(
        path=str(path),
        format="csv",
        separator=";",
        min_rating=3.5,
        columns={
            "user": "userId",
            "item": "movieId",
            "rating": "stars",
            "timestamp": "when",
            "genres": "kinds",
        },
    )
    assert dataset.temporal and dataset.has_genres and dataset.min_rating == 3.5
    frame = rawfiles.read_interactions(dataset, path)
    assert list(frame.columns) == ["user_id", "item_id", "rating", "timestamp"]
    assert frame["user_id"].astype(str).tolist() == RATINGS["userId"].tolist()
    assert frame["rating"].tolist() == RATINGS["stars"].tolist()
    kept = data.preprocess(frame, min_rating=dataset.min_rating, core=1)
    assert kept["item_id"].astype(str).tolist() == ["m1", "m1", "m3"]  # ratings >= 3.5
    genres = rawfiles.read_item_genres(dataset, path)
    assert dict(zip(genres.item_id, genres.genre)) == {
        "m1": "Action Sci_Fi",
        "m2": "Drama",
        "m3": "",
    }


@pytest.mark.parametrize(
    "suffix, writer",
    [
        (".tsv", lambda f, p: f.to_csv(p, sep="\t", index=False)),
        (".parquet", lambda f, p: f.to_parquet(p, index=False)),
    ],
)
def test_format_from_the_file_name_and_unary_feedback(tmp_path, suffix, writer):
    path = tmp_path / f"ratings{suffix}"
    writer(RATINGS, path)
    dataset = declared(path=str(path))
    assert dataset.format == suffix[1:] and not dataset.temporal
    frame = rawfiles.read_interactions(dataset, path)
    assert list(frame.columns) == ["user_id", "item_id"] and len(frame) == 5  # every row


def test_feedback_column_equals(tmp_path):
    path = tmp_path / "clicks.csv"
    RATINGS.assign(share=[1, 0, 1, 1, 0]).to_csv(path, index=False)
    dataset = declared(path=str(path), feedback={"column": "share", "equals": 1})
    frame = rawfiles.read_interactions(dataset, path)
    assert frame["item_id"].astype(str).tolist() == ["m1", "m1", "m3"]
    text = declared(path=str(path), feedback={"column": "kinds", "equals": "Drama"})
    assert rawfiles.read_interactions(text, path)["item_id"].astype(str).tolist() == ["m2", "m2"]


def test_recbole_atomic_file(tmp_path):
    path = tmp_path / "mine.inter"
    path.write_text("uid:token\tiid:token\tts:float\na\tx\t1\nb\ty\t2\n")
    dataset = declared(path=str(path), columns={"user": "uid", "item": "iid", "timestamp": "ts"})
    frame = rawfiles.read_interactions(dataset, path)
    assert frame["item_id"].astype(str).tolist() == ["x", "y"]
    assert frame["timestamp"].tolist() == [1.0, 2.0]


def test_registry_paths_of_declared_datasets():
    local = declared(path="/data/r.csv")
    assert catalogue.raw_source(local) == "/data/r.csv" and not catalogue.needs_download(local)
    remote = declared(url="https://example.org/r.csv?dl=1", sha256="ab" * 32)
    assert catalogue.needs_download(remote)
    assert catalogue.raw_source(remote) == "resources/raw/mine/mine.csv"
    assert catalogue.download_url(remote) == "https://example.org/r.csv?dl=1"
    custom = {"mine": {"path": "/data/r.csv", "columns": {"user": "u", "item": "i"}}}
    assert catalogue.resolve("mine", custom).source == "custom"
    assert catalogue.resolve("ml-100k", custom).source == "recbole-embedded"
    assert catalogue.names(custom)[-1] == "mine"


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            {"path": "x.csv", "columns": {"item": "i"}},
            r"custom_datasets\.mine\.columns\.user: required",
        ),
        ({"columns": {"user": "u", "item": "i"}}, r"exactly one of 'path'.*'url'"),
        (
            {"path": "x.csv", "url": "http://h/x.csv", "columns": {"user": "u", "item": "i"}},
            r"exactly one of 'path'",
        ),
        (
            {"path": "x.csv", "format": "xlsx", "columns": {"user": "u", "item": "i"}},
            r"mine\.format: 'xlsx' is not one of recbole, csv, tsv, parquet",
        ),
        ({"path": "x.data", "columns": {"user": "u", "item": "i"}}, r"cannot tell the format"),
        (
            {"path": "x.csv", "min_rating": 4, "columns": {"user": "u", "item": "i"}},
            r"columns\.rating: required by min_rating",
        ),
        (
            {"path": "x.csv", "columns": {"user": "u", "item": "i", "rating": "r"}},
            r"mine\.min_rating: columns\.rating is named but min_rating is not set",
        ),
        (
            {
                "path": "x.csv",
                "min_rating": 4,
                "feedback": {"column": "c", "equals": 1},
                "columns": {"user": "u", "item": "i", "rating": "r"},
            },
            r"exclude each other",
        ),
        (
            {"path": "x.csv", "feedback": {"column": "c"}, "columns": {"user": "u", "item": "i"}},
            r"mine\.feedback: expected \{column: NAME, equals: VALUE\}",
        ),
        (
            {"path": "x.parquet", "separator": ",", "columns": {"user": "u", "item": "i"}},
            r"mine\.separator: only text formats",
        ),
        (
            {"path": "x.csv", "colums": {}, "columns": {"user": "u", "item": "i"}},
            r"unknown key\(s\) \['colums'\]",
        ),
        (
            {"path": "x.csv", "columns": {"user": "u", "item": "i", "genre": "g"}},
            r"mine\.columns: unknown key\(s\) \['genre'\]",
        ),
    ],
)
def test_incomplete_or_contradicting_declarations(spec, message):
    with pytest.raises(InputError, match=message) as error:
        catalogue.declare("mine", spec)
    assert str(error.value).startswith("config custom_datasets.mine")  # names dataset and key


def test_a_built_in_name_cannot_be_declared():
    with pytest.raises(InputError, match="'lastfm' is a built-in dataset"):
        catalogue.declare("lastfm", {"path": "x.csv", "columns": {"user": "u", "item": "i"}})


def test_declarations_that_contradict_the_file(tmp_path):
    path = tmp_path / "r.csv"
    RATINGS.to_csv(path, index=False)
    missing = declared(path=str(path), columns={"user": "user", "item": "movieId"})
    with pytest.raises(
        InputError,
        match=r"r\.csv: missing column 'user'.*"
        r"custom_datasets\.mine\.columns\.user",
    ):
        rawfiles.read_interactions(missing, path)
    wrong_separator = declared(path=str(path), separator=";")
    with pytest.raises(
        InputError,
        match=r"columns\.user\).*one field when split on ';'.*"
        r"custom_datasets\.mine\.separator",
    ):
        rawfiles.read_interactions(wrong_separator, path)
    text_rating = declared(
        path=str(path),
        min_rating=3,
        columns={"user": "userId", "item": "movieId", "rating": "kinds"},
    )
    with pytest.raises(InputError, match=r"r\.csv: column 'kinds' must be numeric; data row 1"):
        rawfiles.read_interactions(text_rating, path)
    with pytest.raises(InputError, match=r"nope\.csv: not found .*custom_datasets\.mine\.path"):
        rawfiles.read_interactions(declared(path=str(tmp_path / "nope.csv")), tmp_path / "nope.csv")
