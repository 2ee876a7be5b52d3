"""Downloads against a real HTTP server on 127.0.0.1: a good archive, a corrupt one, a
truncated one, a transfer cut short, a wrong sha256, a missing file; then the `download`
rule itself inside a real Snakemake run of the data stage."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from userfair.files.io import InputError, read_inter
from userfair.workflow import catalogue, download

from conftest import REPO, make_workdir, snakemake


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; ``/cut/NAME`` announces NAME's full length but sends half of it;
    ``/to/HOST/NAME`` redirects to NAME on HOST (same port: ``localhost`` is another host
    than ``127.0.0.1`` to a client); ``/unsized/NAME`` sends NAME without a length."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path.startswith("/to/"):
            host, name = self.path[len("/to/") :].split("/", 1)
            self.send_response(302)
            self.send_header("Location", f"http://{host}:{self.server.server_address[1]}/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/unsized/"):
            body = (Path(self.directory) / self.path[len("/unsized/") :]).read_bytes()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/cut/"):
            body = (Path(self.directory) / self.path[len("/cut/") :]).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def lastfm_archive(path: Path, users: int = 40, items: int = 30, seed: int = 0) -> Path:
    """A small archive in the layout of RecBole's lastfm.zip (user_id, artist_id, weight,
    tag_value), dense enough that the 5-core and the split keep most users."""
    rng = np.random.default_rng(seed)
    rows = ["user_id:token\tartist_id:token\tweight:float\ttag_value:token_seq"]
    for user in range(1, users + 1):
        for item in rng.choice(np.arange(100, 100 + items), size=20, replace=False):
            rows.append(f"{user}\t{item}\t{rng.integers(1, 5000)}\trock indie")
    rows.append(rows[1])  # one exact duplicate
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("lastfm.inter", "\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base url, served folder) of a live HTTP server with good, corrupt and truncated files."""
    root = tmp_path_factory.mktemp("served")
    good = lastfm_archive(root / "lastfm.zip")
    with zipfile.ZipFile(good) as archive:  # the same interactions as a declared CSV
        rows = archive.read("lastfm.inter").decode().splitlines()[1:]
    (root / "plays.csv").write_text(
        "listener;band\n" + "".join(f"{r.split()[0]};{r.split()[1]}\n" for r in rows)
    )
    (root / "corrupt.zip").write_bytes(b"PK\x03\x04 definitely not a complete zip archive")
    (root / "truncated.zip").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()
    httpd.server_close()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_good_archive_with_sha256(server, tmp_path):
    base, root = server
    digest = hashlib.sha256((root / "lastfm.zip").read_bytes()).hexdigest()
    dest = tmp_path / "raw" / "lastfm.zip"
    download.download(f"{base}/lastfm.zip", dest, sha256=digest)
    assert dest.read_bytes() == (root / "lastfm.zip").read_bytes()
    assert leftovers(dest.parent) == ["lastfm.zip"]


@pytest.mark.parametrize(
    "name, error, message",
    [
        ("corrupt.zip", InputError, "not a zip archive, or a truncated one"),
        ("truncated.zip", InputError, "not a zip archive, or a truncated one"),
        ("cut/lastfm.zip", download.DownloadError, "download failed|truncated"),
        ("missing.zip", download.DownloadError, "HTTP 404"),
    ],
)
def test_bad_downloads_leave_nothing(server, tmp_path, name, error, message):
    base, _ = server
    dest = tmp_path / "raw" / "lastfm.zip"
    with pytest.raises(error, match=message) as caught:
        download.download(f"{base}/{name}", dest)
    assert str(dest) in str(caught.value)  # the error names the file
    assert leftovers(dest.parent) == []


def test_wrong_sha256_is_rejected(server, tmp_path):
    base, _ = server
    dest = tmp_path / "lastfm.zip"
    with pytest.raises(InputError, match=r"lastfm.zip .*sha256 is [0-9a-f]{64}, expected 0{64}"):
        download.download(f"{base}/lastfm.zip", dest, sha256="0" * 64)
    assert leftovers(tmp_path) == []


def test_a_declared_table_is_fetched_without_a_zip_check(server, tmp_path):
    base, root = server
    spec = {"url": f"{base}/plays.csv", "columns": {"user": "listener", "item": "band"}}
    dataset = catalogue.declare("plays", spec)
    dest = tmp_path / catalogue.downloaded_archive(dataset)
    assert dest.name == "plays.csv"
    # one table of raw formats: a suffix for every format the catalogue reads
    assert set(catalogue.RAW_SUFFIX) == set(catalogue.FORMATS)
    assert catalogue.downloaded_archive("ml-100k") == "resources/raw/ml-100k/ml-100k.zip"
    download.fetch(dataset, dest, url=dataset.url)
    assert dest.read_bytes() == (root / "plays.csv").read_bytes()
    with pytest.raises(InputError, match="not a zip archive"):  # a RecBole archive still is
        download.download(f"{base}/plays.csv", tmp_path / "x.zip")


def test_a_redirect_on_the_same_host_is_followed(server, tmp_path):
    base, root = server
    dest = tmp_path / "lastfm.zip"
    download.download(f"{base}/to/127.0.0.1/lastfm.zip", dest)
    assert dest.read_bytes() == (root / "lastfm.zip").read_bytes()


def test_a_redirect_to_another_host_is_refused_unless_allowed(server, tmp_path):
    """localhost is the same server under another host name: refused, nothing requested
    from it and nothing left; allowed by name (config download.other_hosts), it downloads."""
    base, root = server
    dest = tmp_path / "raw" / "lastfm.zip"
    url = f"{base}/to/localhost/lastfm.zip"
    with pytest.raises(download.DownloadError) as caught:
        download.download(url, dest)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{dest}: {url}: redirected to http://localhost:")
    assert (
        "on another host (localhost); refused. Allow it with config download.other_hosts:" in text
    )
    assert leftovers(dest.parent) == []
    download.download(url, dest, other_hosts=["localhost"])
    assert dest.read_bytes() == (root / "lastfm.zip").read_bytes()


@pytest.mark.parametrize("path, how", [("lastfm.zip", "announces"), ("unsized/lastfm.zip", "sent")])
def test_a_download_above_the_cap_stops_and_leaves_nothing(server, tmp_path, path, how):
    """Above max_bytes (config download.max_mb), by its announced length or, unannounced, by
    the bytes received: stopped, nothing under the name or beside it."""
    base, root = server
    size = (root / "lastfm.zip").stat().st_size
    dest = tmp_path / "raw" / "lastfm.zip"
    with pytest.raises(download.DownloadError, match=f"{how} .*above the limit of {size - 1:,}"):
        download.download(f"{base}/{path}", dest, max_bytes=size - 1)
    assert leftovers(dest.parent) == []
    download.download(f"{base}/{path}", dest, max_bytes=size)  # at the cap: fine
    assert dest.read_bytes() == (root / "lastfm.zip").read_bytes()


def test_the_default_cap_is_above_the_largest_archive_and_matches_the_schema():
    schema = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())
    limits = schema["properties"]["download"]["properties"]
    assert limits["max_mb"]["default"] * 10**6 == download.MAX_BYTES > 200 * 10**6
    assert limits["other_hosts"]["default"] == []


def test_ml100k_is_copied_from_recbole_without_network(tmp_path):
    dest = download.fetch("ml-100k", tmp_path / "ml-100k.zip", url="http://127.0.0.1:9/unused")
    with zipfile.ZipFile(dest) as archive:
        assert sorted(archive.namelist()) == ["ml-100k.inter", "ml-100k.item", "ml-100k.user"]
    with pytest.raises(InputError, match="never downloaded.*Tenrec"):
        download.fetch("qk-video", tmp_path / "QK-video.csv")


# --- the download rule inside the workflow ---------------------------------------------------


def run_lastfm(workdir: Path, url: str, check: bool = True):
    make_workdir(workdir)
    (workdir / "run.yaml").write_text(
        yaml.safe_dump({"datasets": ["lastfm"], "dataset_options": {"lastfm": {"url": url}}})
    )
    return snakemake(
        workdir, "table_stats", "--cores", "1", "--configfile", "run.yaml", check=check
    )


@pytest.mark.slow
def test_download_rule_feeds_the_data_stage(server, tmp_path):
    base, root = server
    workdir = tmp_path / "run"
    run_lastfm(workdir, f"{base}/lastfm.zip")
    raw = workdir / "resources" / "raw" / "lastfm" / "lastfm.zip"
    assert raw.read_bytes() == (root / "lastfm.zip").read_bytes()
    stats = json.loads((workdir / "results" / "lastfm" / "data" / "stats.json").read_text())
    assert stats["interactions"] == 800  # 40 users x 20 artists; the duplicate is gone
    assert (stats["train"], stats["valid"], stats["test"]) == (480, 160, 160)  # no user dropped
    train = read_inter(workdir / "results" / "lastfm" / "data" / "lastfm.train.inter")
    assert train.columns.tolist() == ["user_id", "item_id"]  # no timestamps: random split
    assert "lastfm" in (workdir / "results" / "tables" / "stats.csv").read_text()


@pytest.mark.slow
def test_download_rule_fails_cleanly_on_a_corrupt_archive(server, tmp_path):
    base, _ = server
    workdir = tmp_path / "run"
    proc = run_lastfm(workdir, f"{base}/corrupt.zip", check=False)
    assert proc.returncode != 0
    log = (workdir / "results" / "logs" / "download" / "lastfm.zip.log").read_text()
    assert "not a zip archive, or a truncated one" in log and "lastfm.zip" in log
    assert leftovers(workdir / "resources" / "raw" / "lastfm") == []


@pytest.mark.slow
def test_download_rule_fetches_a_declared_csv(server, tmp_path):
    base, _ = server
    workdir = make_workdir(tmp_path / "run")
    spec = {
        "url": f"{base}/plays.csv",
        "separator": ";",
        "columns": {"user": "listener", "item": "band"},
    }
    (workdir / "run.yaml").write_text(
        yaml.safe_dump({"datasets": ["plays"], "custom_datasets": {"plays": spec}})
    )
    snakemake(workdir, "table_stats", "--cores", "1", "--configfile", "run.yaml")
    assert (workdir / "resources" / "raw" / "plays" / "plays.csv").is_file()
    stats = json.loads((workdir / "results" / "plays" / "data" / "stats.json").read_text())
    assert stats["interactions"] == 800  # as the lastfm archive: the duplicate is gone
