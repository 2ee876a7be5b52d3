"""User-based KNN as a RecBole general recommender (RecBole has none), and
RecBole's ItemKNN without its precomputed users x items score matrix.

``sim(u, v) = |H_u & H_v| / (sqrt(|H_u| |H_v|) + shrink)`` between the binarised train rows
of users u != v; each user keeps its K most similar users (positive similarity only); the
score of item i for u is ``sum over neighbours v of sim(u, v) * x_vi``. Like RecBole's
ItemKNN it is non-trainable: one "epoch" builds the neighbourhoods, then RecBole's trainer,
full-sort evaluation and our top-k export use it like any other model. Ties at the K-th
neighbour are broken by numpy's argpartition (deterministic for a given input).
"""

from __future__ import annotations

import logging

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402
from recbole.model.abstract_recommender import GeneralRecommender  # noqa: E402
from recbole.model.general_recommender import itemknn  # noqa: E402
from recbole.utils import InputType, ModelType  # noqa: E402

from userfair.engine._backend import binary_csr  # noqa: E402

log = logging.getLogger(__name__)

# Dense similarity block of at most this many float64 cells (about 256 MB).
BLOCK_CELLS = 32_000_000


def neighbour_weights(interactions: sp.spmatrix, k: int, shrink: float = 0.0) -> sp.csr_matrix:
    """W (users x users): row u holds u's top-k cosine neighbours (v != u, sim > 0)."""
    if k < 1:
        raise ValueError(f"UserKNN: k must be >= 1, got {k}")
    if shrink < 0:
        raise ValueError(f"UserKNN: shrink must be >= 0, got {shrink}")
    x = binary_csr(interactions)
    n_users = x.shape[0]
    norms = np.sqrt(np.asarray(x.sum(axis=1)).ravel())
    xt = x.T.tocsc()
    block = max(1, BLOCK_CELLS // max(n_users, 1))
    rows, cols, vals = [], [], []
    for start in range(0, n_users, block):
        stop = min(start + block, n_users)
        overlap = (x[start:stop] @ xt).toarray()
        denom = norms[start:stop, None] * norms[None, :] + shrink
        sim = np.divide(overlap, denom, out=np.zeros_like(overlap), where=denom > 0)
        sim[np.arange(stop - start), np.arange(start, stop)] = 0.0
        top = min(k, n_users - 1) if n_users > 1 else 0
        if top == 0:
            continue
        idx = np.argpartition(-sim, top - 1, axis=1)[:, :top]
        top_sim = np.take_along_axis(sim, idx, axis=1)
        keep = top_sim > 0
        rows.append(np.repeat(np.arange(start, stop), top)[keep.ravel()])
        cols.append(idx[keep])
        vals.append(top_sim[keep])
        log.info("UserKNN: neighbours of users %d..%d of %d", start, stop - 1, n_users)
    if not rows:
        return sp.csr_matrix((n_users, n_users))
    return sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_users, n_users),
    )


def scores(weights: sp.csr_matrix, interactions: sp.csr_matrix, users: np.ndarray) -> np.ndarray:
    """Dense scores (len(users) x items): sim-weighted sum of the neighbours' rows."""
    return np.asarray((weights[users] @ interactions).todense())


class UserKNN(GeneralRecommender):
    """User-based KNN on RecBole's interaction matrix of the train split."""

    input_type = InputType.POINTWISE
    type = ModelType.TRADITIONAL

    def __init__(self, config, dataset):
        super().__init__(config, dataset)
        self.k = int(config["k"])
        self.shrink = float(config["shrink"] or 0.0)
        self.interactions = binary_csr(dataset.inter_matrix(form="csr"))
        self.weights = neighbour_weights(self.interactions, self.k, self.shrink)
        # RecBole's optimiser and checkpoint need one parameter.
        self.fake_loss = torch.nn.Parameter(torch.zeros(1))

    def forward(self, user, item):  # pragma: no cover - RecBole's abstract API
        raise NotImplementedError("UserKNN scores through predict/full_sort_predict")

    def calculate_loss(self, interaction):
        return torch.nn.Parameter(torch.zeros(1))

    def predict(self, interaction):
        users = interaction[self.USER_ID].cpu().numpy()
        items = interaction[self.ITEM_ID].cpu().numpy()
        pair = self.weights[users].multiply(self.interactions[:, items].T.tocsr()).sum(axis=1)
        return torch.from_numpy(np.asarray(pair, dtype=np.float32).ravel()).to(self.device)

    def full_sort_predict(self, interaction):
        users = interaction[self.USER_ID].cpu().numpy()
        block = scores(self.weights, self.interactions, users).astype(np.float32)
        return torch.from_numpy(block.ravel()).to(self.device)


class ItemKNN(itemknn.ItemKNN):
    """RecBole's ItemKNN (same similarity, same scores) that computes the scores of each
    evaluation batch, ``X[users] @ W``, instead of holding RecBole's ``pred_mat = X @ W``
    as a LIL matrix: that matrix has up to users x items entries and does not fit in
    memory on ml-20m. Named ItemKNN so RecBole applies ItemKNN's defaults and trainer."""

    def __init__(self, config, dataset):
        GeneralRecommender.__init__(self, config, dataset)
        self.k = config["k"]
        self.shrink = config["shrink"] if "shrink" in config else 0.0
        self.interaction_matrix = dataset.inter_matrix(form="csr").astype(np.float32)
        _, self.w = itemknn.ComputeSimilarity(
            self.interaction_matrix, topk=self.k, shrink=self.shrink, method="item"
        ).compute_similarity()
        self.w = self.w.tocsr()
        self.fake_loss = torch.nn.Parameter(torch.zeros(1))
        self.other_parameter_name = ["w"]

    def predict(self, interaction):
        users = interaction[self.USER_ID].cpu().numpy()
        items = interaction[self.ITEM_ID].cpu().numpy()
        pair = self.interaction_matrix[users].multiply(self.w[:, items].T.tocsr()).sum(axis=1)
        return torch.from_numpy(np.asarray(pair, dtype=np.float32).ravel()).to(self.device)

    def full_sort_predict(self, interaction):
        users = interaction[self.USER_ID].cpu().numpy()
        block = (self.interaction_matrix[users] @ self.w).toarray().astype(np.float32)
        return torch.from_numpy(block.ravel()).to(self.device)
