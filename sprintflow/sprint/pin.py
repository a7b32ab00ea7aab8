"""The pinned judge: what a sprint is judged by, fixed when it starts.

The effective configuration (whichever file it came from: strategies, their
commands, engines, held-out paths) is read once, when the sprint starts, and
kept in ``.sprintflow/pin.json``, which the generator cannot even see. Every
evaluation of the sprint reads the configuration from the pin, so a generator
that rewrites ``sprintflow.toml``, ``pyproject.toml`` or ``bober.config.json``
changes nothing about how it is judged (and the guard undoes the edit). A sprint
killed and started again keeps its pin; a sprint that finishes releases it.
The workspace's files are pinned with it: the judge keeps them as the sprint's baseline in its
own store (:mod:`sprintflow.judge.baseline`), and every change is judged against that.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sprintflow.errors import ConfigError, InfrastructureError, WorkspaceError
from sprintflow.evaluate.config import find_config_file, load_project_config
from sprintflow.io.files import atomic_write_text
from sprintflow.io.git import git
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.judge.baseline import Baseline, load_baseline, pin_baseline, release_baseline
from sprintflow.judge.tree import WorkspaceStore
from sprintflow.schemas import ProjectConfig, utc_now

__all__ = ["JudgePin", "pin_judge", "release_pin"]

logger = logging.getLogger("sprintflow.pin")


@dataclass(frozen=True)
class JudgePin:
    """The configuration a sprint is judged by, where it came from, and when it was pinned."""

    config: ProjectConfig
    source: str | None
    pinned_at: str
    baseline: Baseline
    """The workspace's files as they were when the sprint started, in the judge's store."""


def pin_judge(workspace: Path) -> JudgePin:
    """The sprint's pin: the one a killed run left, else the configuration as it is now, pinned.

    Raises:
        ConfigError: the pin file is damaged (delete it to pin the configuration anew).

    Example:
        >>> import tempfile
        >>> workspace = Path(tempfile.mkdtemp())
        >>> _ = (workspace / "sprintflow.toml").write_text('preset = "brownfield"')
        >>> pin = pin_judge(workspace)
        >>> _ = (workspace / "sprintflow.toml").write_text('preset = "generic"')  # the generator's edit
        >>> pin_judge(workspace).config.preset, pin.source
        ('brownfield', 'sprintflow.toml')
    """
    path = WorkspaceLayout(workspace).pin_file
    if path.is_file():
        return _load(workspace, path)
    source = find_config_file(workspace)
    config = load_project_config(workspace)
    pin_id = f"pin-{uuid.uuid4().hex[:16]}"
    baseline = pin_baseline(WorkspaceStore(workspace), pin_id)
    pin = JudgePin(config, source.name if source else None, utc_now(), baseline)
    atomic_write_text(path, json.dumps({"config": pin.config.to_dict(), "source": pin.source,
                                        "pinnedAt": pin.pinned_at, "pinId": pin_id}, indent=2) + "\n")
    _warn_if_tracked(workspace, pin.config.sprint.held_out)
    return pin


def _load(workspace: Path, path: Path) -> JudgePin:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        config = ProjectConfig.model_validate(data["config"])
        baseline = load_baseline(WorkspaceStore(workspace), str(data["pinId"]))
        return JudgePin(config, data.get("source"), data["pinnedAt"], baseline)
    except (OSError, ValueError, KeyError, TypeError, ValidationError, InfrastructureError) as exc:
        raise ConfigError(f"{path}: the pinned judge is damaged ({str(exc).splitlines()[0]}); delete it to pin "
                          "the configuration and the workspace as they are now") from None


def release_pin(workspace: Path) -> None:
    """Forget the pin and its baseline: the sprint finished, the next one pins anew."""
    path = WorkspaceLayout(workspace).pin_file
    try:
        pin_id = json.loads(path.read_text(encoding="utf-8")).get("pinId")
    except (OSError, ValueError, AttributeError):
        pin_id = None
    if isinstance(pin_id, str):
        release_baseline(WorkspaceStore(workspace), pin_id)
    path.unlink(missing_ok=True)


def _warn_if_tracked(workspace: Path, held_out: list[str]) -> None:
    """Held-out files in git's history are readable there (``git show``), hidden folder or not."""
    if not (workspace / ".git").exists():
        return
    try:
        tracked = git("ls-files", "--", *held_out, cwd=workspace, timeout=30).split()
    except WorkspaceError:
        return
    if tracked:
        logger.warning("held-out files are tracked by git, so the generator can read them from the repository's "
                       "history: %s. Keep held-out evals out of the repository the generator works in.",
                       ", ".join(tracked[:5]))
