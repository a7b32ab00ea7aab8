"""The declared deployments, entry flows, work-pool templates and automations are valid for Prefect.

No server needed: each file is checked against Prefect's own models and schemas.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import jsonschema
import pytest
from prefect.flows import load_flow_from_entrypoint
from prefect.utilities.callables import parameter_schema

from sprintflow.deployments.serving import load_automations, load_prefect_yaml, runner_deployments

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENTS = ROOT / "deployments"


@pytest.fixture(scope="module")
def config() -> dict:
    return load_prefect_yaml(DEPLOYMENTS / "prefect.yaml")


def _flow(spec: dict):
    return load_flow_from_entrypoint(spec["entrypoint"])


def test_prefect_yaml_declares_the_four_deployments(config):
    by_name = {d["name"]: d for d in config["deployments"]}
    assert set(by_name) == {"nightly-evaluate", "manual-sprint", "nightly-score", "weekly-report"}
    assert by_name["nightly-evaluate"]["schedules"][0]["cron"] == "0 2 * * *"
    assert by_name["nightly-score"]["schedules"][0]["cron"]
    assert by_name["weekly-report"]["schedules"][0]["cron"].endswith("* * 1")  # Mondays
    assert "schedules" not in by_name["manual-sprint"]  # run by hand
    assert all(d["work_pool"]["name"] == "sprintflow-process" for d in config["deployments"])
    assert config["pull"][0]["prefect.deployments.steps.set_working_directory"]["directory"] == \
        "{{ $SPRINTFLOW_ROOT }}"


def test_each_entry_flow_takes_one_typed_model_with_descriptions(config):
    for spec in config["deployments"]:
        schema = parameter_schema(_flow(spec).fn).model_dump()
        assert list(schema["properties"]) == ["params"], spec["name"]
        model = schema["definitions"][schema["properties"]["params"]["$ref"].rsplit("/", 1)[-1]]
        assert model["properties"]["git_url"]["description"]
        assert all(field.get("description") for field in model["properties"].values()), spec["name"]
        # The declared parameters are valid input for the form.
        _flow(spec).validate_parameters(spec["parameters"] or _required_only(spec))


def _required_only(spec: dict) -> dict:
    return {"params": {"workspace": "."}} if spec["name"] == "manual-sprint" else {}


def test_evaluate_form_offers_the_executor_choices(config):
    spec = next(d for d in config["deployments"] if d["name"] == "nightly-evaluate")
    schema = parameter_schema(_flow(spec).fn).model_dump()
    fields = schema["definitions"]["EvaluateParams"]["properties"]
    choices = fields["executor"]["anyOf"][0]  # the names of sprintflow.kinds, one definition for every form
    assert schema["definitions"][choices["$ref"].rsplit("/", 1)[-1]]["enum"] == ["auto", "docker", "local"]
    assert fields["executor"]["default"] is None  # None: the workspace config's executor.kind
    assert fields["task_runner"]["anyOf"][0]["enum"] == ["threads", "dask"]
    assert schema["definitions"]["EvaluateParams"]["required"] == ["workspace", "contract"]


def test_a_field_without_a_working_default_is_required_in_the_form(config):
    """The form's defaults must run: the workspace has none ('.' was the serve process's own folder)."""
    for spec in config["deployments"]:
        schema = parameter_schema(_flow(spec).fn).model_dump()
        model = schema["definitions"][schema["properties"]["params"]["$ref"].rsplit("/", 1)[-1]]
        assert "workspace" in model["required"], spec["name"]
        assert "default" not in model["properties"]["workspace"]


def test_serve_builds_runner_deployments_with_schedules(config, monkeypatch):
    monkeypatch.chdir("/")  # module entrypoints: an installed package serves them from anywhere
    deployments = {d.name: d for d in runner_deployments(config)}
    assert deployments["nightly-evaluate"].entrypoint == "sprintflow.deployments.flows.evaluate_workspace"
    assert deployments["nightly-evaluate"].schedules[0].schedule.cron == "0 2 * * *"
    assert deployments["manual-sprint"].schedules == []
    assert deployments["weekly-report"].parameters["params"]["since_days"] == 7


@pytest.mark.parametrize("kind", ["docker", "kubernetes"])
def test_job_templates_are_valid_and_use_the_sandbox_image(kind):
    template = json.loads((DEPLOYMENTS / "work-pools" / f"{kind}-job-template.json").read_text())
    variables = template["variables"]
    jsonschema.Draft202012Validator.check_schema(variables)
    defaults = {k: v["default"] for k, v in variables["properties"].items() if "default" in v}
    jsonschema.validate(defaults, variables)
    assert defaults["image"].startswith("sprintflow-sandbox:")
    # Every placeholder in the job configuration names a variable (Prefect refuses others).
    placeholders = set(re.findall(r"{{\s*([\w.]+)\s*}}", json.dumps(template["job_configuration"])))
    assert placeholders <= set(variables["properties"]), placeholders - set(variables["properties"])


def test_automations_are_valid_prefect_automations():
    ids = {}
    automations = load_automations(DEPLOYMENTS / "automations.yaml",
                                   lambda name: ids.setdefault(name, uuid.uuid4()))
    by_name = {a.name: a for a in automations}
    rework = by_name["sprintflow-contract-needs-rework"]
    assert rework.trigger.expect == {"sprintflow.contract.needs-rework"}
    assert by_name["sprintflow-score-dropped"].trigger.expect == {"sprintflow.score.dropped"}
    assert rework.actions[0].deployment_id == ids["report-workspace/weekly-report"]
    assert set(ids) <= {f"{_flow(d).name}/{d['name']}" for d in load_prefect_yaml(
        DEPLOYMENTS / "prefect.yaml")["deployments"]}

