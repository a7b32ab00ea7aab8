"""A safe evaluator for ``passCondition`` expressions: no arbitrary code, ever.

Conditions are written as the seed shows them, in JavaScript style
(``output.passed === true && output.count >= 1``). We translate the few JS
operators to Python tokens, parse with ``ast`` and walk an allow-list of node
types: literals, ``output`` and its fields, comparisons, boolean logic,
arithmetic and ``len``. Anything else is refused before evaluation.
"""

from __future__ import annotations

import ast
import io
import operator
import tokenize
from typing import Any

from sprintflow.errors import ConfigError

__all__ = ["evaluate_condition"]

_JS_TOKENS = {"===": "==", "!==": "!=", "&&": " and ", "||": " or ", "true": "True",
              "false": "False", "null": "None", "undefined": "None"}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Mod: operator.mod}
_FUNCTIONS = {"len": len}


def _to_python(expression: str) -> str:
    """Replace JS operators outside string literals; ``!x`` becomes ``not x``."""
    out: list[str] = []
    i, quote = 0, None
    while i < len(expression):
        char = expression[i]
        if quote:
            out.append(char)
            quote = None if char == quote and expression[i - 1] != "\\" else quote
            i += 1
            continue
        if char in "'\"":
            quote = char
            out.append(char)
            i += 1
            continue
        for js in ("===", "!==", "&&", "||"):
            if expression.startswith(js, i):
                out.append(_JS_TOKENS[js])
                i += len(js)
                break
        else:
            if char == "!" and not expression.startswith("!=", i):
                out.append(" not ")
            else:
                out.append(char)
            i += 1
    python = "".join(out)
    tokens = tokenize.generate_tokens(io.StringIO(python).readline)
    return tokenize.untokenize(
        (t.type, _JS_TOKENS.get(t.string, t.string) if t.type == tokenize.NAME else t.string)
        for t in tokens
    )


def evaluate_condition(expression: str, output: Any) -> bool:
    """Evaluate ``expression`` with ``output`` bound to the command's parsed JSON.

    Example:
        >>> evaluate_condition("output.passed === true && output.count >= 1",
        ...                    {"passed": True, "count": 3})
        True
    """
    try:
        tree = ast.parse(_to_python(expression).strip(), mode="eval")
    except (SyntaxError, tokenize.TokenError) as exc:
        raise ConfigError(f"passCondition {expression!r} is not a valid expression: {exc}") from None
    return bool(_Evaluator(output).visit(tree.body))


class _Evaluator(ast.NodeVisitor):
    def __init__(self, output: Any):
        self.output = output

    def generic_visit(self, node: ast.AST) -> Any:
        raise ConfigError(f"passCondition: {type(node).__name__} is not allowed "
                          "(only literals, output.field, comparisons, and/or/not, + - * / %, len)")

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id == "output":
            return self.output
        raise ConfigError(f"passCondition: unknown name {node.id!r} (use output.<field>)")

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = self.visit(node.value)
        if node.attr == "length":
            return len(value) if value is not None else None
        return value.get(node.attr) if isinstance(value, dict) else None

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        value, key = self.visit(node.value), self.visit(node.slice)
        try:
            return value[key]
        except (KeyError, IndexError, TypeError):
            return None

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        values = (self.visit(v) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.visit(comparator)
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:
                return False  # comparing a missing field with a number is simply false
            except KeyError:
                return self.generic_visit(op)
            left = right
        return True

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        if type(node.op) not in _BINARY:
            return self.generic_visit(node.op)
        try:
            return _BINARY[type(node.op)](self.visit(node.left), self.visit(node.right))
        except (TypeError, ZeroDivisionError):
            return None

    def visit_Call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords:
            return _FUNCTIONS[node.func.id](*(self.visit(a) for a in node.args))
        return self.generic_visit(node)

    def visit_List(self, node: ast.List) -> Any:
        return [self.visit(e) for e in node.elts]
