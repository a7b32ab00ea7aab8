"""Strategies see an allowlisted environment; credentials never reach what we store or show."""

from __future__ import annotations

import json

import pytest
from prefect.client.orchestration import get_client

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.io import secrets
from sprintflow.io.secrets import looks_secret, mask_data, mask_secrets, strategy_env
from sprintflow.orchestration.runs import run_flow

DATABASE_URL = "postgres://app:s3cr3t-passw0rd@db.internal:5432/app"
STRIPE_SK = "sk_live_51HxQpZ2eZvKYlo2CabcdefghijKLMN"
SENTRY_DSN = "https://0123456789abcdef0123456789abcdef@o450.ingest.sentry.io/5123"
HOST_SECRETS = {"DATABASE_URL": DATABASE_URL, "STRIPE_SK": STRIPE_SK, "SENTRY_DSN": SENTRY_DSN,
                "MY_SERVICE_TOKEN": "tok-9f8e7d6c5b4a"}


@pytest.fixture
def host_secrets(monkeypatch):
    for name, value in HOST_SECRETS.items():
        monkeypatch.setenv(name, value)
    secrets._host_secrets.cache_clear()
    yield
    secrets._host_secrets.cache_clear()


@pytest.mark.parametrize(("text", "masked"), [
    (f"DATABASE_URL={DATABASE_URL}", "DATABASE_URL=postgres://app:***@db.internal:5432/app"),
    ("redis://:hunter2hunter2@cache:6379", "redis://:***@cache:6379"),
    (f"dsn {SENTRY_DSN}", "dsn https://***@o450.ingest.sentry.io/5123"),
    (f"key {STRIPE_SK}!", "key ***!"),
    ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "***"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "***"),
    ("AKIAIOSFODNN7EXAMPLE", "***"),
    ("xoxb-123456789012-abcdefghij", "***"),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "***"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "***"),
    ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "Bearer ***"),
    # what must stay as it is
    ("https://github.com/org/repo.git and git@github.com:org/repo", None),
    ("src/app.ts:12:5 error TS2322: Type 'string' is not assignable", None),
    ("http://localhost:3000/api/todos", None),
])
def test_credentials_are_masked_wherever_they_appear(text, masked):
    assert mask_secrets(text, known=()) == (text if masked is None else masked)


def test_documents_are_masked_value_by_value():
    document = {"output": f"url={DATABASE_URL}\n{STRIPE_SK}", "n": 1, "items": [{"evidence": SENTRY_DSN}]}
    assert mask_data(document) == {"output": "url=postgres://app:***@db.internal:5432/app\n***", "n": 1,
                                   "items": [{"evidence": "https://***@o450.ingest.sentry.io/5123"}]}


def test_exact_values_of_credential_variables_are_masked(host_secrets):
    assert mask_secrets("the token was tok-9f8e7d6c5b4a, twice: tok-9f8e7d6c5b4a") == "the token was ***, twice: ***"


def test_credentials_are_recognised_by_name_or_value():
    assert looks_secret("STRIPE_SK", "x") and looks_secret("SENTRY_DSN", "x")
    assert looks_secret("WHATEVER", DATABASE_URL) and looks_secret("UPSTREAM", STRIPE_SK)
    assert not looks_secret("NODE_ENV", "production")


def test_strategies_get_the_allowlist_and_what_the_config_names():
    host = {"PATH": "/usr/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "CI": "1",
            "NODE_OPTIONS": "--max-old-space-size=1024", "SSH_AUTH_SOCK": "/tmp/agent", **HOST_SECRETS}
    env = strategy_env({"SPRINTFLOW_ITERATION": "1"}, passed=["NODE_OPTIONS"], base=host)
    assert env == {"PATH": "/usr/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "CI": "1",
                   "NODE_OPTIONS": "--max-old-space-size=1024", "SPRINTFLOW_ITERATION": "1"}


CONTRACT = {
    "contractId": "sprint-s-1", "specId": "s", "sprintNumber": 1, "title": "t", "description": "d",
    "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
    "generatorNotes": "", "evaluatorNotes": "", "estimatedDuration": "small",
    "successCriteria": [{"criterionId": "sc-1-1", "description": "It builds.", "verificationMethod": "build",
                         "required": True},
                        {"criterionId": "sc-1-2", "description": "The suite passes.",
                         "verificationMethod": "unit-test", "required": True}]}


def test_a_real_evaluation_stores_and_publishes_no_credential(prefect_harness, tmp_path, host_secrets):
    """The host has credentials in its environment; the code under test prints its environment and a
    key hard-coded in the project; neither reaches the EvalResult nor the Prefect artifacts."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "config.py").write_text(f'STRIPE = "{STRIPE_SK}"\n')
    (workspace / "sprintflow.toml").write_text(
        '[executor]\npassEnv = ["SENTRY_DSN"]\n\n'
        '[[evaluator.strategies]]\ntype = "build"\ncommand = "env; cat config.py"\n\n'
        '[[evaluator.strategies]]\ntype = "unit-test"\ncommand = "env; echo postgres://u:$SENTRY_DSN@x; exit 1"\n')
    (workspace / "contract.json").write_text(json.dumps(CONTRACT))
    result = run_flow(evaluate_flow, str(workspace), str(workspace / "contract.json"), executor="local",
                      use_cache=False)

    build = next(s for s in result.strategy_results if s.strategy == "build")
    assert "PATH=" in build.output and "DATABASE_URL" not in build.output and "STRIPE_SK" not in build.output
    assert "SENTRY_DSN=***" in result.strategy_results[1].output  # passed by name, its value still masked
    stored = (workspace / ".sprintflow" / "evals" / f"{result.eval_id}.json").read_text()
    with get_client(sync_client=True) as client:
        published = " ".join(a.data if isinstance(a.data, str) else json.dumps(a.data)
                             for a in client.read_artifacts() if a.key and "sprint-s-1" in a.key)
    assert published and STRIPE_SK[:12] not in published
    for value in HOST_SECRETS.values():
        assert value not in stored and value not in published
    assert "s3cr3t" not in stored and "0123456789abcdef0123456789abcdef" not in stored
