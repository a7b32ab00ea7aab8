"""``passCondition``: a small JavaScript subset, checked when the config is read, run with bounds.

A condition is a JavaScript expression over ``output`` (the command's parsed JSON), as the
seed writes it: ``output.passed === true && output.count >= 1``. The grammar, by rising
precedence, is JavaScript's::

    condition  := or
    or         := and ( "||" and )*
    and        := equality ( "&&" equality )*
    equality   := relation ( ("===" | "!==") relation )*
    relation   := sum ( ("<" | "<=" | ">" | ">=") sum )*
    sum        := product ( ("+" | "-") product )*
    product    := unary ( ("*" | "/" | "%") unary )*
    unary      := ("!" | "-" | "+") unary | member
    member     := primary ( "." name | "[" condition "]" )*
    primary    := number | string | true | false | null | undefined | NaN | Infinity
                | output | "(" condition ")"

Values follow JavaScript: numbers are doubles, ``!``, ``&&`` and ``||`` use JavaScript's
truthiness (``[]`` and ``{}`` are true, ``0``, ``""``, ``NaN`` false), ``===`` is strict
equality, ``+`` joins strings, ``.length`` counts a string's UTF-16 units or an array's items.
So ``!output.n === 0`` is ``(!output.n) === 0``: false, as in a browser.

Refused when the config is read, before any command runs, with the column:
loose ``==`` / ``!=`` (they coerce types; write ``===`` / ``!==``), Python spellings
(``and``, ``or``, ``not``, ``len(…)``, ``True``), calls, assignments, any other name, more than
2,000 characters or 24 levels of brackets. Where JavaScript would coerce an object or an array
into a number or a string, or throw, the condition instead cannot be judged, which fails its
strategy with the reason. One departure, for convenience: a field of a missing value is
``undefined`` (as ``output.a?.b`` would be), not a TypeError. Strings that a condition builds are
capped at 1 MiB, so no condition can exhaust memory or time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from sprintflow.errors import ConditionUndecidable, ConfigError

__all__ = ["Condition", "ConditionUndecidable", "evaluate_condition", "parse_condition"]

MAX_LENGTH = 2000
MAX_DEPTH = 24
MAX_STRING = 1 << 20


class _Undefined:
    """JavaScript's ``undefined``: a missing field; distinct from JSON ``null`` (None)."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<op>===|!==|==|!=|<=|>=|&&|\|\||[-+*/%<>!()\[\].=,?:&|^~])
""", re.VERBOSE)

_PYTHON_SPELLINGS = {"and": "&&", "or": "||", "not": "!", "True": "true", "False": "false",
                     "None": "null", "len": "x.length", "is": "==="}
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "undefined": UNDEFINED,
                             "NaN": math.nan, "Infinity": math.inf}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    column: int


@dataclass(frozen=True)
class Condition:
    """A parsed condition; :meth:`holds` judges one output."""

    source: str
    tree: tuple[Any, ...]

    def holds(self, output: Any) -> bool:
        """Whether the condition is true for ``output``.

        Raises:
            ConditionUndecidable: the output's values cannot be compared as the condition asks.
        """
        return _truthy(_evaluate(self.tree, output))


def parse_condition(source: str) -> Condition:
    """Parse ``source`` by the grammar above; a ConfigError names the column of the first problem.

    Example:
        >>> parse_condition("output.count >= 1").holds({"count": 3})
        True
        >>> parse_condition("output.passed == true")
        Traceback (most recent call last):
        ...
        sprintflow.errors.ConfigError: passCondition 'output.passed == true', column 15: loose == coerces ...
    """
    if len(source) > MAX_LENGTH:
        raise ConfigError(f"passCondition is {len(source)} characters long; at most {MAX_LENGTH}")
    parser = _Parser(source, _tokens(source))
    tree = parser.condition()
    parser.expect_end()
    return Condition(source, tree)


def evaluate_condition(source: str, output: Any) -> bool:
    """Parse and judge in one step.

    Example:
        >>> evaluate_condition("output.passed === true && output.count >= 1",
        ...                    {"passed": True, "count": 3})
        True
        >>> evaluate_condition("!output.n === 0", {"n": 5})
        False
    """
    return parse_condition(source).holds(output)


def _problem(source: str, column: int, message: str) -> ConfigError:
    shown = source if len(source) <= 80 else source[:77] + "..."
    return ConfigError(f"passCondition {shown!r}, column {column}: {message}")


def _tokens(source: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise _problem(source, position + 1, f"unexpected character {source[position]!r}")
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(_Token(kind, match.group(), position + 1))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent with JavaScript's precedence; the depth bound keeps recursion finite."""

    def __init__(self, source: str, tokens: list[_Token]):
        self.source, self.tokens, self.index, self.depth = source, tokens, 0, 0

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def fail(self, message: str, token: _Token | None = None) -> ConfigError:
        token = token or self.peek()
        column = token.column if token else len(self.source) + 1
        return _problem(self.source, column, message)

    def take(self, *operators: str) -> _Token | None:
        token = self.peek()
        if token is None or token.kind != "op":
            return None
        if token.text in ("==", "!="):
            raise self.fail(f"loose {token.text} coerces types; write {token.text}=", token)
        if token.text in operators:
            self.index += 1
            return token
        return None

    def expect_end(self) -> None:
        token = self.peek()
        if token is not None:
            raise self.fail(self._unexpected(token), token)

    def _unexpected(self, token: _Token) -> str:
        if token.kind == "name" and token.text in _PYTHON_SPELLINGS:
            return f"{token.text!r} is Python; write {_PYTHON_SPELLINGS[token.text]}"
        if token.text == "(":
            return "calls are not allowed"
        if token.text == "=":
            return "assignment is not allowed; compare with ==="
        return f"unexpected {token.text!r}"

    def _binary(self, operators: tuple[str, ...], operand: Any) -> tuple[Any, ...]:
        """``a op b op c`` as one flat node, so evaluating a long chain needs no deep recursion."""
        first, rest = operand(), []
        while (token := self.take(*operators)) is not None:
            rest.append((token.text, operand()))
        return ("chain", first, tuple(rest)) if rest else first

    def condition(self) -> tuple[Any, ...]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        tree = self._binary(("||",), self.conjunction)
        self.depth -= 1
        return tree

    def conjunction(self) -> tuple[Any, ...]:
        return self._binary(("&&",), self.equality)

    def equality(self) -> tuple[Any, ...]:
        return self._binary(("===", "!=="), self.relation)

    def relation(self) -> tuple[Any, ...]:
        return self._binary(("<", "<=", ">", ">="), self.sum)

    def sum(self) -> tuple[Any, ...]:
        return self._binary(("+", "-"), self.product)

    def product(self) -> tuple[Any, ...]:
        return self._binary(("*", "/", "%"), self.unary)

    def unary(self) -> tuple[Any, ...]:
        operators = []
        while (token := self.take("!", "-", "+")) is not None:
            operators.append(token.text)
            if len(operators) > MAX_DEPTH:
                raise self.fail(f"more than {MAX_DEPTH} unary operators in a row", token)
        tree = self.member()
        return ("unary", tuple(reversed(operators)), tree) if operators else tree

    def member(self) -> tuple[Any, ...]:
        tree, keys = self.primary(), []
        while True:
            if self.take("."):
                token = self.peek()
                if token is None or token.kind != "name":
                    raise self.fail("a field name must follow '.'")
                self.index += 1
                keys.append(("literal", token.text))
            elif self.take("["):
                keys.append(self.condition())
                if not self.take("]"):
                    raise self.fail("expected ']'")
            elif (token := self.peek()) is not None and token.text == "(":
                raise self.fail("calls are not allowed", token)
            else:
                return ("member", tree, tuple(keys)) if keys else tree

    def primary(self) -> tuple[Any, ...]:
        token = self.peek()
        if token is None:
            raise self.fail("the condition ends where a value is expected")
        self.index += 1
        if token.kind == "number":
            return ("literal", float(token.text))
        if token.kind == "string":
            return ("literal", _unquote(token.text))
        if token.kind == "name":
            if token.text == "output":
                return ("output",)
            if token.text in _LITERALS:
                return ("literal", _LITERALS[token.text])
            if token.text in _PYTHON_SPELLINGS:
                raise self.fail(self._unexpected(token), token)
            raise self.fail(f"unknown name {token.text!r}; fields are read as output.<field>", token)
        if token.text == "(":
            tree = self.condition()
            if not self.take(")"):
                raise self.fail("expected ')'")
            return tree
        raise self.fail(self._unexpected(token), token)


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)",
                  lambda m: chr(int(m[1][1:], 16)) if len(m[1]) == 5 else _ESCAPES.get(m[1], m[1]), body)


# --- evaluation: JavaScript's semantics over JSON values ---------------------------------

def _evaluate(tree: tuple[Any, ...], output: Any) -> Any:
    kind = tree[0]
    if kind == "literal":
        return tree[1]
    if kind == "output":
        return output
    if kind == "member":
        value = _evaluate(tree[1], output)
        for key in tree[2]:
            value = _member(value, _evaluate(key, output))
        return value
    if kind == "unary":
        value = _evaluate(tree[2], output)
        for operator in tree[1]:
            value = (not _truthy(value) if operator == "!"
                     else -_number(value) if operator == "-" else _number(value))
        return value
    return _chain(tree[1], tree[2], output)


def _chain(first: tuple[Any, ...], rest: tuple[tuple[str, tuple[Any, ...]], ...], output: Any) -> Any:
    """Operators of one precedence, left to right; ``&&`` and ``||`` short-circuit as in JavaScript."""
    value = _evaluate(first, output)
    for operator, operand in rest:
        if operator == "&&":
            if not _truthy(value):
                return value
            value = _evaluate(operand, output)
        elif operator == "||":
            if _truthy(value):
                return value
            value = _evaluate(operand, output)
        else:
            value = _binary(operator, value, _evaluate(operand, output))
    return value


def _truthy(value: Any) -> bool:
    if value is None or value is UNDEFINED:
        return False
    if isinstance(value, float) and math.isnan(value):
        return False
    if isinstance(value, (dict, list)):
        return True
    return bool(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: Any) -> float:
    """JavaScript's ToNumber for JSON values; objects and arrays cannot be judged."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if _is_number(value):
        try:
            return float(value)
        except OverflowError:  # a 400-digit integer: a double cannot hold it either
            return math.inf if value > 0 else -math.inf
    if value is None:
        return 0.0
    if value is UNDEFINED:
        return math.nan
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(text.replace("Infinity", "inf")) if re.fullmatch(
                r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?Infinity", text) else math.nan
        except OverflowError:
            return math.inf
    raise ConditionUndecidable(f"{_describe(value)} is not a number")


def _string(value: Any) -> str:
    """JavaScript's ToString for JSON values."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if _is_number(value):
        number = _number(value)
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return str(int(number)) if number.is_integer() and abs(number) < 1e21 else repr(number)
    raise ConditionUndecidable(f"{_describe(value)} is not a string")


def _describe(value: Any) -> str:
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else repr(value)


def _member(value: Any, key: Any) -> Any:
    if value is None or value is UNDEFINED:
        return UNDEFINED
    name = _string(key) if not isinstance(key, (dict, list)) else None
    if isinstance(value, dict):
        return value.get(name, UNDEFINED) if name is not None else UNDEFINED
    if isinstance(value, (list, str)):
        if name == "length":
            return float(len(value) if isinstance(value, list) else len(value.encode("utf-16-le")) // 2)
        if name is not None and re.fullmatch(r"0|[1-9]\d{0,9}", name) and int(name) < len(value):
            return value[int(name)]
    return UNDEFINED


def _strict_equal(left: Any, right: Any) -> bool:
    if _is_number(left) and _is_number(right):
        return _number(left) == _number(right)
    if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        return left is right  # objects are equal only to themselves
    return type(left) is type(right) and left == right


def _binary(operator: str, left: Any, right: Any) -> Any:
    if operator == "===":
        return _strict_equal(left, right)
    if operator == "!==":
        return not _strict_equal(left, right)
    if operator in ("<", "<=", ">", ">="):
        if isinstance(left, str) and isinstance(right, str):
            a: Any = left.encode("utf-16-be")
            b: Any = right.encode("utf-16-be")  # JavaScript orders strings by UTF-16 units
        else:
            a, b = _number(left), _number(right)
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[operator] if a == a and b == b else False
    if operator == "+" and (isinstance(left, str) or isinstance(right, str)):
        joined = _string(left) + _string(right)
        if len(joined) > MAX_STRING:
            raise ConditionUndecidable(f"a string built by the condition exceeds {MAX_STRING} characters")
        return joined
    return _arithmetic(operator, _number(left), _number(right))


def _arithmetic(operator: str, a: float, b: float) -> float:
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    if operator == "*":
        return a * b
    if operator == "/":
        if b == 0:
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
        return a / b
    if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    return a if math.isinf(b) else math.fmod(a, b)
