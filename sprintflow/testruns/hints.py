"""Hints: a failed test turned into one or two sentences the coder can act on.

tester-agent-spec.md asks for a hint on every failure that says what went wrong
and what to change — never "fix the bug", never a bare "expected 401 got 500".
Each rule reads the error text, the expected/received values and the test
name; the first rule that recognises the failure writes the hint, a fallback
always says where to look. Every hint names the place (``file:line`` when the
stack gives one, else the test).

Example:
    >>> from sprintflow.parsers import TestFailure
    >>> build_hint(TestFailure(test="api 404", message="expected 500 to be 404",
    ...                        file="tests/api.test.js", line=10, expected="404", received="500"))
    'At tests/api.test.js:10, a missing resource made the server fail with 500 instead of answering 404: check that the lookup found something before using it, and return 404 when it did not.'
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from sprintflow.parsers import TestFailure

__all__ = ["Language", "build_hint"]

Language = Literal["en", "zh"]

_VALUE_LIMIT = 60


@dataclass(frozen=True)
class _Failure:
    """What the rules look at: the failure, its whole text and, for HTTP tests, both statuses."""

    failure: TestFailure
    text: str
    language: Language
    expected_status: int | None
    received_status: int | None

    def say(self, key: str, **values: Any) -> str:
        en, zh = _TEXT[key]
        place = _place(self.failure)
        at = (f"At {place}" if place else f"In “{self.failure.test}”") if self.language == "en" \
            else (f"{place} 处" if place else f"测试「{self.failure.test}」中")
        template = en if self.language == "en" else zh
        return template.format(at=at, exp=self.expected_status, got=self.received_status, **values)


def build_hint(failure: TestFailure, language: Language = "en") -> str:
    """One or two actionable sentences for a failed test, in English or Chinese.

    Args:
        failure: a parsed failure (from any test report parser).
        language: ``"en"`` or ``"zh"`` (the seed's language).

    Returns:
        A non-empty hint that says where the failure is and what to change.

    Example:
        >>> build_hint(TestFailure(test="t", message="TypeError: Cannot read properties of "
        ...                        "undefined (reading 'length')", file="src/todos.js", line=7))
        'At src/todos.js:7, the code reads `.length` of a value that is undefined: check that it exists before reading `.length`, and return early (or answer 4xx) when it is missing.'
    """
    context = _Failure(failure, f"{failure.message}\n{failure.stack or ''}", language,
                       _status(failure.expected), _status(failure.received))
    for rule in _RULES:
        hint = rule(context)
        if hint:
            return hint
    return _fallback(context)


def _place(failure: TestFailure) -> str | None:
    if failure.file and failure.line:
        return f"{failure.file}:{failure.line}"
    return failure.file


def _status(value: str | None) -> int | None:
    """An HTTP status when the value is one (``"404"``), else ``None``."""
    if value is not None and re.fullmatch(r"\s*[1-5]\d\d\s*", value):
        return int(value)
    return None


def _missing_module(f: _Failure) -> str | None:
    name = re.search(r"cannot import name '(?P<name>[^']+)' from '(?P<module>[^']+)'", f.text)
    if name:
        return f.say("import_name", name=name["name"], module=name["module"])
    module = re.search(r"Cannot find module '(?P<m>[^']+)'|Failed to load url (?P<u>\S+)"
                       r"|No module named '(?P<p>[^']+)'", f.text)
    if module:
        return f.say("module", module=module["m"] or module["u"] or module["p"])
    return None


def _syntax_error(f: _Failure) -> str | None:
    match = re.search(r"(?:SyntaxError|IndentationError): (?P<why>[^\n]+)", f.text)
    return f.say("syntax", why=match["why"].strip()) if match else None


def _missing_await(f: _Failure) -> str | None:
    received = f.failure.received or ""
    if received.startswith("Promise") or re.search(r"<coroutine object|was never awaited", f.text):
        return f.say("await")
    return None


def _timeout(f: _Failure) -> str | None:
    # vitest 3's JSON report loses a timeout's message and keeps only the marker of the
    # stack it captured for it: "Error: STACK_TRACE_ERROR".
    if re.search(r"Test timed out|Exceeded timeout|Timeout \(>|TimeoutError|timed out after"
                 r"|^Error: STACK_TRACE_ERROR$", f.text, re.MULTILINE):
        return f.say("timeout")
    return None


def _bcrypt_undefined(f: _Failure) -> str | None:
    # bcrypt's own messages, and the seed's rule: a TypeError raised inside compare().
    if re.search(r"Illegal arguments: (?:undefined|null|object)|data and hash arguments required"
                 r"|TypeError[^\n]*\bcompare", f.text, re.IGNORECASE):
        return f.say("bcrypt")
    return None


_UNDEFINED = re.compile(
    r"Cannot read propert(?:y|ies) of (?P<js>undefined|null)(?: \(reading '(?P<prop>[^']+)'\))?"
    r"|Cannot destructure property '(?P<dprop>[^']+)' of .+? as it is (?P<djs>undefined|null)"
    r"|'NoneType' object has no attribute '(?P<attr>\w+)'"
    r"|'NoneType' object is not (?P<sub>subscriptable)", re.IGNORECASE)


def _undefined_value(f: _Failure) -> str | None:
    match = _UNDEFINED.search(f.text)
    if not match:
        return None
    empty = match["js"] or match["djs"] or "None"
    prop = match["prop"] or match["dprop"] or match["attr"]
    key = "undefined_status" if f.expected_status and f.expected_status >= 400 else "undefined"
    if match["sub"] or prop is None:
        return f.say(f"{key}_index", empty=empty)
    return f.say(key, empty=empty, prop=prop)


_CONSTRAINTS = (
    ("unique", re.compile(r"UNIQUE constraint failed: (?P<col>[\w.]+)"
                          r"|violates unique constraint \"(?P<pg>\w+)\"|SQLITE_CONSTRAINT_UNIQUE")),
    ("not_null", re.compile(r"NOT NULL constraint failed: (?P<col>[\w.]+)"
                            r"|null value in column \"(?P<pg>\w+)\"|SQLITE_CONSTRAINT_NOTNULL")),
    ("foreign_key", re.compile(r"FOREIGN KEY constraint failed|violates foreign key constraint"
                               r"|SQLITE_CONSTRAINT_FOREIGNKEY")),
    ("constraint", re.compile(r"SQLITE_CONSTRAINT|IntegrityError|constraint failed")),
)


def _constraint(f: _Failure) -> str | None:
    for key, pattern in _CONSTRAINTS:
        match = pattern.search(f.text)
        if match:
            groups = match.groupdict()
            column = groups.get("col") or groups.get("pg") or "?"
            return f.say(key, column=column)
    return None


def _http_status(f: _Failure) -> str | None:
    exp, got = f.expected_status, f.received_status
    if exp is None or got is None:
        return None
    for (want, have), key in _STATUS_CASES:
        if want(exp) and have(got):
            return f.say(key)
    return f.say("status")


def _is(code: int) -> Callable[[int], bool]:
    return lambda status: status == code


def _family(hundred: int) -> Callable[[int], bool]:
    return lambda status: status // 100 == hundred


_STATUS_CASES: list[tuple[tuple[Callable[[int], bool], Callable[[int], bool]], str]] = [
    ((_is(400), _family(5)), "400_5xx"),
    ((_is(401), _family(5)), "401_5xx"),
    ((_is(404), _family(5)), "404_5xx"),
    ((_family(4), _family(5)), "4xx_5xx"),
    ((_is(400), _family(2)), "400_2xx"),
    ((lambda s: s in (401, 403), _family(2)), "auth_2xx"),
    ((_is(404), _family(2)), "404_2xx"),
    ((_family(2), _family(5)), "2xx_5xx"),
    ((_family(2), _is(404)), "2xx_404"),
    ((_family(2), _family(4)), "2xx_4xx"),
]


def _value_diff(f: _Failure) -> str | None:
    exp, got = f.failure.expected, f.failure.received
    if exp is None or got is None:
        return None
    fields = _differing_fields(_literal(exp), _literal(got))
    values = {"expected": _short(exp), "received": _short(got)}
    if fields:
        return f.say("diff_fields", fields=", ".join(f"`{name}`" for name in fields), **values)
    return f.say("diff", **values)


def _literal(text: str) -> Any:
    """A report's printed value as data: JSON, a Python repr, or vitest's ``{ a: 1 }``."""
    for attempt in (json.loads, ast.literal_eval,
                    lambda t: json.loads(re.sub(r"([{,]\s*)(\w+):", r'\1"\2":', t))):
        try:
            return attempt(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return text


def _differing_fields(expected: Any, received: Any) -> list[str]:
    """The keys (or list positions) where two structures differ, when both are dicts or lists."""
    if isinstance(expected, dict) and isinstance(received, dict):
        keys = sorted(set(expected) | set(received), key=str)
        return [str(k) for k in keys if expected.get(k, ...) != received.get(k, ...)]
    if isinstance(expected, list) and isinstance(received, list) and len(expected) == len(received):
        return [f"[{i}]" for i, (a, b) in enumerate(zip(expected, received, strict=False)) if a != b]
    return []


def _short(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= _VALUE_LIMIT else value[:_VALUE_LIMIT - 1] + "…"


def _fallback(f: _Failure) -> str:
    first = next((ln.strip() for ln in f.failure.message.splitlines() if ln.strip()), "")
    return f.say("fallback", error=_short(first or "an error without a message"),
                 test=f.failure.test)


# The order matters: the cause (a crash, a constraint) beats the symptom (the status code).
_RULES: list[Callable[[_Failure], str | None]] = [
    _missing_module, _syntax_error, _missing_await, _timeout, _bcrypt_undefined,
    _undefined_value, _constraint, _http_status, _value_diff,
]

# key -> (English, Chinese); {at} is the place, {exp}/{got} the HTTP statuses.
_TEXT: dict[str, tuple[str, str]] = {
    "module": (
        ("{at}, the module `{module}` cannot be found, so the test file never ran: create it or "
        "correct the import path (relative to the importing file) or the package name."),
        "{at}找不到模块 `{module}`,整个测试文件没能加载:补上该模块,或改正 import 路径(相对于导入它的文件)/包名。"),
    "import_name": (
        ("{at}, `{module}` has no `{name}` to import: define and export `{name}` there, or import "
        "the name the module really provides."),
        "{at}`{module}` 里没有可导入的 `{name}`:在该模块中定义并导出 `{name}`,或改为导入它实际提供的名字。"),
    "syntax": (
        ("{at}, a syntax error ({why}) stops the file from loading: fix that line first; no test "
        "of the file can run until it parses."),
        "{at}有语法错误({why}),文件无法加载:先修好这一行,否则该文件的测试一个都跑不了。"),
    "await": (
        ("{at}, the test received a Promise instead of its value: add `await` before the call (or "
        "return the resolved value) so the result, not the pending promise, is checked."),
        "{at}拿到的是 Promise 而不是结果:调用前加 await(或返回 resolve 后的值),检查的才是结果而不是未完成的 Promise。"),
    "timeout": (
        ("{at}, the test did not finish in time: look for a missing `await`/`return` of a promise, "
        "a request or callback that never completes (a handler that never responds), or an "
        "unmocked network call."),
        "{at}测试超时:检查是否漏了 await/return、请求或回调从未结束(handler 没有返回响应),或外部依赖未 mock。"),
    "bcrypt": (
        ("{at}, the password check received undefined: make sure the user exists before calling "
        "bcrypt.compare, and answer 401 when it does not."),
        "{at}密码比对收到了 undefined:调用 bcrypt.compare 前先确认 user 存在,不存在时返回 401。"),
    "undefined": (
        ("{at}, the code reads `.{prop}` of a value that is {empty}: check that it exists before "
        "reading `.{prop}`, and return early (or answer 4xx) when it is missing."),
        "{at}读取了 {empty} 的 `.{prop}`:先做存在性判断再访问 `.{prop}`,缺失时提前返回(或返回 4xx)。"),
    "undefined_status": (
        ("{at}, the code reads `.{prop}` of a value that is {empty} and crashes: check that it "
        "exists before reading `.{prop}`, and answer {exp} when it is missing."),
        "{at}读取了 {empty} 的 `.{prop}` 导致崩溃:先做存在性判断再访问 `.{prop}`,缺失时返回 {exp}。"),
    "undefined_index": (
        ("{at}, the code indexes a value that is {empty}: check that the lookup found something "
        "before indexing it, and return early (or answer 404) when it did not."),
        "{at}对 {empty} 做了下标访问:先判断查询结果存在再取值,不存在时提前返回(或返回 404)。"),
    "undefined_status_index": (
        ("{at}, the code indexes a value that is {empty} and crashes: check that the lookup found "
        "something before indexing it, and answer {exp} when it did not."),
        "{at}对 {empty} 做了下标访问导致崩溃:先判断查询结果存在再取值,不存在时返回 {exp}。"),
    "unique": (
        ("{at}, an insert breaks the UNIQUE constraint on {column}: look the row up before writing "
        "and answer 409 (or reuse the existing row) instead of letting the database throw."),
        "{at}插入违反 {column} 的 UNIQUE 约束:写入前先查重,重复时返回 409(或复用已有记录),不要让数据库抛错。"),
    "not_null": (
        ("{at}, {column} is written as NULL: validate that the field is present (answer 400) before "
        "the insert, or give the column a default."),
        "{at}{column} 被写成了 NULL:写入前校验该字段存在(缺失返回 400),或给该列设默认值。"),
    "foreign_key": (
        ("{at}, a row references a parent that does not exist (FOREIGN KEY): check that the "
        "referenced id exists before writing, and answer 404 or 400 when it does not."),
        "{at}外键约束失败,引用的父记录不存在:写入前先确认被引用的 id 存在,不存在时返回 404 或 400。"),
    "constraint": (
        ("{at}, a database constraint is violated: check the data against the table's unique, "
        "not-null and foreign-key rules before writing, and answer 4xx when it breaks them."),
        "{at}违反了数据库约束(unique/not null/foreign key):业务层写入前先检查,不满足时返回 4xx。"),
    "400_5xx": (
        ("{at}, invalid input made the server fail with {got} instead of being rejected with 400: "
        "validate the request fields in the route before calling the service, and answer 400."),
        "{at}参数校验错应返 400 而不是 {got}:在 route 层先校验请求字段,再调用 service。"),
    "401_5xx": (
        ("{at}, bad or missing credentials made the server fail with {got} instead of answering "
        "401: in the auth path handle an unknown user or a wrong password without throwing (check "
        "the user exists before comparing passwords) and return 401."),
        "{at}凭据错误应返 401 而不是 {got}:检查认证路径,用户不存在或密码错误时不要抛错(比对密码前先确认用户存在),返回 401。"),
    "404_5xx": (
        ("{at}, a missing resource made the server fail with {got} instead of answering 404: check "
        "that the lookup found something before using it, and return 404 when it did not."),
        "{at}资源不存在时应返 404 而不是 {got}:使用查询结果前先判断是否找到,找不到就返回 404。"),
    "4xx_5xx": (
        ("{at}, the server fails with {got} where it should refuse the request with {exp}: detect "
        "this case in the handler before the code that throws, and answer {exp}."),
        "{at}应返 {exp} 却崩成了 {got}:在 handler 里先识别这种情况(在抛错的代码之前),返回 {exp}。"),
    "400_2xx": (
        ("{at}, invalid input was accepted with {got} instead of rejected with 400: add validation "
        "for this case in the route and return 400 before doing any work."),
        "{at}非法输入被接受了({got}),应返 400:在 route 层加上这项校验,处理前就返回 400。"),
    "auth_2xx": (
        ("{at}, the request got through ({got}) without valid credentials: check authentication "
        "before the handler runs and answer {exp}."),
        "{at}没有有效凭据的请求被放行了({got}):在 handler 执行前检查认证,返回 {exp}。"),
    "404_2xx": (
        ("{at}, a resource that does not exist answered {got}: check the query result before "
        "responding and return 404 when it is empty."),
        "{at}不存在的资源不应返 {got}:返回前判断查询结果,为空时返回 404。"),
    "2xx_5xx": (
        ("{at}, a valid request made the server fail with {got} instead of answering {exp}: read "
        "the server's stack trace or log for the exception thrown by this handler and fix it."),
        "{at}合法请求应返 {exp} 却崩成了 {got}:查看服务端日志/堆栈里这个 handler 抛出的异常并修复。"),
    "2xx_404": (
        ("{at}, the request answered 404 instead of {exp}: check that the route is registered for "
        "this method and path, and that the resource it reads was created first."),
        "{at}应返 {exp} 却返回 404:检查该 method + path 的路由是否注册,以及所读资源是否已先创建。"),
    "2xx_4xx": (
        ("{at}, a valid request was refused with {got} instead of answering {exp}: the validation "
        "or auth check is too strict for this input; compare it with what the test sends."),
        "{at}合法请求被拒绝({got}),应返 {exp}:校验或认证条件对这个输入过严,对照测试发送的数据检查。"),
    "status": (
        ("{at}, the response status is {got} where the test expects {exp}: find the branch that "
        "answers {got} for this request and make it answer {exp}."),
        "{at}响应状态是 {got},测试期望 {exp}:找到对这个请求返回 {got} 的分支,改成返回 {exp}。"),
    "diff_fields": (
        ("{at}, the result differs from the expected value in {fields} (expected {expected}, "
        "received {received}): fix the code that computes those fields."),
        "{at}结果在 {fields} 上与期望不同(期望 {expected},实际 {received}):修正计算这些字段的代码。"),
    "diff": (
        ("{at}, the value is {received} where the test expects {expected}: trace where it is "
        "computed and correct that logic (or the test, if the expectation is wrong)."),
        "{at}实际值是 {received},测试期望 {expected}:追查它的计算位置并修正逻辑(若期望本身有误则改测试)。"),
    "fallback": (
        ("{at}, the test failed with “{error}”: read the stack from that line, reproduce it by "
        "running only “{test}”, and change the code the innermost frame points to."),
        "{at}测试失败:“{error}”。从该行读堆栈,单独运行「{test}」复现,修改最内层堆栈帧指向的代码。"),
}
