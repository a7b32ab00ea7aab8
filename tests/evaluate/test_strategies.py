"""Strategies judged for real with the LocalExecutor on small, purpose-made workspaces."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from sprintflow.errors import ConfigError
from sprintflow.evaluate.strategies import StrategyRun, strategy_for
from sprintflow.sandbox.executors import LocalExecutor
from sprintflow.schemas import ProjectConfig, parse_strategy


def _run(workspace, **strategy):
    config = parse_strategy(strategy)
    plugin = strategy_for(config, ProjectConfig())
    plugin.check()
    return plugin.judge(StrategyRun(workspace, config, ProjectConfig(), LocalExecutor())).result


def test_playwright_absent_is_skipped_as_a_configuration_issue(tmp_path):
    result = _run(tmp_path, type="playwright", required=True)
    assert result.result.value == "skipped" and "Configuration issue" in result.details


def test_build_verify_output_needs_a_non_empty_output_dir(tmp_path):
    result = _run(tmp_path, type="build", command="mkdir -p out", config={"outputDir": "out", "verifyOutput": True})
    assert result.result.value == "fail" and "missing or empty" in result.details
    result = _run(tmp_path, type="build", command="echo x > out/app.js",
                  config={"outputDir": "out", "verifyOutput": True})
    assert result.result.value == "pass"


def test_lint_warnings_pass_unless_over_max(tmp_path):
    report = [{"filePath": str(tmp_path / "a.js"), "messages": [
        {"ruleId": "no-console", "severity": 1, "message": "Unexpected console", "line": 3, "column": 1}]}]
    (tmp_path / "lint.json").write_text(json.dumps(report))
    command = "true"
    ok = _run(tmp_path, type="lint", command=command, config={"format": "eslint"})
    assert ok.result.value == "fail"  # stdout is not the report: unreadable means fail closed
    (tmp_path / "emit.sh").write_text(f"cat {tmp_path / 'lint.json'}\n")
    ok = _run(tmp_path, type="lint", command="sh emit.sh", config={"format": "eslint"})
    assert ok.result.value == "pass" and "1 warning(s) noted" in ok.details
    capped = _run(tmp_path, type="lint", command="sh emit.sh", config={"format": "eslint", "maxWarnings": 0})
    assert capped.result.value == "fail" and "exceed maxWarnings 0" in capped.details


def test_typecheck_that_fails_without_parsable_errors_still_fails(tmp_path):
    result = _run(tmp_path, type="typecheck", command="echo 'something odd' ; exit 2")
    assert result.result.value == "fail" and result.exit_code == 2


@pytest.mark.parametrize("output, condition, outcome", [
    ('{"passed": true, "count": 2}', "output.passed === true && output.count >= 1", "pass"),
    ('{"passed": false, "count": 2}', "output.passed === true", "fail"),
    ("not json", "output.passed === true", "fail"),
])
def test_custom_parse_output_and_pass_condition(tmp_path, output, condition, outcome):
    (tmp_path / "out.txt").write_text(output)
    result = _run(tmp_path, type="custom", plugin="check", command="cat out.txt",
                  config={"parseOutput": "json", "passCondition": condition})
    assert result.result.value == outcome, result.details


def test_custom_without_command_or_json_mode_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no command configured"):
        _run(tmp_path, type="custom", plugin="x")
    # The model refuses it, so every reader of a config does (validate included), before any strategy runs.
    with pytest.raises(ValidationError, match='passCondition needs parseOutput = "json"'):
        _run(tmp_path, type="custom", command="true", config={"passCondition": "output.ok"})


SERVER = """
import http.server, json, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # SERVER-CHILD"])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"status": "ok"} if self.path == "/health" else {"oops": 1}).encode()
        self.send_response(200 if self.path == "/health" else 500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", PORT), H)
print("listening on port", PORT, flush=True)
server.serve_forever()
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_api_check_checks_endpoints_and_stops_the_server_with_its_children(tmp_path):
    port = _free_port()
    (tmp_path / "server.py").write_text(SERVER.replace("PORT", str(port)))
    result = _run(tmp_path, type="api-check", config={
        "baseUrl": f"http://127.0.0.1:{port}", "serverCommand": f"{sys.executable} server.py",
        "serverReadyPattern": "listening on port", "serverTimeout": 10000,
        "endpoints": [
            {"method": "GET", "path": "/health", "expectedStatus": 200, "expectedBodyKeys": ["status"]},
            {"method": "GET", "path": "/items", "expectedStatus": 200, "criterion": "sc-1-2"},
        ]})
    assert result.result.value == "fail" and result.error_count == 1
    assert "FAIL [sc-1-2] GET /items -> 500 (expected 200)" in result.output
    assert result.diagnostics[0].code == "sc-1-2" and result.diagnostics[0].received == "500"
    time.sleep(0.3)
    assert "SERVER-CHILD" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_api_check_server_that_never_gets_ready_fails(tmp_path):
    result = _run(tmp_path, type="api-check", config={
        "baseUrl": "http://127.0.0.1:9", "serverCommand": "echo starting; sleep 30",
        "serverReadyPattern": "listening", "serverTimeout": 1000,
        "endpoints": [{"method": "GET", "path": "/", "expectedStatus": 200}]})
    assert result.result.value == "fail" and "never printed /listening/" in result.details


def test_an_autofixing_linter_is_judged_as_it_reports_without_fixing(tmp_path):
    """ruff's ``fix = true`` would remove the unused import: the finding is reported at its line with
    its rule instead, and the tree is left as it was."""
    ruff = Path(sys.executable).with_name("ruff")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nfix = true\n[tool.ruff.lint]\nselect = ['F']\n")
    source = "import os\n\n\ndef f():\n    return 1\n"
    (tmp_path / "calc.py").write_text(source)
    result = _run(tmp_path, type="lint", command=f"{ruff} check .")
    assert result.result.value == "fail"
    [finding] = result.diagnostics
    assert (finding.file, finding.line, finding.code) == ("calc.py", 1, "F401") and "os" in finding.message
    assert (tmp_path / "calc.py").read_text() == source


def test_every_strategy_type_has_one_registered_plugin_and_a_second_or_nameless_one_is_refused():
    from sprintflow.evaluate.strategies import STRATEGIES, Strategy, register
    from sprintflow.schemas import StrategyType

    assert set(STRATEGIES) == set(StrategyType)
    assert all(plugin.type is kind for kind, plugin in STRATEGIES.items())

    class Nameless(Strategy):
        pass

    class SecondLint(Strategy):
        type = StrategyType.lint

    for plugin in (Nameless, SecondLint):
        with pytest.raises(TypeError, match="must name a strategy type of its own"):
            register(plugin)
    assert STRATEGIES[StrategyType.lint].__name__ == "LintStrategy"
