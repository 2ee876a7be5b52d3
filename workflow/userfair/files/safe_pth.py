"""``.pth`` files that load without running code.

A file of ``torch.save`` is a pickle: loading one with ``weights_only=False`` runs whatever
its ``__reduce__`` names (``os.system``, ...). The checkpoints, resume states and RecBole
dataset files of this project are written by :func:`dump` and read by :func:`load`:

- the file is ``torch.save`` of a dict of three entries only: ``format``
  (:data:`FORMAT`), ``tree`` (one JSON string) and ``tensors`` (a list of tensors). It
  loads with ``torch.load(weights_only=True)`` and no extra safe globals, so torch's
  restricted unpickler refuses any other global before anything runs;
- the JSON tree describes the saved object: plain values as they are, everything else
  as a tagged node (``{"$": "tensor", "i": 3}``, ``{"$": "dict", "k": [...], "v": [...]}``,
  numpy arrays as raw bytes in a uint8 tensor with their dtype and shape, scipy sparse
  matrices by their arrays, enums and objects by class name and attributes);
- an object or enum is rebuilt only when its class is in the reader's allowlist
  (``classes``), by ``cls.__new__(cls)`` and an update of its ``__dict__``: no constructor,
  ``__setstate__`` or other code of the file's choosing runs. A bound method is rebuilt
  only when ``classes`` lists it too (``module.Class.method``), from the function its class
  defines.

A file that is not of this format but loads with ``weights_only=True`` (tensors and plain
containers: a state dict saved by hand) is returned as torch gives it; a file that needs any
other pickle global (the format of this project before, RecBole's own checkpoints, a crafted
file) raises :class:`UnsafeFileError` without being loaded.
"""

from __future__ import annotations

import collections
import enum
import importlib
import json
import logging
import pickle
import pickletools
import re
import types
import zipfile
from io import BytesIO

import numpy as np
import scipy.sparse as sp

FORMAT = "userfair-safe-pth/1"
SCALARS = (str, int, float, bool, type(None))
SPARSE = {
    name: getattr(sp, name)
    for name in (
        "csr_matrix",
        "csc_matrix",
        "coo_matrix",
        "dok_matrix",
        "lil_matrix",
        "csr_array",
        "csc_array",
        "coo_array",
    )
}
DEFAULT_FACTORIES = {"int": int, "float": float, "list": list, "set": set, "dict": dict}


class UnsafeFileError(ValueError):
    """The file would need code (a pickle global torch does not allow) to be loaded; it was
    not loaded. The message is the reason only; the caller names the file."""


class FormatError(ValueError):
    """The file is of the safe container but its tree names something not allowed."""


def _dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _plain_state(obj) -> bool:
    """Whether ``obj`` pickles as its class and its ``__dict__`` (no custom state)."""
    cls = type(obj)
    return (
        hasattr(obj, "__dict__")
        and getattr(cls, "__getstate__", object.__getstate__) is object.__getstate__
        and not hasattr(cls, "__setstate__")
        and cls.__reduce_ex__ is object.__reduce_ex__
        and cls.__reduce__ is object.__reduce__
    )


class _Encoder:
    def __init__(self, classes):
        import torch

        self.torch = torch
        self.classes = set(classes)
        self.tensors: list = []
        self.tensor_ids: dict[int, int] = {}
        self.memos: dict[int, int] = {}  # id of an object, dict or array -> its node id
        self.keep: list = []  # keeps memoised values alive so that their ids stay unique

    def memo(self, obj) -> dict | None:
        """A reference to ``obj`` when it was encoded before (shared values stay shared)."""
        key = id(obj)
        return {"$": "ref", "id": self.memos[key]} if key in self.memos else None

    def memo_id(self, obj) -> int:
        self.memos[id(obj)] = len(self.memos)
        self.keep.append(obj)
        return self.memos[id(obj)]

    def mapping(self, obj: dict, memo_id: int | None = None) -> dict:
        kind = type(obj)
        if obj and all(type(k) is np.str_ for k in obj):  # RecBole's token -> id maps: fast
            node = {"$": "dict", "k": [str(k) for k in obj], "np_str": True}
        else:
            node = {"$": "dict", "k": [self(k) for k in obj]}
        node["v"] = [self(v) for v in obj.values()]
        if memo_id is not None:
            node["id"] = memo_id
        if kind is collections.OrderedDict:
            node["$"] = "odict"
        elif kind is collections.defaultdict:
            names = [n for n, f in DEFAULT_FACTORIES.items() if f is obj.default_factory]
            if not names:
                raise TypeError(f"defaultdict of {obj.default_factory} cannot be saved")
            node.update({"$": "defaultdict", "factory": names[0]})
        elif kind is not dict:
            raise TypeError(f"{_dotted(kind)} cannot be saved")
        return node

    def tensor(self, tensor) -> int:
        key = id(tensor)
        if key not in self.tensor_ids:
            self.tensor_ids[key] = len(self.tensors)
            self.tensors.append(tensor.detach())
            self.keep.append(tensor)
        return self.tensor_ids[key]

    def array(self, array: np.ndarray) -> dict:
        if array.dtype.kind in "biufc":
            flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
            index = self.tensor(self.torch.from_numpy(flat.copy()))
            return {"$": "ndarray", "i": index, "dtype": array.dtype.str, "shape": array.shape}
        if array.dtype.kind in "OU":
            values = array.reshape(-1).tolist() if array.dtype.kind == "U" else list(array.flat)
            np_str = array.dtype.kind == "O" and all(type(v) is np.str_ for v in values)
            items = [str(v) for v in values] if np_str else [self(v) for v in values]
            node = {"$": "ndarray-obj", "dtype": array.dtype.str, "shape": array.shape}
            return {**node, "v": items, "np_str": np_str}
        raise TypeError(f"numpy array of dtype {array.dtype} cannot be saved")

    def __call__(self, obj):  # noqa: C901  (one branch per kind of value)
        torch = self.torch
        kind = type(obj)
        if kind in SCALARS:
            return obj
        if kind is list:
            return [self(v) for v in obj]
        if kind is tuple:
            return {"$": "tuple", "v": [self(v) for v in obj]}
        if isinstance(obj, dict):
            return self.memo(obj) or self.mapping(obj, self.memo_id(obj))
        if kind in (set, frozenset):
            return {"$": kind.__name__, "v": [self(v) for v in obj]}
        if isinstance(obj, torch.Tensor):
            return {"$": "tensor", "i": self.tensor(obj)}
        if kind is bytes:
            raw = torch.from_numpy(np.frombuffer(obj, dtype=np.uint8).copy())
            return {"$": "bytes", "i": self.tensor(raw)}
        if isinstance(obj, np.ndarray):
            return self.memo(obj) or {**self.array(obj), "id": self.memo_id(obj)}
        if isinstance(obj, np.str_):
            return {"$": "npstr", "v": str(obj)}
        if isinstance(obj, np.generic):
            return {"$": "npscalar", "dtype": obj.dtype.str, "v": obj.item()}
        if isinstance(obj, torch.device):
            return {"$": "device", "v": str(obj)}
        if isinstance(obj, torch.dtype):
            return {"$": "torch.dtype", "v": str(obj).removeprefix("torch.")}
        if isinstance(obj, logging.Logger):
            return {"$": "logger", "v": None if obj is logging.getLogger() else obj.name}
        if sp.issparse(obj):
            return self.sparse(obj)
        if isinstance(obj, enum.Enum):
            self.allowed(kind)
            return {"$": "enum", "cls": _dotted(kind), "v": obj.name}
        if isinstance(obj, types.MethodType):
            name = obj.__func__.__name__
            if f"{_dotted(type(obj.__self__))}.{name}" not in self.classes:
                raise TypeError(f"method {_dotted(type(obj.__self__))}.{name} is not allowlisted")
            return {"$": "method", "self": self(obj.__self__), "name": name}
        return self.object(obj)

    def sparse(self, matrix) -> dict:
        name = type(matrix).__name__
        if SPARSE.get(name) is not type(matrix):
            raise TypeError(f"sparse matrix of type {_dotted(type(matrix))} cannot be saved")
        fmt = matrix.format
        stored = matrix if fmt in ("csr", "csc", "coo") else matrix.tocsr()
        parts = ("data", "row", "col") if stored.format == "coo" else ("data", "indices", "indptr")
        arrays = {part: self.array(np.asarray(getattr(stored, part))) for part in parts}
        node = {"$": "sparse", "cls": name, "stored": stored.format, "shape": matrix.shape}
        return {**node, **arrays}

    def allowed(self, cls: type) -> None:
        if _dotted(cls) not in self.classes:
            raise TypeError(f"objects of {_dotted(cls)} are not in the allowlist of this file")

    def object(self, obj) -> dict:
        reference = self.memo(obj)
        if reference is not None:
            return reference
        self.allowed(type(obj))
        if not _plain_state(obj):
            raise TypeError(f"{_dotted(type(obj))} has its own pickle state; cannot be saved")
        node = {"$": "object", "cls": _dotted(type(obj)), "id": self.memo_id(obj)}
        node["d"] = self.mapping(vars(obj))
        return node


class _Decoder:
    def __init__(self, tensors, classes):
        import torch

        self.torch = torch
        self.tensors = tensors
        self.classes = set(classes)
        self.objects: dict[int, object] = {}

    def cls(self, dotted: str) -> type:
        if dotted not in self.classes:
            raise FormatError(f"names class {dotted}, which this file may not hold")
        module, _, name = dotted.rpartition(".")
        found = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        if not isinstance(found, type):
            raise FormatError(f"{dotted} is not a class")
        return found

    def array(self, node) -> np.ndarray:
        if node["$"] == "ndarray":
            raw = self.tensors[node["i"]].numpy()
            return raw.view(np.dtype(node["dtype"])).reshape(node["shape"])
        values = node["v"]
        if node.get("np_str"):
            values = [np.str_(v) for v in values]
        else:
            values = [self(v) for v in values]
        dtype = np.dtype(node["dtype"])
        if dtype.kind == "U":
            return np.array(values, dtype=dtype).reshape(node["shape"])
        array = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            array[i] = value
        return array.reshape(node["shape"])

    def __call__(self, node):  # noqa: C901  (one branch per tag)
        kind = type(node)
        if kind is list:
            return [v if type(v) in SCALARS else self(v) for v in node]
        if kind is not dict:
            return node
        tag = node["$"]
        if tag in ("dict", "odict", "defaultdict"):
            if tag == "odict":
                mapping = collections.OrderedDict()
            elif tag == "defaultdict":
                mapping = collections.defaultdict(DEFAULT_FACTORIES[node["factory"]])
            else:
                mapping = {}
            if "id" in node:
                self.objects[node["id"]] = mapping
            if node.get("np_str"):
                keys = [np.str_(k) for k in node["k"]]
            else:
                keys = [k if type(k) in SCALARS else self(k) for k in node["k"]]
            values = [v if type(v) in SCALARS else self(v) for v in node["v"]]
            mapping.update(zip(keys, values))
            return mapping
        if tag == "tuple":
            return tuple(self(node["v"]))
        if tag in ("set", "frozenset"):
            return {"set": set, "frozenset": frozenset}[tag](self(node["v"]))
        if tag == "tensor":
            return self.tensors[node["i"]]
        if tag == "bytes":
            return self.tensors[node["i"]].numpy().tobytes()
        if tag in ("ndarray", "ndarray-obj"):
            array = self.array(node)
            if "id" in node:
                self.objects[node["id"]] = array
            return array
        if tag == "npstr":
            return np.str_(node["v"])
        if tag == "npscalar":
            return np.dtype(node["dtype"]).type(node["v"])
        if tag == "device":
            return self.torch.device(node["v"])
        if tag == "torch.dtype":
            dtype = getattr(self.torch, node["v"], None)
            if not isinstance(dtype, self.torch.dtype):
                raise FormatError(f"unknown torch dtype {node['v']!r}")
            return dtype
        if tag == "logger":
            return logging.getLogger(node["v"])
        if tag == "sparse":
            return self.sparse(node)
        if tag == "enum":
            cls = self.cls(node["cls"])
            if not issubclass(cls, enum.Enum):
                raise FormatError(f"{node['cls']} is not an enum")
            return cls[node["v"]]
        if tag == "method":
            owner = self(node["self"])
            name = f"{_dotted(type(owner))}.{node['name']}"
            function = getattr(type(owner), node["name"], None)
            if name not in self.classes or not isinstance(function, types.FunctionType):
                raise FormatError(f"names method {name}, which this file may not hold")
            return types.MethodType(function, owner)
        if tag == "ref":
            return self.objects[node["id"]]
        if tag == "object":
            cls = self.cls(node["cls"])
            obj = cls.__new__(cls)
            self.objects[node["id"]] = obj
            attributes = self(node["d"])
            if not all(type(k) is str for k in attributes):
                raise FormatError(f"attributes of {node['cls']} that are not names")
            obj.__dict__.update(attributes)
            return obj
        raise FormatError(f"unknown node {tag!r}")

    def sparse(self, node):
        cls = SPARSE.get(node["cls"])
        if cls is None:
            raise FormatError(f"unknown sparse matrix class {node['cls']!r}")
        shape = tuple(node["shape"])
        if node["stored"] == "coo":
            data, row, col = (self.array(node[p]) for p in ("data", "row", "col"))
            stored = sp.coo_matrix((data, (row, col)), shape=shape)
        elif node["stored"] in ("csr", "csc"):
            data, indices, indptr = (self.array(node[p]) for p in ("data", "indices", "indptr"))
            maker = sp.csr_matrix if node["stored"] == "csr" else sp.csc_matrix
            stored = maker((data, indices, indptr), shape=shape)
        else:
            raise FormatError(f"unknown sparse storage {node['stored']!r}")
        return cls(stored)


def encode(obj, classes=()) -> dict:
    """The container :func:`dump` saves for ``obj`` (``classes``: dotted names of the
    classes whose objects and enums ``obj`` may hold). TypeError for anything else."""
    encoder = _Encoder(classes)
    tree = encoder(obj)
    return {"format": FORMAT, "tree": json.dumps(tree, allow_nan=True), "tensors": encoder.tensors}


def decode(container: dict, classes=()):
    """The object of a container of :func:`encode`."""
    tree = json.loads(container["tree"])
    return _Decoder(container["tensors"], classes)(tree)


def dump(obj, file, classes=()) -> None:
    """``torch.save`` of :func:`encode` of ``obj`` to ``file`` (a path or a binary file)."""
    import torch

    torch.save(encode(obj, classes), file)


def unsafe_reason(error: BaseException) -> str | None:
    """Why ``torch.load(weights_only=True)`` refused a file when it refused it because the
    file needs code (a pickle global beyond torch's safe ones), else None (a damaged file)."""
    text = str(error)
    if not isinstance(error, pickle.UnpicklingError) or "Weights only load failed" not in text:
        return None
    named = re.search(r"GLOBAL (\S+?)(?:\s|$)", text)
    if named:
        return f"it names the Python global {named.group(1)}, which a load would run or import"
    if "allowlisted" in text:
        return "it builds Python objects beyond tensors and plain containers"
    return None


#: The opcodes that only store or frame what is on the pickle stack (nothing pushed).
_NO_PUSH = {"MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "FRAME", "PROTO"}


def pickle_globals(data: bytes) -> list[str]:
    """The Python globals (``module.name``) a pickle names, read with :mod:`pickletools`
    without running or importing anything (every protocol, 0 to 5: ``GLOBAL``, ``INST``
    and ``STACK_GLOBAL`` of strings pushed or fetched from the memo); the names up to a
    damaged place when the pickle is damaged."""
    names, pushed, memo = [], [], {}
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name in ("GLOBAL", "INST"):
                names.append(str(arg).replace(" ", "."))
            elif op.name == "STACK_GLOBAL":
                module, name = (pushed[-2], pushed[-1]) if len(pushed) >= 2 else (None, None)
                names.append(f"{module}.{name}")
            if op.name == "MEMOIZE":
                memo[len(memo)] = pushed[-1] if pushed else None
            elif op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = pushed[-1] if pushed else None
            elif op.name in ("GET", "BINGET", "LONG_BINGET"):
                pushed.append(memo.get(arg))
            elif op.name not in _NO_PUSH:
                pushed.append(arg if isinstance(arg, str) else None)
    except Exception:  # noqa: BLE001  (a damaged pickle: what was read so far)
        pass
    return names


def _pickle_of(file) -> bytes:
    """The pickle of a ``.pth`` file: its ``data.pkl`` when it is torch's zip format, else
    the file's bytes (torch's legacy format, or a bare pickle)."""
    if hasattr(file, "seek"):
        file.seek(0)
        data = file.read()
    else:
        with open(file, "rb") as handle:
            data = handle.read()
    if zipfile.is_zipfile(BytesIO(data)):
        with zipfile.ZipFile(BytesIO(data)) as archive:
            members = [n for n in archive.namelist() if n.endswith("data.pkl")]
            return archive.read(members[0]) if members else b""
    return data


def unsafe_global(file) -> str | None:
    """The first Python global of the file's pickle beyond torch's own allowlist of
    ``weights_only=True``, read without loading anything; None when there is none."""
    from torch._weights_only_unpickler import _get_allowed_globals

    allowed = set(_get_allowed_globals())
    for name in pickle_globals(_pickle_of(file)):
        if name not in allowed:
            return name
    return None


class DamagedPthError(ValueError):
    """A ``.pth`` file torch could not read and that names no unsafe global: the first line
    of torch's reason, without its advice to load with ``weights_only=False``."""


def load(file, classes=(), map_location="cpu"):
    """The object :func:`dump` wrote to ``file``; a file of tensors and plain containers
    that is not of this format as torch loads it. :class:`UnsafeFileError` (nothing loaded,
    nothing run) when the file needs any pickle global beyond torch's safe ones;
    :class:`FormatError` when its tree names a class outside ``classes``. Other errors
    (a damaged file) propagate as torch raises them."""
    import torch

    if isinstance(file, (bytes, bytearray)):
        file = BytesIO(file)
    try:
        content = torch.load(file, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        reason = unsafe_reason(error)
        if reason is not None:
            raise UnsafeFileError(reason) from None
        # torch's reader stops on some opcodes of protocols 4 and 5 (FRAME) before it sees
        # the globals: name them from the pickle itself, without running it
        named = unsafe_global(file)
        if named is not None:
            raise UnsafeFileError(
                f"it names the Python global {named}, which a load would run or import"
            ) from None
        if "Weights only load failed" not in str(error):
            raise
        lines = [line.strip() for line in str(error).splitlines()]
        why = next(
            (line for line in lines[1:] if line and "weights_only" not in line
             and not line.startswith(("Please file", "Check the documentation"))),
            "not a file of tensors and plain containers",
        )  # fmt: skip
        raise DamagedPthError(f"torch cannot read it: {why}") from None
    if isinstance(content, dict) and content.get("format") == FORMAT:
        return decode(content, classes)
    return content
