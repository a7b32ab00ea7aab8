from todo_api.model import Todo, TodoStore


def test_add_numbers_todos_from_one() -> None:
    store = TodoStore()
    assert store.add("first") == Todo(id=1, title="first")
    assert store.add("second") == Todo(id=2, title="second")


def test_items_are_in_creation_order_and_a_copy() -> None:
    store = TodoStore()
    store.add("a")
    store.add("b")
    items = store.items()
    items.clear()
    assert [todo.title for todo in store.items()] == ["a", "b"]


def test_to_dict_has_id_and_title() -> None:
    assert Todo(id=7, title="x").to_dict() == {"id": 7, "title": "x"}
