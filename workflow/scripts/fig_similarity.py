"""Rule fig_similarity: the figure of the similarity experiment, PDF and PNG."""

import logging

from userfair import experiments, plots

logging.basicConfig(
    filename=snakemake.log[0],
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(name)s: %(message)s",
)
try:
    frame = experiments.load_tables(snakemake.input.data)
    plots.similarity_figure(
        frame, plots.Style(**snakemake.params.style), snakemake.output.pdf, snakemake.output.png
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
except Exception:
    logging.exception("fig_similarity failed")
    raise
