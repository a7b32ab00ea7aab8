"""The HTTP routes: JSON in, JSON out, on http.server."""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from todo_api.model import TodoStore

Reply = tuple[HTTPStatus, dict[str, Any]]


class HttpError(Exception):
    """An error the client caused; answered with its status and ``{"error": message}``."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_title(body: Any) -> str:
    """The trimmed title of a create request; 400 when it is missing or blank."""
    if not isinstance(body, dict):
        raise HttpError(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise HttpError(HTTPStatus.BAD_REQUEST, "title is required")
    return title.strip()


def health(store: TodoStore, body: Any) -> Reply:
    return HTTPStatus.OK, {"status": "ok"}


def list_todos(store: TodoStore, body: Any) -> Reply:
    return HTTPStatus.OK, {"items": [todo.to_dict() for todo in store.items()]}


def create_todo(store: TodoStore, body: Any) -> Reply:
    todo = store.add(parse_title(body))
    return HTTPStatus.CREATED, todo.to_dict()


ROUTES: dict[tuple[str, str], Callable[[TodoStore, Any], Reply]] = {
    ("GET", "/health"): health,
    ("GET", "/todos"): list_todos,
    ("POST", "/todos"): create_todo,
}


class TodoHandler(BaseHTTPRequestHandler):
    server: TodoServer

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        route = ROUTES.get((self.command, urlsplit(self.path).path))
        try:
            if route is None:
                raise HttpError(HTTPStatus.NOT_FOUND, "not found")
            status, payload = route(self.server.store, self._read_json())
        except HttpError as exc:
            status, payload = exc.status, {"error": str(exc)}
        except Exception:
            traceback.print_exc()
            status, payload = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal server error"}
        self._send_json(status, payload)

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if not length:
            return None
        try:
            return json.loads(self.rfile.read(length))
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, "body must be JSON") from None

    def _send_json(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class TodoServer(ThreadingHTTPServer):
    """The API on ``address``; port 0 picks a free port (see ``server_port``)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], store: TodoStore | None = None) -> None:
        super().__init__(address, TodoHandler)
        self.store = TodoStore() if store is None else store
