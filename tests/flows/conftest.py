"""One Prefect test harness per session (it costs ~12 s): flows run against a real local API."""

from __future__ import annotations

import os

import pytest


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
