"""No code from data (docs/bad-inputs.md#files-that-could-carry-code): every .pth file the
workflow reads (model.pth, resume.pth, dataset.pth, RecBole's checkpoints) is written by
userfair.files.safe_pth and loads with torch's weights_only=True; a pickle that would run code (a
crafted file, the format before) is refused, naming the file and the command that rebuilds
it, and nothing of it runs (a marker file its __reduce__ would create stays absent)."""

from __future__ import annotations

import collections
import logging
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from userfair.files import io, safe_pth
from userfair.files.io import UnsafeFileError
from userfair.workflow import layout

from conftest import copy_run, write_seeded_split

DATASET = "tiny"


class Crafted:
    """Pickled, it runs ``touch MARKER`` when loaded with weights_only=False."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def craft(path: Path, marker: Path, **plain) -> None:
    """A .pth file of torch.save holding a Crafted object beside plain ``plain`` values."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({**plain, "payload": Crafted(marker)}, path)


@pytest.mark.slow  # the crafted code starts a process (touch)
def test_the_crafted_file_does_run_code_when_unpickled(tmp_path):
    """The premise of the tests below: loading the crafted file the old way runs its code."""
    marker = tmp_path / "ran"
    craft(tmp_path / "x.pth", marker)
    torch.load(tmp_path / "x.pth", weights_only=False)
    assert marker.exists()


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "relative, rule",
    [
        ("results/D/models/M/grid/0/model.pth", "tune"),
        ("results/D/models/dataset.pth", "recbole_dataset"),
    ],
)
def test_a_crafted_pth_is_refused_naming_the_file_and_its_rebuild(relative, rule, tmp_path):
    monkey_dir = tmp_path / "run"
    path = monkey_dir / relative
    marker = tmp_path / "ran"
    craft(path, marker, state_dict={"w": torch.ones(3)}, epoch=1)
    with pytest.raises(UnsafeFileError) as caught:
        io.read_pth(path)
    assert str(caught.value).endswith(
        "delete it or write it again with userfair.files.io.write_pth"
    )
    text = layout.explain(caught.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: refused, not loaded: ")
    assert "posix.system" in text and "nothing of it was run" in text
    assert text.endswith(f"written by rule {rule}, rebuild it: snakemake --force {path}")
    assert not marker.exists()


def test_a_crafted_dataset_pth_is_refused_by_the_jobs_reader(tmp_path):
    from userfair.workflow import shared_dataset

    path, marker = tmp_path / "results/D/models/dataset.pth", tmp_path / "ran"
    craft(path, marker, format=shared_dataset.SHARED_FORMAT)
    with pytest.raises(UnsafeFileError) as caught:
        shared_dataset.read_shared(path)
    assert re.search(r"rebuild it: snakemake --force .*dataset\.pth$", layout.explain(caught.value))
    assert not marker.exists()


def test_a_crafted_resume_pth_is_refused_and_training_starts_over(tmp_path, caplog):
    from userfair.workflow import resume

    path, marker = tmp_path / "resume.pth", tmp_path / "ran"
    craft(path, marker, format=resume.FORMAT, settings="s", epoch=3)
    with caplog.at_level(logging.WARNING):
        assert resume.load(path, "s") is None
    assert not marker.exists()
    line = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert line and str(path) in line[0] and "training from epoch 0" in line[0]


def test_a_safe_container_naming_a_class_outside_the_allowlist_is_refused(tmp_path):
    """The JSON tree of the safe format is checked too: an object of a class the reader does
    not allow (here subprocess.Popen, whose constructor would run a command) is never built."""
    import json

    marker = tmp_path / "ran"
    tree = {
        "$": "object",
        "cls": "subprocess.Popen",
        "id": 0,
        "d": {"$": "dict", "k": ["args"], "v": [["touch", str(marker)]]},
    }
    path = tmp_path / "results/D/models/M/grid/0/model.pth"
    path.parent.mkdir(parents=True)
    torch.save({"format": safe_pth.FORMAT, "tree": json.dumps(tree), "tensors": []}, path)
    with pytest.raises(UnsafeFileError, match="names class subprocess.Popen"):
        io.read_pth(path)
    method = {"$": "method", "self": 1, "name": "__init__"}
    torch.save({"format": safe_pth.FORMAT, "tree": json.dumps(method), "tensors": []}, path)
    with pytest.raises(UnsafeFileError, match="names method builtins.int.__init__"):
        io.read_pth(path)
    # a method of an allowlisted class that is not listed itself (Node.save would write)
    node = {
        "$": "object",
        "cls": "test_safe_pth.Node",
        "id": 0,
        "d": {"$": "dict", "k": [], "v": []},
    }
    method = {"$": "method", "self": node, "name": "method"}
    torch.save({"format": safe_pth.FORMAT, "tree": json.dumps(method), "tensors": []}, path)
    with pytest.raises(UnsafeFileError, match="names method test_safe_pth.Node.method"):
        io.read_pth(path, classes=("test_safe_pth.Node",))
    assert not marker.exists()


def test_a_pickle_of_the_format_before_is_refused_with_its_rebuild(tmp_path):
    """dataset.pth as the workflow wrote it before (a pickle of RecBole's objects, numpy
    arrays) needs globals: refused like a crafted file, with the same rebuild command."""
    path = tmp_path / "results/D/models/dataset.pth"
    path.parent.mkdir(parents=True)
    torch.save(
        {"format": 1, "popularity": {"keys": np.arange(3)}, "kind": collections.Counter()}, path
    )
    with pytest.raises(UnsafeFileError, match=r"refused, not loaded: ") as caught:
        io.read_pth(path)
    assert "snakemake --force " in layout.explain(caught.value)


def test_a_plain_state_dict_still_loads(tmp_path):
    """Backward compatible where it is safe: tensors in plain containers load as torch gives
    them (weights_only=True accepts them)."""
    path = tmp_path / "model.pth"
    torch.save({"state_dict": {"w": torch.arange(4.0)}, "epoch": 3}, path)
    loaded = io.read_pth(path)
    assert loaded["epoch"] == 3 and torch.equal(loaded["state_dict"]["w"], torch.arange(4.0))


class Node:
    """An allowlisted plain class for the round trip."""

    def method(self):
        return self.value


def test_every_kind_of_value_round_trips_and_shared_values_stay_shared(tmp_path):
    rng = np.random.default_rng(4)
    node = Node()
    shared_dict = {"a": 1}
    tokens = np.array([np.str_(s) for s in ("[PAD]", "7", "12")], dtype=object)
    node.value = shared_dict
    node.me = node  # a cycle
    value = {
        "tensor": torch.randn(3, 2),
        "long": torch.arange(5),
        "arrays": [rng.random((2, 3)), rng.integers(0, 9, 4).astype(np.uint32), np.array([True])],
        "strings": np.array(["ab", "c"]),
        "tokens": tokens,
        "tokens again": tokens,
        "sets": np.array([{1, 2}, set()], dtype=object),
        "sparse": [sp.random(5, 4, density=0.5, format=f, random_state=2) for f in ("csr", "coo")],
        "sparse array": sp.csr_array(np.eye(3)),
        "scalars": (np.int64(3), np.float32(0.5), np.str_("x"), 2**70, -0.0, float("inf")),
        "nan": float("nan"),
        "containers": (frozenset({1}), {2, 3}, collections.OrderedDict(b=1, a=2)),
        "defaults": collections.defaultdict(int, {"x": 1}),
        "keys": {1: "int key", (1, 2): "tuple key", None: "none"},
        "token ids": {np.str_("7"): 1, np.str_("12"): 2},
        "bytes": b"\x00\x01raw",
        "device": torch.device("cpu"),
        "dtype": torch.float16,
        "logger": logging.getLogger("userfair.test"),
        "node": node,
        "node again": node,
        "method": node.method,
        "dict twice": [shared_dict, shared_dict],
        "random": np.random.RandomState(3).get_state(),
    }
    classes = ("test_safe_pth.Node", "test_safe_pth.Node.method")
    path = tmp_path / "x.pth"
    io.write_pth(value, path, classes=classes)
    # the file needs no global beyond torch's own: it loads as a plain container
    assert torch.load(path, weights_only=True)["format"] == safe_pth.FORMAT
    back = io.read_pth(path, classes=classes)
    assert back.keys() == value.keys()
    assert torch.equal(back["tensor"], value["tensor"]) and back["long"].dtype == torch.int64
    for a, b in zip(back["arrays"], value["arrays"]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert back["strings"].dtype == value["strings"].dtype
    assert np.array_equal(back["strings"], value["strings"])
    assert back["tokens"].dtype == object and [type(t) for t in back["tokens"]] == [np.str_] * 3
    assert list(back["tokens"]) == list(tokens) and back["tokens again"] is back["tokens"]
    assert list(back["sets"]) == [{1, 2}, set()]
    for a, b in zip(
        back["sparse"] + [back["sparse array"]], value["sparse"] + [value["sparse array"]]
    ):
        assert type(a) is type(b) and a.shape == b.shape and abs(a - b).sum() == 0
    assert back["scalars"] == value["scalars"]
    assert [type(v) for v in back["scalars"]] == [type(v) for v in value["scalars"]]
    assert str(back["scalars"][4]) == "-0.0" and back["nan"] != back["nan"]
    assert back["containers"] == value["containers"]
    assert type(back["containers"][2]) is collections.OrderedDict
    assert back["defaults"]["missing"] == 0 and back["defaults"]["x"] == 1
    assert back["keys"] == value["keys"] and back["bytes"] == value["bytes"]
    assert back["token ids"] == value["token ids"]
    assert [type(k) for k in back["token ids"]] == [np.str_, np.str_]
    assert back["device"] == torch.device("cpu") and back["dtype"] is torch.float16
    assert back["logger"] is logging.getLogger("userfair.test")
    assert type(back["node"]) is Node and back["node again"] is back["node"]
    assert back["node"].me is back["node"] and back["node"].value == {"a": 1}
    assert back["method"]() == {"a": 1} and back["method"].__self__ is back["node"]
    assert back["dict twice"][0] is back["dict twice"][1] is back["node"].value
    assert back["random"][0] == "MT19937" and np.array_equal(back["random"][1], value["random"][1])
    with pytest.raises(UnsafeFileError, match="names class test_safe_pth.Node"):
        io.read_pth(path)  # the reader's allowlist, not the writer's, decides
    with pytest.raises(TypeError, match="not in the allowlist"):
        io.write_pth({"node": node}, tmp_path / "y.pth")
    assert not (tmp_path / "y.pth").exists()  # nothing half-written


# --- the workflow's own files ----------------------------------------------------------------


@pytest.fixture(scope="module")
def split_dir(tiny_ml100k, tmp_path_factory):
    return write_seeded_split(tiny_ml100k, tmp_path_factory.mktemp("split"), DATASET, seed=3)


def test_the_dataset_file_round_trips_and_holds_no_pickle(split_dir, tmp_path):
    """dataset.pth holds only allowlisted RecBole and torch classes, loads with
    weights_only=True as it is, and gives back the same interactions and tokens."""
    from userfair.workflow import recbole_setup, shared_dataset

    training = recbole_setup.Training(epochs=1, device="cpu", seed=5)
    shared = shared_dataset.build_shared(split_dir, DATASET, tmp_path / "build", training)
    path = tmp_path / "dataset.pth"
    shared_dataset.write_shared(shared, path)
    assert torch.load(path, weights_only=True)["format"] == safe_pth.FORMAT
    back = shared_dataset.read_shared(path)
    for a, b in zip((back["dataset"], *back["built"]), (shared["dataset"], *shared["built"])):
        assert type(a) is type(b) and a.inter_num == b.inter_num
        for field in ("user_id", "item_id"):
            assert torch.equal(a.inter_feat[field], b.inter_feat[field])
            assert list(a.field2id_token[field]) == list(b.field2id_token[field])
    assert back["built"][0].field2token_id is back["dataset"].field2token_id  # still shared
    assert back["valid"].collate_fn.__self__ is back["valid"]


@pytest.mark.slow
def test_a_crafted_checkpoint_stops_the_export_and_its_rebuild_runs_one_job(tmp_path, tiny_run):
    """Through Snakemake, on a copy of the session's tiny run (conftest ``tiny_run``): a
    crafted model.pth stops its top-k job with the one line (no code run); the printed
    command, run with -n, schedules just the job that rebuilds it."""
    run = copy_run(tiny_run, tmp_path / "run")
    work = run.test_dir
    target = "results/ml-100k/models/UserKNN/topk.parquet"
    checkpoint = "results/ml-100k/models/UserKNN/grid/0/model.pth"
    assert torch.load(work / checkpoint, weights_only=True)["format"] == safe_pth.FORMAT
    marker = tmp_path / "ran"
    craft(work / checkpoint, marker, state_dict={})
    (work / target).unlink()
    proc = run.snakemake(target, "--cores", "2", check=False)
    assert proc.returncode != 0
    assert not marker.exists()
    log = (work / "results/logs/topk/ml-100k/UserKNN.log").read_text()
    line = next(line for line in log.splitlines() if "refused, not loaded" in line)
    # one line (userfair.workflow.joblog), ending with how to see the traceback
    line, _, debug = line.rpartition(" (USERFAIR_DEBUG=1 shows the traceback)")
    assert debug == "" and line
    assert line.endswith(f"{checkpoint}: refused, not loaded: it names the Python global "
                         "posix.system, which a load would run or import (a .pth file in Python's"
                         " pickle form can run code when loaded; nothing of it was run); written by"
                         f" rule tune, rebuild it: snakemake --force {checkpoint}")  # fmt: skip
    command = line.rsplit("rebuild it: ", 1)[1].split()
    assert command[:2] == ["snakemake", "--force"]
    dry = run.snakemake(*command[1:], "-n")
    stats = dry.stdout.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    assert dict(row.split() for row in stats) == {"tune": "1", "total": "1"}, dry.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
