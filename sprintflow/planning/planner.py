"""The planner: a feature request becomes a PlanSpec and its SprintContracts.

Each attempt is one engine call that must answer ONE JSON object,
``{"spec": <PlanSpec>, "contracts": [<SprintContract>, ...]}``. The answer is
checked against the JSON Schemas, the seed's contract rules and the plan's own
rules (one specId, sprints 1..N, known dependencies without a cycle, no id
already on disk); every problem reads ``planner answer (attempt N): json/path:
message``. A rejected answer is saved as it was printed under
``.sprintflow/specs/rejected/`` and the engine is asked again with every
problem verbatim; after the last attempt an ``EngineError`` lists them all.
Nothing is written to ``.sprintflow/contracts/`` or ``specs/`` until a plan passes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sprintflow.engines import EngineReply, engine_env, extract_json, resolve_engine, run_engine
from sprintflow.errors import DocumentError, EngineError, InfrastructureError, Problem
from sprintflow.evaluate.config import load_project_config
from sprintflow.io.containment import Bind, Containment
from sprintflow.io.files import atomic_write_text
from sprintflow.io.hashing import IGNORED_DIRS
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas import PlanSpec, SprintContract, utc_now
from sprintflow.schemas.validation import schema_problems, validate_data
from sprintflow.sprint.contracts import dependency_order, load_contracts

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "EXAMPLE_ANSWER",
    "Plan",
    "PlanAttempt",
    "call_planner",
    "check_reply",
    "existing_contracts",
    "normalise_answer",
    "plan_problems",
    "plan_request",
    "planner_prompt",
    "run_planner",
    "save_rejected",
    "workspace_listing",
    "write_plan",
]

DEFAULT_MAX_ATTEMPTS = 3
LISTING_LIMIT = 200
"""Workspace files named in the prompt: enough for context, bounded for huge trees."""
_SPEC_ID = re.compile(r"^spec-[a-z0-9]+(?:-[a-z0-9]+)*$")
# run_command's CappedBuffer marks the cut it made in over-long output this way.
_CUT = re.compile(r"\[\.\.\. (\d+) bytes of output dropped \.\.\.\]")

Ask = Callable[[str], EngineReply]
"""Sends one prompt to the planner engine."""
CallPlanner = Callable[[str, str, Path, float], EngineReply]
"""``(engine, prompt, workspace, timeout) -> reply``: ``call_planner``, or a Prefect task wrapping it."""

EXAMPLE_ANSWER: dict[str, Any] = {
    "spec": {"specId": "spec-20260115-todo-api", "title": "Todo API",
             "description": "A JSON API to create and list todos.",
             "features": [{"featureId": "feat-1", "title": "Create and list todos"}],
             "contracts": ["sprint-spec-20260115-todo-api-1"]},
    "contracts": [{
        "contractId": "sprint-spec-20260115-todo-api-1", "specId": "spec-20260115-todo-api",
        "sprintNumber": 1, "title": "Implement POST and GET /todos",
        "description": "Add an in-memory todo store with endpoints to create and list todos.",
        "status": "proposed", "createdAt": "2026-01-15T10:00:00Z", "updatedAt": "2026-01-15T10:00:00Z",
        "dependsOn": [], "features": ["feat-1"],
        "successCriteria": [
            {"criterionId": "sc-1-1", "description": "The build command exits with code 0.",
             "verificationMethod": "build", "required": True},
            {"criterionId": "sc-1-2",
             "description": "POST /todos with {\"title\": \"a\"} returns 201 and the todo with an id.",
             "verificationMethod": "api-check", "required": True}],
        "generatorNotes": "Follow the routing pattern in src/server.py.",
        "evaluatorNotes": "Start the server and POST a todo, then GET /todos.",
        "estimatedFiles": ["src/server.py"], "estimatedDuration": "small"}],
}
"""A compact valid answer, shown to the engine (and checked by the tests)."""

_RULES = """\
Answer with ONE JSON object and nothing else: {"spec": <PlanSpec>, "contracts": [<SprintContract>, ...]}.
Rules (an answer that breaks any of them is rejected):
- spec.specId is spec-<yyyymmdd>-<slug>: lower-case letters, digits and hyphens, e.g. spec-20260115-todo-api.
- spec needs specId, title, description; spec.contracts lists the contract ids in sprint order.
- Every contract has contractId sprint-<specId>-<sprintNumber>, the spec's specId, sprintNumber 1..N in order,
  status "proposed", title, description, createdAt, updatedAt (ISO-8601), dependsOn, features,
  successCriteria, generatorNotes, evaluatorNotes, estimatedFiles and estimatedDuration (small|medium|large).
- criterionId is sc-<sprintNumber>-<k>, k counting from 1 in each contract; verificationMethod is one of
  manual, typecheck, lint, unit-test, playwright, api-check, build, custom; required is true or false;
  a custom criterion needs a customCommand.
- Every contract has at least one build criterion and one functional criterion
  (unit-test, api-check, playwright, custom or manual).
- A criterion states one observable, checkable outcome with concrete values; vague wording
  ("looks good", "works well", "clean code", "properly", "as expected", "user-friendly") is rejected.
- dependsOn names contractIds of this plan or of the existing contracts listed below, with no cycle."""


@dataclass
class PlanAttempt:
    """One engine call of the planner and what was wrong with its answer."""

    number: int
    reply: EngineReply
    problems: list[Problem] = field(default_factory=list)
    raw_path: Path | None = None
    """Where the rejected answer was saved, exactly as the engine printed it."""

    def record(self) -> dict[str, Any]:
        """The attempt as the spec's ``planning`` field keeps it (camelCase, no raw text)."""
        return {"attempt": self.number, "ok": not self.problems, "reason": self.reply.reason,
                "problems": len(self.problems), "inputTokens": self.reply.input_tokens,
                "outputTokens": self.reply.output_tokens, "costUsd": self.reply.cost_usd,
                "durationMs": round(self.reply.duration_s * 1000),
                "rawAnswer": f".sprintflow/specs/rejected/{self.raw_path.name}" if self.raw_path else None}


@dataclass
class Plan:
    """A validated plan: the spec (with its ``planning`` record) and its contracts in sprint order."""

    spec: PlanSpec
    contracts: list[SprintContract]
    attempts: list[PlanAttempt]

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec.to_dict(), "contracts": [c.to_dict() for c in self.contracts]}


def workspace_listing(workspace: Path | str, limit: int = LISTING_LIMIT) -> list[str]:
    """Relative paths of the workspace's files, sorted per folder, at most ``limit`` of them.

    Tool outputs and caches (``IGNORED_DIRS``) are skipped; the walk stops at the limit,
    so a huge tree costs no more than a small one.

    Example:
        >>> workspace_listing("examples/python-api", limit=2)
        ['broken.expected.json', 'broken.patch']
    """
    root, found = Path(workspace), list[str]()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in sorted(files):
            if len(found) == limit:
                return found
            found.append(str(Path(folder, name).relative_to(root)))
    return found


def existing_contracts(workspace: Path | str) -> dict[str, SprintContract]:
    """The contracts already in ``.sprintflow/contracts/`` (validated together), or none.

    Raises:
        DocumentError: an existing contract is invalid; fix it before planning more.

    Example:
        >>> list(existing_contracts("examples/python-api"))
        ['sprint-spec-20260115-todo-api-1']
    """
    folder = WorkspaceLayout(Path(workspace)).contracts_dir
    if not folder.is_dir() or not any(folder.glob("*.json")):
        return {}
    return {cid: contract for cid, (_, contract) in load_contracts(folder).items()}


def planner_prompt(request: str, files: list[str], existing: Iterable[str] = (),
                   previous: list[Problem] | None = None) -> str:
    """What the planner engine reads: the request, the answer format and rules, an example,
    the workspace's files and, when re-asking, every problem of the previous answer verbatim.

    Example:
        >>> "## Request\\nAdd a todo API" in planner_prompt("Add a todo API", ["README.md"])
        True
    """
    listing = "\n".join(f"- {f}" for f in files) or "(empty)"
    if len(files) >= LISTING_LIMIT:
        listing += f"\n(only the first {LISTING_LIMIT} files are listed)"
    parts = [
        "You are the planner. Turn the feature request into a PlanSpec and a chain of SprintContracts.",
        f"## Request\n{request.strip()}",
        f"## Answer format\n{_RULES}",
        f"## Example answer\n```json\n{json.dumps(EXAMPLE_ANSWER, separators=(',', ':'))}\n```",
        "## Existing contracts (their ids are taken; dependsOn may name them)\n"
        + ("\n".join(f"- {cid}" for cid in sorted(existing)) or "(none)"),
        f"## Workspace files\n{listing}",
    ]
    if previous:
        problems = "\n".join(str(p) for p in previous)
        parts.append("## Your previous answer was rejected\nFix every problem below and answer again with "
                     f"the whole plan as one JSON object:\n{problems}")
    return "\n\n".join(parts) + "\n"


def normalise_answer(answer: dict[str, Any], request: str, now: str | None = None) -> None:
    """Fill in what the planner may leave out, in place: the request, spec.contracts, timestamps.

    Only fields with one right value are filled; everything else is the planner's to get right.

    Example:
        >>> answer = {"spec": {"specId": "spec-1-x"}, "contracts": [{"contractId": "sprint-spec-1-x-1"}]}
        >>> normalise_answer(answer, "Add x"); answer["spec"]["contracts"]
        ['sprint-spec-1-x-1']
    """
    now = now or utc_now()
    spec, contracts = answer.get("spec"), answer.get("contracts")
    if not isinstance(spec, dict) or not isinstance(contracts, list):
        return
    spec["request"] = request
    spec.setdefault("createdAt", now)
    if not spec.get("contracts"):
        spec["contracts"] = [c.get("contractId") for c in contracts if isinstance(c, dict)]
    for contract in contracts:
        if isinstance(contract, dict):
            contract.setdefault("createdAt", now)
            contract.setdefault("updatedAt", contract["createdAt"])


def plan_problems(answer: Any, label: str, existing: dict[str, SprintContract] | None = None,
                  existing_specs: Iterable[str] = (), force: bool = False) -> list[Problem]:
    """Every problem of a planner answer: shape, schemas, the seed's rules and the plan's rules.

    ``existing`` are the contracts on disk (``dependsOn`` may name them; their ids may not be
    reused unless ``force``); ``existing_specs`` the spec ids on disk.

    Example:
        >>> plan_problems({"spec": {}}, "planner answer (attempt 1)")[0].path
        'contracts'
    """
    existing = existing or {}
    problems = _shape_problems(answer, label)
    if problems:
        return problems
    spec, contracts = answer["spec"], answer["contracts"]
    ids = [c.get("contractId") for c in contracts]
    problems += _prefixed("spec", schema_problems(spec, "plan-spec", label))
    problems += _spec_id_problems(spec, label, set(existing_specs), force)
    known = set(ids) | set(existing)
    for index, contract in enumerate(contracts):
        where = f"contracts/{index}"
        problems += _prefixed(where, validate_data(contract, "contract", label, known))
        problems += _plan_rule_problems(contract, index, spec.get("specId"), label)
        if isinstance(ids[index], str) and ids.index(ids[index]) != index:
            problems.append(Problem(label, f"{where}/contractId", f"duplicate contract id {ids[index]!r}"))
        elif ids[index] in existing and not force:
            problems.append(Problem(label, f"{where}/contractId", f"{ids[index]!r} already exists in "
                                    ".sprintflow/contracts/: choose another specId (or --force to overwrite)"))
    if spec.get("contracts") != ids:
        problems.append(Problem(label, "spec/contracts", f"must list the contract ids in sprint order: {ids}"))
    return problems or _cycle_problems(contracts, existing, label)


def _shape_problems(answer: Any, label: str) -> list[Problem]:
    shape = 'the answer must be one JSON object {"spec": {...}, "contracts": [{...}, ...]}'
    if not isinstance(answer, dict):
        return [Problem(label, "$", shape)]
    problems = []
    if not isinstance(answer.get("spec"), dict):
        problems.append(Problem(label, "spec", f"missing or not an object: {shape}"))
    contracts = answer.get("contracts")
    if not isinstance(contracts, list) or not contracts:
        problems.append(Problem(label, "contracts", f"missing, empty or not a list: {shape}"))
    else:
        problems += [Problem(label, f"contracts/{i}", "each contract must be a JSON object")
                     for i, c in enumerate(contracts) if not isinstance(c, dict)]
    return problems


def _prefixed(prefix: str, problems: list[Problem]) -> list[Problem]:
    return [Problem(p.file, prefix if p.path in ("", "$") else f"{prefix}/{p.path}", p.message)
            for p in problems]


def _spec_id_problems(spec: dict[str, Any], label: str, on_disk: set[str], force: bool) -> list[Problem]:
    spec_id = spec.get("specId")
    if not isinstance(spec_id, str):
        return []  # the schema already says so
    if not _SPEC_ID.match(spec_id):
        # It names files: nothing but lower-case words and digits joined by hyphens.
        return [Problem(label, "spec/specId", f"{spec_id!r} must be spec-<yyyymmdd>-<slug> "
                        "(lower-case letters, digits, hyphens)")]
    if spec_id in on_disk and not force:
        return [Problem(label, "spec/specId", f"{spec_id!r} already exists in .sprintflow/specs/: "
                        "choose another specId (or --force to overwrite)")]
    return []


def _plan_rule_problems(contract: dict[str, Any], index: int, spec_id: Any, label: str) -> list[Problem]:
    where, problems = f"contracts/{index}", []
    if contract.get("specId") != spec_id:
        problems.append(Problem(label, f"{where}/specId", f"must be the spec's specId {spec_id!r}"))
    if contract.get("sprintNumber") != index + 1:
        problems.append(Problem(label, f"{where}/sprintNumber",
                                f"must be {index + 1}: sprints are numbered 1..N in order"))
    if contract.get("status") != "proposed":
        problems.append(Problem(label, f"{where}/status", "a new contract's status must be 'proposed'"))
    return problems


def _cycle_problems(contracts: list[dict[str, Any]], existing: dict[str, SprintContract],
                    label: str) -> list[Problem]:
    """Cycles through the plan and the contracts on disk (which the plan replaces when forced)."""
    planned = {c["contractId"]: SprintContract.model_validate(c) for c in contracts}
    index = {cid: i for i, cid in enumerate(planned)}
    try:
        dependency_order({**existing, **planned})
    except DocumentError as exc:
        return [Problem(label, f"contracts/{index[p.file]}/dependsOn" if p.file in index else p.path, p.message)
                for p in exc.problems]
    return []


def save_rejected(workspace: Path | str, stamp: str, attempt: int, reply: EngineReply) -> Path:
    """Keep a rejected answer exactly as the engine printed it (its stderr when stdout is empty)."""
    path = WorkspaceLayout(Path(workspace)).rejected_dir / f"{stamp}-attempt-{attempt}.txt"
    atomic_write_text(path, reply.raw if reply.raw or not reply.stderr else f"[stderr]\n{reply.stderr}")
    return path


def check_reply(reply: EngineReply, request: str, label: str, existing: dict[str, SprintContract],
                existing_specs: Iterable[str], force: bool) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The answer of one engine call, normalised, and its problems (the answer is None when unusable).

    Example:
        >>> answer, problems = check_reply(run_engine("echo hi", "", cwd="."), "x", "attempt 1", {}, (), False)
        >>> problems[0].message
        'no JSON object in the answer (3 characters)'
    """
    if not reply.ok:
        return None, [Problem(label, "$", reply.reason or "the engine failed")]
    answer = extract_json(reply.text, prefer=("spec", "contracts"))
    if answer is None:
        cut = _CUT.search(reply.raw)
        why = f"; the output was cut at the size limit ({cut.group(1)} bytes dropped)" if cut else ""
        return None, [Problem(label, "$", f"no JSON object in the answer ({len(reply.text)} characters){why}")]
    normalise_answer(answer, request)
    problems = plan_problems(answer, label, existing, existing_specs, force)
    return (None if problems else answer), problems


def plan_request(request: str, workspace: Path | str, ask: Ask, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 force: bool = False) -> Plan:
    """Ask the planner until it answers a valid plan, at most ``max_attempts`` times; writes nothing
    but the rejected answers (see ``write_plan``).

    Raises:
        EngineError: no valid plan after the last attempt; lists every problem of every attempt
            and where the raw answers were saved.
        DocumentError: the contracts already on disk are invalid.
    """
    if not request.strip():
        raise EngineError("the feature request is empty: say what the plan should deliver")
    workspace = Path(workspace)
    existing = existing_contracts(workspace)
    on_disk = {p.stem for p in WorkspaceLayout(Path(workspace)).specs_dir.glob("*.json")}
    files, stamp = workspace_listing(workspace), datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    attempts: list[PlanAttempt] = []
    for number in range(1, max_attempts + 1):
        previous = attempts[-1].problems if attempts else None
        reply = ask(planner_prompt(request, files, existing, previous))
        if reply.could_not_start:  # no answer to re-ask about: the machinery failed, not the planner
            raise InfrastructureError(f"planner: {reply.reason}")
        label = f"planner answer (attempt {number})"
        answer, problems = check_reply(reply, request, label, existing, on_disk, force)
        attempt = PlanAttempt(number, reply, problems)
        attempts.append(attempt)
        if answer is not None:
            return _plan(answer, attempts)
        attempt.raw_path = save_rejected(workspace, stamp, number, reply)
    raise EngineError(_failure(attempts))


def _plan(answer: dict[str, Any], attempts: list[PlanAttempt]) -> Plan:
    records = [a.record() for a in attempts]
    answer["spec"]["planning"] = {"attempts": records, **{key: _total(r[key] for r in records)
                                                          for key in ("inputTokens", "outputTokens", "costUsd")}}
    contracts = [SprintContract.model_validate(c) for c in answer["contracts"]]
    return Plan(PlanSpec.model_validate(answer["spec"]), contracts, attempts)


def _total(values: Iterable[Any]) -> Any:
    known = [v for v in values if v is not None]
    # Rounded: summed float costs would otherwise print as 0.037500000000000006.
    return round(sum(known), 6) if known else None


def _failure(attempts: list[PlanAttempt]) -> str:
    problems = "\n".join(str(p) for a in attempts for p in a.problems)
    saved = "\n".join(f"  {a.raw_path}" for a in attempts if a.raw_path)
    return (f"the planner gave no valid plan in {len(attempts)} attempt(s):\n{problems}\n"
            f"raw answers saved in:\n{saved}")


def write_plan(workspace: Path | str, plan: Plan) -> list[Path]:
    """Write the contracts, then the spec (the spec last: present means the plan is complete), atomically."""
    layout = WorkspaceLayout(Path(workspace))
    written = []
    for contract in plan.contracts:
        path = layout.contract_file(contract.contract_id)
        atomic_write_text(path, contract.to_json())
        written.append(path)
    spec_path = layout.spec_file(plan.spec.spec_id)
    atomic_write_text(spec_path, plan.spec.to_json())
    return [*written, spec_path]


def call_planner(engine: str, prompt: str, workspace: Path, timeout: float) -> EngineReply:
    """One planner engine call in the workspace; a failure is a reply with ``ok=False``, never an exception."""
    env = engine_env({"SPRINTFLOW_ROLE": "planner", "SPRINTFLOW_WORKSPACE": str(workspace)})
    # Contained like every engine; the project is its to write (its answer is what is read).
    contain = Containment(binds=(Bind(str(workspace.resolve()), str(workspace.resolve()), writable=True),))
    return run_engine(engine, prompt, cwd=workspace, timeout=timeout, env=env, contain=contain)


def run_planner(request: str, workspace: Path | str = ".", engine: str | None = None, *,
                max_attempts: int = DEFAULT_MAX_ATTEMPTS, timeout: float | None = None, force: bool = False,
                call: CallPlanner = call_planner) -> tuple[Plan, list[Path]]:
    """Plan ``request`` for the workspace and write the plan: the whole ``sprintflow plan``.

    The engine is ``engine`` or else SPRINTFLOW_PLANNER_ENGINE, SPRINTFLOW_ENGINE, engines.planner;
    ``timeout`` (seconds per call) defaults to engines.timeout.

    Returns:
        The plan and the files written (contracts, then the spec).
    """
    root = Path(workspace).resolve()
    project = load_project_config(root)
    command = resolve_engine("planner", explicit=engine, config=project.engines)
    seconds = timeout or project.engines.timeout
    plan = plan_request(request, root, lambda prompt: call(command, prompt, root, seconds),
                        max_attempts=max_attempts, force=force)
    return plan, write_plan(root, plan)
