"""The judge's store: file contents kept by digest, and scans of a workspace into manifests.

A :class:`Manifest` maps each relative path of a tree to an :class:`Entry`: a file (the key of
its content, mode and owner in the :class:`ObjectStore`), a symlink (its target) or a folder. A
scan (:func:`scan`) walks a workspace without following links and without opening anything but
regular files (a FIFO, socket or device is recorded, never read, so nothing can block it), copies
every file's content into the store as it hashes it, and reuses the digests of files whose
``stat`` did not change since the last scan (:class:`StatCache`; a changed file always has a new
``ctime``, which no program can set). Trees are then built from the store (:mod:`.tree`), so what
is judged is fixed the moment it is scanned: nothing written to the workspace afterwards reaches it.

Example:
    >>> import tempfile
    >>> work, home = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> _ = (work / "app.py").write_text("print(1)\\n")
    >>> store = ObjectStore(home / "objects")
    >>> found = scan(work, store, StatCache(home / "stat-cache.json"), lambda rel, name, is_dir: None)
    >>> entry = found.manifest["app.py"]
    >>> entry.kind, store.path(entry.key).read_text()
    ('file', 'print(1)\\n')
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

from sprintflow.errors import InfrastructureError

__all__ = ["MAX_ENTRIES", "MAX_FILE_BYTES", "Entry", "Manifest", "ObjectStore", "Scan", "StatCache",
           "manifest_digest", "read_manifest", "scan", "write_manifest"]

MAX_FILE_BYTES = 512 << 20
"""A file larger than this is not copied into the store: it is recorded as too large to judge."""
MAX_ENTRIES = 400_000
"""A tree with more entries than this (outside the areas that are not judged) is not scanned further."""
SMALL_FILE_BYTES = 1 << 20
"""Files up to this size are read into memory once, and written to the store only when it lacks them."""
RACY_S = 1.0
"""A file changed this recently may change again within the same timestamp: its digest is not cached."""


class Entry(NamedTuple):
    """One path of a tree: ``file`` (``key`` names its content in the store), ``link`` (``key`` is
    the target) or ``dir`` (``key`` is its mode and owner)."""

    kind: str
    key: str


Manifest = dict[str, Entry]
"""Relative POSIX path -> entry, for every path of a tree."""


def manifest_digest(manifest: Manifest) -> str:
    """One SHA-256 over a manifest: two trees with the same digest hold the same files.

    Example:
        >>> manifest_digest({"a.py": Entry("file", "k1")}) == manifest_digest({"a.py": Entry("file", "k1")})
        True
    """
    digest = hashlib.sha256()
    for rel in sorted(manifest):
        kind, key = manifest[rel]
        digest.update(f"{rel}\0{kind}\0{key}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def write_manifest(path: Path, manifest: Manifest) -> None:
    from sprintflow.io.files import atomic_write_text

    atomic_write_text(path, json.dumps({rel: list(entry) for rel, entry in manifest.items()},
                                       ensure_ascii=True, separators=(",", ":")))


def read_manifest(path: Path) -> Manifest:
    """A manifest the judge wrote; raises InfrastructureError when it is missing or damaged."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {rel: Entry(str(kind), str(key)) for rel, (kind, key) in data.items()}
    except (OSError, ValueError, TypeError) as exc:
        raise InfrastructureError(f"the judge's manifest {path} cannot be read ({exc})") from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _file_key(digest: str, info: os.stat_result) -> str:
    return f"{digest}-{stat.S_IMODE(info.st_mode):o}-{info.st_uid}-{info.st_gid}"


def _dir_key(info: os.stat_result) -> str:
    return f"{stat.S_IMODE(info.st_mode):o}-{info.st_uid}-{info.st_gid}"


class ObjectStore:
    """File contents by key (digest, mode, owner), each written once and never modified in place.

    Trees hard-link these files: an object is only ever replaced whole, and everything that
    runs on a tree sees it through an overlay (whose writes go to a layer of their own) or a copy.
    """

    def __init__(self, root: Path):
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def put(self, path: Path | str, info: os.stat_result) -> str:
        """Copy the regular file at ``path`` (whose ``lstat`` is ``info``) into the store; its key.

        The file is read once: small ones into memory (written only when the store lacks them),
        large ones straight into a temporary object while they are hashed. Plain descriptors and
        strings, no file objects or Paths: a first scan of a large project is this, 20,000 times.

        Raises:
            OSError: it is not the regular file ``info`` describes any more (replaced, a link or a
                FIFO now), or it cannot be read.
        """
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise OSError(errno.ESTALE, "replaced while it was read")
            if opened.st_size <= SMALL_FILE_BYTES:
                data = os.read(fd, SMALL_FILE_BYTES + 1)
                if len(data) <= SMALL_FILE_BYTES and len(data) == opened.st_size:
                    return self._keep(hashlib.sha256(data).hexdigest(), opened, data)
                os.lseek(fd, 0, os.SEEK_SET)  # it changed size while we looked: stream it
            with os.fdopen(os.dup(fd), "rb") as source:
                return self._stream(source, opened)
        finally:
            os.close(fd)

    def _keep(self, digest: str, info: os.stat_result, data: bytes) -> str:
        key = _file_key(digest, info)
        final = f"{self.root}/{key[:2]}/{key}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            fd = os.open(final, flags, 0o600)
        except FileExistsError:
            return key  # stored before (or by another scan meanwhile)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(final), exist_ok=True)
            try:
                fd = os.open(final, flags, 0o600)
            except FileExistsError:
                return key
        try:
            _write_all(fd, data)
            self._own(fd, info)
        except BaseException:
            os.close(fd)
            os.unlink(final)
            raise
        os.close(fd)
        return key

    def _stream(self, source: BinaryIO, info: os.stat_result) -> str:
        digest = hashlib.sha256()
        self.root.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".incoming-")
        try:
            with os.fdopen(handle, "wb") as target:
                for block in iter(lambda: source.read(1 << 20), b""):
                    digest.update(block)
                    target.write(block)
                self._own(target.fileno(), info)
            key = _file_key(digest.hexdigest(), info)
            final = self.path(key)
            final.parent.mkdir(exist_ok=True)
            if final.exists():
                os.unlink(temporary)
            else:
                os.replace(temporary, final)
            return key
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise

    @staticmethod
    def _own(fd: int, info: os.stat_result) -> None:
        os.fchmod(fd, stat.S_IMODE(info.st_mode))
        if os.geteuid() == 0:
            os.fchown(fd, info.st_uid, info.st_gid)

    def collect(self, keep: set[str]) -> int:
        """Remove objects no tree links and ``keep`` does not name; how many went."""
        removed = 0
        for folder in self.root.glob("??"):
            for path in folder.iterdir():
                try:
                    if path.name not in keep and path.stat().st_nlink == 1:
                        path.unlink()
                        removed += 1
                except OSError:
                    continue
        return removed


class StatCache:
    """``stat`` of every file at its last scan -> its key, so an unchanged file is not read again."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, list] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.entries = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            pass  # no cache yet, or a damaged one: every file is read

    @staticmethod
    def _stamp(info: os.stat_result) -> list:
        return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode,
                info.st_uid, info.st_gid]

    def get(self, rel: str, info: os.stat_result) -> str | None:
        hit = self.entries.get(rel)
        return hit[1] if hit and hit[0] == self._stamp(info) else None

    def put(self, rel: str, info: os.stat_result, key: str, now: float) -> None:
        """Remember a digest, unless the file changed within a timestamp's reach of the scan (it could
        change again without its ``ctime`` showing it)."""
        if now - info.st_ctime_ns / 1e9 > RACY_S:
            self.entries[rel] = [self._stamp(info), key]

    def keys(self) -> set[str]:
        return {hit[1] for hit in self.entries.values()}

    def save(self, seen: set[str]) -> None:
        from sprintflow.io.files import atomic_write_text

        self.entries = {rel: hit for rel, hit in self.entries.items() if rel in seen}
        try:
            atomic_write_text(self.path, json.dumps(self.entries, separators=(",", ":")))
        except OSError:
            pass  # a cache only saves time


Excluded = Callable[[str, str, bool], str | None]
"""(relative path, name, is a folder) -> the area that is not judged (``"caches"`` …), or None."""


@dataclass
class Scan:
    """What a scan found."""

    manifest: Manifest = field(default_factory=dict)
    excluded: dict[str, list[str]] = field(default_factory=dict)
    """Area -> paths (folders or files) that were not scanned because they are not judged."""
    specials: list[str] = field(default_factory=list)
    """FIFOs, sockets and devices (``path (a FIFO)``): never opened."""
    outward: list[str] = field(default_factory=list)
    """Symlinks that lead out of the tree (``path -> target``)."""
    unreadable: list[str] = field(default_factory=list)
    """Files that could not be copied (``path: why``): too large, replaced while read, unreadable."""
    truncated: bool = False
    """More than :data:`MAX_ENTRIES` entries: the manifest is incomplete."""


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device"}


def _walk(root: str, rel: str = "") -> Iterator[tuple[str, os.DirEntry]]:
    try:
        entries = sorted(os.scandir(f"{root}/{rel}" if rel else root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        yield (f"{rel}/{entry.name}" if rel else entry.name), entry


def _leads_out(rel: str, target: str) -> bool:
    if os.path.isabs(target):
        return True
    resolved = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return resolved == ".." or resolved.startswith("../")


def scan(root: Path, store: ObjectStore, cache: StatCache, excluded: Excluded,
         deadline: float | None = None) -> Scan:
    """Every path under ``root`` outside the excluded areas, its content copied into ``store``.

    Raises:
        InfrastructureError: the scan ran past ``deadline`` (``time.monotonic()``).
    """
    found = Scan()
    now = time.time()
    pending = [""]
    top = str(root)
    while pending:
        folder = pending.pop()
        for rel, entry in _walk(top, folder):
            if len(found.manifest) >= MAX_ENTRIES:
                found.truncated = True
                cache.save(set(found.manifest))
                return found
            if deadline is not None and time.monotonic() > deadline:
                raise InfrastructureError(f"scanning {root} took longer than the judge allows")
            _record(top, rel, entry, store, cache, excluded, found, pending, now)
    cache.save(set(found.manifest))
    return found


def _record(root: str, rel: str, entry: os.DirEntry, store: ObjectStore, cache: StatCache, excluded: Excluded,
            found: Scan, pending: list[str], now: float) -> None:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return  # it vanished while we looked
    is_dir = stat.S_ISDIR(info.st_mode)
    area = excluded(rel, entry.name, is_dir)
    if area is not None:
        found.excluded.setdefault(area, []).append(rel)
        return
    if is_dir:
        found.manifest[rel] = Entry("dir", _dir_key(info))
        pending.append(rel)
    elif stat.S_ISLNK(info.st_mode):
        target = os.readlink(entry.path)
        found.manifest[rel] = Entry("link", target)
        if _leads_out(rel, target):
            found.outward.append(f"{rel} -> {target}")
    elif stat.S_ISREG(info.st_mode):
        _record_file(entry.path, rel, info, store, cache, found, now)
    else:
        found.specials.append(f"{rel} ({_KINDS.get(stat.S_IFMT(info.st_mode), 'a special file')})")


def _record_file(path: str, rel: str, info: os.stat_result, store: ObjectStore, cache: StatCache, found: Scan,
                 now: float) -> None:
    key = cache.get(rel, info)
    if key is not None:  # the store keeps every object the stat cache names (ObjectStore.collect)
        found.manifest[rel] = Entry("file", key)
        return
    if info.st_size > MAX_FILE_BYTES:
        found.unreadable.append(f"{rel}: {info.st_size:,} bytes, more than the {MAX_FILE_BYTES:,} the judge copies")
        return
    try:
        key = store.put(path, info)
    except OSError as exc:
        found.unreadable.append(f"{rel}: {exc.strerror or exc}")
        return
    cache.put(rel, info, key, now)
    found.manifest[rel] = Entry("file", key)
