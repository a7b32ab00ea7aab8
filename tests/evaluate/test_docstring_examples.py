"""The docstring examples of the evaluate modules outside the parsers package run and hold."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["environment", "excerpt", "formats", "inference"])
def test_docstring_examples_hold(module):
    result = doctest.testmod(importlib.import_module(f"sprintflow.evaluate.{module}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
