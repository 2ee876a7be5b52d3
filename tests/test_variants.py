"""The opt-in PUF variants (docs/method.md#other-user-similarities): every similarity of
the registry and every score on both routes against loops from the formulas, hand-worked
cases, and the default 18 measures left as they were."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from userfair.cli import main
from userfair.evaluate import as_json, evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import InputError, write_inter, write_json
from userfair.formulas.fairness import puf
from userfair.measures import NAMES, OPT_IN
from userfair.opt_in import variants
from userfair.similarity import pairwise, registry

import reference as ref
from measures_data import graded_split, python_views, random_split, write_item_file


def loop_cosine(vectors):
    """{(u, v): raw cosine} of dict or list vectors for unordered pairs u < v (0 for a zero
    vector)."""
    out = {}
    for u in range(len(vectors)):
        for v in range(u + 1, len(vectors)):
            a, b = vectors[u], vectors[v]
            if isinstance(a, dict):
                dot = sum(x * b.get(key, 0.0) for key, x in a.items())
                na = math.sqrt(sum(x * x for x in a.values()))
                nb = math.sqrt(sum(x * x for x in b.values()))
            else:
                dot = sum(x * y for x, y in zip(a, b))
                na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
            out[u, v] = dot / (na * nb) if na * nb > 0 else 0.0
    return out


def genre_distribution(items, item_genres, genres):
    counts = [sum(g in item_genres.get(item, ()) for item in items) for g in genres]
    total = sum(counts)
    return [c / total if total else 1 / len(genres) for c in counts]


def expected(seed, tmp_path, k=10, m=30):
    """(inputs, vectors, {measure: value}) from loops over the DataFrames."""
    train, test, topk, item_genres = graded_split(seed, m=m)
    features = tmp_path / f"g{seed}.item"
    write_item_file(features, item_genres)
    inputs = load_inputs(train, test, topk, k=k, item_features=features, grade="rating")
    lists, relevant, train_sets, _ = python_views(inputs, train, test, topk, k=k)
    users = list(inputs.users)
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(users), 4))
    vectors[2] = 0.0  # a zero vector: cosine 0 with everyone
    graded_rows = [dict(zip(group.item_id, group.rating)) for _, group in train.groupby("user_id")]
    by_user = dict(zip(sorted(train.user_id.unique()), graded_rows))
    test_grades = [dict(zip(g.item_id, g.rating)) for _, g in test.groupby("user_id", sort=True)]
    genres = sorted({g for gs in item_genres.values() for g in gs})
    sims = {
        "Cos": ref.cosine(train_sets),
        "Jacc": ref.jaccard(train_sets),
        "RCos": ref._min_max(loop_cosine([by_user.get(u, {}) for u in users])),
        "Vec": ref._min_max(loop_cosine(vectors.tolist())),
        "Genre": ref._min_max(
            loop_cosine([genre_distribution(s, item_genres, genres) for s in train_sets])
        ),
    }
    eff = ref.effectiveness(lists, relevant, k)
    scores = {"P": eff["P"], "NDCG": eff["NDCG"], "gNDCG": list(ref.gndcg(lists, test_grades, k))}
    values = {"gNDCG": float(np.mean(scores["gNDCG"]))}
    values["SD-gNDCG"] = ref.sd(scores["gNDCG"])
    values["Gini-gNDCG"] = ref.gini(scores["gNDCG"])
    for label, sim in sims.items():
        for name, score in scores.items():
            values[f"PUF-{name}-{label}"] = ref.puf(score, sim)
    return inputs, vectors, values


@pytest.mark.parametrize("route", ["dense", "stream"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_variant_matches_the_loops(tmp_path, seed, route):
    inputs, vectors, values = expected(seed, tmp_path)
    got, seconds = variants.evaluate_variants(
        inputs, 10, ["vec", "genre"], vectors, route, block_size=7
    )
    assert tuple(got) == OPT_IN
    for key in OPT_IN:
        assert got[key] == pytest.approx(values[key], rel=1e-9, abs=1e-12), key
    assert {"similarity-rcos", "similarity-vec", "PUF-gNDCG-Genre"} <= set(seconds)


def test_routes_agree_through_evaluate(tmp_path):
    inputs, vectors, _ = expected(3, tmp_path, m=50)
    options = {"k": 10, "block_size": 9, "extra_similarities": ["vec", "genre"]}
    dense = evaluate(inputs, route="dense", device="cpu", user_vectors=vectors, **options)
    streamed = evaluate(inputs, route="stream", user_vectors=vectors, **options)
    assert list(dense)[: len(NAMES + OPT_IN)] == list(NAMES + OPT_IN) == list(streamed)[:-2]
    for key in NAMES + OPT_IN:
        assert streamed[key] == pytest.approx(dense[key], rel=1e-9, abs=1e-12), key


def test_hand_worked_three_users():
    # Grades: u0 {a: 1, b: 2}, u1 {a: 2, b: 4}, u2 {c: 3}; RCos raw: (u0, u1) = 1, others 0
    # -> normalised 1, 0, 0. Vectors (1, 0), (1, 1), (0, 1): raw cos 1/sqrt2, 0, 1/sqrt2
    # -> normalised 1, 0, 1. Scores P@1: u0 hits a (1), u1 misses (0), u2 hits c (1).
    train = pd.DataFrame(
        {"user_id": ["u0", "u0", "u1", "u1", "u2"], "item_id": list("ababc"),
         "rating": [1.0, 2.0, 2.0, 4.0, 3.0]}
    )  # fmt: skip
    test = pd.DataFrame(
        {"user_id": ["u0", "u1", "u2"], "item_id": ["a", "b", "c"], "rating": [5.0, 1.0, 2.0]}
    )
    topk = pd.DataFrame({"user_id": ["u0", "u1", "u2"], "item_id": ["a", "c", "c"], "rank": 1})
    inputs = load_inputs(train, test, topk, k=1, grade="rating")
    vectors = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    for route in ("dense", "stream"):
        got, _ = variants.evaluate_variants(inputs, 1, ["vec"], vectors, route)
        # PUF = (1/3) sum over pairs of sim |P_u - P_v|: RCos (u0, u1) 1 * 1 -> 1/3;
        # Vec (u0, u1) 1 * 1 + (u1, u2) 1 * 1 -> 2/3.
        assert got["PUF-P-RCos"] == pytest.approx(1 / 3)
        assert got["PUF-P-Vec"] == pytest.approx(2 / 3)
        assert got["gNDCG"] == pytest.approx(2 / 3)  # u0 and u2 perfect, u1 0


def test_defaults_are_unchanged(tmp_path):
    train, test, topk, _ = graded_split(4)
    binary = load_inputs(train, test, topk)
    graded_inputs = load_inputs(train, test, topk, grade="rating")
    default = evaluate(binary, route="dense", device="cpu")
    extended = evaluate(graded_inputs, route="dense", device="cpu")
    assert set(default) == set(NAMES) | {"seconds", "conventions"}
    assert set(default["seconds"]) == set(NAMES) | {"similarity-cos", "similarity-jacc"}
    for key in NAMES:  # the 18 do not depend on the grades, bit for bit
        assert extended[key] == default[key] or (
            math.isnan(default[key]) and math.isnan(extended[key])
        )
    write_json(as_json(default), tmp_path / "a.json")
    keys = list(json.loads((tmp_path / "a.json").read_text()))
    assert keys == list(NAMES) + ["seconds", "conventions"]


def test_missing_data_is_one_line_errors(tmp_path):
    train, test, topk, _ = random_split(0)
    inputs = load_inputs(train, test, topk)
    with pytest.raises(ValueError, match="'vec' needs vectors: give --user-vectors FILE"):
        variants.evaluate_variants(inputs, names=["vec"])
    with pytest.raises(ValueError, match="'rcos' needs grades: give --grade FIELD"):
        variants.evaluate_variants(inputs, names=["RCos"])
    with pytest.raises(ValueError, match="unknown similarity 'dot'"):
        variants.evaluate_variants(inputs, names=["dot"])


def test_read_user_vectors(tmp_path):
    users = np.array(["a", "b", "c"])
    frame = pd.DataFrame({"user_id": ["c", "a", "b", "z"], "x": [3.0, 1, 2, 9], "y": 0.5})
    frame.to_parquet(tmp_path / "v.parquet")
    frame.to_csv(tmp_path / "v.csv", index=False)
    for name in ("v.parquet", "v.csv"):
        got = registry.read_user_vectors(tmp_path / name, users)
        assert got.tolist() == [[1.0, 0.5], [2.0, 0.5], [3.0, 0.5]]
    frame[frame.user_id != "b"].to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(
        InputError, match=r"short.csv: no vector for 1 evaluated user\(s\), e.g. 'b'"
    ):
        registry.read_user_vectors(tmp_path / "short.csv", users)
    frame.assign(y="high").to_csv(tmp_path / "text.csv", index=False)
    with pytest.raises(InputError, match="text.csv: column 'y' is not numeric"):
        registry.read_user_vectors(tmp_path / "text.csv", users)


def test_registry_adds_a_similarity_with_one_function():
    @registry.register("dot", "Dot")
    def dot(data):
        return lambda start, stop: (data.train[start:stop] @ data.train.T).tocsr()

    try:
        train, test, topk, _ = random_split(1)
        inputs = load_inputs(train, test, topk)
        block = registry.block_function("dot", registry.SimilarityData.of(inputs))
        sim = variants.dense_similarity(block, len(inputs.users))
        scores = np.random.default_rng(0).random((2, len(inputs.users)))
        streamed = variants.streamed_puf(block, scores, block_size=5)
        assert streamed == pytest.approx([puf(s, sim) for s in scores], rel=1e-9)
    finally:
        del registry.REGISTRY["dot"]


def test_command_adds_the_variants_when_asked(tmp_path, capsys):
    train, test, topk, item_genres = graded_split(6)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_parquet(tmp_path / "topk.parquet")
    write_item_file(tmp_path / "d.item", item_genres)
    users = sorted(test.user_id.unique())
    vectors = pd.DataFrame({"user_id": users, "a": np.arange(len(users)) % 3, "b": 1.0})
    vectors.to_csv(tmp_path / "vectors.csv", index=False)
    files = ["--train", str(tmp_path / "d.train.inter"), "--test", str(tmp_path / "d.test.inter"),
             "--topk", str(tmp_path / "topk.parquet")]  # fmt: skip
    assert main(["evaluate", *files, "--json", "--route", "dense"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert list(plain) == list(NAMES) + ["seconds", "conventions"]
    extra = ["--grade", "rating", "--user-vectors", str(tmp_path / "vectors.csv"),
             "--similarity", "genre", "--item-features", str(tmp_path / "d.item")]  # fmt: skip
    assert main(["evaluate", *files, *extra, "--json", "--route", "dense"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result)[: len(NAMES + OPT_IN)] == list(NAMES + OPT_IN)
    inputs = load_inputs(train, test, topk, grade="rating", item_features=tmp_path / "d.item")
    vectors = registry.read_user_vectors(tmp_path / "vectors.csv", inputs.users)
    direct, _ = variants.evaluate_variants(inputs, 10, ["vec", "genre"], vectors)
    assert {key: result[key] for key in OPT_IN} == pytest.approx(direct, rel=1e-12)
    assert main(["evaluate", *files, "--grade", "rating"]) == 0
    assert "PUF-gNDCG-RCos" in capsys.readouterr().out
    assert main(["evaluate", *files, "--grade", "nothing"]) == 2
    assert "no field 'nothing'" in capsys.readouterr().err
    assert main(["evaluate", *files, "--similarity", "vec"]) == 2
    assert "needs vectors: give --user-vectors FILE" in capsys.readouterr().err


def test_registry_cos_and_jacc_are_the_papers(tmp_path):
    train, test, topk, _ = random_split(2)
    inputs = load_inputs(train, test, topk)
    data = registry.SimilarityData.of(inputs)
    rows, m = inputs.train_of_evaluated(), len(inputs.users)
    for name, function in (("cos", pairwise.cosine), ("jacc", pairwise.jaccard)):
        got = variants.dense_similarity(registry.block_function(name, data), m, 7)
        np.testing.assert_allclose(got, function(rows), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_few_users_and_equal_pairs_agree_on_both_routes(keep):
    train, test, topk, _ = graded_split(7)
    users = sorted(test.user_id.unique())[:keep]
    inputs = load_inputs(train, test[test.user_id.isin(users)], topk, grade="rating", valid=test)
    same = np.ones((keep, 2))  # identical vectors: every pair equal, normalised to 0
    dense, _ = variants.evaluate_variants(inputs, 10, ["vec"], same, "dense")
    streamed, _ = variants.evaluate_variants(inputs, 10, ["vec"], same, "stream")
    for key in dense:
        if keep == 1 and key.startswith("PUF-"):
            assert math.isnan(dense[key]) and math.isnan(streamed[key])
        else:
            assert streamed[key] == pytest.approx(dense[key], rel=1e-12, nan_ok=True), key
    if keep > 1:
        assert dense["PUF-P-Vec"] == streamed["PUF-P-Vec"] == 0.0


def test_streamed_equals_dense_when_every_pair_shares_an_item():
    # every user also has item i000 in train: no pair is left out of a sparse block, so
    # the raw minimum of Cos, Jacc and RCos is above 0
    train, test, topk, _ = graded_split(8)
    everyone = pd.DataFrame({"user_id": train.user_id.unique(), "item_id": "i000", "rating": 4.0})
    train = pd.concat([train[train.item_id != "i000"], everyone], ignore_index=True)
    inputs = load_inputs(train, test, topk, grade="rating")
    data = registry.SimilarityData.of(inputs)
    m = len(inputs.users)
    for name in ("cos", "jacc", "rcos"):
        block = registry.block_function(name, data)
        sim = variants.dense_similarity(block, m)
        raw = block(0, m)
        assert raw.nnz == m * m  # every pair stored (and the diagonal)
        scores = np.stack([np.random.default_rng(1).random(m), np.arange(m) % 3 / 2.0])
        assert variants.streamed_puf(block, scores, block_size=4) == pytest.approx(
            [puf(s, sim) for s in scores], rel=1e-9
        )


def loop_puf(vectors, score):
    """PUF of ``score`` with the min-max normalised cosine of ``vectors``, from the formula."""
    raw = loop_cosine(vectors)
    lo, hi = min(raw.values()), max(raw.values())
    m = len(vectors)
    if hi == lo:
        return 0.0
    total = sum((s - lo) / (hi - lo) * abs(score[u] - score[v]) for (u, v), s in raw.items())
    return total / (m * (m - 1) / 2)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_fused_cosine_passes_over_many_tiles_match_the_loop(kind):
    # more users than one tile of the dense kernel (32 x 512) and than one block: the
    # compiled passes that make the cosine themselves (Vec/Genre dense, Cos/RCos sparse)
    rng = np.random.default_rng(11)
    m = 600
    if kind == "dense":
        vectors = rng.normal(size=(m, 5))
        vectors[3] = 0.0  # a zero vector: cosine 0 with everyone
        loop_rows = vectors.tolist()
    else:
        dense = rng.integers(1, 6, size=(m, 40)) * (rng.random((m, 40)) < 0.08)
        vectors = sp.csr_matrix(dense.astype(np.float64))
        loop_rows = [{i: float(x) for i, x in enumerate(row) if x} for row in dense]
    block = registry.CosineBlocks(vectors)
    scores = np.stack([rng.random(m), rng.integers(0, 4, m) / 3.0])
    streamed = variants.streamed_puf(block, scores, block_size=97)
    sim = variants.dense_similarity(block, m)
    for row, score in enumerate(scores):
        assert streamed[row] == pytest.approx(puf(score, sim), rel=1e-9)
    # the loop over the pairs, on a corner of the users (the loop is quadratic)
    few = 120
    small = registry.CosineBlocks(vectors[:few])
    expected = [loop_puf(loop_rows[:few], list(score[:few])) for score in scores]
    got = variants.streamed_puf(small, np.ascontiguousarray(scores[:, :few]), block_size=13)
    assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("name", ["cos", "jacc", "rcos", "vec", "genre"])
def test_row_ranges_combine_to_the_whole(tmp_path, name):
    # the scattered streamed route: row ranges summed apart, written as JSON, read back and
    # combined give the whole pass's PUF
    inputs, vectors, values = expected(4, tmp_path, m=40)
    data = registry.SimilarityData.of(inputs, vectors)
    block = registry.block_function(name, data)
    scores = variants.per_user_scores(inputs, 10)
    stacked = np.stack([scores[s] for s in ("P", "NDCG", "gNDCG")])
    m = stacked.shape[1]
    cuts = [0, 5, 5, 6, 23, m]  # an empty range too (more parts than rows can give one)
    parts = [
        variants.RowSums.of_record(
            json.loads(json.dumps(variants.row_sums(block, stacked, a, b, 4).record()))
        )
        for a, b in zip(cuts, cuts[1:])
    ]
    whole = variants.combine(parts[::-1])  # any order: combined in row order
    label = registry.entry(name).label
    got = variants.finish(whole, stacked)
    for score, value in zip(("P", "NDCG", "gNDCG"), got):
        assert value == pytest.approx(values[f"PUF-{score}-{label}"], rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(got, variants.streamed_puf(block, stacked), rtol=1e-12)
    with pytest.raises(ValueError, match="do not follow"):
        variants.combine([parts[0], parts[3]])
    with pytest.raises(ValueError, match="cover rows"):
        variants.finish(variants.combine(parts[:2]), stacked)


def test_scattered_sums_give_the_streamed_measures(tmp_path):
    # range_sums over parts, gathered: evaluate_variants with them equals its own pass
    inputs, vectors, values = expected(5, tmp_path, m=40)
    names = ["vec", "genre"]
    m = len(inputs.users)
    cuts = [0, 9, 10, m]
    parts = [
        variants.range_sums(inputs, 10, names, vectors, a, b, block_size=5)
        for a, b in zip(cuts, cuts[1:])
    ]
    gathered = {name: variants.combine([part[name] for part in parts]) for name in parts[0]}
    assert set(gathered) == {"cos", "jacc", "rcos", "vec", "genre"}
    got, seconds = variants.evaluate_variants(inputs, 10, names, vectors, "stream", sums=gathered)
    own, _ = variants.evaluate_variants(inputs, 10, names, vectors, "stream")
    for key in OPT_IN:
        assert got[key] == pytest.approx(values[key], rel=1e-9, abs=1e-12), key
        assert got[key] == pytest.approx(own[key], rel=1e-12, abs=1e-15), key
    assert seconds["similarity-vec"] >= sum(part["vec"].seconds for part in parts)
    with pytest.raises(ValueError, match="lack the similarity 'jacc'"):
        variants.evaluate_variants(
            inputs, 10, names, vectors, "stream", sums={"cos": gathered["cos"]}
        )
