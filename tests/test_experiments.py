"""The artificial experiments on synthetic inputs with known outcomes."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.stats import skew

from userfair import evaluate
from userfair.files.inputs import load_inputs, load_split_inputs
from userfair.files.io import InputError, read_stacked_parquet, write_dataset_parquet
from userfair.formulas import effectiveness, fairness
from userfair.similarity import pairwise
from userfair.workflow import experiments

K = 5
SETTINGS = experiments.Settings(k=K, epsilon=0.05, block_size=7, device="cpu")


def _inputs(m=24, n_items=80, few_relevant=(), seed=0, with_genres=False, tmp_path=None):
    """m users with random train histories and >= K test items each (fewer for the users
    in ``few_relevant``); the top-k lists are random unseen items."""
    rng = np.random.default_rng(seed)
    train, test, topk = [], [], []
    for u in range(m):
        items = rng.permutation(n_items)
        n_test = 2 if u in few_relevant else K + int(rng.integers(0, 4))
        n_train = 5 + int(rng.integers(0, 10))
        user = f"u{u:03d}"
        test += [(user, f"i{i:03d}") for i in items[:n_test]]
        train += [(user, f"i{i:03d}") for i in items[n_test : n_test + n_train]]
        pool = np.union1d(items[:n_test], items[-2 * K :])  # test items or unseen
        topk += [(user, f"i{i:03d}", r + 1) for r, i in enumerate(rng.choice(pool, K, False))]
    # every item appears in train somewhere, so the item index covers all n_items
    train += [("x-all-items", f"i{i:03d}") for i in range(n_items)]
    columns = ["user_id", "item_id"]
    item_features = None
    if with_genres:
        genres = ["Action", "Drama", "Comedy", "Horror"]
        lines = ["item_id:token\tgenre:token_seq"] + [
            f"i{i:03d}\t{genres[i % 4]} {genres[(i // 4) % 4]}" for i in range(n_items)
        ]
        item_features = tmp_path / "d.item"
        item_features.write_text("\n".join(lines) + "\n")
    return load_inputs(
        pd.DataFrame(train, columns=columns),
        pd.DataFrame(test, columns=columns),
        pd.DataFrame(topk, columns=columns + ["rank"]),
        k=K,
        item_features=item_features,
    )


def _row_sets(matrix):
    return [
        set(matrix.indices[matrix.indptr[u] : matrix.indptr[u + 1]]) for u in range(matrix.shape[0])
    ]


def test_relevance_lists_follow_the_protocol():
    inputs = _inputs(few_relevant={0, 3})
    lists = experiments.relevance_lists(
        inputs.relevant, inputs.train_of_evaluated(), K, np.random.default_rng(1)
    )
    relevant, train = _row_sets(inputs.relevant), _row_sets(inputs.train_of_evaluated())
    m = len(inputs.users)
    assert sorted(lists.order) == list(range(m))
    for u in range(m):
        good, bad = list(lists.relevant_lists[u]), set(lists.irrelevant_lists[u])
        assert len(set(good)) == K and len(bad) == K
        n_rel = min(K, len(relevant[u]))
        assert set(good[:n_rel]) <= relevant[u]  # relevant items first
        assert not set(good[n_rel:]) & (relevant[u] | train[u])  # then unseen non-relevant
        assert not bad & (relevant[u] | train[u])
    again = experiments.relevance_lists(
        inputs.relevant, inputs.train_of_evaluated(), K, np.random.default_rng(1)
    )
    np.testing.assert_array_equal(lists.relevant_lists, again.relevant_lists)
    np.testing.assert_array_equal(lists.at(0.3), again.at(0.3))
    # cumulative: whoever lost relevance at 30% still has non-relevant lists at 60%
    switched = lists.order[: experiments.switched_count(0.3, m)]
    np.testing.assert_array_equal(lists.at(0.6)[switched], lists.irrelevant_lists[switched])


def test_relevance_lists_need_enough_unseen_items():
    inputs = _inputs(m=4, n_items=20)
    with pytest.raises(ValueError, match="fewer than k"):
        experiments.relevance_lists(
            inputs.relevant, inputs.train_of_evaluated(), 10, np.random.default_rng(0)
        )


def test_relevance_experiment_ends_are_fair():
    inputs = _inputs()
    rows = inputs.train_of_evaluated()
    sim, raw = pairwise.jaccard(rows), pairwise.jaccard(rows, normalise=False)
    frame = experiments.run_relevance(inputs, sim, raw, SETTINGS, seed=3)
    assert list(frame.columns) == ["share", "measure", "value"]
    wide = frame.pivot(index="share", columns="measure", values="value")
    assert list(wide.index) == list(experiments.STEPS)
    for share in (0.0, 1.0):
        for measure in ("SD-P", "SD-NDCG", "PUF-P-Jacc", "PUF-NDCG-Jacc"):
            assert wide.loc[share, measure] == pytest.approx(0.0, abs=1e-12), (share, measure)
    # with every user's own relevant items nobody envies anybody
    assert wide.loc[0.0, ["ME", "MME", "PEU"]].tolist() == [0.0, 0.0, 0.0]
    assert wide.loc[0.0, "P"] == pytest.approx(1.0) and wide.loc[0.0, "NDCG"] == pytest.approx(1.0)
    assert wide.loc[1.0, "P"] == 0.0 and np.isnan(wide.loc[1.0, "Gini-P"])
    assert wide.loc[0.5, "SD-P"] == pytest.approx(0.5)  # half 1, half 0
    assert wide.loc[0.5, "PUF-P-Jacc"] > 0
    assert wide["P"].is_monotonic_decreasing
    # each step's measures are those of evaluate() on the same lists (envy on P@k, UF on
    # the raw Jaccard, PUF on the normalised one)
    lists = experiments.relevance_lists(inputs.relevant, rows, K, np.random.default_rng(3)).at(0.5)
    stored = pairwise.compute("jacc", rows, inputs.users)
    direct = evaluate.evaluate(
        dataclasses.replace(inputs, topk=lists), k=K, similarities={"jacc": stored}, device="cpu"
    )
    for measure in ("ME", "MME", "PEU", "UF", "PUF-P-Jacc", "SD-NDCG"):
        assert wide.loc[0.5, measure] == pytest.approx(direct[measure], rel=1e-9), measure


def test_constant_similarity_gives_c_times_mean_difference():
    scores = np.random.default_rng(5).random(9)
    c = 0.37
    sim = experiments.pairs_to_matrix(np.full(experiments.pair_count(9), c), 9)
    upper = np.triu_indices(9, 1)
    expected = c * np.abs(scores[upper[0]] - scores[upper[1]]).mean()
    assert fairness.puf(scores, sim, device="cpu") == pytest.approx(expected, rel=1e-12)


def test_pairs_round_trip_and_shape_check():
    pairs = np.arange(6, dtype=float)
    matrix = experiments.pairs_to_matrix(pairs, 4)
    np.testing.assert_array_equal(matrix, matrix.T)
    np.testing.assert_array_equal(np.diag(matrix), 0)
    np.testing.assert_array_equal(experiments.matrix_to_pairs(matrix), pairs)
    with pytest.raises(ValueError, match="expected 6"):
        experiments.pairs_to_matrix(pairs[:5], 4)


def test_sampled_similarities_are_normalised_seeded_and_skewed():
    def draw(distribution, shape, seed):
        return experiments.sample_similarities(
            distribution, shape, 5000, np.random.default_rng(seed)
        )

    for dist, shape in (("weibull", 0.5), ("weibull", 50), ("normal", None)):
        values = draw(dist, shape, 0)
        assert values.min() == 0.0 and values.max() == 1.0
        np.testing.assert_array_equal(values, draw(dist, shape, 0))
    assert skew(draw("weibull", 0.5, 0)) > 2  # right-skewed
    assert skew(draw("weibull", 50, 0)) < -0.5  # left-skewed
    assert abs(skew(draw("normal", None, 0))) < 0.2
    with pytest.raises(ValueError, match="unknown distribution"):
        draw("beta", 1, 0)
    np.testing.assert_array_equal(experiments.min_max_vector(np.full(4, 2.0)), np.zeros(4))


def test_similarity_experiment():
    inputs = _inputs()
    jacc = pairwise.compute("jacc", inputs.train_of_evaluated(), inputs.users)
    frame = experiments.run_similarity(inputs, jacc, [0.5, 2, 50], SETTINGS, seed=1)
    assert set(frame["distribution"]) == {"weibull", "normal", "observed"}
    assert set(frame["measure"]) == {"SD-P", "SD-NDCG", "UF", "PUF-P", "PUF-NDCG"}
    # similarity-independent SD is the same for every distribution
    assert frame.loc[frame["measure"] == "SD-P", "value"].nunique() == 1
    observed = frame[frame["distribution"] == "observed"]
    assert observed["skewness"].iloc[0] == pytest.approx(
        skew(experiments.matrix_to_pairs(jacc.sim))
    )
    reference = evaluate.evaluate(inputs, k=K, similarities={"jacc": jacc}, device="cpu")
    puf = observed.set_index("measure")["value"]
    assert puf["PUF-P"] == pytest.approx(reference["PUF-P-Jacc"], rel=1e-9)
    assert puf["UF"] == pytest.approx(reference["UF"], rel=1e-9)
    again = experiments.run_similarity(inputs, jacc, [0.5, 2, 50], SETTINGS, seed=1)
    pd.testing.assert_frame_equal(frame, again)


def test_assignment_by_difference():
    scores = np.array([0.0, 0.1, 1.0])  # pair diffs (0,1)=0.1 (0,2)=1.0 (1,2)=0.9
    sims = np.array([0.2, 0.9, 0.5])
    fair = experiments.assign_by_difference(sims, scores, most_fair=True)
    unfair = experiments.assign_by_difference(sims, scores, most_fair=False)
    np.testing.assert_array_equal(fair, [0.9, 0.2, 0.5])
    np.testing.assert_array_equal(unfair, [0.2, 0.9, 0.5])


def test_extreme_most_fair_is_never_above_most_unfair():
    inputs = _inputs()
    frame = experiments.run_extreme(inputs, SETTINGS, seed=2)
    puf = frame[frame["measure"] == "PUF"].pivot(
        index=["share", "score"], columns="assignment", values="value"
    )
    assert len(puf) == 2 * len(experiments.STEPS)
    assert (puf["MostFair"] <= puf["MostUnfair"] + 1e-15).all()
    assert (puf.loc[0.5, "MostFair"] < puf.loc[0.5, "MostUnfair"]).all()
    assert frame.loc[frame["measure"] == "UF", "value"].notna().all()


def test_gamma_experiments(tmp_path):
    inputs = _inputs(with_genres=True, tmp_path=tmp_path)
    rows = inputs.train_of_evaluated()
    jacc = pairwise.compute("jacc", rows, inputs.users)
    genre = pairwise.genre_js_similarity(rows, inputs.genres)
    models = experiments.run_gamma_models({"A": inputs}, jacc.raw(), genre, [0, 0.5, 1], SETTINGS)
    assert set(models["gamma"]) == {0, 0.5, 1} and set(models["model"]) == {"A"}
    by_gamma = models.pivot(index="gamma", columns="measure", values="value")
    for gamma in (0, 0.5, 1):  # UF on the raw mix, PUF on its min-max form, as evaluate()
        reference = evaluate.evaluate(
            inputs,
            k=K,
            gamma=gamma,
            similarities={"jacc": jacc, "genre": pairwise.Similarity(inputs.users, genre)},
            device="cpu",
        )
        # (at gamma = 0 no pair reaches mean + SD of the left-skewed 1 - JS here: NaN)
        assert by_gamma.loc[gamma, "UF"] == pytest.approx(reference["UF"], rel=1e-9, nan_ok=True)
    assert np.isfinite(by_gamma.loc[[0.5, 1], "UF"]).all()
    mixed = pairwise.min_max(pairwise.uf_similarity(jacc.raw(), genre, 0.5))
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, K)["NDCG"]
    assert by_gamma.loc[0.5, "PUF-NDCG"] == pytest.approx(
        fairness.puf(scores, mixed, device="cpu"), rel=1e-9
    )
    assert by_gamma.loc[1, "PUF-NDCG"] == pytest.approx(reference["PUF-NDCG-Jacc"], rel=1e-9)
    # gamma changes the similarity, so PUF changes
    assert models.pivot(index="gamma", columns="measure", values="value")["PUF-P"].nunique() > 1
    relevance = experiments.run_gamma_relevance(inputs, jacc.raw(), genre, [0, 1], SETTINGS, seed=3)
    assert len(relevance) == 2 * len(experiments.STEPS) * 3
    ends = relevance[
        relevance["share"].isin([0.0, 1.0]) & relevance["measure"].str.startswith("PUF")
    ]
    assert np.allclose(ends["value"], 0.0)


def test_load_split_inputs_match_load_inputs_without_lists():
    inputs = _inputs()
    # rebuild the split frames from the matrices
    rows, cols = inputs.train.nonzero()
    train_users = np.unique(np.concatenate([inputs.users, ["x-all-items"]]))
    train = pd.DataFrame({"user_id": train_users[rows], "item_id": inputs.items[cols]})
    r_rows, r_cols = inputs.relevant.nonzero()
    test = pd.DataFrame({"user_id": inputs.users[r_rows], "item_id": inputs.items[r_cols]})
    split = load_split_inputs(train, test)
    np.testing.assert_array_equal(split.users, inputs.users)
    assert (split.train_of_evaluated() != inputs.train_of_evaluated()).nnz == 0
    assert (split.relevant != inputs.relevant).nnz == 0
    assert split.topk.shape == (len(inputs.users), 0)


def test_similarity_file_of_other_users_is_an_input_error(tmp_path):
    inputs = _inputs(m=6)
    stored = pairwise.compute("jacc", inputs.train_of_evaluated(), inputs.users)
    pairwise.save(tmp_path / "jacc.npz", stored)
    loaded = pairwise.load(tmp_path / "jacc.npz", inputs.users)
    np.testing.assert_array_equal(loaded.sim, stored.sim)
    assert loaded.seconds == stored.seconds
    with pytest.raises(InputError, match=r"jacc\.npz: field 'users'"):
        pairwise.load(tmp_path / "jacc.npz", inputs.users[::-1])


def test_experiment_tables_round_trip(tmp_path):
    frame = pd.DataFrame({"share": [0.0, 0.1], "measure": ["P", "P"], "value": [1.0, 0.9]})
    write_dataset_parquet(frame, "d1", tmp_path / "a.parquet")
    write_dataset_parquet(frame, "d2", tmp_path / "b.parquet")
    both = read_stacked_parquet([tmp_path / "a.parquet", tmp_path / "b.parquet"])
    assert list(both.columns) == ["dataset", "share", "measure", "value"]
    assert both["dataset"].tolist() == ["d1", "d1", "d2", "d2"]
    assert not list(tmp_path.glob(".*.part"))
