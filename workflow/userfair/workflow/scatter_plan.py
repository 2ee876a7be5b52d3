"""Plan lines for the scattered streamed measures at a size not run here
(docs/cluster.md#scatter-plan): the jobs, wall time, CPU-hours and memory of
``measures.scatter: N`` for M users on N nodes, from timed parts of a smaller run.

Two kinds of measurement feed it (:class:`Measured`):

- :meth:`Measured.from_cluster`: ``benchmarks/scatter_cluster.py``'s JSON, every part of a
  scatter timed end to end on the local SLURM test cluster (the run with the most parts);
- :meth:`Measured.from_sample`: a ``sample`` row of ``benchmarks/streaming.py --sample-from``,
  one range of ``--parts`` timed in-process (no job start, no file reading).

The extrapolation (:func:`plan`), stated beside every number it gives (:func:`line`):

- pair work (pass one, pass two's pair loop and envy) grows as the item visits
  sum_i deg_i (deg_i - 1) / 2, i.e. as (M / m)^2 for a fixed catalogue, where the users
  are drawn as in the measurement (more items at the larger size would make it cheaper);
  it divides evenly over the parts (the ranges balance item visits,
  :func:`userfair.streamed.stream_rows.ranges`) and over the threads of a node (assumed);
- per-user work grows as M / m: UF's item cosines, recomputed in each pass-two part; each
  job's reading of the inputs and start (its sacct elapsed time less the seconds its pass
  reports); the gather ``measures`` job; the memory of a job above the interpreter's (the
  smallest job's peak: the ``pairs`` gather, which reads only the parts' numbers);
- the nodes are as fast per thread as the measuring machine, and the scheduler starts all
  parts at once (no queueing, no status-poll gaps: add them for a real cluster);
- on a shared machine a one-thread job gets less than a core: the seconds of a cluster
  measurement are taken times its jobs' CPU seconds per elapsed second (sacct), i.e. as on
  a core of their own.

The same stretch sizes the workflow's own jobs (:func:`requests`): the rules ``pairs_part``,
``pairs``, ``measure_sums`` and ``measures`` ask for the memory and time of their dataset
(its item visits and train interactions from its ``stats.json``) and scatter, stretched
from the packaged calibration :data:`CALIBRATION` (a timed scatter, written by
``--write-calibration``), with the cost model's margins (``userfair.workflow.costs``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from userfair.files.io import atomic_path
from userfair.workflow import costs


@dataclass(frozen=True)
class Measured:
    """What the plan scales: at ``users`` users (``train`` train interactions,
    ``item_visits`` visits), the measured parts (``share`` of the pair work) took
    ``pass_one_s``, ``pairs_s`` and ``envy_s`` thread-seconds of pair work in all, and
    ``uf_setup_s`` per pass-two part; each job ``overhead_s`` beyond its pass, the
    ``measures`` gather ``gather_s``; a job peaked at ``job_mb`` MB, the interpreter alone at
    ``base_mb``. ``source``: where it was measured, in words."""

    users: int
    train: int
    item_visits: float
    share: float
    pass_one_s: float
    pairs_s: float
    envy_s: float
    uf_setup_s: float
    overhead_s: float
    gather_s: float
    job_mb: float
    base_mb: float
    source: str
    items: int = 0  # the measurement's catalogue (0: not recorded)

    @classmethod
    def from_cluster(cls, result: dict) -> Measured:
        """From ``benchmarks/scatter_cluster.py``'s JSON: the run with the most parts."""
        run = max(result["runs"], key=lambda r: r["parts"])
        jobs = run["jobs"]
        busy = {rule: _busy(jobs, rule) for rule in ("pairs_part", "measure_sums", "measures")}
        one = [s * busy["pairs_part"] for s in run["pass_one_s"]]
        two = [[s * busy["measure_sums"] for s in part] for part in run["pass_two_s"]]
        parts_elapsed = [j["elapsed_s"] * busy["pairs_part"] for j in jobs
                         if j["rule"] == "pairs_part"]  # fmt: skip
        sums_elapsed = [j["elapsed_s"] * busy["measure_sums"] for j in jobs
                        if j["rule"] == "measure_sums"]  # fmt: skip
        overhead = [e - s for e, s in zip(sorted(parts_elapsed), sorted(one))]
        overhead += [e - sum(s) for e, s in zip(sorted(sums_elapsed), sorted(two, key=sum))]
        gather = [j["elapsed_s"] * busy["measures"] for j in jobs if j["rule"] == "measures"]
        peaks = [j["max_rss_mb"] for j in jobs if j.get("max_rss_mb")]
        floors = [j["min_rss_mb"] for j in jobs if 0 < j.get("min_rss_mb", 0) < float("inf")]
        return cls(
            users=result["users"],
            train=result["train_interactions"],
            item_visits=result["item_visits"],
            share=1.0,
            pass_one_s=sum(one),
            pairs_s=sum(s[0] for s in two),
            envy_s=sum(s[2] for s in two),
            uf_setup_s=max((s[1] for s in two), default=0.0),
            overhead_s=max(min(overhead, default=0.0), 0.0),
            gather_s=max(gather, default=0.0),
            job_mb=max(peaks, default=0.0),
            base_mb=min(floors or peaks, default=0.0),
            source=(
                f"{run['parts']} timed SLURM parts of {result['users']:,} "
                f"{result['density'].upper()}-like users (load {run['load_before']:.1f}-"
                f"{run['load_after']:.1f})"
            ),
        )

    @classmethod
    def from_sample(cls, row: dict) -> Measured:
        """From a ``sample`` row of ``benchmarks/streaming.py``'s JSON: one range of its
        ``--parts``, timed in-process (job start and reading not included: 0 here); its
        seconds taken times the range's CPU seconds per wall second (thread-seconds)."""
        busy = row["range_cpu_s"] / row["range_s"] if row.get("range_s") else 1.0
        pairs, setup, envy = (s * busy for s in row["range_pass_two_parts_s"])
        return cls(
            users=row["size"],
            train=row["train_interactions"],
            item_visits=row["item_visits"],
            share=row["sample_share"],
            pass_one_s=row["range_pass_one_s"] * busy,
            pairs_s=pairs,
            envy_s=envy,
            uf_setup_s=setup,
            overhead_s=0.0,
            gather_s=0.0,
            job_mb=row["peak_rss_gib"] * 1024,
            base_mb=row["rss_before_gib"] * 1024,
            source=(
                f"1 timed range of {len(row['ranges'])} at {row['size']:,} "
                f"{row['density'].upper()}-like users, in-process (load "
                f"{row.get('load_after', [float('nan')])[0]:.1f}; no job start or reading)"
            ),
        )


def _busy(jobs: list[dict], rule: str) -> float:
    """The CPU seconds per elapsed second of the one-thread jobs of ``rule`` (sacct): the
    share of a core they had on the shared machine, so that seconds x busy are the seconds
    on a core of their own; 1 where sacct gave no CPU time."""
    mine = [j for j in jobs if j["rule"] == rule and j.get("cpu_s") and j["elapsed_s"]]
    if not mine:
        return 1.0
    return min(1.0, sum(j["cpu_s"] for j in mine) / sum(j["elapsed_s"] for j in mine))


@dataclass(frozen=True)
class Plan:
    """The scattered measures of one dataset x model at ``users`` users on ``nodes`` jobs
    of ``threads`` threads: seconds of a pass-one part, of a pass-two part, of the gathers;
    the wall time (one after the other), the core-hours the jobs reserve, a job's memory;
    and how."""

    users: int
    nodes: int
    threads: int
    train: float
    item_visits: float
    pass_one_part_s: float
    pass_two_part_s: float
    gather_s: float
    wall_s: float
    cpu_hours: float
    job_mb: float
    pair_scale: float
    user_scale: float
    source: str


def plan(measured: Measured, users: int, nodes: int, threads: int = 1) -> Plan:
    """The scatter of ``measured`` stretched to ``users`` users over ``nodes`` parts (module
    docstring: what grows how)."""
    ratio = users / measured.users
    return stretch(measured, users, ratio**2, ratio, nodes, threads)


def stretch(
    measured: Measured, users: int, pair_scale: float, user_scale: float, nodes: int,
    threads: int = 1,
) -> Plan:  # fmt: skip
    """The scatter of ``measured`` with its pair work times ``pair_scale`` and its per-user
    work and memory times ``user_scale``, over ``nodes`` parts of ``threads`` threads."""
    whole = 1.0 / measured.share
    one_work = measured.pass_one_s * whole * pair_scale
    two_work = (measured.pairs_s + measured.envy_s) * whole * pair_scale
    overhead = measured.overhead_s * user_scale
    one_part = one_work / (nodes * threads) + overhead
    two_part = two_work / (nodes * threads) + measured.uf_setup_s * user_scale + overhead
    gather = measured.gather_s * user_scale
    return Plan(
        users=users,
        nodes=nodes,
        threads=threads,
        train=measured.train * user_scale,
        item_visits=measured.item_visits * pair_scale,
        pass_one_part_s=one_part,
        pass_two_part_s=two_part,
        gather_s=gather,
        wall_s=one_part + two_part + gather,
        cpu_hours=(nodes * threads * (one_part + two_part) + gather) / 3600,
        job_mb=measured.base_mb + (measured.job_mb - measured.base_mb) * user_scale,
        pair_scale=pair_scale,
        user_scale=user_scale,
        source=measured.source,
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


#: The longest job a plan line assumes the cluster allows (minutes): the default of
#: ``training.max_runtime``, which caps the streamed measures' requests too.
MAX_RUNTIME_MIN = 2880


def over(p: Plan, max_runtime: float = MAX_RUNTIME_MIN) -> str:
    """What of ``p``'s parts cannot be asked for, as a sentence ('' if nothing): a part
    whose time with the cost model's margin exceeds ``max_runtime`` minutes (the requests
    of :func:`requests` are capped there, so such a part would be killed). The memory of
    a part is asked for as it is (scattering finer does not lower it)."""
    longest = max(p.pass_one_part_s, p.pass_two_part_s) / 60
    if longest * costs.TIME_MARGIN <= max_runtime:
        return ""
    return (
        f"OVER the longest job: a part's {longest:,.0f} min (x {costs.TIME_MARGIN} margin) "
        f"exceed training.max_runtime = {max_runtime:,.0f} min (scatter finer or raise it)"
    )


def line(p: Plan) -> str:
    """``p`` as one line of text, its extrapolation said beside the numbers, then what
    exceeds the rules' requests (:func:`over`)."""
    text = (
        f"{p.users:,} users ({p.train / 1e6:,.1f} M train interactions, "
        f"{p.item_visits:.2g} item visits) on {p.nodes} nodes x {p.threads} thread(s): "
        f"pass one {p.nodes} jobs of {_duration(p.pass_one_part_s)}, pass two {p.nodes} jobs "
        f"of {_duration(p.pass_two_part_s)} per model, gathers {_duration(p.gather_s)}; "
        f"about {_duration(p.wall_s)} wall per model without queueing, "
        f"{p.cpu_hours:,.1f} core-hours, up to {p.job_mb / 1024:,.1f} GiB a job. "
        f"EXTRAPOLATED from {p.source}: pair work x {p.pair_scale:,.0f} ((M/m)^2, the same "
        f"20,000-item catalogue), per-user work and memory x {p.user_scale:,.0f} (M/m), "
        f"nodes as fast per thread as the measuring machine"
    )
    return f"{text}. {over(p)}" if over(p) else text


#: The timed scatter that sizes the workflow's streamed-measure jobs (package data:
#: ``userfair/workflow/data/scatter_parts.json``, written by ``--write-calibration``).
CALIBRATION = "scatter_parts.json"
#: The jobs of the scattered streamed measures (workflow/rules/measures.smk), each sized by
#: :func:`requests`.
RULES = ("pairs_part", "pairs", "measure_sums", "measures")


@cache
def calibration() -> Measured:
    """The packaged calibration (:data:`CALIBRATION`)."""
    path = resources.files("userfair.workflow") / "data" / CALIBRATION
    return Measured(**json.loads(path.read_text(encoding="utf-8")))


def write_calibration(measured: Measured, path: str | Path) -> None:
    """``measured`` as the calibration file the workflow's requests read."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(asdict(measured), indent=1) + "\n", encoding="utf-8")


def visits_of(size: costs.Size, measured: Measured) -> tuple[float, str]:
    """The item visits of ``size`` (sum over items of deg (deg - 1) / 2, deg the evaluated
    users with the item in train) and how they are known: its ``stats.json``'s, else
    estimated from its shape as the measurement's visits times (t / train')^2 x (items' /
    items), t = train x evaluated users / users the evaluated users' train interactions,
    i.e. the same popularity skew on another catalogue (a split that evaluates 2,178 of
    89,917 users has (2,178 / 89,917)^2 of the visits of one that evaluates all)."""
    if size.item_visits is not None:
        return float(size.item_visits), "its stats.json's item visits"
    share = size.evaluated_users / size.users if size.users else 1.0
    ratio = (size.train * share / measured.train) ** 2
    catalogue = measured.items / size.items if measured.items and size.items else 1.0
    return measured.item_visits * ratio * catalogue, "item visits estimated from its shape"


def _of_size(size: costs.Size, parts: int, threads: int, measured: Measured) -> Plan:
    """``measured`` stretched to ``size`` (module docstring; :func:`requests`)."""
    visits, _ = visits_of(size, measured)
    user_scale = max(size.evaluated_users / measured.users, size.train / measured.train)
    pair_scale = visits / measured.item_visits
    return stretch(measured, size.evaluated_users, pair_scale, user_scale, parts, threads)


def _job_seconds(p: Plan, parts: int, measured: Measured) -> dict[str, float]:
    """The seconds of each job of :data:`RULES` in a stretched scatter: ``pairs_part`` one
    part of pass one, ``measure_sums`` one part of pass two (UF's item cosines included),
    ``pairs`` the gather of pass one's parts (a job's start and reading), ``measures`` the
    gather of pass two's that computes the rest; with one part there are no parts, and
    ``pairs`` makes pass one itself, ``measures`` pass two."""
    seconds = {
        "pairs_part": p.pass_one_part_s,
        "pairs": measured.overhead_s * p.user_scale,
        "measure_sums": p.pass_two_part_s,
        "measures": p.gather_s,
    }
    if parts == 1:  # the gathers make the passes themselves
        seconds["pairs"], seconds["measures"] = p.pass_one_part_s, p.pass_two_part_s + p.gather_s
    return seconds


def _longest_s(p: Plan, parts: int, measured: Measured) -> float:
    """The longest job of a stretched scatter (:func:`_job_seconds`)."""
    return max(_job_seconds(p, parts, measured).values())


def infeasible(
    size: costs.Size, parts: int, max_runtime: int, threads: int = 1, measured=None
) -> str | None:  # fmt: skip
    """Why the streamed measures of a dataset of ``size`` in ``parts`` parts cannot finish
    within ``max_runtime`` minutes (the estimate without margin of its longest job is
    longer), naming the smallest ``measures.scatter`` (doubling, up to 4,096) that would
    fit; else None. Unknown sizes (the default shape) never stop a run."""
    if size.source == "default":
        return None
    measured = measured or calibration()
    minutes = _longest_s(_of_size(size, parts, threads, measured), parts, measured) / 60
    if minutes <= max_runtime:
        return None
    fits = [
        n for n in (2**i for i in range(13))
        if n > parts
        and _longest_s(_of_size(size, n, threads, measured), n, measured) / 60 <= max_runtime
    ]  # fmt: skip
    advice = (
        f"raise measures.scatter to {fits[0]} or more, or training.max_runtime"
        if fits
        else "no scatter up to 4,096 parts fits: raise training.max_runtime"
    )
    _, how = visits_of(size, measured)
    return (
        f"the streamed measures of {size.name} in {parts} part(s) of {threads} thread(s) "
        f"cannot finish within training.max_runtime = {max_runtime} min: their longest job "
        f"is estimated at {_duration(minutes * 60)} ({how}; EXTRAPOLATED from {measured.source}, "
        f"docs/cluster.md#scatter-plan); {advice}"
    )


def requests(
    size: costs.Size, parts: int, max_runtime: int, attempt: int = 1, threads: int = 1,
    measured=None,
) -> dict[str, costs.Request]:  # fmt: skip
    """What each job of the scattered streamed measures of a dataset of ``size`` in ``parts``
    parts of ``threads`` threads asks for, per rule of :data:`RULES`: the calibration
    (default :func:`calibration`) stretched (:func:`stretch`; pair work as the item visits
    :func:`visits_of`, per-user work and memory as the larger of the evaluated users' and
    the train interactions' ratios), times the cost model's margins, memory at least
    ``costs.BASE_MB`` (an interpreter with the libraries loaded) rounded up to 100 MB,
    runtime at least ``costs.MIN_RUNTIME`` minutes, times ``attempt`` on a retry, at most
    ``max_runtime``; each job's seconds are :func:`_job_seconds`'s."""
    measured = measured or calibration()
    p = _of_size(size, parts, threads, measured)
    seconds = _job_seconds(p, parts, measured)
    memory = max(costs.BASE_MB, p.job_mb)
    return {
        rule: costs.margined(memory, seconds[rule] / 60, 0, "extrapolated", max_runtime, attempt)
        for rule in RULES
    }


#: The streamed decomposition's CPU time over the streamed measures' (pass one and pass two
#: of every pair in one process): 98.8 against 79.3 CPU-s at 100,000 QK-like users,
#: ``benchmarks/decompose.py --route stream`` (docs/performance.md#decompose-stream).
DECOMPOSITION_RATIO = 1.25


def decomposition_request(
    size: costs.Size, max_runtime: int, attempt: int = 1, threads: int = 1, measured=None
) -> costs.Request:
    """What the streamed ``users`` job (every user's share: pass two of every pair in one
    process, reading pass one) of a dataset of ``size`` asks for: the one-part ``measures``
    job of :func:`requests` (pass two and its gather) with its seconds times
    :data:`DECOMPOSITION_RATIO`, the same memory (0.83 against 0.84 GiB measured)."""
    measured = measured or calibration()
    p = _of_size(size, 1, threads, measured)
    seconds = _job_seconds(p, 1, measured)["measures"] * DECOMPOSITION_RATIO
    memory = max(costs.BASE_MB, p.job_mb)
    return costs.margined(memory, seconds / 60, 0, "extrapolated", max_runtime, attempt)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m userfair.workflow.scatter_plan",
        description="Plan lines of the scattered streamed measures at larger sizes, from a "
        "JSON of benchmarks/scatter_cluster.py or benchmarks/streaming.py --sample-from.",
    )
    parser.add_argument("measured", type=Path, help="the benchmark's JSON file")
    parser.add_argument("--users", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--items", type=int, default=0,
        help="the measurement's catalogue size, recorded in the calibration",
    )  # fmt: skip
    parser.add_argument(
        "--write-calibration", type=Path, metavar="PATH",
        help=f"write the measurement as the workflow's calibration (its {CALIBRATION})",
    )  # fmt: skip
    args = parser.parse_args(argv)
    data = json.loads(args.measured.read_text())
    if "item_visits" in data:
        measured = Measured.from_cluster(data)
    else:  # benchmarks/streaming.py: its largest sampled row
        rows = [r for r in data["runs"] if r["route"] == "sample"]
        measured = Measured.from_sample(max(rows, key=lambda r: r["size"]))
    if args.items:
        measured = Measured(**{**asdict(measured), "items": args.items})
    if args.write_calibration is not None:
        write_calibration(measured, args.write_calibration)
        print(f"{args.write_calibration}: the calibration of {measured.source}")
    for users in args.users:
        print(line(plan(measured, users, args.nodes, args.threads)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
