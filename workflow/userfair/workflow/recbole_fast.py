"""Faster, leaner equivalents of RecBole 1.2.1 model internals, for paper-scale data.

Call :func:`apply` once before RecBole models are built (``userfair.workflow.recommenders`` does,
next to ``recbole_patches.apply()``); it is idempotent. Each replacement gives what RecBole
gives (tested against RecBole's own method in tests/workflow/test_recbole_fast.py) with memory and
time that follow the data (docs/training.md, "Memory and speed at paper scale"). RecBole's
methods are replaced on its classes; the originals stay in :data:`ORIGINAL`.

- **History rows of the auto-encoders** (MultiVAE, MultiDAE, MacridVAE, RecVAE, CDAE, RaCT,
  DiffRec; every model using ``AutoEncoderMixin``): RecBole keeps the dense
  ``users x longest history`` matrix of ``Dataset.history_item_matrix`` (int64 ids plus
  float64 values), so its memory follows the heaviest user. Here the train history is a CSR
  held as two tensors (``history_indptr``, ``history_indices``) and a batch's
  ``batch x items`` rating rows are scattered from it: memory follows the number of train
  interactions. The rows are the same 0/1 float32 rows as RecBole's, and the build draws the
  same ``torch.randperm`` as RecBole's ``inter_feat.shuffle()``, so a seeded run trains the
  same model. DiffRec's time-aware variant keeps RecBole's own path.
- **NeuMF full-sort prediction**: RecBole's NeuMF has none, so its trainer repeats every
  user ``items`` times and predicts point-wise. Here the scores of a user batch against all
  items are computed in item chunks of bounded size (:data:`NEUMF_CHUNK_FLOATS`): the
  first MLP layer is split into its user and item halves (each computed once), the GMF part
  and the prediction layer become one matrix product. Equal to the point-wise path up to
  float rounding (<= 1e-6).
- **Normalised adjacency of NGCF, LightGCN and NCL**: RecBole fills a ``dok_matrix``
  through a Python dict; here the same matrix ``D^-1/2 A D^-1/2`` (A binary, degrees plus
  1e-7, float64 products cast to float32, NCL's ``diag`` too) is built with
  ``scipy.sparse`` directly.
"""

from __future__ import annotations

import contextlib

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402

# Floats of one intermediate of NeuMF's chunked full-sort prediction (1 MiB in float32): a
# chunk holds users x items x widest layer at most this many. Small chunks stay in the CPU's
# cache: per batch of 24 users x 16,404 items, 2**18 took 0.09 s of CPU and 2**24 0.21 s.
NEUMF_CHUNK_FLOATS = 2**18

# (class, method name) -> RecBole's own function (None where the class only inherited one),
# filled by apply().
ORIGINAL: dict[tuple[type, str], object] = {}

_applied = False


# --------------------------------------------------------------------------- history rows
def build_history(self, dataset) -> None:
    """``AutoEncoderMixin.build_histroy_items`` from a CSR of the train interactions:
    ``history_indptr`` (users + 1) and ``history_indices`` (item ids, grouped by user)."""
    inter = dataset.inter_feat
    # RecBole shuffles a copy of inter_feat first (Dataset._history_matrix): draw the same
    # permutation so the random state, and so the model's initial weights, stay RecBole's.
    torch.randperm(len(inter))
    users = inter[dataset.uid_field].long()
    items = inter[dataset.iid_field].long()
    order = torch.argsort(users, stable=True)
    indptr = torch.zeros(dataset.user_num + 1, dtype=torch.long)
    indptr[1:] = torch.cumsum(torch.bincount(users, minlength=dataset.user_num), 0)
    self.history_indptr = indptr.to(self.device)
    self.history_indices = items[order].to(self.device)


def rating_rows(self, user: torch.Tensor) -> torch.Tensor:
    """``AutoEncoderMixin.get_rating_matrix``: the float32 ``len(user) x n_items`` rows with 1
    at each item of the user's train history, scattered from the CSR."""
    if not hasattr(self, "history_indptr"):  # built by RecBole's own path (DiffRec time-aware)
        return _autoencoder_rows(self, user)
    indptr = self.history_indptr
    user = user.to(indptr.device)
    start = indptr[user]
    counts = indptr[user + 1] - start
    ends = torch.cumsum(counts, 0)
    total = int(ends[-1]) if len(ends) else 0
    within = torch.arange(total, device=indptr.device) - torch.repeat_interleave(
        ends - counts, counts
    )
    cols = self.history_indices[torch.repeat_interleave(start, counts) + within]
    rows = torch.repeat_interleave(torch.arange(len(user), device=indptr.device), counts)
    rating = torch.zeros(len(user), self.n_items, device=self.device)
    rating[rows.to(self.device), cols.to(self.device)] = 1.0
    return rating


def _autoencoder_rows(self, user):
    from recbole.model.abstract_recommender import AutoEncoderMixin

    return ORIGINAL[(AutoEncoderMixin, "get_rating_matrix")](self, user)


# --------------------------------------------------------------------------- NeuMF
def neumf_full_sort_predict(self, interaction) -> torch.Tensor:
    """NeuMF's scores of each user of the batch for every item (``sigmoid`` of the logits as
    in ``NeuMF.predict``), flattened like a full-sort prediction: ``len(user) * n_items``."""
    user = interaction[self.USER_ID]
    mlp = list(self.mlp_layers.mlp_layers)
    if self.training or any(isinstance(m, torch.nn.BatchNorm1d) for m in mlp):
        raise NotImplementedError  # RecBole's trainer then predicts point-wise
    n_items, device = self.n_items, self.device
    weight, bias = self.predict_layer.weight[0], self.predict_layer.bias[0]
    widths = [self.mlp_embedding_size, 1] + [
        m.out_features for m in mlp if isinstance(m, torch.nn.Linear)
    ]
    step = max(1, NEUMF_CHUNK_FLOATS // max(1, len(user) * max(widths)))
    if self.mf_train:
        user_mf = self.user_mf_embedding(user) * weight[: self.mf_embedding_size]
    if self.mlp_train:
        first = next(i for i, m in enumerate(mlp) if isinstance(m, torch.nn.Linear))
        linear, rest = mlp[first], mlp[first + 1 :]
        half = self.mlp_embedding_size
        user_h = self.user_mlp_embedding(user) @ linear.weight[:, :half].T + linear.bias
        w_mlp = weight[self.mf_embedding_size :] if self.mf_train else weight
    scores = torch.empty(len(user), n_items, device=device)
    for lo in range(0, n_items, step):
        items = torch.arange(lo, min(lo + step, n_items), device=device)
        logits = torch.zeros(len(user), len(items), device=device) + bias
        if self.mf_train:
            logits += user_mf @ self.item_mf_embedding(items).T
        if self.mlp_train:
            item_h = self.item_mlp_embedding(items) @ linear.weight[:, half:].T
            hidden = user_h[:, None, :] + item_h[None, :, :]
            for module in rest:
                if isinstance(module, torch.nn.ReLU):
                    hidden = hidden.relu_()  # in place: the chunk's own tensor
                elif not isinstance(module, torch.nn.Dropout):  # identity in eval mode
                    hidden = module(hidden)
            logits += hidden @ w_mlp
        scores[:, lo : lo + len(items)] = torch.sigmoid(logits)
    return scores.view(-1)


# --------------------------------------------------------------------------- adjacency
def normalised_adjacency(interaction_matrix, n_users: int, n_items: int):
    """(``D^-1/2 A D^-1/2`` as a torch sparse float32 tensor, the degree vector ``diag``) of
    the bipartite graph, exactly as RecBole's ``get_norm_adj_mat`` computes them."""
    coo = sp.coo_matrix(interaction_matrix)
    n = n_users + n_items
    row = np.concatenate([coo.row, coo.col + n_users]).astype(np.int64)
    col = np.concatenate([coo.col + n_users, coo.row]).astype(np.int64)
    adjacency = sp.csr_matrix((np.ones(len(row), dtype=np.float32), (row, col)), shape=(n, n))
    adjacency.sum_duplicates()
    degree = np.diff(adjacency.indptr)  # entries per row: RecBole's (A > 0).sum(axis=1)
    diag = np.power(degree + 1e-7, -0.5)
    rows = np.repeat(np.arange(n, dtype=np.int64), degree)
    cols = adjacency.indices.astype(np.int64)
    values = torch.from_numpy((diag[rows] * diag[cols]).astype(np.float32))
    laplacian = torch.sparse_coo_tensor(
        torch.from_numpy(np.stack([rows, cols])), values, (n, n), check_invariants=False
    )
    return laplacian, diag


def norm_adj_mat(self):
    """``get_norm_adj_mat`` of NGCF and LightGCN."""
    return normalised_adjacency(self.interaction_matrix, self.n_users, self.n_items)[0]


def norm_adj_mat_ncl(self):
    """``NCL.get_norm_adj_mat``, which also keeps the degree vector as ``self.diag``."""
    laplacian, diag = normalised_adjacency(self.interaction_matrix, self.n_users, self.n_items)
    self.diag = torch.from_numpy(diag).to(self.device)
    return laplacian


# --------------------------------------------------------------------------- apply
def _replacements():
    from recbole.model.abstract_recommender import AutoEncoderMixin
    from recbole.model.general_recommender import NCL, NGCF, LightGCN, NeuMF

    return {
        (AutoEncoderMixin, "build_histroy_items"): build_history,
        (AutoEncoderMixin, "get_rating_matrix"): rating_rows,
        (NeuMF, "full_sort_predict"): neumf_full_sort_predict,
        (NGCF, "get_norm_adj_mat"): norm_adj_mat,
        (LightGCN, "get_norm_adj_mat"): norm_adj_mat,
        (NCL, "get_norm_adj_mat"): norm_adj_mat_ncl,
    }


def _install(methods: dict) -> None:
    for (cls, name), function in methods.items():
        if function is None:
            if name in cls.__dict__:
                delattr(cls, name)
        else:
            setattr(cls, name, function)


def apply() -> None:
    """Replace RecBole's methods by the ones above (idempotent); keep the originals in
    :data:`ORIGINAL`."""
    global _applied
    if _applied:
        return
    methods = _replacements()
    for cls, name in methods:
        ORIGINAL[(cls, name)] = cls.__dict__.get(name)
    _install(methods)
    _applied = True


@contextlib.contextmanager
def recbole_methods():
    """RecBole's own methods back while the block runs (to compare with them: tests and the
    before/after measurements of docs/performance.md)."""
    apply()
    _install(ORIGINAL)
    try:
        yield
    finally:
        _install(_replacements())
