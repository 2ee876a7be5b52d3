"""Training replicates (config ``training.replicates``, docs/training.md#replicates): the seed
of each replicate, which replicates are trained, and the files a replicate reads and writes.

Replicate 0 is the workflow's model as it has always been (the grid search's winner, the
config's seed); replicate r >= 1 retrains the winning grid point with
``replicate_seed(seed, r)``. A model without a seed (UserKNN, ItemKNN and RecBole's other
non-trainable models, ``userfair.workflow.models.Model.trainable``) gives the same lists whatever
the seed, so its replicates reuse replicate 0's lists and measures: nothing is trained or
measured twice. With ``training.replicate_split`` a dataset split at random also redraws
its split per replicate with the same seed; there every model is retrained.
"""

from __future__ import annotations

#: The stride between replicate seeds: a prime far above any replicate count, so that
#: replicate seeds of neighbouring config seeds (2024, 2025) never coincide for r < STRIDE.
STRIDE = 1_000_003
#: Seeds stay below 2**31 (RecBole passes them to numpy and torch).
MODULUS = 2**31 - 1


def replicate_seed(seed: int, replicate: int) -> int:
    """The training seed of replicate ``replicate``: ``seed`` for replicate 0, else
    ``(seed + STRIDE * replicate) % MODULUS``."""
    if replicate < 0:
        raise ValueError(f"replicate must be >= 0, got {replicate}")
    if replicate == 0:
        return int(seed)
    return int((seed + STRIDE * replicate) % MODULUS)


def retrained(trainable: bool, replicate: int, redrawn: bool = False) -> bool:
    """Whether replicate ``replicate`` of a model has its own training job and lists: every
    replicate >= 1 of a trainable model, and of every model where the split is redrawn per
    replicate (``redrawn``, config ``training.replicate_split``: a model without a seed
    still sees another split); never replicate 0 (today's model), nor a model without a
    seed on a fixed split (its replicates are replicate 0)."""
    return (trainable or redrawn) and replicate >= 1


def redrawn_datasets(
    temporal: dict[str, bool], replicate_split: bool, replicates: int
) -> list[str]:
    """The datasets (of ``temporal``: name -> split by time, in config order) whose split
    replicate r >= 1 redraws with its seed: with ``training.replicate_split`` and R > 1,
    those split at random; a split by time is fixed (there is only one)."""
    if not replicate_split or replicates < 2:
        return []
    return [name for name, by_time in temporal.items() if not by_time]


def replicate_split_problems(
    temporal: dict[str, bool], replicate_split: bool, replicates: int, embedding_model
) -> tuple[str | None, str | None]:
    """(error, warning) of ``training.replicate_split``: the error when a redrawn split
    meets the opt-in ``embedding:MODEL`` similarity (its user vectors are replicate 0's);
    the warning naming the datasets split by time, whose split stays fixed."""
    redrawn = redrawn_datasets(temporal, replicate_split, replicates)
    error = None
    if redrawn and embedding_model is not None:
        error = (
            f"config training.replicate_split: measures.similarities embedding:"
            f"{embedding_model} reads replicate 0's user vectors, which a redrawn split "
            "does not share; drop one of the two"
        )
    fixed = [name for name, by_time in temporal.items() if by_time]
    warning = None
    if replicate_split and replicates > 1 and fixed:
        warning = (
            f"config training.replicate_split: {', '.join(fixed)} split by time, so their "
            "split is not redrawn; their replicates redraw the seed only "
            "(docs/training.md#replicates)"
        )
    return error, warning
