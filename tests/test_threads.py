"""The values do not depend on the threads: numba's parallel loops (the dense UF pass and
its pair threshold, the streamed passes, the bootstrap's envy and UF, the opt-in PUF's row
sums) give the same numbers, to the bit, on one thread and on two: every loop writes per
row (or per resample) and the rows are added in a fixed order. A job runs its rule's ``threads``
(``userfair.formulas._kernels.job_threads`` follows ``OMP_NUM_THREADS``, which Snakemake sets),
while the suite runs each of its workers on one thread (conftest.py): this module asks for two
threads itself, so that the parallel loops are run on more than one in every run of the
suite, in-process."""

import math
import os

import numba
import numpy as np
import pytest

from userfair.bootstrap import uncertainty
from userfair.decomposition import decompose_stream
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.measures import NAMES
from userfair.opt_in import variants

from measures_data import random_split, write_item_file

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
pytestmark = pytest.mark.skipif(
    min(CORES or 1, numba.config.NUMBA_NUM_THREADS) < 2,
    reason="two threads need two cores (this process may run on one)",
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """60 evaluated users with genres: rows enough that two threads split every loop."""
    path = tmp_path_factory.mktemp("threads")
    train, test, topk, item_genres = random_split(17, m=60)
    write_item_file(path / "d.item", item_genres)
    return load_inputs(train, test, topk, item_features=path / "d.item")


def on_threads(monkeypatch, threads, compute):
    """``compute()`` as a job of a rule with ``threads`` threads; checks numba used them."""
    monkeypatch.setenv("OMP_NUM_THREADS", str(threads))
    result = compute()
    assert numba.get_num_threads() == threads
    return result


def same(a, b) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("route", ["dense", "stream"])
@pytest.mark.parametrize("gamma", [1.0, 0.5])
def test_the_measures_are_the_same_on_two_threads(inputs, monkeypatch, route, gamma):
    def compute():
        return evaluate(inputs, k=10, gamma=gamma, device="cpu", route=route, block_size=16)

    one, two = (on_threads(monkeypatch, n, compute) for n in (1, 2))
    assert [key for key in NAMES if not same(one[key], two[key])] == []


def test_the_bootstrap_is_the_same_on_two_threads(inputs, monkeypatch):
    weights = uncertainty.resample_weights(len(inputs.users), 6, seed=4)

    def compute():
        return uncertainty.bootstrap(inputs, weights, device="cpu", block_size=16, gamma=0.5)

    one, two = (on_threads(monkeypatch, n, compute) for n in (1, 2))
    assert one[list(NAMES)].equals(two[list(NAMES)])


def test_the_streamed_opt_in_measures_are_the_same_on_two_threads(inputs, monkeypatch):
    def compute():  # the genre similarity: the dense-rows cosine kernel
        return variants.evaluate_variants(
            inputs, k=10, names=["genre"], route="stream", block_size=16
        )[0]

    one, two = (on_threads(monkeypatch, n, compute) for n in (1, 2))
    assert len(one) == 2 and [key for key in one if not same(one[key], two[key])] == []
    assert np.isfinite(list(one.values())).all()


def test_the_streamed_users_terms_move_in_their_last_bits_only(inputs, monkeypatch):
    """The per-user decomposition accumulates every user's terms per thread (length-m
    arrays, added in thread order): the one output whose last bits follow the threads
    (docs/cluster.md)."""

    def compute():
        return decompose_stream.stream_decompose(inputs, k=10, block_size=16)

    one, two = (on_threads(monkeypatch, n, compute) for n in (1, 2))
    numbers = one.select_dtypes("number").columns
    assert len(numbers) > 10
    np.testing.assert_allclose(one[numbers], two[numbers], rtol=1e-12, atol=1e-15)
