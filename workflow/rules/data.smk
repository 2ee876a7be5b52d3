# Data stage (docs/data.md, docs/method.md#data): download -> preprocess -> split
# (+ genres) -> stats -> table_stats; with graded relevance also rule grades (each kept
# interaction's grade, beside the split), which only the measure jobs read. Reads only names
# of rules/common/.


rule download:
    output:
        layout.output("download"),
    log:
        layout.log("download"),
    wildcard_constraints:
        dataset=one_of(DOWNLOADABLE),
        suffix=one_of(RAW_SUFFIXES),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        url=download_url,
        sha256=download_sha256,
        declaration=declaration,
        other_hosts=DOWNLOAD["other_hosts"],
        max_mb=DOWNLOAD["max_mb"],
    message:
        "Fetch the raw file of {wildcards.dataset}"
    script:
        "../scripts/download.py"


rule preprocess:
    input:
        raw_input,
    output:
        layout.output("preprocess"),
    log:
        layout.log("preprocess"),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=dataset_mem_mb,
        runtime=60,
    params:
        source=raw_source,
        declaration=declaration,
        min_rating=min_rating,
        core=config["preprocessing"]["core"],
    message:
        "Deduplicate, binarise and 5-core {wildcards.dataset} (steps 1-3)"
    script:
        "../scripts/preprocess.py"


# Only with graded relevance (GRADED; asked for by opt_in_grades): the grade of every
# interaction preprocess keeps, beside the binary split, so turning graded on retrains nothing.
rule grades:
    input:
        raw_input,
    output:
        layout.output("grades"),
    log:
        layout.log("grades"),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=dataset_mem_mb,
        runtime=60,
    params:
        source=raw_source,
        declaration=declaration,
        min_rating=min_rating,
        core=config["preprocessing"]["core"],
    message:
        "Grades of the kept interactions of {wildcards.dataset} (graded relevance)"
    script:
        "../scripts/grades.py"


rule split:
    input:
        rules.preprocess.output,
    output:
        train=layout.output("split", "train"),
        valid=layout.output("split", "valid"),
        test=layout.output("split", "test"),
    log:
        layout.log("split"),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=dataset_mem_mb,
        runtime=60,
    params:
        temporal=temporal_split,
        seed=config["seed"],
        valid_share=config["preprocessing"]["valid_share"],
        test_share=config["preprocessing"]["test_share"],
        min_train=config["preprocessing"]["min_train_interactions"],
        protocol=config["preprocessing"]["protocol"],
    message:
        "Split {wildcards.dataset} ({params.protocol} protocol, steps 4-5)"
    script:
        "../scripts/split.py"


rule genres:
    input:
        raw_input,
        splits=rules.split.output,
    output:
        layout.output("genres"),
    log:
        layout.log("genres"),
    wildcard_constraints:
        dataset=one_of(GENRE_DATASETS),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=dataset_mem_mb,
        runtime=30,
    params:
        source=raw_source,
        declaration=declaration,
    message:
        "Item genres of the split of {wildcards.dataset}"
    script:
        "../scripts/genres.py"


# A checkpoint: its test_users (the evaluated users) choose the measures' route
# (measure_route, rules/common/route.smk).
checkpoint stats:
    input:
        preprocessed=rules.preprocess.output[0],
        splits=rules.split.output,
    output:
        layout.output("stats"),
    log:
        layout.log("stats"),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=dataset_mem_mb,
        runtime=30,
    params:
        protocol=config["preprocessing"]["protocol"],
    message:
        "Table-1 statistics of {wildcards.dataset}"
    script:
        "../scripts/stats.py"


rule table_stats:
    input:
        unpack(
            per_dataset(
                stats=rules.stats.output[0],
                train=rules.split.output.train,
                valid=rules.split.output.valid,
                test=rules.split.output.test,
            )
        ),
    output:
        csv=report(
            layout.output("table_stats", "csv"),
            caption="../report/table_stats.rst",
            category="Tables",
            labels={"table": "Table 1: dataset statistics", "format": "CSV"},
        ),
        tex=report(
            layout.output("table_stats", "tex"),
            caption="../report/table_stats.rst",
            category="Tables",
            labels={"table": "Table 1: dataset statistics", "format": "LaTeX"},
        ),
    log:
        layout.log("table_stats"),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=dataset_mem_mb,
        runtime=30,
    params:
        datasets=DATASETS,
    message:
        "Table 1: dataset statistics"
    script:
        "../scripts/table_stats.py"
