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
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path


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
    pair_scale, user_scale = ratio**2, ratio
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
        train=measured.train * ratio,
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


#: What the rules ``pairs_part`` and ``measure_sums`` ask for (workflow/rules/measures.smk).
RULE_RUNTIME_MIN, RULE_MEM_MB = 120, 8000


def over(p: Plan, runtime_min: float = RULE_RUNTIME_MIN, mem_mb: float = RULE_MEM_MB) -> str:
    """What of ``p``'s parts exceeds a job's ``runtime_min`` and ``mem_mb`` (the rules'
    requests), as a sentence; '' if nothing does."""
    longest = max(p.pass_one_part_s, p.pass_two_part_s) / 60
    said = []
    if longest > runtime_min:
        said.append(
            f"a part's {longest:,.0f} min exceed the jobs' {runtime_min:,.0f}-minute runtime "
            "(scatter finer or raise it)"
        )
    if p.job_mb > mem_mb:
        said.append(
            f"a part's {p.job_mb / 1024:,.1f} GiB exceed the jobs' {mem_mb / 1024:,.1f} GiB "
            "(raise it: finer parts need as much)"
        )
    return ("OVER the rules' requests: " + "; ".join(said)) if said else ""


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
    args = parser.parse_args(argv)
    data = json.loads(args.measured.read_text())
    if "item_visits" in data:
        measured = Measured.from_cluster(data)
    else:  # benchmarks/streaming.py: its largest sampled row
        rows = [r for r in data["runs"] if r["route"] == "sample"]
        measured = Measured.from_sample(max(rows, key=lambda r: r["size"]))
    for users in args.users:
        print(line(plan(measured, users, args.nodes, args.threads)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
