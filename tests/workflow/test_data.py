"""The data stage's library: catalogue, raw readers, every preprocessing and split step
on hand-made frames, statistics and Table 1."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from userfair.files.io import InputError
from userfair.workflow import catalogue, rawfiles, tables
from userfair.workflow import preprocess as data
from userfair.workflow.download import recbole_ml100k_dir


def frame(rows, columns=("user_id", "item_id", "rating", "timestamp")):
    return pd.DataFrame(rows, columns=list(columns))


def pairs(part: pd.DataFrame) -> list[tuple[str, str]]:
    return list(zip(part["user_id"].astype(str), part["item_id"].astype(str)))


# --- catalogue --------------------------------------------------------------------------------


def test_catalogue_rejects_unknown_dataset():
    with pytest.raises(InputError, match="'ml-1m' is not in the catalogue.*ml-100k"):
        catalogue.get("ml-1m")
    with pytest.raises(InputError, match="not in the catalogue"):
        rawfiles.read_interactions("netflix", ".")


def test_catalogue_urls_equal_recboles_own():
    urls = yaml.safe_load(
        (recbole_ml100k_dir().parents[1] / "properties" / "dataset" / "url.yaml").read_text()
    )
    for name, dataset in catalogue.CATALOGUE.items():
        if dataset.source == "recbole-archive":
            assert dataset.url == urls[name]


def test_raw_source_prefers_configured_path():
    assert catalogue.raw_source("lastfm", {}) == "resources/raw/lastfm/lastfm.zip"
    assert catalogue.raw_source("lastfm", {"lastfm": {"path": "/d/lastfm"}}) == "/d/lastfm"
    assert catalogue.raw_source("qk-video", None) == "resources/raw/qk-video/QK-video.csv"
    assert (
        catalogue.download_url("ml-20m", {"ml-20m": {"url": "http://x/y.zip"}}) == "http://x/y.zip"
    )
    assert catalogue.needs_download("ml-10m", {}) and not catalogue.needs_download("qk-video", {})
    assert not catalogue.needs_download("ml-10m", {"ml-10m": {"path": "/x.zip"}})
    assert catalogue.tracked_raw_input("qk-video", {"qk-video": {"path": "/no/such.csv"}}) == []


def test_catalogue_protocol_of_each_dataset():
    assert [n for n, d in catalogue.CATALOGUE.items() if d.temporal] == [
        "ml-100k",
        "ml-10m",
        "ml-20m",
    ]
    assert not catalogue.get("lastfm").has_genres and catalogue.get("ml-10m").has_genres


# --- step 1: duplicates ----------------------------------------------------------------------


def test_duplicates_keep_the_most_recent_and_file_order():
    raw = frame(
        [
            ("u1", "i1", 5, 30),
            ("u1", "i1", 1, 10),
            ("u2", "i1", 4, 5),
            ("u1", "i2", 2, 7),
            ("u1", "i2", 4, 7),
            ("u1", "i1", 3, 20),
        ]
    )
    out = data.drop_duplicates_keep_latest(raw)
    # (u1, i1): timestamp 30 wins although it comes first; (u1, i2): equal times -> the later row
    assert out.index.tolist() == [0, 2, 4]
    assert out["rating"].tolist() == [5, 4, 4]


def test_duplicates_without_timestamps_keep_the_last_row():
    raw = frame([("a", "x"), ("b", "x"), ("a", "x"), ("a", "y")], columns=("user_id", "item_id"))
    assert data.drop_duplicates_keep_latest(raw).index.tolist() == [1, 2, 3]


# --- step 2: ratings -------------------------------------------------------------------------


def test_rating_threshold_keeps_ratings_at_least_three():
    raw = frame([("u", "a", 2.5, 1), ("u", "b", 3.0, 2), ("u", "c", 4.5, 3), ("u", "d", 0.5, 4)])
    out = data.keep_ratings_at_least(raw, 3)
    assert out["item_id"].tolist() == ["b", "c"] and "rating" not in out


def test_threshold_applies_to_the_latest_duplicate():
    raw = frame([("u", "a", 5, 1), ("u", "a", 1, 2)])
    out = data.preprocess(raw, min_rating=3, core=1)
    assert out.empty


# --- step 3: k-core --------------------------------------------------------------------------


def test_k_core_needs_several_passes():
    # 2-core. Pass 1 drops item z (1 interaction); that leaves user c with 1 interaction,
    # dropped in pass 2; which leaves item y with 1 interaction, dropped in pass 3.
    rows = [("a", "w"), ("a", "x"), ("b", "w"), ("b", "x"), ("c", "y"), ("c", "z"), ("a", "y")]
    out = data.k_core(frame(rows, columns=("user_id", "item_id")), 2)
    assert sorted(pairs(out)) == [("a", "w"), ("a", "x"), ("b", "w"), ("b", "x")]


def test_k_core_result_is_a_fixed_point_on_real_data():
    raw = rawfiles.read_interactions("ml-100k", recbole_ml100k_dir())
    out = data.preprocess(raw, min_rating=3, core=20)
    assert out["user_id"].astype(str).value_counts().min() >= 20
    assert out["item_id"].astype(str).value_counts().min() >= 20
    assert out.index.is_monotonic_increasing  # file order kept


# --- step 4: split ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 4, 5, 9, 10, 11, 99, 12345])
def test_split_sizes_are_floor_of_shares(n):
    n_train, n_valid, n_test = data.split_sizes(n, 0.2, 0.2)
    assert n_valid == n_test == (2 * n) // 10 and n_train == n - 2 * ((2 * n) // 10)


def test_temporal_split_is_stable_on_ties():
    # ten rows, timestamps with ties; file order breaks them
    stamps = [5, 1, 3, 3, 1, 9, 3, 7, 7, 2]
    raw = frame(
        [(f"u{k}", f"i{k}", stamp) for k, stamp in enumerate(stamps)],
        columns=("user_id", "item_id", "timestamp"),
    )
    parts = data.split_globally(raw, temporal=True, seed=0, valid_share=0.2, test_share=0.2)
    order = [r for part in ("train", "valid", "test") for r in parts[part].index]
    assert order == [1, 4, 9, 2, 3, 6, 0, 7, 8, 5]
    assert [len(parts[p]) for p in ("train", "valid", "test")] == [6, 2, 2]


def test_random_split_is_reproducible_and_seeded():
    raw = frame([(f"u{k % 7}", f"i{k}") for k in range(50)], columns=("user_id", "item_id"))
    one = data.split_globally(raw, temporal=False, seed=3, valid_share=0.2, test_share=0.2)
    two = data.split_globally(raw, temporal=False, seed=3, valid_share=0.2, test_share=0.2)
    other = data.split_globally(raw, temporal=False, seed=4, valid_share=0.2, test_share=0.2)
    assert all(one[p].index.equals(two[p].index) for p in data.SPLITS)
    assert not one["test"].index.equals(other["test"].index)
    assert sorted(np.concatenate([one[p].index for p in data.SPLITS])) == list(range(50))
    assert [len(one[p]) for p in data.SPLITS] == [30, 10, 10]


# --- step 5: drop users with few train interactions -------------------------------------------


def test_users_with_few_train_interactions_leave_all_splits():
    splits = {
        "train": frame([("a", "1"), ("a", "2"), ("b", "1")], columns=("user_id", "item_id")),
        "valid": frame([("a", "3"), ("b", "2")], columns=("user_id", "item_id")),
        "test": frame([("b", "3"), ("c", "1"), ("a", "4")], columns=("user_id", "item_id")),
    }
    out = data.drop_users_with_few_train(splits, 2)
    assert pairs(out["train"]) == [("a", "1"), ("a", "2")]
    assert pairs(out["valid"]) == [("a", "3")] and pairs(out["test"]) == [("a", "4")]
    # items are not refiltered: item '1' stays although user b left
    assert "1" in set(out["train"]["item_id"])


def test_split_with_no_test_users_is_an_error():
    raw = frame([("a", f"i{k}", k) for k in range(10)], columns=("user_id", "item_id", "timestamp"))
    raw.loc[8:, "user_id"] = "late"  # only a user with no train interactions reaches test
    with pytest.raises(InputError, match="pre.parquet: no test users.*'user_id'"):
        data.make_splits(
            raw,
            temporal=True,
            seed=0,
            valid_share=0.2,
            test_share=0.2,
            min_train=5,
            label="pre.parquet",
        )


def test_as_written_keeps_integral_timestamps_as_integers():
    part = frame([("1", "2", 881250949.0)], columns=("user_id", "item_id", "timestamp"))
    out = data.as_written(part)
    assert out["timestamp"].dtype == np.int64 and out.columns.tolist() == [
        "user_id",
        "item_id",
        "timestamp",
    ]


# --- raw readers -----------------------------------------------------------------------------


def write_atomic(path: Path, header: str, rows: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_read_interactions_from_a_folder_and_a_zip(tmp_path):
    rows = ["1\t10\t4\t100", '2\t"quoted"\t2\t90']
    inter = write_atomic(
        tmp_path / "dir" / "ml-10m.inter",
        "user_id:token\titem_id:token\trating:float\ttimestamp:float",
        rows,
    )
    archive = tmp_path / "ml-10m.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(inter, arcname="ml-10m/ml-10m.inter")
    for source in (inter.parent, archive):
        out = rawfiles.read_interactions("ml-10m", source)
        assert out.columns.tolist() == ["user_id", "item_id", "rating", "timestamp"]
        assert out["item_id"].astype(str).tolist() == ["10", '"quoted"']
        assert out["timestamp"].tolist() == [100.0, 90.0]


def test_lastfm_reads_artist_id_as_item(tmp_path):
    write_atomic(
        tmp_path / "lastfm.inter",
        "user_id:token\tartist_id:token\tweight:float\ttag_value:token_seq",
        ["2\t51\t13883\trock pop", "2\t52\t11690\t"],
    )
    out = rawfiles.read_interactions("lastfm", tmp_path)
    assert out.columns.tolist() == ["user_id", "item_id"] and pairs(out) == [
        ("2", "51"),
        ("2", "52"),
    ]


@pytest.mark.parametrize(
    "header, field",
    [
        ("user_id:token\titem_id:token\ttimestamp:float", "rating"),
        ("user_id:token\titem_id:token\trating:float", "timestamp"),
        ("uid:token\titem_id:token\trating:float\ttimestamp:float", "user_id"),
        ("user_id:token\tmovie:token\trating:float\ttimestamp:float", "item_id"),
    ],
)
def test_missing_column_is_named_with_the_file(tmp_path, header, field):
    write_atomic(tmp_path / "ml-20m.inter", header, ["1\t2\t3"])
    with pytest.raises(InputError, match=rf"ml-20m.inter: missing column '{field}'"):
        rawfiles.read_interactions("ml-20m", tmp_path)


def test_non_numeric_rating_is_named(tmp_path):
    write_atomic(
        tmp_path / "ml-20m.inter",
        "user_id:token\titem_id:token\trating:float\ttimestamp:float",
        ["1\t2\t4\t5", "1\t3\tgood\t6"],
    )
    with pytest.raises(
        InputError, match=r"ml-20m.inter: column 'rating' must be numeric; data row 2"
    ):
        rawfiles.read_interactions("ml-20m", tmp_path)


def test_bad_sources_are_named(tmp_path):
    with pytest.raises(InputError, match="nowhere.zip: not found.*dataset_options.lastfm.path"):
        rawfiles.read_interactions("lastfm", tmp_path / "nowhere.zip")
    junk = tmp_path / "lastfm.zip"
    junk.write_bytes(b"this is not a zip archive")
    with pytest.raises(InputError, match="lastfm.zip: .*not a zip"):
        rawfiles.read_interactions("lastfm", junk)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="expected one 'lastfm.inter' file, found: none"):
        rawfiles.read_interactions("lastfm", empty)


def test_tenrec_keeps_shares(tmp_path):
    csv_path = tmp_path / "QK-video.csv"
    csv_path.write_text(
        "user_id,item_id,click,follow,like,share,video_category,watching_times,gender,age\n"
        "1,10,1,0,0,1,2,1,1,3\n1,11,1,0,0,0,2,1,1,3\n2,10,1,0,1,1,2,1,2,4\n"
    )
    out = rawfiles.read_interactions("qk-video", csv_path)
    assert pairs(out) == [("1", "10"), ("2", "10")] and out.columns.tolist() == [
        "user_id",
        "item_id",
    ]
    csv_path.write_text("user_id,item_id,click\n1,10,1\n")
    with pytest.raises(InputError, match="QK-video.csv: missing column 'share'"):
        rawfiles.read_interactions("qk-video", csv_path)


def test_missing_tenrec_file_says_where_to_get_it(tmp_path):
    with pytest.raises(
        InputError, match="(?s)QK-video.csv: not found.*Tenrec.*licence.*dataset_options"
    ):
        rawfiles.read_interactions("qk-video", tmp_path / "QK-video.csv")


def test_genres_of_the_split_items(tmp_path):
    write_atomic(
        tmp_path / "ml-20m.item",
        "item_id:token\tmovie_title:token_seq\tgenre:token_seq",
        ["1\tA\tAction Drama", "2\tB\t(no genres listed)", "3\tC\tComedy"],
    )
    genres = rawfiles.read_item_genres("ml-20m", tmp_path)
    splits = {
        "train": frame([("u", "2"), ("u", "1")], columns=("user_id", "item_id")),
        "valid": frame([("u", "9")], columns=("user_id", "item_id")),
        "test": frame([], columns=("user_id", "item_id")),
    }
    out = data.split_item_genres(genres, splits)
    assert out.values.tolist() == [["1", "Action Drama"], ["2", ""], ["9", ""]]
    data.write_item_genres(out, tmp_path / "out.item")
    assert (tmp_path / "out.item").read_text().splitlines() == [
        "item_id:token\tgenre:token_seq",
        "1\tAction Drama",
        "2\t",
        "9\t",
    ]
    with pytest.raises(InputError, match="has no item genres"):
        rawfiles.read_item_genres("lastfm", tmp_path)


# --- statistics ------------------------------------------------------------------------------


def test_stats_and_table1():
    pre = frame([("a", "x"), ("a", "y"), ("b", "x"), ("c", "z")], columns=("user_id", "item_id"))
    splits = {"train": pre.iloc[:2], "valid": pre.iloc[2:3], "test": pre.iloc[3:]}
    stats = data.dataset_stats(pre, splits)
    assert tuple(stats) == data.STATS_KEYS
    assert stats == {
        "users": 3,
        "items": 3,
        "interactions": 4,
        "sparsity": pytest.approx(100 * (1 - 4 / 9)),
        "test_users": 1,
        "train": 2,
        "valid": 1,
        "test": 1,
        "protocol": "global",
        "item_visits": 0,  # the one test user, c, has no train item: no pair meets
    }
    table = tables.table1({"toy": {**stats, **data.split_counts(splits)}})
    assert table.loc["toy", "users in split"] == 3 and table.loc[
        "toy", "sparsity (%)"
    ] == pytest.approx(55.5556, abs=1e-4)
    assert table.loc["toy", "split protocol"] == "global"
    per_user = data.dataset_stats(pre, splits, protocol="per-user")
    assert per_user["protocol"] == "per-user"
    with pytest.raises(InputError, match="missing field"):
        tables.table1({"toy": stats})


def test_item_visits_count_the_evaluated_user_pairs_each_item_joins():
    """x has three evaluated train users (3 pairs), y two (1 pair), z one (none): 4; a
    repeated interaction does not count twice, a user who is not evaluated (d) not at
    all."""
    train = frame(
        [("a", "x"), ("b", "x"), ("c", "x"), ("d", "x"), ("a", "y"), ("b", "y"), ("b", "y"),
         ("c", "z"), ("d", "z")],
        columns=("user_id", "item_id"),
    )  # fmt: skip
    evaluated = ["a", "b", "c"]
    assert data.item_visits(train, evaluated) == 4
    assert data.item_visits(train, evaluated + ["d"]) == 6 + 1 + 1
    kept = train[train.user_id.isin(evaluated)]
    loop = sum(
        len(users) * (len(users) - 1) // 2
        for users in (set(kept.user_id[kept.item_id == i]) for i in set(kept.item_id))
    )
    assert loop == 4


def test_ml100k_protocol_numbers():
    """The whole protocol on the embedded ml-100k; numbers recorded in docs/data.md."""
    raw = rawfiles.read_interactions("ml-100k", recbole_ml100k_dir())
    pre = data.preprocess(raw, min_rating=3, core=5)
    splits = data.make_splits(
        pre, temporal=True, seed=2024, valid_share=0.2, test_share=0.2, min_train=5
    )
    stats = data.dataset_stats(pre, splits)
    assert (stats["users"], stats["items"], stats["interactions"]) == (943, 1203, 81697)
    assert stats["test_users"] == 83 and (stats["train"], stats["valid"], stats["test"]) == (
        49015,
        3107,
        1519,
    )
    train_times = splits["train"]["timestamp"].max()
    assert train_times <= splits["valid"]["timestamp"].min() <= splits["test"]["timestamp"].min()


# --- the per-user split protocol --------------------------------------------------------------


def test_ratio_split_counts_match_recbole_for_every_size():
    from recbole.data.dataset import Dataset

    from userfair import recbole_patches  # noqa: F401  (RecBole on current numpy)

    sizes = np.arange(1, 60)
    for ratios in ((0.6, 0.2, 0.2), (0.8, 0.1, 0.1)):
        counts = data.ratio_split_counts(sizes, ratios)
        for total, row in zip(sizes, counts):
            # RecBole's own split points (the method does not use its instance)
            expected = Dataset._calcu_split_ids(None, int(total), list(ratios))
            assert list(np.cumsum(row)[:-1]) == expected, (total, ratios)
    # hand-worked: 5 -> 3/1/1, 7 -> 5/1/1, 10 -> 6/2/2, 2 -> 1/0/1, 1 -> 1/0/0
    by_size = dict(zip(sizes.tolist(), data.ratio_split_counts(sizes, (0.6, 0.2, 0.2)).tolist()))
    assert by_size[5] == [3, 1, 1] and by_size[7] == [5, 1, 1] and by_size[10] == [6, 2, 2]
    assert by_size[2] == [1, 0, 1] and by_size[1] == [1, 0, 0]


def test_per_user_split_is_temporal_within_each_user():
    # user a: 10 interactions at times 9..0 (file order reversed); user b: 5 at equal times
    frame = pd.DataFrame(
        {
            "user_id": ["a"] * 10 + ["b"] * 5,
            "item_id": [f"i{j}" for j in range(10)] + [f"j{j}" for j in range(5)],
            "timestamp": [float(9 - j) for j in range(10)] + [1.0] * 5,
        }
    )
    splits = data.make_splits(
        frame,
        temporal=True,
        seed=0,
        valid_share=0.2,
        test_share=0.2,
        min_train=5,
        protocol="per-user",
    )
    a = {name: part[part.user_id == "a"] for name, part in splits.items()}
    assert a["train"]["timestamp"].max() < a["valid"]["timestamp"].min()
    assert a["valid"]["timestamp"].max() < a["test"]["timestamp"].min()
    assert [len(a[n]) for n in data.SPLITS] == [6, 2, 2]
    b = {name: part[part.user_id == "b"]["item_id"].tolist() for name, part in splits.items()}
    assert b == {"train": ["j0", "j1", "j2"], "valid": ["j3"], "test": ["j4"]}  # ties: file order
    # no user is dropped afterwards, though b has only 3 < 5 train interactions
    assert set(splits["test"]["user_id"]) == {"a", "b"}


def test_per_user_random_split_is_seeded_and_covers_every_row():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"user_id": rng.choice(list("abcdefg"), 300), "item_id": [f"i{j}" for j in range(300)]}
    )
    first = data.split_per_user(frame, temporal=False, seed=3, valid_share=0.2, test_share=0.2)
    again = data.split_per_user(frame, temporal=False, seed=3, valid_share=0.2, test_share=0.2)
    other = data.split_per_user(frame, temporal=False, seed=4, valid_share=0.2, test_share=0.2)
    assert all(first[n].equals(again[n]) for n in data.SPLITS)
    assert not first["test"].equals(other["test"])
    together = pd.concat(first.values())
    assert sorted(together["item_id"]) == sorted(frame["item_id"])
    for user, rows in frame.groupby("user_id"):
        expected = data.ratio_split_counts([len(rows)], (0.6, 0.2, 0.2))[0].tolist()
        assert [int((first[n].user_id == user).sum()) for n in data.SPLITS] == expected


def test_unknown_protocol_is_an_error():
    frame = pd.DataFrame({"user_id": ["a"], "item_id": ["i"]})
    with pytest.raises(ValueError, match="unknown split protocol 'leave-one-out'"):
        data.make_splits(
            frame,
            temporal=False,
            seed=0,
            valid_share=0.2,
            test_share=0.2,
            min_train=1,
            protocol="leave-one-out",
        )


# --- the reader and step 1 at scale: ids as categoricals, integer keys ------------------------


def test_ids_are_read_as_categoricals_with_sorted_categories(tmp_path):
    write_atomic(
        tmp_path / "ml-20m.inter",
        "user_id:token\titem_id:token\trating:float\ttimestamp:float",
        ["u9\tb\t4\t5", "u10\ta\t3.5\t6", "u9\t007\t1\t7", "u2\tb\t5\t8"],
    )
    raw = rawfiles.read_interactions("ml-20m", tmp_path)
    for name, values in (
        ("user_id", ["u9", "u10", "u9", "u2"]),
        ("item_id", ["b", "a", "007", "b"]),
    ):
        assert isinstance(raw[name].dtype, pd.CategoricalDtype)
        assert list(raw[name].cat.categories) == sorted(set(values))  # pandas' own order
        assert raw[name].astype(str).tolist() == values  # ids are text: '007' stays '007'
    assert raw["rating"].tolist() == [4.0, 3.5, 1.0, 5.0] and raw["rating"].dtype == np.float64
    assert raw.index.equals(pd.RangeIndex(4))


def test_a_short_row_is_named_with_the_file(tmp_path):
    write_atomic(
        tmp_path / "ml-20m.inter",
        "user_id:token\titem_id:token\trating:float\ttimestamp:float",
        ["1\t2\t4\t5", "1\t3\t4"],
    )
    with pytest.raises(InputError, match=r"ml-20m.inter: cannot be read as a '\\t'-separated"):
        rawfiles.read_interactions("ml-20m", tmp_path)


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("timestamps", [True, False])
def test_duplicates_equal_a_loop_over_the_rows(categorical, timestamps):
    """Step 1 against its definition, row by row: for each (user, item) the row with the
    largest timestamp, the later row among equal ones (the last row without timestamps)."""
    rng = np.random.default_rng(7)
    n = 2_000
    raw = pd.DataFrame(
        {
            "user_id": rng.integers(0, 30, n).astype(str),
            "item_id": rng.integers(0, 40, n).astype(str),
            "rating": rng.integers(1, 6, n).astype(float),
            "timestamp": rng.integers(0, 50, n).astype(float),  # many ties
        }
    )
    if not timestamps:
        raw = raw.drop(columns="timestamp")
    if categorical:
        raw["user_id"] = raw["user_id"].astype("category")
        raw["item_id"] = raw["item_id"].astype("category")
    best = {}
    for row in raw.itertuples():
        key = (str(row.user_id), str(row.item_id))
        stamp = row.timestamp if timestamps else 0.0
        if key not in best or stamp >= best[key][0]:
            best[key] = (stamp, row.Index)
    expected = sorted(index for _, index in best.values())
    out = data.drop_duplicates_keep_latest(raw)
    assert out.index.tolist() == expected
    assert out["rating"].tolist() == raw.loc[expected, "rating"].tolist()


def test_preprocess_file_equals_read_then_preprocess():
    direct = data.preprocess(
        rawfiles.read_interactions("ml-100k", recbole_ml100k_dir()), min_rating=3, core=5
    )
    routed = data.preprocess_file("ml-100k", recbole_ml100k_dir(), min_rating=3, core=5)
    pd.testing.assert_frame_equal(direct, routed)
    assert data.as_written(routed).equals(data.as_written(direct))
    assert data.as_written(routed)["user_id"].map(type).eq(str).all()


def test_as_written_gives_the_same_text_for_strings_and_categoricals():
    part = frame([("u1", "i1", 5, 1), ("u2", "i1", 4, 2), ("u1", "i3", 4, 3)])
    as_category = part.astype({"user_id": "category", "item_id": "category"})
    as_category = as_category[as_category["user_id"] != "u2"]  # an unused category stays
    assert data.as_written(as_category).equals(
        data.as_written(part[part["user_id"] != "u2"]).set_axis(range(2))
    )
