"""Rule fig_extreme: the figure of the extreme experiment, PDF and PNG."""

import logging

from userfair import experiments, plots

logging.basicConfig(
    filename=snakemake.log[0],
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(name)s: %(message)s",
)
try:
    frame = experiments.load_tables(snakemake.input.data)
    plots.extreme_figure(
        frame, plots.Style(**snakemake.params.style), snakemake.output.pdf, snakemake.output.png
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
except Exception:
    logging.exception("fig_extreme failed")
    raise
