"""Engines are real commands here: shell one-liners and small scripts, run as subprocesses."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from sprintflow.engines import (
    ENGINE_PRESETS,
    EngineReply,
    engine_env,
    expand_engine,
    parse_engine_output,
    resolve_engine,
    run_engine,
)
from sprintflow.errors import ConfigError
from sprintflow.schemas.config import EngineConfig


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip())
    return f"sh {path}"


# --------------------------------------------------------------------------- resolution


def test_preset_names_expand_and_anything_else_is_a_command():
    assert expand_engine("claude") == "claude -p --output-format json"
    assert expand_engine(" codex ") == "codex exec -"
    assert expand_engine("python3 stub.py --fast") == "python3 stub.py --fast"
    assert set(ENGINE_PRESETS) >= {"claude", "codex", "aider", "gemini"}


def test_resolution_order_flag_then_role_env_then_global_env_then_config():
    env = {"SPRINTFLOW_SCORER_ENGINE": "role-cmd", "SPRINTFLOW_ENGINE": "global-cmd"}
    config = {"scorer": "config-cmd"}
    assert resolve_engine("scorer", "flag-cmd", config, env) == "flag-cmd"
    assert resolve_engine("scorer", None, config, env) == "role-cmd"
    assert resolve_engine("scorer", None, config, {"SPRINTFLOW_ENGINE": "global-cmd"}) == "global-cmd"
    assert resolve_engine("scorer", None, config, {}) == "config-cmd"
    # Another role's variable does not leak into this one.
    assert resolve_engine("planner", None, None, env) == "global-cmd"


def test_config_may_be_the_project_engine_config_including_extra_roles():
    config = EngineConfig.model_validate({"generator": "codex", "scorer": "claude"})
    assert resolve_engine("generator", config=config, environ={}) == ENGINE_PRESETS["codex"]
    assert resolve_engine("scorer", config=config, environ={}) == ENGINE_PRESETS["claude"]


def test_no_engine_anywhere_is_a_config_error_naming_every_way_to_set_one():
    with pytest.raises(ConfigError) as error:
        resolve_engine("scorer", environ={})
    message = str(error.value)
    assert "--engine" in message and "SPRINTFLOW_SCORER_ENGINE" in message and "SPRINTFLOW_ENGINE" in message


def test_an_empty_override_is_an_error_not_a_silent_fallthrough():
    with pytest.raises(ConfigError, match="SPRINTFLOW_ENGINE is set but empty"):
        resolve_engine("scorer", environ={"SPRINTFLOW_ENGINE": "  "})


# --------------------------------------------------------------------------- running


def test_the_prompt_arrives_on_stdin_and_the_answer_is_stdout(tmp_path):
    reply = run_engine("tr a-z A-Z", "triage this\n", cwd=tmp_path, timeout=10)
    assert reply == EngineReply(ok=True, text="TRIAGE THIS\n", raw="TRIAGE THIS\n", exit_code=0,
                                duration_s=reply.duration_s, stderr="")


def test_the_engine_runs_in_the_given_directory(tmp_path):
    assert run_engine("pwd", "", cwd=tmp_path, timeout=10).text.strip() == str(tmp_path)


def test_engines_get_the_full_environment_including_api_keys(tmp_path, monkeypatch):
    # Unlike code under test, an engine is our own configured tool and needs its key.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-123")
    reply = run_engine('printf %s "$ANTHROPIC_API_KEY"', "", cwd=tmp_path, timeout=10)
    assert reply.text == "sk-test-123"
    assert engine_env({"EXTRA": "1"})["ANTHROPIC_API_KEY"] == "sk-test-123"


def test_claude_code_json_envelope_is_unwrapped_with_usage_and_cost(tmp_path):
    envelope = {"type": "result", "subtype": "success", "is_error": False,
                "result": '```json\n{"escalate": true}\n```', "session_id": "s1",
                "usage": {"input_tokens": 1200, "output_tokens": 34}, "total_cost_usd": 0.0123}
    command = script(tmp_path, "claude.sh", f"cat >/dev/null\ncat <<'EOF'\n{json.dumps(envelope)}\nEOF\n")
    reply = run_engine(command, "prompt", cwd=tmp_path, timeout=10)
    assert reply.ok and reply.text == envelope["result"]
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (1200, 34, 0.0123)
    assert json.loads(reply.raw) == envelope


def test_an_envelope_that_reports_an_error_is_a_failed_reply(tmp_path):
    envelope = {"type": "result", "subtype": "error_during_execution", "is_error": True,
                "result": "API Error: overloaded", "cost_usd": 0.001}
    command = script(tmp_path, "claude.sh", f"cat <<'EOF'\n{json.dumps(envelope)}\nEOF\n")
    reply = run_engine(command, "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.reason == "engine reported an error: API Error: overloaded"
    assert reply.cost_usd == 0.001


def test_gemini_envelope_is_unwrapped_with_token_counts():
    parsed = parse_engine_output(json.dumps({
        "response": '{"risk": "low"}',
        "stats": {"models": {"gemini-2.5-pro": {"tokens": {"prompt": 900, "candidates": 12}}}},
    }))
    assert parsed["text"] == '{"risk": "low"}'
    assert (parsed["input_tokens"], parsed["output_tokens"], parsed["error"]) == (900, 12, None)


def test_an_answer_that_merely_has_a_result_field_is_not_mistaken_for_an_envelope():
    answer = '{"result": "approve", "escalate": false}'
    assert parse_engine_output(answer)["text"] == answer


def test_non_zero_exit_is_a_failed_reply_with_the_last_stderr_line_and_raw_output(tmp_path):
    command = script(tmp_path, "crash.sh", """
        echo "partial answer"
        echo "Traceback (most recent call last):" >&2
        echo "RuntimeError: model overloaded" >&2
        exit 3
    """)
    reply = run_engine(command, "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.exit_code == 3 and not reply.could_not_start
    assert reply.reason == "engine exited with code 3: RuntimeError: model overloaded"
    assert reply.raw == "partial answer\n"


def test_a_slow_engine_is_killed_at_the_timeout_and_reported(tmp_path):
    reply = run_engine("echo thinking; exec sleep 30", "prompt", cwd=tmp_path, timeout=0.3)
    assert not reply.ok and reply.timed_out
    assert reply.reason == "engine timed out after 0.3s"
    assert reply.raw == "thinking\n" and reply.duration_s < 5


def test_empty_output_is_a_failed_reply(tmp_path):
    reply = run_engine("cat >/dev/null", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.reason == "engine printed no answer"


def test_an_unknown_command_is_an_engine_that_could_not_start_not_a_crash(tmp_path):
    reply = run_engine("no-such-engine-xyz --flag", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.exit_code == 127 and reply.could_not_start
    assert "could not start" in reply.reason and "not found" in reply.reason


def test_a_file_that_is_not_executable_could_not_start(tmp_path):
    (tmp_path / "engine").write_text("#!/bin/sh\necho hi\n")
    reply = run_engine("./engine", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.exit_code == 126 and reply.could_not_start


@pytest.mark.parametrize("interpreter", ["python3", "sh", "node"])
def test_an_interpreter_that_cannot_open_the_engines_script_could_not_start(tmp_path, interpreter):
    reply = run_engine(f"{interpreter} {tmp_path}/moved-away/engine", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.could_not_start and reply.exit_code in (1, 2)
    assert "could not start" in reply.reason


def test_an_engine_script_that_itself_exits_2_or_misses_a_module_ran(tmp_path):
    usage = script(tmp_path, "usage.py", "import argparse\nargparse.ArgumentParser().parse_args()\n")
    reply = run_engine(f"python3 {usage.split()[-1]} --fast", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.exit_code == 2 and not reply.could_not_start
    (tmp_path / "engine.js").write_text("require('no-such-package-xyz');\n")
    reply = run_engine(f"node {tmp_path}/engine.js", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.exit_code == 1 and not reply.could_not_start


def test_an_engine_that_itself_exits_127_ran(tmp_path):
    reply = run_engine("cat >/dev/null; echo 'model said no' >&2; exit 127", "prompt", cwd=tmp_path, timeout=10)
    assert not reply.ok and reply.exit_code == 127 and not reply.could_not_start


def test_a_process_that_cannot_start_is_flagged_as_infrastructure(tmp_path):
    reply = run_engine("echo hi", "prompt", cwd=tmp_path / "missing", timeout=10)
    assert not reply.ok and reply.could_not_start and reply.exit_code is None
    assert "could not start" in reply.reason


def test_an_engine_that_ignores_stdin_still_answers(tmp_path):
    # A closed pipe on our side must not turn a good answer into a failure.
    reply = run_engine("echo '{\"risk\": \"low\"}'", "x" * 1_000_000, cwd=tmp_path, timeout=10)
    assert reply.ok and reply.text.strip() == '{"risk": "low"}'
