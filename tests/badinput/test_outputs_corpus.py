"""What tools and engines print is written by the code under test or by a model: any shape it takes
fails that strategy or that answer with the reason, and never crashes the flow."""

from __future__ import annotations

import json

import pytest

from sprintflow.engines import EngineReply, extract_json, parse_engine_output
from sprintflow.errors import ReportError
from sprintflow.evaluate.criteria import judge_manual
from sprintflow.parsers import PARSERS, ParsedReport, parse_report
from sprintflow.planning.planner import check_reply
from sprintflow.schemas import Outcome, SuccessCriterion

DEEP = "[" * 100_000 + "]" * 100_000
SHAPES = {
    "empty": "",
    "null": "null",
    "number": "5",
    "list": "[1, 2, 3]",
    "string": '"report"',
    "deep-nesting": DEEP,
    "deep-object": '{"a": ' * 50_000 + "1" + "}" * 50_000,
    "huge-integer": '{"numTotalTests": ' + "9" * 5000 + "}",
    "nan": '{"numFailedTests": NaN, "testResults": []}',
    "torn": '{"testResults": [{"name": "a.test.ts", "assertionResults": [',
    "binary": bytes(range(256)).decode("latin-1") * 40,
    "xml-garbage": "<testsuites><testsuite name='x'><testcase",
    "xml-entities": '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">'
                    '<!ENTITY y "&x;&x;&x;&x;&x;&x;&x;&x;&x;&x;">]><testsuites>&y;</testsuites>',
    "wrong-types-vitest": json.dumps({"testResults": [{"name": 5, "assertionResults": [{"status": ["x"],
                                                                                        "title": None}]}]}),
    "wrong-types-eslint": json.dumps([{"filePath": 5, "messages": [{"line": "x", "severity": "2"}]}]),
    "wrong-types-ruff": json.dumps([{"filename": None, "location": "row 1", "code": 5}]),
    "wrong-types-playwright": json.dumps({"suites": [{"specs": "all", "suites": 5}]}),
    "wrong-types-jest": json.dumps({"testResults": "none", "numFailedTests": "2"}),
    "ten-megabytes": "x" * (10 << 20),
    "long-lines": ("error TS2322: " + "a" * 100_000 + "\n") * 20,
    "minified": ("x" * 200_000 + " src/a.ts:3: boom\n") * 5,
    "many-anchors": "x:1" * 300_000,
}


def test_the_corpus_covers_every_parser():
    assert len(PARSERS) * len(SHAPES) >= 300


@pytest.mark.parametrize("shape", SHAPES)
def test_no_report_shape_crashes_a_parser(shape):
    for format in PARSERS:
        try:
            report = parse_report(format, SHAPES[shape])
        except ReportError as exc:
            assert str(exc) and "\n" not in str(exc)[:200]
        else:
            assert isinstance(report, ParsedReport)


def test_a_location_after_a_minified_line_is_still_found():
    report = parse_report("generic", SHAPES["minified"])
    assert [(d.file, d.line, d.message) for d in report.diagnostics] == [("src/a.ts", 3, "boom")]


REPLIES = {**SHAPES, "fenced-deep": f"Here:\n```json\n{DEEP}\n```", "prose-deep": f"My answer is {{ {DEEP} }}",
           "claude-envelope-wrong": json.dumps({"type": "result", "result": 5, "usage": "lots", "is_error": "yes"}),
           "gemini-envelope-wrong": json.dumps({"response": ["a"], "stats": {"models": {"m": {"tokens": "x"}}},
                                                "error": {"message": None}})}
CRITERION = SuccessCriterion(criterion_id="sc-1-1", description="The handler rejects empty titles.",
                             verification_method="manual", required=True)


@pytest.mark.parametrize("name", REPLIES)
def test_no_engine_answer_crashes_its_reader(name):
    text = REPLIES[name]
    assert isinstance(parse_engine_output(text), dict)
    assert extract_json(text) is None or isinstance(extract_json(text), dict)
    reply = EngineReply(ok=True, text=text, raw=text)
    answer, problems = check_reply(reply, "Build a todo API", "attempt 1", {}, (), False)
    assert answer is None and problems  # none of these is a plan: refused with the reasons
    verdict = judge_manual(CRITERION, reply)
    assert verdict.result is Outcome.failed  # an evaluator that cannot tell does not pass
