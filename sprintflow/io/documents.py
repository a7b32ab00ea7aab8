"""Reading JSON and TOML that anyone may have written: every way it can be wrong is a located message.

Documents, configs and case files come from people and from agents, so they can be anything:
not UTF-8, 100 MB, nested 100,000 levels deep, a 5,000-digit number, ``NaN`` (which Python's
``json`` accepts and JSON does not). Each of these is a :class:`~sprintflow.errors.DocumentError`
naming the file and, where it has one, the line and column; never a traceback.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from sprintflow.errors import DocumentError, Problem

from .confine import NotRegular, open_regular

__all__ = ["MAX_DOCUMENT_BYTES", "MAX_INTEGER", "LocatedValueError", "loads_json", "loads_toml",
           "read_json", "read_text", "read_toml", "shallow", "unrepresentable"]

MAX_DOCUMENT_BYTES = 16 << 20
"""No contract, config or case file is this long; a longer one is refused before it is read."""
MAX_DEPTH = 64
"""No document nests deeper; checking and validating one that did would recurse without bound."""

MAX_INTEGER = 2**63 - 1
"""No count, size or id number in a document is larger (in magnitude); a larger one overflows what
stores it next (a Parquet column, a C long, a timeout)."""

_LONG_NUMBER = re.compile(r"\d{4301,}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class LocatedValueError(ValueError):
    """A ValueError that knows the JSON path of what is wrong (``""``: none)."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path


class _DuplicateKey(ValueError):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # The last of two equal keys would win silently ("status" twice: the contract is skipped as done).
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey(next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i])))
    return result


def _line_column(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line} column {offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def read_text(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """The UTF-8 text of ``path`` (a BOM is allowed), or a DocumentError saying why it cannot be read.

    Example:
        >>> import tempfile
        >>> bad = Path(tempfile.mkdtemp()) / "c.json"
        >>> _ = bad.write_bytes(b'{"title": "caf\\xe9"}')
        >>> read_text(bad)
        Traceback (most recent call last):
        ...
        sprintflow.errors.DocumentError: .../c.json: not UTF-8: byte 0xe9 at line 1 column 15
    """
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise DocumentError([Problem(str(path), None, f"{size:,} bytes, larger than the {limit:,} "
                                                              "a document may be")])
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise DocumentError([Problem(str(path), None, "file not found")]) from None
    except NotRegular as exc:
        raise DocumentError([Problem(str(path), None, str(exc.strerror).split(": ", 1)[-1])]) from None
    except OSError as exc:
        raise DocumentError([Problem(str(path), None, f"cannot read: {exc.strerror or exc}")]) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        prefix = data[:exc.start].decode("utf-8", errors="replace")
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise DocumentError([Problem(str(path), None, f"not UTF-8{hint}: byte 0x{data[exc.start]:02x} at "
                                                      f"{_line_column(prefix, len(prefix))}")]) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads_json(text: str) -> Any:
    """Parse JSON strictly; a ValueError whose message says what is wrong and where.

    Example:
        >>> loads_json('{"a": NaN}')
        Traceback (most recent call last):
        ...
        ValueError: NaN is not valid JSON (line 1 column 7)
    """
    try:
        return shallow(json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates))
    except _DuplicateKey:
        raise _duplicate_located(text) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # a constant we refused, or a number Python will not convert
        raise ValueError(_located(text, str(exc))) from None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')


def _duplicate_located(text: str) -> LocatedValueError:
    """Where the first duplicate key of valid JSON ``text`` is: its JSON path and both lines.

    Example:
        >>> error = _duplicate_located('{"a": {"s": 1,' + chr(10) + '"s": 2}}')
        >>> error.path, str(error)
        ('a/s', "duplicate key 's' (line 1, again at line 2)")
    """
    # (keys seen -> line, or a list's next index, the key or index the frame is at)
    stack: list[tuple[dict[str, int] | None, list[Any]]] = []
    tokens = list(_TOKEN.finditer(text))
    for index, token in enumerate(tokens):
        kind = token.group()
        if kind in "{[":
            stack.append(({} if kind == "{" else None, [0 if kind == "[" else None]))
        elif kind in "}]":
            stack.pop()
        elif kind == "," and stack and stack[-1][0] is None:
            stack[-1][1][0] += 1
        elif kind.startswith('"') and index + 1 < len(tokens) and tokens[index + 1].group() == ":" and stack:
            seen, at = stack[-1]
            if seen is None:  # valid JSON has no key in a list
                continue
            key, line = json.loads(kind), text.count("\n", 0, token.start()) + 1
            at[0] = key
            if key in seen:
                path = "/".join(str(frame[1][0]) for frame in stack)
                return LocatedValueError(f"duplicate key {key!r} (line {seen[key]}, again at line {line})", path)
            seen[key] = line
    return LocatedValueError("duplicate key")


def shallow(value: Any) -> Any:
    """``value`` when it nests at most :data:`MAX_DEPTH` levels (walked without recursion), else a
    RecursionError: what reads it next (schema checks, walks) would recurse that deep.

    Example:
        >>> shallow({"a": [1, 2]})
        {'a': [1, 2]}
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise RecursionError(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return value


def _located(text: str, message: str) -> str:
    if "is not valid JSON" in message:
        name = message.split()[0]
        offset = text.find(name)
        return f"{message} ({_line_column(text, offset)})" if offset >= 0 else message
    long = _LONG_NUMBER.search(text)
    where = f" at {_line_column(text, long.start())}" if long else ""
    return f"a number with more than 4300 digits{where}"


def loads_toml(text: str) -> dict[str, Any]:
    """Parse TOML; a ValueError whose message says what is wrong and on which line.

    Example:
        >>> loads_toml("preset = ")
        Traceback (most recent call last):
        ...
        ValueError: invalid TOML at line 1: Invalid value
    """
    try:
        return shallow(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
        if match:
            raise ValueError(f"invalid TOML at line {match[1]}: {message[:match.start()]}") from None
        if message.endswith("(at end of document)"):
            last = text.rstrip("\n").count("\n") + 1
            raise ValueError(f"invalid TOML at line {last}: {message.removesuffix(' (at end of document)')}") from None
        raise ValueError(f"invalid TOML: {message}") from None
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise ValueError(_located(text, str(exc))) from None


def read_json(path: Path) -> Any:
    """The JSON document in ``path``; a DocumentError naming the file and where it is wrong."""
    text = read_text(path)
    try:
        return loads_json(text)
    except LocatedValueError as exc:
        raise DocumentError([Problem(str(path), exc.path or None, str(exc))]) from None
    except ValueError as exc:
        raise DocumentError([Problem(str(path), None, str(exc))]) from None


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; a DocumentError naming the file and the line where it is wrong."""
    text = read_text(path)
    try:
        return loads_toml(text)
    except ValueError as exc:
        raise DocumentError([Problem(str(path), None, str(exc))]) from None


def unrepresentable(value: Any, path: str = "") -> list[tuple[str, str]]:
    """(JSON path, why) of every value no document may hold, though JSON or TOML can spell it:
    infinity and NaN (TOML's ``inf``, JSON's ``1e999``), an integer beyond :data:`MAX_INTEGER`, and
    text that is not text: a lone surrogate (``"\\ud800"``, which no UTF-8 file can hold, so it
    could never be written back) or a NUL (which no command line, path or C string can carry).

    Walked without recursion (a document is at most :data:`MAX_DEPTH` deep anyway).

    Example:
        >>> unrepresentable({"a": [1.0, float("inf")], "b": {"c": "x\\x00"}, "n": 2**70})
        [('a/1', 'infinity and NaN are not numbers a document may hold'), \
('b/c', 'a NUL character is not text a document may hold'), \
('n', 'an integer larger than 9223372036854775807 in magnitude')]
    """
    found: list[tuple[str, str]] = []
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            found.append((where, "infinity and NaN are not numbers a document may hold"))
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_INTEGER:
            found.append((where, f"an integer larger than {MAX_INTEGER} in magnitude"))
        elif isinstance(item, str):
            found += [(where, why) for why in _text_problems(item)]
        elif isinstance(item, dict):
            for key, child in item.items():
                key_path = f"{where}/{key}" if where else str(key)
                found += [(key_path, f"its key: {why}") for why in _text_problems(str(key))]
                stack.append((key_path, child))
        elif isinstance(item, list):
            stack.extend((f"{where}/{i}" if where else str(i), child) for i, child in enumerate(item))
    return sorted(found)


def _text_problems(text: str) -> list[str]:
    problems = []
    if (surrogate := _SURROGATE.search(text)) is not None:
        problems.append(f"a lone surrogate (\\u{ord(surrogate.group()):04x}) is not text a document may hold")
    if "\0" in text:
        problems.append("a NUL character is not text a document may hold")
    return problems
