"""The file layout of ``results/``: which rule writes each file passed between rules, and
the command that rebuilds just that file. The rules' outputs (workflow/rules/*.smk) are the
layout; :data:`PRODUCERS` states it once more for the steps, and
tests/runs/test_intermediates.py keeps the two equal. The library names a bad file without
knowing the workflow (``userfair.files.io.FileError``); :func:`explain` adds the rule and the
rebuild command, and every job's log line goes through it (``userfair.workflow.joblog``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from userfair.files.io import FileError

# The rule that writes each file passed between rules, by its path template.
PRODUCERS = {
    "results/{dataset}/data/preprocessed.parquet": "preprocess",
    "results/{dataset}/data/grades.parquet": "grades",
    "results/{dataset}/data/stats.json": "stats",
    "results/{dataset}/models/dataset.pth": "recbole_dataset",
    "results/{dataset}/models/{model}/grid/{point}/valid.json": "tune",
    "results/{dataset}/models/{model}/grid/{point}/model.pth": "tune",
    "results/{dataset}/models/{model}/best.json": "select",
    "results/{dataset}/models/{model}/topk.parquet": "topk",
    "results/{dataset}/models/{model}/recbole_test.json": "topk",
    "results/{dataset}/similarity/{kind}.npz": "similarity",
    "results/{dataset}/replicates/{replicate}/similarity/{kind}.npz": "replicate_similarity",
    "results/{dataset}/similarity/pairs/{scatteritem}.json": "pairs_part",
    "results/{dataset}/similarity/pairs.json": "pairs",
    "results/{dataset}/measures/{model}/sums/{scatteritem}.json": "measure_sums",
    "results/{dataset}/measures/{model}.json": "measures",
    "results/{dataset}/measures/{model}/users.parquet": "users",
    "results/{dataset}/uncertainty/{model}.parquet": "uncertainty",
    "results/{dataset}/experiments/relevance.parquet": "exp_relevance",
    "results/{dataset}/experiments/similarity.parquet": "exp_similarity",
    "results/{dataset}/experiments/extreme.parquet": "exp_extreme",
    "results/{dataset}/experiments/gamma_models.parquet": "exp_gamma",
    "results/{dataset}/experiments/gamma_relevance.parquet": "exp_gamma",
    "results/{dataset}/experiments/similarity_variants.parquet": "exp_variants",
    "results/{dataset}/experiments/extreme_variants.parquet": "exp_variants",
    "results/{dataset}/groups/{model}.json": "groups",
    "results/{dataset}/groups/{model}.parquet": "groups",
    "results/{dataset}/models/{model}/replicates/{replicate}/topk.parquet": "replicate",
    "results/{dataset}/models/{model}/replicates/{replicate}/valid.json": "replicate",
    "results/{dataset}/models/{model}/replicates/{replicate}/recbole_test.json": "replicate",
    "results/{dataset}/measures/{model}/replicates/{replicate}/sums/{scatteritem}.json": (
        "replicate_sums"
    ),
    "results/{dataset}/measures/{model}/replicates/{replicate}.json": "replicate_measures",
    "results/{dataset}/uncertainty/{model}/replicates/{replicate}.parquet": (
        "replicate_uncertainty"
    ),
    "results/{dataset}/groups/{model}/replicates/{replicate}.json": "replicate_groups",
    "results/{dataset}/groups/{model}/replicates/{replicate}.parquet": "replicate_groups",
    "results/{dataset}/models/{model}/user_vectors.parquet": "user_vectors",
    "results/run.json": "run_config",
}


#: Every file-name component of the layout that holds the dataset name beside other text:
#: the rules' outputs and logs (workflow/rules/*.smk; tests/runs/test_intermediates.py keeps this
#: list equal to theirs) and the names RecBole reads in a job's data path
#: (userfair.workflow.recbole_setup.recbole_name and link_split). With the longest value
#: each other wildcard takes in a run (:func:`userfair.workflow.schema.longest_file_name`),
#: the longest of them bounds the dataset names a file system takes.
NAMED_COMPONENTS = (
    "{dataset}.item", "{dataset}.log", "{dataset}.pdf", "{dataset}.png", "{dataset}.rst",
    "{dataset}.train.inter", "{dataset}.valid.inter", "{dataset}.test.inter",
    "{dataset}.{suffix}", "{dataset}.{suffix}.log",
    "{dataset}_{kind}.log", "{dataset}_{model}.log", "{dataset}_{model}_{replicate}.log",
    "{dataset}_{model}_{replicate}_{scatteritem}.log", "{dataset}_{model}_{scatteritem}.log",
    "{dataset}_{replicate}.log", "{dataset}_{replicate}_{kind}.log",
    "{dataset}_{scatteritem}.log",
)  # fmt: skip
#: RecBole's, in a job's data path: the folder and its linked split files.
RECBOLE_COMPONENTS = ("{dataset}_split", "{dataset}_split.{split}.inter")
#: The most bytes of one path component on every common file system (ext4, XFS, APFS,
#: NTFS in UTF-16 units).
COMPONENT_BYTES = 255


def _template_pattern(template: str) -> re.Pattern:
    parts = re.split(r"(\{[^}]+\})", template)
    body = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(rf"(?:^|/){body}$")


#: The files of a template of :data:`PRODUCERS` that another rule writes: a ``use rule``
#: of the template's rule for some values of a wildcard (workflow/rules/*.smk), looked up
#: first.
USED_RULES = {
    "results/{dataset}/similarity/genre.npz": "genre_similarity",
    "results/{dataset}/replicates/{replicate}/similarity/genre.npz": "replicate_genre_similarity",
}

_PATTERNS = [(_template_pattern(t), rule) for t, rule in (*USED_RULES.items(), *PRODUCERS.items())]


def template(rule: str) -> str:
    """The one path template of :data:`PRODUCERS` that ``rule`` writes (a rule of several
    files is refused: name the file instead)."""
    found = [t for t, writer in PRODUCERS.items() if writer == rule]
    if len(found) != 1:
        raise ValueError(f"rule {rule} writes {len(found)} files of the layout, not one")
    return found[0]


def producer(path: str | os.PathLike) -> str | None:
    """The rule that writes ``path`` (:data:`USED_RULES`, then :data:`PRODUCERS`), or None
    for a file of no rule."""
    text = Path(path).as_posix()
    for pattern, rule in _PATTERNS:
        if pattern.search(text):
            return rule
    return None


def rebuild_command(path: str | os.PathLike) -> str:
    """The command that rebuilds just the file ``path`` of a rule (its job, not the jobs
    before it; checked with ``-n`` by tests/runs/test_bad_inputs.py): ``snakemake --force PATH``."""
    return f"snakemake --force {path}"


def explain(error: BaseException) -> str:
    """The message of ``error`` as a workflow job says it: for a :class:`FileError` of a
    file some rule writes, the reason, that rule and the command that rebuilds just the file
    (instead of the library's advice); any other error as it is."""
    if isinstance(error, FileError):
        rule = producer(error.path)
        if rule is not None:
            return (
                f"{error.reason}; written by rule {rule}, rebuild it: {rebuild_command(error.path)}"
            )
    return str(error)
