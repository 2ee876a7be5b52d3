# The params of the rules: the config values a job's output depends on, so that changing
# one reruns exactly the jobs that read it (docs/cluster.md#what-re-runs-after-a-change).
# Settings that change only how fast a job runs are never params: the scripts read them
# from the config (userfair.workflow.steps.SPEED_KEYS).

from userfair.workflow import catalogue, grids, replication, steps


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


def measure_settings(*keys):
    """The ``measures:`` config keys ``keys`` with ``k``, as params of a measures rule. A
    speed-only key (userfair.workflow.steps.SPEED_KEYS: block size, device) is refused:
    params rerun a job when they change, so scripts read those from the config."""
    speed = set(keys) & set(steps.SPEED_KEYS)
    if speed:
        raise ValueError(f"speed-only settings {sorted(speed)} must not be params")
    return {"k": config["k"], **{key: config["measures"][key] for key in keys}}


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


def min_rating(wildcards):
    """Ratings >= this are interactions: the declaration's min_rating, else the config's
    preprocessing.min_rating."""
    own = dataset_entry(wildcards.dataset).min_rating
    return config["preprocessing"]["min_rating"] if own is None else own


def temporal_split(wildcards):
    """Whether the dataset is split by time (it has timestamps) or by a seeded shuffle."""
    return dataset_entry(wildcards.dataset).temporal


def training_settings():
    """What every training and export job receives
    (userfair.workflow.recbole_setup.Training, whose threads come from the rule's threads).
    """
    keys = ("epochs", "stopping_step", "device", "train_batch_size")
    # speed-only (steps.TRAINING_SPEED_KEYS): the scripts add them, never params
    assert not set(keys) & set(steps.TRAINING_SPEED_KEYS), keys
    return {
        **{key: config["training"][key] for key in keys},
        "seed": config["seed"],
        "k": config["k"],
    }


def point_params(wildcards):
    """The hyper-parameters of the job's grid point."""
    return grids.point_params(GRID_POINTS, wildcards.model, wildcards.point)


def uncertainty_settings():
    """Params of the bootstrap: the measures' settings, the resamples and their seed (the
    config's seed, like every random choice), the same for every model of a dataset so that
    the comparisons are paired."""
    return {
        **measure_settings("epsilon", "envy_utility", "gamma"),
        "resamples": RESAMPLES,
        "seed": config["seed"],
    }


def replicate_split_seed(wildcards):
    """The seed of replicate r's split (userfair.workflow.replication.replicate_seed)."""
    return replication.replicate_seed(config["seed"], int(wildcards.replicate))


def nested_param():
    """Param of table_replicates: the datasets whose split is redrawn (REDRAWN), whose
    inference is nested (docs/method.md#replicates); none without one, so that a run with a
    fixed split gets no new param (no rerun)."""
    return {"nested": REDRAWN} if REDRAWN else {}


def who_settings(*keys):
    """The ``who:`` config keys ``keys`` as params of a who rule; with ``resamples`` also
    the seed (the config's) and the level of the bootstrap (uncertainty.level)."""
    settings = {key: config["who"][key] for key in keys}
    if "resamples" in keys:
        settings["seed"] = config["seed"]
        settings["level"] = config["uncertainty"]["level"]
    return settings


def paper_gap_run():
    """What the figure's caption and note say of the run: the grid file, its points over
    all models, the epochs."""
    return {
        "grid": config["grid"],
        "points": sum(len(GRID_POINTS[m]) for m in MODELS),
        "epochs": config["training"]["epochs"],
    }


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
