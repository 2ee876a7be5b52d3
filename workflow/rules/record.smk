# Record stage: results/run.json names the configuration that every table and figure of
# results/ covers (datasets, models and the config but its speed-only keys:
# userfair.workflow.steps.targets.recorded_config); it is written after every other target,
# so it changes only when a run completes. A later invocation with another configuration
# says so (a report of it stops), so the outputs of two configs never mix silently
# (docs/your-data.md).


rule run_config:
    input:
        run_targets,
    output:
        layout.output("run_config"),
    log:
        layout.log("run_config"),
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        datasets=DATASETS,
        models=MODELS,
        config=recorded_config(config),
    message:
        "Record the configuration every table and figure covers"
    script:
        "../scripts/run_config.py"


check_results_are_this_configs(rules.run_config.output[0])
