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
    # read from the config, not a param: a new threshold must not rebuild a dense file
    stream_above = snakemake.config["measures"]["stream_above"]
    if rows.shape[0] > stream_above:
        # the measures stream above it (pairs.json); only the experiments read these files
        raise ValueError(
            f"{rows.shape[0]} evaluated users > measures.stream_above = {stream_above}: the "
            f"dense ({rows.shape[0]} x {rows.shape[0]}) {kind} similarity is not built above "
            "it (the measures stream instead). The experiments of Figs. 2-4 and the gamma "
            "figures need it: raise measures.stream_above to at least "
            f"{rows.shape[0]} to build them, or ask only for the measure targets "
            "(docs/measures.md#in-the-workflow)"
        )
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
