"""User vectors of a trained model, for PUF's ``Vec`` similarity (``embedding:MODEL``,
docs/method.md#other-user-similarities). Which representation is read follows from what
the trained network holds (:func:`representation`), so no list of model names is kept:

- ``mf`` (NeuMF): the MF part's user embedding table ``user_mf_embedding`` (the MLP
  part's table is not used);
- ``encoder-mean`` (MultiVAE): the encoder's mean ``mu`` of the user's train history
  (eval mode: no dropout);
- ``propagated`` (LightGCN, NCL, NGCF): ``forward()``'s users, what the model scores with
  (LightGCN and NCL: the layer mean; NGCF: the concatenated layers, the ego embeddings
  first);
- ``table`` (BPR): the user embedding table ``user_embedding``.

KNN models (``userfair.workflow.models``' cost kinds ``user-knn`` and ``item-knn``) have no user
representation and are refused by name, as is a network with none of the above.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from userfair._extras import require

NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from userfair.files.io import InputError, read_pth  # noqa: E402
from userfair.workflow import models, recommenders, shared_dataset  # noqa: E402

#: Rows of users per encoder batch (``encoder-mean``).
BATCH = 4096


def check_model(model: str) -> None:
    """InputError for a KNN model of the registry (no user embedding to read)."""
    if models.get(model).cost_kind in ("user-knn", "item-knn"):
        raise InputError(
            f"embedding:{model}: a KNN model has no user embedding; use a model that learns "
            "user representations (docs/method.md#other-user-similarities)"
        )


def representation(net, model: str) -> str:
    """Which user representation of the trained ``net`` is read (the module docstring)."""
    if hasattr(net, "user_mf_embedding"):
        return "mf"
    if hasattr(net, "get_rating_matrix") and hasattr(net, "encoder"):
        return "encoder-mean"
    if hasattr(net, "norm_adj_matrix") or hasattr(net, "norm_adj_mat"):
        return "propagated"
    if hasattr(net, "user_embedding"):
        return "table"
    raise InputError(f"embedding:{model}: the trained model holds no user representation")


def user_representation(net, model: str, users: np.ndarray) -> np.ndarray:
    """(len(users), d) float64 vectors of the internal user ids ``users`` of a trained
    RecBole ``net`` of the model ``model`` (:func:`representation`)."""
    kind = representation(net, model)
    net.eval()
    with torch.no_grad():
        index = torch.as_tensor(users, dtype=torch.long)
        if kind == "table":
            table = net.user_embedding.weight[index]
        elif kind == "mf":
            table = net.user_mf_embedding.weight[index]
        elif kind == "encoder-mean":
            parts = []
            for start in range(0, len(index), BATCH):
                batch = index[start : start + BATCH]
                rating = net.get_rating_matrix(batch.to(net.device))
                parts.append(net.forward(rating)[1].cpu())
            table = torch.cat(parts) if parts else torch.zeros((0, 0))
        else:  # the graph models: forward() gives the propagated users first
            table = net.forward()[0][index]
    return table.detach().cpu().numpy().astype(np.float64)


def export_user_vectors(
    model: str,
    params: dict,
    checkpoint,
    data_dir,
    dataset: str,
    workdir,
    training,
    *,
    shared=None,
) -> pd.DataFrame:
    """The ``user_id`` (external token) and ``e0 .. e{d-1}`` of every user of the split
    (RecBole's padding user left out) from a trained grid point's checkpoint, as
    ``userfair.similarity.registry.read_user_vectors`` reads them; the model is rebuilt as
    ``recommenders.export_topk`` rebuilds it (no retraining)."""
    check_model(model)
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    shared = shared_dataset.read_shared(shared) if shared is not None else None
    state = read_pth(checkpoint)
    with contextlib.chdir(workdir):
        run = recommenders.prepare(
            model, params, data_dir, dataset, workdir, training, shared=shared
        )
        run.model.load_state_dict(state["state_dict"])
        run.model.load_other_parameter(state.get("other_parameter"))
        uid = run.config["USER_ID_FIELD"]
        internal = np.arange(1, run.dataset.user_num)  # 0 is RecBole's padding
        vectors = user_representation(run.model, model, internal)
        tokens = np.asarray(run.dataset.id2token(uid, internal)).astype(str)
    frame = pd.DataFrame(vectors, columns=[f"e{j}" for j in range(vectors.shape[1])])
    frame.insert(0, "user_id", tokens)
    return frame
