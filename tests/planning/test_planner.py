"""The planner's plain functions; engines are real commands (the bundled scripted planner, shell one-liners)."""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

import pytest

from sprintflow.engines import EngineReply
from sprintflow.errors import DocumentError, EngineError
from sprintflow.planning.planner import (
    EXAMPLE_ANSWER,
    call_planner,
    existing_contracts,
    normalise_answer,
    plan_problems,
    plan_request,
    planner_prompt,
    run_planner,
    workspace_listing,
)
from sprintflow.schemas import SprintContract

PLANNER = Path(__file__).resolve().parents[2] / "examples" / "planner" / "scripted_planner.py"
SCRIPTED = f"{sys.executable} {PLANNER}"
LABEL = "planner answer (attempt 1)"
SPEC = "spec-20260115-todo-api"
IDS = [f"sprint-{SPEC}-1", f"sprint-{SPEC}-2"]


@pytest.fixture(autouse=True)
def no_engine_from_the_environment(monkeypatch):
    for name in ("SPRINTFLOW_ENGINE", "SPRINTFLOW_PLANNER_ENGINE", "SCRIPTED_PLANNER_BAD_ATTEMPTS",
                 "SCRIPTED_PLANNER_ENVELOPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCRIPTED_PLANNER_DATE", "20260115")


def two_sprints() -> dict:
    """The bundled example answer grown to two sprints, the second after the first."""
    answer = copy.deepcopy(EXAMPLE_ANSWER)
    second = copy.deepcopy(answer["contracts"][0])
    second.update(contractId=IDS[1], sprintNumber=2, dependsOn=[IDS[0]])
    for index, criterion in enumerate(second["successCriteria"], start=1):
        criterion["criterionId"] = f"sc-2-{index}"
    answer["contracts"].append(second)
    answer["spec"]["contracts"] = []
    normalise_answer(answer, "Add a todo API")
    return answer


def problems_of(answer, **kwargs) -> list[str]:
    return [str(p) for p in plan_problems(answer, LABEL, **kwargs)]


def contract_model(answer: dict, index: int) -> SprintContract:
    return SprintContract.model_validate(answer["contracts"][index])


# --------------------------------------------------------------------------- checking one answer


def test_the_example_shown_to_the_engine_is_a_valid_plan():
    answer = copy.deepcopy(EXAMPLE_ANSWER)
    normalise_answer(answer, "Add a todo API")
    assert plan_problems(answer, LABEL) == []
    assert plan_problems(two_sprints(), LABEL) == []


def test_normalise_fills_the_request_the_contract_list_and_timestamps_only():
    answer = two_sprints()
    assert answer["spec"]["request"] == "Add a todo API"
    assert answer["spec"]["contracts"] == IDS
    del answer["contracts"][0]["createdAt"], answer["contracts"][0]["updatedAt"]
    del answer["contracts"][0]["status"]
    normalise_answer(answer, "Add a todo API", now="2026-01-16T00:00:00Z")
    assert answer["contracts"][0]["updatedAt"] == "2026-01-16T00:00:00Z"
    assert "status" not in answer["contracts"][0]


@pytest.mark.parametrize(("answer", "expected"), [
    ([1, 2], f"{LABEL}: $: the answer must be one JSON object"),
    ({"contracts": [{}]}, f"{LABEL}: spec: missing or not an object"),
    ({"spec": {}, "contracts": []}, f"{LABEL}: contracts: missing, empty or not a list"),
    ({"spec": {}, "contracts": ["sprint 1"]}, f"{LABEL}: contracts/0: each contract must be a JSON object"),
])
def test_an_answer_of_the_wrong_shape_is_named_at_its_path(answer, expected):
    assert any(p.startswith(expected) for p in problems_of(answer))


def test_schema_and_seed_rule_problems_carry_the_contract_path():
    answer = two_sprints()
    del answer["spec"]["title"]
    criteria = answer["contracts"][1]["successCriteria"]
    criteria[0].update(description="The page looks good.", verificationMethod="manual")
    criteria[1]["criterionId"] = "sc-1-2"
    assert problems_of(answer) == [
        f"{LABEL}: spec: 'title' is a required property",
        f"{LABEL}: contracts/1/successCriteria: needs at least one build criterion",  # in document order
        (f"{LABEL}: contracts/1/successCriteria/0/description: vague criterion ('looks good'): "
        "state an observable, checkable outcome"),
        f"{LABEL}: contracts/1/successCriteria/1/criterionId: 'sc-1-2' must be sc-2-<n> (1-indexed)",
    ]


def test_plan_rules_one_spec_sprints_one_to_n_proposed_no_duplicates_listed_in_order():
    answer = two_sprints()
    answer["contracts"][1].update(specId="spec-20260115-other", sprintNumber=3, status="in-progress")
    answer["contracts"][0]["contractId"] = IDS[1]
    answer["spec"]["contracts"] = list(reversed(IDS))
    found = problems_of(answer)
    for expected in [
        f"{LABEL}: contracts/1/specId: must be the spec's specId '{SPEC}'",
        f"{LABEL}: contracts/1/sprintNumber: must be 2: sprints are numbered 1..N in order",
        f"{LABEL}: contracts/1/status: a new contract's status must be 'proposed'",
        f"{LABEL}: contracts/0/contractId: must be '{IDS[0]}' (sprint-<specId>-<sprintNumber>)",
    ]:
        assert expected in found
    answer = two_sprints()
    answer["contracts"][1] = copy.deepcopy(answer["contracts"][0])
    found = problems_of(answer)
    assert f"{LABEL}: contracts/1/contractId: duplicate contract id '{IDS[0]}'" in found
    assert f"{LABEL}: contracts/1/sprintNumber: must be 2: sprints are numbered 1..N in order" in found


def test_spec_contracts_must_list_the_ids_in_sprint_order():
    answer = two_sprints()
    answer["spec"]["contracts"] = list(reversed(IDS))
    assert problems_of(answer) == [f"{LABEL}: spec/contracts: must list the contract ids in sprint order: {IDS}"]


@pytest.mark.parametrize("spec_id", ["spec-../../etc", "Spec-2026-X", "spec-2026/x", "plan-20260115"])
def test_a_spec_id_that_could_not_be_a_file_name_is_refused(spec_id):
    answer = two_sprints()
    answer["spec"]["specId"] = spec_id
    assert any(p.startswith(f"{LABEL}: spec/specId: {spec_id!r} must be spec-<yyyymmdd>-<slug>")
               for p in problems_of(answer))


def test_depends_on_must_name_a_contract_of_the_plan_or_on_disk():
    answer = two_sprints()
    answer["contracts"][1]["dependsOn"] = ["sprint-spec-20250101-old-1"]
    assert problems_of(answer) == [f"{LABEL}: contracts/1/dependsOn/0: unknown contract 'sprint-spec-20250101-old-1'"]
    old = contract_model(two_sprints(), 0).model_copy(update={"contract_id": "sprint-spec-20250101-old-1"})
    assert problems_of(answer, existing={old.contract_id: old}) == []


def test_a_dependency_cycle_is_reported_on_the_contract_that_closes_it():
    answer = two_sprints()
    answer["contracts"][0]["dependsOn"] = [IDS[1]]
    assert problems_of(answer) == [
        f"{LABEL}: contracts/0/dependsOn: dependency cycle: {IDS[0]} -> {IDS[1]} -> {IDS[0]}"]


def test_a_cycle_through_a_contract_on_disk_is_found_too():
    answer = two_sprints()
    on_disk = contract_model(two_sprints(), 0).model_copy(
        update={"contract_id": "sprint-spec-20250101-old-1", "depends_on": [IDS[1]]})
    answer["contracts"][0]["dependsOn"] = [on_disk.contract_id]
    found = problems_of(answer, existing={on_disk.contract_id: on_disk})
    assert len(found) == 1 and "dependency cycle" in found[0] and on_disk.contract_id in found[0]


def test_ids_already_on_disk_are_refused_unless_forced():
    answer = two_sprints()
    existing = {IDS[0]: contract_model(answer, 0)}
    assert problems_of(answer, existing=existing, existing_specs=[SPEC]) == [
        (f"{LABEL}: spec/specId: '{SPEC}' already exists in .sprintflow/specs/: choose another specId "
        "(or --force to overwrite)"),
        (f"{LABEL}: contracts/0/contractId: '{IDS[0]}' already exists in .sprintflow/contracts/: "
        "choose another specId (or --force to overwrite)"),
    ]
    assert problems_of(answer, existing=existing, existing_specs=[SPEC], force=True) == []


# --------------------------------------------------------------------------- prompt and context


def test_the_prompt_has_request_rules_example_existing_ids_files_and_previous_problems(tmp_path):
    prompt = planner_prompt("Add tags to todos", ["src/app.py"], ["sprint-spec-1-x-1"])
    for part in ["## Request\nAdd tags to todos", '{"spec": <PlanSpec>, "contracts": [<SprintContract>, ...]}',
                 "sc-<sprintNumber>-<k>", '"looks good"', f'"specId":"{SPEC}"', "- sprint-spec-1-x-1",
                 "- src/app.py"]:
        assert part in prompt
    assert "## Your previous answer was rejected" not in prompt
    problems = plan_problems({"spec": {}, "contracts": []}, LABEL)
    again = planner_prompt("Add tags to todos", [], previous=problems)
    assert again.startswith(prompt.split("## Answer format")[0])  # the request is repeated
    assert "\n".join(str(p) for p in problems) in again  # verbatim


def test_the_workspace_listing_is_bounded_and_skips_tool_folders(tmp_path):
    for name in ["b.py", "a.py", "node_modules/x.js", ".git/HEAD", "src/c.py", ".sprintflow/specs/s.json"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert workspace_listing(tmp_path) == ["a.py", "b.py", "src/c.py"]
    assert workspace_listing(tmp_path, limit=2) == ["a.py", "b.py"]
    assert "(only the first 200 files are listed)" in planner_prompt("x", [f"f{i}" for i in range(200)])


# --------------------------------------------------------------------------- the re-ask loop, real engines


def ask_with(engine: str, workspace: Path, prompts: list[str], timeout: float = 20):
    """A real engine call that also keeps the prompts it sent, to read the re-asks."""
    def ask(prompt: str) -> EngineReply:
        prompts.append(prompt)
        return call_planner(engine, prompt, workspace, timeout)
    return ask


def test_invalid_twice_then_valid_reasks_with_every_problem_and_keeps_the_raw_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRIPTED_PLANNER_BAD_ATTEMPTS", "2")
    monkeypatch.setenv("SCRIPTED_PLANNER_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("SCRIPTED_PLANNER_ENVELOPE", "1")
    prompts: list[str] = []
    plan = plan_request("Add a todo API", tmp_path, ask_with(SCRIPTED, tmp_path, prompts))
    first, second, third = plan.attempts
    assert "vague criterion ('looks good')" in str(first.problems)
    assert "dependency cycle" in str(second.problems)
    assert third.problems == [] and third.raw_path is None
    for attempt, prompt in zip([first, second], prompts[1:], strict=True):
        assert "## Request\nAdd a todo API" in prompt
        assert "\n".join(str(p) for p in attempt.problems) in prompt
        assert attempt.raw_path.name.endswith(f"-attempt-{attempt.number}.txt")
        kept = json.loads(attempt.raw_path.read_text())  # exactly what the engine printed: its envelope
        assert kept["total_cost_usd"] == 0.0125
    planning = plan.spec.model_extra["planning"]
    assert [a["problems"] for a in planning["attempts"]] == [3, 1, 0]
    assert planning["costUsd"] == 0.0375
    assert planning["inputTokens"] == sum(a["inputTokens"] for a in planning["attempts"]) > 0
    assert plan.spec.contracts == [c.contract_id for c in plan.contracts]
    assert not (tmp_path / ".sprintflow" / "contracts").exists()  # plan_request writes only rejects


def test_a_plan_is_written_atomically_and_validates_again_from_disk(tmp_path):
    plan, written = run_planner("Add a todo API", tmp_path, SCRIPTED)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        f".sprintflow/contracts/sprint-spec-20260115-add-a-todo-api-{n}.json" for n in (1, 2)
    ] + [".sprintflow/specs/spec-20260115-add-a-todo-api.json"]
    assert list(existing_contracts(tmp_path)) == plan.spec.contracts
    spec = json.loads(written[-1].read_text())
    assert spec["request"] == "Add a todo API" and spec["planning"]["attempts"][0]["ok"] is True
    assert not list(tmp_path.rglob("*.tmp"))


def test_planning_again_never_overwrites_and_force_does(tmp_path):
    run_planner("Add a todo API", tmp_path, SCRIPTED)
    before = {p: p.read_text() for p in (tmp_path / ".sprintflow").rglob("*.json")}
    # Blind to the taken ids in the prompt, the planner answers the same ids: refused on every attempt.
    blind = f"sed 's/^- sprint-.*//' | {SCRIPTED}"
    with pytest.raises(EngineError, match="already exists in .sprintflow/contracts/") as failure:
        run_planner("Add a todo API", tmp_path, blind, max_attempts=1)
    assert "raw answers saved in:" in str(failure.value)
    assert {p: p.read_text() for p in before} == before
    plan, _ = run_planner("Add a todo API", tmp_path, blind, force=True)
    assert plan.spec.spec_id == "spec-20260115-add-a-todo-api"
    # The scripted planner reads the taken ids from the prompt and picks a fresh spec id.
    again, _ = run_planner("Add a todo API", tmp_path, SCRIPTED)
    assert again.spec.spec_id == "spec-20260115-add-a-todo-api-2"


LARGE = f"{sys.executable} -c \"import sys; sys.stdout.write('{{\\\"spec\\\": \\\"' + 'x' * 50_000_000 + '\\\"}}')\""


@pytest.mark.parametrize(("engine", "timeout", "reason"), [
    ("true", 10, "$: engine printed no answer"),
    ("echo 'I would split this into three sprints.'", 10, "$: no JSON object in the answer (39 characters)"),
    ("echo '{\"plan\": [1, 2]}'", 10, "spec: missing or not an object"),
    ("echo '[{\"spec\": {}}]'", 10, "contracts: missing, empty or not a list"),
    ("echo 'overloaded' >&2; exit 3", 10, "$: engine exited with code 3: overloaded"),
    (LARGE, 20, "$: no JSON object in the answer (1000044 characters); the output was cut at the size limit"),
    ("sleep 5", 0.5, "$: engine timed out after 0.5s"),
])
def test_bad_engine_output_is_a_clear_failure_with_the_raw_output_kept(tmp_path, engine, timeout, reason):
    started = time.monotonic()
    with pytest.raises(EngineError) as failure:
        run_planner("Add a todo API", tmp_path, engine, max_attempts=2, timeout=timeout)
    message = str(failure.value)
    assert message.startswith("the planner gave no valid plan in 2 attempt(s):")
    assert f"planner answer (attempt 1): {reason}" in message
    assert f"planner answer (attempt 2): {reason}" in message
    rejected = sorted((tmp_path / ".sprintflow" / "specs" / "rejected").iterdir())
    assert [p.name.split("-", 1)[1] for p in rejected] == ["attempt-1.txt", "attempt-2.txt"]
    assert all(str(p) in message for p in rejected)
    assert rejected[0].stat().st_size <= 1_100_000  # capped, never 50 MB
    assert not (tmp_path / ".sprintflow" / "contracts").exists()
    assert time.monotonic() - started < 15


def test_stderr_is_kept_when_the_engine_printed_nothing_on_stdout(tmp_path):
    with pytest.raises(EngineError):
        run_planner("x", tmp_path, "echo 'quota exceeded' >&2; exit 1", max_attempts=1)
    [kept] = (tmp_path / ".sprintflow" / "specs" / "rejected").iterdir()
    assert kept.read_text() == "[stderr]\nquota exceeded\n"


def test_the_engine_and_timeout_come_from_the_config_when_not_given(tmp_path, monkeypatch):
    (tmp_path / "sprintflow.toml").write_text(f'[engines]\nplanner = "{SCRIPTED}"\n')
    plan, _ = run_planner("Add a todo API", tmp_path)
    assert len(plan.contracts) == 2
    monkeypatch.setenv("SPRINTFLOW_PLANNER_ENGINE", "sleep 5")
    (tmp_path / "sprintflow.toml").write_text('[engines]\ntimeout = 0.3\n')
    with pytest.raises(EngineError, match=r"engine timed out after 0.3s"):
        run_planner("Add a todo API", tmp_path, max_attempts=1)


def test_an_empty_request_or_invalid_contracts_on_disk_stop_before_any_engine_call(tmp_path):
    with pytest.raises(EngineError, match="the feature request is empty"):
        run_planner("  ", tmp_path, "false")
    (tmp_path / ".sprintflow" / "contracts").mkdir(parents=True)
    (tmp_path / ".sprintflow" / "contracts" / "bad.json").write_text("{ nope")
    with pytest.raises(DocumentError, match="invalid JSON"):
        run_planner("Add a todo API", tmp_path, "false")
    assert not (tmp_path / ".sprintflow" / "specs").exists()
