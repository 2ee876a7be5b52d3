"""Rule measure_sums: pass two of the streamed measures (userfair.streaming) of one
dataset x model over one scattered row range."""

import logging

from userfair import streaming
from userfair.inputs import load_inputs
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    inputs = load_inputs(
        snakemake.input.train,
        snakemake.input.test,
        snakemake.input.topk,
        k=p.k,
        item_features=(snakemake.input.item or [None])[0],
        valid=snakemake.input.valid,
    )
    stats = streaming.PairStats.load(snakemake.input.pairs)
    rows = inputs.train_of_evaluated()
    start, stop = streaming.scatter_range(rows, snakemake.wildcards.scatteritem, stats.gamma)
    logging.info("pass two over rows %d:%d of %d users", start, stop, rows.shape[0])
    sums = streaming.pass_two(
        inputs,
        stats,
        start,
        stop,
        k=p.k,
        epsilon=p.epsilon,
        envy_utility=p.envy_utility,
        block_size=p.block_size,
        device=p.device,
    )
    sums.save(snakemake.output[0])
    logging.info(
        "%s: pairs %.3f s, envy %.3f s", snakemake.output[0], sums.seconds_pairs, sums.seconds_envy
    )
