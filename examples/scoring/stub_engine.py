#!/usr/bin/env python3
"""A scripted triage engine: answers from the PR context, deterministically, offline.

Reads the prompt on stdin like any engine, applies the rules the prompt states
(it honours the CI-workflow rule only when the prompt contains it, so two prompt
versions score differently) and prints its answer the way models often do:
a sentence of prose and a fenced JSON block.
"""

import json
import re
import sys

SENSITIVE = ("auth", "payment", "migration", "security")
CI_RULE = "Escalate any change to CI workflows"

prompt = sys.stdin.read()
instructions, _, context = prompt.partition("## Pre-fetched PR context")
files = re.findall(r"^- (\S+) \(\+(\d+) -(\d+)\)", context, re.MULTILINE)
changed = sum(int(added) + int(removed) for _, added, removed in files)
paths = [path for path, _, _ in files]

reasons = [f"touches {path}" for path in paths if any(word in path for word in SENSITIVE)]
if changed > 500:
    reasons.append(f"{changed} changed lines")
if CI_RULE in instructions and any(path.startswith(".github/workflows/") for path in paths):
    reasons.append("changes a CI workflow")
escalate = bool(reasons)
if escalate:
    risk = "high"
elif any(path.startswith("src/") and "/tests/" not in path for path in paths):
    risk = "medium"
else:
    risk = "low"

why = "; ".join(reasons) or f"{len(paths)} file(s), {changed} changed lines, nothing sensitive"
print("Here is my triage of this pull request.\n")
print("```json")
print(json.dumps({"escalate": escalate, "risk": risk, "why": why}))
print("```")
