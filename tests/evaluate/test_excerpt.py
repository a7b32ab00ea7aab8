"""The relevant part of output no parser understood, on what real tools printed."""

import json
from pathlib import Path

from sprintflow.evaluate.excerpt import MAX_EXCERPT_CHARS, combined_output, relevant_output

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def recorded_output(project: str, run: str) -> str:
    data = json.loads((FIXTURES / "feedback" / project / f"{run}.json").read_text(encoding="utf-8"))
    return combined_output(data["stdout"], data["stderr"])


def test_short_output_comes_back_whole_without_npm_boilerplate():
    # destr's `npm test` calls pnpm, which is not installed.
    excerpt = relevant_output(recorded_output("destr", "test-npm-test"))
    assert excerpt == "sh: 1: pnpm: not found"


def test_a_tool_that_cannot_read_its_config_keeps_the_cause():
    excerpt = relevant_output(recorded_output("humanize", "lint-ruff-mid"))
    assert excerpt.startswith("ruff failed\n  Cause: Failed to parse")
    assert "unknown field `future-annotations`" in excerpt
    assert len(excerpt) <= MAX_EXCERPT_CHARS


def test_long_output_keeps_the_first_error_and_the_summary_within_bounds():
    text = recorded_output("humanize", "test-pytest9")  # 900 progress dots and a benchmark table
    excerpt = relevant_output(text)
    assert len(text) > 2 * MAX_EXCERPT_CHARS >= len(excerpt)
    assert "AssertionError: assert 12 == (12 + 1)" in excerpt
    assert excerpt.rstrip().endswith("1 failed, 907 passed in 16.09s ========================")
    assert excerpt.count("\n") <= 45


def test_colours_and_carriage_return_redraws_are_removed():
    excerpt = relevant_output(recorded_output("destr", "typecheck-tsc-pretty"))
    assert "\x1b[" not in excerpt
    assert "src/index.ts:25:39 - error TS2355" in excerpt
    assert relevant_output("progress 10%\rprogress 90%\rdone\nError: boom") == "done\nError: boom"


def test_output_without_any_error_word_keeps_its_end():
    text = "\n".join(f"line {i}" for i in range(200))
    excerpt = relevant_output(text, max_lines=10)
    assert excerpt.splitlines() == ["…", *(f"line {i}" for i in range(190, 200))]
    assert relevant_output("") == ""
