"""The mutation check of ``mvn test``: PIT (real Maven, real PIT from Maven Central) on trees the judge built,
on the host and in Docker; PIT's own report, recorded, parsed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sprintflow.evaluate.mutation import untested
from sprintflow.evaluate.mutation.changes import ChangedFile
from sprintflow.evaluate.mutation.pitest import PIT, report_mutants, with_pit_plugin
from sprintflow.evaluate.mutation.tools import FOLDER, UNAVAILABLE, ToolRun
from sprintflow.sandbox.executors import CommandSpec, DockerExecutor, Executor, LocalExecutor
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.strategies import MutationSettings
from tests.redteam.victims import JAVA_POM, JAVA_REACTOR_POM

from .judged_change import judged_tree, write
from .judged_change import measured as measured_check

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mutation" / "pit-calc-mutations.xml"
CALC = "src/main/java/org/acme/Calc.java"
TEST = "src/test/java/org/acme/CalcTest.java"
BEFORE = {
    "pom.xml": JAVA_POM,
    CALC: "package org.acme;\n\npublic final class Calc {\n    public static int add(int a, int b) {\n"
          "        return a + b;\n    }\n}\n",
    TEST: "package org.acme;\n\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n\n"
          "import org.junit.jupiter.api.Test;\n\nclass CalcTest {\n    @Test\n    void adds() {\n"
          "        assertEquals(4, Calc.add(2, 2));\n    }\n}\n",
}
"""The baseline builds: the host's Maven repository gets what a developer's build of it fetches (Surefire's JUnit
launcher among them, which PIT's JUnit 5 plugin resolves offline)."""
SUB = "\n    public static int sub(int a, int b) {\n        return a - b;\n    }\n"
TWICE = "\n    public static int twice(int a) {\n        if (a > 100) {\n            return 0;\n        }\n" \
        "        return a * 2;\n    }\n"
SUB_TEST = "\n    @Test\n    void subtracts() {\n        assertEquals(1, Calc.sub(3, 2));\n" \
           "        assertEquals(-1, Calc.sub(2, 3));\n    }\n"
TWICE_TEST = "\n    @Test\n    void doublesRuns() {\n        Calc.twice(3);\n    }\n"


def _with(methods: str, tests: str) -> dict[str, str]:
    """The baseline with ``methods`` added to Calc and ``tests`` to CalcTest."""
    return {CALC: BEFORE[CALC].removesuffix("}\n") + methods + "}\n",
            TEST: BEFORE[TEST].removesuffix("}\n") + tests + "}\n"}


TESTED = _with(SUB, SUB_TEST)
"""A new method whose test checks what it returns."""
UNTESTED = _with(SUB + TWICE, SUB_TEST + TWICE_TEST)
"""The same, and a second new method whose test only calls it."""
TWICE_LINE = UNTESTED[CALC].splitlines().index("        if (a > 100) {") + 1

CORE_CALC = f"core/{CALC}"
APP_TEST = "app/src/test/java/org/acme/AppTest.java"
REACTOR = {
    "pom.xml": JAVA_REACTOR_POM,
    "core/pom.xml": JAVA_POM.replace("<artifactId>calc</artifactId>", "<artifactId>core</artifactId>"),
    CORE_CALC: BEFORE[CALC],
    f"core/{TEST}": BEFORE[TEST],
    "app/pom.xml": JAVA_POM.replace("<artifactId>calc</artifactId>", "<artifactId>app</artifactId>").replace(
        "  <dependencies>\n", "  <dependencies>\n    <dependency><groupId>org.acme</groupId>"
        "<artifactId>core</artifactId><version>1.0</version></dependency>\n"),
    APP_TEST: "package org.acme;\n\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n\n"
              "import org.junit.jupiter.api.Test;\n\nclass AppTest {\n    @Test\n    void usesCore() {\n"
              "        assertEquals(5, Calc.add(2, 3));\n    }\n",
}
"""A build of two modules: ``core`` (Calc and its test) and ``app``, which depends on core, tested apart."""
ACROSS = {CORE_CALC: UNTESTED[CALC],
          APP_TEST: REACTOR[APP_TEST] + SUB_TEST.replace("subtracts", "subtractsAcross") + TWICE_TEST + "}\n"}
"""Calc gains sub and twice in core, tested only from app: sub's test checks it, twice's only calls it."""


def _built_on_the_host(workspace: Path) -> None:
    """The host as a Maven developer has it: ~/.m2 holds what the build needs."""
    subprocess.run(["mvn", "-B", "-q", "test"], cwd=workspace, capture_output=True, check=False)
    for target in workspace.glob("**/target"):
        shutil.rmtree(target, ignore_errors=True)


def _measured(root: Path, change: dict[str, str], kind: str, settings: MutationSettings,
              before: dict[str, str] = BEFORE) -> tuple[MutationResult | None, float]:
    """The change to ``before`` measured as the judge does: its tree, a layer of the view, the executor."""
    workspace = root / "ws"
    tree = judged_tree(workspace, before, change, "pin-pit", _built_on_the_host if kind == "local" else None)
    if kind == "local":
        executor: Executor = LocalExecutor()
    else:
        from sprintflow.sandbox.prepare import with_project_sandbox

        executor = with_project_sandbox(DockerExecutor(), tree.root, progress=lambda line: None)
    return measured_check(tree, workspace, "maven", executor, ["mvn -B -q test"], 5.0, settings)


@pytest.fixture(scope="module", params=["local", "docker"])
def measured(request, tmp_path_factory):
    """The changes measured once in each executor (the tested one; the untested one under a cap of 3; the
    change to core tested from app in the build of two modules)."""
    if request.param == "docker":
        request.getfixturevalue("docker_ready")
    tested = _measured(tmp_path_factory.mktemp("tested"), TESTED, request.param, MutationSettings())
    capped = _measured(tmp_path_factory.mktemp("untested"), UNTESTED, request.param, MutationSettings(max_mutants=3))
    across = _measured(tmp_path_factory.mktemp("across"), ACROSS, request.param, MutationSettings(), REACTOR)
    print(f"\nPIT ({request.param}): tested {tested}\nuntested {capped}\nacross modules {across}")
    return tested[0], capped[0], across[0]


def test_a_tested_change_is_measured_with_kills_and_no_finding(measured):
    tested, _, _ = measured
    assert tested is not None and tested.status == "measured", tested
    assert tested.tool == "PIT 1.30.2" and tested.mutants >= 1 and tested.kill_rate and tested.kill_rate > 0
    assert {(f.file, f.function) for f in tested.functions} == {(CALC, "sub")}
    assert untested(tested) == []


def test_an_untested_added_method_is_a_finding_at_its_line_and_the_cap_holds(measured):
    _, capped, _ = measured
    assert capped is not None and capped.status == "measured", capped
    by_name = {f.function: f for f in capped.functions}
    assert set(by_name) == {"sub", "twice"} and by_name["sub"].killed >= 1 and by_name["twice"].killed == 0
    assert capped.mutants <= 3  # PIT made more of twice alone; at most the cap counted, every method one
    (finding,) = untested(capped)
    assert (finding.file, finding.line, finding.code) == (CALC, TWICE_LINE, "untested-change")
    assert "the tests pass whatever this code does" in finding.message and "twice" in finding.message


def test_a_class_of_one_module_is_judged_by_the_tests_of_another(measured):
    """core's Calc changed, its new methods tested only from app: app's tests kill sub's mutants (core's
    own tests never reach sub), and twice, only called from there, is the finding, at its line in core."""
    _, _, across = measured
    assert across is not None and across.status == "measured", across
    by_name = {f.function: f for f in across.functions}
    assert set(by_name) == {"sub", "twice"} and by_name["sub"].killed >= 1 and by_name["twice"].killed == 0
    (finding,) = untested(across)
    assert (finding.file, finding.line, finding.code) == (CORE_CALC, TWICE_LINE, "untested-change")


def test_pit_that_cannot_be_had_is_unavailable_with_the_reason(tmp_path, monkeypatch):
    """The host's Maven repository (as its settings name it) cannot be written: PIT cannot be fetched there,
    and the command says so with the runner's UNAVAILABLE exit, which the judge reports as unavailable."""
    home = tmp_path / "home"
    write(home, {".m2/settings.xml": "<settings><!-- <localRepository>/nowhere</localRepository> -->"
                                      "<localRepository>/proc/sprintflow-no-repository</localRepository></settings>"})
    monkeypatch.setenv("HOME", str(home))
    layer = tmp_path / "layer"
    write(layer, {**BEFORE, **UNTESTED, f"{FOLDER}/.keep": ""})
    run = ToolRun("maven", layer, LocalExecutor(), [ChangedFile(CALC, ((9, 11),))], ["mvn -B -q test"],
                  MutationSettings(), 10.0)
    done = LocalExecutor().run(layer, CommandSpec(PIT().command(run), timeout=60))
    assert done.exit_code == UNAVAILABLE, done
    assert "PIT is not in the host's Maven repository" in done.stdout
    assert "/proc/sprintflow-no-repository cannot be written" in done.stdout
    assert (layer / "pom.xml").read_text() == JAVA_POM  # nothing was run, the POM not even given PIT


def test_a_recorded_pit_report_is_read_for_the_changed_lines_only(tmp_path):
    """PIT 1.30.2's mutations.xml of UNTESTED, recorded from a real run: only the changed lines count."""
    write(tmp_path, UNTESTED)
    (tmp_path / "mutations.xml").write_bytes(FIXTURE.read_bytes())
    lines = tuple((n, n) for n, line in enumerate(UNTESTED[CALC].splitlines(), 1)
                  if n > len(BEFORE[CALC].splitlines()) - 1 and line.strip() not in ("", "}"))
    changes = [ChangedFile(CALC, lines), ChangedFile(TEST, ((12, 20),))]
    mutants = report_mutants(tmp_path, changes, 100, ["mutations.xml"])
    assert mutants and {m.function for m in mutants} == {"sub", "twice"}  # add's line is not a change
    assert all(m.file == CALC and m.status in ("killed", "survived") for m in mutants)
    assert {m.status for m in mutants if m.function == "twice"} == {"survived"}
    assert [m.function for m in report_mutants(tmp_path, changes, 1, ["mutations.xml"])] == ["sub", "twice"]
    # Only the lines of twice: sub's mutants are left out.
    only_twice = [ChangedFile(CALC, ((TWICE_LINE, TWICE_LINE + 4),))]
    assert {m.function for m in report_mutants(tmp_path, only_twice, 100, ["mutations.xml"])} == {"twice"}


def _report(*mutations: tuple[str, str, str]) -> str:
    """A mutations.xml of sub's line in Calc: (status, mutator, index) per mutation."""
    sub_line = TESTED[CALC].splitlines().index("        return a - b;") + 1
    return "<mutations>" + "".join(
        f"<mutation detected='false' status='{status}'><sourceFile>Calc.java</sourceFile><mutatedClass>org.acme.Calc"
        f"</mutatedClass><mutatedMethod>sub</mutatedMethod><methodDescription>(II)I</methodDescription><lineNumber>"
        f"{sub_line}</lineNumber><mutator>{mutator}</mutator><indexes><index>{index}</index></indexes></mutation>"
        for status, mutator, index in mutations) + "</mutations>"


def test_the_reports_of_several_modules_merge_mutant_by_mutant_the_best_status_winning(tmp_path):
    """Each module's PIT reports every mutant of the changed classes; one killed by any module's tests is
    killed, whichever report comes first; two mutants on one line with different mutators stay two."""
    write(tmp_path, {CALC: TESTED[CALC],
                     "core/mutations.xml": _report(("NO_COVERAGE", "Math", "5"), ("SURVIVED", "Return", "7")),
                     "app/mutations.xml": _report(("KILLED", "Math", "5"), ("NO_COVERAGE", "Return", "7"),
                                                  ("TIMED_OUT", "Math", "6"))})
    changes = [ChangedFile(CALC, ((1, 30),))]
    for reports in (["core/mutations.xml", "app/mutations.xml"], ["app/mutations.xml", "core/mutations.xml"]):
        mutants = report_mutants(tmp_path, changes, 10, reports)
        assert sorted(m.status for m in mutants) == ["killed", "survived", "timeout"], reports
    with pytest.raises(ValueError, match="PIT's report app/mutations.xml, mutation 1 has an unknown status"):
        write(tmp_path, {"app/mutations.xml": _report(("EATEN", "Math", "5"))})
        report_mutants(tmp_path, changes, 10, ["core/mutations.xml", "app/mutations.xml"])


@pytest.mark.parametrize("text, said", [
    ("not xml at all", "not XML"),
    ("<report/>", "<report> at its root"),
    ("<mutations><mutation status='KILLED'><sourceFile>Calc.java</sourceFile></mutation></mutations>",
     "has no mutatedClass, mutatedMethod, lineNumber"),
    ("<mutations><mutation status='EXPLODED'><sourceFile>Calc.java</sourceFile><mutatedClass>org.acme.Calc"
     "</mutatedClass><mutatedMethod>add</mutatedMethod><lineNumber>5</lineNumber></mutation></mutations>",
     "unknown status 'EXPLODED'"),
    ("<mutations><mutation status='KILLED'><sourceFile>Calc.java</sourceFile><mutatedClass>org.acme.Calc"
     "</mutatedClass><mutatedMethod>add</mutatedMethod><lineNumber>five</lineNumber></mutation></mutations>",
     "lineNumber 'five', not a line"),
    ("<mutations><other/></mutations>", "mutation 1 is a <other>"),
    ('<!DOCTYPE m [<!ENTITY x "y">]><mutations/>', "DOCTYPE or entities"),
])
def test_a_malformed_report_is_a_clear_failure(tmp_path, text, said):
    write(tmp_path, {CALC: UNTESTED[CALC], "mutations.xml": text})
    with pytest.raises(ValueError, match=None) as raised:
        report_mutants(tmp_path, [ChangedFile(CALC, ((1, 30),))], 10, ["mutations.xml"])
    assert said in str(raised.value)


def test_a_report_larger_than_the_bound_is_refused(tmp_path):
    write(tmp_path, {"mutations.xml": "<mutations>" + " " * (9 << 20) + "</mutations>"})
    with pytest.raises(ValueError, match="cannot be read"):
        report_mutants(tmp_path, [], 10, ["mutations.xml"])


def test_the_layers_pom_gets_the_judges_pit_and_loses_the_projects():
    pom = JAVA_POM.replace("    </plugins>", "      <plugin>\n        <groupId>org.pitest</groupId>\n"
                           "        <artifactId>pitest-maven</artifactId>\n        <configuration><excludedMethods>"
                           "<param>twice</param></excludedMethods></configuration>\n      </plugin>\n    </plugins>")
    edited = with_pit_plugin(pom, ["org.acme.Calc"], junit5=True, timeout_ms=3000)
    assert "excludedMethods" not in edited and edited.count("<artifactId>pitest-maven</artifactId>") == 1
    assert 'combine.self="override"' in edited and "<timeoutConstant>3000</timeoutConstant>" in edited
    assert "<artifactId>pitest-junit5-plugin</artifactId>" in edited and "ns0:" not in edited
    assert "pitest-junit5-plugin" not in with_pit_plugin(pom, ["org.acme.Calc"], junit5=False)
    with pytest.raises(ValueError, match="not a POM|not <project>"):
        with_pit_plugin("<settings/>", [], junit5=False)
