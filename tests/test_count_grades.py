"""Last.fm's play counts as grades (docs/method.md#graded-relevance): each count's quintile
among its user's kept interactions, read only for graded relevance; the binary frames and
splits are the same as without grades."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from userfair.files.io import write_inter
from userfair.workflow import preprocess as data
from userfair.workflow import rawfiles
from userfair.workflow.steps import data as data_steps


def loop_grades(users, counts):
    """The rule from its words: rank r of the count among the user's (ties: average rank),
    grade ceil(5 r / n_u)."""
    out = []
    for user, count in zip(users, counts):
        own = [c for u, c in zip(users, counts) if u == user]
        below = sum(c < count for c in own)
        equal = sum(c == count for c in own)
        rank = below + (equal + 1) / 2
        out.append(max(1, min(5, math.ceil(round(5 * rank / len(own), 9)))))
    return out


def test_count_grades_by_hand():
    users = pd.Series(["a"] * 5 + ["b"] * 3)
    counts = pd.Series([1, 10, 100, 1000, 5, 7, 7, 3])
    # a: ranks 1, 3, 4, 5, 2 of 5; b: 7 and 7 share rank 2.5 of 3, 3 is rank 1 of 3
    assert data.count_grades(users, counts).tolist() == [1, 3, 4, 5, 2, 5, 5, 2]
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        data.count_grades(users, counts.replace(1, -1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_grades_match_the_loop(seed):
    rng = np.random.default_rng(seed)
    users = pd.Series(rng.integers(0, 12, 300).astype(str))
    counts = pd.Series(np.floor(rng.pareto(1.2, 300) * 50))  # heavy-tailed, with ties
    got = data.count_grades(users, counts)
    assert got.tolist() == loop_grades(users.tolist(), counts.tolist())
    assert set(got) <= {1.0, 2.0, 3.0, 4.0, 5.0}


def lastfm_folder(root, seed=3):
    """A Last.fm atomic file: 40 users x their artists with play counts."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(40):
        for artist in rng.choice(60, size=int(rng.integers(3, 20)), replace=False):
            rows.append(f"{user}\t{artist}\t{int(rng.pareto(1.0) * 300) + 1}\trock")
    rows.append("0\t999\t5\t")  # an artist of one user only: the 5-core drops it
    root.mkdir(parents=True, exist_ok=True)
    header = "user_id:token\tartist_id:token\tweight:float\ttag_value:token_seq"
    (root / "lastfm.inter").write_text("\n".join([header, *rows]) + "\n")
    return root


def test_lastfm_counts_are_read_only_for_grades(tmp_path):
    folder = lastfm_folder(tmp_path / "raw")
    binary = rawfiles.read_interactions("lastfm", folder)
    counted = rawfiles.read_interactions("lastfm", folder, counts=True)
    assert binary.columns.tolist() == ["user_id", "item_id"]
    assert counted.columns.tolist() == ["user_id", "item_id", "count"]
    pd.testing.assert_frame_equal(counted[["user_id", "item_id"]], binary)


def test_lastfm_grades_leave_the_binary_results_unchanged(tmp_path):
    folder = lastfm_folder(tmp_path / "raw")
    options = {"min_rating": 3, "core": 5}
    binary = data.preprocess_file("lastfm", folder, **options)
    graded = data.preprocess_file("lastfm", folder, grades=True, **options)
    pd.testing.assert_frame_equal(graded.drop(columns="rating"), binary)
    # the grades are the rule's on the kept interactions (after the 5-core)
    raw = rawfiles.read_interactions("lastfm", folder, counts=True)
    count = raw.set_index(["user_id", "item_id"])["count"]
    kept = count.loc[list(zip(graded.user_id.astype(str), graded.item_id.astype(str)))]
    expected = loop_grades(graded.user_id.astype(str).tolist(), kept.tolist())
    assert graded["rating"].tolist() == expected and len(set(expected)) == 5
    # the split: the same binary rows, in the same order, as without grades
    split = {"temporal": False, "seed": 7, "valid_share": 0.2, "test_share": 0.2, "min_train": 2}
    parts = data.make_splits(binary, **split)
    graded_parts = data.make_splits(graded, **split)
    for name, part in parts.items():
        written = data.as_written(graded_parts[name])
        assert written["rating"].between(1, 5).all()
        a, b = tmp_path / f"a.{name}.inter", tmp_path / f"b.{name}.inter"
        write_inter(data.as_written(part), a)
        write_inter(written.drop(columns="rating"), b)
        assert a.read_bytes() == b.read_bytes()


def test_grades_step_writes_lastfm_count_grades_beside_the_binary_preprocess(tmp_path):
    folder = lastfm_folder(tmp_path / "raw")
    pre, out = tmp_path / "preprocessed.parquet", tmp_path / "grades.parquet"
    options = {"min_rating": 3, "core": 5}
    data_steps.preprocess("lastfm", None, str(folder), str(pre), **options)
    data_steps.grades("lastfm", None, str(folder), str(out), **options)
    binary, written = pd.read_parquet(pre), pd.read_parquet(out)
    assert binary.columns.tolist() == ["user_id", "item_id"]  # no count, no grade
    assert written.columns.tolist() == ["user_id", "item_id", "grade"]
    pd.testing.assert_frame_equal(written[["user_id", "item_id"]], binary)
    # the count grades as preprocessing gave them (the rule of count_grades, by loop)
    graded = data.preprocess_file("lastfm", folder, grades=True, **options)
    assert written["grade"].tolist() == graded["rating"].tolist()
    raw = rawfiles.read_interactions("lastfm", folder, counts=True)
    count = raw.set_index(["user_id", "item_id"])["count"]
    kept = count.loc[list(zip(written.user_id, written.item_id))].tolist()
    assert written["grade"].tolist() == loop_grades(written.user_id.tolist(), kept)
    assert sorted(written["grade"].unique()) == [1.0, 2.0, 3.0, 4.0, 5.0]
