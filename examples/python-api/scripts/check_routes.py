"""Custom check: every route in ``todo_api.server.ROUTES`` is called by a test.

A route counts as tested when a test file contains ``"<METHOD>", "<path>"`` (the
form ``call(api, "GET", "/health")`` uses). Prints one JSON object and exits 1
when a route has no test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from todo_api.server import ROUTES  # noqa: E402


def main() -> int:
    tests = "\n".join(p.read_text() for p in sorted((ROOT / "tests").glob("test_*.py")))
    routes = [f"{method} {path}" for method, path in ROUTES]
    untested = [
        f"{method} {path}" for method, path in ROUTES if f'"{method}", "{path}"' not in tests
    ]
    passed = bool(routes) and not untested
    print(
        json.dumps({"passed": passed, "count": len(routes), "routes": routes, "untested": untested})
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
