const form = document.querySelector('#new-todo');
const input = document.querySelector('#title');
const error = document.querySelector('#error');
const list = document.querySelector('#todos');

function render(items) {
  list.replaceChildren(
    ...items.map((todo) => {
      const item = document.createElement('li');
      item.textContent = todo.title;
      return item;
    }),
  );
}

async function refresh() {
  const response = await fetch('/todos');
  render((await response.json()).items);
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const response = await fetch('/todos', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ title: input.value }),
  });
  const body = await response.json();
  error.hidden = response.ok;
  error.textContent = response.ok ? '' : body.error;
  if (response.ok) {
    input.value = '';
    await refresh();
  }
});

refresh();
