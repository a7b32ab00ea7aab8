import pytest

from sprintflow.errors import ConfigError
from sprintflow.evaluate.expressions import evaluate_condition


@pytest.mark.parametrize(("expression", "output", "expected"), [
    ("output.passed === true", {"passed": True}, True),
    ("output.passed === true", {"passed": False}, False),
    ("output.sizeKb <= 500 && output.files.length > 0", {"sizeKb": 120.5, "files": ["a"]}, True),
    ("!output.failed || output.count == 0", {"failed": True, "count": 1}, False),
    ("output.name !== 'a && b'", {"name": "a && b"}, False),
    ("output.missing > 3", {}, False),
    ("output['weird key'] == 1", {"weird key": 1}, True),
    ("len(output.items) == 2", {"items": [1, 2]}, True),
])
def test_conditions(expression, output, expected):
    assert evaluate_condition(expression, output) is expected


@pytest.mark.parametrize("expression", [
    "__import__('os').system('touch /tmp/pwned')",
    "(lambda: 1)()",
    "[x for x in output]",
    "open('/etc/passwd')",
    "output.__class__.__mro__",
])
def test_no_arbitrary_code(expression):
    try:
        result = evaluate_condition(expression, {"a": 1})
    except ConfigError:
        return
    assert result is False  # attribute access is dict lookup only: dunder names find nothing


def test_syntax_error_is_a_config_error():
    with pytest.raises(ConfigError, match="not a valid expression"):
        evaluate_condition("output.a ===", {})
