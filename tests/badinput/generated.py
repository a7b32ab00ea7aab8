"""Malformed documents generated from the JSON Schemas: the corpus nobody had to think of.

Each strategy takes a valid document (the bundled examples' contract, an EvalResult, a plan spec,
the python-api example's config) and breaks it in one way the schema or the document reader
must refuse, at a place Hypothesis picks: a value of a type the schema does not allow there, a
number past the schema's bound, a lone surrogate, a NUL or a control character in text, an integer
past int64, infinity, a duplicate key, nesting past the reader's limit. A mutation is only drawn
where the schema says it is wrong, so every generated case must be refused.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from sprintflow.schemas.validation import json_schema

from .corpus import CONFIG, CONTRACT, EVAL_RESULT, PLAN_SPEC

BASES: dict[str, Any] = {"contract": CONTRACT, "eval-result": EVAL_RESULT, "plan-spec": PLAN_SPEC,
                         "config": tomllib.loads(CONFIG)}

_SAMPLES: dict[str, Any] = {"string": "x", "integer": 7, "number": 1.5, "boolean": True, "null": None,
                            "array": [], "object": {}}


@dataclass(frozen=True)
class Mutant:
    """A broken document as the bytes of its file, and what its error must name."""

    data: bytes
    where: str


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    """The branches a value under ``schema`` may take ($ref followed, anyOf / oneOf / allOf flattened)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _resolve({**root["$defs"][name], **{k: v for k, v in schema.items() if k != "$ref"}}, root)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return [leaf for branch in schema[key] for leaf in _resolve(branch, root)]
    return [schema]


def _at(kind: str, path: list[Any]) -> list[dict[str, Any]]:
    """The schema branches that may hold the value at ``path`` of a document of ``kind``."""
    root = json_schema(kind)
    branches = _resolve(root, root)
    for part in path:
        found: list[dict[str, Any]] = []
        for branch in branches:
            if isinstance(part, int) and "items" in branch:
                found += _resolve(branch["items"], root)
            elif isinstance(part, str) and part in branch.get("properties", {}):
                found += _resolve(branch["properties"][part], root)
        branches = found
    return branches


def _paths(document: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every JSON path of ``document`` (the root last)."""
    children = document.items() if isinstance(document, dict) else enumerate(document) \
        if isinstance(document, list) else []
    return [p for key, child in children for p in _paths(child, (*path, key))] + [path]


def _get(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(document))
    if not path:
        return value
    _get(copy, path[:-1])[path[-1]] = value
    return copy


def _where(path: tuple[Any, ...]) -> str:
    return "/".join(str(p) for p in path) or "$"


def _wrong_types(kind: str, path: tuple[Any, ...]) -> list[Any]:
    """Values of JSON types no branch of the schema allows at ``path`` (none when one allows anything)."""
    branches = _at(kind, list(path))
    if not branches or any("type" not in b for b in branches):
        return []
    allowed = {t for b in branches for t in ([b["type"]] if isinstance(b["type"], str) else b["type"])}
    if "number" in allowed:
        allowed.add("integer")
    return [sample for name, sample in _SAMPLES.items() if name not in allowed
            and not (name == "integer" and "number" in allowed)]


def _out_of_bounds(kind: str, path: tuple[Any, ...]) -> list[Any]:
    """Numbers just past a bound the schema sets at ``path``, when every branch sets one."""
    values = []
    for branch in _at(kind, list(path)):
        if branch.get("type") not in ("integer", "number"):
            return []
        if "maximum" in branch:
            values.append(branch["maximum"] * 10 + 1)
        elif "exclusiveMaximum" in branch:
            values.append(branch["exclusiveMaximum"] * 10 + 1)
        else:
            return []
    return values


_BAD_TEXT = st.sampled_from(["\ud800", "\udfff", "\x00", "a\x00b", "\ud83d"])
_HUGE = st.sampled_from([2**63, -(2**63) - 1, 2**70, 10**30, math.inf, -math.inf, math.nan])


@st.composite
def mutants(draw: st.DrawFn, kind: str) -> Mutant:
    """One way to break the valid document of ``kind`` that the schema or the reader refuses."""
    base = BASES[kind]
    paths = _paths(base)
    path = draw(st.sampled_from(paths))
    value = _get(base, path)
    options = ["huge", "nesting"]
    if isinstance(value, str):
        options.append("text")
    if isinstance(value, dict) and value:
        options.append("duplicate")
    if path and _wrong_types(kind, path):
        options.append("type")
    if path and _out_of_bounds(kind, path):
        options.append("bound")
    how = draw(st.sampled_from(options))
    if how == "text":
        bad = draw(_BAD_TEXT)
        cut = draw(st.integers(0, len(value)))
        return Mutant(_dumps(_replaced(base, path, value[:cut] + bad + value[cut:])), _where(path))
    if how == "duplicate":
        key = draw(st.sampled_from(sorted(value)))
        return Mutant(_duplicated(base, path, key), "duplicate key")
    if how == "nesting":
        depth = draw(st.integers(70, 400))
        nested: Any = draw(st.sampled_from([[], {}]))
        for _ in range(depth):
            nested = [nested] if draw(st.booleans()) else {"a": nested}
        return Mutant(_dumps(_replaced(base, path, nested)), "nested more than")
    if how == "type":
        return Mutant(_dumps(_replaced(base, path, draw(st.sampled_from(_wrong_types(kind, path))))), _where(path))
    if how == "bound":
        return Mutant(_dumps(_replaced(base, path, draw(st.sampled_from(_out_of_bounds(kind, path))))), _where(path))
    return Mutant(_dumps(_replaced(base, path, draw(_HUGE))), _where(path) if path else "$")


def _dumps(document: Any) -> bytes:
    # ensure_ascii spells a lone surrogate as \ud800, as an agent's JSON would; Python writes inf as Infinity,
    # which JSON does not have: spelled 1e999 instead (the same number to a JSON reader).
    return json.dumps(document, allow_nan=True).replace("-Infinity", "-1e999").replace("Infinity", "1e999") \
        .replace("NaN", "1e999").encode()


def _duplicated(document: Any, path: tuple[Any, ...], key: str) -> bytes:
    """``document`` with the object at ``path`` holding ``key`` twice (the copy first: the original wins)."""
    marker = "\u2603duplicate\u2603"
    marked = _replaced(document, path, {marker: None, **_get(document, path)})
    text = json.dumps(marked, indent=1)
    return text.replace(json.dumps(marker) + ": null", json.dumps(key) + ": " + json.dumps(_get(document, path)[key]),
                        1).encode()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # TOML's basic strings read JSON's escapes the same
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None) + "}"


def toml_document(document: dict[str, Any]) -> bytes:
    """``document`` as TOML, one top-level key a line (inline tables below), ``None`` left out."""
    return "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in document.items() if v is not None).encode()


@st.composite
def config_mutants(draw: st.DrawFn) -> Mutant:
    """The python-api example's config, broken as :func:`mutants` breaks a JSON document, written as TOML.

    TOML has no null (a key set to one is left out) and cannot spell a lone surrogate; what it
    cannot spell is drawn again as a NUL, which it can.
    """
    base = BASES["config"]
    path = draw(st.sampled_from([p for p in _paths(base) if p]))
    value = _get(base, path)
    options = ["huge", "nesting"]
    if isinstance(value, str):
        options.append("text")
    wrong = [v for v in _wrong_types("config", path) if v is not None]
    if wrong:
        options.append("type")
    if _out_of_bounds("config", path):
        options.append("bound")
    how = draw(st.sampled_from(options))
    if how == "text":
        bad = draw(st.sampled_from(["\x00", "a\x00", "\x00\x00"]))
        return Mutant(toml_document(_replaced(base, path, value + bad)), _where(path))
    if how == "nesting":
        nested: Any = []
        for _ in range(draw(st.integers(70, 300))):
            nested = [nested]
        return Mutant(toml_document(_replaced(base, path, nested)), "nested more than")
    if how == "type":
        return Mutant(toml_document(_replaced(base, path, draw(st.sampled_from(wrong)))), _where(path))
    if how == "bound":
        return Mutant(toml_document(_replaced(base, path, draw(st.sampled_from(_out_of_bounds("config", path))))),
                      _where(path))
    huge = draw(st.sampled_from([2**63, 2**70, -(2**64), math.inf, math.nan]))
    return Mutant(toml_document(_replaced(base, path, huge)), _where(path))
