"""User vectors of a trained model, for PUF's ``Vec`` similarity (``embedding:MODEL``,
docs/method.md#other-user-similarities): which representation each model gives.

=========  ===========================================================================
model      the user's vector
=========  ===========================================================================
BPR        its user embedding table (``user_embedding``)
NeuMF      the MF part's user embedding table (``user_mf_embedding``; the MLP part's is
           not used)
LightGCN   the layer-mean of the propagated embeddings (``forward()``'s users: what it
           scores with)
NCL        as LightGCN (``forward()``'s users)
NGCF       the concatenation of the propagated layers (``forward()``'s users)
MultiVAE   the encoder's mean ``mu`` of the user's train history (eval mode: no dropout)
=========  ===========================================================================

KNN models (UserKNN, ItemKNN) have no user representation and are refused by name; so is
any model not in the table.
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

from userfair.io import InputError, read_pth  # noqa: E402
from userfair.workflow import recommenders  # noqa: E402

#: The models with a user representation, and which one (the module docstring).
LAYERS = {
    "BPR": "user_embedding",
    "NeuMF": "user_mf_embedding (the MF part)",
    "LightGCN": "forward(): layer-mean of the propagated embeddings",
    "NCL": "forward(): layer-mean of the propagated embeddings",
    "NGCF": "forward(): concatenated propagated layers",
    "MultiVAE": "encoder mean mu of the train history",
}
#: Rows of users per MultiVAE encoder batch.
BATCH = 4096


def check_model(model: str) -> None:
    """InputError for a model without a user representation (KNN ones named as such)."""
    if "KNN" in model:
        raise InputError(
            f"embedding:{model}: a KNN model has no user embedding; use one of {list(LAYERS)}"
        )
    if model not in LAYERS:
        raise InputError(
            f"embedding:{model}: no user representation known; use one of {list(LAYERS)}"
        )


def user_representation(net, model: str, users: np.ndarray) -> np.ndarray:
    """(len(users), d) float64 vectors of the internal user ids ``users`` of a trained
    RecBole ``net`` of class ``model`` (see :data:`LAYERS`)."""
    check_model(model)
    net.eval()
    with torch.no_grad():
        index = torch.as_tensor(users, dtype=torch.long)
        if model == "BPR":
            table = net.user_embedding.weight[index]
        elif model == "NeuMF":
            table = net.user_mf_embedding.weight[index]
        elif model == "MultiVAE":
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
    ``userfair.similarities.read_user_vectors`` reads them; the model is rebuilt as
    ``recommenders.export_topk`` rebuilds it (no retraining)."""
    check_model(model)
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    shared = recommenders.read_shared(shared) if shared is not None else None
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
