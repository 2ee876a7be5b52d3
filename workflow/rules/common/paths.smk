# Where a rule's files are: the named inputs of the rules that gather every dataset, run or
# replicate (``D/M``, ``measures:D/M/r``: the scripts look each file up by name), the file
# of a replicate (its own or replicate 0's), the scattered parts' templates, the working
# folders of the training jobs, and outputs that join the report only when they hold
# something. The templates themselves are the file layout, stated once in
# userfair.workflow.layout: every rule's output: and log: read it (layout.output("RULE"),
# layout.log("RULE")), and the input functions read them back as rules.RULE.output.

import os

from userfair.workflow import layout, models, replication


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


def scatter_template(template, wildcards):
    """``template`` with the job's dataset (model, replicate) filled in, {scatteritem} left
    for ``scatter.measures``."""
    for name in ("dataset", "model", "replicate"):
        if name in wildcards.keys():
            template = template.replace(f"{{{name}}}", wildcards[name])
    return template


def similarity_file(kind):
    """The similarity file ``kind`` as an input path template (with {dataset})."""
    return expand(rules.similarity.output[0], kind=kind, allow_missing=True)[0]


def raw_input(wildcards):
    """The raw file, folder or archive of the dataset, when a rule makes it or it exists
    (userfair.workflow.catalogue.tracked_raw_input)."""
    return catalogue.tracked_raw_input(
        dataset_entry(wildcards.dataset), DATASET_OPTIONS
    )


def split_folder(wildcards):
    """The folder of the dataset's split files (RecBole's data_path)."""
    return os.path.dirname(
        expand(rules.split.output.train, dataset=wildcards.dataset)[0]
    )


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


def replicate_data_dir(wildcards):
    """The folder of replicate r's split files (RecBole's data_path)."""
    return os.path.dirname(replicate_splits(wildcards)["train"])


def replicate_folder(wildcards, output):
    """The working directory of one replicate's training (RecBole writes into it)."""
    return os.path.dirname(output.valid)


def report_when(shown, path, **report_args):
    """Output ``path`` in the report (``report(path, **report_args)``) when ``shown`` is
    true, else a plain output (a table the run writes header-only: nothing to show)."""
    return report(path, **report_args) if shown else path


def figure_outputs(rule, labels, reading=False):
    """The outputs of figure rule ``rule`` (use as ``**figure_outputs(...)``; the rule runs
    scripts/figure.py, which draws the figures the drawing modules declare for it,
    userfair.workflow.figure_registry), its files by
    the figures' convention (layout.figure_file): for a rule of one figure (``labels`` its
    report label) ``pdf`` and ``png`` in the report, captioned by report/RULE.rst, and with
    ``reading`` its reading (``reading``, included by the caption); for a rule of several
    (``labels``: PART -> label) ``PART_pdf`` and ``PART_png``, captioned by
    report/RULE_PART.rst, then the ``PART_reading`` of each."""
    parts = {"": labels} if isinstance(labels, str) else labels
    outputs = {}
    for part, label in parts.items():
        prefix = f"{part}_" if part else ""
        caption = f"../report/{rule}{'_' if part else ''}{part}.rst"
        for kind, shown in (("pdf", "PDF"), ("png", "PNG")):
            outputs[prefix + kind] = report(
                layout.output(rule, prefix + kind),
                caption=caption,
                category="Figures",
                labels={"figure": label, "format": shown},
            )
    if reading:
        for part in parts:
            name = f"{part}_reading" if part else "reading"
            outputs[name] = layout.output(rule, name)
    return outputs
