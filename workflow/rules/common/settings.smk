# The configured names every stage uses, read once from the config: the datasets and
# models, the splits and similarity kinds, the opt-in measures and plugins, the grid of
# every model (checked while the DAG is built), the scatter of the streamed route, the
# wildcard constraints, and each stage's switches (resamples, replicates, variants, the
# datasets with published numbers). Included first (workflow/Snakefile): every other file
# of rules/common/ and every stage reads these names.

import os
import re
from pathlib import Path

from userfair.formulas.groups import specs_of
from userfair.workflow import catalogue, energy, grids, models, replication
from userfair.workflow import figure_registry, reproduction, steps

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
# The user similarities (results/D/similarity/KIND.npz; userfair.similarity.pairwise.KINDS).
SIMILARITY_KINDS = ["cos", "jacc", "genre"]
# The configured datasets whose raw files carry item genres (they get D.item, the genre
# similarity and the gamma experiment).
GENRE_DATASETS = [d for d in DATASETS if dataset_entry(d).has_genres]
# The opt-in measures (config measures.relevance, measures.similarities;
# docs/measures.md#opt-in-measures): GRADED adds rule grades (each kept interaction's grade,
# results/D/data/grades.parquet, beside the binary split: no model is retrained) and the
# graded measures, which only the measure jobs compute (their input grades, opt_in_grades);
# EXTRA_SIMILARITIES (registry names of userfair.similarity.registry beyond the paper's cos and
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


# Datasets that `download` can fetch: the catalogue's (qk-video is never downloaded,
# docs/data.md) and the declared ones with a url.
DOWNLOADABLE = [n for n, d in catalogue.CATALOGUE.items() if d.source != "tenrec"] + [
    n for n in CUSTOM_DATASETS if catalogue.needs_download(dataset_entry(n))
]
# Suffixes of a downloaded raw file: zip (RecBole archives) or a declared table's format
# (the catalogue's table of raw formats).
RAW_SUFFIXES = list(catalogue.RAW_SUFFIX.values())


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
# redraws the figures and nothing else: every drawing module (a module of
# userfair.workflow that declares a figure, found by figure_registry.drawing_modules: a new
# one joins by itself), the figures' shared code and readings, and the paper gap's. Code
# that computes results (training, measures, experiments, tables) is not tracked: a
# refactor must never silently retrain or recompute; rerun such rules with --forcerun.
# Paths found beside the Snakefile, relative to the working directory.
DRAWING_CODE = [
    os.path.relpath(os.path.join(workflow.basedir, "userfair", module))
    for module in (
        *(
            os.path.join(*name.split(".")[1:]) + ".py"
            for name in figure_registry.drawing_modules()
        ),
        "workflow/figure_registry.py",
        "workflow/figure_reading.py",
        "workflow/group_reading.py",
        "workflow/figure_style.py",
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


# No training or export job asks for more minutes than this (the partition's limit).
MAX_RUNTIME = config["training"]["max_runtime"]


# The bootstrap over the evaluated users (config uncertainty; resamples 0: off).
RESAMPLES = config["uncertainty"]["resamples"]


# R training replicates of every model; 1: none beyond today's model (no job, no file).
REPLICATES = config["training"]["replicates"]
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


def replicated_models(dataset):
    """The models with their own replicates r >= 1 on ``dataset``: every model where the
    split is redrawn (REDRAWN: the KNN lists change with the split), else the trainable
    ones."""
    return MODELS if dataset in REDRAWN else TRAINED_REPLICATES


def group_specs():
    """The groupings of the run (userfair.formulas.groups.specs_of)."""
    return specs_of(config["measures"]["groups"], config["who"]["features"])


# The lists of Fig. 3 come from experiments.model (one of models, checked by
# userfair.workflow.schema); null: the last configured model.
EXPERIMENT_MODEL = config["experiments"]["model"] or MODELS[-1]


# On with any opt-in measure (measures.relevance graded, measures.similarities beyond cos
# and jacc); off by default: no job, every other output as without it.
VARIANTS = GRADED or bool(EXTRA_SIMILARITIES)
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


# The power model of the plan's energy_kwh and co2e_kg (config energy, docs/cluster.md#energy).
POWER = energy.PowerModel(**config["energy"])
