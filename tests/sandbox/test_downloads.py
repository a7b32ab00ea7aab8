"""Node and npm from the npm registry: versions, downloads checked against the registry's integrity."""

from __future__ import annotations

import json

import pytest

from sprintflow.sandbox import downloads
from sprintflow.sandbox.runtimes import RuntimeUnavailable


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(downloads.SANDBOX_CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_node_binaries_and_a_fitting_npm_are_on_the_registry(cache):
    versions = downloads.node_versions()
    assert "20.20.2" in versions and "22.23.5" in versions
    npm = downloads.npm_for_node("20.20.2")
    assert npm.startswith(f"{downloads.NPM_MAJOR}.")
    assert (cache / "registry" / f"{downloads.node_package_name()}.json").is_file()  # cached for a day


def test_a_package_is_downloaded_verified_and_unpacked_once(cache):
    folder = downloads.unpacked_package("is-number", "7.0.0")
    assert json.loads((folder / "package.json").read_text())["version"] == "7.0.0"
    assert not list((cache / "downloads").glob("*.tgz"))  # the tarball is gone once unpacked
    assert downloads.unpacked_package("is-number", "7.0.0") == folder


def test_a_download_that_does_not_match_the_registry_is_refused(cache):
    packument = cache / "registry" / "is-number.json"
    downloads._packument("is-number", cache)
    data = json.loads(packument.read_text())
    data["versions"]["7.0.0"]["dist"]["integrity"] = "sha512-" + "A" * 86 + "=="
    packument.write_text(json.dumps(data))
    with pytest.raises(RuntimeUnavailable, match="does not match the registry's checksum"):
        downloads.unpacked_package("is-number", "7.0.0")
    assert not (cache / "packages" / "is-number-7.0.0").exists()


def test_an_unknown_version_names_it(cache):
    with pytest.raises(RuntimeUnavailable, match="the npm registry has no is-number@0.0.0-nope"):
        downloads.unpacked_package("is-number", "0.0.0-nope")
