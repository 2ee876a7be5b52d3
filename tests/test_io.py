"""The shared file helpers: atomic writes, RecBole atomic files, booktabs tables."""

import os

import pandas as pd
import pytest

from userfair.files.io import (
    InputError,
    atomic_path,
    read_inter,
    write_inter,
)
from userfair.workflow.latex import to_booktabs


def test_atomic_path_leaves_nothing_when_the_writer_fails(tmp_path):
    target = tmp_path / "out" / "file.txt"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_atomic_path_renames_on_success(tmp_path):
    target = tmp_path / "file.txt"
    with atomic_path(target) as tmp:
        tmp.write_text("done")
    assert target.read_text() == "done"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


def test_inter_round_trip_keeps_external_ids_as_strings(tmp_path):
    frame = pd.DataFrame(
        {"user_id": ["007", "12"], "item_id": ["a", "0042"], "timestamp": [3.0, 1.0]}
    )
    write_inter(frame, tmp_path / "x.inter")
    assert (tmp_path / "x.inter").read_text().splitlines()[
        0
    ] == "user_id:token\titem_id:token\ttimestamp:float"
    pd.testing.assert_frame_equal(read_inter(tmp_path / "x.inter"), frame)


def test_read_inter_names_the_file_and_the_missing_column(tmp_path):
    path = tmp_path / "bad.inter"
    path.write_text("user_id:token\titem:token\n1\t2\n")
    with pytest.raises(InputError, match=r"bad\.inter.*'item_id'"):
        read_inter(path)


def test_booktabs_keeps_column_types_escapes_text_and_bolds():
    frame = pd.DataFrame(
        {"#users": [943, 10], "sparsity %": [92.8, float("nan")], "name": ["a_b", "x&y"]},
        index=pd.Index(["ml-100k", "q"], name="dataset"),
    )
    bold = pd.DataFrame(False, index=frame.index, columns=frame.columns)
    bold.iloc[0, 1] = True
    tex = to_booktabs(frame, bold=bold, float_format="{:.2f}")
    assert r"dataset & \#users & sparsity \% & name \\" in tex
    assert r"ml-100k & 943 & \textbf{92.80} & a\_b \\" in tex
    assert r"q & 10 & -- & x\&y \\" in tex
    assert tex.count(r"\toprule") == tex.count(r"\midrule") == tex.count(r"\bottomrule") == 1
