"""Rule download: put the raw archive of one dataset under resources/raw/ (see userfair.download)."""

import logging

from userfair.download import fetch

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")
try:
    fetch(snakemake.wildcards.dataset, snakemake.output[0], url=snakemake.params.url,
          sha256=snakemake.params.sha256)
except Exception:
    logging.exception("download of %s failed", snakemake.wildcards.dataset)
    raise
