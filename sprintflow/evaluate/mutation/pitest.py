"""Maven's mutants (``mvn test``, Surefire): PIT (pitest), through its Maven plugin.

**How PIT is run.** ``mvn -o test-compile org.pitest:pitest-maven:1.30.2:mutationCoverage`` in the mutation
layer, offline, PIT taken from the Maven repository the command reads: the dependency layer's
(``sandbox/dependencies.py``'s Maven setup step fetches :data:`PITEST_ARTIFACTS` from Maven Central) or,
on the host, the host's own (:func:`host_maven_tools` fetches them there once); never the workspace's.
A plugin's dependency cannot be given on the command line, and JUnit 5 tests need
``pitest-junit5-plugin`` as one: so the judge adds a ``pitest-maven`` plugin to **the layer's copy** of
``pom.xml`` (the workspace's is never touched), with the JUnit 5 plugin as its dependency when the project
uses JUnit 5, and the whole configuration (``combine.self="override"``: a ``pitest-maven`` the project or
its parent configures, with excluded methods or its own mutators, cannot steer the check; the project's
own ``pitest-maven`` entries are removed from the copy). Rather than ``pitest-command-line`` with the
classpath of ``dependency:build-classpath``: the plugin reads Surefire's configuration and the build's
own classpath, as ``mvn test`` does.

**A build of several modules.** Every module of the reactor (the root's ``<modules>`` followed down) gets
the judge's plugin, with ``crossModule``: PIT runs in each module with that module's tests, and mutates the
changed classes of the module and of the modules it depends on. Each module writes its own report; a
mutant is killed when any module's tests killed it (the reports merged mutant by mutant, the best status
winning: killed, then timed out, survived, an error, not run), so a class tested only from another module
is judged by those tests.

**What is mutated.** The changed ``.java`` files that are not tests (a file under ``src/test/`` or one the
judged run collected tests from is never mutated), as classes (the file's ``package`` and name, its
nested classes with ``$*``): PIT's ``targetClasses``; its tests are every test class of the build. PIT
mutates whole classes: the mutants of the changed lines (``lineNumber`` in a changed range of that file)
are kept, at most ``maxMutants`` of them, one per changed method first, then in turn (chosen after the
run, from its report; the rest are not counted). A method is ``mutatedMethod`` (a lambda counts with
the method it is written in, a constructor under its class's name, a nested class's method as
``Inner.method``; overloads apart by their descriptor).

Statuses: KILLED is killed; SURVIVED and NO_COVERAGE survived; TIMED_OUT a timeout (not a kill);
MEMORY_ERROR, RUN_ERROR and NON_VIABLE errors; a mutant not started is not run. The run is bounded by the
budget (``timeout``: a run that ends there wrote no report, and the check fails) and ``mutantTimeout``
(PIT's ``timeoutConstant``); Maven must end with exit 0. The tests that judge are the build's test classes,
held-out evals among them when they are tests of the build; a held-out eval that is a command of its own is
not run against the mutants (PIT mutates byte code: its report names no source to write back, so the
survivors cannot be judged again as the other tools' are, :meth:`.tools.MutationTool.edits`).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path, PurePosixPath
from xml.etree import ElementTree as ET

from sprintflow.errors import OutsideWorkspace
from sprintflow.evaluate.canary import maven_modules
from sprintflow.io.confine import read_confined
from sprintflow.kinds import ExecutorName
from sprintflow.sandbox.dependencies import MAVEN_REPOSITORY, PITEST_ARTIFACTS, host_maven_repository, host_maven_tools
from sprintflow.schemas.evaluation import MutantRecord, MutantStatus
from sprintflow.settings import get_settings

from .changes import ChangedFile
from .tools import FOLDER, MAX_REPORT_BYTES, UNAVAILABLE, MutationTool, ToolRun, register

__all__ = ["PIT", "report_mutants", "with_pit_plugin"]

PITEST_VERSION = PITEST_ARTIFACTS[0].split(":")[2]
JUNIT5_PLUGIN_VERSION = PITEST_ARTIFACTS[1].split(":")[2]
REPORT = f"{FOLDER}/pit/mutations.xml"
"""Where PIT writes its XML report in each module's folder of the layer."""
_MAX_POM_BYTES = 4 << 20
_POM_NS = "http://maven.apache.org/POM/4.0.0"
_STATUS: dict[str, MutantStatus] = {
    "KILLED": "killed", "SURVIVED": "survived", "NO_COVERAGE": "survived", "TIMED_OUT": "timeout",
    "MEMORY_ERROR": "error", "RUN_ERROR": "error", "NON_VIABLE": "error", "NOT_STARTED": "not-run",
    "STARTED": "not-run"}
_RANK = {"KILLED": 6, "TIMED_OUT": 5, "SURVIVED": 4, "NO_COVERAGE": 3, "MEMORY_ERROR": 2, "RUN_ERROR": 2,
         "NON_VIABLE": 2, "STARTED": 1, "NOT_STARTED": 1}
"""Which of two modules' statuses of one mutant stands: a kill by any module's tests is a kill."""
_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*;", re.M)
_JUNIT5 = ("junit-jupiter", "junit-platform", "org.junit.jupiter")
_SKIPPED = {"target", "node_modules", ".git", ".sprintflow", FOLDER}


@register("maven")
class PIT(MutationTool):
    name = "PIT"
    suffixes = (".java",)

    def command(self, run: ToolRun) -> str:
        targets = _targets(run)
        if not targets:  # only tests changed: nothing to mutate, an empty report says so
            run.job_file("report.json").write_text("<mutations/>\n", encoding="utf-8")
            return "true"
        # The repository PIT is read from is the judge's to name, never the project's (.mvn/maven.config,
        # jvm.config or a property of the command could point Maven at one in the workspace).
        if run.executor.kind == ExecutorName.LOCAL:
            missing = host_maven_tools(get_settings().judge_home_path / "maven-tools")
            if missing is not None:
                return _unavailable(f"PIT is not in the host's Maven repository: {missing}")
            repository = f"-Dmaven.repo.local={shlex.quote(str(host_maven_repository()))}"
        else:  # the dependency layer's, where the sandbox has one
            repository = f"$([ -d {MAVEN_REPOSITORY} ] && echo -Dmaven.repo.local={MAVEN_REPOSITORY})"
        try:
            modules = _module_poms(run.layer)
            if not modules:
                return _unavailable("PIT runs on a Maven build with a pom.xml at the root only")
            texts = {rel: read_confined(run.layer, rel, _MAX_POM_BYTES).decode("utf-8") for rel in _poms(run.layer)}
            junit5 = any(marker in text for text in texts.values() for marker in _JUNIT5)
            for rel, text in texts.items():
                # Every module gets the judge's PIT; any other POM only loses the project's (a parent the
                # reactor does not list would hand its plugin dependencies down).
                if rel in modules or "pitest-maven" in text:
                    _replace(run.layer / rel, with_pit_plugin(text, classes=sorted(targets), junit5=junit5,
                                                              timeout_ms=_timeout_ms(run), add=rel in modules))
        except (OSError, OutsideWorkspace, UnicodeDecodeError, ValueError) as exc:
            return f"echo {shlex.quote(f'the POM could not be given PIT: {exc}')} >&2; exit 1"
        log = f"{FOLDER}/pit.log"
        mvn = shlex.join(["mvn", "-o", "-B", *_profile_words(run.commands[0] if run.commands else ""),
                          "test-compile", f"org.pitest:pitest-maven:{PITEST_VERSION}:mutationCoverage"])
        mvn = f"{mvn} {repository}"
        gone = shlex.quote(f"PIT {PITEST_VERSION} is not in the Maven repository the tests run with (offline): "
                           "it could not be fetched from Maven Central")
        # report.json marks a run that ended well; the reports are each module's (``report``).
        return (f"timeout -s TERM -k 15 {int(run.settings.budget)} {mvn} > {log} 2>&1; code=$?; "
                f"if [ $code -eq 0 ]; then echo '{{}}' > {FOLDER}/report.json; exit 0; fi; "
                f"if grep -q 'Plugin org.pitest:pitest-maven:[^ ]* or one of its dependencies could not be resolved' "
                f"{log}; then echo {gone}; exit {UNAVAILABLE}; fi; tail -c 3000 {log}; exit $code")

    def report(self, run: ToolRun) -> tuple[str, list[MutantRecord]]:
        reports = [rel for rel in (str(PurePosixPath(pom).parent / REPORT) for pom in _module_poms(run.layer))
                   if (run.layer / rel).is_file()]
        if not reports:
            raise ValueError("PIT ended without a report in any module of the build")
        return f"PIT {PITEST_VERSION}", report_mutants(run.layer, run.changes, run.settings.max_mutants, reports)

    def why_it_failed(self, output: str) -> str:
        """Maven's error block: the ``[ERROR]`` lines before the first bare one (after it, the same advice
        whatever went wrong ends every failed build).

        Example:
            >>> PIT().why_it_failed("[INFO] x\\n[ERROR] Failed to execute goal org.pitest: boom -> [Help 1]\\n"
            ...                     "[ERROR] \\n[ERROR] Re-run Maven using the -X switch\\n")
            '[ERROR] Failed to execute goal org.pitest: boom -> [Help 1]'
        """
        errors: list[str] = []
        for line in _ANSI.sub("", output).splitlines():
            if not line.startswith("[ERROR]"):
                continue
            if line.strip() != "[ERROR]":
                errors.append(line.strip())
            elif errors:
                break
        return " ".join(errors)[:600] if errors else super().why_it_failed(output)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _unavailable(reason: str) -> str:
    return f"echo {shlex.quote(reason)}; exit {UNAVAILABLE}"


def _timeout_ms(run: ToolRun) -> int:
    """PIT's ``timeoutConstant``: the configured ``mutantTimeout``, else at most 10 s above the test's own time
    (PIT times each test, so the whole unmutated ``mvn test``, Maven's start included, is far too long)."""
    seconds = run.settings.mutant_timeout or min(run.mutant_timeout, 10.0)
    return int(seconds * 1000)


def _profile_words(command: str) -> list[str]:
    """The judging command's profiles (``-P``) and properties (``-D``), which may decide the build, but not
    those that select or skip tests."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    skipped = ("-Dtest=", "-Dit.test=", "-DskipTests", "-Dmaven.test.skip", "-Dsurefire.", "-DfailIfNoTests",
               "-Dmaven.repo.local")
    return [w for w in words if (w.startswith(("-P", "-D")) and len(w) > 2 and not w.startswith(skipped))]


def _is_test(change: ChangedFile, run: ToolRun) -> bool:
    return "src/test/" in f"/{change.path}" or change.path in run.tests


def _class_of(layer: Path, rel: str) -> str | None:
    """The class a source file declares by its name: its ``package``, then the file's name."""
    try:
        text = read_confined(layer, rel, 1 << 20).decode("utf-8", errors="replace")
    except (OSError, OutsideWorkspace):
        return None
    stem = PurePosixPath(rel).stem
    found = _PACKAGE.search(re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S))
    if found is None:
        return stem
    package = re.sub(r"\s+", "", found.group(1))
    return f"{package}.{stem}"


def _targets(run: ToolRun) -> dict[str, str]:
    """The changed classes PIT mutates, by name, with their files."""
    found = {}
    for change in run.changes:
        if change.path.endswith(".java") and not _is_test(change, run):
            name = _class_of(run.layer, change.path)
            if name is not None:
                found[name] = change.path
    return found


def _module_poms(layer: Path) -> list[str]:
    """The POMs of the build's modules (the root's first), or none when the root has no pom.xml."""
    if not (layer / "pom.xml").is_file() or (layer / "pom.xml").is_symlink():
        return []
    return [PurePosixPath(module, "pom.xml").as_posix() for module in maven_modules(layer)]


def _poms(layer: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(layer):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
        if "pom.xml" in files:
            found.append(Path(folder, "pom.xml").relative_to(layer).as_posix())
    return sorted(found, key=lambda rel: (rel.count("/"), rel))


def _replace(path: Path, text: str) -> None:
    """Write the layer's copy anew (a new file: never through a link into the judged tree)."""
    fresh = path.with_name(f".{path.name}.sprintflow-pit")
    fresh.write_text(text, encoding="utf-8")
    os.replace(fresh, path)


def with_pit_plugin(pom: str, classes: list[str], junit5: bool, timeout_ms: int = 4000, add: bool = True) -> str:
    """``pom`` without any ``pitest-maven`` plugin of its own and, with ``add``, with the judge's: PIT at
    :data:`PITEST_VERSION` in ``build/plugins``, its configuration whole (inherited configuration overridden),
    the JUnit 5 plugin as its dependency when ``junit5``. ValueError when ``pom`` is not a POM.

    Example:
        >>> pom = with_pit_plugin('<project><modelVersion>4.0.0</modelVersion></project>', ["org.acme.Calc"], True)
        >>> 'pitest-junit5-plugin' in pom, '<param>org.acme.Calc$*</param>' in pom
        (True, True)
    """
    if "<!DOCTYPE" in pom or "<!ENTITY" in pom:
        raise ValueError("pom.xml declares a DOCTYPE or entities")
    try:
        project = ET.fromstring(pom)
    except ET.ParseError as exc:
        raise ValueError(f"pom.xml is not XML ({exc})") from None
    ns = project.tag[1:].split("}", 1)[0] if project.tag.startswith("{") else ""
    if project.tag != (f"{{{ns}}}project" if ns else "project"):
        raise ValueError(f"pom.xml's root is <{project.tag}>, not <project>")

    def q(tag: str) -> str:
        return f"{{{ns}}}{tag}" if ns else tag

    parents = {child: parent for parent in project.iter() for child in parent}
    for plugin in list(project.iter(q("plugin"))):
        if (plugin.findtext(q("artifactId")) or "").strip() == "pitest-maven":
            parents[plugin].remove(plugin)
    if add:
        build = project.find(q("build"))
        if build is None:
            build = ET.SubElement(project, q("build"))
        plugins = build.find(q("plugins"))
        if plugins is None:
            plugins = ET.SubElement(build, q("plugins"))
        plugin = ET.SubElement(plugins, q("plugin"))
        for tag, value in (("groupId", "org.pitest"), ("artifactId", "pitest-maven"), ("version", PITEST_VERSION)):
            ET.SubElement(plugin, q(tag)).text = value
        if junit5:
            dependency = ET.SubElement(ET.SubElement(plugin, q("dependencies")), q("dependency"))
            for tag, value in (("groupId", "org.pitest"), ("artifactId", "pitest-junit5-plugin"),
                               ("version", JUNIT5_PLUGIN_VERSION)):
                ET.SubElement(dependency, q(tag)).text = value
        config = ET.SubElement(plugin, q("configuration"), {"combine.self": "override"})
        lists = {"targetClasses": [p for name in classes for p in (name, f"{name}$*")], "targetTests": ["*"],
                 "outputFormats": ["XML"], "mutators": ["DEFAULTS"]}
        for tag, values in lists.items():
            element = ET.SubElement(config, q(tag))
            for value in values:
                ET.SubElement(element, q("param")).text = value
        for tag, value in (("reportsDirectory", f"${{project.basedir}}/{FOLDER}/pit"), ("timestampedReports", "false"),
                           ("crossModule", "true"),
                           ("threads", "1"), ("failWhenNoMutations", "false"), ("timeoutConstant", str(timeout_ms)),
                           ("skip", "false"), ("mutationThreshold", "0"), ("coverageThreshold", "0"),
                           ("exportLineCoverage", "false"), ("verbose", "false")):
            ET.SubElement(config, q(tag)).text = value
    if ns:
        ET.register_namespace("", ns)
    return ET.tostring(project, encoding="unicode")


def report_mutants(layer: Path, changes: list[ChangedFile], max_mutants: int,
                   reports: list[str]) -> list[MutantRecord]:
    """PIT's ``mutations.xml`` files (``reports``, in ``layer``: one per module that ran PIT), merged: a record
    per mutant of the changed lines, its best status in any report (:data:`_RANK`), at most ``max_mutants``
    (one per changed method first, then in turn; every changed method gets one). Strict: a report that is
    not PIT's (its root, a mutation without its file, class, method, line or a known status) is a
    ValueError that says what is wrong and in which report."""
    merged: dict[tuple[str, ...], tuple[dict[str, str], str]] = {}
    for rel in reports:
        for fields, status in _mutations(layer, rel):
            key = tuple(fields.values())
            if key not in merged or _RANK[status] > _RANK[merged[key][1]]:
                merged[key] = (fields, status)
    files = {}
    for change in changes:
        name = _class_of(layer, change.path) if change.path.endswith(".java") else None
        if name is not None:
            files[(name.rsplit(".", 1)[0] if "." in name else "", PurePosixPath(change.path).name)] = change
    kept: dict[tuple[str, str], list[tuple[MutantRecord, str]]] = {}
    for fields, status in merged.values():
        line = int(fields["lineNumber"])
        outer = fields["mutatedClass"].split("$", 1)[0]
        package = outer.rsplit(".", 1)[0] if "." in outer else ""
        changed = files.get((package, fields["sourceFile"]))
        if changed is None or not any(start <= line <= end for start, end in changed.lines):
            continue
        function = _function(fields["mutatedClass"], fields["mutatedMethod"])
        record = MutantRecord(file=changed.path, line=line, function=function,
                              operator=fields["mutator"].rsplit(".", 1)[-1] or "?", status=_STATUS[status])
        kept.setdefault((changed.path, function), []).append((record, fields["methodDescription"]))
    return _chosen(_overloads_apart(kept), max_mutants)


def _mutations(layer: Path, rel: str) -> list[tuple[dict[str, str], str]]:
    """The mutations of one ``mutations.xml``: the fields that tell a mutant apart, and its PIT status."""
    try:
        data = read_confined(layer, rel, MAX_REPORT_BYTES)
    except OutsideWorkspace as exc:
        raise ValueError(f"PIT's report {rel} cannot be read: {exc}") from None
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ValueError(f"PIT's report {rel} declares a DOCTYPE or entities: it is not PIT's")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"PIT's report {rel} is not XML: {exc}") from None
    if root.tag != "mutations":
        raise ValueError(f"PIT's report {rel} has <{root.tag}> at its root, not <mutations>")
    found = []
    for index, mutation in enumerate(root):
        where = f"PIT's report {rel}, mutation {index + 1}"
        if mutation.tag != "mutation":
            raise ValueError(f"{where} is a <{mutation.tag}>")
        fields = {tag: (mutation.findtext(tag) or "").strip()
                  for tag in ("sourceFile", "mutatedClass", "mutatedMethod", "methodDescription", "lineNumber",
                              "mutator")}
        fields["indexes"] = " ".join(i.text or "" for i in mutation.iter("index"))
        empty = [tag for tag in ("sourceFile", "mutatedClass", "mutatedMethod", "lineNumber") if not fields[tag]]
        if empty:
            raise ValueError(f"{where} has no {', '.join(empty)}")
        status = mutation.get("status", "")
        if status not in _STATUS:
            raise ValueError(f"{where} has an unknown status {status!r}")
        if not fields["lineNumber"].isdigit() or int(fields["lineNumber"]) < 1:
            raise ValueError(f"{where} has lineNumber {fields['lineNumber']!r}, not a line")
        found.append((fields, status))
    return found


def _function(mutated_class: str, method: str) -> str:
    lambda_of = re.fullmatch(r"lambda\$(.+?)\$\d+", method)
    method = lambda_of.group(1) if lambda_of else method
    nested = mutated_class.rsplit(".", 1)[-1].split("$")
    if method in ("<init>", "<clinit>"):
        return nested[-1] if method == "<init>" else f"{nested[-1]} (static)"
    inner = [part for part in nested[1:] if not part.isdigit()]
    return ".".join([*inner, method])


def _overloads_apart(kept: dict[tuple[str, str], list[tuple[MutantRecord, str]]]
                     ) -> dict[tuple[str, str], list[MutantRecord]]:
    """Methods of one name with several descriptors are told apart by them."""
    apart: dict[tuple[str, str], list[MutantRecord]] = {}
    for (file, function), group in kept.items():
        overloaded = len({description for _, description in group}) > 1
        for record, description in group:
            name = f"{function}{description}" if overloaded else function
            apart.setdefault((file, name), []).append(record.model_copy(update={"function": name}))
    return apart


def _chosen(groups: dict[tuple[str, str], list[MutantRecord]], cap: int) -> list[MutantRecord]:
    """One mutant of each method (in line order), then one of each in turn, until ``cap`` (every method gets one)."""
    queues = [sorted(group, key=lambda m: m.line) for _, group in sorted(groups.items(),
                                                                         key=lambda kv: min(m.line for m in kv[1]))]
    chosen: list[MutantRecord] = []
    depth = 0
    while any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and (depth == 0 or len(chosen) < cap):
                chosen.append(queue[depth])
        depth += 1
    return chosen
