"""Run the API: ``python3 -m todo_api``; HOST and PORT come from the environment."""

from __future__ import annotations

import contextlib
import os

from todo_api.server import TodoServer


def main() -> None:
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8765"))
    with TodoServer((host, port)) as server:
        print(f"listening on port {server.server_port}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


if __name__ == "__main__":
    main()
