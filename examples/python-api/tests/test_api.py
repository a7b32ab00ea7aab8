"""The API in-process: a real server on a free port, a real HTTP client."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.client import HTTPConnection
from typing import Any

import pytest

from todo_api.server import TodoServer

Reply = tuple[int, Any]


@pytest.fixture
def api() -> Iterator[TodoServer]:
    server = TodoServer(("127.0.0.1", 0))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def call(api: TodoServer, method: str, path: str, body: Any = None, *, raw: str = "") -> Reply:
    """Send one request; return the status and the decoded JSON body."""
    data = json.dumps(body) if body is not None else raw
    headers = {"Content-Type": "application/json"}
    connection = HTTPConnection("127.0.0.1", api.server_port, timeout=5)
    try:
        connection.request(method, path, body=data or None, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_health_answers_ok(api: TodoServer) -> None:
    assert call(api, "GET", "/health") == (200, {"status": "ok"})


def test_create_todo_returns_201_with_id_and_title(api: TodoServer) -> None:
    status, body = call(api, "POST", "/todos", {"title": "  Buy milk "})
    assert status == 201
    assert body == {"id": 1, "title": "Buy milk"}


def test_create_todo_without_title_returns_400(api: TodoServer) -> None:
    status, body = call(api, "POST", "/todos", {})
    assert status == 400
    assert body == {"error": "title is required"}


def test_create_todo_with_blank_title_returns_400(api: TodoServer) -> None:
    status, body = call(api, "POST", "/todos", {"title": "   "})
    assert status == 400
    assert body == {"error": "title is required"}


def test_create_todo_with_invalid_json_returns_400(api: TodoServer) -> None:
    status, body = call(api, "POST", "/todos", raw="{not json")
    assert status == 400
    assert body == {"error": "body must be JSON"}


def test_list_todos_returns_items_in_creation_order(api: TodoServer) -> None:
    call(api, "POST", "/todos", {"title": "one"})
    call(api, "POST", "/todos", {"title": "two"})
    status, body = call(api, "GET", "/todos")
    assert status == 200
    assert body == {"items": [{"id": 1, "title": "one"}, {"id": 2, "title": "two"}]}


def test_unknown_path_returns_404(api: TodoServer) -> None:
    assert call(api, "GET", "/nope") == (404, {"error": "not found"})
