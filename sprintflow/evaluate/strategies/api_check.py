"""api-check: start the server, wait for its ready line, check each endpoint, stop it and its children.

The checks run in a stdlib-only runner script beside the code under test
(:mod:`sprintflow.sandbox.scripts.apicheck`), inside the executor, so they see
the server exactly as the other strategies see the code. A 5xx is pointed at
the line that crashed, from the server's own stack trace.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from sprintflow.errors import ConfigError
from sprintflow.schemas import Diagnostic, Outcome, StrategyType
from sprintflow.schemas.strategies import ApiCheckStrategy as ApiCheckConfig

from .base import (
    EXCERPT_CHARS,
    Judged,
    Strategy,
    StrategyRun,
    duration_ms,
    excerpt,
    execute,
    infrastructure_failure,
    register,
    result,
)

__all__ = ["ApiCheckStrategy"]


@register
class ApiCheckStrategy(Strategy[ApiCheckConfig]):
    type = StrategyType.api_check
    needs_build = True

    def command(self) -> str | None:
        return self.config.config.server_command

    def check(self) -> None:
        """Endpoints to check need somewhere to send them; no endpoints at all is a skip, not an error."""
        settings = self.config.config
        if not settings.endpoints:
            return
        if settings.start_server and not settings.server_command:
            raise ConfigError("api-check: startServer needs a serverCommand (config.serverCommand)")
        if not settings.base_url:
            raise ConfigError("api-check: config.baseUrl is required to send the endpoints somewhere")

    def judge(self, run: StrategyRun) -> Judged:
        settings = self.config.config
        if not settings.endpoints:
            # agent-bober lists api-check without endpoints and derives checks from the contract;
            # here the criteria carry their own checks, so this one has nothing to do.
            return Judged(result(run, Outcome.skipped, details=(
                "Configuration note: api-check lists no endpoints (config.endpoints), so it checked nothing. "
                "List the endpoints and their expected statuses to have them checked.")))
        spec = settings.model_dump(mode="json", by_alias=True, exclude_none=True)
        command = f"python3 {shlex.quote(run.executor.script('apicheck.py'))}"
        outcome = execute(run, command, env={"SPRINTFLOW_APICHECK_SPEC": json.dumps(spec)})
        failure = infrastructure_failure(run, settings.server_command or command, outcome)
        if failure:
            return Judged(failure)
        try:
            report = json.loads(outcome.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            return Judged(result(run, Outcome.failed, exit_code=outcome.exit_code, output=excerpt(outcome),
                                 details="The api-check runner gave no readable result, so nothing was verified."))
        if not report["ready"]:
            return Judged(result(run, Outcome.failed, exit_code=outcome.exit_code, duration_ms=duration_ms(outcome),
                                 output=report["serverOutput"][-EXCERPT_CHARS:],
                                 details=(f"The server (`{settings.server_command}`) never printed "
                                          f"/{settings.server_ready_pattern}/ within {settings.server_timeout:g} ms, "
                                          "or exited first.")))
        diagnostics = [_endpoint_diagnostic(check, run.roots) for check in report["checks"] if not check["ok"]]
        lines = [_endpoint_line(check) for check in report["checks"]]
        passed = outcome.exit_code == 0 and not diagnostics
        details = (f"All {len(lines)} endpoint checks passed." if passed else
                   f"{len(diagnostics)} of {len(lines)} endpoint checks failed.")
        return Judged(result(run, Outcome.passed if passed else Outcome.failed, exit_code=outcome.exit_code,
                             error_count=len(diagnostics), output="\n".join(lines), details=details,
                             diagnostics=diagnostics, duration_ms=duration_ms(outcome)))


def _endpoint_line(check: dict[str, Any]) -> str:
    got = check["status"] if check["status"] is not None else check["error"]
    mark = "ok  " if check["ok"] else "FAIL"
    missing = f" missing keys {check['missingKeys']}" if check["missingKeys"] else ""
    tag = f"[{check['criterion']}] " if check.get("criterion") else ""
    return f"{mark} {tag}{check['method']} {check['path']} -> {got} (expected {check['expectedStatus']}){missing}"


# A server's own stack trace, to point a 5xx at the line that crashed: Python and Node frames.
_FRAMES = re.compile(r'File "(?P<py>[^"]+)", line (?P<pyline>\d+)|\(?(?P<js>/[^\s():]+):(?P<jsline>\d+):\d+\)?')


def _crash_site(log: str, roots: list[str]) -> tuple[str | None, int | None]:
    """The innermost stack frame inside the workspace (not a library) in the server's log.

    Python prints the innermost frame last; Node prints it first.

    Example:
        >>> _crash_site('File "/w/src/app.py", line 12, in get\\nFile "/usr/lib/x.py", line 1', ["/w"])
        ('src/app.py', 12)
    """
    python: list[tuple[str, int]] = []
    node: list[tuple[str, int]] = []
    for match in _FRAMES.finditer(log):
        path, line, frames = ((match["py"], match["pyline"], python) if match["py"]
                              else (match["js"], match["jsline"], node))
        for root in roots:
            prefix = root.rstrip("/") + "/"
            if path.startswith(prefix) and "node_modules" not in path:
                frames.append((path[len(prefix):], int(line)))
    if python:
        return python[-1]
    return node[0] if node else (None, None)


def _endpoint_diagnostic(check: dict[str, Any], roots: list[str]) -> Diagnostic:
    where = f"{check['method']} {check['path']}"
    file, line = _crash_site(check.get("serverLog", ""), roots) if (check["status"] or 0) >= 500 else (None, None)
    if check["error"]:
        message = f"{where} failed: {check['error']}"
    elif check["status"] != check["expectedStatus"]:
        message = (f"{where} returned {check['status']} instead of {check['expectedStatus']}; "
                   f"body: {check['body'][:200]}")
    else:
        message = f"{where} response lacks keys {check['missingKeys']}; body: {check['body'][:200]}"
    if file:
        message += f" The server logged a crash at {file}:{line}."
    return Diagnostic(tool="api-check", message=message, code=check.get("criterion"), file=file, line=line,
                      expected=str(check["expectedStatus"]),
                      received=str(check["status"] if check["status"] is not None else check["error"]))
