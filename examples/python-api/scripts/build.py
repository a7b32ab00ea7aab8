"""Build dist/: an executable zipapp of src/ and a manifest describing it.

Run ``python3 dist/todo-api.pyz`` to start the API from the build output.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipapp
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
DIST = ROOT / "dist"
TARGET = DIST / "todo-api.pyz"


def is_source(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix != ".pyc"


def main() -> None:
    shutil.rmtree(DIST, ignore_errors=True)
    DIST.mkdir()
    zipapp.create_archive(
        SRC,
        TARGET,
        interpreter="/usr/bin/env python3",
        main="todo_api.__main__:main",
        filter=is_source,
    )
    data = TARGET.read_bytes()
    modules = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if is_source(p))
    manifest = {
        "artifact": TARGET.name,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "modules": modules,
    }
    (DIST / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"built {TARGET.relative_to(ROOT)}: {len(modules)} modules, {len(data)} bytes")


if __name__ == "__main__":
    main()
