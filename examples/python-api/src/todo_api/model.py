"""Todos and the in-memory store that keeps them."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Todo:
    id: int
    title: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "title": self.title}


class TodoStore:
    """Todos in creation order; safe to share between request threads."""

    def __init__(self) -> None:
        self._items: list[Todo] = []
        self._lock = threading.Lock()

    def add(self, title: str) -> Todo:
        with self._lock:
            todo = Todo(id=len(self._items) + 1, title=title)
            self._items.append(todo)
        return todo

    def items(self) -> list[Todo]:
        with self._lock:
            return list(self._items)
