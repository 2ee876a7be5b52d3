"""Runtime fixes that let RecBole 1.2.1 run on numpy 2, torch >= 2.6 and scipy >= 1.15: the
one place for RecBole version fixes.

Call :func:`apply` once before RecBole is used; :func:`userfair.recbole.register` also calls
:func:`apply_plugin_fixes` (``valid_metric`` outside ``metrics``; ray and hyperopt, which
``recbole.quick_start`` imports, on numpy 2) (``userfair.workflow.recommenders`` does). Each fix
names the upstream problem and is tested in tests/test_recbole_patches.py. RecBole's
``quick_start`` package imports ``ray`` at import time; this project never imports it
(training goes through Config/Trainer directly), so ray is not needed.
"""

from __future__ import annotations

import logging
import types

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402

from userfair.files import safe_pth  # noqa: E402
from userfair.files.io import read_pth  # noqa: E402

# numpy 2 removed these aliases (NEP 52). RecBole's Config.compatibility_settings assigns
# ``np.float = np.float_`` etc., which raises AttributeError on numpy 2 before any training,
# and recbole.evaluator.metrics / recbole.data.interaction then use ``np.float``.
LEGACY_NUMPY_ALIASES = {
    "bool": np.bool_,
    "int": np.int_,
    "float": np.float64,
    "complex": np.complex128,
    "object": np.object_,
    "str": np.str_,
    "long": np.int_,
    "unicode": np.str_,
}

log = logging.getLogger(__name__)

_applied = False


def _compatibility_settings(self) -> None:
    """Replacement of recbole.config.Config.compatibility_settings that only uses names
    numpy 2 still has and never overwrites an attribute numpy defines."""
    for name, target in LEGACY_NUMPY_ALIASES.items():
        if name not in np.__dict__:
            setattr(np, name, target)


def _dok_update(self, data: dict) -> None:
    """scipy >= 1.15 dropped ``dok_matrix._update`` (a raw dict.update without checks);
    RecBole's NGCF, NCL, LightGCN, ... build their normalised adjacency with it."""
    self._dict.update(data)


def checkpoint_state(state):
    """RecBole's checkpoint ``state`` with its Config (a pickled object) replaced by the
    model's name, the only part of it RecBole reads back (``resume_checkpoint``)."""
    config = state.get("config") if isinstance(state, dict) else None
    if config is None or isinstance(config, dict):
        return state
    return {**state, "config": {"model": config["model"]}}


class _SafeCheckpointTorch(types.ModuleType):
    """``torch`` as seen by recbole.trainer.trainer, whose ``save`` and ``load`` write and
    read checkpoints in the format of :mod:`userfair.files.safe_pth` (no pickle; loading runs no
    code): RecBole's own checkpoints pickle its Config, and torch >= 2.6 refuses them with
    ``weights_only=True``, while ``weights_only=False`` would run whatever a crafted file
    names. The Config is stored as the model's name (:func:`checkpoint_state`); the model's
    ``other_parameter`` (tensors, numpy arrays, scipy sparse matrices) is kept. Everything
    else is plain torch."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def save(self, obj, f, *args, **kwargs):
        safe_pth.dump(checkpoint_state(obj), f)

    def load(self, f, map_location=None, **kwargs):
        return read_pth(f, map_location=map_location)


def apply() -> None:
    """Install every fix (idempotent)."""
    global _applied
    if _applied:
        return
    import recbole.config.configurator as configurator
    import recbole.trainer.trainer as trainer

    configurator.Config.compatibility_settings = _compatibility_settings
    _compatibility_settings(None)
    if not hasattr(sp.dok_matrix, "_update"):
        if not hasattr(sp.dok_matrix((1, 1)), "_dict"):
            raise RuntimeError(
                f"scipy {scipy.__version__}: dok_matrix has neither _update "
                "nor _dict; RecBole's graph models cannot be patched"
            )
        sp.dok_matrix._update = _dok_update
    if not isinstance(trainer.torch, _SafeCheckpointTorch):
        trainer.torch = _SafeCheckpointTorch(torch)
    _applied = True


# --- fixes the metrics plugin (userfair.recbole) needs -----------------------------------


# --- the config ------------------------------------------------------------------------


def _valid_metric_fix(original):
    """RecBole 1.2.1's default ``valid_metric`` is MRR@10; with a ``metrics`` list
    without MRR (``["NDCG", "PUF_P_Cos", "UF"]``) its trainer fails after the first epoch
    (KeyError 'mrr@10'). Add the valid metric to the evaluated metrics instead (a
    ranking metric to ranking metrics only), so the model is still selected on it."""

    def set_default_parameters(self):
        settings = self.final_config_dict
        metrics = settings.get("metrics")
        metrics = [metrics] if isinstance(metrics, str) else list(metrics or [])
        valid = str(settings.get("valid_metric") or "").split("@")[0]
        from recbole.evaluator.register import metric_types

        lower = [m.lower() for m in metrics]
        types = {metric_types.get(m) for m in lower}
        if valid and valid.lower() not in lower and types == {metric_types.get(valid.lower())}:
            log.warning("valid_metric %s is not among metrics %s: added", valid, metrics)
            settings["metrics"] = metrics + [valid]
        original(self)

    set_default_parameters.userfair = True
    return set_default_parameters


def _patch_config() -> None:
    from recbole.config.configurator import Config

    method = Config._set_default_parameters
    if not getattr(method, "userfair", False):
        Config._set_default_parameters = _valid_metric_fix(method)


def _ray_fixes() -> None:
    """ray 2.6.3 (the newest RecBole 1.2.1 allows; imported by recbole.quick_start) reads
    ``np.bool8``, which numpy 2 removed."""
    if "bool8" not in np.__dict__:
        np.bool8 = np.bool_


class _GeneratorRandom(types.ModuleType):
    """``numpy`` as seen by recbole.trainer.hyper_tuning, whose exhaustive search seeds
    ``np.random.RandomState``: hyperopt >= 0.2.7 samples with ``rng.integers``, which only
    numpy's Generator has. Everything else is numpy itself."""

    def __init__(self):
        super().__init__("numpy")
        self.random = types.SimpleNamespace(RandomState=np.random.default_rng)

    def __getattr__(self, name):
        return getattr(np, name)


def _hyperopt_fixes() -> None:
    import recbole.trainer.hyper_tuning as hyper_tuning

    if not isinstance(hyper_tuning.np, _GeneratorRandom):
        hyper_tuning.np = _GeneratorRandom()


def apply_plugin_fixes() -> None:
    """The fixes :func:`userfair.recbole.register` needs on top of :func:`apply`: a
    ``valid_metric`` outside ``metrics`` is evaluated anyway, and ``recbole.quick_start``'s
    ray and hyperopt run on numpy 2 (idempotent)."""
    _ray_fixes()
    _hyperopt_fixes()
    _patch_config()
