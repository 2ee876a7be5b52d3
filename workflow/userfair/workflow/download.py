"""Fetching raw datasets: streamed, checked downloads and the ml-100k inside recbole.

A download is written to ``<dest>.part`` and renamed to ``dest`` only once it is complete,
matches its sha256 (when one is given) and is a readable zip archive; on any failure the
partial file is removed, so nothing is ever left under the final name.

Redirects are followed one at a time (at most :data:`MAX_REDIRECTS`): one to another host
than the url's, or from https to http, is refused unless the host is listed in
``other_hosts`` (config ``download.other_hosts``); a file larger than ``max_bytes`` (config
``download.max_mb``) stops as soon as its announced length or the bytes received pass it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import zipfile
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("requests", "tqdm")
require("workflow", NEEDS, __name__)

import requests  # noqa: E402  (after the check, which names the extra to install)
from tqdm import tqdm  # noqa: E402

from userfair.files.io import InputError, atomic_path  # noqa: E402
from userfair.workflow import catalogue  # noqa: E402

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20
MAX_REDIRECTS = 10
#: The default cap of a download (config download.max_mb): above ml-20m.zip (~200 MB).
MAX_BYTES = 1000 * 10**6


class DownloadError(RuntimeError):
    """The server could not be reached or did not send the whole file."""


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK_BYTES), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: str | os.PathLike, expected: str, label: str) -> None:
    """Raise InputError naming ``label`` when ``expected`` is given and differs."""
    if not expected:
        return
    actual = sha256_of(path)
    if actual != expected.lower():
        raise InputError(
            f"{label}: sha256 is {actual}, expected {expected} (config "
            "dataset_options.<dataset>.sha256 or custom_datasets.<dataset>.sha256); the "
            "file is corrupt or changed"
        )


def check_zip(path: str | os.PathLike, label: str) -> None:
    """Raise InputError naming ``label`` unless ``path`` is a complete, readable zip archive."""
    if not zipfile.is_zipfile(path):
        raise InputError(
            f"{label}: not a zip archive, or a truncated one (no zip central directory found)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            bad_member = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise InputError(f"{label}: damaged zip archive ({error})") from None
    if bad_member is not None:
        raise InputError(f"{label}: damaged zip archive (CRC error in member '{bad_member}')")


def download(
    url: str,
    dest: str | os.PathLike,
    sha256: str = "",
    timeout: float = 60,
    archive: bool = True,
    *,
    other_hosts=(),
    max_bytes: int = MAX_BYTES,
) -> Path:
    """Stream ``url`` to ``dest`` with a progress bar; verify size, sha256 and, for an
    ``archive`` (a RecBole zip), zip integrity. A declared csv/tsv/parquet table is not a
    zip: ``archive=False`` checks size and sha256 only. A redirect to a host other than the
    url's and those of ``other_hosts`` (or from https to http) and a file above
    ``max_bytes`` stop with DownloadError.

    Only a verified file ever appears under ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    try:
        try:
            received, expected = _stream(url, part, timeout, set(other_hosts), max_bytes)
        except DownloadError as error:
            raise DownloadError(f"{dest}: {error}") from None
        if expected is not None and received != expected:
            raise DownloadError(
                f"{dest}: {url}: received {received} of {expected} bytes (truncated)"
            )
        check_sha256(part, sha256, f"{dest} (downloaded from {url})")
        if archive:
            check_zip(part, f"{dest} (downloaded from {url})")
        os.replace(part, dest)
    finally:
        part.unlink(missing_ok=True)
    log.info("downloaded %s (%d bytes) to %s", url, dest.stat().st_size, dest)
    return dest


def _checked_redirect(url: str, location: str, start: str, other_hosts: set) -> str:
    """The address a redirect from ``url`` to ``location`` leads to, when it stays on the
    host of ``start`` (the url asked for) or goes to one of ``other_hosts``."""
    target = urljoin(url, location)
    host, origin = urlsplit(target).hostname, urlsplit(start).hostname
    if urlsplit(target).scheme not in ("http", "https"):
        raise DownloadError(f"{start}: redirected to {target}, which is not http(s); refused")
    if urlsplit(url).scheme == "https" and urlsplit(target).scheme == "http":
        raise DownloadError(f"{start}: redirected from https to {target}; refused")
    if host != origin and host not in other_hosts:
        raise DownloadError(
            f"{start}: redirected to {target}, on another host ({host}); refused. Allow it "
            f"with config download.other_hosts: [{host}]"
        )
    return target


def _open(url: str, timeout: float, other_hosts: set):
    """The response of ``url`` after its redirects, each checked by :func:`_checked_redirect`."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        response = requests.get(current, stream=True, timeout=timeout, allow_redirects=False)
        if not response.is_redirect:
            return response
        location = response.headers["Location"]
        response.close()
        current = _checked_redirect(current, location, url, other_hosts)
        log.info("%s: redirected to %s", url, current)
    raise DownloadError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _too_large(url: str, size: int, max_bytes: int, how: str) -> DownloadError:
    return DownloadError(
        f"{url}: {how} {size:,} bytes, above the limit of {max_bytes:,} (config "
        "download.max_mb); nothing was kept. Raise download.max_mb if the file is right"
    )


def _stream(
    url: str, part: Path, timeout: float, other_hosts: set = frozenset(), max_bytes=MAX_BYTES
) -> tuple[int, int | None]:
    """Write the body of ``url`` to ``part``; return (bytes received, Content-Length or None)."""
    try:
        with _open(url, timeout, other_hosts) as response:
            if response.status_code != 200:
                raise DownloadError(f"{url}: HTTP {response.status_code} {response.reason}")
            length = response.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            if expected is not None and expected > max_bytes:
                raise _too_large(url, expected, max_bytes, "announces")
            received = 0
            with (
                open(part, "wb") as handle,
                tqdm(
                    total=expected,
                    unit="B",
                    unit_scale=True,
                    desc=part.name[: -len(".part")],
                    file=_LogLines(),
                    mininterval=5,
                    ascii=True,
                ) as progress,
            ):
                for block in response.iter_content(CHUNK_BYTES):
                    handle.write(block)
                    received += len(block)
                    if received > max_bytes:
                        raise _too_large(url, received, max_bytes, "sent more than, at")
                    progress.update(len(block))
    except requests.RequestException as error:
        raise DownloadError(f"{url}: download failed ({error})") from None
    return received, expected


class _LogLines:
    """A file for tqdm that sends each progress line to the log (the rule's log file)."""

    def write(self, text: str) -> None:
        text = text.strip("\r\n ")
        if text:
            log.info(text)

    def flush(self) -> None:
        pass


def recbole_ml100k_dir() -> Path:
    """The ml-100k atomic files that ship inside the installed recbole package."""
    try:
        import recbole
    except ImportError:
        raise InputError(
            "ml-100k is copied from the installed recbole package, which is "
            "not installed in this environment"
        ) from None
    return Path(recbole.__file__).parent / "dataset_example" / "ml-100k"


def pack_recbole_ml100k(dest: str | os.PathLike) -> Path:
    """Copy recbole's ml-100k.inter, ml-100k.item and ml-100k.user (the users' age, gender,
    occupation: who.features and the feature groups read it) into the zip ``dest`` (no
    network)."""
    source = recbole_ml100k_dir()
    with atomic_path(dest) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in ("ml-100k.inter", "ml-100k.item", "ml-100k.user"):
                if not (source / name).is_file():
                    raise InputError(f"{source / name}: missing from the recbole package")
                archive.write(source / name, arcname=name)
    log.info("copied recbole's ml-100k from %s to %s", source, dest)
    return Path(dest)


def fetch(
    name: str | catalogue.Dataset,
    dest: str | os.PathLike,
    url: str = "",
    sha256: str = "",
    *,
    other_hosts=(),
    max_bytes: int = MAX_BYTES,
) -> Path:
    """Put dataset ``name``'s raw file at ``dest``: copied (ml-100k) or downloaded. ``name``
    is a catalogue name or a :class:`~userfair.workflow.catalogue.Dataset` (a declared dataset with
    a
    ``url``: its file is a zip only in the recbole format). ``other_hosts``, ``max_bytes``:
    the limits of :func:`download`."""
    dataset = name if isinstance(name, catalogue.Dataset) else catalogue.get(name)
    limits = {"other_hosts": other_hosts, "max_bytes": max_bytes}
    if dataset.source == "recbole-embedded":
        return pack_recbole_ml100k(dest)
    if dataset.source == "recbole-archive":
        return download(url or dataset.url, dest, sha256=sha256, **limits)
    if dataset.source == "custom" and (url or dataset.url):
        return download(
            url or dataset.url, dest, sha256=sha256, archive=dataset.format == "recbole", **limits
        )
    if dataset.source == "custom":
        raise InputError(
            f"{dataset.name}: declared with a path, not a url (config "
            f"custom_datasets.{dataset.name}); nothing to download"
        )
    raise InputError(
        f"{dataset.name}: never downloaded. " + catalogue.tenrec_help(dataset.default_path)
    )
