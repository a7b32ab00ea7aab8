"""A tiny todo HTTP JSON API on the Python standard library."""

from todo_api.model import Todo, TodoStore
from todo_api.server import ROUTES, TodoServer

__all__ = ["ROUTES", "Todo", "TodoServer", "TodoStore"]
