"""Steps of the group stage (workflow/rules/groups.smk; docs/analyses.md#groups): the group
measures of every dataset x model for every configured grouping (``measures.groups``) with
their bootstrap resamples (the uncertainty stage's resamples: the same seed and evaluated
users), then the table with intervals, the paired comparisons (Holm) and the Kendall tau
between the group and the individual measures' model orderings (the figure per dataset:
``userfair.workflow.group_figure``, drawn by ``userfair.workflow.steps.figures.draw``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from userfair.bootstrap.inference import significance, summary, tau_intervals
from userfair.bootstrap.uncertainty import resample_weights
from userfair.files.inputs import load_inputs
from userfair.files.io import read_json, read_parquet, write_csv, write_json, write_parquet
from userfair.formulas import effectiveness
from userfair.formulas import groups as user_groups
from userfair.formulas.agreement import agreement_matrix
from userfair.formulas.groups import specs_of
from userfair.measures import FAIR_GROUP
from userfair.workflow import tables, who
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)

#: The individual measures the group measures' orderings are compared with.
INDIVIDUAL = ("PUF-P-Cos", "PUF-NDCG-Cos", "PUF-P-Jacc", "PUF-NDCG-Jacc", "UF", "ME", "MME")
#: Separator of a grouping and a column in the resamples file: ``activity:0.05|UserMAD-P``.
SEP = "|"


def groups(
    train: Path, valid: Path, test: Path, topk: Path, raw: Sequence[Path], out_json: Path,
    out_parquet: Path, *, dataset: str, source: str, groups, features, k: int,
    resamples: int, seed: int,
) -> dict:  # fmt: skip
    """Rule groups: per grouping, the group measures, each group's size and mean P, NDCG
    (``out_json``) and their values on ``resamples`` bootstrap resamples (``out_parquet``,
    columns ``GROUPING|COLUMN``); a feature the dataset's ``.user`` file lacks is skipped
    (logged)."""
    inputs = load_inputs(train, test, topk, k=k, valid=valid)
    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    specs = specs_of(groups, features)
    names = [user_groups.parse_spec(s)[1] for s in specs if s.startswith("feature:")]
    frame = who.read_user_features(dataset, source if raw else None, names)
    weights = resample_weights(len(inputs.users), resamples, seed) if resamples else None
    record, columns = {"k": k, "groupings": {}}, {}
    for spec in specs:
        if spec.startswith("feature:") and (frame is None or spec[8:] not in frame.columns):
            log.warning("%s: no user feature %r, grouping skipped", dataset, spec[8:])
            continue
        found = user_groups.groups_of(inputs, spec, frame, f"{dataset} .user")
        log.info("%s", user_groups.describe(found))
        record["groupings"][spec] = {
            "values": user_groups.point(per_user, found),
            **user_groups.record(per_user, found),
        }
        if weights is not None:
            for column, values in user_groups.bootstrap(per_user, found, weights).items():
                columns[f"{spec}{SEP}{column}"] = values.to_numpy()
    write_json(record, out_json)
    resampled = pd.DataFrame(columns, index=pd.RangeIndex(resamples, name="resample"))
    write_parquet(resampled, out_parquet)
    return record


def label(spec: str, column: str) -> str:
    """One grouping's group measure or group mean as the tables over replicates name it, as
    Table 2 labels its group rows: ``UserMAD-P (activity:0.05)``, ``P[active]
    (activity:0.05)``."""
    return f"{column} ({spec})"


def measure_of(name: str) -> str:
    """The measure a table row is of, for its direction: ``UserMAD-P (activity:0.05)`` ->
    ``UserMAD-P``, ``P[active] (activity:0.05)`` -> ``P``; a plain measure name itself."""
    return name.split("[", 1)[0].split(" (", 1)[0]


def labelled(record: dict, resamples: pd.DataFrame) -> tuple[dict[str, float], pd.DataFrame]:
    """The files of rule groups (``record``: the JSON, ``resamples``: the parquet) as one
    row of values and the resamples, both with :func:`label` names: every grouping's group
    measures, then its group means."""
    points = {
        label(spec, column): float(value)
        for spec, grouping in record["groupings"].items()
        for column, value in grouping["values"].items()
    }
    frame = resamples.rename(columns=lambda c: label(*c.split(SEP, 1)))
    return points, frame.reindex(columns=list(points))


def _split(frame: pd.DataFrame, spec: str) -> pd.DataFrame:
    """The columns of one grouping of a resamples file, without the prefix."""
    prefix = f"{spec}{SEP}"
    kept = [c for c in frame.columns if c.startswith(prefix)]
    return frame[kept].rename(columns=lambda c: c[len(prefix) :])


def table_groups(
    group_files: Mapping[str, Path], group_resamples: Mapping[str, Path],
    measure_files: Mapping[str, Path], resample_files: Mapping[str, Path],
    datasets: list[str], models: list[str], *, level: float, csv: Path,
    significance_csv: Path, agreement_csv: Path,
) -> pd.DataFrame:  # fmt: skip
    """Rule table_groups: every group measure and group mean per dataset, grouping and model
    with its interval (``csv``), the paired model comparisons with Holm within each
    (dataset, grouping, measure) (``significance_csv``) and the Kendall tau-b between the
    model orderings of each group measure and the individual measures :data:`INDIVIDUAL`
    with intervals (``agreement_csv``). Mappings keyed ``D/M``; ``resample_files`` (the
    uncertainty stage's) empty when the bootstrap is off: no intervals, no tests, and the
    tau without interval (Fig. 1's group panel reads either)."""
    records = tables.read_measure_files(measure_files, datasets, models)
    rows, tests, taus = [], [], []
    for dataset in datasets:
        found = {m: read_json(group_files[f"{dataset}/{m}"]) for m in models}
        specs = list(found[models[0]]["groupings"])
        boot = {m: read_parquet(group_resamples[f"{dataset}/{m}"]) for m in models}
        fair = {m: read_parquet(resample_files[f"{dataset}/{m}"]) for m in models} if (
            resample_files
        ) else {}  # fmt: skip
        for spec in specs:
            points = {m: found[m]["groupings"][spec]["values"] for m in models}
            keys = list(points[models[0]])
            tag = {"dataset": dataset, "by": spec}
            if fair:
                frames = {m: _split(boot[m], spec) for m in models}
                rows.append(summary(frames, points, level, measures=keys).assign(**tag))
                tests.append(significance(frames, points, level, FAIR_GROUP).assign(**tag))
                joined = {m: frames[m][list(FAIR_GROUP)].join(fair[m][list(INDIVIDUAL)])
                          for m in models}  # fmt: skip
                both = {m: {**records[(dataset, m)], **points[m]} for m in models}
                tau = tau_intervals(joined, both, level, list(FAIR_GROUP) + list(INDIVIDUAL))
                tau = tau[tau["measure_a"].isin(FAIR_GROUP) & tau["measure_b"].isin(INDIVIDUAL)]
                taus.append(tau.assign(**tag))
            else:
                plain = [
                    {
                        "model": m,
                        "measure": key,
                        "value": float(points[m][key]),
                        "low": np.nan,
                        "high": np.nan,
                    }
                    for m in models
                    for key in keys
                ]
                rows.append(pd.DataFrame(plain).assign(**tag))  # fmt: skip
                taus.append(_point_taus(points, records, dataset, models).assign(**tag))
    table = _front(pd.concat(rows, ignore_index=True))
    write_csv(tables.label_models(table), csv)  # U-KNN, as every table names models
    for parts, path in ((tests, significance_csv), (taus, agreement_csv)):
        frame = _front(pd.concat(parts, ignore_index=True)) if parts else pd.DataFrame()
        write_csv(tables.label_models(frame), path)
    return table


def _point_taus(points, records, dataset: str, models: list[str]) -> pd.DataFrame:
    """Without the bootstrap: tau-b of each group measure's model ordering against each of
    :data:`INDIVIDUAL` (userfair.formulas.agreement), no interval."""
    measures = list(FAIR_GROUP) + list(INDIVIDUAL)
    rows = [{**records[(dataset, m)], **points[m]} for m in models]
    matrix = agreement_matrix(pd.DataFrame(rows, index=models)[measures], measures)
    return pd.DataFrame(
        [(a, b, float(matrix.loc[a, b])) for a in FAIR_GROUP for b in INDIVIDUAL],
        columns=["measure_a", "measure_b", "tau"],
    )


def _front(frame: pd.DataFrame) -> pd.DataFrame:
    first = ["dataset", "by"]
    return frame[first + [c for c in frame.columns if c not in first]]
