"""Reading the YAML files of this project (configs, grids) strictly: plain data only (a tag
such as ``!!python/object`` is refused), and a key given twice in one mapping is an error
naming the file, the key and both lines, where PyYAML would silently keep the last."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from userfair.files.io import InputError


class StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:  # an unhashable key: SafeLoader's own error follows
                continue
            if first != key_node.start_mark.line + 1:
                raise DuplicateKey(key, first, key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)


class DuplicateKey(yaml.YAMLError):
    def __init__(self, key, first: int, second: int):
        super().__init__(f"key {key!r} is given twice (lines {first} and {second}); keep one")


def loads(text: str, name: str | os.PathLike):
    """The data of YAML ``text`` read from the file ``name``; an error names the file."""
    try:
        return yaml.load(text, Loader=StrictLoader)
    except DuplicateKey as error:
        raise InputError(f"{name}: {error}") from None
    except yaml.constructor.ConstructorError as error:
        line = error.problem_mark.line + 1 if error.problem_mark else "?"
        tag = (
            (error.problem or "")
            .split("tag ")[-1]
            .strip()
            .strip("'")
            .replace("tag:yaml.org,2002:", "!!")
        )
        raise InputError(
            f"{name}: line {line}: the tag {tag} is refused (this project's YAML files hold "
            "plain data only: mappings, lists, strings and numbers)"
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise InputError(f"{name}: {where}not valid YAML ({problem})") from None


#: PyYAML's safe loader in C where libyaml is built in (PyYAML's wheels have it), else in
#: Python: the same data, parsed about ten times faster.
FAST_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def trusted(path: str | os.PathLike):
    """The data of a YAML file this project or RecBole ships (the config schema, RecBole's
    model defaults), read with :data:`FAST_SAFE_LOADER`: every Snakemake start reads them,
    and they need none of :func:`loads`' checks."""
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=FAST_SAFE_LOADER)


def load(path: str | os.PathLike):
    """The data of the YAML file at ``path`` (:func:`loads`)."""
    return loads(Path(path).read_text(encoding="utf-8"), path)
