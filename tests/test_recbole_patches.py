"""Each fix of userfair.recbole_patches, tested where RecBole 1.2.1 breaks without it."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from userfair import recbole_patches

recbole_patches.apply()


class Pickled:
    """Stands in for RecBole's Config, which its checkpoints pickle."""

    def __init__(self, value):
        self.value = value


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


def test_recbole_trainer_loads_its_pickled_checkpoints_and_torch_stays_safe(tmp_path):
    """torch >= 2.6 loads with weights_only=True; RecBole's checkpoints pickle the Config."""
    import recbole.trainer.trainer as trainer

    path = tmp_path / "checkpoint.pth"
    torch.save({"state_dict": {"w": torch.ones(2)}, "config": Pickled(3)}, path)
    loaded = trainer.torch.load(path, map_location="cpu")
    assert loaded["config"].value == 3
    assert trainer.torch.zeros is torch.zeros  # everything else is plain torch
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)  # the rest of the process keeps torch's safe default


def test_apply_is_idempotent():
    import recbole.trainer.trainer as trainer

    proxy = trainer.torch
    recbole_patches.apply()
    assert trainer.torch is proxy


def test_training_never_imports_ray_or_quick_start():
    """recbole.quick_start imports ray (not installed); the project does not use it."""
    code = (
        "import sys, userfair.workflow.recommenders; "
        "bad = [m for m in ('ray', 'recbole.quick_start') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
