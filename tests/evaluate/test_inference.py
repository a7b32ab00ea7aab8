"""Inferring the report of the commands people write, through package.json scripts and flags."""

import json
from pathlib import Path

import pytest

from sprintflow.evaluate.inference import GENERIC, ReportSpec, infer_report, tool_invocations

FEEDBACK = Path(__file__).resolve().parents[1] / "fixtures" / "feedback"


@pytest.fixture
def node_workspace(tmp_path):
    scripts = {
        "lint": "npm run lint:js",
        "lint:js": "eslint . --max-warnings 0",
        "typecheck": "tsc --noEmit",
        "pretest": "npm run typecheck",
        "test": "vitest run",
        "test:json": "vitest run --reporter=json --outputFile=reports/vitest.json",
        "check": "eslint . && tsc --noEmit",
        "jest": "cross-env NODE_ENV=test jest --ci",
        "e2e": "playwright test",
        "loop": "npm run loop",
        "build": "rimraf dist && tsup src",
    }
    (tmp_path / "package.json").write_text(json.dumps({"name": "app", "scripts": scripts}))
    return tmp_path


@pytest.mark.parametrize("command, expected", [
    # npm scripts, followed through `npm run` chains; npm runs pre<name> first
    ("npm run lint", ReportSpec("eslint-stylish")),
    ("npm test", ReportSpec("tsc+vitest-text")),
    ("npm t", ReportSpec("tsc+vitest-text")),
    ("pnpm test", ReportSpec("vitest-text")),  # pnpm does not run pre scripts by default
    ("yarn lint", ReportSpec("eslint-stylish")),
    ("yarn run check", ReportSpec("eslint-stylish+tsc")),
    ("bun run typecheck", ReportSpec("tsc")),
    ("npm run test:json", ReportSpec("vitest", "reports/vitest.json", "stdout")),
    ("npm run test -- --reporter=json --outputFile=out.json", ReportSpec("vitest", "out.json", "stdout")),
    ("npm run jest", ReportSpec("jest-text")),
    ("npm run e2e", ReportSpec("playwright-text")),
    ("npm run loop", ReportSpec(GENERIC)),  # a script that calls itself ends, unread
    ("npm run build", ReportSpec(GENERIC)),
    ("npm run missing-script", ReportSpec(GENERIC)),
    # launchers
    ("npx vitest run", ReportSpec("vitest-text")),
    ("npx --yes -p vitest@1.6.1 vitest run", ReportSpec("vitest-text")),
    ("pnpm exec eslint -f json .", ReportSpec("eslint", None, "stdout")),
    ("yarn dlx tsc --noEmit", ReportSpec("tsc")),
    ("CI=1 FORCE_COLOR=0 node_modules/.bin/jest --json --outputFile=r/jest.json",
     ReportSpec("jest", "r/jest.json", "stdout")),
    ("cd packages/web && npx jest --json --outputFile=out/jest.json",
     ReportSpec("jest", "packages/web/out/jest.json", "stdout")),
])
def test_node_commands(node_workspace, command, expected):
    assert infer_report(command, node_workspace) == expected


@pytest.mark.parametrize("command, expected", [
    ("npx vitest run --reporter=junit --outputFile=junit.xml", ReportSpec("junit", "junit.xml", "stdout")),
    ("npx vitest run --reporter=default --reporter=json --outputFile.json=a.json",
     ReportSpec("vitest", "a.json", "stdout")),
    ("npx jest --reporters=jest-junit", ReportSpec("junit", "junit.xml")),
    ("JEST_JUNIT_OUTPUT_FILE=r/j.xml npx jest --reporters=jest-junit", ReportSpec("junit", "r/j.xml")),
    ("npx eslint . --format json --output-file r/eslint.json", ReportSpec("eslint", "r/eslint.json", "stdout")),
    ("npx eslint -fjson .", ReportSpec("eslint", None, "stdout")),
    ("npx eslint . -f unix", ReportSpec(GENERIC)),
    ("npx next lint", ReportSpec("eslint-stylish")),
    ("npx tsc --noEmit --pretty", ReportSpec("tsc")),
    ("npx vue-tsc --noEmit", ReportSpec("tsc")),
    ("npx playwright test --reporter=json", ReportSpec("playwright", None, "stdout")),
    ("PLAYWRIGHT_JSON_OUTPUT_NAME=pw.json npx playwright test --reporter=line,json",
     ReportSpec("playwright", "pw.json", "stdout")),
    ("npx playwright test --reporter=line", ReportSpec("playwright-text")),
    ("npx react-scripts test --watchAll=false", ReportSpec("jest-text")),
    ("make lint", ReportSpec(GENERIC)),
])
def test_reporter_flags_on_the_command_line(tmp_path, command, expected):
    assert infer_report(command, tmp_path) == expected


@pytest.mark.parametrize("command, expected", [
    ("pytest", ReportSpec("pytest")),
    ("python -m pytest -q tests", ReportSpec("pytest")),
    ("python3 -m pytest --junitxml=reports/junit.xml", ReportSpec("junit", "reports/junit.xml")),
    ("pytest --junit-xml reports/j.xml -x", ReportSpec("junit", "reports/j.xml")),
    ("uv run pytest", ReportSpec("pytest")),
    ("poetry run mypy src", ReportSpec("mypy")),
    ("mypy --pretty src", ReportSpec("mypy")),
    ("ruff check .", ReportSpec("ruff-text")),
    ("ruff check --output-format=json .", ReportSpec("ruff", None, "stdout")),
    ("ruff check --output-format concise -o lint.txt .", ReportSpec("ruff-text", "lint.txt")),
    ("ruff format --check .", ReportSpec(GENERIC)),
    ("ruff check . && mypy src && pytest", ReportSpec("ruff-text+mypy+pytest")),
    ("ruff check . && pytest --junitxml=j.xml", ReportSpec("junit", "j.xml")),  # a report file wins
    ("timeout 60 pytest", ReportSpec("pytest")),
    ("PYTEST_ADDOPTS='--junitxml=ci/j.xml' pytest", ReportSpec("junit", "ci/j.xml")),
])
def test_python_commands(tmp_path, command, expected):
    assert infer_report(command, tmp_path) == expected


@pytest.mark.parametrize("command, expected", [
    ("cargo build", ReportSpec("cargo")),
    ("cargo check --all-targets", ReportSpec("cargo")),
    ("cargo clippy --workspace -- -D warnings", ReportSpec("cargo")),
    ("cargo test", ReportSpec("cargo")),
    ("cargo t -p regex-lite --lib", ReportSpec("cargo")),
    ("cargo +nightly --locked test --no-fail-fast", ReportSpec("cargo")),
    ("cargo -C crates/app test", ReportSpec("cargo")),
    ("RUST_BACKTRACE=1 cargo test -- --nocapture", ReportSpec("cargo")),
    ("cargo check --message-format=json", ReportSpec("cargo-json")),
    ("cargo test --message-format json-diagnostic-rendered-ansi", ReportSpec("cargo-json")),
    ("cargo clippy --message-format=json-render-diagnostics,json-diagnostic-short", ReportSpec("cargo-json")),
    ("cargo build --message-format=short", ReportSpec(GENERIC)),
    ("cargo test -- --message-format=json", ReportSpec("cargo")),  # the test binary's option, not cargo's
    ("cargo fmt --check", ReportSpec("cargo")),
    ("cargo fmt --all -- --check", ReportSpec("cargo")),
    ("cargo fmt", ReportSpec(GENERIC)),  # rewrites the files: no report
    ("cargo run", ReportSpec(GENERIC)),
    ("cargo fmt --check && cargo clippy && cargo test", ReportSpec("cargo")),
    ("cargo nextest run --workspace --no-fail-fast", ReportSpec("cargo-nextest")),
    ("cargo nextest list", ReportSpec(GENERIC)),
    ("cargo clippy && cargo nextest run", ReportSpec("cargo+cargo-nextest")),
])
def test_cargo_commands(tmp_path, command, expected):
    assert infer_report(command, tmp_path) == expected


def test_pyproject_settings_name_the_report(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ruff]\noutput-format = "json"\n\n[tool.pytest.ini_options]\naddopts = "-q --junitxml=out/junit.xml"\n')
    assert infer_report("ruff check .", tmp_path) == ReportSpec("ruff", None, "stdout")
    assert infer_report("pytest", tmp_path) == ReportSpec("junit", "out/junit.xml")
    assert infer_report("ruff check --output-format=full .", tmp_path) == ReportSpec("ruff-text")


def test_unreadable_manifests_and_unbalanced_quotes_fall_back_quietly(tmp_path):
    (tmp_path / "package.json").write_text("{not json")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff\n")
    assert infer_report("npm run lint", tmp_path) == ReportSpec(GENERIC)
    assert infer_report("ruff check .", tmp_path) == ReportSpec("ruff-text")
    assert infer_report("pytest -k 'unbalanced", tmp_path) == ReportSpec("pytest")


def test_tool_invocations_follow_scripts_with_their_arguments(node_workspace):
    calls = list(tool_invocations("npm run test -- --reporter=json", node_workspace))
    assert [(c.tool, c.args) for c in calls] == [("tsc", ("--noEmit",)), ("vitest", ("run", "--reporter=json"))]


@pytest.mark.parametrize("project, command, fmt", [
    ("destr", "npm run lint", "eslint-stylish"),        # "eslint . && prettier -c src test"
    ("neverthrow", "npm test", "vitest-text+tsc"),     # "vitest run && npm run test-types"
    ("neverthrow", "npm run typecheck", "tsc"),
    ("tsconfig-paths", "npm run lint", GENERIC),       # eslint -f visualstudio
    ("tsconfig-paths", "npm test", "jest-text"),
    ("tsconfig-paths", "npm run build", "tsc"),        # "rimraf lib && tsc -p ."
    ("click", "ruff check .", "ruff-text"),            # output-format = "full" in pyproject.toml
    ("click", "mypy", "mypy"),
    ("humanize", "pytest", "pytest"),
])
def test_inference_on_the_recorded_projects_manifests(tmp_path, project, command, fmt):
    meta = json.loads((FEEDBACK / project / "project.json").read_text(encoding="utf-8"))
    for name, text in meta["manifests"].items():
        (tmp_path / name).write_text(text)
    assert infer_report(command, tmp_path).format == fmt


@pytest.mark.parametrize("command, expected", [
    ("mvn test", ReportSpec("maven")),
    ("mvn -q test", ReportSpec("maven")),
    ("mvn -B -fae verify", ReportSpec("maven")),
    ("./mvnw -B clean package -DskipTests", ReportSpec("maven")),
    ("mvn install -pl core -am", ReportSpec("maven")),
    ("mvn -q compile", ReportSpec("maven")),
    ("mvn test-compile", ReportSpec("maven")),
    ("mvn surefire:test -Dtest=FooTest", ReportSpec("maven")),
    ("mvn -B checkstyle:check", ReportSpec("maven")),
    ("mvn com.github.spotbugs:spotbugs-maven-plugin:4.7.3.6:check", ReportSpec("maven")),
    ("mvn org.apache.maven.plugins:maven-failsafe-plugin:integration-test", ReportSpec("maven")),
    ("cd backend && ./mvnw -q test", ReportSpec("maven")),
    ("javac -d out src/main/java/x/Foo.java", ReportSpec("maven")),
    ("mvn -q test && npx tsc", ReportSpec("maven+tsc")),
    ("mvn dependency:tree", ReportSpec(GENERIC)),
    ("mvn -Dfoo=a:b exec:java", ReportSpec(GENERIC)),
])
def test_maven_commands(tmp_path, command, expected):
    assert infer_report(command, tmp_path) == expected


@pytest.mark.parametrize(("command", "fmt"), [
    ("go test ./...", "go-test"), ("go test -json -count=1 ./...", "go-test-json"), ("go build ./...", "go-build"),
    ("go vet ./...", "go-build"), ("go vet ./... && go test ./...", "go-build+go-test"),
    ("staticcheck ./...", "go-build"), ("go tool staticcheck ./...", "go-build"), ("golangci-lint run", "go-build"),
    ("gofmt -l .", "gofmt"), ("gofmt -d -s .", "gofmt"),
    # Other output, or none: the generic reader.
    ("gofmt -w .", "generic"), ("staticcheck -f json ./...", "generic"), ("go vet -json ./...", "generic"),
    ("golangci-lint run --output.json.path=lint.json", "generic"), ("golangci-lint fmt", "generic"),
])
def test_plain_go_commands_need_no_format(command, fmt, tmp_path):
    assert infer_report(command, tmp_path).format == fmt
