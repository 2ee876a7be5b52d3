"""Rules pairs_part and pairs: pass one of the streamed measures (userfair.streaming) of a
dataset, over one scattered row range (pairs_part) or, for pairs, gathered from the parts
(measures.scatter > 1) or over every row (one job)."""

import logging

from userfair import streaming
from userfair.inputs import load_split_inputs
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    parts = list(snakemake.input.get("parts", []))
    if parts:
        stats = streaming.combine(streaming.PairStats.load(path) for path in parts)
        logging.info("gathered pass one of %d parts", len(parts))
    else:
        inputs = load_split_inputs(
            snakemake.input.train,
            snakemake.input.test,
            item_features=(snakemake.input.item or [None])[0],
        )
        rows = inputs.train_of_evaluated()
        item = snakemake.wildcards.get("scatteritem")
        start, stop = streaming.scatter_range(rows, item, p.gamma) if item else (0, None)
        logging.info("pass one over rows %s:%s of %d users", start, stop, rows.shape[0])
        stats = streaming.pass_one(
            rows,
            start,
            stop,
            gamma=p.gamma,
            genres=inputs.genres,
            users=inputs.users,
            block_size=p.block_size,
            device=p.device,
        )
    stats.save(snakemake.output[0])
    logging.info(
        "%s: rows %d:%d of %d, %.3f s",
        snakemake.output[0],
        stats.start,
        stats.stop,
        stats.m,
        stats.seconds,
    )
