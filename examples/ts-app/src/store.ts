export interface Todo {
  id: number;
  title: string;
}

/** Todos in memory, in creation order. */
export class TodoStore {
  readonly #items: Todo[] = [];

  add(title: string): Todo {
    const todo = { id: this.#items.length + 1, title };
    this.#items.push(todo);
    return todo;
  }

  items(): Todo[] {
    return [...this.#items];
  }
}
