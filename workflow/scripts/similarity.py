"""Rule similarity: one user-similarity file (cos, jacc or genre) of a dataset."""

import logging
import time

from userfair import experiments, similarity
from userfair.joblog import job_log

with job_log(snakemake):
    kind = snakemake.wildcards.kind
    inputs = experiments.split_inputs(
        snakemake.input.train,
        snakemake.input.test,
        item_features=(snakemake.input.item or [None])[0],
    )
    rows = inputs.train_of_evaluated()
    logging.info("%s similarity of %d users", kind, rows.shape[0])
    start = time.perf_counter()
    if kind == "genre":
        sim = similarity.genre_similarity(rows, inputs.genres, snakemake.params.block_size)
    else:
        sim = {"cos": similarity.cosine, "jacc": similarity.jaccard}[kind](
            rows, snakemake.params.block_size
        )
    seconds = time.perf_counter() - start
    similarity.save(snakemake.output[0], inputs.users, sim, seconds)
    logging.info("%s: %.3f s", snakemake.output[0], seconds)
