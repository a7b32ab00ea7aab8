#!/usr/bin/env python3
"""A scripted planner engine: answers a valid two-sprint plan for any request, offline.

Reads the planner prompt on stdin like any engine and prints, the way models
often do, a sentence of prose and a fenced JSON block
``{"spec": ..., "contracts": [...]}`` built from a fixed template, with the
request as the description and a slug of it in the spec id.

Environment:
  SCRIPTED_PLANNER_BAD_ATTEMPTS=N   answer N invalid plans first (odd calls break the seed's
                                    rules, even calls make a dependency cycle); needs
  SCRIPTED_PLANNER_STATE_DIR=DIR    where the call counter lives (each call is a new process)
  SCRIPTED_PLANNER_DATE=YYYYMMDD    the date in the spec id (default: today, UTC)
  SCRIPTED_PLANNER_ENVELOPE=1       wrap the answer in a Claude-style JSON envelope with usage and cost

Usage:
  sprintflow plan "Add a todo API" --engine "python3 examples/planner/scripted_planner.py"
"""

import json
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path


def request_of(prompt: str) -> str:
    match = re.search(r"## Request\n(.*?)\n\n## ", prompt, re.DOTALL)
    return match.group(1).strip() if match else prompt.strip()[:200]


def spec_id_for(request: str, prompt: str) -> str:
    """spec-<date>-<slug>, with a numeric suffix when the prompt lists that id as taken."""
    date = os.environ.get("SCRIPTED_PLANNER_DATE") or datetime.now(UTC).strftime("%Y%m%d")
    slug = "-".join(re.findall(r"[a-z0-9]+", request.lower())[:5]) or "plan"
    spec_id, suffix = f"spec-{date}-{slug}", 2
    while f"- sprint-{spec_id}-1" in prompt:
        spec_id, suffix = f"spec-{date}-{slug}-{suffix}", suffix + 1
    return spec_id


def contract(spec_id: str, number: int, title: str, request: str, criteria: list, depends_on: list) -> dict:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "contractId": f"sprint-{spec_id}-{number}", "specId": spec_id, "sprintNumber": number,
        "title": title, "description": f"{title} for this request: {request}",
        "status": "proposed", "createdAt": now, "updatedAt": now,
        "dependsOn": depends_on, "features": ["feat-1"],
        "successCriteria": [
            {"criterionId": f"sc-{number}-{k}", "description": text, "verificationMethod": method, "required": True}
            for k, (method, text) in enumerate(criteria, start=1)],
        "generatorNotes": "Keep changes small; follow the patterns of the existing files.",
        "evaluatorNotes": "Run the build and the tests; check each criterion on its own.",
        "estimatedFiles": [], "estimatedDuration": "small",
    }


def valid_plan(request: str, prompt: str) -> dict:
    spec_id = spec_id_for(request, prompt)
    first = contract(spec_id, 1, "Implement the core logic", request, [
        ("build", "The build command exits with code 0."),
        ("unit-test", "The unit tests of the new logic pass with zero failures."),
    ], [])
    second = contract(spec_id, 2, "Expose the logic through the API", request, [
        ("build", "The build command exits with code 0."),
        ("api-check", "GET /health returns 200 with the JSON body {\"ok\": true}."),
    ], [first["contractId"]])
    spec = {"specId": spec_id, "title": request[:80], "description": request,
            "features": [{"featureId": "feat-1", "title": request[:80]}],
            "contracts": [first["contractId"], second["contractId"]]}
    return {"spec": spec, "contracts": [first, second]}


def invalid_plan(request: str, prompt: str, call: int) -> dict:
    plan = valid_plan(request, prompt)
    first, second = plan["contracts"]
    if call % 2:  # the seed's rules: a vague criterion, no build criterion, a bad criterion id
        first["successCriteria"] = [{"criterionId": "sc-1-0", "description": "The page looks good.",
                                     "verificationMethod": "manual", "required": True}]
    else:  # a dependency cycle between the two sprints
        first["dependsOn"] = [second["contractId"]]
    return plan


def next_call() -> int:
    """This call's 1-based number, counted in a file because every call is a new process."""
    state = os.environ.get("SCRIPTED_PLANNER_STATE_DIR")
    if not state:
        sys.exit("SCRIPTED_PLANNER_BAD_ATTEMPTS needs SCRIPTED_PLANNER_STATE_DIR (a folder for the counter)")
    counter = Path(state) / "scripted-planner-calls"
    call = int(counter.read_text() or 0) + 1 if counter.exists() else 1
    counter.write_text(str(call))
    return call


def main() -> None:
    prompt = sys.stdin.read()
    request = request_of(prompt)
    bad = int(os.environ.get("SCRIPTED_PLANNER_BAD_ATTEMPTS") or 0)
    call = next_call() if bad else 1
    plan = invalid_plan(request, prompt, call) if call <= bad else valid_plan(request, prompt)
    answer = f"Here is the plan.\n\n```json\n{json.dumps(plan, indent=2)}\n```\n"
    if os.environ.get("SCRIPTED_PLANNER_ENVELOPE") == "1":
        answer = json.dumps({"type": "result", "is_error": False, "result": answer, "total_cost_usd": 0.0125,
                             "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(answer) // 4}})
    print(answer)


if __name__ == "__main__":
    main()
