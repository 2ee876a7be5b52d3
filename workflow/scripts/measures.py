"""Rule measures: every Eff and Fair measure of one dataset x model, with seconds.

Dense route (evaluated users <= measures.stream_above): from the similarity files. Streamed
route: from pass one (pairs.json) and pass two, gathered from the scattered parts
(measures.scatter > 1) or run here (one job); userfair.streaming.finish gives the same
measures as the dense route."""

import logging

from userfair import evaluate, similarity, streaming
from userfair.inputs import load_inputs
from userfair.io import write_json
from userfair.joblog import job_log
from userfair.measures import NAMES

with job_log(snakemake):
    p = snakemake.params
    streamed = "pairs" in snakemake.input.keys()
    inputs = load_inputs(
        snakemake.input.train,
        snakemake.input.test,
        snakemake.input.topk,
        k=p.k,
        item_features=(snakemake.input.get("item") or [None])[0] if streamed else None,
        valid=snakemake.input.valid,
    )
    if streamed:
        stats = streaming.PairStats.load(snakemake.input.pairs)
        if stats.gamma != p.gamma:
            raise ValueError(
                f"{snakemake.input.pairs} was computed with gamma={stats.gamma}, not "
                f"measures.gamma={p.gamma}"
            )
        parts = list(snakemake.input.get("sums", []))
        if parts:
            sums = streaming.combine(streaming.PairSums.load(path) for path in parts)
            logging.info("streamed route: gathered pass two of %d parts", len(parts))
        else:
            logging.info("streamed route: pass two over %d users", stats.m)
            sums = streaming.pass_two(
                inputs,
                stats,
                k=p.k,
                epsilon=p.epsilon,
                envy_utility=p.envy_utility,
                block_size=p.block_size,
                device=p.device,
            )
        result = streaming.finish(inputs, stats, sums)
    else:
        similarities = similarity.load_dataset(
            snakemake.input.cos, snakemake.input.jacc, snakemake.input.genre, inputs.users
        )
        result = evaluate.evaluate(
            inputs,
            k=p.k,
            epsilon=p.epsilon,
            gamma=p.gamma,
            similarities=similarities,
            block_size=p.block_size,
            device=p.device,
            envy_utility=p.envy_utility,
        )
    write_json(evaluate.as_json(result), snakemake.output[0])
    logging.info("%s: %s", snakemake.output[0], {k: result[k] for k in NAMES})
