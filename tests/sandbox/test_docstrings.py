"""The sandbox modules' docstring examples run and hold."""

from __future__ import annotations

import doctest

import pytest

from sprintflow.sandbox import dependencies, registry, runtimes


@pytest.mark.parametrize("module", [runtimes, dependencies, registry], ids=lambda m: m.__name__)
def test_docstring_examples_hold(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
