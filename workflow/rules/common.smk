# Shared settings of all rule files: the configured datasets and models, wildcard constraints.

DATASETS = config["datasets"]
MODELS = config["models"]
RESULTS = "results"
LOGS = f"{RESULTS}/logs"


wildcard_constraints:
    dataset="|".join(map(re.escape, DATASETS)),
    model="|".join(map(re.escape, MODELS)),
