"""Judged trees: built by the judge from its store, in folders it owns outside every workspace.

Each workspace has a folder of its own under the judge's home (``SPRINTFLOW_JUDGE_HOME``,
default ``~/.cache/sprintflow/judge``): its object store, the stat cache of its last scan, and
the baselines of the sprints running on it. A judged tree is a folder of hard links into the
store (plus the symlinks and folders of the manifest, and an empty folder where each dependency
folder goes), built in a scratch folder that names its owner, so the trees and layers a killed
run left behind are removed by the next one (:func:`reclaim_scratch`).

Example:
    >>> import tempfile
    >>> work = Path(tempfile.mkdtemp())
    >>> _ = (work / "calc.py").write_text("def add(a, b):\\n    return a + b\\n")
    >>> (work / "node_modules").mkdir()
    >>> store = WorkspaceStore(work, home=Path(tempfile.mkdtemp()))
    >>> snapshot = store.scan()
    >>> tree = store.materialize(snapshot.manifest, dependencies=snapshot.dependencies)
    >>> sorted(p.name for p in tree.root.iterdir()), tree.dependencies
    (['calc.py', 'node_modules'], ('node_modules',))
    >>> remove_tree(tree)
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sprintflow.io.owner import owner_gone, owner_label
from sprintflow.settings import get_settings

from .areas import excluded_area
from .store import Manifest, ObjectStore, Scan, StatCache, manifest_digest, scan

__all__ = ["OWNER_FILE", "SCAN_DEADLINE_S", "JudgedTree", "Snapshot", "WorkspaceStore", "changed_since",
           "owned_scratch", "reclaim_scratch", "remove_tree", "stat_picture", "unmount_below"]

OWNER_FILE = "owner"
SCAN_DEADLINE_S = 300.0
"""No scan of a workspace may take longer: a judge step that cannot finish says so, it never hangs."""


@dataclass(frozen=True)
class JudgedTree:
    """A tree the judge built; a plain value, so it crosses task boundaries."""

    root: Path
    """The folder holding it (hard links into the store: never written in place)."""
    digest: str
    """The manifest's digest: the content hash of what is judged."""
    workspace: Path
    """The workspace it was judged for (where its dependency folders come from)."""
    dependencies: tuple[str, ...] = ()
    """Dependency folders (relative) the local executor mounts read-only from the workspace."""
    pin_id: str | None = None
    """The sprint run whose baseline it was built on; None outside a sprint."""

    def to_dict(self) -> dict[str, object]:
        """As a flow parameter (plain JSON)."""
        return {"root": str(self.root), "digest": self.digest, "workspace": str(self.workspace),
                "dependencies": list(self.dependencies), "pinId": self.pin_id}

    @classmethod
    def from_dict(cls, data: dict) -> JudgedTree:
        return cls(Path(data["root"]), str(data["digest"]), Path(data["workspace"]), tuple(data["dependencies"]),
                   data.get("pinId"))


@dataclass(frozen=True)
class Snapshot:
    """One scan of a workspace, as the judge keeps it."""

    manifest: Manifest
    dependencies: tuple[str, ...]
    scan: Scan


def _judge_home(home: Path | None = None) -> Path:
    return (home or get_settings().judge_home_path).resolve()


def owned_scratch(prefix: str, home: Path | None = None) -> Path:
    """A fresh folder under the judge's scratch space, naming this process as its owner."""
    parent = _judge_home(home) / "scratch"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    (folder / OWNER_FILE).write_text(owner_label())
    return folder


def unmount_below(folder: Path) -> None:
    """Unmount every mount under ``folder`` (deepest first), so it can be deleted."""
    from sprintflow.io.process import run_command

    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            points = [line.split()[4].encode().decode("unicode_escape") for line in handle]
    except OSError:
        return
    inside = sorted((p for p in points if p == str(folder) or p.startswith(f"{folder}/")), key=len, reverse=True)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    for point in inside:
        if not run_command(["umount", point], cwd="/", timeout=30, env=env).ok:
            run_command(["umount", "-l", point], cwd="/", timeout=30, env=env)


def reclaim_scratch(home: Path | None = None) -> list[Path]:
    """Unmount and delete the scratch folders whose owner died (a SIGKILL leaves them); the ones removed.

    Folders of live runs, of other machines, or without an owner file are left alone.
    """
    removed = []
    for folder in (_judge_home(home) / "scratch").glob("*"):
        try:
            owner = (folder / OWNER_FILE).read_text()
        except OSError:
            continue
        if owner_gone(owner):
            unmount_below(folder)
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def remove_tree(tree: JudgedTree) -> None:
    """Delete a judged tree's scratch folder (its store objects stay)."""
    shutil.rmtree(tree.root.parent, ignore_errors=True)


class WorkspaceStore:
    """The judge's folder for one workspace: its objects, its stat cache, its pinned baselines."""

    def __init__(self, workspace: Path, home: Path | None = None):
        self.workspace = Path(workspace).resolve()
        self.home = _judge_home(home)
        key = hashlib.sha256(str(self.workspace).encode("utf-8", "surrogateescape")).hexdigest()[:20]
        self.root = self.home / "workspaces" / key
        self.objects = ObjectStore(self.root / "objects")

    def pin_folder(self, pin_id: str) -> Path:
        from sprintflow.io.layout import safe_name

        return self.root / "pins" / safe_name("pin id", pin_id)

    def scan(self, not_judged: Iterable[str] = (), deadline_s: float = SCAN_DEADLINE_S) -> Snapshot:
        """The workspace as it is now, its content copied into the store.

        ``not_judged`` names more folders (relative) to leave out, as the areas of
        :mod:`.areas` are: the ``dependencies`` area is what the judge provides itself.
        """
        skipped = {p.rstrip("/") for p in not_judged}
        workspace = self.workspace

        prefix = f"{workspace}/"

        def excluded(rel: str, name: str, is_dir: bool) -> str | None:
            if rel in skipped:
                return "not judged"
            venv = is_dir and os.path.isfile(f"{prefix}{rel}/pyvenv.cfg")
            return excluded_area(rel, name, is_dir, venv=venv)

        self.root.mkdir(parents=True, exist_ok=True)
        found = scan(workspace, self.objects, StatCache(self.root / "stat-cache.json"), excluded,
                     deadline=time.monotonic() + deadline_s)
        return Snapshot(found.manifest, tuple(found.excluded.get("dependencies", [])), found)

    def materialize(self, manifest: Manifest, dependencies: Iterable[str] = ()) -> JudgedTree:
        """Build ``manifest`` as a tree in a scratch folder of its own; remove it with :func:`remove_tree`.

        Hard links into the store: a 20,000-file tree is about 20,000 ``link`` calls (plain strings
        here, no Path objects: this loop is the whole cost).
        """
        folder = owned_scratch("tree-", self.home)
        root = folder / "tree"
        root.mkdir()
        info = self.workspace.stat()
        as_root = os.geteuid() == 0
        if as_root:
            os.chown(root, info.st_uid, info.st_gid)  # a container runs as the tree root's owner
        base, objects = f"{root}/", f"{self.objects.root}/"
        for rel in sorted(manifest):
            kind, key = manifest[rel]
            target = base + rel
            if kind == "file":
                _link(f"{objects}{key[:2]}/{key}", target)
            elif kind == "dir":
                mode, uid, gid = key.split("-")
                os.mkdir(target)
                os.chmod(target, int(mode, 8) | 0o700)
                if as_root:
                    os.chown(target, int(uid), int(gid))
            else:
                os.symlink(key, target)
        placeholders = tuple(rel for rel in dependencies if (self.workspace / rel).is_dir())
        for rel in placeholders:
            (root / rel).mkdir(parents=True, exist_ok=True)
        return JudgedTree(root=root, digest=manifest_digest(manifest), workspace=self.workspace,
                          dependencies=placeholders)


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno != errno.EMLINK:  # an object linked 65,000 times: this one is a copy
            raise
        shutil.copy2(source, target)


Picture = dict[str, tuple[int, int, int, int, int]]
"""Relative path -> (mode, inode, size, mtime, ctime) of everything under a folder."""


def stat_picture(root: Path, skip: Iterable[str] = (".sprintflow",)) -> Picture:
    """The ``lstat`` of every path under ``root`` (top-level names in ``skip`` and dependency folders
    aside, which no strategy can write: they are mounted read-only with their writes discarded);
    nothing is opened. A change to any file shows in its ``ctime``.
    """
    skipped = set(skip)
    picture: Picture = {}
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(root / folder if folder else root))
        except OSError:
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if not folder and entry.name in skipped:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            picture[rel] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            if entry.is_dir(follow_symlinks=False) and excluded_area(rel, entry.name, True) != "dependencies":
                pending.append(rel)
    return picture


def changed_since(root: Path, before: Picture) -> list[str]:
    """Paths under ``root`` created, changed or deleted since ``before`` was taken, sorted.

    Example:
        >>> import tempfile
        >>> work = Path(tempfile.mkdtemp()); before = stat_picture(work)
        >>> _ = (work / "planted.py").write_text("")
        >>> changed_since(work, before)
        ['planted.py']
    """
    after = stat_picture(root)
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))
