# The route of a dataset's measures, dense or streamed (docs/measures.md#in-the-workflow),
# decided here and only here from the evaluated users of its stats.json (the checkpoint
# `stats`), and the inputs that route asks for: the similarity files, or pass one and the
# scattered parts of pass two. The measures, replicate measures and users jobs get the
# decision as their `route` param; no step re-derives it.

import math

from userfair.engine import route
from userfair.workflow import costs


def evaluated_users(dataset):
    """The number of evaluated users (test users) of the dataset, from its stats.json:
    the checkpoint `stats` must have run before the caller's job is scheduled."""
    path = checkpoints.stats.get(dataset=dataset).output[0]
    return costs.read_stats(path)["test_users"]


def measure_route(dataset):
    """``dense`` or ``stream``: the route of the dataset's measures and decomposition
    (docs/measures.md#in-the-workflow), decided here and only here, by the library's one
    chooser (userfair.engine.route.choose_route) on the evaluated users against
    measures.stream_above. The memory of the machine that builds the DAG does not count
    (available=inf): the jobs run elsewhere. The steps receive the decision as a param.
    """
    return route.choose_route(
        evaluated_users(dataset),
        available=math.inf,
        max_users=config["measures"]["stream_above"],
    )


def route_param(wildcards, input):
    """Param of `measures` and `users`: measure_route of the job's dataset (its stats.json,
    the checkpoint, is an input of the rule, as a param that reads a checkpoint needs).
    """
    return measure_route(wildcards.dataset)


def estimate_param(wildcards, input):
    """Param of `measures`: measures.estimate where the dataset's route is the streamed
    one, else {} (the default): the dense route computes every measure exactly whatever
    the setting, so a changed estimate reruns only the streamed datasets' jobs."""
    if measure_route(wildcards.dataset) != "stream":
        return {}
    return config["measures"]["estimate"]


def pair_stats_parts(wildcards):
    """The parts of pass one (`pairs_part`, measures.scatter of them: one when 1), which
    `pairs` gathers."""
    return scatter.measures(scatter_template(rules.pairs_part.output[0], wildcards))


def streamed_item_genres(wildcards):
    """The item genres the streamed route reads: UF's (gamma < 1) or the opt-in genre
    similarity's, else nothing."""
    return uf_item_genres(wildcards) or opt_in_item_genres(wildcards)


def measure_inputs(wildcards):
    """Input function (use with unpack) of `measures`: the similarity files (cos, jacc,
    genre) on the dense route; on the streamed route pass one (pairs) and the parts of pass
    two (sums: measures.scatter of them, one when 1), which `measures` gathers; on both,
    the item genres (item) when gamma < 1 (streamed) or the opt-in genre similarity reads
    them, and the user vectors of embedding:MODEL (vectors)."""
    if measure_route(wildcards.dataset) == "dense":
        return {
            "cos": similarity_file("cos").format(dataset=wildcards.dataset),
            "jacc": similarity_file("jacc").format(dataset=wildcards.dataset),
            "genre": uf_genre_similarity(wildcards),
            "item": opt_in_item_genres(wildcards),
            "vectors": opt_in_user_vectors(wildcards),
        }
    named = {
        "pairs": expand(rules.pairs.output[0], dataset=wildcards.dataset)[0],
        "item": streamed_item_genres(wildcards),
        "vectors": opt_in_user_vectors(wildcards),
    }
    named["sums"] = scatter.measures(
        scatter_template(rules.measure_sums.output[0], wildcards)
    )
    return named


def replicate_measure_inputs(wildcards):
    """Input function (use with unpack) of `replicate_measures`: as `measure_inputs`, with
    replicate r's split (replicate_splits) and, where it is redrawn, its similarities
    (replicate_similarities; the streamed route is refused there), and the parts of pass
    two of the replicate's own lists (`replicate_sums`) on the streamed route."""
    named = {**measure_inputs(wildcards), **replicate_splits(wildcards)}
    if wildcards.dataset in REDRAWN:
        if "sums" in named:
            raise ValueError(
                f"config training.replicate_split: {wildcards.dataset} has more evaluated "
                "users than measures.stream_above, and a redrawn split's streamed measures "
                "are not built yet; raise measures.stream_above or set replicate_split false"
            )
        named.update(replicate_similarities(wildcards))
        if named.get("item"):  # the opt-in genre similarity reads the split's genres
            named["item"] = replicate_item_genres(wildcards)
    if "sums" in named:
        named["sums"] = scatter.measures(
            scatter_template(rules.replicate_sums.output[0], wildcards)
        )
    return named


def users_inputs(wildcards):
    """Input function (use with unpack) of `users`: what `measures` reads for the route
    (the similarity files, or pass one and the item genres), without the scattered parts
    of pass two, and the raw source when who.features names user features (raw)."""
    named = {k: v for k, v in measure_inputs(wildcards).items() if k != "sums"}
    named["raw"] = raw_input(wildcards) if config["who"]["features"] else []
    return named
