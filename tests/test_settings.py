"""Whether a Prefect server is configured, read without importing Prefect."""

from pathlib import Path

from sprintflow.io.layout import WorkspaceLayout
from sprintflow.orchestration.api import configured_api_url, prefect_api_configured
from sprintflow.settings import get_settings


def test_no_server_is_configured_without_the_variable_or_a_readable_profiles_file(tmp_path, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_PROFILE", raising=False)
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "missing.toml"))
    assert configured_api_url() is None
    assert prefect_api_configured() is False
    (tmp_path / "broken.toml").write_text("active = ")
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "broken.toml"))
    assert configured_api_url() is None


def test_the_active_profile_names_the_server(tmp_path, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_PROFILE", raising=False)
    profiles = tmp_path / "profiles.toml"
    profiles.write_text('active = "work"\n[profiles.work]\nPREFECT_API_URL = "http://127.0.0.1:4300/api"\n')
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(profiles))
    assert configured_api_url() == "http://127.0.0.1:4300/api"
    assert prefect_api_configured() is True


def test_a_variable_set_to_nothing_is_read_as_unset_not_as_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPRINTFLOW_HISTORY", "")
    monkeypatch.setenv("SPRINTFLOW_JUDGE_HOME", "")
    layout = WorkspaceLayout(tmp_path / "workspace")
    assert layout.history_dir == tmp_path / "workspace" / ".sprintflow" / "history"
    # The judge's store stays out of the current folder (a workspace, perhaps) too.
    assert get_settings().judge_home_path == (Path.home() / ".cache" / "sprintflow" / "judge").resolve()
    monkeypatch.setenv("SPRINTFLOW_HISTORY", str(tmp_path / "shared"))
    assert layout.history_dir == tmp_path / "shared"


def test_every_setting_is_read_through_the_model_and_nowhere_else():
    """No module reads a setting's variable from the environment itself (the names are defined once)."""
    import re

    from sprintflow.settings import Settings

    variables = {Settings.variable(name) for name in Settings.model_fields}
    root = Path(__file__).resolve().parents[1]
    readers = []
    for folder in ("sprintflow", "flows", "tasks", "deployments", "schemas"):
        for path in (root / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for match in re.finditer(r"""(?:environ(?:\.get)?|getenv)\s*[\[(]\s*f?["'](SPRINTFLOW_\w+)["']""", text):
                if match[1] in variables:
                    readers.append(f"{path.relative_to(root)}: {match[0]}")
    assert readers == []
    assert len(variables) == len(Settings.model_fields) >= 13


def test_the_settings_command_lists_every_setting_and_names_a_bad_value(tmp_path):
    import json
    import subprocess
    import sys

    from sprintflow.settings import Settings

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SPRINTFLOW_HISTORY": str(tmp_path / "shared"),
           "SPRINTFLOW_ENGINE": "claude --api-key sk-ant-abcdefghijklmnopqrstuvwxyz0123"}
    listed = subprocess.run([sys.executable, "-m", "sprintflow", "settings", "--json"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = {row["variable"]: row for row in map(json.loads, listed.stdout.splitlines())}
    assert set(rows) == {Settings.variable(name) for name in Settings.model_fields}
    assert rows["SPRINTFLOW_HISTORY"]["value"] == str(tmp_path / "shared")
    assert rows["SPRINTFLOW_HISTORY"]["source"] == "environment" and rows["SPRINTFLOW_SERVER_PORT"]["value"] == "4200"
    assert "sk-ant-" not in listed.stdout and all(row["description"] for row in rows.values())
    bad = subprocess.run([sys.executable, "-m", "sprintflow", "settings"], env={**env, "SPRINTFLOW_SERVER_PORT": "0"},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "SPRINTFLOW_SERVER_PORT" in bad.stderr and "Traceback" not in bad.stderr


def test_settings_of_a_mapping_read_that_mapping_alone(monkeypatch):
    """An engine's environment (a mapping given to ``Settings.of``) is not mixed with the process's own: a
    variable set only in the process does not leak into the settings of a mapping without it."""
    from sprintflow.settings import Settings

    monkeypatch.setenv("SPRINTFLOW_ENGINE", "from-the-process")
    monkeypatch.setenv("SPRINTFLOW_SERVER_PORT", "4301")
    assert Settings.of({}).engine is None
    assert Settings.of({}).server_port == Settings.model_fields["server_port"].default
    assert Settings.of({"SPRINTFLOW_ENGINE": "given"}).engine == "given"
    assert get_settings().engine == "from-the-process" and get_settings().server_port == 4301
