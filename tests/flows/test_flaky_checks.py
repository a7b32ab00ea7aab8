"""A failing check runs again on the same snapshot: failing then passing is flaky, not broken."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.history.dataset import EVALS, read_table
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.orchestration.runs import run_flow

CONTRACT = {
    "contractId": "sprint-s-1", "specId": "s", "sprintNumber": 1, "title": "t", "description": "d",
    "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
    "generatorNotes": "", "evaluatorNotes": "", "estimatedDuration": "small",
    "successCriteria": [{"criterionId": "sc-1-1", "description": "It builds.", "verificationMethod": "build",
                         "required": True},
                        {"criterionId": "sc-1-2", "description": "The suite passes.",
                         "verificationMethod": "unit-test", "required": True}]}


def _workspace(root, test_command: str, extra: str = "", network: bool = False):
    root.mkdir()
    (root / "sprintflow.toml").write_text(
        f'{extra}\n[[evaluator.strategies]]\ntype = "build"\ncommand = "true"\n\n'
        f'[[evaluator.strategies]]\ntype = "unit-test"\ncommand = "{test_command}"\n'
        + ("network = true\n" if network else ""))
    (root / "contract.json").write_text(json.dumps(CONTRACT))
    return root


def _unit(result):
    return next(s for s in result.strategy_results if s.strategy == "unit-test")


@pytest.fixture
def flaky_service():
    """A service on the host that fails its first request and answers every later one, as flaky ones do
    (each run of a check starts in a tree and a /tmp of its own, so the flakiness has to come from outside)."""
    calls = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the handler's name is http.server's
            calls.append(self.path)
            self.send_response(500 if len(calls) == 1 else 200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield _Service(f"http://127.0.0.1:{server.server_port}/", calls)
    server.shutdown()


class _Service(str):
    """The service's address, and the paths it was asked for."""

    calls: list[str]

    def __new__(cls, url: str, calls: list[str]) -> _Service:
        service = super().__new__(cls, url)
        service.calls = calls
        return service


@pytest.mark.parametrize("flaky_fails", [False, True])
def test_fail_then_pass_is_flaky(prefect_harness, tmp_path, flaky_service, flaky_fails):
    command = f"python3 -c 'import urllib.request; urllib.request.urlopen(\\\"{flaky_service}\\\")'"
    extra = "[evaluator]\\nflakyFails = true" if flaky_fails else ""
    workspace = _workspace(tmp_path / "ws", command, extra.replace("\\n", "\n"), network=True)
    result = run_flow(evaluate_flow, str(workspace), str(workspace / "contract.json"), executor="local",
                      use_cache=False)
    unit = _unit(result)
    assert unit.flaky and "failed, then passed when run again" in unit.details
    assert (unit.result.value, result.overall_result) == (("fail", "fail") if flaky_fails else ("pass", "pass"))
    rows = read_table(WorkspaceLayout(workspace).history_dir, EVALS)
    assert rows[(rows.kind == "strategy") & (rows.name == "unit-test")].flaky.tolist() == [True]


def test_a_check_that_fails_every_time_is_broken_not_flaky(prefect_harness, tmp_path):
    workspace = _workspace(tmp_path / "ws", "exit 1")
    result = run_flow(evaluate_flow, str(workspace), str(workspace / "contract.json"), executor="local",
                      use_cache=False)
    assert _unit(result).result.value == "fail" and not _unit(result).flaky


def test_only_the_failing_tests_run_again(prefect_harness, tmp_path, flaky_service):
    """pytest can select its failing test: the re-run runs that test alone, not the whole suite."""
    workspace = _workspace(tmp_path / "ws", f"{sys.executable} -m pytest -q tests", network=True)
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_service.py").write_text(
        "import urllib.request\n\n"
        f"def test_a():\n    urllib.request.urlopen('{flaky_service}a')\n\n"
        f"def test_b():\n    urllib.request.urlopen('{flaky_service}b')\n")
    _assert_ran_again_alone(workspace, flaky_service, "tests/test_service.py::test_a")


GO_SERVICE_TESTS = '''\
package service

import (
	"net/http"
	"testing"
)

func get(t *testing.T, path string) {
	response, err := http.Get("SERVICE" + path)
	if err != nil || response.StatusCode != 200 {
		t.Fatalf("GET %s failed", path)
	}
}

func TestA(t *testing.T) { get(t, "a") }

func TestB(t *testing.T) { get(t, "b") }
'''


@pytest.mark.skipif(shutil.which("go") is None, reason="needs a Go toolchain")
def test_only_the_failing_go_test_runs_again(prefect_harness, tmp_path, flaky_service):
    """go test selects its failing test with -run: the re-run runs TestA alone, counted from its -v output."""
    workspace = _workspace(tmp_path / "ws", "go test -count=1 ./...", network=True)
    (workspace / "go.mod").write_text("module example.com/service\n\ngo 1.21\n")
    (workspace / "service_test.go").write_text(GO_SERVICE_TESTS.replace("SERVICE", flaky_service))
    _assert_ran_again_alone(workspace, flaky_service, "-run '^TestA$'")


def _assert_ran_again_alone(workspace, flaky_service, selection: str) -> None:
    """Test A fails once (its service answers 500 the first time): the re-run selects it alone and it passes."""
    result = run_flow(evaluate_flow, str(workspace), str(workspace / "contract.json"), executor="local",
                      use_cache=False)
    unit = _unit(result)
    assert unit.flaky and unit.result.value == "pass", unit.details
    assert selection in unit.details and "alone" in unit.details
    assert flaky_service.calls == ["/a", "/b", "/a"]
