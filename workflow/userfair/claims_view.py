"""``userfair claims RUN_DIR``: the paper's claims as a run checked them, one line a claim,
coloured on a terminal (docs/analyses.md#claims). Reads the run's claims table
(``RUN_DIR/results/tables/claims.csv``, written by the workflow's rule claims, or that file
itself) with the standard library only, so the command starts fast."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

#: Where a workflow run writes its claims table, relative to the run's directory.
CLAIMS_TABLE = Path("results") / "tables" / "claims.csv"
#: The verdicts in the order they are counted, each with its mark and ANSI colour.
STYLE = {
    "holds": ("✔", "32"),
    "does not hold": ("✘", "31"),
    "undecided": ("?", "33"),
    "not testable": ("–", "90"),
}
NEEDED = ("claim", "dataset", "verdict", "evidence", "text")


class ClaimsError(ValueError):
    """A claims table that cannot be read: the message names the file and what to do."""


def claims_file(run: str | os.PathLike) -> Path:
    """The claims table of ``run`` (a run's directory or the table itself)."""
    path = Path(run)
    if path.is_dir():
        path = path / CLAIMS_TABLE
    if not path.is_file():
        raise ClaimsError(
            f"{path}: no claims table; run the workflow there first (snakemake --cores 2, "
            "or its target claims)"
        )
    return path


def read_claims(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
        if missing:
            raise ClaimsError(f"{path}: not a claims table (no column {', '.join(missing)})")
        rows = list(reader)
    unknown = sorted({r["verdict"] for r in rows} - set(STYLE))
    if unknown:
        raise ClaimsError(f"{path}: unknown verdict {unknown}; expected one of {list(STYLE)}")
    return rows


def paint(text: str, verdict: str, colour: bool) -> str:
    return f"\033[{STYLE[verdict][1]}m{text}\033[0m" if colour else text


def lines(rows: list[dict], colour: bool) -> list[str]:
    """One line a claim and dataset, then (with several datasets) on how many it holds."""
    width = max((len(r["claim"]) for r in rows), default=0)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    dwidth = max((len(d) for d in datasets), default=0)
    out = []
    for row in rows:
        verdict = row["verdict"]
        mark = paint(f"{STYLE[verdict][0]} {verdict:<13}", verdict, colour)
        out.append(
            f"{mark} {row['claim']:<{width}}  {row['dataset']:<{dwidth}}  {row['text']}"
            f"  [{row['evidence']}]"
        )
    if len(datasets) > 1:
        out.append("")
        for claim in dict.fromkeys(r["claim"] for r in rows):
            mine = [r for r in rows if r["claim"] == claim]
            held = [r["dataset"] for r in mine if r["verdict"] == "holds"]
            out.append(
                f"{claim:<{width}}  holds on {len(held)} of {len(mine)} datasets"
                + (f" ({', '.join(held)})" if held else "")
            )
    counts = [
        paint(f"{n} {v}", v, colour) for v in STYLE if (n := sum(r["verdict"] == v for r in rows))
    ]
    out.append(f"{len(rows)} verdicts: " + ", ".join(counts))
    return out


def use_colour(choice: str, stream) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def main(run: str, colour: str = "auto") -> int:
    """Print the claims of ``run``; 2 with one line on stderr when there are none."""
    try:
        rows = read_claims(claims_file(run))
    except (ClaimsError, OSError, csv.Error) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines(rows, use_colour(colour, sys.stdout))))
    return 0
