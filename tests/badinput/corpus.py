"""The bad-input corpus: malformed versions of every document, config and case file sprintflow reads.

Each case is a small workspace (files by relative path) and the command that reads it. Every one
must end with exit 2, ``error:`` lines that name the file and the line or JSON path, no traceback,
and every file as it was. Built from the bundled examples' valid documents by mutation, so each
case differs from a valid input in exactly one way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_PATH = ".sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
CONTRACT = json.loads((ROOT / "examples/python-api" / CONTRACT_PATH).read_text())
CONFIG = (ROOT / "examples/python-api/sprintflow.toml").read_text()
EVAL_RESULT = {
    "evalId": "eval-sprint-spec-20260115-todo-api-1-1", "contractId": "sprint-spec-20260115-todo-api-1",
    "specId": "spec-20260115-todo-api", "timestamp": "2026-01-15T10:00:00Z", "iteration": 1,
    "overallResult": "fail", "summary": "Sprint 1 FAILED.",
    "score": {"criteriaTotal": 1, "criteriaPassed": 0, "criteriaFailed": 1, "criteriaSkipped": 0,
              "requiredPassed": 0, "requiredFailed": 1, "requiredTotal": 1},
    "strategyResults": [{"strategy": "lint", "required": True, "result": "fail", "exitCode": 1}],
    "generatorFeedback": [{"priority": "high", "category": "bug", "description": "d", "expected": "e"}],
}
CASES = (ROOT / "examples/scoring/evals/triage/cases.jsonl").read_text()
PLAN_SPEC = {"specId": "spec-20260115-todo-api", "title": "Todo API", "description": "A todo API.",
             "contracts": ["sprint-spec-20260115-todo-api-1"]}
BOBER = {"projectName": "app", "evaluator": {"maxIterations": 3, "strategies": [{"type": "lint", "required": True}]},
         "commands": {"lint": "npm run lint"}, "project": {"mode": "brownfield"}}


@dataclass(frozen=True)
class Case:
    """One malformed input and the command that reads it."""

    name: str
    files: dict[str, bytes]
    argv: list[str]
    where: str
    """What the error must name besides the file: a JSON path, ``line N``, a key."""
    file: str = ""
    """The file the error must name (default: the first one)."""
    extra: dict[str, bytes] = field(default_factory=dict)

    @property
    def named_file(self) -> str:
        return self.file or next(iter(self.files))


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def _with(document: dict, path: str, value: object) -> dict:
    """``document`` with the value at ``a/b/0/c`` replaced (``...`` deletes the key)."""
    copy = json.loads(json.dumps(document))
    *parents, last = path.split("/")
    target = copy
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    key = int(last) if isinstance(target, list) else last
    if value is ...:
        del target[key]
    else:
        target[key] = value
    return copy


# Malformed bytes any JSON document can be: the whole file, not a field.
RAW_JSON = {
    "empty": (b"", "line 1"),
    "torn": (b'{"contractId": "sprint-x-1", "title": "a', "line 1"),
    "deeply-nested": (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
    "nested-200": (b'{"title": ' + b"[" * 200 + b"]" * 200 + b"}", "nested more than"),
    "huge-integer": (b'{"sprintNumber": ' + b"9" * 5000 + b"}", "more than 4300 digits at line 1 column 18"),
    "not-utf8": (b'{"title": "caf\xe9"}', "not UTF-8: byte 0xe9 at line 1 column 15"),
    "utf16": ('{"title": "x"}'.encode("utf-16"), "looks like UTF-16"),
    "a-list": (b"[1, 2, 3]", "$"),
    "a-string": (b'"contract"', "$"),
    "null": (b"null", "$"),
    "nan-literal": (b'{"sprintNumber": NaN}', "NaN is not valid JSON (line 1 column 18)"),
    "overflowing-float": (b'{"sprintNumber": 1e999}', "sprintNumber"),
    "trailing-garbage": (b'{"a": 1} trailing', "line 1"),
    "binary": (bytes(range(256)) * 4, "not UTF-8"),
    "duplicate-key": (b'{"status": "proposed",\n "status": "completed"}',
                      "status: duplicate key 'status' (line 1, again at line 2)"),
    "duplicate-nested-key": (b'{"a": [{"b": 1,\n\n"b": 2}]}', "a/0/b: duplicate key 'b' (line 1, again at line 3)"),
    "100MB": (b'{"title": "' + b"a" * (100 << 20) + b'"}', "larger than"),
}

CONTRACT_FIELDS = [  # (JSON path, bad value, what the error names)
    ("contractId", "../../etc/passwd", "contractId"),
    ("contractId", "sprint/../x-1", "contractId"),
    ("contractId", 5, "contractId"),
    ("contractId", ..., "contractId"),
    ("specId", "../spec", "specId"),
    ("specId", None, "specId"),
    ("sprintNumber", "one", "sprintNumber"),
    ("sprintNumber", 0, "sprintNumber"),
    ("sprintNumber", 1.5, "sprintNumber"),
    ("sprintNumber", 10 ** 30, "contractId"),
    ("status", "done", "status"),
    ("status", None, "status"),
    ("title", ["a"], "title"),
    ("title", ..., "title"),
    ("successCriteria", "all of them", "successCriteria"),
    ("successCriteria", [], "successCriteria"),
    ("successCriteria/0", "a criterion", "successCriteria/0"),
    ("successCriteria/0/criterionId", "sc-9-1", "successCriteria/0/criterionId"),
    ("successCriteria/0/criterionId", None, "successCriteria/0/criterionId"),
    ("successCriteria/0/verificationMethod", "vibes", "successCriteria/0/verificationMethod"),
    ("successCriteria/0/required", "yes", "successCriteria/0/required"),
    ("successCriteria/0/description", "The code looks good", "successCriteria/0/description"),
    ("successCriteria/0/description", {"nested": True}, "successCriteria/0/description"),
    ("dependsOn", "sprint-a-1", "dependsOn"),
    ("dependsOn", ["../x"], "dependsOn/0"),
    ("dependsOn", [5], "dependsOn/0"),
    ("estimatedFiles", [None], "estimatedFiles/0"),
    ("estimatedDuration", "forever", "estimatedDuration"),
    ("iterationHistory", [{"iteration": 0}], "iterationHistory/0"),
    ("iterationHistory", {"a": 1}, "iterationHistory"),
    ("generatorNotes", 12, "generatorNotes"),
    ("lastEvalId", "../../eval", "lastEvalId"),
    ("title", "To\ud800do", "title: a lone surrogate"),
    ("successCriteria/0/description", "Builds\udc00", "successCriteria/0/description: a lone surrogate"),
    ("successCriteria/0/customCommand", "echo\x00rm -rf /", "successCriteria/0/customCommand: a NUL"),
    ("title", "Todo\x1b[2J", "title: a control character (U+001B)"),
    ("description", "a\x00b", "description: a NUL"),
    ("createdAt", "2026-02-30T09:00:00Z", "createdAt: '2026-02-30T09:00:00Z' is not a date"),
    ("updatedAt", "yesterday", "updatedAt"),
    ("sprintNumber", 2**70, "sprintNumber: an integer larger than"),
]

EVAL_FIELDS = [
    ("evalId", "../x", "evalId"),
    ("overallResult", "maybe", "overallResult"),
    ("score", "high", "score"),
    ("iteration", -1, "iteration"),
    ("strategyResults", {"a": 1}, "strategyResults"),
    ("strategyResults/0/result", "green", "strategyResults/0/result"),
    ("generatorFeedback/0/priority", "urgent", "generatorFeedback/0/priority"),
    ("timestamp", None, "timestamp"),
    ("iteration", 2**70, "iteration: an integer larger than"),
    ("iteration", 5000, "iteration"),
    ("timestamp", "2026-13-01T00:00:00Z", "timestamp"),
    ("summary", "ok\ud800", "summary: a lone surrogate"),
]

PLAN_FIELDS = [
    ("specId", "../../spec", "specId"),
    ("specId", 3, "specId"),
    ("contracts", ["../x"], "contracts/0"),
    ("contracts", "sprint-a-1", "contracts"),
    ("features", [{"title": 1}], "features/0"),
    ("title", ..., "title"),
]

# sprintflow.toml: (name, text, what the error names)
TOML = [
    ("invalid-toml", "preset = ", "line 1"),
    ("unclosed-table", "[evaluator\nmaxIterations = 3", "line 1"),
    ("duplicate-key", "preset = 'generic'\npreset = 'nextjs'", "line 2"),
    ("deeply-nested", "a = " + "[" * 5000 + "]" * 5000, "nested more than"),
    ("huge-integer", "[evaluator]\nmaxIterations = " + "9" * 5000, "at line 2"),
    ("timeout-inf", '[[evaluator.strategies]]\ntype = "lint"\ntimeout = inf', "evaluator/strategies/0/timeout"),
    ("timeout-nan", '[[evaluator.strategies]]\ntype = "lint"\ntimeout = nan', "evaluator/strategies/0/timeout"),
    ("timeout-negative", '[[evaluator.strategies]]\ntype = "lint"\ntimeout = -5', "evaluator/strategies/0/timeout"),
    ("max-warnings-text", '[[evaluator.strategies]]\ntype = "lint"\n[evaluator.strategies.config]\n'
                          'maxWarnings = "ten"', "evaluator/strategies/0/config/maxWarnings"),
    ("unknown-strategy", '[[evaluator.strategies]]\ntype = "vibe-check"', "evaluator/strategies/0/type"),
    ("strategy-not-table", "[evaluator]\nstrategies = [1, 2]", "evaluator/strategies/0"),
    ("strategies-a-string", '[evaluator]\nstrategies = "lint"', "evaluator/strategies"),
    ("max-iterations-zero", "[evaluator]\nmaxIterations = 0", "evaluator/maxIterations"),
    ("max-iterations-text", '[evaluator]\nmaxIterations = "3"', "evaluator/maxIterations"),
    ("rerun-too-many", "[evaluator]\nrerunFailures = 500", "evaluator/rerunFailures"),
    ("unknown-preset", 'preset = "django"', "preset"),
    ("unknown-top-key", 'protectedPath = ["src"]', "did you mean 'protectedPaths'"),
    ("unknown-evaluator-key", "[evaluator]\nmaxIteration = 3", "did you mean 'maxIterations'"),
    ("unknown-strategy-key", '[[evaluator.strategies]]\ntype = "lint"\nrequird = false', "did you mean 'required'"),
    ("unknown-executor-key", '[executor]\nmemmory = "1g"', "did you mean 'memory'"),
    ("executor-kind", '[executor]\nkind = "podman"', "executor/kind"),
    ("executor-cpus-zero", "[executor]\ncpus = 0", "executor/cpus"),
    ("executor-cpus-inf", "[executor]\ncpus = inf", "executor/cpus"),
    ("executor-pids-text", '[executor]\npids = "many"', "executor/pids"),
    ("pass-env-string", '[executor]\npassEnv = "HOME"', "executor/passEnv"),
    ("report-escapes", '[[evaluator.strategies]]\ntype = "lint"\n[evaluator.strategies.config]\n'
                       'format = "eslint"\nreport = "../../../../etc/hostname"',
                       "evaluator/strategies/0/config/report"),
    ("report-absolute", '[[evaluator.strategies]]\ntype = "lint"\n[evaluator.strategies.config]\n'
                        'report = "/etc/hostname"', "evaluator/strategies/0/config/report"),
    ("protected-escapes", 'protectedPaths = ["../../home"]', "protectedPaths/0"),
    ("held-out-absolute", '[sprint]\nheldOut = ["/etc"]', "sprint/heldOut/0"),
    ("tests-dir-escapes", '[tester]\ntestsDir = "../elsewhere"', "tester/testsDir"),
    ("pass-condition-loose", '[[evaluator.strategies]]\ntype = "custom"\ncommand = "x"\n'
                             '[evaluator.strategies.config]\nparseOutput = "json"\npassCondition = "output.a == 1"',
     "evaluator/strategies/0/config/passCondition"),
    ("pass-condition-bangs", '[[evaluator.strategies]]\ntype = "custom"\ncommand = "x"\n'
                             '[evaluator.strategies.config]\nparseOutput = "json"\npassCondition = "'
                             + "!" * 5000 + 'output"', "evaluator/strategies/0/config/passCondition"),
    ("pass-condition-call", '[[evaluator.strategies]]\ntype = "custom"\ncommand = "x"\n'
                            '[evaluator.strategies.config]\nparseOutput = "json"\n'
                            "passCondition = \"__import__('os')\"", "evaluator/strategies/0/config/passCondition"),
    ("pass-condition-type", '[[evaluator.strategies]]\ntype = "custom"\ncommand = "x"\n'
                            '[evaluator.strategies.config]\nparseOutput = "json"\npassCondition = 5',
     "evaluator/strategies/0/config/passCondition"),
    ("engines-a-list", "engines = [1]", "engines"),
    ("engine-timeout-text", '[engines]\ntimeout = "long"', "engines/timeout"),
    ("tester-format", '[tester]\nformat = "tap"', "tester/format"),
    ("endpoint-status-text", '[[evaluator.strategies]]\ntype = "api-check"\n[evaluator.strategies.config]\n'
                             'endpoints = [{path = "/", expectedStatus = "ok"}]',
     "evaluator/strategies/0/config/endpoints/0/expectedStatus"),
    ("not-utf8", b"preset = 'caf\xe9'", "not UTF-8: byte 0xe9 at line 1 column 14"),
    ("strategy-timeout-1e300", '[[evaluator.strategies]]\ntype = "lint"\ntimeout = 1e300',
     "evaluator/strategies/0/timeout"),
    ("executor-timeout-1e300", "[executor]\ndefaultTimeout = 1e300", "executor/defaultTimeout"),
    ("engines-timeout-1e300", "[engines]\ntimeout = 1e300", "engines/timeout"),
    ("tester-timeout-1e300", "[tester]\ntimeout = 1e300", "tester/timeout"),
    ("max-iterations-huge", "[evaluator]\nmaxIterations = 9223372036854775807", "evaluator/maxIterations"),
    ("branch-unknown-placeholder", '[sprint]\nbranchPattern = "sf/{title}"',
     "sprint/branchPattern: 'sf/{title}': unknown placeholder"),
    ("branch-climbs", '[sprint]\nbranchPattern = "../{contractId}"', "sprint/branchPattern"),
    ("memory-lots", '[executor]\nmemory = "lots"', "executor/memory: 'lots': not a memory size"),
    ("image-an-option", '[executor]\nimage = "--privileged"', "executor/image: '--privileged': not a Docker image"),
    ("strategy-image-an-option", '[[evaluator.strategies]]\ntype = "lint"\nimage = "-v/:/host"',
     "evaluator/strategies/0/image"),
    ("pass-env-assignment", '[executor]\npassEnv = ["A=B"]', "executor/passEnv/0: 'A=B'"),
    ("command-nul", '[[evaluator.strategies]]\ntype = "lint"\ncommand = "ruff\\u0000check"',
     "evaluator/strategies/0/command: a NUL"),
    ("pass-condition-without-output", '[[evaluator.strategies]]\ntype = "custom"\ncommand = "x"\n'
                                      '[evaluator.strategies.config]\npassCondition = "output.a === 1"',
     'evaluator/strategies/0/config: passCondition needs parseOutput = "json"'),
    ("snake-case-key", "[evaluator]\nmax_iterations = 3", "did you mean 'maxIterations'"),
    ("100MB", "# " + "a" * (100 << 20), "larger than"),
]

PYPROJECT = [
    ("tool-a-number", "tool = 5", "tool"),
    ("section-a-number", "[tool]\nsprintflow = 5", "tool/sprintflow"),
    ("section-a-list", "[tool]\nsprintflow = [1]", "tool/sprintflow"),
    ("unknown-key", "[tool.sprintflow]\npreset = 'generic'\nmaxIterations = 3", "unknown key 'maxIterations'"),
    ("invalid-toml", "[tool.sprintflow\npreset='x'", "line 1"),
    ("bad-preset", "[tool.sprintflow]\npreset = 7", "preset"),
]

BOBER_CASES = [
    ("evaluator-a-list", _with(BOBER, "evaluator", [1]), "evaluator"),
    ("evaluator-a-number", _with(BOBER, "evaluator", 3), "evaluator"),
    ("project-a-string", _with(BOBER, "project", "app"), "project"),
    ("commands-a-list", _with(BOBER, "commands", ["npm test"]), "commands"),
    ("strategies-an-object", _with(BOBER, "evaluator/strategies", {"type": "lint"}), "evaluator/strategies"),
    ("strategy-unknown-type", _with(BOBER, "evaluator/strategies/0/type", "magic"), "evaluator/strategies/0/type"),
    ("strategy-required-text", _with(BOBER, "evaluator/strategies/0/required", "yes"),
     "evaluator/strategies/0/required"),
    ("max-iterations-text", _with(BOBER, "evaluator/maxIterations", "three"), "evaluator/maxIterations"),
    ("command-a-number", _with(BOBER, "commands/lint", 5), "commands/lint"),
    ("preset-unknown", _with(BOBER, "project/preset", "rails"), "preset"),
    ("the-config-a-list", [BOBER], "$"),
]


def document_cases() -> list[Case]:
    cases = []
    for kind, base, fields, name in (("contract", CONTRACT, CONTRACT_FIELDS, "contract.json"),
                                     ("eval-result", EVAL_RESULT, EVAL_FIELDS, "eval.json"),
                                     ("plan-spec", PLAN_SPEC, PLAN_FIELDS, "plan.json")):
        for path, value, where in fields:
            cases.append(Case(f"{kind}:{path}={value!r:.30}", {name: _json(_with(base, path, value))},
                              ["validate", "--kind", kind, name], where))
        for raw, (data, where) in RAW_JSON.items():
            cases.append(Case(f"{kind}:{raw}", {name: data}, ["validate", "--kind", kind, name], where))
    return cases


def config_cases() -> list[Case]:
    contract = {CONTRACT_PATH: _json(CONTRACT)}
    cases = []
    for name, text, where in TOML:
        data = text if isinstance(text, bytes) else text.encode()
        # Read by validate, and by evaluate before it runs anything.
        cases.append(Case(f"sprintflow.toml:{name}", {"sprintflow.toml": data}, ["validate", "sprintflow.toml"],
                          where))
        cases.append(Case(f"evaluate/sprintflow.toml:{name}", {"sprintflow.toml": data, **contract},
                          ["evaluate", ".", "--contract", CONTRACT_PATH, "--executor", "local"], where))
    for name, text, where in PYPROJECT:
        cases.append(Case(f"pyproject.toml:{name}", {"pyproject.toml": text.encode()},
                          ["validate", "pyproject.toml"], where))
    for name, data, where in BOBER_CASES:
        cases.append(Case(f"bober.config.json:{name}", {"bober.config.json": _json(data)},
                          ["validate", "bober.config.json"], where))
        cases.append(Case(f"run/bober.config.json:{name}", {"bober.config.json": _json(data), **contract},
                          ["run", ".", "--executor", "local"], where))
    return cases


def workspace_contract_cases() -> list[Case]:
    """Contracts as ``run`` and ``evaluate`` find them in a workspace: refused before anything runs."""
    cases = []
    for path, value, where in CONTRACT_FIELDS[:12]:
        if path == "sprintNumber" and value == 10 ** 30:
            continue  # only the seed's id rule refuses it, and that rule is for plans, not evaluations
        data = _json(_with(CONTRACT, path, value))
        cases.append(Case(f"run/contract:{path}={value!r:.30}", {CONTRACT_PATH: data, "sprintflow.toml": b""},
                          ["run", ".", "--executor", "local"], where))
        cases.append(Case(f"evaluate/contract:{path}={value!r:.30}", {CONTRACT_PATH: data, "sprintflow.toml": b""},
                          ["evaluate", ".", "--contract", CONTRACT_PATH, "--executor", "local"], where))
    return cases


def case_file_cases() -> list[Case]:
    """Lines of a scorer's cases.jsonl, each bad in its own way, with the line it is on."""
    good = CASES.splitlines()
    bad_lines = {
        "not-json": "{id: 1}",
        "torn": '{"id": "pr-x", "input": "a',
        "a-list": "[1, 2]",
        "no-id": '{"input": "a", "expected": {"escalate": false, "risk": "low"}}',
        "id-a-boolean": '{"id": true, "input": "a", "expected": {"escalate": false, "risk": "low"}}',
        "no-input": '{"id": "pr-x", "expected": {"escalate": false, "risk": "low"}}',
        "expected-a-string": '{"id": "pr-x", "input": "a", "expected": "low"}',
        "duplicate-id": good[0],
        "deeply-nested": '{"id": "pr-x", "input": "a", "expected": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "huge-integer": '{"id": "pr-x", "input": "a", "expected": {"risk": ' + "9" * 5000 + "}}",
        "not-utf8": '{"id": "pr-x", "input": "caf\udce9"}',
    }
    cases = []
    prompt = (ROOT / "examples/scoring/prompts/triage.md").read_bytes()
    for name, line in bad_lines.items():
        text = "\n".join([*good[:3], line, *good[3:]]) + "\n"
        data = text.encode("utf-8", errors="surrogateescape")
        cases.append(Case(f"cases.jsonl:{name}", {"evals/triage/cases.jsonl": data, "prompts/triage.md": prompt},
                          ["score", "triage", "--engine", "true"], ":4"))
    return cases


def workspace_cases() -> list[Case]:
    """What is wrong only across files, or only in what a command finds in the workspace."""
    copy = CONTRACT_PATH.replace("-1.json", "-copy.json")
    twice = {CONTRACT_PATH: _json(CONTRACT), copy: _json(CONTRACT), "sprintflow.toml": b""}
    cases = [Case(f"{command}/two-contracts-one-id", twice, argv, "is also the id of", file=copy)
             for command, argv in (("run", ["run", ".", "--executor", "local", "--engine", "true"]),
                                   ("status", ["status", "."]), ("validate", ["validate", CONTRACT_PATH, copy]))]
    huge = _json(_with(EVAL_RESULT, "iteration", 2**70))
    cases.append(Case("report/eval-iteration-2**70", {".sprintflow/evals/eval-x.json": huge},
                      ["report", ".", "--no-flow"], "iteration: an integer larger than"))
    return cases


def all_cases() -> list[Case]:
    return [*document_cases(), *config_cases(), *workspace_contract_cases(), *case_file_cases(), *workspace_cases()]
