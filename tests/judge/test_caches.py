"""The judge's kept tool caches with real mypy: kept from a layer, put in the next, never trusted blindly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sprintflow.judge.caches import FILES, TREE, ToolCache

GOOD = "def f() -> int:\n    return 1\n"
BAD = "def f() -> str:\n    return 1\n"  # the same size: a type error mypy must find
SECOND = 1_800_000_000


def _tree(root: Path, text: str, second: int = SECOND) -> Path:
    root.mkdir(parents=True)
    (root / "m.py").write_text(text)
    os.utime(root / "m.py", (second, second))
    return root


def _layer(tree: Path, into: Path) -> Path:
    """A copied layer of ``tree``: its files with their times, as the view's copy keeps them."""
    shutil.copytree(tree, into)
    return into


def _mypy(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "m.py"], cwd=folder, capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def kept_once(tmp_path_factory) -> Path:
    """A cache kept from a judged run of mypy on the good tree (mypy cold once for the module)."""
    root = tmp_path_factory.mktemp("kept")
    tree = _tree(root / "good", GOOD)
    layer = _layer(tree, root / "good-layer")
    assert _mypy(layer).returncode == 0
    (layer / ".ruff_cache").mkdir()
    ToolCache(root / "cache", tree).keep(layer)
    return root


@pytest.fixture
def cache(kept_once, tmp_path) -> Path:
    shutil.copytree(kept_once / "cache", tmp_path / "cache")
    return tmp_path / "cache"


def test_a_run_keeps_only_the_caches_whose_tool_revalidates_them(kept_once, cache):
    assert sorted(p.name for p in (cache / FILES).iterdir()) == [".mypy_cache"]
    assert not (kept_once / "good-layer" / ".mypy_cache").exists()  # moved out of the layer, not copied
    assert set(json.loads((cache / TREE).read_text())) == {"m.py"}


def test_a_changed_file_the_tool_would_take_for_the_cached_one_makes_the_run_cold(tmp_path, cache):
    alike = _tree(tmp_path / "bad", BAD)  # another object, the same size and second
    layer = _layer(alike, tmp_path / "bad-layer")
    assert ToolCache(cache, alike).seed(layer) is False
    assert not (layer / ".mypy_cache").exists()
    assert "Incompatible return value type" in _mypy(layer).stdout
    # Why: given the cache anyway, mypy trusts it and passes the broken file.
    blind = _layer(alike, tmp_path / "blind-layer")
    shutil.copytree(cache / FILES / ".mypy_cache", blind / ".mypy_cache")
    assert _mypy(blind).returncode == 0


def test_a_warm_run_finds_what_a_cold_run_finds(tmp_path, cache):
    later = _tree(tmp_path / "bad", BAD, second=SECOND + 60)
    warm, cold = _layer(later, tmp_path / "warm"), _layer(later, tmp_path / "cold")
    assert ToolCache(cache, later).seed(warm) is True
    assert (warm / ".mypy_cache").is_dir()
    found = _mypy(warm)
    assert found.returncode == 1 and found.stdout == _mypy(cold).stdout


def test_a_damaged_cache_record_is_a_cold_run(tmp_path, cache):
    later = _tree(tmp_path / "later", GOOD, second=SECOND + 60)
    for damage in ("", "[1, 2]", '{"m.py": "x"}', '{"m.py": [1]}'):
        (cache / TREE).write_text(damage)
        layer = tmp_path / "layer"
        shutil.rmtree(layer, ignore_errors=True)
        assert ToolCache(cache, later).seed(_layer(later, layer)) is False, damage
        assert not (layer / ".mypy_cache").exists()
    assert ToolCache(tmp_path / "never-kept", later).seed(layer) is False
