"""The README's contract format is the schema's: every field is documented, and the example is a valid contract."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sprintflow.schemas import json_schema, validate_data

README = Path(__file__).resolve().parents[2] / "README.md"


def contracts_section() -> str:
    text = README.read_text(encoding="utf-8")
    return text[text.index("\n## Contracts\n"):text.index("\n## Sprints\n")]


def test_every_field_of_the_contract_schema_is_in_the_readme():
    schema = json_schema("contract")
    section = contracts_section()
    documented = set(re.findall(r"^\| `([A-Za-z]+)`(?:, `([A-Za-z]+)`)? \|", section, re.M))
    names = {name for pair in documented for name in pair if name}
    fields = set(schema["properties"]) | set(schema["$defs"]["SuccessCriterion"]["properties"])
    assert fields - names == set(), "fields missing from the README's contract tables"
    assert names - fields == set(), "the README documents fields the schema does not have"
    required = set(schema["required"]) | set(schema["$defs"]["SuccessCriterion"]["required"])
    said_required = {name for line in section.splitlines() if re.match(r"^\| `", line) and "| yes |" in line
                     for name in re.findall(r"`([A-Za-z]+)`", line.split("|")[1])}
    assert said_required == required


def test_the_readmes_example_contract_passes_every_rule():
    example = re.search(r"```json\n(.*?)```", contracts_section(), re.S)
    assert example is not None
    assert validate_data(json.loads(example.group(1)), "contract", "README.md") == []
