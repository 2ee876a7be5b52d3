"""Rule agreement: Kendall tau-b between the model orderings of every pair of measures."""

import logging

from userfair import agreement, tables
from userfair.io import atomic_path
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    records = tables.read_measure_files(snakemake.input, p.datasets, p.models)
    if len(p.models) < 3:
        logging.warning(
            "only %d models: Kendall tau over so few orderings says little", len(p.models)
        )
    frame = agreement.agreement_long(tables.scores_frame(records))
    with atomic_path(snakemake.output[0]) as tmp:
        frame.to_csv(tmp, index=False)
    logging.info(
        "equivalent pairs (|tau| >= %s):\n%s",
        agreement.EQUIVALENT,
        frame[frame["equivalent"] & (frame["measure_a"] < frame["measure_b"])].to_string(),
    )
