"""Keep the sandbox cache bounded: the least recently used layers, their volumes and downloads go.

Only what carries the ``sprintflow.sandbox`` label is ever considered, so the
base images (``sprintflow-sandbox:latest``, ``sprintflow-base:*``) and anything
else on the engine stay; an image a container still uses is kept.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .downloads import node_package_name, sandbox_cache
from .layers import KIND_LABEL, _docker

__all__ = ["PruneReport", "prune_sandbox"]


@dataclass
class PruneReport:
    """What a prune removed (or would remove) and kept."""

    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    freed_bytes: int = 0


def _stamp(cache: Path, tag: str) -> Path:
    return cache / "used" / tag.replace(":", "_").replace("/", "_")


def _last_used(cache: Path, tag: str, created: str) -> float:
    """When a layer was last prepared for an evaluation (its creation time if never)."""
    from datetime import datetime

    stamp = _stamp(cache, tag)
    if stamp.is_file():
        return stamp.stat().st_mtime
    return datetime.fromisoformat(created[:26].rstrip("Z") + "+00:00").timestamp()


def prune_sandbox(*, keep: int = 10, older_than_s: float | None = None, dry_run: bool = False,
                  now: float | None = None, only_label: str | None = None) -> PruneReport:
    """Remove all but the ``keep`` most recently used layers (and those unused for ``older_than_s``).

    A dependency layer goes with its node_modules volume; a runtime layer stays
    while a kept dependency layer builds on it; a downloaded node or npm stays
    while a kept runtime layer holds it. ``only_label`` (``key=value``) limits
    the prune to layers that also carry that label, downloads untouched.
    """
    import time

    from docker.errors import APIError, NotFound

    client, cache, report = _docker(), sandbox_cache(), PruneReport()
    now = time.time() if now is None else now
    labels = [KIND_LABEL] + ([only_label] if only_label else [])
    images = [i for i in client.images.list(filters={"label": labels}) if i.tags]
    in_use = {c.image.id for c in client.containers.list(all=True) if c.image is not None}
    ranked = sorted(images, key=lambda i: _last_used(cache, i.tags[0], i.attrs["Created"]), reverse=True)
    kept = []
    for rank, image in enumerate(ranked):
        recent = older_than_s is None or now - _last_used(cache, image.tags[0], image.attrs["Created"]) < older_than_s
        if image.id in in_use or (rank < keep and recent):
            kept.append(image)
    needed_runtimes = {i.labels.get("sprintflow.runtime") for i in kept}
    kept += [i for i in images if i not in kept and i.tags[0] in needed_runtimes]
    # Dependency layers first, so their runtime layer is no longer a parent in use.
    doomed = sorted((i for i in images if i not in kept), key=lambda i: i.labels.get(KIND_LABEL) != "deps")
    for image in doomed:
        tag = image.tags[0]
        volume = "sprintflow-deps-" + tag.split(":", 1)[1] if image.labels.get(KIND_LABEL) == "deps" else None
        if not dry_run:
            try:
                if volume:
                    try:
                        client.volumes.get(volume).remove()
                    except NotFound:
                        pass
                client.images.remove(image.id, force=False)
            except APIError as exc:  # in use since we listed: keep it
                report.kept.append(f"{tag} ({exc.explanation})")
                continue
            _stamp(cache, tag).unlink(missing_ok=True)
        report.removed.append(tag + (f" and volume {volume}" if volume else ""))
        report.freed_bytes += _own_size(client, image)
    report.kept += [i.tags[0] for i in kept]
    if only_label is None:
        _prune_downloads(cache, kept, report, dry_run)
    return report


def _own_size(client, image) -> int:
    """What a layer adds to the image it builds on (an image's Size counts its parents too)."""
    from docker.errors import ImageNotFound

    parent = image.labels.get("sprintflow.runtime") or image.labels.get("sprintflow.base")
    try:
        below = int(client.images.get(parent).attrs.get("Size", 0)) if parent else 0
    except ImageNotFound:
        below = 0
    return max(0, int(image.attrs.get("Size", 0)) - below)


def _prune_downloads(cache: Path, kept: list, report: PruneReport, dry_run: bool) -> None:
    wanted = set()
    for image in kept:
        if image.labels.get("sprintflow.node"):
            wanted.add(f"{node_package_name()}-{image.labels['sprintflow.node']}")
            wanted.add(f"npm-{image.labels['sprintflow.npm']}")
    folder = cache / "packages"
    for package in sorted(folder.iterdir()) if folder.is_dir() else []:
        if package.name in wanted or package.name.startswith("."):
            continue
        if not dry_run:
            shutil.rmtree(package, ignore_errors=True)
        report.removed.append(f"download {package.name}")
