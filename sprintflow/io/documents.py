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

__all__ = ["MAX_DOCUMENT_BYTES", "loads_json", "loads_toml", "non_finite_paths", "read_json", "read_text",
           "read_toml", "shallow"]

MAX_DOCUMENT_BYTES = 16 << 20
"""No contract, config or case file is this long; a longer one is refused before it is read."""
MAX_DEPTH = 64
"""No document nests deeper; checking and validating one that did would recurse without bound."""

_LONG_NUMBER = re.compile(r"\d{4301,}")


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
        return shallow(json.loads(text, parse_constant=_refuse_constant))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # a constant we refused, or a number Python will not convert
        raise ValueError(_located(text, str(exc))) from None


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
    except ValueError as exc:
        raise DocumentError([Problem(str(path), None, str(exc))]) from None


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; a DocumentError naming the file and the line where it is wrong."""
    text = read_text(path)
    try:
        return loads_toml(text)
    except ValueError as exc:
        raise DocumentError([Problem(str(path), None, str(exc))]) from None


def non_finite_paths(value: Any, path: str = "") -> list[str]:
    """JSON paths of the infinite or NaN numbers in ``value`` (TOML's ``inf``, JSON's ``1e999``).

    Example:
        >>> non_finite_paths({"a": [1.0, float("inf")], "b": {"c": float("nan")}})
        ['a/1', 'b/c']
    """
    if isinstance(value, float) and not math.isfinite(value):
        return [path]
    children: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    return [found for key, item in children for found in non_finite_paths(item, f"{path}/{key}" if path else str(key))]
