"""Shared fixtures: the Docker engine and sandbox image, example workspaces."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
IMAGE = "sprintflow-sandbox:latest"


def pytest_configure(config):
    """The judge's store of this session, not the user's: every workspace a test makes leaves objects there."""
    import tempfile

    os.environ.setdefault("SPRINTFLOW_JUDGE_HOME", tempfile.mkdtemp(prefix="sprintflow-test-judge-"))
    atexit.register(_end_without_teardown)  # registered first, so it runs after every later exit handler


_SESSION_STATUS: list[int] = []


def pytest_sessionfinish(session, exitstatus):
    _SESSION_STATUS.append(int(exitstatus))


def _end_without_teardown() -> None:
    """End the test process with pytest's own status, skipping the interpreter's teardown.

    Every test has reported by now; what is left is the teardown of native extensions, and
    DuckDB's module-level destructors can crash there (duckdb/duckdb-python#531), turning a
    finished run into exit 139. The CLI ends the same way after a flow (``sprintflow.cli._end``).
    """
    if _SESSION_STATUS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_SESSION_STATUS[-1])


def pytest_unconfigure(config):
    home = os.environ.get("SPRINTFLOW_JUDGE_HOME", "")
    if Path(home).name.startswith("sprintflow-test-judge-"):
        from sprintflow.judge.tree import unmount_below

        unmount_below(Path(home))
        shutil.rmtree(home, ignore_errors=True)


def _docker_ready() -> str | None:
    """None when a Docker engine answers and the sandbox image exists, else why not."""
    from sprintflow.sandbox.executors import docker_available

    if not docker_available():
        return "no Docker engine answers"
    probe = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True)
    return None if probe.returncode == 0 else f"image {IMAGE} missing (sprintflow sandbox build)"


@pytest.fixture(scope="session")
def docker_ready() -> None:
    """Skip Docker tests on a laptop without an engine; in CI (SPRINTFLOW_REQUIRE_DOCKER=1) fail."""
    reason = _docker_ready()
    if reason is None:
        return
    if os.environ.get("SPRINTFLOW_REQUIRE_DOCKER") == "1":
        pytest.fail(f"Docker tests are required here but {reason}")
    pytest.skip(reason)


def copy_example(name: str, dest: Path, *, broken: bool = False) -> Path:
    """A private copy of an example (node_modules hard-linked), optionally with its broken patch."""
    source = EXAMPLES / name
    target = dest / name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(
        "node_modules", ".sprintflow", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"))
    contracts = source / ".sprintflow" / "contracts"
    if contracts.is_dir():
        shutil.copytree(contracts, target / ".sprintflow" / "contracts")
    if (source / "node_modules").is_dir():
        # Hard links: fast, and real files, so the tree also works when mounted into a container.
        subprocess.run(["cp", "-al", str(source / "node_modules"), str(target / "node_modules")], check=True)
    if broken:
        subprocess.run(["patch", "-s", "-p1", "-d", str(target), "-i", str(source / "broken.patch")], check=True)
    return target


@pytest.fixture
def workspace_factory(tmp_path):
    """Each call gets its own folder, so one test can hold several copies."""
    calls = iter(range(1000))
    return lambda name, broken=False: copy_example(name, tmp_path / str(next(calls)), broken=broken)


# One Prefect test harness per session (it costs ~12 s): flows run against a real local API.
@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory):
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def prefect_api_url(prefect_harness) -> str:
    """The harness's API address, for CLI subprocesses that should not start their own server."""
    from prefect.settings import PREFECT_API_URL

    return PREFECT_API_URL.value()


@pytest.fixture
def small_disk(tmp_path):
    """A factory of real small filesystems (tmpfs mounts; this suite runs as root, as CI does):
    ``small_disk(name, kib, free_kib)`` mounts one of ``kib`` KiB with about ``free_kib`` KiB free."""
    mounts: list[Path] = []

    def mount(name: str, kib: int = 256, free_kib: int = 0) -> Path:
        where = tmp_path / name
        where.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"cannot mount a small filesystem (tests run as root): {done.stderr.strip()}")
        mounts.append(where)
        fill(where, free_kib)
        return where

    yield mount
    for where in reversed(mounts):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(where: Path, free_kib: int = 0) -> None:
    """Fill the filesystem of ``where`` until about ``free_kib`` KiB are left."""
    stat = os.statvfs(where)
    spare = stat.f_bavail * stat.f_frsize - free_kib * 1024
    if spare > 0:
        with open(where / ".filler", "ab") as handle:
            try:
                handle.write(b"\0" * spare)
            except OSError:
                pass  # full: that was the point
