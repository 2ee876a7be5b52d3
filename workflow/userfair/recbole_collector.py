"""RecBole 1.2.1's evaluation collector, extended for the fairness metrics of
:mod:`userfair.recbole`: RecBole's collector gathers neither the users of a batch, nor their
positive items, nor the training matrix; :func:`patch_collector` wraps
``recbole.evaluator.Collector`` so that it also keeps those three, only when a fairness
metric asks for them (:data:`NEED_USERS`, :data:`NEED_POSITIVE`, :data:`NEED_TRAIN`), and
leaves everything RecBole's own metrics read untouched. With ``userfair_grade`` (the
graded measures) it also keeps the grades of the training and of the evaluated split
(:data:`NEED_GRADES`, set by the wrapped ``Trainer.evaluate``)."""

from __future__ import annotations

import itertools
import types
from dataclasses import dataclass

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy.sparse as sp  # noqa: E402

#: What the fairness metrics need beyond RecBole's ``rec.items`` (the collected top-k):
#: the user ids and positive items of each evaluated user, and the training matrix.
NEED_USERS = "userfair.users"
NEED_POSITIVE = "userfair.positive"
NEED_TRAIN = "userfair.train"
#: With ``userfair_grade`` in the config: the grades of the evaluated split's interactions
#: (kept per evaluation, beside the users and positive items).
NEED_GRADES = "userfair.grades"

_serial = itertools.count()


@dataclass(frozen=True, eq=False)
class TrainMatrix:
    """The binary (users, items) training matrix in RecBole's internal ids, as the
    collector keeps it: shared, never copied (``deepcopy`` and ``cpu`` return it)."""

    matrix: sp.csr_matrix
    serial: int
    user_tokens: np.ndarray | None = None  # external user id of each internal one
    item_tokens: np.ndarray | None = None  # external item id of each internal one
    grades: sp.csr_matrix | None = None  # the grades (``userfair_grade``), else None

    def cpu(self):  # Collector.get_data_struct calls .cpu() on everything it holds
        return self

    def __deepcopy__(self, memo):
        return self


def train_matrix(dataset, grade: str | None = None) -> TrainMatrix:
    """The binarised training interactions of a RecBole dataset (rows: internal user ids,
    columns: internal item ids, padding 0 included and empty); with ``grade`` (a numeric
    field RecBole loaded) also their grades (:func:`grade_matrix`)."""
    matrix = dataset.inter_matrix(form="csr").astype(np.float64)
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    matrix.eliminate_zeros()
    matrix.sort_indices()
    users = np.asarray(dataset.field2id_token[dataset.uid_field]).astype(str)
    items = np.asarray(dataset.field2id_token[dataset.iid_field]).astype(str)
    grades = None if grade is None else grade_matrix(dataset, grade)
    return TrainMatrix(matrix.tocsr(), next(_serial), users, items, grades)


def grade_matrix(dataset, grade: str) -> sp.csr_matrix:
    """(users, items) CSR of the ``grade`` field of a RecBole dataset's interactions, in
    internal ids, the pattern of its binarised interactions: a repeated (user, item) keeps
    its largest grade, as ``userfair.files.inputs`` does. ValueError naming the config key when
    the field is not loaded or a grade is not a finite number >= 0."""
    feat = dataset.inter_feat
    if grade not in feat.columns:
        raise ValueError(
            f"userfair_grade: {grade!r} is not a field RecBole loaded for {dataset.dataset_name} "
            f"(fields: {list(feat.columns)}); add it to load_col's inter fields"
        )
    users = feat[dataset.uid_field].numpy().astype(np.int64)
    items = feat[dataset.iid_field].numpy().astype(np.int64)
    values = feat[grade].numpy().astype(np.float64)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        raise ValueError(
            f"userfair_grade: field {grade!r} of {dataset.dataset_name} has {values[bad][0]!r}; "
            "a grade must be a finite number >= 0"
        )
    n = dataset.item_num
    keys = users * n + items
    order = np.lexsort((values, keys))  # by pair, each pair's largest grade last
    keys, values = keys[order], values[order]
    last = np.r_[keys[1:] != keys[:-1], True]
    keys, values = keys[last], values[last]
    return sp.csr_matrix((values, (keys // n, keys % n)), shape=(dataset.user_num, n))


@dataclass(frozen=True, eq=False)
class GradeMatrix:
    """The grades of the evaluated split, internal ids, held like :class:`TrainMatrix`."""

    matrix: sp.csr_matrix

    def cpu(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _data_collect(original):
    def data_collect(self, train_data):
        original(self, train_data)
        if self.register.need(NEED_TRAIN):
            grade = self.config["userfair_grade"]
            self.data_struct.set(NEED_TRAIN, train_matrix(train_data.dataset, grade))

    data_collect.userfair = True
    return data_collect


def _eval_batch_collect(original):
    def eval_batch_collect(self, scores_tensor, interaction, positive_u, positive_i):
        original(self, scores_tensor, interaction, positive_u, positive_i)
        if not self.register.need(NEED_USERS):
            return
        if scores_tensor.dim() != 2 or scores_tensor.shape[0] != len(interaction):
            raise ValueError(
                "the userfair metrics need full-sort evaluation (eval_args mode: full)"
            )
        import torch

        users = interaction[self.config["USER_ID_FIELD"]].detach().cpu()
        offset = len(self.data_struct[NEED_USERS]) if NEED_USERS in self.data_struct else 0
        positive = torch.stack(
            (positive_u.detach().cpu().long() + offset, positive_i.detach().cpu().long()), dim=1
        )
        self.data_struct.update_tensor(NEED_USERS, users)
        self.data_struct.update_tensor(NEED_POSITIVE, positive)

    eval_batch_collect.userfair = True
    return eval_batch_collect


def _get_data_struct(original):
    def get_data_struct(self):
        struct = original(self)
        for key in (NEED_USERS, NEED_POSITIVE, NEED_GRADES):  # per evaluation, as rec.*
            if key in self.data_struct:
                del self.data_struct[key]
        return struct

    get_data_struct.userfair = True
    return get_data_struct


class _SharedTopkTorch(types.ModuleType):
    """``torch`` as seen by recbole.evaluator.collector: ``topk`` of the very tensor and
    arguments of the previous call returns that call's result. The collector sorts each
    batch's scores once for ``rec.items`` (what the fairness metrics read) and again for
    ``rec.topk`` (RecBole's ranking metrics): the second sort is the first one's result,
    the same tensors, so RecBole's metrics do not change and the plugin costs no second
    sort."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self._module = module
        self._last = None

    def __getattr__(self, name):
        return getattr(self._module, name)

    def topk(self, tensor, *args, **kwargs):
        last = self._last
        key = (tensor._version, args, kwargs)  # _version: bumped by in-place changes
        if last is not None and last[0] is tensor and last[1] == key:
            return last[2]
        result = self._module.topk(tensor, *args, **kwargs)
        self._last = (tensor, key, result)
        return result


def _evaluate(original):
    def evaluate(self, eval_data, *args, **kwargs):
        collector = self.eval_collector
        grade = self.config["userfair_grade"]
        if grade is not None and eval_data and collector.register.need(NEED_USERS):
            grades = grade_matrix(eval_data._dataset, grade)
            collector.data_struct.set(NEED_GRADES, GradeMatrix(grades))
        return original(self, eval_data, *args, **kwargs)

    evaluate.userfair = True
    return evaluate


def patch_collector() -> None:
    """Wrap RecBole's Collector so it also keeps what the fairness metrics need, and
    ``Trainer.evaluate`` so that, with ``userfair_grade``, the collector also keeps the
    grades of the split it evaluates (idempotent)."""
    import recbole.evaluator.collector as collector
    from recbole.evaluator.collector import Collector
    from recbole.trainer import Trainer

    if not getattr(Trainer.evaluate, "userfair", False):
        Trainer.evaluate = _evaluate(Trainer.evaluate)

    if not isinstance(collector.torch, _SharedTopkTorch):
        collector.torch = _SharedTopkTorch(collector.torch)

    for name, wrap in (
        ("data_collect", _data_collect),
        ("eval_batch_collect", _eval_batch_collect),
        ("get_data_struct", _get_data_struct),
    ):
        method = getattr(Collector, name)
        if not getattr(method, "userfair", False):
            setattr(Collector, name, wrap(method))
