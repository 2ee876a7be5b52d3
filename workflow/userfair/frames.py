"""The measures of data already in memory: pandas DataFrames in, the measures out."""

from __future__ import annotations

from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs


def evaluate_frames(
    train, test, topk, *, valid=None, item_features=None, k: int = 10, **options
) -> dict:
    """Every effectiveness and fairness measure of the top-k lists ``topk``.

    ``train``, ``test``, ``valid``: DataFrames with columns ``user_id``, ``item_id`` (other
    columns are ignored; ids of any type, compared as strings). The evaluated users are
    the users of ``test``; ``valid`` (optional) only adds its items to the item universe.
    ``topk``: DataFrame with ``user_id``, ``item_id``, ``rank`` (1-based); the first ``k``
    ranks of each test user are used. ``item_features`` (optional, needed for
    ``gamma < 1``): DataFrame with ``item_id`` and a genre column (``genre``, ``genres``
    or ``class``) holding space-separated tokens or lists of tokens. Paths of the
    workflow's files are accepted too, as by ``userfair evaluate``.

    ``options`` go to :func:`userfair.evaluate.evaluate` (``epsilon``, ``gamma``,
    ``block_size``, ``device``, ``similarities``, ...).

    Returns the same object as ``userfair evaluate --json``: the 18 measures
    (``userfair.measures.NAMES``, floats, NaN allowed) and ``seconds``.
    Raises ``userfair.files.io.InputError`` (a ValueError) on inconsistent inputs.
    """
    inputs = load_inputs(train, test, topk, k=k, item_features=item_features, valid=valid)
    return evaluate(inputs, k=k, **options)
