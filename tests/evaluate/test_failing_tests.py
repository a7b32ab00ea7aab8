"""A failing test is named whole, reproduced alone with the project's runner, and points at the code.

Real runners throughout: pytest (this interpreter's), vitest (the TypeScript example's), Go, cargo
and Maven make the failures, and the reproduction each item carries is run to show it selects exactly
the failing test.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sprintflow.evaluate.excerpt import combined_output
from sprintflow.evaluate.feedback import generator_feedback, summarize, with_process_items
from sprintflow.parsers import parse_report
from sprintflow.parsers._common import text_lines
from sprintflow.schemas import Outcome, Priority, Score, StrategyResult
from tests.conftest import copy_example

PYTHON = shlex.quote(sys.executable)
MONEY = '''\
def split(amount, parts):
    return [amount // parts] * parts
'''
MONEY_TESTS = '''\
import pytest
from money import split


def test_split_evenly():
    assert split(10, 2) == [5, 5]


def test_split_zero_parts_is_empty():
    assert split(10, 0) == []


@pytest.mark.parametrize("amount", [3, 4])
def test_split_keeps_the_total(amount):
    assert sum(split(amount, 2)) == amount
'''


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=300)


def failed(name: str, command: str, cwd: Path, fmt: str) -> StrategyResult:
    """The strategy result the evaluator makes of a real failing run."""
    proc = run(command, cwd)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    output = combined_output(proc.stdout, proc.stderr)
    report = parse_report(fmt, output, [str(cwd)])
    return StrategyResult(strategy=name, required=True, result=Outcome.failed, exit_code=proc.returncode,
                          output=output[-4000:], details=f"`{command}` exited {proc.returncode}.",
                          diagnostics=report.diagnostics)


@pytest.fixture
def money(tmp_path):
    (tmp_path / "money.py").write_text(MONEY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_money.py").write_text(MONEY_TESTS)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "money"\n[tool.pytest.ini_options]\n'
                                             'pythonpath = ["."]\n')
    return tmp_path


def collected(reproduction: str, cwd: Path) -> list[str]:
    """The test ids a pytest reproduction selects, by collecting them."""
    command = reproduction.removeprefix("Run: ")
    proc = run(f"{command} --collect-only", cwd)
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_a_failing_pytest_test_is_named_and_run_alone(money):
    command = f"{PYTHON} -m pytest -q tests"
    result = failed("unit-test", command, money, "pytest")
    items = generator_feedback([result], [], [], {"unit-test": command}, money)
    crash = next(i for i in items if "ZeroDivisionError" in i.description)
    assert "tests/test_money.py::test_split_zero_parts_is_empty" in crash.description
    # The crash is in the code: its line is the location; the test is the reproduction, alone.
    assert (crash.file, crash.line) == ("money.py", 2)
    assert collected(crash.reproduction, money) == ["tests/test_money.py::test_split_zero_parts_is_empty"]
    for item in items:
        assert item.reproduction and "::" in item.reproduction, item


def test_an_assertion_in_a_test_points_at_the_code_it_exercises(money):
    (money / "money.py").write_text("def split(amount, parts):\n    return [amount // parts] * parts if parts "
                                    "else []\n")
    command = f"{PYTHON} -m pytest -q tests"
    result = failed("unit-test", command, money, "pytest")
    items = generator_feedback([result], [], [], {"unit-test": command}, money)
    [item] = items  # one place, two parametrised cases
    assert item.file == "money.py" and "it failed at tests/test_money.py:" in item.description
    assert "test_split_keeps_the_total[3]" in item.description
    assert sorted(collected(item.reproduction, money)) == ["tests/test_money.py::test_split_keeps_the_total[3]"]
    summary = summarize("t", 1, "fail", Score(criteria_total=1, criteria_passed=0, criteria_failed=1,
                                              criteria_skipped=0, required_passed=0, required_failed=1,
                                              required_total=1), items)
    assert "focus on money.py" in summary and "focus on tests/" not in summary


@pytest.fixture
def broken_store(tmp_path):
    workspace = copy_example("ts-app", tmp_path)
    store = workspace / "src" / "store.ts"
    store.write_text(store.read_text().replace("this.#items.push(todo);", "this.#items.push(todo, todo);"))
    return workspace


def test_a_failing_vitest_test_is_named_whole_and_run_alone(broken_store):
    command = "npx vitest run"
    result = failed("unit-test", command, broken_store, "vitest-text")
    items = generator_feedback([result], [], [], {"unit-test": command}, broken_store)
    item = next(i for i in items if "test/store.test.ts > TodoStore > " in i.description)
    assert item.file == "src/store.ts"
    proc = run(item.reproduction.removeprefix("Run: "), broken_store)
    # text_lines drops the colours vitest adds wherever CI is set
    ran = [line for line in text_lines(proc.stdout) if line.strip().startswith(("✓", "×"))]
    assert proc.returncode == 1 and len(ran) == 1, proc.stdout


GO_TESTS = '''\
package codec

import "testing"

func TestJSON(t *testing.T) {
	t.Run("empty", func(t *testing.T) {})
	t.Run("nested", func(t *testing.T) { t.Errorf("got %q, want %q", Encode("a"), "\\"a\\"") })
}

func TestOther(t *testing.T) {}
'''


@pytest.mark.skipif(shutil.which("go") is None, reason="needs a Go toolchain")
def test_a_failing_go_subtest_is_named_and_run_alone(tmp_path):
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (tmp_path / "codec").mkdir()
    (tmp_path / "codec" / "codec.go").write_text('package codec\n\nfunc Encode(s string) string { return s }\n')
    (tmp_path / "codec" / "codec_test.go").write_text(GO_TESTS)
    command = "go test ./..."
    result = failed("unit-test", command, tmp_path, "go-test")
    [item] = generator_feedback([result], [], [], {"unit-test": command}, tmp_path)
    # The failure is logged in the test: the item points at the function on its line, the test named beside.
    assert (item.file, item.line) == ("codec/codec.go", 3)
    assert "failed at codec/codec_test.go:7" in item.description
    assert "TestJSON/nested" in item.description and 'got "a", want' in item.description
    proc = run(f"{item.reproduction.removeprefix('Run: ')} -v", tmp_path)
    ran = [line.split()[2] for line in proc.stdout.splitlines() if line.strip().startswith("--- ")]
    assert ran == ["TestJSON", "TestJSON/nested"], proc.stdout


def test_a_go_test_of_another_package_points_at_the_package_it_imports(tmp_path):
    from sprintflow.evaluate.under_test import code_under_test

    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    for folder in ("codec", "codectest"):
        (tmp_path / folder).mkdir()
    (tmp_path / "codec" / "doc.go").write_text("// Package codec encodes.\npackage codec\n")
    (tmp_path / "codec" / "codec.go").write_text("package codec\n\ntype Codec struct{}\n\n"
                                                 "func (c Codec) Encode(s string) string { return s }\n")
    (tmp_path / "codectest" / "codec_test.go").write_text(
        'package codectest\n\nimport (\n\t"testing"\n\n\t"example.com/m/codec"\n)\n\n'
        'func TestEncode(t *testing.T) {\n\tif got := (codec.Codec{}).Encode("a"); got != "b" {\n'
        '\t\tt.Errorf("got %q", got)\n\t}\n}\n')
    assert code_under_test(tmp_path, "codectest/codec_test.go", 10) == ("codec/codec.go", 5)
    assert code_under_test(tmp_path, "codectest/codec_test.go", 11) == ("codec/codec.go", None)


RUST_LIB = """\
pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn adds_zero() {
        assert_eq!(add(0, 0), 0);
    }
}
"""
RUST_INTEGRATION = """\
#[test]
fn adds() {
    assert_eq!(pocket::add(1, 0), 1);
}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs a Rust toolchain")
def test_a_failing_rust_test_is_named_and_run_alone(tmp_path):
    """``--exact``: ``tests::adds`` alone, not ``tests::adds_zero`` beside it, nor the integration
    test ``adds`` of another target (libtest's plain filter is a substring match)."""
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "pocket"\nversion = "0.1.0"\nedition = "2021"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(RUST_LIB)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "integration.rs").write_text(RUST_INTEGRATION)
    command = "cargo test -q"
    result = failed("unit-test", command, tmp_path, "cargo")
    [item] = generator_feedback([result], [], [], {"unit-test": command}, tmp_path)
    assert (item.file, item.line) == ("src/lib.rs", 11)
    assert "tests::adds" in item.description and "tests::adds_zero" not in item.description
    assert item.reproduction == "Run: cargo test -q -- --exact tests::adds"
    proc = run(item.reproduction.removeprefix("Run: ").replace(" -q", ""), tmp_path)
    ran = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("test ") and " ... " in line]
    assert ran == ["tests::adds"], proc.stdout


MAVEN_POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.acme</groupId>
  <artifactId>pocket</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.5.4</version>
      </plugin>
    </plugins>
  </build>
</project>
"""
MAVEN_TESTS = {
    "PocketTest": """\
package org.acme;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class PocketTest {
    @Test
    public void adds() {
        assertEquals(4, Pocket.add(2, 2));
    }

    @Test
    public void addsZero() {
        assertEquals(0, Pocket.add(0, 0));
    }
}
""",
    "OtherTest": """\
package org.acme;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class OtherTest {
    @Test
    public void adds() {
        assertEquals(1, Pocket.add(1, 0));
    }
}
"""}


@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")
def test_a_failing_maven_test_is_named_and_run_alone(tmp_path):
    """Surefire's ``-Dtest=Class#method``: ``PocketTest.adds`` alone, not ``OtherTest.adds`` of the same
    name nor ``addsZero`` beside it."""
    (tmp_path / "pom.xml").write_text(MAVEN_POM)
    main, tests = tmp_path / "src/main/java/org/acme", tmp_path / "src/test/java/org/acme"
    main.mkdir(parents=True)
    tests.mkdir(parents=True)
    (main / "Pocket.java").write_text("package org.acme;\n\npublic final class Pocket {\n"
                                      "    public static int add(int a, int b) {\n        return a - b;\n    }\n}\n")
    for name, source in MAVEN_TESTS.items():
        (tests / f"{name}.java").write_text(source)
    command = "mvn -B -q test"
    result = failed("unit-test", command, tmp_path, "maven")
    [item] = generator_feedback([result], [], [], {"unit-test": command}, tmp_path)
    assert (item.file, item.line) == ("src/test/java/org/acme/PocketTest.java", 10)
    assert "org.acme.PocketTest.adds" in item.description
    reproduction = item.reproduction.removeprefix("Run: ")
    assert reproduction.endswith("'-Dtest=org.acme.PocketTest#adds' -Dsurefire.failIfNoSpecifiedTests=false")
    proc = run(reproduction.replace(" -q ", " "), tmp_path)
    assert "Tests run: 1, Failures: 1" in proc.stdout and "OtherTest" not in proc.stdout, proc.stdout


def test_notes_never_outrank_failures_nor_become_the_summary(money):
    command = f"{PYTHON} -m pytest -q tests"
    items = generator_feedback([failed("unit-test", command, money, "pytest")], [], [], {"unit-test": command}, money)
    feedback = with_process_items(items, [], ["Files changed outside estimatedFiles: notes.md"])
    assert feedback[-1].priority is Priority.low and all(i.priority is not Priority.low for i in feedback[:-1])
    summary = summarize("t", 1, "fail", Score(criteria_total=1, criteria_passed=0, criteria_failed=1,
                                              criteria_skipped=0, required_passed=0, required_failed=1,
                                              required_total=1), feedback)
    assert "estimatedFiles" not in summary and "money.py" in summary


def test_a_jest_title_with_a_colon_is_kept_whole():
    report = json.dumps({"testResults": [{"name": "/w/test/index.test.ts", "status": "failed", "assertionResults": [{
        "fullName": "format(number, { long: true }) should support seconds", "status": "failed",
        "title": "should support seconds", "ancestorTitles": ["format(number, { long: true })"],
        "failureMessages": ["Error: expect(received).toBe(expected)\n\nExpected: \"1 second\"\n"
                            "Received: \"1 sec\"\n    at Object.<anonymous> (/w/test/index.test.ts:20:35)"]}]}]})
    result = StrategyResult(strategy="unit-test", required=True, result=Outcome.failed, exit_code=1,
                            diagnostics=parse_report("jest", report, ["/w"]).diagnostics)
    [item] = generator_feedback([result], [], [], {"unit-test": "npx jest"})
    assert "test/index.test.ts > format(number, { long: true }) > should support seconds" in item.description
    assert item.description.startswith("unit-test: Error: expect(received).toBe(expected)")
    assert item.reproduction == ("Run: npx jest test/index.test.ts -t "
                                 "'^ ?format\\(number, \\{ long: true \\}\\) should support seconds$'")
