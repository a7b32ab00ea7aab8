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


def _toolchain_zip(path, files: dict[str, tuple[bytes, int]]):
    import base64
    import hashlib
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, (data, mode) in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            archive.writestr(info, data)
    summary = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, (data, _) in sorted(files.items()))
    return "h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode()


def test_a_go_toolchain_is_unpacked_only_when_its_hash_is_the_checksum_databases(tmp_path):
    prefix = "golang.org/toolchain@v0.0.1-go1.99.0.linux-amd64/"
    files = {f"{prefix}bin/go": (b"#!/bin/sh\necho go\n", 0o755), f"{prefix}VERSION": (b"go1.99.0\n", 0o644)}
    good = _toolchain_zip(tmp_path / "go.zip", files)
    downloads._unzip_verified(tmp_path / "go.zip", prefix, good, tmp_path / "go")
    assert (tmp_path / "go" / "VERSION").read_text() == "go1.99.0\n"
    assert (tmp_path / "go" / "bin" / "go").stat().st_mode & 0o777 == 0o755  # still runnable
    with pytest.raises(RuntimeUnavailable, match="does not match the checksum database"):
        downloads._unzip_verified(tmp_path / "go.zip", prefix, "h1:" + "A" * 43 + "=", tmp_path / "tampered")
    assert not (tmp_path / "tampered").exists()
    escaping = {**files, f"{prefix}../../escaped": (b"x", 0o644)}
    checked = _toolchain_zip(tmp_path / "escape.zip", escaping)
    with pytest.raises(RuntimeUnavailable, match="outside the toolchain's folder"):
        downloads._unzip_verified(tmp_path / "escape.zip", prefix, checked, tmp_path / "escape")
    assert not (tmp_path / "escaped").exists()


def test_the_checksum_databases_line_for_the_module_is_the_one_used():
    lookup = ("12345\ngolang.org/toolchain v0.0.1-go1.26.8.linux-amd64 h1:abc=\n"
              "golang.org/toolchain v0.0.1-go1.26.8.linux-amd64/go.mod h1:def=\n")
    assert downloads._h1_of(lookup, "golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64") == "h1:abc="
    with pytest.raises(RuntimeUnavailable, match="no hash"):
        downloads._h1_of("", "golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64")


def test_goproxy_names_the_proxy_and_direct_or_off_are_no_proxy(monkeypatch):
    monkeypatch.setenv("GOPROXY", "direct,https://goproxy.example/mirror/|off")
    assert downloads.go_proxy_url() == "https://goproxy.example/mirror"
    monkeypatch.setenv("GOPROXY", "off")
    assert downloads.go_proxy_url() == "https://proxy.golang.org"


def test_the_index_says_which_release_the_pins_install_on_and_its_answer_is_kept(cache, monkeypatch):
    """Against PyPI itself: Django 6.0 needs python 3.12, so only trixie's 3.13 installs it."""
    from sprintflow.sandbox.runtimes import PythonPin

    pins = (PythonPin("django", "6.0", "requirements.txt line 1"),
            PythonPin("attrs", "25.3.0", "requirements.txt line 2"),
            PythonPin("no-such-project-sprintflow-test", "1.0", "requirements.txt line 3"))  # cannot tell: fits
    fit = downloads.pins_fit(pins)
    assert (fit("bookworm"), fit("trixie")) == (False, True)
    assert (cache / "pypi" / "django.json").is_file()
    assert not list((cache / "pypi").glob("fit-*.json"))  # a pin it could not tell about: asked again next time
    known = downloads.pins_fit(pins[:2])
    assert (known("bookworm"), known("trixie")) == (False, True)
    assert len(list((cache / "pypi").glob("fit-*.json"))) == 1  # the answer an evaluation reads for a day
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing answers there
    again = downloads.pins_fit(pins)
    assert (again("bookworm"), again("trixie")) == (False, True)  # the day's answer, without the index
    for page in (cache / "pypi").glob("*.json"):
        page.unlink()
    unreachable = downloads.pins_fit(pins)
    assert unreachable("bookworm") and unreachable("trixie")  # an index that cannot tell decides nothing
