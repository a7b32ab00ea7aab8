"""A scoring run, validated before any engine is called: skill, prompt, comparator, cases, engine.

``prepare_run`` checks the skill name, the prompt, the comparator and every line of the cases
file (:mod:`sprintflow.scoring.cases`), and resolves the engine; the ``ScoreRun`` it returns is
all the rest needs. ``with_prompt`` is the same run with another prompt, for comparisons. Bad
input is a ``DocumentError`` / ``InputError`` (exit 2), never a failed case.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sprintflow.engines import resolve_engine
from sprintflow.errors import DocumentError, InputError, Problem
from sprintflow.io.documents import read_json
from sprintflow.schemas.scoring import ComparatorConfig
from sprintflow.scoring.cases import scan_cases

__all__ = [
    "DEFAULT_CASE_TIMEOUT",
    "SKILL_COMPARATORS",
    "ScoreRun",
    "load_comparator",
    "load_prompt",
    "prepare_run",
    "with_prompt",
]

DEFAULT_CASE_TIMEOUT = 300.0
SKILL_COMPARATORS: dict[str, ComparatorConfig] = {
    "triage": ComparatorConfig(fields=["escalate", "risk"]),
}
"""Built-in comparators of known skills; ``evals/<skill>/comparator.json`` overrides them."""
_SKILL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class ScoreRun:
    """Everything one scoring run needs, validated before any engine is called."""

    skill: str
    root: Path
    cases_path: Path
    cases_file: str
    """The cases path as reports show it: relative to ``root`` when inside it."""
    cases_sha256: str
    total: int
    prompt_path: Path
    prompt_file: str
    prompt: str
    prompt_sha256: str
    comparator: ComparatorConfig
    engine: str
    timeout: float = DEFAULT_CASE_TIMEOUT


def prepare_run(skill: str | None, *, root: Path | str = ".", cases: Path | str | None = None,
                prompt: Path | str | None = None, engine: str | None = None,
                timeout: float = DEFAULT_CASE_TIMEOUT, environ: Mapping[str, str] | None = None) -> ScoreRun:
    """Validate a scoring run: skill, prompt, comparator, every case line, and the engine.

    Relative ``cases`` / ``prompt`` paths are taken from ``root``; the defaults are
    ``evals/<skill>/cases.jsonl`` and ``prompts/<skill>.md``. The engine is
    resolved for the ``scorer`` role (``--engine`` > ``SPRINTFLOW_SCORER_ENGINE``
    > ``SPRINTFLOW_ENGINE`` > ``engines.scorer`` in the project config).

    Raises:
        InputError: no or an unusable skill name.
        DocumentError: a missing or empty file, or every bad case line (file:line: problem).
        ConfigError: no engine is configured.

    Example:
        >>> run = prepare_run("triage", root="examples/scoring", engine="python3 stub_engine.py")
        >>> run.total, run.comparator.fields
        (8, ['escalate', 'risk'])
    """
    if not skill:
        raise InputError("no skill given: usage: sprintflow score SKILL (e.g. sprintflow score triage)")
    if not _SKILL.match(skill):
        raise InputError(f"invalid skill name {skill!r}: use letters, digits, '.', '_' and '-' only")
    root = Path(root)
    cases_path = _under(root, cases if cases is not None else Path("evals") / skill / "cases.jsonl")
    prompt_path = _under(root, prompt if prompt is not None else Path("prompts") / f"{skill}.md")
    cases_file, prompt_file = _display(cases_path, root), _display(prompt_path, root)
    if not cases_path.is_file():
        raise DocumentError([Problem(cases_file, None, f"no cases file for skill {skill!r}")])
    prompt_text = load_prompt(prompt_path, prompt_file)
    comparator = load_comparator(skill, cases_path)
    total, sha = scan_cases(cases_path, comparator, cases_file, skill=skill)
    if engine is None and environ is None:
        engines = _config_engines(root)
    else:
        engines = None
    command = resolve_engine("scorer", engine, engines, environ)
    return ScoreRun(skill=skill, root=root, cases_path=cases_path, cases_file=cases_file, cases_sha256=sha,
                    total=total, prompt_path=prompt_path, prompt_file=prompt_file, prompt=prompt_text,
                    prompt_sha256=hashlib.sha256(prompt_text.encode("utf-8")).hexdigest(),
                    comparator=comparator, engine=command, timeout=timeout)


def _config_engines(root: Path) -> Any:
    """The project's ``engines`` config, or None when there is no config loader or file."""
    try:
        from sprintflow.evaluate.config import find_config_file, load_project_config
    except ImportError:  # the config loader is optional for scoring
        return None
    if not root.is_dir() or find_config_file(root) is None:
        return None
    return load_project_config(root).engines


def _under(root: Path, path: Path | str) -> Path:
    path = Path(path)
    return path if path.is_absolute() else root / path


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def load_prompt(path: Path, shown: str | None = None) -> str:
    """Read a skill prompt; a missing, unreadable or empty prompt is a ``DocumentError``.

    Example:
        >>> load_prompt(Path("examples/scoring/prompts/triage.md")).startswith("You triage")
        True
    """
    shown = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DocumentError([Problem(shown, None, "no prompt file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError([Problem(shown, None, f"cannot read the prompt: {exc}")]) from None
    if not text.strip():
        raise DocumentError([Problem(shown, None, "the prompt is empty")])
    return text


def load_comparator(skill: str, cases_path: Path) -> ComparatorConfig:
    """The comparator for ``skill``: ``comparator.json`` beside the cases, else built-in, else all fields.

    Example:
        >>> load_comparator("triage", Path("evals/triage/cases.jsonl")).fields
        ['escalate', 'risk']
    """
    path = cases_path.parent / "comparator.json"
    if not path.is_file():
        return SKILL_COMPARATORS.get(skill, ComparatorConfig())
    data = read_json(path)
    try:
        config = ComparatorConfig.model_validate(data)
    except ValidationError as exc:
        raise DocumentError([Problem(str(path), "/".join(str(p) for p in err["loc"]), err["msg"])
                             for err in exc.errors()]) from None
    negative = [name for name, tol in config.tolerance.items() if tol < 0]
    if negative:
        raise DocumentError([Problem(str(path), f"tolerance/{name}", "must be >= 0") for name in negative])
    return config


def with_prompt(run: ScoreRun, prompt: Path | str) -> ScoreRun:
    """The same run with another prompt file (validated), for comparisons."""
    path = _under(run.root, prompt)
    shown = _display(path, run.root)
    text = load_prompt(path, shown)
    return replace(run, prompt_path=path, prompt_file=shown, prompt=text,
                   prompt_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())
