"""A change judged as a sprint judges it, for the mutation tools' tests: the baseline pinned, the
judged tree built from the change, and the check measured in a layer of its own (timed)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from sprintflow.evaluate.mutation import MutationJob, measure
from sprintflow.evaluate.view import open_view
from sprintflow.judge.baseline import pin_baseline
from sprintflow.judge.tree import JudgedTree, WorkspaceStore, remove_tree
from sprintflow.sandbox.executors import Executor
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.strategies import MutationSettings


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def judged_tree(workspace: Path, before: dict[str, str], change: dict[str, str], pin: str,
                prepare: Callable[[Path], None] | None = None) -> JudgedTree:
    """``before`` pinned as the baseline (``prepare`` run on it first), ``change`` written over it, and the
    judged tree the sprint would build of it."""
    write(workspace, before)
    if prepare is not None:
        prepare(workspace)
    store = WorkspaceStore(workspace)
    pin_baseline(store, pin)
    write(workspace, change)
    snapshot = store.scan()
    return dataclasses.replace(store.materialize(snapshot.manifest, snapshot.dependencies), pin_id=pin)


def measured(tree: JudgedTree, workspace: Path, runner: str, executor: Executor, commands: list[str],
             unmutated_s: float, settings: MutationSettings) -> tuple[MutationResult | None, float]:
    """The mutation check of ``tree`` in a layer of its own, and the seconds it took; the tree is removed."""
    view = open_view(tree.root)
    assert tree.pin_id is not None
    try:
        with view.layer("unit-test-mutation") as layer:
            started = time.monotonic()
            mutation = measure(MutationJob(settings, tree.root, workspace, tree.pin_id), runner, layer,
                               executor.for_tree(tree), commands, unmutated_s)
            return mutation, time.monotonic() - started
    finally:
        view.close()
        remove_tree(tree)
