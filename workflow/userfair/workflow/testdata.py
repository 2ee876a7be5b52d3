"""The tiny ml-100k behind ``.test/`` and the test suite: the ratings of the first 120 users
of the ml-100k inside recbole (about 14k ratings), their user file and the item file, in
ml-100k's own format, small enough for one-epoch training in seconds. No network.

    python -m userfair.workflow.testdata .test/resources/tiny-ml-100k
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pandas as pd

from userfair.files.io import atomic_path
from userfair.workflow.download import recbole_ml100k_dir

#: Users kept: those with external id 1..USERS.
USERS = 120


def write_tiny_ml100k(folder: str | os.PathLike, users: int = USERS) -> Path:
    """Write ``ml-100k.inter`` and ``ml-100k.user`` (users 1..``users``) and ``ml-100k.item``
    into ``folder``; point a config at it with ``dataset_options: {ml-100k: {path: FOLDER}}``."""
    source, folder = recbole_ml100k_dir(), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    inter = pd.read_csv(source / "ml-100k.inter", sep="\t", dtype=str)
    inter = inter[inter["user_id:token"].astype(int) <= users]
    with atomic_path(folder / "ml-100k.inter") as tmp:
        inter.to_csv(tmp, sep="\t", index=False)
    with atomic_path(folder / "ml-100k.item") as tmp:
        shutil.copyfile(source / "ml-100k.item", tmp)
    user = pd.read_csv(source / "ml-100k.user", sep="\t", dtype=str)
    with atomic_path(folder / "ml-100k.user") as tmp:
        user[user["user_id:token"].astype(int) <= users].to_csv(tmp, sep="\t", index=False)
    return folder


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(f"usage: python -m userfair.workflow.testdata FOLDER\n\n{__doc__}", file=sys.stderr)
        return 2
    print(write_tiny_ml100k(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
