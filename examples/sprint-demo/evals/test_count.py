"""Held-out eval of contract 2: GET /todos/count. The generator never sees or edits this file."""

from __future__ import annotations

import json
import threading
from http.client import HTTPConnection

from todo_api.server import TodoServer


def test_count_counts_created_todos() -> None:
    server = TodoServer(("127.0.0.1", 0))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        conn = HTTPConnection("127.0.0.1", server.server_port, timeout=5)
        for title in ("a", "b"):
            conn.request("POST", "/todos", body=json.dumps({"title": title}),
                         headers={"Content-Type": "application/json"})
            conn.getresponse().read()
        conn.request("GET", "/todos/count")
        response = conn.getresponse()
        assert response.status == 200
        assert json.loads(response.read()) == {"count": 2}
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
