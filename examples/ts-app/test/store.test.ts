import { describe, expect, it } from 'vitest';
import { TodoStore } from '../src/store.js';

describe('TodoStore', () => {
  it('numbers todos from 1', () => {
    const store = new TodoStore();
    expect(store.add('first')).toEqual({ id: 1, title: 'first' });
    expect(store.add('second')).toEqual({ id: 2, title: 'second' });
  });

  it('lists todos in creation order and returns a copy', () => {
    const store = new TodoStore();
    store.add('a');
    store.add('b');
    store.items().length = 0;
    expect(store.items().map((todo) => todo.title)).toEqual(['a', 'b']);
  });
});
