"""The wheel carries every package: a folder left out of pyproject's list works in a checkout and breaks a worker."""

from __future__ import annotations

import tomllib

from tests.test_docstrings import FOLDERS, ROOT


def test_every_package_folder_is_in_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join([package, *parts]))
    assert found - listed == set()
