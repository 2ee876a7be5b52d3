# The checks of the config that the schema cannot express, run while Snakemake parses the
# workflow (a bad value stops the run before any job, naming its key), and what a run says
# to the person who started it: another configuration's outputs in results/, where the
# training requests come from, the paper-gap verdicts at the end.

import csv
import os
import re
import sys
from pathlib import Path

from snakemake.logging import logger

from userfair.workflow import config_bounds
from userfair.workflow import (
    catalogue,
    costs,
    layout,
    models,
    replication,
    scatter_plan,
)
from userfair.workflow.steps.targets import (
    newer_than_record,
    other_config,
    recorded_config,
)


def no_job_runs():
    """Whether this invocation runs no job that reads data: a dry run (-n, --dry-run) or
    the plan alone (target plan or results/plan.csv, which needs no data). Read from the
    command line: the Snakefile is parsed before Snakemake knows its executor."""
    args = sys.argv[1:]
    dry = any(
        a in ("--dry-run", "--dryrun") or re.fullmatch(r"-[A-Za-z]*n[A-Za-z]*", a)
        for a in args
    )
    return dry or any(a in ("plan", layout.output("plan")) for a in args)


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
        preprocessed = layout.template("preprocess").format(dataset=dataset)
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
        stats = layout.template("stats").format(dataset=dataset)
        if Path(stats).is_file():
            items = costs.read_stats(stats)["items"]
            config_bounds.check_items(config["k"], items, f"{dataset} ({stats})")
        elif (items := catalogue.items_bound(entry, DATASET_OPTIONS)) is not None:
            where = f"{dataset} (the catalogue's raw file, before preprocessing)"
            config_bounds.check_items(config["k"], items, where)
        elif entry.source == "custom" and (shape := costs.raw_shape(entry, source)):
            where = f"{dataset} (its raw file {source}, before preprocessing)"
            config_bounds.check_items(config["k"], shape.items, where)


check_config_beyond_schema()


def check_replicates():
    """training.replicates > 1 needs the bootstrap (the intervals over replicates and users
    read every replicate's resamples); training.replicate_split
    (userfair.workflow.replication.replicate_split_problems): its error stops the parse;
    its warning is said when a person runs Snakemake."""
    if REPLICATES > 1 and not config["uncertainty"]["resamples"]:
        raise ValueError(
            "config: training.replicates > 1 needs uncertainty.resamples > 0 (the "
            "intervals over replicates and users read every replicate's bootstrap "
            "resamples)"
        )
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


check_replicates()


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
    why = other_config(record, DATASETS, MODELS, config)
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
    if other_config(record, DATASETS, MODELS, config) is None:
        return
    os.remove(record)
    logger.warning(
        f"{record} removed: this configuration's jobs now write into results/, which held "
        "another's; a report is refused until a complete run of one configuration"
    )


def check_costs():
    """Raise ValueError, before any job runs, for every tune or topk job that the configured
    device cannot finish within MAX_RUNTIME (userfair.workflow.costs.infeasible: the estimate and
    the config keys to change), and for every dataset whose streamed measures' longest job
    cannot in measures.scatter parts (userfair.workflow.scatter_plan.infeasible)."""
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
    problems |= {
        scatter_plan.infeasible(
            data_size(dataset),
            SCATTER,
            MAX_RUNTIME,
            config["measures"]["threads"],
        )
        for dataset in DATASETS
        if sized_route(dataset) == "stream"
    } - {None}
    if problems:
        raise ValueError(
            "the cost model (docs/cluster.md#costs) says these jobs cannot finish on the "
            "configured device; nothing was submitted:\n" + "\n".join(sorted(problems))
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


def print_verdicts(path):
    """Print the verdict lines of `paper_gap` (``path``) when the file exists: the end of a
    run says how it compares with the paper, not only the job's log."""
    if not os.path.exists(path):
        return
    with open(path, newline="", encoding="utf-8") as handle:
        lines = [row["line"] for row in csv.DictReader(handle)]
    print(f"The paper's numbers beside this run ({path}):", *lines, sep="\n  ")
