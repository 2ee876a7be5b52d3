# The contract between the stages. Read this file first: it holds
#   - the configured names every stage uses (datasets, models, splits, similarity kinds),
#   - the checks of the config that the schema cannot express, run at parse time,
#   - the grid of every model (validated at parse time),
#   - then, one section per stage in the order the data flows (data, models, measures,
#     uncertainty, replicates, who, experiments, variants, reproduction, plan), the
#     resource, parameter and input functions of that stage's rules; what several stages
#     share comes first.
# Each stage's target list, which `rule all` (Snakefile) asks for, is in targets.smk,
# included after every stage.
# A stage file reads only the names defined here and other stages' files through
# `rules.RULE.output`; it never uses a global of another stage file. Remove a stage's
# include and the first rule that needs one of its outputs fails at parse time, naming
# the missing rule.

import csv
import json
import math
import os
import re
import sys
from pathlib import Path

from snakemake.logging import logger

from userfair import bounds, route
from userfair.groups import specs_of
from userfair.workflow import catalogue, costs, energy, grids, models, replication
from userfair.workflow import plan as plan_report
from userfair.workflow import reproduction, steps
from userfair.workflow.steps.targets import newer_than_record, other_config

DATASETS = config["datasets"]
MODELS = config["models"]
DATASET_OPTIONS = config["dataset_options"]
# The datasets the config declares itself (docs/your-data.md); names were checked against
# catalogue.names(CUSTOM_DATASETS) and models.names() by the Snakefile
# (userfair.workflow.schema).
CUSTOM_DATASETS = config["custom_datasets"]
# The limits of the download rule (redirect hosts, size cap; docs/data.md#downloads).
DOWNLOAD = config["download"]


def dataset_entry(name):
    """How dataset ``name`` is obtained and read: the catalogue's entry, or the config's
    declaration under custom_datasets (userfair.workflow.catalogue.resolve). The only place a
    dataset name is resolved."""
    return catalogue.resolve(name, CUSTOM_DATASETS)


SPLITS = ["train", "valid", "test"]
# The user similarities (results/D/similarity/KIND.npz; userfair.similarity.KINDS).
SIMILARITY_KINDS = ["cos", "jacc", "genre"]
# The configured datasets whose raw files carry item genres (they get D.item, the genre
# similarity and the gamma experiment).
GENRE_DATASETS = [d for d in DATASETS if dataset_entry(d).has_genres]
# The opt-in measures (config measures.relevance, measures.similarities;
# docs/measures.md#opt-in-measures): GRADED adds rule grades (each kept interaction's grade,
# results/D/data/grades.parquet, beside the binary split: no model is retrained) and the
# graded measures, which only the measure jobs compute (their input grades, opt_in_grades);
# EXTRA_SIMILARITIES (registry names of userfair.similarities beyond the paper's cos and
# jacc) add PUF over them. Both off by default: every output as without them.
# embedding:MODEL is the registry's vec on the user vectors of MODEL (rule user_vectors).
GRADED = "graded" in config["measures"]["relevance"]
EMBEDDING_MODEL = next(
    (s.split(":", 1)[1] for s in config["measures"]["similarities"] if ":" in s), None
)
EXTRA_SIMILARITIES = [
    "vec" if ":" in s else s
    for s in config["measures"]["similarities"]
    if s not in ("cos", "jacc")
]

# Plugin measures (docs/plugins.md): loaded and checked here, before any job starts (a bad
# plugin stops the run in one line naming it); every job loads them again
# (userfair.workflow.joblog.job_log). PLUGINS ("NAME=module:Class", load order) is a param
# of the jobs that compute measures, so adding or removing one reruns exactly those.
PLUGINS = steps.load_plugins(config)


def opt_in_params(*keys):
    """Params of the opt-in measures, only when configured (graded, extra_similarities;
    ``keys`` picks among them): with the defaults a rule gets no new param, so no finished
    job reruns for them."""
    chosen = {
        "graded": GRADED,
        "extra_similarities": EXTRA_SIMILARITIES,
        "plugins": PLUGINS,
    }
    keys = keys or ("graded", "extra_similarities", "plugins")
    return {key: chosen[key] for key in keys if chosen[key]}


# Datasets that `download` can fetch: the catalogue's (qk-video is never downloaded,
# docs/data.md) and the declared ones with a url.
DOWNLOADABLE = [n for n, d in catalogue.CATALOGUE.items() if d.source != "tenrec"] + [
    n for n in CUSTOM_DATASETS if catalogue.needs_download(dataset_entry(n))
]
# Suffixes of a downloaded raw file: zip (RecBole archives) or a declared table's format.
RAW_SUFFIXES = ["zip", "csv", "tsv", "parquet"]


# Every grid point of every configured model (config `grid`), checked here so that an
# unknown model or grid key fails before any job starts.
def grid_file():
    """config grid: relative to the working directory, else to the repository (the
    folder above workflow/: its config/grids/, found from another --directory)."""
    path = Path(config["grid"])
    if path.is_absolute() or path.exists():
        return path
    shipped = Path(workflow.basedir).parent / path
    return shipped if shipped.exists() else path


GRID_POINTS = grids.load_points(grid_file(), MODELS)


# Pass one of every dataset and pass two of every dataset x model are scattered over this
# many jobs (config measures.scatter; 1: one job each, no parts) on the streamed route.
scattergather:
    measures=config["measures"]["scatter"],


SCATTER = config["measures"]["scatter"]
# A scattered part's name, Snakemake's "i-of-n".
SCATTER_ITEM = r"\d+-of-\d+"


# What reruns after a library edit (docs/cluster.md#what-re-runs-after-a-change): only the
# drawing code is tracked, as an input of every figure rule and of paper_gap (which draws
# the paper-gap figure from a comparison that takes seconds), so that editing a figure
# redraws the figures and nothing else. Code that computes results (training, measures,
# experiments, tables) is not tracked: a refactor must never silently retrain or recompute;
# rerun such rules with --forcerun. Paths found beside the Snakefile, relative to the
# working directory.
DRAWING_CODE = [
    os.path.relpath(os.path.join(workflow.basedir, "userfair", module))
    for module in (
        "workflow/plots.py",
        "workflow/figure_style.py",
        "workflow/analysis_figures.py",
        "workflow/replicate_figure.py",
        "workflow/steps/figures.py",
        "workflow/reproduction.py",
        "workflow/steps/reproduction.py",
    )
]


def one_of(names):
    """A wildcard constraint matching exactly one of ``names`` (none when empty)."""
    return "|".join(map(re.escape, names)) or "(?!)"


wildcard_constraints:
    dataset=one_of(DATASETS),
    model=one_of(MODELS),


# --- checks of the config beyond the schema ---------------------------------------------


def no_job_runs():
    """Whether this invocation runs no job that reads data: a dry run (-n, --dry-run) or
    the plan alone (target plan or results/plan.csv, which needs no data). Read from the
    command line: the Snakefile is parsed before Snakemake knows its executor."""
    args = sys.argv[1:]
    dry = any(
        a in ("--dry-run", "--dryrun") or re.fullmatch(r"-[A-Za-z]*n[A-Za-z]*", a)
        for a in args
    )
    return dry or any(a in ("plan", "results/plan.csv") for a in args)


def check_config_beyond_schema():
    """Raise ValueError, naming the config key, for settings that would fail only later."""
    gamma = config["measures"]["gamma"]
    without_genres = sorted(set(DATASETS) - set(GENRE_DATASETS))
    # UF with gamma < 1 mixes in the genre similarity, which needs item genres.
    if gamma < 1 and without_genres:
        raise ValueError(
            f"config measures.gamma = {gamma} < 1 needs item genres, which "
            f"{without_genres} lack; use gamma: 1 or datasets with genres "
            f"({', '.join(n for n, d in catalogue.CATALOGUE.items() if d.has_genres)}, "
            "or a dataset of custom_datasets with columns.genres)"
        )
    # The opt-in genre similarity reads the item genres too.
    if "genre" in EXTRA_SIMILARITIES and without_genres:
        raise ValueError(
            f"config measures.similarities: genre needs item genres, which "
            f"{without_genres} lack; drop genre or use datasets with genres"
        )
    # A path the user gives replaces the download, so it must exist now.
    for dataset in DATASETS:
        if dataset in CUSTOM_DATASETS:
            key, path = (
                f"custom_datasets.{dataset}.path",
                dataset_entry(dataset).default_path,
            )
        else:
            key = f"dataset_options.{dataset}.path"
            path = catalogue.options_of(dataset, DATASET_OPTIONS)["path"]
        if path and not Path(path).exists():
            raise ValueError(
                f"config {key}: {path!r} does not exist (relative paths count from the "
                f"working directory, {Path.cwd()}); see docs/data.md"
            )
    for dataset in DATASETS:
        entry = dataset_entry(dataset)
        source = catalogue.raw_source(entry, DATASET_OPTIONS)
        # A file the user must place (QK-video, never downloaded) is named now, not after
        # a dry run of every job; once the data stage has read it, it is not needed.
        # (the outputs of rules preprocess and stats: data.smk is included after this file)
        # A dry run or `snakemake plan` alone (which needs no data: the cost model sizes
        # the jobs from the catalogue) names it and goes on; a run stops here.
        preprocessed = f"results/{dataset}/data/preprocessed.parquet"
        if entry.source == "tenrec" and not Path(source).exists():
            if not Path(preprocessed).exists():
                why = f"{source}: not found. {catalogue.tenrec_help(source)}"
                if not no_job_runs():
                    raise ValueError(why)
                logger.warning(f"{why} A run stops here until it is there.")
        # k cannot exceed the items of a dataset (RecBole's top-k would fail in training):
        # checked against stats.json when it exists, else against an upper bound known
        # before any job (the catalogue's raw file, a declared dataset's small raw table);
        # the preprocess, split and recbole_dataset jobs check the items they keep, before
        # any job that k would stop. A damaged stats.json is named with how to rebuild it.
        stats = f"results/{dataset}/data/stats.json"
        if Path(stats).is_file():
            items = costs.read_stats(stats)["items"]
            bounds.check_items(config["k"], items, f"{dataset} ({stats})")
        elif (items := catalogue.items_bound(entry, DATASET_OPTIONS)) is not None:
            where = f"{dataset} (the catalogue's raw file, before preprocessing)"
            bounds.check_items(config["k"], items, where)
        elif entry.source == "custom" and (shape := costs.raw_shape(entry, source)):
            where = f"{dataset} (its raw file {source}, before preprocessing)"
            bounds.check_items(config["k"], shape.items, where)


check_config_beyond_schema()


def run_targets(wildcards):
    """Input function of `run_config`: every target of the run (targets.smk, all_targets,
    defined after every stage and called only when the DAG is built)."""
    return all_targets()


def check_results_are_this_configs(record):
    """When results/ holds the tables and figures of another configuration (``record``,
    results/run.json: userfair.workflow.steps.targets.other_config), say so when a person
    runs Snakemake; a report of the mixed outputs (--report) stops instead."""
    if workflow.remote_exec or workflow.subprocess_exec:
        return
    reporting = any(arg.startswith("--report") for arg in sys.argv)
    # --report-after-run runs first, and a complete run writes the record
    after_run = "--report-after-run" in sys.argv
    if reporting and not after_run and not os.path.isfile(record):
        raise ValueError(
            f"no complete run is recorded in {record} (none finished yet, or a run of "
            "another configuration began writing into results/ after it): a report now "
            "could mix configurations or miss outputs, so it is not made; run "
            "snakemake --cores N with this config to the end first"
        )
    why = other_config(record, DATASETS, MODELS)
    if why is None:
        # the same datasets and models, but a partial run since the record may have used
        # another config (a table rebuilt with another k): a report stops on it too
        newer = newer_than_record(record) if reporting and not after_run else None
        if newer is not None:
            raise ValueError(newer)
        return
    if reporting:
        raise ValueError(f"{why}; the report would mix them, so it is not made")
    logger.warning(why)


def forget_other_config(record):
    """onstart (jobs are about to run): when results/ holds the tables and figures of
    another configuration (``record``), this run's jobs write beside them, so the record
    no longer holds for every table; it is removed, and a report is refused until a full
    run of one configuration writes it again (check_results_are_this_configs)."""
    if workflow.remote_exec or workflow.subprocess_exec:
        return
    if other_config(record, DATASETS, MODELS) is None:
        return
    os.remove(record)
    logger.warning(
        f"{record} removed: this configuration's jobs now write into results/, which held "
        "another's; a report is refused until a complete run of one configuration"
    )


# --- shared by several stages: path templates and settings ------------------------------


def per_dataset(**templates):
    """Input function (use with unpack): named inputs ``D/NAME`` -> ``templates[NAME]`` of
    dataset D for every configured dataset, so that a script looks its files up by name,
    never by position."""

    def named(wildcards):
        return {
            f"{d}/{name}": template.format(dataset=d)
            for d in DATASETS
            for name, template in templates.items()
        }

    return named


def per_run(template, prefix=""):
    """Input function (use with unpack): named inputs ``PREFIXD/M`` -> ``template`` of
    dataset D and model M for every configured dataset and model."""

    def named(wildcards):
        return {
            f"{prefix}{d}/{m}": template.format(dataset=d, model=m)
            for d in DATASETS
            for m in MODELS
        }

    return named


def per_model(template, prefix=""):
    """Input function (use with unpack): named inputs ``PREFIXM`` -> ``template`` of the
    job's dataset and model M for every configured model."""

    def named(wildcards):
        return {
            f"{prefix}{m}": template.format(dataset=wildcards.dataset, model=m)
            for m in MODELS
        }

    return named


def scatter_template(template, wildcards):
    """``template`` with the job's dataset (model, replicate) filled in, {scatteritem} left
    for ``scatter.measures``."""
    for name in ("dataset", "model", "replicate"):
        if name in wildcards.keys():
            template = template.replace(f"{{{name}}}", wildcards[name])
    return template


def measure_settings(*keys):
    """The ``measures:`` config keys ``keys`` with ``k``, as params of a measures rule. A
    speed-only key (userfair.workflow.steps.SPEED_KEYS: block size, device) is refused:
    params rerun a job when they change, so scripts read those from the config."""
    speed = set(keys) & set(steps.SPEED_KEYS)
    if speed:
        raise ValueError(f"speed-only settings {sorted(speed)} must not be params")
    return {"k": config["k"], **{key: config["measures"][key] for key in keys}}


# --- data stage (data.smk) --------------------------------------------------------------


def dataset_mem_mb(wildcards):
    """Memory (MB) of a job on one dataset: the catalogue's size of that dataset; for a job
    over every dataset, the largest configured one."""
    dataset = getattr(wildcards, "dataset", None)
    if dataset is None:
        return max(dataset_entry(d).mem_mb for d in DATASETS)
    return dataset_entry(dataset).mem_mb


def declaration(wildcards):
    """``{D: its custom_datasets entry}`` for a declared dataset, else ``{}``: a param of
    every rule that reads the raw file, so that a changed declaration reruns it; the
    script resolves the dataset with ``catalogue.resolve(D, params.declaration)``."""
    spec = CUSTOM_DATASETS.get(wildcards.dataset)
    return {wildcards.dataset: spec} if spec is not None else {}


def download_url(wildcards):
    """The configured address of the dataset's raw file, else the catalogue's."""
    return catalogue.download_url(dataset_entry(wildcards.dataset), DATASET_OPTIONS)


def download_sha256(wildcards):
    """The configured sha256 of the dataset's raw file; empty: not checked."""
    spec = CUSTOM_DATASETS.get(wildcards.dataset)
    if spec is not None:
        return spec.get("sha256") or ""
    return catalogue.options_of(wildcards.dataset, DATASET_OPTIONS)["sha256"]


def raw_source(wildcards):
    """The raw file, folder or archive that preprocessing reads for the dataset."""
    return catalogue.raw_source(dataset_entry(wildcards.dataset), DATASET_OPTIONS)


def raw_input(wildcards):
    """The raw file, folder or archive of the dataset, when a rule makes it or it exists
    (userfair.workflow.catalogue.tracked_raw_input)."""
    return catalogue.tracked_raw_input(
        dataset_entry(wildcards.dataset), DATASET_OPTIONS
    )


def min_rating(wildcards):
    """Ratings >= this are interactions: the declaration's min_rating, else the config's
    preprocessing.min_rating."""
    own = dataset_entry(wildcards.dataset).min_rating
    return config["preprocessing"]["min_rating"] if own is None else own


def temporal_split(wildcards):
    """Whether the dataset is split by time (it has timestamps) or by a seeded shuffle."""
    return dataset_entry(wildcards.dataset).temporal


def split_folder(wildcards):
    """The folder of the dataset's split files (RecBole's data_path)."""
    return os.path.dirname(
        expand(rules.split.output.train, dataset=wildcards.dataset)[0]
    )


# --- models stage (models.smk): requests from the cost model, settings, grid points ----
# (userfair.workflow.costs, docs/cluster.md#costs)


# No training or export job asks for more minutes than this (the partition's limit).
MAX_RUNTIME = config["training"]["max_runtime"]


def data_size(dataset):
    """The size the cost model sees for the dataset (userfair.workflow.costs.dataset_size): its
    stats.json once the data stage wrote it, else the catalogue's Table-1 shape, else a
    declared dataset's raw file when it is there, else the stated default; train =
    1 - valid_share - test_share of the interactions."""
    shares = config["preprocessing"]
    entry = dataset_entry(dataset)
    return costs.dataset_size(
        dataset,
        entry,
        expand(rules.stats.output[0], dataset=dataset)[0],
        1 - shares["valid_share"] - shares["test_share"],
        raw_path=(
            catalogue.raw_source(entry, DATASET_OPTIONS)
            if dataset in CUSTOM_DATASETS
            else None
        ),
    )


def say_where_requests_come_from():
    """One line per dataset whose training requests are estimated before its split exists
    (userfair.workflow.costs.SOURCES), when a person runs Snakemake (not inside a job).
    """
    if workflow.remote_exec or workflow.subprocess_exec:
        return
    for dataset in DATASETS:
        size = data_size(dataset)
        if size.source != "stats":
            logger.info(
                f"{dataset}: the requests of its training jobs are "
                f"{costs.SOURCES[size.source]} ({size.users:,} users, {size.items:,} items, "
                f"{size.train:,} train interactions); a later run takes them from its "
                "stats.json"
            )


def cost_settings(model, point=None):
    """The training settings a job's cost depends on: training.planned_epochs (null: all
    training.epochs), the grid point's train_batch_size (else training's) and threads.
    """
    training = config["training"]
    params = {} if point is None else grids.point_params(GRID_POINTS, model, point)
    return costs.Settings(
        epochs=min(
            training["planned_epochs"] or training["epochs"], training["epochs"]
        ),
        train_batch_size=params.get("train_batch_size", training["train_batch_size"]),
        threads=training["threads"],
    )


def job_request(step, dataset, model, point=None, attempt=1):
    """What one tune (grid point ``point``) or topk job asks for: userfair.workflow.costs.request,
    runtime times the retry ``attempt``, at most MAX_RUNTIME."""
    return costs.request(
        step,
        model,
        data_size(dataset),
        cost_settings(model, point),
        models.get(model).gpus(config["training"]["device"]),
        MAX_RUNTIME,
        attempt,
    )


def dataset_resource(name):
    """Resource function of recbole_dataset (models.smk), ``name`` (mem_mb or runtime) of
    userfair.workflow.costs.dataset_request; the runtime grows with the retry attempt.
    """

    def resource(wildcards, attempt):
        request = costs.dataset_request(
            data_size(wildcards.dataset), MAX_RUNTIME, attempt
        )
        return getattr(request, name)

    return resource


def training_resource(step, name):
    """Resource function of tune and topk (models.smk), ``name`` (mem_mb or runtime) of the
    job's job_request; Snakemake passes the attempt (1, then 2, 3, ... on retries)."""

    def resource(wildcards, attempt):
        point = wildcards.point if step == "tune" else None
        request = job_request(step, wildcards.dataset, wildcards.model, point, attempt)
        return getattr(request, name)

    return resource


def job_points(step, model):
    """The jobs of ``step`` per dataset and model: every grid point of tune, one topk."""
    return range(len(GRID_POINTS[model])) if step == "tune" else [None]


def training_gpus(wildcards):
    """GPUs of a training or export job: one for a trainable model unless training.device
    is cpu; none for UserKNN, ItemKNN and RecBole's other traditional models
    (userfair.workflow.models.Model.gpus). The request a cluster gets: the local executor
    does not reserve GPUs (training_message says where a job trains)."""
    return models.get(wildcards.model).gpus(config["training"]["device"])


def training_message(what):
    """The message of a training or export job (``what``, with wildcards): its requests and
    where it trains, true on this machine and on a cluster's nodes: training.device cpu
    trains on the CPU; cuda, or auto where this machine has a GPU, on the requested GPU;
    auto on a machine without one on its CPU here, on the GPU where a node has one."""
    device = config["training"]["device"]
    if device == "cpu":
        where = "on the CPU (training.device cpu)"
    elif device == "cuda" or costs.gpu_here():
        where = "{resources.gpu} GPU"
    else:
        where = "{resources.gpu} GPU requested; on this machine (no GPU) the CPU"
    return f"{what} ({{resources.mem_mb}} MB, {{resources.runtime}} min, {where})"


def training_partition(wildcards):
    """The SLURM partition of a training or export job, decided by the same number as its
    GPU request: $USERFAIR_SLURM_GPU_PARTITION when it asks for a GPU, else
    $USERFAIR_SLURM_PARTITION (read at parse time; empty when unset). docs/cluster.md.
    """
    variable = (
        "USERFAIR_SLURM_GPU_PARTITION"
        if training_gpus(wildcards)
        else "USERFAIR_SLURM_PARTITION"
    )
    return os.environ.get(variable, "")


def training_settings():
    """What every training and export job receives
    (userfair.workflow.recbole_setup.Training, whose threads come from the rule's threads).
    """
    keys = ("epochs", "stopping_step", "device", "train_batch_size", "eval_batch_size")
    return {
        **{key: config["training"][key] for key in keys},
        "seed": config["seed"],
        "k": config["k"],
    }


def grid_point_files(name):
    """Input function: output ``name`` (valid, checkpoint) of `tune` for every grid point
    of the job's model, in grid order."""

    def files(wildcards):
        return expand(
            getattr(rules.tune.output, name),
            dataset=wildcards.dataset,
            model=wildcards.model,
            point=range(len(GRID_POINTS[wildcards.model])),
        )

    return files


def grid_point_folder(wildcards, output):
    """The working directory of one grid point's training (RecBole writes into it)."""
    return os.path.dirname(output.valid)


def vectors_folder(wildcards, output):
    """The working directory of the user vectors export."""
    return os.path.join(os.path.dirname(output[0]), "vectors")


def export_folder(wildcards, output):
    """The working directory of the top-k export."""
    return os.path.join(os.path.dirname(output.topk), "export")


def point_params(wildcards):
    """The hyper-parameters of the job's grid point."""
    return grids.point_params(GRID_POINTS, wildcards.model, wildcards.point)


# --- measures stage (measures.smk) ------------------------------------------------------


def evaluated_users(dataset):
    """The number of evaluated users (test users) of the dataset, from its stats.json:
    the checkpoint `stats` must have run before the caller's job is scheduled."""
    path = checkpoints.stats.get(dataset=dataset).output[0]
    return costs.read_stats(path)["test_users"]


def measure_route(dataset):
    """``dense`` or ``stream``: the route of the dataset's measures and decomposition
    (docs/measures.md#in-the-workflow), decided here and only here, by the library's one
    chooser (userfair.route.choose_route) on the evaluated users against
    measures.stream_above. The memory of the machine that builds the DAG does not count
    (available=inf): the jobs run elsewhere. The steps receive the decision as a param.
    """
    return route.choose_route(
        evaluated_users(dataset),
        available=math.inf,
        max_users=config["measures"]["stream_above"],
    )


def route_param(wildcards, input):
    """Param of `measures` and `users`: measure_route of the job's dataset (its stats.json,
    the checkpoint, is an input of the rule, as a param that reads a checkpoint needs).
    """
    return measure_route(wildcards.dataset)


def similarity_file(kind):
    """The similarity file ``kind`` as an input path template (with {dataset})."""
    return expand(rules.similarity.output[0], kind=kind, allow_missing=True)[0]


def uf_genre_similarity(wildcards):
    """The genre similarity when UF mixes it in (measures.gamma < 1), else nothing."""
    if config["measures"]["gamma"] < 1:
        return [similarity_file("genre").format(dataset=wildcards.dataset)]
    return []


def item_genres_of_kind(wildcards):
    """The dataset's item genres (D.item) for the genre similarity, else nothing."""
    if wildcards.kind == "genre":
        return expand(rules.genres.output[0], dataset=wildcards.dataset)
    return []


def uf_item_genres(wildcards):
    """The dataset's item genres when UF mixes in the genre similarity (gamma < 1) on the
    streamed route, else nothing."""
    if config["measures"]["gamma"] < 1:
        return expand(rules.genres.output[0], dataset=wildcards.dataset)
    return []


def opt_in_item_genres(wildcards):
    """The dataset's item genres when the opt-in genre similarity is configured
    (measures.similarities), else nothing."""
    if "genre" in EXTRA_SIMILARITIES:
        return expand(rules.genres.output[0], dataset=wildcards.dataset)
    return []


def opt_in_grades(wildcards):
    """The dataset's grades (rule grades) when graded relevance is configured
    (measures.relevance), else nothing: the input grades of every job that computes the
    graded measures, which joins them onto its split
    (userfair.workflow.steps.graded_splits)."""
    if GRADED:
        return expand(rules.grades.output[0], dataset=wildcards.dataset)
    return []


def opt_in_user_vectors(wildcards):
    """The user vectors of measures.similarities' embedding:MODEL on the dataset (rule
    user_vectors), else nothing."""
    if EMBEDDING_MODEL is None:
        return []
    return expand(
        rules.user_vectors.output[0], dataset=wildcards.dataset, model=EMBEDDING_MODEL
    )


def pair_stats_parts(wildcards):
    """The parts of pass one (`pairs_part`, measures.scatter of them: one when 1), which
    `pairs` gathers."""
    return scatter.measures(scatter_template(rules.pairs_part.output[0], wildcards))


def streamed_item_genres(wildcards):
    """The item genres the streamed route reads: UF's (gamma < 1) or the opt-in genre
    similarity's, else nothing."""
    return uf_item_genres(wildcards) or opt_in_item_genres(wildcards)


def measure_inputs(wildcards):
    """Input function (use with unpack) of `measures`: the similarity files (cos, jacc,
    genre) on the dense route; on the streamed route pass one (pairs) and the parts of pass
    two (sums: measures.scatter of them, one when 1), which `measures` gathers; on both,
    the item genres (item) when gamma < 1 (streamed) or the opt-in genre similarity reads
    them, and the user vectors of embedding:MODEL (vectors)."""
    if measure_route(wildcards.dataset) == "dense":
        return {
            "cos": similarity_file("cos").format(dataset=wildcards.dataset),
            "jacc": similarity_file("jacc").format(dataset=wildcards.dataset),
            "genre": uf_genre_similarity(wildcards),
            "item": opt_in_item_genres(wildcards),
            "vectors": opt_in_user_vectors(wildcards),
        }
    named = {
        "pairs": expand(rules.pairs.output[0], dataset=wildcards.dataset)[0],
        "item": streamed_item_genres(wildcards),
        "vectors": opt_in_user_vectors(wildcards),
    }
    named["sums"] = scatter.measures(
        scatter_template(rules.measure_sums.output[0], wildcards)
    )
    return named


# --- uncertainty stage (uncertainty.smk) ------------------------------------------------


# The bootstrap over the evaluated users (config uncertainty; resamples 0: off).
RESAMPLES = config["uncertainty"]["resamples"]


def uncertainty_settings():
    """Params of the bootstrap: the measures' settings, the resamples and their seed (the
    config's seed, like every random choice), the same for every model of a dataset so that
    the comparisons are paired."""
    return {
        **measure_settings("epsilon", "envy_utility", "gamma"),
        "resamples": RESAMPLES,
        "seed": config["seed"],
    }


def agreement_intervals(wildcards):
    """Fig. 1's tau intervals when the bootstrap is on: over the users, or over replicates
    and users when training.replicates > 1 (table_replicates); else nothing (the figure is
    then exactly the one without it)."""
    if not RESAMPLES:
        return []
    if config["training"]["replicates"] > 1:
        return [rules.table_replicates.output.agreement]
    return [rules.table_uncertainty.output.agreement]


def scores_ci_groups(wildcards):
    """Table 2's group rows: the group measures with intervals (table_groups) when the run
    has a grouping (measures.groups not []), else nothing."""
    return [rules.table_groups.output.csv] if group_specs() else []


def agreement_groups(wildcards):
    """Fig. 1's group panels: the group measures' tau against the individual ones
    (table_groups) with a grouping (measures.groups not []), else nothing."""
    return [rules.table_groups.output.agreement] if group_specs() else []


# --- replicates stage (replicates.smk): training.replicates, docs/training.md#replicates --

# R training replicates of every model; 1: none beyond today's model (no job, no file).
REPLICATES = config["training"]["replicates"]
if REPLICATES > 1 and not config["uncertainty"]["resamples"]:
    raise ValueError(
        "config: training.replicates > 1 needs uncertainty.resamples > 0 (the intervals "
        "over replicates and users read every replicate's bootstrap resamples)"
    )
# The models whose replicates are trained (a seed changes their lists); the others' are
# replicate 0 (userfair.workflow.replication.retrained).
TRAINED_REPLICATES = [m for m in MODELS if models.get(m).trainable]
# training.replicate_split: the datasets whose split replicate r >= 1 redraws with its seed
# (replicates.smk, replicate_split): those split at random, when R > 1. There every model,
# the KNN ones too, has its own replicates. A dataset split by time keeps its one split.
REDRAWN = replication.redrawn_datasets(
    {d: dataset_entry(d).temporal for d in DATASETS},
    config["training"]["replicate_split"],
    REPLICATES,
)
# The models that may have their own replicate jobs on some dataset (replicated_models).
REPLICATED_MODELS = MODELS if REDRAWN else TRAINED_REPLICATES


def check_replicate_split():
    """training.replicate_split (userfair.workflow.replication.replicate_split_problems):
    its error stops the parse; its warning is said when a person runs Snakemake."""
    error, warning = replication.replicate_split_problems(
        {d: dataset_entry(d).temporal for d in DATASETS},
        config["training"]["replicate_split"],
        REPLICATES,
        EMBEDDING_MODEL,
    )
    if error:
        raise ValueError(error)
    if warning and not (workflow.remote_exec or workflow.subprocess_exec):
        logger.warning(warning)


check_replicate_split()


def replicated_models(dataset):
    """The models with their own replicates r >= 1 on ``dataset``: every model where the
    split is redrawn (REDRAWN: the KNN lists change with the split), else the trainable
    ones."""
    return MODELS if dataset in REDRAWN else TRAINED_REPLICATES


def replicate_split_seed(wildcards):
    """The seed of replicate r's split (userfair.workflow.replication.replicate_seed)."""
    return replication.replicate_seed(config["seed"], int(wildcards.replicate))


def replicate_splits(wildcards):
    """Input function (use with unpack): train, valid, test of replicate r of the job's
    dataset: its own split (rule replicate_split) where the split is redrawn, else the
    dataset's (rule split)."""
    own = wildcards.dataset in REDRAWN
    template = rules.replicate_split.output if own else rules.split.output
    return {
        name: getattr(template, name).format(**wildcards)
        for name in ("train", "valid", "test")
    }


def replicate_item_genres(wildcards):
    """The item genres of replicate r's split (rule replicate_genres), as a list."""
    return [rules.replicate_genres.output[0].format(**wildcards)]


def replicate_item_genres_of_kind(wildcards):
    """Input of `replicate_similarity`: replicate r's item genres for the genre
    similarity, else nothing (as item_genres_of_kind for the dataset's split)."""
    return replicate_item_genres(wildcards) if wildcards.kind == "genre" else []


def replicate_data_dir(wildcards):
    """The folder of replicate r's split files (RecBole's data_path)."""
    return os.path.dirname(replicate_splits(wildcards)["train"])


def replicate_similarities(wildcards):
    """Input function (use with unpack): the dense similarity files (cos, jacc, and genre
    when UF mixes it in) of replicate r's split: its own (rule replicate_similarity) where
    the split is redrawn, else the dataset's."""
    named = {
        "cos": similarity_file("cos").format(dataset=wildcards.dataset),
        "jacc": similarity_file("jacc").format(dataset=wildcards.dataset),
        "genre": uf_genre_similarity(wildcards),
    }
    if wildcards.dataset not in REDRAWN:
        return named
    own = rules.replicate_similarity.output[0]
    return {
        kind: (
            [own.format(kind=kind, **wildcards) for _ in files]
            if isinstance(files, list)
            else own.format(kind=kind, **wildcards)
        )
        for kind, files in named.items()
    }


# The drawing code of fig_replicates: the shared one and its own module.
REPLICATE_DRAWING_CODE = DRAWING_CODE + [
    os.path.relpath(
        os.path.join(workflow.basedir, "userfair/workflow/replicate_figure.py")
    )
]


def nested_param():
    """Param of table_replicates: the datasets whose split is redrawn (REDRAWN), whose
    inference is nested (docs/method.md#replicates); none without one, so that a run with a
    fixed split gets no new param (no rerun)."""
    return {"nested": REDRAWN} if REDRAWN else {}


def replicate_resource(name):
    """Resource function of `replicate`: a tune job of the winner's model plus its export
    (userfair.workflow.costs.request of both): the runtimes added, the larger memory."""

    def resource(wildcards, attempt):
        requests = [
            job_request(step, wildcards.dataset, wildcards.model, None, attempt)
            for step in ("tune", "topk")
        ]
        if name == "runtime":
            return min(sum(r.runtime for r in requests), MAX_RUNTIME)
        return max(getattr(r, name) for r in requests)

    return resource


def replicate_folder(wildcards, output):
    """The working directory of one replicate's training (RecBole writes into it)."""
    return os.path.dirname(output.valid)


def replicate_file(kind, dataset, model, replicate):
    """The file of replicate ``replicate`` of a model, ``kind`` one of topk, measures,
    uncertainty, groups, group_resamples: the replicate's own (rules replicate,
    replicate_measures, replicate_uncertainty, replicate_groups) when it is retrained, else
    replicate 0's (rules topk, measures, uncertainty, groups)."""
    own = replication.retrained(
        models.get(model).trainable, replicate, redrawn=dataset in REDRAWN
    )
    template = {
        "topk": (rules.replicate.output.topk, rules.topk.output.topk),
        "measures": (rules.replicate_measures.output[0], rules.measures.output[0]),
        "uncertainty": (
            rules.replicate_uncertainty.output[0],
            rules.uncertainty.output[0],
        ),
        "groups": (rules.replicate_groups.output.json, rules.groups.output.json),
        "group_resamples": (
            rules.replicate_groups.output.resamples,
            rules.groups.output.resamples,
        ),
    }[kind][0 if own else 1]
    return template.format(dataset=dataset, model=model, replicate=replicate)


def per_replicate(kind, prefix=""):
    """Input function (use with unpack): named inputs ``PREFIXD/M/r`` -> ``replicate_file``
    for every configured dataset, model and replicate 0..R-1."""

    def named(wildcards):
        return {
            f"{prefix}{d}/{m}/{r}": replicate_file(kind, d, m, r)
            for d in DATASETS
            for m in MODELS
            for r in range(REPLICATES)
        }

    return named


def replicate_measure_inputs(wildcards):
    """Input function (use with unpack) of `replicate_measures`: as `measure_inputs`, with
    replicate r's split (replicate_splits) and, where it is redrawn, its similarities
    (replicate_similarities; the streamed route is refused there), and the parts of pass
    two of the replicate's own lists (`replicate_sums`) on the streamed route."""
    named = {**measure_inputs(wildcards), **replicate_splits(wildcards)}
    if wildcards.dataset in REDRAWN:
        if "sums" in named:
            raise ValueError(
                f"config training.replicate_split: {wildcards.dataset} has more evaluated "
                "users than measures.stream_above, and a redrawn split's streamed measures "
                "are not built yet; raise measures.stream_above or set replicate_split false"
            )
        named.update(replicate_similarities(wildcards))
        if named.get("item"):  # the opt-in genre similarity reads the split's genres
            named["item"] = replicate_item_genres(wildcards)
    if "sums" in named:
        named["sums"] = scatter.measures(
            scatter_template(rules.replicate_sums.output[0], wildcards)
        )
    return named


# --- who stage (who.smk) ----------------------------------------------------------------


def users_inputs(wildcards):
    """Input function (use with unpack) of `users`: what `measures` reads for the route
    (the similarity files, or pass one and the item genres), without the scattered parts
    of pass two, and the raw source when who.features names user features (raw)."""
    named = {k: v for k, v in measure_inputs(wildcards).items() if k != "sums"}
    named["raw"] = raw_input(wildcards) if config["who"]["features"] else []
    return named


def who_settings(*keys):
    """The ``who:`` config keys ``keys`` as params of a who rule; with ``resamples`` also
    the seed (the config's) and the level of the bootstrap (uncertainty.level)."""
    settings = {key: config["who"][key] for key in keys}
    if "resamples" in keys:
        settings["seed"] = config["seed"]
        settings["level"] = config["uncertainty"]["level"]
    return settings


# --- group stage (groups.smk) ----------------------------------------------------------

# The group figure's code: the drawing code and its reading (an edit reruns fig_groups).
GROUP_FIGURE_CODE = DRAWING_CODE + [
    os.path.relpath(
        os.path.join(workflow.basedir, "userfair/workflow/group_reading.py")
    )
]


def group_specs():
    """The groupings of the run (userfair.groups.specs_of)."""
    return specs_of(config["measures"]["groups"], config["who"]["features"])


def groups_raw(wildcards):
    """The raw source of the dataset when a grouping reads a user feature."""
    features = any(spec.startswith("feature:") for spec in group_specs())
    return raw_input(wildcards) if features else []


def group_figure_tests(wildcards):
    """The paired comparisons the group figure's reading names: over replicates and users
    with training.replicates > 1 (table_replicates, with the group rows), else over the
    users (table_uncertainty; the group ones: table_groups)."""
    if REPLICATES > 1:
        return rules.table_replicates.output.significance
    return rules.table_uncertainty.output.significance


def replicate_group_inputs(wildcards):
    """Input function (use with unpack) of `table_replicates`: every replicate's groups
    files (``groups:D/M/r``, ``group_resamples:D/M/r``) with a grouping, else none."""
    if not group_specs():
        return {}
    return {
        **per_replicate("groups", prefix="groups:")(wildcards),
        **per_replicate("group_resamples", prefix="group_resamples:")(wildcards),
    }


def uncertainty_runs(wildcards):
    """The uncertainty stage's resamples of every run when the bootstrap is on."""
    if not RESAMPLES:
        return {}
    return per_run(rules.uncertainty.output[0], prefix="resamples:")(wildcards)


# --- experiments stage (experiments.smk) ------------------------------------------------


# The lists of Fig. 3 come from experiments.model (one of models, checked by
# userfair.workflow.schema); null: the last configured model.
EXPERIMENT_MODEL = config["experiments"]["model"] or MODELS[-1]


def experiment_model_topk(wildcards):
    """The top-k lists of the similarity experiment's model on the job's dataset."""
    return expand(
        rules.topk.output.topk, dataset=wildcards.dataset, model=EXPERIMENT_MODEL
    )[0]


# --- variants stage (variants.smk): the analysis of the opt-in PUF variants ----------

# On with any opt-in measure (measures.relevance graded, measures.similarities beyond cos
# and jacc); off by default: no job, every other output as without it.
VARIANTS = GRADED or bool(EXTRA_SIMILARITIES)
# The drawing code of fig_variants (see DRAWING_CODE).
VARIANT_DRAWING_CODE = DRAWING_CODE + [
    os.path.relpath(
        os.path.join(workflow.basedir, "userfair/workflow/variant_figures.py")
    )
]


# --- reproduction stage (reproduction.smk): the paper's printed numbers ---------------


# The configured datasets whose preprocessing and split are the paper's; the others get a
# "no published numbers" entry in `paper_gap`.
PAPER_DATASETS = [
    d
    for d in DATASETS
    if not reproduction.why_not_published(d, CUSTOM_DATASETS, config["preprocessing"])
]

# Why each of the other configured datasets has no published numbers (the report says it).
UNPUBLISHED = {
    d: reproduction.why_not_published(d, CUSTOM_DATASETS, config["preprocessing"])
    for d in DATASETS
    if d not in PAPER_DATASETS
}


def paper_gap_inputs(wildcards):
    """Input function (use with unpack) of `paper_gap`: for every dataset of
    PAPER_DATASETS its stats (``stats:D``), every model's measures (``measures:D/M``) and,
    with the bootstrap on, resamples (``resamples:D/M``)."""
    named, resamples = {}, rules.uncertainty.output[0] if RESAMPLES else None
    for d in PAPER_DATASETS:
        named[f"stats:{d}"] = expand(rules.stats.output[0], dataset=d)[0]
        for m in MODELS:
            run = {"dataset": d, "model": m}
            named[f"measures:{d}/{m}"] = expand(rules.measures.output[0], **run)[0]
            if resamples:
                named[f"resamples:{d}/{m}"] = expand(resamples, **run)[0]
    return named


def paper_gap_outputs():
    """The outputs of `paper_gap`: the verdicts always (in the report); the cell tables in
    the report and the figure only when some dataset has published numbers (PAPER_DATASETS);
    without one the tables are written header-only, outside the report, and no figure is
    drawn (the verdicts' caption says why)."""

    def shown(path, caption, labels):
        if not PAPER_DATASETS:
            return path
        return report(path, caption=caption, category="Reproduction", labels=labels)

    outputs = {
        "csv": shown(
            "results/tables/paper_gap.csv",
            "../report/paper_gap.rst",
            {"table": "The paper's numbers beside ours", "format": "CSV"},
        ),
        "verdicts": report(
            "results/tables/paper_gap_verdicts.csv",
            caption="../report/paper_gap_verdicts.rst",
            category="Reproduction",
            labels={"table": "Verdict per dataset", "format": "CSV"},
        ),
        "tau": shown(
            "results/tables/paper_gap_tau.csv",
            "../report/paper_gap_tau.rst",
            {"table": "Model orderings: paper vs ours", "format": "CSV"},
        ),
        "table1": shown(
            "results/tables/paper_gap_stats.csv",
            "../report/paper_gap_stats.rst",
            {"table": "Table 1: paper vs ours", "format": "CSV"},
        ),
    }
    if PAPER_DATASETS:
        for kind in ("pdf", "png"):
            outputs[kind] = report(
                f"results/figures/paper_gap.{kind}",
                caption="../report/fig_paper_gap.rst",
                category="Reproduction",
                labels={"figure": "Ours / paper", "format": kind.upper()},
            )
    return outputs


def print_verdicts(path):
    """Print the verdict lines of `paper_gap` (``path``) when the file exists: the end of a
    run says how it compares with the paper, not only the job's log."""
    if not os.path.exists(path):
        return
    with open(path, newline="", encoding="utf-8") as handle:
        lines = [row["line"] for row in csv.DictReader(handle)]
    print(f"The paper's numbers beside this run ({path}):", *lines, sep="\n  ")


def paper_gap_run():
    """What the figure's caption and note say of the run: the grid file, its points over
    all models, the epochs."""
    return {
        "grid": config["grid"],
        "points": sum(len(GRID_POINTS[m]) for m in MODELS),
        "epochs": config["training"]["epochs"],
    }


# --- claims stage (claims.smk): the paper's claims checked on this run ---------------


def claims_inputs(wildcards):
    """Input function (use with unpack) of `claims`: every replicate's measures
    (``measures:D/M/r``) and, with the bootstrap on, its resamples (``resamples:D/M/r``);
    per dataset its stats (``stats:D``) and the experiments of Figs. 2-4
    (``relevance:D``, ``similarity:D``, ``extreme:D``)."""
    named = per_replicate("measures", prefix="measures:")(wildcards)
    if RESAMPLES:
        named.update(per_replicate("uncertainty", prefix="resamples:")(wildcards))
    outputs = {
        "stats": rules.stats.output[0],
        "relevance": rules.exp_relevance.output[0],
        "similarity": rules.exp_similarity.output[0],
        "extreme": rules.exp_extreme.output[0],
    }
    for d in DATASETS:
        for name, template in outputs.items():
            named[f"{name}:{d}"] = template.format(dataset=d)
    return named


def claims_run():
    """What the report's first page says ran, beside the datasets and models."""
    return {
        "seed": config["seed"],
        "replicates": REPLICATES,
        "resamples": RESAMPLES,
        "level": config["uncertainty"]["level"],
        "grid": config["grid"],
        "epochs": config["training"]["epochs"],
    }


# --- plan stage (plan.smk) --------------------------------------------------------------


def check_costs():
    """Raise ValueError, before any job runs, for every tune or topk job that the configured
    device cannot finish within MAX_RUNTIME (userfair.workflow.costs.infeasible: the estimate and
    the config keys to change)."""
    problems = {
        costs.infeasible(
            step,
            model,
            data_size(dataset),
            cost_settings(model, point),
            models.get(model).gpus(config["training"]["device"]),
            MAX_RUNTIME,
        )
        for step in costs.RULES
        for dataset in DATASETS
        for model in MODELS
        for point in job_points(step, model)
    } - {None}
    if problems:
        raise ValueError(
            "the cost model (docs/cluster.md#costs) says these jobs cannot finish on the "
            "configured device; nothing was submitted:\n" + "\n".join(sorted(problems))
        )


def replicate_request(dataset, model):
    """What one `replicate` job asks for: a tune job of the winner's model (its grid point
    unknown before the grid search: the training settings' cost) plus its export, the
    runtimes added, the larger memory (replicate_resource)."""
    tune, topk = (job_request(step, dataset, model) for step in costs.RULES)
    basis = "measured" if tune.basis == topk.basis == "measured" else "extrapolated"
    return costs.Request(
        mem_mb=max(tune.mem_mb, topk.mem_mb),
        runtime=min(tune.runtime + topk.runtime, MAX_RUNTIME),
        gpus=max(tune.gpus, topk.gpus),
        basis=basis,
    )


def energy_inputs(wildcards):
    """Input function (use with unpack) of `table_energy`: the output of every training and
    export job of the run, named ``RULE:D/M/JOB`` (tune: the grid point's valid.json; topk:
    the lists; replicate r: its valid.json), beside which the job wrote its energy record.
    """
    named = {}
    for d in DATASETS:
        for m in MODELS:
            run = {"dataset": d, "model": m}
            for p in job_points("tune", m):
                named[f"tune:{d}/{m}/{p}"] = rules.tune.output.valid.format(
                    point=p, **run
                )
            named[f"topk:{d}/{m}"] = rules.topk.output.topk.format(**run)
            if m in replicated_models(d):
                for r in range(1, REPLICATES):
                    valid = rules.replicate.output.valid.format(replicate=r, **run)
                    named[f"replicate:{d}/{m}/{r}"] = valid
    return named


# The power model of the plan's energy_kwh and co2e_kg (config energy, docs/cluster.md#energy).
POWER = energy.PowerModel(**config["energy"])


def plan_rows():
    """The rows of results/plan.csv: per dataset its recbole_dataset job (model empty: one
    for every model), then per rule x dataset x model the requests of job_request
    (attempt 1), summed up by userfair.workflow.plan.plan_row, then with
    training.replicates R > 1 the R - 1 `replicate` jobs of every trainable model; each row
    with its energy (userfair.workflow.energy.with_energy)."""
    threads = config["training"]["threads"]
    builds = [
        plan_report.plan_row(
            "recbole_dataset",
            dataset,
            "",
            [costs.dataset_request(data_size(dataset), MAX_RUNTIME)],
            1,
        )
        for dataset in DATASETS
    ]
    rows = builds + [
        plan_report.plan_row(
            step,
            dataset,
            model,
            [job_request(step, dataset, model, p) for p in job_points(step, model)],
            threads,
        )
        for step in costs.RULES
        for dataset in DATASETS
        for model in MODELS
    ]
    if REPLICATES > 1:
        rows += [
            plan_report.plan_row(
                "replicate",
                dataset,
                model,
                [replicate_request(dataset, model)] * (REPLICATES - 1),
                threads,
            )
            for dataset in DATASETS
            for model in replicated_models(dataset)
        ]
    return [energy.with_energy(row, POWER) for row in rows]
