"""passCondition: JavaScript's semantics on JSON outputs, refusals before anything runs, bounds."""

import math

import pytest

from sprintflow.errors import ConfigError
from sprintflow.evaluate.expressions import ConditionUndecidable, evaluate_condition, parse_condition


@pytest.mark.parametrize(("expression", "output", "expected"), [
    ("output.passed === true", {"passed": True}, True),
    ("output.passed === true", {"passed": False}, False),
    ("output.passed === true", {"passed": 1}, False),  # strict: 1 is not true
    ("output.sizeKb <= 500 && output.files.length > 0", {"sizeKb": 120.5, "files": ["a"]}, True),
    ("!output.failed || output.count === 0", {"failed": True, "count": 1}, False),
    ("output.name !== 'a && b'", {"name": "a && b"}, False),
    ("output.missing > 3", {}, False),
    ("output.missing === undefined", {}, True),
    ("output.missing === null", {}, False),
    ("output.nothing === null", {"nothing": None}, True),
    ("output['weird key'] === 1", {"weird key": 1}, True),
    ("output.items.length === 2", {"items": [1, 2]}, True),
    ("output.items[1] === 2", {"items": [1, 2]}, True),
    ("output.items[5] === undefined", {"items": [1, 2]}, True),
    ("output.a.b.c === undefined", {}, True),  # a field of a missing value: undefined, as ?. gives
    # JavaScript's precedence and truthiness, where Python's differ
    ("!output.n === 0", {"n": 5}, False),
    ("!output.n === false", {"n": 5}, True),
    ("!output.list", {"list": []}, False),  # [] is truthy in JavaScript
    ("!output.text", {"text": ""}, True),
    ("output.count === 2", {"count": 2.0}, True),
    ("1 + 2 * 3 === 7", None, True),
    ("(1 + 2) * 3 === 9", None, True),
    ("7 % -3 === 1 && -7 % 3 === -1", None, True),
    ("1 / 0 === Infinity && -1 / 0 === -Infinity", None, True),
    ("0 / 0 !== 0 / 0", None, True),  # NaN is not equal to itself
    ("output.v + 1 === 'a1'", {"v": "a"}, True),
    ("'b' > 'a' && '10' < '9'", None, True),  # strings compare as strings
    ("'10' > 9", None, True),  # a string and a number compare as numbers
    ("null >= 0 && !(undefined >= 0)", None, True),
    ("output.s * 3", {"s": "x"}, False),  # NaN
    ("output.big > 1e300", {"big": 10 ** 400}, True),
    ("'é😀'.length === 3", None, True),  # UTF-16 units
    ("output === output", [1], True),  # an object equals itself only
    ("output.a === output.b", {"a": [1], "b": [1]}, False),
    ("output.flag && output.count", {"flag": True, "count": 0}, False),
    ("'\\u0041' === 'A'", None, True),
])
def test_javascript_semantics(expression, output, expected):
    assert evaluate_condition(expression, output) is expected


@pytest.mark.parametrize(("expression", "column", "message"), [
    ("output.passed == true", 15, "loose == coerces types; write ==="),
    ("output.a != 1", 10, "loose != coerces types; write !=="),
    ("output.passed === true and output.count >= 1", 24, "'and' is Python; write &&"),
    ("not output.failed", 1, "'not' is Python; write !"),
    ("len(output.items) === 2", 1, "'len' is Python; write x.length"),
    ("output.passed === True", 19, "'True' is Python; write true"),
    ("__import__('os').system('id')", 1, "unknown name '__import__'"),
    ("output.toString()", 16, "calls are not allowed"),
    ("output.a = 1", 10, "assignment is not allowed"),
    ("[x for x in output]", 1, "unexpected '['"),
    ("output.a ===", 13, "the condition ends where a value is expected"),
    ("output.", 8, "a field name must follow '.'"),
    ("(output.a", 10, "expected ')'"),
    ("output.a # note", 10, "unexpected character '#'"),
    ("(" * 30 + "1" + ")" * 30, 25, "nested deeper than 24 levels"),
    ("!" * 100 + "output", 25, "more than 24 unary operators in a row"),
])
def test_refused_when_read_with_the_column(expression, column, message):
    with pytest.raises(ConfigError) as raised:
        parse_condition(expression)
    assert f"column {column}: {message}" in str(raised.value)


def test_length_is_bounded_before_parsing():
    with pytest.raises(ConfigError, match="5006 characters long; at most 2000"):
        parse_condition("!" * 5000 + "output")


def test_no_condition_can_build_a_huge_string():
    # 's' * 300000000 is NaN in JavaScript, not a 300 MB string
    assert evaluate_condition("output.s * 300000000 > 0", {"s": "x"}) is False
    doubling = "output.s + output.s"
    for _ in range(6):
        doubling = f"({doubling}) + ({doubling})"
    with pytest.raises(ConditionUndecidable, match="exceeds"):
        parse_condition(doubling).holds({"s": "x" * 100_000})


@pytest.mark.parametrize(("expression", "output"), [
    ("output.list > 1", {"list": [2]}),
    ("output.obj + 1 === 2", {"obj": {}}),
    ("-output.list === 0", {"list": []}),
])
def test_objects_in_arithmetic_cannot_be_judged(expression, output):
    with pytest.raises(ConditionUndecidable, match="an (array|object) is not a (number|string)"):
        parse_condition(expression).holds(output)


def test_numbers_are_doubles():
    assert parse_condition("output.n").holds({"n": math.nan}) is False
    assert evaluate_condition("output.n === 9007199254740993", {"n": 9007199254740992}) is True


def test_long_chains_evaluate_without_deep_recursion():
    assert evaluate_condition(" + ".join(["1"] * 400) + " === 400", None) is True
    assert evaluate_condition("output" + ".a" * 990 + " === undefined", {}) is True
