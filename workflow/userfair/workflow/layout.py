"""The file layout of ``results/``, stated once: every file a rule writes (:data:`OUTPUTS`)
and its log (:data:`LOGS`). The rules' ``output:`` and ``log:`` are read from here
(``layout.output("measures")``, ``layout.log("measures")`` in workflow/rules/*.smk;
tests/workflow/test_layout.py fails on a path literal there), and so do the steps and the
parse-time checks (:func:`template`, :data:`PRODUCERS`). The library names a bad file without
knowing the workflow (``userfair.files.io.FileError``); :func:`explain` adds the rule and the
rebuild command, and every job's log line goes through it (``userfair.workflow.joblog``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from userfair.files.io import FileError
from userfair.workflow import catalogue

#: The folder of every rule's files, and its folders of the report's tables and figures.
RESULTS = "results"
TABLES = f"{RESULTS}/tables"
FIGURES = f"{RESULTS}/figures"

#: Every file a rule writes, by rule: its one output's path template, or its named outputs
#: (name -> template) in the order the rule lists them. A ``use rule`` that keeps its base
#: rule's outputs (genre_similarity, replicate_genre_similarity) has no entry of its own,
#: nor does a figure rule whose files follow the figures' convention (:func:`figure_file`).
OUTPUTS: dict[str, str | dict[str, str]] = {
    # rules/data.smk (download: the catalogue's raw file, resources/raw/D/D.SUFFIX)
    "download": catalogue.RAW_TEMPLATE,
    "preprocess": "results/{dataset}/data/preprocessed.parquet",
    "grades": "results/{dataset}/data/grades.parquet",
    "split": {
        "train": "results/{dataset}/data/{dataset}.train.inter",
        "valid": "results/{dataset}/data/{dataset}.valid.inter",
        "test": "results/{dataset}/data/{dataset}.test.inter",
    },
    "genres": "results/{dataset}/data/{dataset}.item",
    "stats": "results/{dataset}/data/stats.json",
    "table_stats": {
        "csv": "results/tables/stats.csv",
        "tex": "results/tables/stats.tex",
    },
    # rules/models.smk
    "recbole_dataset": "results/{dataset}/models/dataset.pth",
    "tune": {
        "valid": "results/{dataset}/models/{model}/grid/{point}/valid.json",
        "checkpoint": "results/{dataset}/models/{model}/grid/{point}/model.pth",
    },
    "select": {
        "tuning": "results/{dataset}/models/{model}/tuning.tsv",
        "best": "results/{dataset}/models/{model}/best.json",
    },
    "topk": {
        "topk": "results/{dataset}/models/{model}/topk.parquet",
        "test": "results/{dataset}/models/{model}/recbole_test.json",
    },
    "user_vectors": "results/{dataset}/models/{model}/user_vectors.parquet",
    # rules/measures.smk
    "similarity": "results/{dataset}/similarity/{kind}.npz",
    "pairs_part": "results/{dataset}/similarity/pairs/{scatteritem}.json",
    "pairs": "results/{dataset}/similarity/pairs.json",
    "measure_sums": "results/{dataset}/measures/{model}/sums/{scatteritem}.json",
    "measures": "results/{dataset}/measures/{model}.json",
    "table_scores": {
        "csv": "results/tables/scores.csv",
        "tex": "results/tables/scores.tex",
    },
    "table_timing": {
        "csv": "results/tables/timing.csv",
        "tex": "results/tables/timing.tex",
    },
    "agreement": "results/tables/agreement.csv",
    # rules/uncertainty.smk
    "uncertainty": "results/{dataset}/uncertainty/{model}.parquet",
    "table_uncertainty": {
        "csv": "results/tables/scores_ci.csv",
        "tex": "results/tables/scores_ci.tex",
        "significance": "results/tables/significance.csv",
        "intervals": "results/tables/intervals.csv",
        "agreement": "results/tables/agreement_ci.csv",
    },
    # rules/replicates.smk
    "replicate_split": {
        "train": "results/{dataset}/replicates/{replicate}/data/{dataset}.train.inter",
        "valid": "results/{dataset}/replicates/{replicate}/data/{dataset}.valid.inter",
        "test": "results/{dataset}/replicates/{replicate}/data/{dataset}.test.inter",
    },
    "replicate_genres": "results/{dataset}/replicates/{replicate}/data/{dataset}.item",
    "replicate_similarity": "results/{dataset}/replicates/{replicate}/similarity/{kind}.npz",
    "replicate": {
        "topk": "results/{dataset}/models/{model}/replicates/{replicate}/topk.parquet",
        "valid": "results/{dataset}/models/{model}/replicates/{replicate}/valid.json",
        "test": "results/{dataset}/models/{model}/replicates/{replicate}/recbole_test.json",
    },
    "replicate_sums": (
        "results/{dataset}/measures/{model}/replicates/{replicate}/sums/{scatteritem}.json"
    ),
    "replicate_measures": "results/{dataset}/measures/{model}/replicates/{replicate}.json",
    "replicate_uncertainty": "results/{dataset}/uncertainty/{model}/replicates/{replicate}.parquet",
    "table_replicates": {
        "values": "results/tables/replicates.csv",
        "variance": "results/tables/variance.csv",
        "scores": "results/tables/scores_replicates.csv",
        "significance": "results/tables/significance_replicates.csv",
        "agreement": "results/tables/agreement_replicates.csv",
        "conclusions": "results/tables/conclusions.csv",
    },
    # rules/who.smk
    "users": {
        "users": "results/{dataset}/measures/{model}/users.parquet",
        "worst": "results/{dataset}/measures/{model}/worst.csv",
    },
    "who_table": "results/tables/who.csv",
    "who_worst": "results/tables/who_worst.csv",
    # rules/groups.smk
    "groups": {
        "json": "results/{dataset}/groups/{model}.json",
        "resamples": "results/{dataset}/groups/{model}.parquet",
    },
    "replicate_groups": {
        "json": "results/{dataset}/groups/{model}/replicates/{replicate}.json",
        "resamples": "results/{dataset}/groups/{model}/replicates/{replicate}.parquet",
    },
    "table_groups": {
        "csv": "results/tables/groups.csv",
        "significance": "results/tables/groups_significance.csv",
        "agreement": "results/tables/groups_agreement.csv",
    },
    # fig_groups: no entry, see figure_file and FIGURE_STEMS
    # rules/experiments.smk
    "exp_relevance": "results/{dataset}/experiments/relevance.parquet",
    "exp_similarity": "results/{dataset}/experiments/similarity.parquet",
    "exp_extreme": "results/{dataset}/experiments/extreme.parquet",
    "exp_gamma": {
        "models": "results/{dataset}/experiments/gamma_models.parquet",
        "relevance": "results/{dataset}/experiments/gamma_relevance.parquet",
    },
    # rules/figures.smk: no entry, see figure_file
    # rules/variants.smk
    "table_variants": {
        "tau": "results/tables/variants_tau.csv",
        "summary": "results/tables/variants_summary.csv",
    },
    "exp_variants": {
        "similarity": "results/{dataset}/experiments/similarity_variants.parquet",
        "extreme": "results/{dataset}/experiments/extreme_variants.parquet",
    },
    "fig_variants": {
        "tau_pdf": "results/figures/variants_tau.pdf",
        "tau_png": "results/figures/variants_tau.png",
        "similarity_pdf": "results/figures/similarity_variants.pdf",
        "similarity_png": "results/figures/similarity_variants.png",
        "extreme_pdf": "results/figures/extreme_variants.pdf",
        "extreme_png": "results/figures/extreme_variants.png",
        "tau_reading": "results/figures/variants_tau.rst",
        "similarity_reading": "results/figures/similarity_variants.rst",
        "extreme_reading": "results/figures/extreme_variants.rst",
    },
    # rules/reproduction.smk
    "paper_gap": {
        "pdf": "results/figures/paper_gap.pdf",
        "png": "results/figures/paper_gap.png",
        "csv": "results/tables/paper_gap.csv",
        "verdicts": "results/tables/paper_gap_verdicts.csv",
        "tau": "results/tables/paper_gap_tau.csv",
        "table1": "results/tables/paper_gap_stats.csv",
    },
    # rules/claims.smk
    "claims": {
        "properties": "results/tables/measure_properties.csv",
        "claims": "results/tables/claims.csv",
        "across": "results/tables/claims_across.csv",
        "front": "results/report/front.rst",
    },
    # rules/plan.smk
    "plan": "results/plan.csv",
    "table_energy": "results/tables/energy.csv",
    # rules/record.smk
    "run_config": "results/run.json",
}

#: The log of every rule: ``results/logs/RULE/STEM.log``, by rule its STEM (the output's
#: wildcards, joined by "_" or "/"); a figure rule of the convention (:func:`figure_file`)
#: has none here: its STEM is its name, or its entry of FIGURE_STEMS.
LOGS = {
    "download": "{dataset}.{suffix}",
    "preprocess": "{dataset}",
    "grades": "{dataset}",
    "split": "{dataset}",
    "genres": "{dataset}",
    "stats": "{dataset}",
    "table_stats": "table_stats",
    "recbole_dataset": "{dataset}",
    "tune": "{dataset}/{model}/{point}",
    "select": "{dataset}/{model}",
    "topk": "{dataset}/{model}",
    "user_vectors": "{dataset}/{model}",
    "similarity": "{dataset}_{kind}",
    "pairs_part": "{dataset}_{scatteritem}",
    "pairs": "{dataset}",
    "measure_sums": "{dataset}_{model}_{scatteritem}",
    "measures": "{dataset}_{model}",
    "table_scores": "table_scores",
    "table_timing": "table_timing",
    "agreement": "agreement",
    "uncertainty": "{dataset}_{model}",
    "table_uncertainty": "table_uncertainty",
    "replicate_split": "{dataset}_{replicate}",
    "replicate_genres": "{dataset}_{replicate}",
    "replicate_similarity": "{dataset}_{replicate}_{kind}",
    "replicate": "{dataset}/{model}/{replicate}",
    "replicate_sums": "{dataset}_{model}_{replicate}_{scatteritem}",
    "replicate_measures": "{dataset}_{model}_{replicate}",
    "replicate_uncertainty": "{dataset}_{model}_{replicate}",
    "table_replicates": "table_replicates",
    "users": "{dataset}_{model}",
    "who_table": "who_table",
    "who_worst": "who_worst",
    "groups": "{dataset}_{model}",
    "replicate_groups": "{dataset}_{model}_{replicate}",
    "table_groups": "table_groups",
    "exp_relevance": "{dataset}",
    "exp_similarity": "{dataset}",
    "exp_extreme": "{dataset}",
    "exp_gamma": "{dataset}",
    "table_variants": "table_variants",
    "exp_variants": "{dataset}",
    "fig_variants": "fig_variants",
    "paper_gap": "paper_gap",
    "claims": "claims",
    "plan": "plan",
    "table_energy": "table_energy",
    "run_config": "run_config",
}


#: The working folder of a job that is no output of its own (RecBole writes into it): the
#: other rules' are beside their outputs (rules/common/paths.smk).
WORKING = {"recbole_dataset": f"{RESULTS}/{{dataset}}/models/dataset_build"}


#: A figure rule's output kinds (userfair.workflow.figure_registry.Figure.output) and the
#: suffixes of their files.
FIGURE_KINDS = {"pdf": "pdf", "png": "png", "reading": "rst"}
#: The figure rules of the convention that draw a figure per value of their wildcards (the
#: wildcards their drawing declares, userfair.workflow.figure_registry.Figure.wildcards),
#: and the stem of each figure's files (``results/figures/NAME[_PART]/STEM.SUFFIX``) and of
#: its log (``results/logs/RULE/STEM.log``): fig_groups, a figure per dataset.
FIGURE_STEMS = {"fig_groups": "{dataset}"}


def is_conventional_figure(rule: str) -> bool:
    """Whether ``rule`` is a figure rule whose files follow :func:`figure_file` (a ``fig_``
    rule without an entry in :data:`OUTPUTS`)."""
    return rule.startswith("fig_") and rule not in OUTPUTS


def figure_file(rule: str, name: str) -> str:
    """The file of figure rule ``fig_NAME``'s output ``[PART_]KIND`` (KIND one of
    :data:`FIGURE_KINDS`): ``results/figures/NAME[_PART].SUFFIX``; e.g. fig_relevance's
    ``pdf`` is ``results/figures/relevance.pdf``, fig_gamma's ``models_reading``
    ``results/figures/gamma_models.rst``; a rule of :data:`FIGURE_STEMS` has a folder of
    figures, ``results/figures/NAME[_PART]/STEM.SUFFIX`` (fig_groups's ``pdf``:
    ``results/figures/groups/{dataset}.pdf``)."""
    if not rule.startswith("fig_"):
        raise ValueError(f"rule {rule}: a figure rule's name starts with fig_")
    part, _, kind = name.rpartition("_")
    if kind not in FIGURE_KINDS:
        raise ValueError(
            f"figure rule {rule}: output {name!r} is not [PART_]{{{','.join(FIGURE_KINDS)}}}"
        )
    stem = rule.removeprefix("fig_") + (f"_{part}" if part else "")
    if rule in FIGURE_STEMS:  # a figure per value of its wildcards: a folder of them
        stem = f"{stem}/{FIGURE_STEMS[rule]}"
    return f"{FIGURES}/{stem}.{FIGURE_KINDS[kind]}"


#: The file templates of the figure rules of the convention (FIGURE: the rule's name
#: without ``fig_``, with ``_PART`` for a part of a rule of several figures), and those of
#: the rules of :data:`FIGURE_STEMS` (a figure per value of their wildcards).
FIGURE_TEMPLATES = tuple(
    f"{FIGURES}/{{figure}}.{suffix}" for suffix in FIGURE_KINDS.values()
) + tuple(figure_file(rule, kind) for rule in FIGURE_STEMS for kind in FIGURE_KINDS)


def output(rule: str, name: str | None = None) -> str:
    """The path template of ``rule``'s one output, or of its output ``name`` (a figure rule
    of the convention: :func:`figure_file`)."""
    if name is not None and is_conventional_figure(rule):
        return figure_file(rule, name)
    entry = OUTPUTS[rule]
    if name is None:
        if not isinstance(entry, str):
            raise ValueError(f"rule {rule} writes {len(entry)} files: name one of {list(entry)}")
        return entry
    if isinstance(entry, str):
        raise ValueError(f"rule {rule} writes one unnamed file, not {name!r}")
    return entry[name]


def files(rule: str) -> list[str]:
    """Every path template of ``rule``'s outputs, in order."""
    entry = OUTPUTS[rule]
    return [entry] if isinstance(entry, str) else list(entry.values())


def log(rule: str) -> str:
    """The path template of ``rule``'s log."""
    if rule not in LOGS and is_conventional_figure(rule):
        stem = FIGURE_STEMS.get(rule, rule)
    else:
        stem = LOGS[rule]
    return f"{RESULTS}/logs/{rule}/{stem}.log"


#: The files passed between rules (the ones a damaged copy of stops a reader): template ->
#: the rule that writes it, for every output of :data:`OUTPUTS` of these kinds.
PASSED = (".json", ".npz", ".parquet", ".pth")
PRODUCERS = {t: rule for rule in OUTPUTS for t in files(rule) if t.endswith(PASSED)}


def _named_components() -> tuple[str, ...]:
    templates = [t for rule in OUTPUTS for t in files(rule)] + [log(rule) for rule in LOGS]
    templates += [*FIGURE_TEMPLATES, *(log(rule) for rule in FIGURE_STEMS)]
    found = {
        part
        for template in templates
        for part in template.split("/")
        if "{dataset}" in part and part != "{dataset}"
    }
    return tuple(sorted(found))


#: Every file-name component of the layout that holds the dataset name beside other text
#: (:data:`OUTPUTS`, :data:`LOGS`, :data:`FIGURE_TEMPLATES`), and the names RecBole reads in
#: a job's data path (userfair.workflow.recbole_setup.recbole_name and link_split). With the
#: longest value each other wildcard takes in a run
#: (:func:`userfair.workflow.schema.longest_file_name`), the longest of them bounds the
#: dataset names a file system takes.
NAMED_COMPONENTS = _named_components()

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
    output("similarity").replace("{kind}", "genre"): "genre_similarity",
    output("replicate_similarity").replace("{kind}", "genre"): "replicate_genre_similarity",
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
