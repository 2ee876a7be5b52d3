"""Rule select: every grid point's valid metrics -> tuning.tsv; the best valid NDCG -> best.json."""

import logging

from userfair import tuning
from userfair.io import atomic_path, read_json, write_json
from userfair.joblog import job_log

with job_log(snakemake):
    records = [read_json(path) for path in snakemake.input.valid]
    table, best = tuning.select_best(records, label=snakemake.wildcards.model)
    best["checkpoint"] = snakemake.input.checkpoints[best["point"]]
    with atomic_path(snakemake.output.tuning) as tmp:
        table.to_csv(tmp, sep="\t", index=False)
    write_json(best, snakemake.output.best)
    logging.info(
        "best point %d: %s (valid NDCG %.6f)", best["point"], best["params"], best["valid"]["NDCG"]
    )
