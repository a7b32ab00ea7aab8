"""Whether a Prefect server is configured, read without importing Prefect."""

from pathlib import Path

from sprintflow.io.layout import WorkspaceLayout
from sprintflow.settings import configured_api_url, get_settings, prefect_api_configured


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
