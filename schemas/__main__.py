"""Regenerate the *.schema.json files from the models: python -m sprintflow.schemas"""

import json

from .validation import KINDS, SCHEMA_DIR, generated_schema

for kind in KINDS:
    path = SCHEMA_DIR / f"{kind}.schema.json"
    path.write_text(json.dumps(generated_schema(kind), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}")
