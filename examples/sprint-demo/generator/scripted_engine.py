"""A scripted generator engine for offline demos and tests: it makes real changes.

sprintflow runs it in the workspace with the prompt on stdin and
SPRINTFLOW_CONTRACT_ID / SPRINTFLOW_ITERATION in the environment. It applies
fixes/<contractId>/<iteration>.patch when that exists. Applying is idempotent
(a patch already applied is skipped), so a step killed midway can simply run again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FIXES = Path(__file__).resolve().parent / "fixes"


def main() -> int:
    sys.stdin.read()  # the prompt: a real agent would read it; the script knows its answers
    contract, iteration = os.environ["SPRINTFLOW_CONTRACT_ID"], os.environ["SPRINTFLOW_ITERATION"]
    patch = FIXES / contract / f"{iteration}.patch"
    if not patch.is_file():
        print(f"No scripted change for {contract} iteration {iteration}; leaving the code as it is.")
        return 0
    applied = subprocess.run(["patch", "-s", "-p1", "-R", "--dry-run", "-i", str(patch)], capture_output=True)
    if applied.returncode == 0:
        print(f"{patch.name} is already applied.")
        return 0
    subprocess.run(["patch", "-s", "-p1", "-i", str(patch)], check=True)
    print(f"Applied {contract}/{patch.name}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
