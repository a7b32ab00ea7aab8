"""Validate external documents with jsonschema, then load them into models.

External documents (hand-written contracts, configs, engine output) are checked
against the generated JSON Schemas first, so every problem names its file and
JSON path; only then do the pydantic models load them.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from sprintflow.errors import DocumentError, Problem
from sprintflow.io.documents import read_json, unrepresentable
from sprintflow.io.layout import SAFE_NAME

from ._base import PATTERN_MESSAGES, TEXT_PATTERN, attribute_docstrings
from .config import ProjectConfig
from .contract import PlanSpec, SprintContract
from .evaluation import EvalResult

__all__ = [
    "KINDS",
    "contract_rule_problems",
    "detect_kind",
    "duplicate_id_problems",
    "generated_schema",
    "json_schema",
    "in_document_order",
    "load_document",
    "model_problems",
    "parse_json_file",
    "schema_and_model_problems",
    "schema_problems",
    "validate_data",
]

M = TypeVar("M", bound=BaseModel)

KINDS: dict[str, type[BaseModel]] = {
    "contract": SprintContract,
    "plan-spec": PlanSpec,
    "eval-result": EvalResult,
    "config": ProjectConfig,
}
SCHEMA_DIR = Path(__file__).parent


@cache
def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a document kind, as committed beside the models.

    Read, not generated: generating one takes 30 ms, and every command reads a
    config and a contract. A test keeps the files equal to :func:`generated_schema`.
    """
    return json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))


class _DescribedByDocstrings(GenerateJsonSchema):
    """pydantic's JSON Schema, each property described by its field's docstring unless it has a description."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        model, properties = schema["cls"], json_schema.get("properties", {})
        for name, text in attribute_docstrings(model).items():
            field = model.model_fields.get(name)
            key = (field.alias or name) if field is not None else name
            if isinstance(properties.get(key), dict):
                properties[key].setdefault("description", text)
        return json_schema


def generated_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a document kind, generated from its model (``python -m sprintflow.schemas`` writes it)."""
    schema = KINDS[kind].model_json_schema(by_alias=True, mode="validation", schema_generator=_DescribedByDocstrings)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://sprintflow.dev/schemas/{kind}.schema.json"
    return schema


def detect_kind(data: Any) -> str | None:
    """Guess a document's kind from its keys; None when nothing fits."""
    if not isinstance(data, dict):
        return None
    if "evalId" in data or "overallResult" in data:
        return "eval-result"
    if "contractId" in data or "successCriteria" in data:
        return "contract"
    if "specId" in data:
        return "plan-spec"
    if {"evaluator", "commands", "preset", "executor", "engines"} & data.keys():
        return "config"
    return None


def parse_json_file(path: Path) -> Any:
    """Read and parse a JSON file; a problem names the line and column (see :mod:`sprintflow.io.documents`)."""
    return read_json(path)


def _json_path(parts: Any) -> str:
    return "/".join(str(p) for p in parts) or "$"


def schema_problems(data: Any, kind: str, file: str) -> list[Problem]:
    """Every JSON Schema violation of ``data``, sorted by location."""
    unfit = [Problem(file, path, why) for path, why in unrepresentable(data)]
    if unfit:
        return unfit
    validator = jsonschema.Draft202012Validator(json_schema(kind))
    errors = [_most_specific(e) for e in validator.iter_errors(data)]
    errors.sort(key=lambda e: [str(p) for p in e.absolute_path])
    return [problem for e in errors for problem in _located(e, file)]


def _located(error: jsonschema.ValidationError, file: str) -> list[Problem]:
    """One problem per error; an unknown key gets its own path and the closest known key."""
    where = _json_path(error.absolute_path)
    if error.validator == "pattern" and error.validator_value == f"^{SAFE_NAME.pattern}$":
        return [Problem(file, where, f"{error.instance!r} is not a safe id: letters, digits, '.', '_' and '-', "
                                     "starting with a letter or digit, no '..'")]
    if error.validator == "pattern" and error.validator_value in PATTERN_MESSAGES:
        return [Problem(file, where, f"{error.instance!r}: {PATTERN_MESSAGES[error.validator_value]}")]
    if error.validator == "pattern" and error.validator_value == TEXT_PATTERN and isinstance(error.instance, str):
        bad = next(c for c in error.instance if ord(c) < 32 and c not in "\t\n\r" or ord(c) == 127)
        return [Problem(file, where, f"a control character (U+{ord(bad):04X}) is not text a document may hold")]
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return [Problem(file, where, error.message)]
    known = sorted((error.schema.get("properties") or {}) if isinstance(error.schema, dict) else {})
    unknown = [key for key in error.instance if key not in known]
    return [Problem(file, _json_path([*error.absolute_path, key]), _unknown_key(key, known)) for key in unknown]


def _unknown_key(key: str, known: list[str]) -> str:
    """Name the unknown key and the known one it most resembles.

    Example:
        >>> _unknown_key("protectedPath", ["preset", "protectedPaths"])
        "unknown key 'protectedPath' (did you mean 'protectedPaths'?)"
    """
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
    return f"unknown key {key!r} ({hint})"


def _most_specific(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For "not valid under any of the given schemas" (optional fields, strategy types), the error that explains it."""
    while error.context:
        chosen = _by_discriminator(error)
        if chosen is not None:
            return chosen
        # The deepest error is the branch that almost matched (a list with one bad
        # item beats "is not of type 'null'").
        error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return error


def _by_discriminator(error: jsonschema.ValidationError) -> jsonschema.ValidationError | None:
    """A tagged union (``{"type": "lint", ...}``): judge the entry by the branch its tag names.

    An unknown tag is itself the error, listing the known ones.
    """
    schema = error.schema if isinstance(error.schema, dict) else {}
    tag = schema.get("discriminator")
    if not tag or not isinstance(error.instance, dict):
        return None
    name, mapping = tag["propertyName"], tag["mapping"]
    value = error.instance.get(name)
    if not isinstance(value, str) or value not in mapping:
        return jsonschema.ValidationError(
            f"{value!r} is not one of {sorted(mapping)}", path=[*error.absolute_path, name])
    branch = next(i for i, option in enumerate(schema["oneOf"]) if option.get("$ref") == mapping[value])
    errors = [e for e in error.context or [] if e.relative_schema_path and e.relative_schema_path[0] == branch]
    return _most_specific(max(errors, key=lambda e: len(e.absolute_path))) if errors else None


_VAGUE = re.compile(
    r"\b(looks? (good|nice|fine|great)|works? (well|fine|correctly)|clean code|"
    r"user[- ]friendly|intuitive|as expected|properly|nicely|beautiful)\b",
    re.IGNORECASE,
)
_FUNCTIONAL = {"unit-test", "api-check", "playwright", "custom", "manual"}


def contract_rule_problems(data: dict[str, Any], file: str,
                           known_contracts: set[str] | None = None) -> list[Problem]:
    """The seed's rules beyond the schema: id formats, criteria mix, vague wording.

    ``known_contracts`` (ids of the sibling contracts) enables the ``dependsOn`` check.
    """
    problems: list[Problem] = []
    spec, number = data.get("specId"), data.get("sprintNumber")
    if isinstance(spec, str) and isinstance(number, int):
        want = f"sprint-{spec}-{number}"
        if data.get("contractId") != want:
            problems.append(Problem(file, "contractId", f"must be {want!r} (sprint-<specId>-<sprintNumber>)"))
    criteria = data.get("successCriteria") or []
    seen: set[str] = set()
    methods: set[str] = set()
    for index, criterion in enumerate(criteria):
        if not isinstance(criterion, dict):
            continue
        cid, where = criterion.get("criterionId"), f"successCriteria/{index}"
        if isinstance(number, int) and isinstance(cid, str) and not re.fullmatch(rf"sc-{number}-[1-9]\d*", cid):
            problems.append(Problem(file, f"{where}/criterionId", f"{cid!r} must be sc-{number}-<n> (1-indexed)"))
        if cid in seen:
            problems.append(Problem(file, f"{where}/criterionId", f"duplicate criterion id {cid!r}"))
        seen.add(str(cid))
        method = str(criterion.get("verificationMethod"))
        methods.add(method)
        if method == "custom" and not criterion.get("customCommand"):
            problems.append(Problem(file, f"{where}/customCommand", "a custom criterion needs a customCommand"))
        match = _VAGUE.search(str(criterion.get("description", "")))
        if match:
            problems.append(Problem(file, f"{where}/description",
                                    f"vague criterion ({match.group(0)!r}): state an observable, checkable outcome"))
    if criteria and "build" not in methods:
        problems.append(Problem(file, "successCriteria", "needs at least one build criterion"))
    if criteria and not methods & _FUNCTIONAL:
        problems.append(Problem(file, "successCriteria", "needs at least one functional criterion"))
    deps = data.get("dependsOn") or []
    if data.get("contractId") in deps:
        problems.append(Problem(file, "dependsOn", "a contract cannot depend on itself"))
    if known_contracts is not None:
        for index, dep in enumerate(deps):
            if dep not in known_contracts:
                problems.append(Problem(file, f"dependsOn/{index}", f"unknown contract {dep!r}"))
    return problems


def model_problems(data: Any, kind: str, file: str) -> list[Problem]:
    """What the model's own validators refuse in a schema-valid document (an impossible date, a
    branch pattern's unknown placeholder): the checks a JSON Schema cannot state, located the same way."""
    try:
        KINDS[kind].model_validate(data)
    except ValidationError as exc:
        return [Problem(file, _json_path(_in_data(data, error["loc"])), error["msg"].removeprefix("Value error, "))
                for error in exc.errors()]
    return []


def _in_data(data: Any, loc: tuple[Any, ...]) -> list[Any]:
    """A pydantic error location as a JSON path of ``data``: without the union tags pydantic adds
    (``strategies/0/custom/config`` is ``strategies/0/config``)."""
    path: list[Any] = []
    here = data
    for index, part in enumerate(loc):
        if isinstance(here, list) and isinstance(part, int) and part < len(here) or \
                isinstance(here, dict) and part in here:
            path.append(part)
            here = here[part]
        elif isinstance(here, dict) and not (index + 1 < len(loc) and loc[index + 1] in here):
            # a missing key, the error is about it (a key the next part is in: a union's tag)
            path.append(part)
            here = None
    return path


def duplicate_id_problems(documents: dict[str, Any]) -> list[Problem]:
    """Contracts (by file) that share a contractId: one problem per later file, naming the first.

    Example:
        >>> duplicate_id_problems({"a.json": {"contractId": "x"}, "b.json": {"contractId": "x"}})
        [Problem(file='b.json', path='contractId', message="'x' is also the id of a.json")]
    """
    first: dict[str, str] = {}
    problems = []
    for file, data in documents.items():
        cid = data.get("contractId") if isinstance(data, dict) else None
        if not isinstance(cid, str):
            continue
        if cid in first:
            problems.append(Problem(file, "contractId", f"{cid!r} is also the id of {first[cid]}"))
        first.setdefault(cid, file)
    return problems


def schema_and_model_problems(data: Any, kind: str, file: str) -> list[Problem]:
    """The schema's problems, and the model's where the schema found none (at that path or around it):
    an impossible date is reported beside a wrong type elsewhere, never twice for one value."""
    problems = schema_problems(data, kind, file)
    if any(p.path in (None, "", "$") for p in problems) or not isinstance(data, dict):
        return problems  # unreadable as a whole: the model would only say it again
    taken = [p.path or "" for p in problems]
    return problems + [p for p in model_problems(data, kind, file)
                       if not any(_related(p.path or "", path) for path in taken)]


def _related(one: str, other: str) -> bool:
    return one == other or one.startswith(other + "/") or other.startswith(one + "/")


def validate_data(data: Any, kind: str, file: str,
                  known_contracts: set[str] | None = None) -> list[Problem]:
    """Every problem of a document at once, in document order: its schema's, its model's (for a
    schema-valid one) and, for a contract, the seed's rules."""
    problems = schema_and_model_problems(data, kind, file)
    if kind == "contract" and isinstance(data, dict):
        problems += [p for p in contract_rule_problems(data, file, known_contracts) if p not in problems]
    return in_document_order(problems, data)


def in_document_order(problems: list[Problem], data: Any) -> list[Problem]:
    """``problems`` ordered as what they name appears in ``data`` (a path it does not hold comes after
    its closest parent), so a file's problems read top to bottom.

    Example:
        >>> found = [Problem("c", "b", "2"), Problem("c", "a/1", "1"), Problem("c", None, "0")]
        >>> [p.message for p in in_document_order(found, {"a": [0, 1], "b": 2})]
        ['0', '1', '2']
    """
    order: dict[str, int] = {}
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:  # depth first, in key order
        where, item = stack.pop()
        order[where] = len(order)
        children = list(item.items()) if isinstance(item, dict) else list(enumerate(item)) \
            if isinstance(item, list) else []
        stack.extend((f"{where}/{key}" if where else str(key), child) for key, child in reversed(children))

    def position(problem: Problem) -> tuple[int, str]:
        where = problem.path or ""
        while where and where not in order:
            where = where.rpartition("/")[0]
        return (-1 if problem.path is None else order.get(where, 0), problem.path or "")
    return sorted(problems, key=position)


def load_document(path: Path | str, model: type[M], *, rules: bool = False) -> M:
    """Parse, validate and load one document; raises ``DocumentError`` naming every problem.

    Example:
        >>> path = "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
        >>> load_document(path, SprintContract).contract_id
        'sprint-spec-20260115-todo-api-1'
    """
    path = Path(path)
    kind = next(k for k, m in KINDS.items() if m is model)
    data = parse_json_file(path)
    problems = validate_data(data, kind, str(path)) if rules else schema_and_model_problems(data, kind, str(path))
    if problems:
        raise DocumentError(problems)
    return model.model_validate(data)
