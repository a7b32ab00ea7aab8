"""The judge of one sprint: what the generator may not see, what of its change is judged, the tree.

A sprint pins its baseline when it starts (:mod:`.baseline`). For each generator step,
:meth:`SprintJudge.judge_step` takes the change, undoes its critical part in the workspace and
records it; :meth:`SprintJudge.judged_tree` builds the tree the evaluation and the tester's test
run judge: the baseline plus the judged change (and the tester's tests).

Example:
    >>> import tempfile
    >>> from sprintflow.judge.tree import WorkspaceStore, remove_tree
    >>> work, home = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> (work / "src").mkdir(); _ = (work / "src" / "calc.py").write_text("def add(a, b):\\n    return a - b\\n")
    >>> store = WorkspaceStore(work, home=home)
    >>> judge = SprintJudge(store, pin_baseline(store, "pin-1"), Admission(estimated_files=("src/calc.py",)))
    >>> _ = (work / "src" / "calc.py").write_text("def add(a, b):\\n    return a + b\\n")  # the generator
    >>> _ = (work / "conftest.py").write_text("import pytest\\n")                      # and a cheat
    >>> change = judge.judge_step()
    >>> change.admitted, [c.split(":")[0] for c in change.critical], (work / "conftest.py").exists()
    (['src/calc.py (modified)'], ['conftest.py (created)'], False)
    >>> tree = judge.judged_tree()
    >>> (tree.root / "src" / "calc.py").read_text().splitlines()[1]
    '    return a + b'
    >>> remove_tree(tree)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from sprintflow.schemas.journal import JudgedChange

from .baseline import Baseline, load_baseline, pin_baseline
from .change import Admission, judge_change
from .store import Manifest, manifest_digest
from .tree import JudgedTree, WorkspaceStore

__all__ = ["Admission", "SprintJudge", "load_baseline", "pin_baseline"]


@dataclass(frozen=True)
class SprintJudge:
    """The baseline of a running sprint and the admission rules of its current contract."""

    store: WorkspaceStore
    baseline: Baseline
    admission: Admission

    @property
    def workspace(self) -> Path:
        return self.store.workspace

    def discarded(self) -> tuple[str, ...]:
        """The dependency folders the generator may write, whose writes vanish: they are judge inputs
        (the local executor runs the code with them as they were pinned)."""
        return tuple(str(self.workspace / rel) for rel in self.baseline.dependencies)

    def judge_step(self) -> JudgedChange:
        """The generator's change as the judge takes it; its critical part is undone in the workspace."""
        now = self.store.scan()
        change, _ = judge_change(self.baseline, now, self.admission, self.store.objects, self.workspace)
        return change

    def judged_tree(self) -> JudgedTree:
        """The tree to judge: the baseline plus the judged change, as the workspace holds it now."""
        tree = self.store.materialize(self._judged_manifest(), self.baseline.dependencies)
        return dataclasses.replace(tree, pin_id=self.baseline.pin_id)

    def judged_digest(self) -> str:
        """The digest the judged tree would have now (nothing is built)."""
        return manifest_digest(self._judged_manifest())

    def _judged_manifest(self) -> Manifest:
        _, manifest = judge_change(self.baseline, self.store.scan(), self.admission, self.store.objects)
        return manifest
