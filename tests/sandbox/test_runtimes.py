"""Which runtime a project declares, and which one it gets (or why it cannot have it)."""

from __future__ import annotations

import json

import pytest

from sprintflow.errors import ConfigError, InfrastructureError
from sprintflow.sandbox.runtimes import (
    Declaration,
    DeclaredRuntimes,
    PythonPin,
    RuntimeUnavailable,
    declared_runtimes,
    pick_node_version,
    pick_python_suite,
    pick_suite,
    pin_installs,
)

from .projects import FIXTURES

VERSIONS = ["16.20.2", "18.20.4", "18.20.8", "20.0.0", "20.19.5", "20.20.2", "21.7.3", "22.23.5", "24.1.0",
            "24.22.3", "25.0.0-rc.1"]


def _write(ws, name, text):
    (ws / name).write_text(text)
    return ws


@pytest.mark.parametrize("files, expected", [
    ({".nvmrc": "v20.19.5\n"}, ".nvmrc '20.19.5'".replace("'20", "'v20")),
    ({".node-version": "# pinned\n22\n"}, ".node-version '22'"),
    ({"package.json": json.dumps({"volta": {"node": "20.19.5"}, "engines": {"node": ">=18"}})},
     "package.json volta.node '20.19.5'"),
    ({"package.json": json.dumps({"engines": {"node": "^20.19.0 || >=22.12"}})},
     "package.json engines.node '^20.19.0 || >=22.12'"),
    ({".nvmrc": "lts/iron", "package.json": json.dumps({"engines": {"node": ">=18"}})}, ".nvmrc 'lts/iron'"),
])
def test_node_declarations_in_the_order_version_managers_read_them(tmp_path, files, expected):
    for name, text in files.items():
        _write(tmp_path, name, text)
    assert str(declared_runtimes(tmp_path).node) == expected


def test_python_declarations(tmp_path):
    _write(tmp_path, "pyproject.toml", '[project]\nname = "x"\nrequires-python = ">=3.10"\n')
    assert str(declared_runtimes(tmp_path).python) == "pyproject.toml project.requires-python '>=3.10'"
    _write(tmp_path, ".python-version", "3.13\n")
    assert str(declared_runtimes(tmp_path).python) == ".python-version '3.13'"


def test_nothing_declared(tmp_path):
    runtimes = declared_runtimes(tmp_path)
    assert runtimes.node is None and runtimes.python is None


def test_a_broken_manifest_is_a_config_error_naming_the_file(tmp_path):
    _write(tmp_path, "package.json", "{not json")
    with pytest.raises(ConfigError, match="package.json: not valid JSON"):
        declared_runtimes(tmp_path)


@pytest.mark.parametrize("spec, expected", [
    (">=20", "20.20.2"),               # the oldest major that satisfies, newest patch
    (">=20.19", "20.20.2"),
    ("^20.19.0 || ^22.13.0 || >=24", "20.20.2"),
    ("20.x || 22.x", "20.20.2"),
    ("22", "22.23.5"),
    ("v20.19.5", "20.19.5"),
    ("lts/iron", "20.20.2"),
    ("lts/jod", "22.23.5"),
    ("node", "24.22.3"),               # prereleases never
    (">=18.18", None),                 # the base image's node 18.20.4 satisfies: no runtime layer
    ("18", None),
])
def test_node_version_picked(spec, expected):
    assert pick_node_version(Declaration(".nvmrc", spec), VERSIONS, "18.20.4") == expected


@pytest.mark.parametrize("spec, message", [
    (">=99", "no node release satisfies it"),
    ("lts/unknown-name", "not a node version or range"),
    ("banana", "not a node version or range"),
])
def test_a_node_we_cannot_provide_is_an_environment_error_naming_the_mismatch(spec, message):
    with pytest.raises(RuntimeUnavailable, match=message) as caught:
        pick_node_version(Declaration("package.json engines.node", spec), VERSIONS, "18.20.4")
    assert isinstance(caught.value, InfrastructureError) and caught.value.exit_code == 3
    assert f"package.json engines.node {spec!r}" in str(caught.value)


@pytest.mark.parametrize("spec, suite", [
    (">=3.8", "bookworm"), ("3.11", "bookworm"), ("3.11.4", "bookworm"), (">=3.11.4,<4", "bookworm"),
    ("3.13", "trixie"), (">=3.12", "trixie"), ("~=3.13.0", "trixie"),
])
def test_python_from_the_debian_release_that_carries_it(spec, suite):
    assert pick_python_suite(Declaration(".python-version", spec)) == suite


@pytest.mark.parametrize("spec", ["3.12", "<3.10", "pypy3.10", "==2.7.*"])
def test_a_python_no_debian_release_carries_is_an_environment_error(spec):
    with pytest.raises(RuntimeUnavailable, match="available: python 3.11 .bookworm., python 3.13 .trixie."):
        pick_python_suite(Declaration(".python-version", spec))


@pytest.mark.parametrize(("go_mod", "declared", "picked"), [
    ("module m\n\ngo 1.15\n", ("go.mod go", "1.15"), "1.26.8"),  # a minimum this machine's go satisfies
    ("module m\n\ngo 1.25.0\n", ("go.mod go", "1.25.0"), "1.26.8"),
    ("module m\n\ngo 1.27.3\n", ("go.mod go", "1.27.3"), "1.27.3"),
    ("module m\n\ngo 1.22\n\ntoolchain go1.28.1 // the team's\n", ("go.mod toolchain", "1.28.1"), "1.28.1"),
    ("module m\n\ngo 1.28\n\ntoolchain go1.22.0\n", ("go.mod go", "1.28"), "1.28.0"),  # toolchains name 1.N.0
])
def test_a_go_mod_gets_this_machines_go_unless_it_asks_for_a_newer_one(tmp_path, go_mod, declared, picked):
    from sprintflow.sandbox.runtimes import pick_go_version

    (tmp_path / "go.mod").write_text(go_mod)
    declaration = declared_runtimes(tmp_path).go
    assert declaration is not None and (declaration.source, declaration.spec) == declared
    assert pick_go_version(declaration) == picked


def test_a_go_line_that_is_no_version_stops_with_where_it_is_written(tmp_path):
    from sprintflow.sandbox.runtimes import pick_go_version

    (tmp_path / "go.mod").write_text("module m\n\ngo latest\n")
    with pytest.raises(RuntimeUnavailable, match=r"go.mod go 'latest' is not a Go version"):
        pick_go_version(declared_runtimes(tmp_path).go)
    (tmp_path / "go.mod").write_text("module m\n")
    assert declared_runtimes(tmp_path).go is None


POM = "<project><properties>{}</properties></project>"


@pytest.mark.parametrize("files, declared, suite, jdk", [
    ({"pom.xml": POM.format("<maven.compiler.release>11</maven.compiler.release>")},
     "pom.xml maven.compiler.release '11'", "bookworm", 17),
    ({"pom.xml": POM.format("<!-- <java.version>8</java.version> -->"
                            "<maven.compiler.target>1.8</maven.compiler.target>")},
     "pom.xml maven.compiler.target '1.8'", "bookworm", 17),
    ({"pom.xml": "<project><build><plugin><configuration><release>21</release></configuration></plugin></build>"
                 "</project>"},
     "pom.xml the compiler plugin's release '21'", "trixie", 21),
    ({"pom.xml": POM.format("<java.version>17</java.version>"), ".sdkmanrc": "java=25.0.1-tem\n"},
     ".sdkmanrc java '25.0.1-tem'", "trixie", 25),
    ({"pom.xml": "<project/>", ".java-version": "17\n"}, ".java-version '17'", "bookworm", 17),
    ({"pom.xml": "<project/>"}, "None", "bookworm", 17),
])
def test_a_pom_gets_the_oldest_debian_jdk_that_compiles_its_release(tmp_path, files, declared, suite, jdk):
    from sprintflow.sandbox.runtimes import pick_jdk, pick_suite

    for name, text in files.items():
        _write(tmp_path, name, text)
    runtimes = declared_runtimes(tmp_path)
    assert runtimes.maven and str(runtimes.java) == declared
    assert pick_suite(runtimes) == suite and pick_jdk(runtimes.java, suite) == jdk


@pytest.mark.parametrize("files, declared, suite", [
    # a minimum: trixie's rustc 1.85 (bookworm's cargo 1.63 cannot reach crates.io here)
    ({"Cargo.toml": '[package]\nname = "a"\nrust-version = "1.60"\n'}, "Cargo.toml package.rust-version '1.60'",
     "trixie"),
    ({"Cargo.toml": '[workspace]\n[workspace.package]\nrust-version = "1.80"\n'},
     "Cargo.toml workspace.package.rust-version '1.80'", "trixie"),
    ({"Cargo.toml": '[package]\nname = "a"\nrust-version = "1.60"\n', "rust-toolchain.toml":
      '[toolchain]\nchannel = "1.82.0"\ncomponents = ["clippy"]\n'}, "rust-toolchain.toml channel '1.82.0'", "trixie"),
    ({"Cargo.toml": '[package]\nname = "a"\n', "rust-toolchain": "stable\n"}, "rust-toolchain 'stable'", "trixie"),
    # the locked dependencies decide too: a version 4 lockfile needs cargo 1.78
    ({"Cargo.toml": '[package]\nname = "a"\n', "Cargo.lock": "# generated\nversion = 4\n"},
     "Cargo.lock version 4 '1.78'", "trixie"),
    ({"Cargo.toml": '[package]\nname = "a"\n'}, "None", "trixie"),
])
def test_a_cargo_project_gets_the_debian_rustc_that_meets_its_declaration(tmp_path, files, declared, suite):
    from sprintflow.sandbox.runtimes import pick_suite

    for name, text in files.items():
        _write(tmp_path, name, text)
    runtimes = declared_runtimes(tmp_path)
    assert runtimes.cargo and str(runtimes.rust) == declared
    assert pick_suite(runtimes) == suite


@pytest.mark.parametrize("files, message", [
    ({"Cargo.toml": '[package]\nname = "a"\nrust-version = "1.90"\n'},
     "Cargo.toml package.rust-version '1.90': no Debian release here has it"),
    ({"Cargo.toml": '[package]\nname = "a"\n', "rust-toolchain.toml": '[toolchain]\nchannel = "nightly-2026-01-01"\n'},
     "rustup's nightly and beta channels are not reachable"),
    ({"pom.xml": POM.format("<maven.compiler.release>26</maven.compiler.release>")},
     "pom.xml maven.compiler.release '26': no Debian release here has it"),
    ({"pom.xml": POM.format("<maven.compiler.release>${jdk}</maven.compiler.release>")},
     "is not a Java release"),
    # two declarations no one release meets together
    ({"pom.xml": POM.format("<maven.compiler.release>21</maven.compiler.release>"), ".python-version": "3.11\n"},
     ".python-version '3.11' needs bookworm; pom.xml maven.compiler.release '21' needs trixie"),
    ({"Cargo.toml": '[package]\nname = "a"\n', ".python-version": "3.11\n"},
     ".python-version '3.11' needs bookworm; a Cargo.toml (no rust-version) needs trixie"),
])
def test_a_jdk_or_rustc_nothing_here_has_is_an_environment_error_naming_the_declaration(tmp_path, files, message):
    from sprintflow.sandbox.runtimes import pick_suite

    for name, text in files.items():
        _write(tmp_path, name, text)
    with pytest.raises(RuntimeUnavailable) as raised:
        pick_suite(declared_runtimes(tmp_path))
    assert message in str(raised.value)
    assert isinstance(raised.value, InfrastructureError)


def _lock(ws, packages: dict) -> None:
    (ws / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": {
        "": {"name": "app", "engines": {"node": ">=18"}}, **packages}}))


def test_the_locked_packages_engines_are_met_with_the_projects_declaration(tmp_path):
    """A project that says >=18 whose locked eslint needs ^20.19 runs on node 20, which meets both."""
    _write(tmp_path, "package.json", json.dumps({"engines": {"node": ">=18"}}))
    _lock(tmp_path, {"node_modules/eslint": {"version": "10.0.0", "engines": {"node": "^20.19.0 || ^22.13.0 || >=24"}},
                     "node_modules/fsevents": {"optional": True, "engines": {"node": ">=99"}},  # npm skips it here
                     "node_modules/odd": {"engines": {"node": "not a range"}}})
    runtimes = declared_runtimes(tmp_path)
    assert [str(d) for d in runtimes.node_locked] == [  # the project's own entry is package.json's declaration
        "package-lock.json eslint engines.node '^20.19.0 || ^22.13.0 || >=24'",
        "package-lock.json odd engines.node 'not a range'"]
    assert pick_node_version(runtimes.node, VERSIONS, "18.20.4", runtimes.node_locked) == "20.20.2"
    # a lockfile alone, with no declaration of the project's, still decides
    assert pick_node_version(None, VERSIONS, "18.20.4", runtimes.node_locked) == "20.20.2"


def test_locked_engines_nothing_meets_together_leave_the_declaration_to_decide(tmp_path):
    _lock(tmp_path, {"node_modules/a": {"engines": {"node": "<17"}}, "node_modules/b": {"engines": {"node": ">=22"}}})
    locked = declared_runtimes(tmp_path).node_locked
    assert pick_node_version(Declaration("package.json engines.node", ">=18"), VERSIONS, "18.20.4", locked) is None


def test_the_pins_of_requirements_files_are_read_as_pip_reads_them(tmp_path):
    _write(tmp_path, "requirements.txt", "\n".join([
        "# the app",
        "Django==6.0 \\",
        "    --hash=sha256:1cc2 \\",
        "    --hash=sha256:7b0c",
        "attrs>=23  # a range pins nothing",
        "numpy==2.*",
        "-e .",
        "--index-url https://pypi.org/simple",
        "requests @ https://example.org/requests-2.0.tar.gz",
        "tomli===2.2.1 ; python_version < '3.11'",
        "--requirement=requirements/base.txt",
        "-r ../outside.txt",
        "not a requirement ==",
        "Django==5.0",  # pip would refuse the conflict; the first pin is the one told
    ]) + "\n")
    (tmp_path / "requirements").mkdir()
    _write(tmp_path / "requirements", "base.txt", "six==1.17.0\n-r ../requirements.txt\n")  # a cycle
    (tmp_path.parent / "outside.txt").write_text("leaked==1.0\n")
    pins = declared_runtimes(tmp_path).python_pins
    assert [str(pin) for pin in pins] == ["requirements.txt line 2 django==6.0",
                                          "requirements.txt line 10 tomli==2.2.1",
                                          "requirements/base.txt line 1 six==1.17.0"]
    assert pins[1].marker == 'python_version < "3.11"'


def test_hostile_requirements_files_pin_nothing_and_never_block(tmp_path):
    import os

    os.mkfifo(tmp_path / "requirements.txt")  # pip would block on it; the setup step is told of no file
    (tmp_path / "test-requirements.txt").write_bytes(  # a lone surrogate, as bytes no UTF-8 decoder accepts
        b"-r big.txt\n-r fifo\n-r link.txt\nok==1.0\n\xed\xb3\xbf==2\n")
    (tmp_path / "big.txt").write_bytes(b"x==1\n" * (1 << 19))  # over the megabyte read
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link.txt").symlink_to("/etc/passwd")
    (tmp_path / "dev-requirements.txt").write_bytes(b"\xff\xfe==1\nbinary\x00==2\n")
    assert [str(pin) for pin in declared_runtimes(tmp_path).python_pins] == ["test-requirements.txt line 4 ok==1.0"]


def _index(name: str) -> list[dict]:
    """The files PyPI's JSON simple API listed for the project (recorded, only the versions used here)."""
    return json.loads((FIXTURES / "pypi" / f"{name}.json").read_text())["files"]


@pytest.mark.parametrize("name, version, marker, suites", [
    ("numpy", "1.26.4", None, {"bookworm"}),  # wheels up to cp312: 3.13 would build it from source
    ("numpy", "2.3.0", None, {"bookworm", "trixie"}),
    ("django", "6.0", None, {"trixie"}),  # requires-python >= 3.12, on its wheel and its sdist
    ("django", "6.0", "python_version >= '3.13'", {"bookworm", "trixie"}),  # not installed on 3.11
    ("attrs", "25.3.0", None, {"bookworm", "trixie"}),
    ("attrs", "0.0.1", None, set()),  # a version the index does not have
])
def test_a_pin_fits_the_releases_whose_python_the_index_has_a_file_for(name, version, marker, suites):
    pin = PythonPin(name, version, "requirements.txt line 1", marker)
    assert {suite for suite in ("bookworm", "trixie") if pin_installs(pin, _index(name), suite)} == suites


def test_the_pins_choose_the_release_where_the_declaration_leaves_it_open():
    """A project saying >=3.10 that pins Django 6.0 (3.12 or later) gets trixie's 3.13, as pip would need."""
    django = (PythonPin("django", "6.0", "requirements.txt line 1"),)

    def fit(suite: str) -> bool:
        return all(pin_installs(pin, _index(pin.name), suite) for pin in django)

    open_ended = DeclaredRuntimes(None, Declaration("pyproject.toml project.requires-python", ">=3.10"),
                                  python_pins=django)
    assert pick_suite(open_ended) == "bookworm"  # the declaration alone
    assert pick_suite(open_ended, pins_fit=fit) == "trixie"
    exact = DeclaredRuntimes(None, Declaration(".python-version", "3.11"), python_pins=django)
    assert pick_suite(exact, pins_fit=fit) == "bookworm"  # nothing meets both: the declaration decides


def _lock_project(ws, lock: str, text: str, requires: str = ">=3.10"):
    """A project that installs from ``lock`` (the setup step's own rule), with a requirements file it ignores."""
    _write(ws, "pyproject.toml", f'[project]\nname = "forked"\nversion = "0.1.0"\nrequires-python = "{requires}"\n')
    _write(ws, "requirements.txt", "django==6.0\n")  # not what a locked project installs
    return _write(ws, lock, text)


def test_a_uv_lock_pins_what_it_installs_each_under_its_fork(tmp_path):
    """A real uv.lock (``uv lock`` of numpy >= 2.2 under requires-python >= 3.10): three numpy pins, one per
    python fork, each with the wheels the lock allows; the project itself and the requirements file pin nothing."""
    from sprintflow.sandbox.downloads import pins_fit

    lock = (FIXTURES / "numpy-forks.uv.lock").read_text()
    pins = declared_runtimes(_lock_project(tmp_path, "uv.lock", lock)).python_pins
    assert sorted(str(pin) for pin in pins) == ["uv.lock attrs==26.1.0", "uv.lock numpy==2.2.6",
                                                "uv.lock numpy==2.4.6", "uv.lock numpy==2.5.5",
                                                "uv.lock tomli==2.5.0"]
    by_version = {pin.version: pin for pin in pins}
    assert by_version["2.2.6"].marker == "(python_full_version < '3.11')"
    assert by_version["2.5.5"].marker == "(python_full_version >= '3.12')"
    assert by_version["26.1.0"].marker is None and by_version["2.5.0"].marker == "(python_full_version < '3.11')"
    assert any(name.endswith("cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl")
               for name, _ in by_version["2.5.5"].files or ())
    fit = pins_fit(pins, cache=tmp_path / "cache")  # the lock's files: no index asked
    assert (fit("bookworm"), fit("trixie")) == (True, True)
    assert not (tmp_path / "cache" / "pypi").exists() or not list((tmp_path / "cache" / "pypi").glob("numpy*"))


def test_a_lock_whose_wheels_need_a_newer_python_chooses_the_release_that_has_it(tmp_path):
    """The same lock's numpy 2.5.5 without its fork marker, as a lock made for >= 3.12 and kept when the
    project said >= 3.11: its wheels are cp312 and later, so only trixie's 3.13 installs it."""
    from sprintflow.sandbox.downloads import pins_fit

    blocks = (FIXTURES / "numpy-forks.uv.lock").read_text().split("\n[[package]]\n")
    numpy = next(block for block in blocks if block.startswith('name = "numpy"\nversion = "2.5.5"'))
    numpy = numpy.split("resolution-markers = [", 1)[0] + numpy.split("]\n", 1)[1]
    runtimes = declared_runtimes(_lock_project(tmp_path, "uv.lock", "version = 1\n\n[[package]]\n" + numpy, ">=3.11"))
    assert [(str(pin), pin.marker) for pin in runtimes.python_pins] == [("uv.lock numpy==2.5.5", None)]
    assert pick_suite(runtimes) == "bookworm"  # the declaration alone
    assert pick_suite(runtimes, pins_fit=pins_fit(runtimes.python_pins, cache=tmp_path / "cache")) == "trixie"


def test_a_poetry_lock_pins_its_packages_with_their_markers_and_python_versions(tmp_path):
    """cleo 2.1.0's real poetry.lock: each package's ``python-versions`` is its files' requires-python,
    its ``markers`` where it is installed; on 3.11 and 3.13 alike every pin installs."""
    from sprintflow.sandbox.downloads import pins_fit

    lock = (FIXTURES / "cleo-2.1.0.poetry.lock").read_text()
    ws = _write(tmp_path, "pyproject.toml", '[tool.poetry]\nname = "cleo"\nversion = "2.1.0"\n')
    pins = declared_runtimes(_write(ws, "poetry.lock", lock)).python_pins
    alabaster = [pin for pin in pins if pin.name == "alabaster"]
    assert [(pin.version, pin.marker) for pin in alabaster] == [("0.7.13", 'python_version < "3.10"'),
                                                               ("0.7.16", 'python_version >= "3.10"')]
    assert alabaster[1].files == (("alabaster-0.7.16-py3-none-any.whl", ">=3.9"),
                                  ("alabaster-0.7.16.tar.gz", ">=3.9"))
    assert len(pins) > 30 and all(pin.files for pin in pins)
    fit = pins_fit(pins, cache=tmp_path / "cache")
    assert (fit("bookworm"), fit("trixie")) == (True, True)


@pytest.mark.parametrize("text", ["version = [", "\x00", "[[package]]\nname = 3\nversion = []\n",
                                  "[[package]]\nname = \"x\"\nversion = \"1\"\nsource = \"weird\"\n"])
def test_a_lock_that_cannot_be_read_pins_nothing(tmp_path, text):
    """The installer's own message says what is wrong with it; choosing a release must not fail first."""
    assert declared_runtimes(_lock_project(tmp_path, "uv.lock", text)).python_pins == ()


def test_pnpm_lockfiles_engines_are_met_too(tmp_path):
    """The fixture's pnpm-lock.yaml pins vite 7 (under vitest), which needs ^20.19: node 18 would crash."""
    import shutil

    shutil.copytree(FIXTURES / "tiny-pnpm", tmp_path / "ws")
    locked = declared_runtimes(tmp_path / "ws").node_locked
    assert "pnpm-lock.yaml vite engines.node '^20.19.0 || >=22.12.0'" in [str(d) for d in locked]
    assert pick_node_version(None, VERSIONS, "18.20.4", locked) == "20.20.2"


def test_a_pnpm_lockfile_6_key_and_an_optional_snapshot(tmp_path):
    _write(tmp_path, "pnpm-lock.yaml", "\n".join([
        "lockfileVersion: '9.0'",
        "packages:",
        "  /old@1.0.0(peer@2.0.0):",  # lockfile 6's key, with a peer suffix
        "    engines: {node: '>=16'}",
        "  '@scope/fsevents@2.3.3':",
        "    engines: {node: '>=99'}",
        "snapshots:",
        "  '@scope/fsevents@2.3.3':",
        "    optional: true",
    ]) + "\n")
    assert [str(d) for d in declared_runtimes(tmp_path).node_locked] == ["pnpm-lock.yaml old engines.node '>=16'"]


@pytest.mark.parametrize("text", [
    "packages: [unclosed\n",  # not YAML
    "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\npackages: *c\n",  # aliases: a list, not a map
    "!!python/object/apply:os.system ['true']\n",  # the safe loader constructs no objects
    "- just\n- a list\n",
])
def test_a_broken_or_hostile_pnpm_lockfile_records_no_engines(tmp_path, text):
    _write(tmp_path, "pnpm-lock.yaml", text)
    assert declared_runtimes(tmp_path).node_locked == ()
