"""Each fix of userfair.recbole_patches, tested where RecBole 1.2.1 breaks without it."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from userfair import recbole_patches

recbole_patches.apply()


class Crafted:
    """A pickle that runs a shell command when loaded with weights_only=False."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_config_builds_on_numpy2(tmp_path):
    """Config.compatibility_settings assigned np.float_ (gone in numpy 2)."""
    from recbole.config import Config

    config = Config(
        model="BPR",
        dataset="anything",
        config_dict={"data_path": str(tmp_path), "show_progress": False},
    )
    assert config["model"] == "BPR"


def test_recbole_metrics_use_the_restored_float_alias():
    """recbole.evaluator.metrics computes MRR/MAP/NDCG with np.float (removed in numpy 2)."""
    from recbole.evaluator.metrics import MRR

    result = MRR({"topk": [3], "metric_decimal_place": 6}).metric_info(
        np.array([[False, True, False], [False, False, False]])
    )
    np.testing.assert_allclose(result, [[0, 0.5, 0.5], [0, 0, 0]])
    assert result.dtype == np.float64


def test_aliases_never_replace_what_numpy_defines():
    assert np.bool is np.bool_  # numpy 2 defines np.bool itself
    assert np.float is np.float64 and np.int is np.int_


def test_dok_update_fills_the_matrix_like_scipy_before_1_15():
    """NGCF/NCL build their adjacency with dok_matrix._update (removed from scipy)."""
    adjacency = sp.dok_matrix((3, 3), dtype=np.float32)
    adjacency._update({(0, 1): 1, (2, 0): 1})
    np.testing.assert_array_equal(adjacency.toarray(), [[0, 1, 0], [0, 0, 0], [1, 0, 0]])


def test_ngcf_builds_its_normalised_adjacency():
    from recbole.model.general_recommender.ngcf import NGCF

    model = NGCF.__new__(NGCF)
    model.n_users, model.n_items = 2, 3
    model.interaction_matrix = sp.coo_matrix(([1.0, 1.0], ([0, 1], [1, 2])), shape=(2, 3))
    laplacian = model.get_norm_adj_mat().to_dense().numpy()
    assert laplacian.shape == (5, 5)
    assert laplacian[0, 2 + 1] == pytest.approx(1.0, rel=1e-5)  # degree 1 on both ends


def test_recbole_trainer_checkpoints_hold_no_pickle_and_a_pickled_one_is_refused(tmp_path):
    """RecBole's trainer saves its checkpoints (Config included) through userfair.files.safe_pth:
    the file loads with torch's weights_only=True as it is, the Config kept as the model's name,
    other_parameter (numpy, scipy sparse) intact. A pickle (RecBole's own format, a crafted
    file) is refused by the trainer's load without running anything."""
    import recbole.trainer.trainer as trainer
    from recbole.config import Config

    from userfair.files.io import UnsafeFileError

    config = Config(model="BPR", dataset="anything", config_dict={"data_path": str(tmp_path)})
    other = {"w": sp.random(6, 5, density=0.4, format="csr", random_state=1), "m": np.eye(3)}
    path = tmp_path / "checkpoint.pth"
    state = {"config": config, "epoch": 2, "state_dict": {"w": torch.ones(2)}}
    trainer.torch.save({**state, "other_parameter": other}, str(path), pickle_protocol=4)
    assert torch.load(path, weights_only=True)["format"] == "userfair-safe-pth/1"
    loaded = trainer.torch.load(str(path), map_location="cpu")
    assert loaded["config"] == {"model": "BPR"} and loaded["epoch"] == 2
    assert torch.equal(loaded["state_dict"]["w"], torch.ones(2))
    assert (loaded["other_parameter"]["w"] != other["w"]).nnz == 0
    assert type(loaded["other_parameter"]["w"]) is type(other["w"])
    np.testing.assert_array_equal(loaded["other_parameter"]["m"], np.eye(3))
    assert trainer.torch.zeros is torch.zeros  # everything else is plain torch

    marker = tmp_path / "ran"
    torch.save({"state_dict": {}, "config": Crafted(marker)}, path)
    with pytest.raises(UnsafeFileError, match="posix.system"):
        trainer.torch.load(str(path), map_location="cpu")
    assert not marker.exists()


def test_apply_is_idempotent():
    import recbole.trainer.trainer as trainer

    proxy = trainer.torch
    recbole_patches.apply()
    assert trainer.torch is proxy


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_training_never_imports_ray_or_quick_start():
    """recbole.quick_start imports ray (not installed); the project does not use it."""
    code = (
        "import sys, userfair.workflow.recommenders; "
        "bad = [m for m in ('ray', 'recbole.quick_start') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
