"""Rule similarity: one user-similarity file (cos, jacc or genre) of a dataset."""

import logging

from userfair import similarity
from userfair.inputs import load_split_inputs
from userfair.joblog import job_log

with job_log(snakemake):
    kind = snakemake.wildcards.kind
    inputs = load_split_inputs(
        snakemake.input.train,
        snakemake.input.test,
        item_features=(snakemake.input.item or [None])[0],
    )
    rows = inputs.train_of_evaluated()
    logging.info("%s similarity of %d users", kind, rows.shape[0])
    result = similarity.compute(
        kind, rows, inputs.users, inputs.genres, snakemake.params.block_size
    )
    similarity.save(snakemake.output[0], result)
    logging.info(
        "%s: %.3f s, raw range over pairs [%.6g, %.6g]",
        snakemake.output[0],
        result.seconds,
        result.lo,
        result.hi,
    )
