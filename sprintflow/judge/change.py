"""The generator's change, and what of it is judged: an allowlist, not a list of forbidden names.

After a generator step the workspace is scanned (:meth:`~.tree.WorkspaceStore.scan`) and compared
with the baseline pinned when the sprint started. Each changed path (added, modified, deleted;
regular files, symlinks, anything else) is judged by :func:`decide`, first rule that applies:

1. a judge input (held-out evals, ``protectedPaths``, the contracts) -> critical, undone;
2. a path ``estimatedFiles`` names -> judged (a test or configuration file among them is shown
   to a reviewer with its diff);
3. a test that existed at the baseline (named like one, or a file the baseline's test runs
   collected tests from) -> critical, undone;
4. a lockfile, or a manifest whose dependency sections alone changed -> judged;
5. inside a dot-folder at the top level (``.github/`` …) -> a note;
6. configuration by convention (a dotfile, ``conftest.py``, ``pytest.ini`` … at any depth) -> critical, undone;
7. at the top level: documentation -> a note; a file that was there -> judged; a new file -> critical,
   undone (tools look for their configuration here first: a new name is never trusted);
8. anything else, inside the project's folders -> judged.

A FIFO, socket or device, a symlink leading out, or a file that could not be read is critical
wherever it is (never opened). The areas of :mod:`.areas` (caches, ``.git/``, dependencies,
build output) are not judged: changes there are told in a note. The judged tree is then the
baseline with the judged part of the change applied (:func:`judged_manifest`): nothing else the
generator wrote can reach a strategy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

from sprintflow.io.confine import clear_way
from sprintflow.schemas.journal import JudgedChange, SuppressionRecord

from .areas import MANIFESTS, is_config, is_documentation, is_lockfile, is_test, top_level
from .baseline import Baseline
from .store import Entry, Manifest, ObjectStore
from .suppressions import suppressions_added
from .tree import Snapshot

__all__ = ["JUDGE_REACH", "Admission", "Decision", "Verdict", "decide", "judge_change", "judged_manifest",
           "matches"]

READ_LIMIT = 4 << 20
"""Bytes of a file read to tell which sections changed or which lines were added."""


class Verdict(Enum):
    JUDGED = "judged"
    NOTE = "note"
    CRITICAL = "critical"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    why: str = ""


@dataclass(frozen=True)
class Admission:
    """What the judge admits of a change, derived from the contract and the config."""

    estimated_files: tuple[str, ...] = ()
    judge_inputs: tuple[str, ...] = ()
    """Relative paths (folders or files) that only ever come from the baseline."""
    tester_tests: str | None = None
    """The tester's tests folder: taken from the workspace as the tester left it (the generator cannot write it)."""
    allowed_suppressions: tuple[str, ...] = ()
    """Kinds of suppression the contract lets the change add (:mod:`.suppressions`)."""
    baseline_tests: tuple[str, ...] = ()
    """The files the baseline's test runs collected tests from: tests whatever their names (a
    ``python_files`` or ``include`` setting of the project's own decides them, not ours)."""

    def is_test(self, rel: str) -> bool:
        """A test: named like one, or one the baseline's run collected tests from.

        Example:
            >>> rules = Admission(baseline_tests=("checks/calc_checks.py",))
            >>> rules.is_test("checks/calc_checks.py"), rules.is_test("tests/test_a.py"), rules.is_test("src/a.py")
            (True, True, False)
        """
        return is_test(rel) or rel in self.baseline_tests


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``patterns``, lies under one, or matches one as a glob.

    Example:
        >>> matches("tests/sprintflow/test_a.py", ["tests/sprintflow"]), matches("src/a.py", ["src/*.py"])
        (True, True)
    """
    import fnmatch

    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") or fnmatch.fnmatchcase(path, p)
               for p in patterns if p)


def decide(rel: str, before: Entry | None, after: Entry | None, admission: Admission,
           dependencies_only: bool = False) -> Decision:
    """The rule of the module docstring that applies to one changed path.

    Example:
        >>> rules = Admission(estimated_files=("src/calc.py",), judge_inputs=("evals",))
        >>> [decide(p, None, Entry("file", "k"), rules).verdict.value
        ...  for p in ("src/calc.py", "src/helpers.py", "conftest.py", "evals/test_x.py", "README.md")]
        ['judged', 'judged', 'critical', 'critical', 'note']
    """
    if matches(rel, admission.judge_inputs):
        return Decision(Verdict.CRITICAL, "a judge input, which only ever comes from the pinned baseline")
    if matches(rel, admission.estimated_files):
        return Decision(Verdict.JUDGED)
    if before is not None and admission.is_test(rel):
        return Decision(Verdict.CRITICAL, "an existing test, a judge input (estimatedFiles does not name it)")
    if is_lockfile(rel) or dependencies_only:
        return Decision(Verdict.JUDGED)
    first = PurePosixPath(rel).parts[0]
    if first.startswith(".") and not top_level(rel):
        return Decision(Verdict.NOTE, f"inside {first}/, which no strategy reads")
    if is_config(rel):
        return Decision(Verdict.CRITICAL, "configuration by convention, which decides how tools judge the code "
                                          "(estimatedFiles does not name it)")
    if top_level(rel):
        if is_documentation(rel):
            return Decision(Verdict.NOTE, "documentation")
        if before is not None:
            return Decision(Verdict.JUDGED)
        return Decision(Verdict.CRITICAL, "a new file at the top level, where tools look for configuration first "
                                          "(it is judged only when estimatedFiles names it)")
    return Decision(Verdict.JUDGED)


@dataclass
class _Judging:
    """The state of one judgement: the decision for every changed path, and what to undo."""

    change: JudgedChange = field(default_factory=JudgedChange)
    judged: dict[str, Entry | None] = field(default_factory=dict)
    undo: dict[str, Entry | None] = field(default_factory=dict)


def judge_change(pinned: Baseline, now: Snapshot, admission: Admission, objects: ObjectStore,
                 workspace: Path | None = None) -> tuple[JudgedChange, Manifest]:
    """Judge the change from the pinned baseline to the workspace as scanned; undo its critical part
    in ``workspace`` (when given); returns the record and the judged tree's manifest."""
    state = _Judging()
    baseline, after_all = pinned.manifest, now.manifest
    unsafe = _judge_unsafe(now, baseline, pinned.excluded, state)
    for rel in sorted(baseline.keys() | after_all.keys()):
        before, after = baseline.get(rel), after_all.get(rel)
        if before == after or rel in unsafe or (after is not None and after.kind == "dir") or \
                (before is not None and before.kind == "dir" and after is None):
            continue
        if admission.tester_tests and matches(rel, [admission.tester_tests]):
            continue  # the tester's, taken as it left them (judged_manifest)
        _judge_one(rel, before, after, admission, objects, state)
    state.change.notes += _area_notes(now, pinned)
    if workspace is not None:
        state.change.restored = _undo(workspace, state.undo, objects)
    return state.change, judged_manifest(baseline, after_all, state.judged, admission.tester_tests)


def _judge_one(rel: str, before: Entry | None, after: Entry | None, admission: Admission, objects: ObjectStore,
               state: _Judging) -> None:
    dependencies_only = _dependencies_only(rel, before, after, objects)
    decision = decide(rel, before, after, admission, dependencies_only)
    what = _what(rel, before, after, objects)
    if decision.verdict is Verdict.JUDGED:
        state.judged[rel] = after
        state.change.admitted.append(what)
        if not matches(rel, admission.estimated_files):
            state.change.unexpected.append(rel)
        elif admission.is_test(rel) or is_config(rel):
            state.change.reviewed[rel] = _diff(rel, before, after, objects)
        state.change.reaches += _reaches(rel, before, after, objects)
        added = _read(objects, after)
        if added is not None:
            state.change.suppressions += [
                SuppressionRecord(file=s.file, line=s.line, kind=s.kind, checker=s.checker, text=s.text.strip()[:200])
                for s in suppressions_added(rel, _read(objects, before), added, admission.allowed_suppressions)]
    elif decision.verdict is Verdict.CRITICAL:
        state.change.critical.append(f"{what}: {decision.why}")
        state.undo[rel] = before
    else:
        state.change.notes.append(f"{what}: not judged ({decision.why})")


def _judge_unsafe(now: Snapshot, baseline: Manifest, pinned_excluded: dict[str, list[str]],
                  state: _Judging) -> set[str]:
    """Special files, links that lead out, unreadable files: critical wherever they are, never opened.

    Returns their paths (what the baseline already had stays: the user's, not the change)."""
    found = now.scan
    paths = set()
    known = {item for area in ("special files", "unreadable", "links out") for item in pinned_excluded.get(area, ())}
    for item, why in [*((s, "not a regular file: never opened, never judged") for s in found.specials),
                      *((o, "a symlink that leads out of the project") for o in found.outward),
                      *((u, "could not be read, so it cannot be judged") for u in found.unreadable)]:
        if item in known:
            continue  # the baseline had it so: the user's, not the change
        rel = item.split(" (")[0].split(" -> ")[0].split(": ")[0]
        state.change.critical.append(f"{item}: {why}")
        state.undo[rel] = baseline.get(rel)
        paths.add(rel)
    if found.truncated:
        state.change.critical.append("the workspace holds more files than the judge scans: nothing past the "
                                     "limit was judged")
    return paths


def judged_manifest(baseline: Manifest, now: Manifest, judged: dict[str, Entry | None],
                    tester_tests: str | None = None) -> Manifest:
    """The baseline with the judged changes applied (and the tester's tests as they are now)."""
    result = dict(baseline)
    for rel, entry in judged.items():
        if entry is None:
            result.pop(rel, None)
        else:
            result[rel] = entry
            _with_parents(result, rel, now)
    if tester_tests:
        for rel in [r for r in result if matches(r, [tester_tests])]:
            del result[rel]
        for rel, entry in now.items():
            if matches(rel, [tester_tests]):
                result[rel] = entry
                _with_parents(result, rel, now)
    return result


def _with_parents(result: Manifest, rel: str, now: Manifest) -> None:
    for parent in PurePosixPath(rel).parents:
        key = parent.as_posix()
        if key == "." or key in result:
            break
        result[key] = now.get(key) or Entry("dir", "755-0-0")


def _read(objects: ObjectStore, entry: Entry | None) -> bytes | None:
    if entry is None or entry.kind != "file":
        return None
    try:
        with open(objects.path(entry.key), "rb") as handle:
            return handle.read(READ_LIMIT)
    except OSError:
        return None


def _parsed(name: str, raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
        return tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
    except (UnicodeDecodeError, ValueError):
        return None


def _without(data: Any, sections: tuple[tuple[str, ...], ...]) -> Any:
    data = json.loads(json.dumps(data, default=str))
    for keys in sections:
        holder = data
        for key in keys[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder.pop(keys[-1], None)
    return data


def _dependencies_only(rel: str, before: Entry | None, after: Entry | None, objects: ObjectStore) -> bool:
    """A manifest (package.json, pyproject.toml, Cargo.toml) whose dependency sections alone changed."""
    name = PurePosixPath(rel).name
    if name not in MANIFESTS or before is None or after is None:
        return False
    old, new = _parsed(name, _read(objects, before)), _parsed(name, _read(objects, after))
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    return _without(old, MANIFESTS[name]) == _without(new, MANIFESTS[name])


def _sections_changed(name: str, old: Any, new: Any) -> list[str]:
    """The keys that differ, two levels deep under ``tool`` and ``project`` (``tool.pytest``), else one."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return []
    changed = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key in ("tool", "project") and isinstance(a, dict) and isinstance(b, dict):
            changed += [f"{key}.{inner}" for inner in sorted(a.keys() | b.keys()) if a.get(inner) != b.get(inner)]
        else:
            changed.append(key)
    return changed


def _what(rel: str, before: Entry | None, after: Entry | None, objects: ObjectStore) -> str:
    """``rel (created|deleted|modified|<sections> changed)``."""
    if before is None:
        return f"{rel} (created)"
    if after is None:
        return f"{rel} (deleted)"
    name = PurePosixPath(rel).name
    if name in MANIFESTS:
        sections = _sections_changed(name, _parsed(name, _read(objects, before)), _parsed(name, _read(objects, after)))
        if sections:
            return f"{rel} ({', '.join(sections)} changed)"
    return f"{rel} (modified)"


def _diff(rel: str, before: Entry | None, after: Entry | None, objects: ObjectStore, limit: int = 4000) -> str:
    import difflib

    old = (_read(objects, before) or b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = (_read(objects, after) or b"").decode("utf-8", "replace").splitlines(keepends=True)
    text = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}"))
    return text if len(text) <= limit else text[:limit] + "\n[… diff cut]\n"


JUDGE_REACH: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pytest's internals", re.compile(r"\b_pytest\b|\bpytest_runtest_\w+|\bpytest_collection_modifyitems\b")),
    ("the module table (sys.modules)", re.compile(r"\bsys\.modules\s*\[[^\]]+\]\s*=(?!=)|sys\.modules\.update\(")),
    ("builtins", re.compile(r"\bbuiltins\.\w+\s*=(?!=)|__builtins__")),
    ("a hard exit that skips the runner's report", re.compile(r"\bos\._exit\(|\bprocess\.(?:exit|reallyExit)\(")),
    ("the test framework's globals", re.compile(r"globalThis\.(?:expect|it|test|describe|vi)\s*=(?!=)")),
)
"""Lines code under test (and new tests) have no business adding: they reach into the runner that
judges them. Named for precise feedback; the canary tests catch what these patterns miss."""


def _reaches(rel: str, before: Entry | None, after: Entry | None, objects: ObjectStore) -> list[str]:
    new = _read(objects, after)
    if new is None:
        return []
    old = set((_read(objects, before) or b"").decode("utf-8", "replace").splitlines())
    found = []
    for number, line in enumerate(new.decode("utf-8", "replace").splitlines(), start=1):
        if line in old:
            continue
        found += [f"{rel}:{number} reaches into {what}" for what, pattern in JUDGE_REACH if pattern.search(line)]
    return found


def _area_notes(now: Snapshot, pinned: Baseline) -> list[str]:
    """One note for what appeared since the baseline where nothing is judged (dependencies and state aside)."""
    parts = []
    for area, paths in sorted(now.scan.excluded.items()):
        new = [p for p in paths if p not in pinned.excluded.get(area, ())]
        if new and area not in ("dependencies", "state"):
            parts.append(f"{area}: {', '.join(new[:8])}{' …' if len(new) > 8 else ''}")
    return [f"Not judged (the judge provides or rebuilds these itself): {'; '.join(parts)}"] if parts else []


def _undo(workspace: Path, undo: dict[str, Entry | None], objects: ObjectStore) -> list[str]:
    """Put each critical path back as the baseline had it (or remove it); never write through a link."""
    restored = []
    for rel, entry in sorted(undo.items()):
        target = workspace / rel
        try:
            clear_way(workspace, target)
            _remove(target)
            if entry is not None:
                _put(target, entry, objects)
        except OSError:
            continue
        restored.append(rel)
    return restored


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _put(target: Path, entry: Entry, objects: ObjectStore) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if entry.kind == "link":
        target.symlink_to(entry.key)
    elif entry.kind == "file":
        shutil.copy2(objects.path(entry.key), target)
