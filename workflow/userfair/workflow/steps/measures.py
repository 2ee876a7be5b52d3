"""Steps of the measures stage (workflow/rules/measures.smk): similarity, pairs_part,
pairs, measure_sums, measures, table_scores, table_timing, agreement. The route of the
measures (dense or streamed) is the workflow's decision (rules/common/route.smk,
measure_route), given to the steps as a :class:`userfair.workflow.steps.Route`; the steps
never re-derive it. What a measure computes comes as
:class:`userfair.workflow.steps.MeasureSettings`, how fast as
:class:`userfair.workflow.steps.Speed`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd
import scipy.sparse as sp

from userfair import evaluate
from userfair.files.inputs import load_inputs, load_split_inputs
from userfair.files.io import InputError, read_json, write_csv, write_json
from userfair.formulas.agreement import EQUIVALENT, agreement_long
from userfair.measures import NAMES, plugin_names
from userfair.opt_in import variants
from userfair.similarity.pairwise import compute, load_dataset, save
from userfair.streamed import estimate as sampled
from userfair.streamed import pair_records, stream_rows, streaming
from userfair.workflow import tables
from userfair.workflow.steps import (
    MeasureSettings,
    Path,
    Route,
    SideFiles,
    Speed,
    graded_splits,
)

log = logging.getLogger(__name__)


def scatter_range(rows: sp.spmatrix, scatteritem: str, gamma: float = 1.0) -> tuple[int, int]:
    """The row range of Snakemake's scatter item ``scatteritem`` (``"i-of-n"``, i from 1): the
    i-th of :func:`userfair.streamed.stream_rows.ranges` (rows, n); an empty range at the
    end (m, m) when the users give fewer than n ranges, so that the n parts still tile 0:m."""
    try:
        i, n = (int(x) for x in scatteritem.split("-of-"))
    except ValueError:
        raise ValueError(f"not a scatter item 'i-of-n': {scatteritem!r}") from None
    if not 1 <= i <= n:
        raise ValueError(f"scatter item {scatteritem!r}: i must lie in 1..{n}")
    parts = stream_rows.ranges(rows, n, gamma)
    m = rows.shape[0]
    return parts[i - 1] if i <= len(parts) else (m, m)


def similarity(
    kind: str, train: Path, test: Path, out: Path, *, block_size: int, stream_above: int,
    files: SideFiles = SideFiles(),
) -> None:  # fmt: skip
    """Rule similarity: one dense user similarity (userfair.similarity.pairwise.compute) of the
    evaluated users. Above ``stream_above`` evaluated users the measures stream and no dense
    similarity is built: only the experiments and the bootstrap would read it, and the
    error says so. ``files.item``: the item genres (the genre similarity's)."""
    inputs = load_split_inputs(train, test, item_features=files.item)
    rows = inputs.train_of_evaluated()
    if rows.shape[0] > stream_above:
        raise ValueError(
            f"{rows.shape[0]} evaluated users > measures.stream_above = {stream_above}: the "
            f"dense ({rows.shape[0]} x {rows.shape[0]}) {kind} similarity is not built above "
            "it (the measures stream instead). The experiments of Figs. 2-4 and the gamma "
            "figures need it: raise measures.stream_above to at least "
            f"{rows.shape[0]} to build them, or ask only for the measure targets "
            "(docs/measures.md#in-the-workflow)"
        )
    log.info("%s similarity of %d users", kind, rows.shape[0])
    result = compute(kind, rows, inputs.users, inputs.genres, block_size)
    save(out, result)
    log.info(
        "%s: %.3f s, raw range over pairs [%.6g, %.6g]", out, result.seconds, result.lo, result.hi
    )


def pairs_part(
    train: Path, test: Path, out: Path, *, scatteritem: str, settings: MeasureSettings,
    speed: Speed, files: SideFiles = SideFiles(),
) -> None:  # fmt: skip
    """Rule pairs_part: pass one of the streamed measures (userfair.streamed.streaming.pass_one)
    over one scattered row range (``scatteritem``, ``i-of-N``; ``1-of-1``: every row), for
    UF's ``settings.gamma`` (``files.item``: the item genres it reads below 1)."""
    inputs = load_split_inputs(train, test, item_features=files.item)
    rows = inputs.train_of_evaluated()
    gamma = settings.gamma
    start, stop = scatter_range(rows, scatteritem, gamma)
    log.info("pass one over rows %s:%s of %d users", start, stop, rows.shape[0])
    stats = streaming.pass_one(
        rows, start, stop, gamma=gamma, genres=inputs.genres, users=inputs.users,
        block_size=speed.block_size, device=speed.device,
    )  # fmt: skip
    stats.save(out)
    log.info("%s: rows %d:%d of %d, %.3f s", out, stats.start, stats.stop, stats.m, stats.seconds)


def pairs(parts: Sequence[Path], out: Path) -> None:
    """Rule pairs: pass one of the streamed measures, gathered from its parts
    (userfair.streamed.pair_records.combine)."""
    stats = pair_records.combine(pair_records.PairStats.load(path) for path in parts)
    stats.save(out)
    log.info("%s: gathered pass one of %d parts, %d users", out, len(parts), stats.m)


def measure_sums(
    train: Path, valid: Path, test: Path, topk: Path, pairs: Path, out: Path, *,
    scatteritem: str, settings: MeasureSettings, speed: Speed, files: SideFiles = SideFiles(),
) -> None:  # fmt: skip
    """Rule measure_sums: pass two of the streamed measures (userfair.streamed.streaming.pass_two)
    of one dataset x model over one scattered row range (``1-of-1``: every row); with
    ``settings.estimate`` ``{pairs: share}`` (config measures.estimate) instead the row values
    of the users of the range in the uniform sample of that share (``settings.seed``: the
    config's) against all users (userfair.streamed.estimate.sample_part,
    docs/method.md#estimate). With the opt-in measures (``settings.graded``,
    ``settings.extra_similarities``, as for ``measures``) the same range's PUF sums of every
    similarity they read (userfair.opt_in.variants.range_sums) go into the file too, under
    ``variants``; graded reads the grades file ``files.grades``
    (userfair.workflow.steps.graded_splits). ``files``: the rule's side files
    (:class:`userfair.workflow.steps.SideFiles`; the item genres, the streamed route's)."""
    k, extra = settings.k, settings.extra_similarities
    train_split, test_split, grade = graded_splits(train, test, files.grades, settings.graded)
    inputs = load_inputs(
        train_split, test_split, topk, k=k, item_features=files.item, valid=valid, grade=grade
    )
    stats = pair_records.PairStats.load(pairs)
    rows = inputs.train_of_evaluated()
    start, stop = scatter_range(rows, scatteritem, stats.gamma)
    share = (settings.estimate or {}).get("pairs")
    if share is not None:
        log.info("sampled rows (share %g) of rows %d:%d of %d", share, start, stop, rows.shape[0])
        record = sampled.sample_part(
            inputs, stats, start, stop, share, settings.seed, k=k, epsilon=settings.epsilon,
            envy_utility=settings.envy_utility,
        )  # fmt: skip
        seconds = record["seconds_pairs"], record["seconds_envy"]
    else:
        log.info("pass two over rows %d:%d of %d users", start, stop, rows.shape[0])
        sums = streaming.pass_two(
            inputs, stats, start, stop, k=k, epsilon=settings.epsilon,
            envy_utility=settings.envy_utility, block_size=speed.block_size, device=speed.device,
        )  # fmt: skip
        record = sums.to_dict()
        seconds = sums.seconds_pairs, sums.seconds_envy
    if settings.graded or extra:
        user_vectors = files.user_vectors(extra, inputs.users)
        parts = variants.range_sums(inputs, k, extra, user_vectors, start, stop, speed.block_size)
        record["variants"] = {name: part.record() for name, part in parts.items()}
        log.info("opt-in PUF sums of %s over rows %d:%d", list(parts), start, stop)
    write_json(record, out)
    log.info("%s: pairs %.3f s, envy %.3f s", out, *seconds)


def gathered_variants(sums: Sequence[Path]) -> dict[str, variants.RowSums]:
    """The opt-in PUF sums of the measure_sums parts ``sums``, gathered per similarity
    (userfair.opt_in.variants.combine); a part without them is named, with what to rerun."""
    parts: dict[str, list] = {}
    for path in sums:
        record = read_json(path).get("variants")
        if record is None:
            raise InputError(
                f"{path}: no opt-in PUF sums ('variants'); rerun its measure_sums job "
                "(snakemake --forcerun measure_sums)"
            )
        for name, part in record.items():
            parts.setdefault(name, []).append(variants.RowSums.of_record(part))
    return {name: variants.combine(found) for name, found in parts.items()}


def measures(
    train: Path, valid: Path, test: Path, topk: Path, out: Path, *, route: Route,
    settings: MeasureSettings, speed: Speed, files: SideFiles = SideFiles(),
) -> dict:  # fmt: skip
    """Rule measures: every Eff and Fair measure of one dataset x model, with seconds, on
    the ``route`` the workflow chose (rules/common/route.smk, measure_route), with its files.

    ``dense``: userfair.evaluate.evaluate on the similarity files ``route.cos``,
    ``route.jacc``, ``route.genre``. ``stream``: pass one (``route.pairs``) and pass two
    gathered from its parts (``route.sums``), then userfair.streamed.streaming.finish; the
    same measures as the dense route.

    Opt-in (docs/measures.md#opt-in-measures; config measures.relevance and
    measures.similarities): ``settings.graded`` reads each interaction's grade from the
    grades file ``files.grades`` (rule grades; userfair.workflow.steps.graded_splits) and adds
    gNDCG, SD-gNDCG, Gini-gNDCG and PUF with gNDCG; ``settings.extra_similarities``
    (userfair.similarity.registry names: rcos, genre, vec; genre reads the item genres
    ``files.item``, vec the user vectors file ``files.vectors``) add PUF over them. Dense route:
    userfair.evaluate.evaluate's opt-in; streamed route:
    userfair.opt_in.variants.evaluate_variants on the row passes' sums the measure_sums parts
    made (``variants`` in each part), gathered here.

    ``settings.plugins``: the plugin measures the job computes (``NAME=module:Class``, loaded
    by userfair.workflow.joblog.job_log; a param, so a change reruns the job), after the
    built-ins on the same route (userfair.engine.generic_routes).

    ``settings.estimate`` ``{pairs: share}`` (config measures.estimate; streamed route
    only): the parts are samples (userfair.streamed.estimate.sample_part, of the config's
    ``settings.seed``), and the pair measures of userfair.streamed.estimate.ESTIMATED are
    estimates, each with its SE and interval in the file's ``estimate`` record
    (userfair.streamed.estimate.finish_estimate)."""
    route.require()
    k, gamma, extra = settings.k, settings.gamma, settings.extra_similarities
    train_split, test_split, grade = graded_splits(train, test, files.grades, settings.graded)
    inputs = load_inputs(
        train_split, test_split, topk, k=k, valid=valid, grade=grade,
        item_features=files.item_features(route.streamed or "genre" in extra),
    )  # fmt: skip
    user_vectors = files.user_vectors(extra, inputs.users)
    if route.streamed:
        pairs, sums = route.pairs, route.sums
        stats = pair_records.PairStats.load(pairs)
        if stats.gamma != gamma:
            raise ValueError(
                f"{pairs} was computed with gamma={stats.gamma}, not measures.gamma={gamma}"
            )
        share = (settings.estimate or {}).get("pairs")
        if share is not None:
            record = sampled.combine_parts(read_json(path) for path in sums)
            if (record["share"], record["seed"]) != (share, settings.seed):
                raise ValueError(f"{sums[0]} samples share {record['share']}, not {share}")
            log.info("streamed route: %d sampled users of %d parts", record["rows"], len(sums))
            result = sampled.finish_estimate(inputs, stats, record)
        else:
            pair_sums = pair_records.combine(pair_records.PairSums.load(path) for path in sums)
            log.info("streamed route: gathered pass two of %d parts", len(sums))
            result = streaming.finish(inputs, stats, pair_sums, speed.device)
        if settings.graded or extra:
            values, seconds = variants.evaluate_variants(
                inputs, k, extra, user_vectors, route="stream",
                block_size=speed.block_size, sums=gathered_variants(sums),
            )  # fmt: skip
            result = {**result, **values, "seconds": {**result["seconds"], **seconds}}
        # the plugin measures (docs/plugins.md) in row blocks, never m x m
        result = evaluate.with_generic(
            result, inputs, k, "stream", speed.block_size, user_vectors, stats=stats
        )
    else:
        similarities = load_dataset(route.cos, route.jacc, route.genre or (), inputs.users)
        result = evaluate.evaluate(
            inputs, k=k, epsilon=settings.epsilon, gamma=gamma, similarities=similarities,
            block_size=speed.block_size, device=speed.device,
            envy_utility=settings.envy_utility, extra_similarities=extra,
            user_vectors=user_vectors, route="dense",
        )  # fmt: skip
    write_json(evaluate.as_json(result), out)
    log.info("%s: %s", out, {key: result[key] for key in NAMES + plugin_names() if key in result})
    return result


def table_scores(
    measure_files: Mapping[str, Path], datasets: list[str], models: list[str], csv: Path,
    tex: Path,
) -> pd.DataFrame:  # fmt: skip
    """Rule table_scores: Table 2 (userfair.workflow.tables.write_scores) as CSV and booktabs LaTeX
    from the measure files named ``D/M``."""
    records = tables.read_measure_files(measure_files, datasets, models)
    table = tables.write_scores(records, datasets, models, csv, tex)
    log.info("\n%s", table.to_string())
    return table


def table_timing(
    measure_files: Mapping[str, Path], datasets: list[str], models: list[str], csv: Path,
    tex: Path,
) -> pd.DataFrame:  # fmt: skip
    """Rule table_timing: Table 3 (userfair.workflow.tables.write_timing) as CSV and booktabs LaTeX
    from the measure files named ``D/M``."""
    records = tables.read_measure_files(measure_files, datasets, models)
    table = tables.write_timing(records, datasets, csv, tex)
    log.info("\n%s", table.to_string())
    return table


def agreement(
    measure_files: Mapping[str, Path], datasets: list[str], models: list[str], out: Path
) -> pd.DataFrame:
    """Rule agreement: Kendall tau-b between the model orderings of every pair of measures
    (userfair.formulas.agreement.agreement_long) from the measure files named ``D/M``."""
    records = tables.read_measure_files(measure_files, datasets, models)
    if len(models) < 3:
        log.warning("only %d models: Kendall tau over so few orderings says little", len(models))
    names = tables.agreement_names(records)
    frame = agreement_long(tables.scores_frame(records, names), names)
    write_csv(frame, out)
    log.info(
        "equivalent pairs (|tau| >= %s):\n%s",
        EQUIVALENT,
        frame[frame["equivalent"] & (frame["measure_a"] < frame["measure_b"])].to_string(),
    )
    return frame
