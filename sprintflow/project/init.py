"""A project's first sprintflow files: ``sprintflow.toml``, a first contract, ``.sprintflow/.gitignore``.

:func:`plan_init` decides every file before anything is written, so ``--dry-run`` shows
exactly what a run would write, and a second run finds every file there and writes
nothing. A configuration the project already has (``sprintflow.toml``,
``[tool.sprintflow]``, agent-bober's ``bober.config.json``) is kept as it is; the first
contract then follows it. :func:`plan_contract` is the next contract of a workspace, with
the next free id.

Example:
    >>> import tempfile
    >>> app = Path(tempfile.mkdtemp())
    >>> _ = (app / "pyproject.toml").write_text('[project]\\nname = "calc"\\n[tool.pytest.ini_options]\\n')
    >>> [(f.path.relative_to(app).as_posix(), f.exists) for f in plan_init(app, today="20260513")]
    [('sprintflow.toml', False), ('.sprintflow/contracts/sprint-spec-20260513-baseline-1.json', False), \
('.sprintflow/.gitignore', False)]
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sprintflow.errors import InputError, WorkspaceError
from sprintflow.evaluate.config import config_sources, load_project_config, rule_problems
from sprintflow.evaluate.detect import detect_checks, detect_preset
from sprintflow.evaluate.strategies import strategy_for
from sprintflow.io.files import atomic_write_text
from sprintflow.io.layout import STATE_GITIGNORE, WorkspaceLayout, safe_name
from sprintflow.sandbox.runtimes import declared_runtimes
from sprintflow.schemas import (
    ContractStatus,
    InferredCommand,
    ProjectConfig,
    SprintContract,
    StrategyConfig,
    StrategyType,
    SuccessCriterion,
    VerificationMethod,
    parse_strategy,
    utc_now,
    validate_data,
)
from sprintflow.schemas.validation import schema_problems
from sprintflow.sprint.contracts import load_contracts

__all__ = ["PlannedFile", "plan_contract", "plan_init", "write_planned"]

MAX_TITLE = 200


@dataclass(frozen=True)
class PlannedFile:
    """One file a command would write, with its text; ``exists``: it is there already and is kept."""

    path: Path
    text: str
    exists: bool


def plan_init(workspace: Path, today: str | None = None) -> list[PlannedFile]:
    """The files ``sprintflow init`` writes in ``workspace`` (those already there are kept).

    Raises:
        WorkspaceError: the workspace is not a folder.
        InputError: nothing in it says how to check it (no manifest sprintflow reads).
        DocumentError: a manifest or an existing config or contract that cannot be read (located).
    """
    _require_folder(workspace)
    layout = WorkspaceLayout(workspace)
    planned: list[PlannedFile] = []
    sources = config_sources(workspace)
    if sources:
        project = load_project_config(workspace)
        planned += [PlannedFile(path, "", True) for path in sources]
    else:
        text = _config_text(workspace)
        planned.append(PlannedFile(workspace / "sprintflow.toml", text, False))
        project = _checked_config(text, workspace / "sprintflow.toml")
    contracts = _contracts(workspace)
    if contracts:
        first = contracts[0]
        planned.append(PlannedFile(layout.contract_file(first.contract_id), "", True))
    else:
        spec = f"spec-{today or _today()}-baseline"
        contract = _contract(spec, 1, "Baseline: the project's own checks", project,
                             "The checks the project has today, judged before any change: the first verdict.")
        planned.append(PlannedFile(layout.contract_file(contract.contract_id), contract.to_json(), False))
    planned.append(PlannedFile(layout.gitignore_file, STATE_GITIGNORE, layout.gitignore_file.exists()))
    return planned


def plan_contract(workspace: Path, title: str, spec_id: str | None = None) -> PlannedFile:
    """The next contract of ``workspace``: the next free sprint number of its plan, one criterion per strategy.

    The plan is ``spec_id``, else the one every existing contract belongs to, else a new one named
    after the title.

    Raises:
        InputError: an unusable title, or contracts of several plans and no ``spec_id``.
    """
    _require_folder(workspace)
    title = _checked_title(title)
    contracts = _contracts(workspace)
    specs = sorted({c.spec_id for c in contracts})
    if spec_id is None and len(specs) > 1:
        raise InputError(f"the contracts belong to several plans ({', '.join(specs)}): name one with --spec")
    spec = safe_name("spec id", spec_id or (specs[0] if specs else f"spec-{_today()}-{_slug(title)}"))
    number = max((c.sprint_number for c in contracts if c.spec_id == spec), default=0) + 1
    safe_name("contract id", f"sprint-{spec}-{number}")  # a long spec id can make it too long
    contract = _contract(spec, number, title, load_project_config(workspace), title)
    path = WorkspaceLayout(workspace).contract_file(contract.contract_id)
    if path.exists():
        raise InputError(f"{path}: already exists (a contract whose id does not match its file?); "
                         "run `sprintflow validate` on the contracts")
    return PlannedFile(path, contract.to_json(), False)


def write_planned(files: list[PlannedFile]) -> list[Path]:
    """Write every planned file that is not there yet, atomically; the paths written."""
    written = []
    for planned in files:
        if not planned.exists and not planned.path.exists():
            atomic_write_text(planned.path, planned.text)
            written.append(planned.path)
    return written


def _require_folder(workspace: Path) -> None:
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")


def _today() -> str:
    return f"{datetime.now(UTC):%Y%m%d}"


def _contracts(workspace: Path) -> list[SprintContract]:
    """The workspace's contracts, each read and checked (a broken one is a located error, not skipped)."""
    folder = WorkspaceLayout(workspace).contracts_dir
    if not folder.is_dir() or not any(folder.glob("*.json")):
        return []
    return [contract for _, contract in load_contracts(folder).values()]


# --- sprintflow.toml ------------------------------------------------------------------------------

def _config_text(workspace: Path) -> str:
    """``sprintflow.toml`` with the strategies the project's files say it can run, each naming its source."""
    checks = detect_checks(workspace)
    if not checks:
        raise InputError(f"{workspace}: nothing says how to check this project (no package.json, pyproject.toml, "
                         "setup.py, requirements.txt, go.mod, Cargo.toml or pom.xml); write sprintflow.toml "
                         "by hand (README: Configuration)")
    lines = ["# Written by `sprintflow init` from the project's own files; edit freely (README: Configuration)."]
    runtimes = declared_runtimes(workspace)
    lines += [f"# The project's sandbox provides the {name} it declares: {_comment(str(declared))}."
              for name, declared in (("node", runtimes.node), ("python", runtimes.python)) if declared]
    lines += [f"preset = {json.dumps(detect_preset(workspace))}", ""]
    for check in checks:
        lines += _strategy_lines(check)
    return "\n".join(lines)


def _checked_config(text: str, path: Path) -> ProjectConfig:
    """The config ``text`` says, checked as every command will read it: a config sprintflow writes is one
    ``validate`` accepts (a problem here is sprintflow's, said rather than written)."""
    data = tomllib.loads(text)
    problems = schema_problems(data, "config", str(path)) or rule_problems(data, str(path))
    if problems:
        raise InputError("\n".join(str(p) for p in problems))
    return ProjectConfig.model_validate(data)


def _strategy_lines(check: InferredCommand) -> list[str]:
    return ["[[evaluator.strategies]]", f"# from {_comment(check.source)}",
            f"type = {json.dumps(check.strategy.value)}",
            f"required = {'false' if check.strategy is StrategyType.playwright else 'true'}",
            f"command = {json.dumps(check.command)}", ""]


def _comment(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f]", " ", text)


# --- contracts ------------------------------------------------------------------------------------

_SAYS = {
    StrategyType.build: "The build (`{command}`) exits 0.",
    StrategyType.typecheck: "The type checker (`{command}`) reports no errors.",
    StrategyType.lint: "The linter (`{command}`) reports no errors.",
    StrategyType.unit_test: "Every test that `{command}` runs passes.",
    StrategyType.playwright: "Every end-to-end test that `{command}` runs passes.",
    StrategyType.api_check: "Every endpoint the api-check strategy lists answers with its expected status and keys.",
    StrategyType.custom: "`{command}` exits 0.",
}


def _contract(spec: str, number: int, title: str, project: ProjectConfig, description: str) -> SprintContract:
    """A proposed contract with one criterion per strategy of ``project`` (and a build one), checked by the
    contract rules before it is returned: a contract sprintflow writes is one ``validate`` accepts."""
    criteria = [_criterion(number, k, strategy, project)
                for k, strategy in enumerate(project.strategies(), start=1)]
    methods = {c.verification_method for c in criteria}
    if VerificationMethod.build not in methods:
        criteria.append(_criterion(number, len(criteria) + 1, _plain(StrategyType.build), project))
    if not methods & {VerificationMethod.unit_test, VerificationMethod.api_check, VerificationMethod.playwright,
                      VerificationMethod.custom, VerificationMethod.manual}:
        criteria.append(SuccessCriterion(
            criterion_id=f"sc-{number}-{len(criteria) + 1}", verification_method=VerificationMethod.manual,
            required=False, description="State here the behaviour this sprint delivers, as a reader could check it "
                                        "(the project has no test strategy yet)."))
    now = utc_now()
    contract = SprintContract(
        contract_id=f"sprint-{spec}-{number}", spec_id=spec, sprint_number=number, title=title,
        description=description, status=ContractStatus.proposed, created_at=now, updated_at=now,
        success_criteria=criteria, estimated_duration="small",
        generator_notes="Keep every check of sprintflow.toml passing; change only what the contract asks.",
        evaluator_notes="One criterion per strategy of the configuration, judged by that strategy.")
    problems = validate_data(contract.to_dict(), "contract", str(contract.contract_id))
    if problems:  # a bug of ours, never the user's input: said, not written
        raise InputError("\n".join(str(p) for p in problems))
    return contract


def _plain(kind: StrategyType) -> StrategyConfig:
    return parse_strategy({"type": kind.value, "required": True})


def _criterion(number: int, k: int, strategy: StrategyConfig, project: ProjectConfig) -> SuccessCriterion:
    command = strategy_for(strategy, project).command() or strategy.type.value
    custom = strategy.type is StrategyType.custom
    return SuccessCriterion(criterion_id=f"sc-{number}-{k}",
                            verification_method=VerificationMethod(strategy.type.value), required=strategy.required,
                            description=_SAYS[strategy.type].format(command=command),
                            custom_command=command if custom else None)


# --- titles ---------------------------------------------------------------------------------------

def _checked_title(title: str) -> str:
    """The title, or an InputError: empty, too long, or holding control characters or lone surrogates."""
    title = title.strip()
    if not title:
        raise InputError("title: empty; say what the sprint delivers")
    if len(title) > MAX_TITLE:
        raise InputError(f"title: {len(title)} characters, more than the {MAX_TITLE} a title may have")
    bad = next((c for c in title if unicodedata.category(c) in ("Cc", "Cs", "Cn")), None)
    if bad is not None:
        raise InputError(f"title: holds the character U+{ord(bad):04X} (a control character, a lone surrogate or "
                         "unassigned); write it in plain text")
    return title


def _slug(title: str) -> str:
    """A file-name part from the title: ``Add due dates!`` -> ``add-due-dates``.

    Example:
        >>> _slug("Add due dates!"), _slug("日本語")
        ('add-due-dates', 'sprint')
    """
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40].strip("-")
    return slug or "sprint"
