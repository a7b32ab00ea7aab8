"""The baseline: the workspace as it was when the sprint started, kept by the judge.

Pinned once per sprint (with the configuration, :mod:`sprintflow.sprint.pin`): its manifest,
the dependency folders it had, and what lay in the areas that are never judged. Its contents
are in the judge's store, outside the workspace, so nothing the generator does can change the
tests, held-out evals and configuration it holds.

Example:
    >>> import tempfile
    >>> work = Path(tempfile.mkdtemp())
    >>> _ = (work / "calc.py").write_text("def add(a, b):\\n    return a - b\\n")
    >>> store = WorkspaceStore(work, home=Path(tempfile.mkdtemp()))
    >>> pinned = pin_baseline(store, "pin-1")
    >>> load_baseline(store, "pin-1").manifest == pinned.manifest, sorted(pinned.manifest)
    (True, ['calc.py'])
    >>> release_baseline(store, "pin-1"); (store.pin_folder("pin-1")).exists()
    False
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sprintflow.errors import InfrastructureError

from .store import Manifest, read_manifest, write_manifest
from .tree import WorkspaceStore

__all__ = ["Baseline", "collect_garbage", "load_baseline", "pin_baseline", "release_baseline"]


@dataclass(frozen=True)
class Baseline:
    """What a sprint's changes are judged against."""

    pin_id: str
    manifest: Manifest
    dependencies: tuple[str, ...] = ()
    excluded: dict[str, list[str]] = field(default_factory=dict)
    """Area -> paths that were there, not judged (so only what appears later is told)."""


def pin_baseline(store: WorkspaceStore, pin_id: str, not_judged: Iterable[str] = ()) -> Baseline:
    """Scan the workspace and keep it as the baseline ``pin_id``."""
    snapshot = store.scan(not_judged)
    found = snapshot.scan
    excluded = {**found.excluded, "special files": found.specials, "unreadable": found.unreadable,
                "links out": found.outward}
    baseline = Baseline(pin_id, snapshot.manifest, snapshot.dependencies, excluded)
    folder = store.pin_folder(pin_id)
    folder.mkdir(parents=True, exist_ok=True)
    write_manifest(folder / "manifest.json", baseline.manifest)
    (folder / "layout.json").write_text(json.dumps({"dependencies": list(baseline.dependencies),
                                                    "excluded": baseline.excluded}))
    collect_garbage(store)
    return baseline


def load_baseline(store: WorkspaceStore, pin_id: str) -> Baseline:
    """The baseline a running sprint pinned.

    Raises:
        InfrastructureError: it is gone or damaged (the judge's store was removed).
    """
    folder = store.pin_folder(pin_id)
    manifest = read_manifest(folder / "manifest.json")
    try:
        layout = json.loads((folder / "layout.json").read_text(encoding="utf-8"))
        return Baseline(pin_id, manifest, tuple(layout["dependencies"]), dict(layout["excluded"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InfrastructureError(f"the pinned baseline {folder} cannot be read ({exc})") from None


def release_baseline(store: WorkspaceStore, pin_id: str) -> None:
    """Forget a finished sprint's baseline; its objects go at the next collection."""
    shutil.rmtree(store.pin_folder(pin_id), ignore_errors=True)


def collect_garbage(store: WorkspaceStore) -> int:
    """Remove the objects no pinned baseline, no live tree and no stat-cache entry still names."""
    keep = {entry.key for folder in store.root.glob("pins/*") for entry in _pinned(folder).values()
            if entry.kind == "file"}
    from .store import StatCache

    keep |= StatCache(store.root / "stat-cache.json").keys()
    return store.objects.collect(keep)


def _pinned(folder: Path) -> Manifest:
    try:
        return read_manifest(folder / "manifest.json")
    except InfrastructureError:
        return {}
