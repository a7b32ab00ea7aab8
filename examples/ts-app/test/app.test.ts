import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

let server: Server;
let baseUrl: string;

beforeEach(async () => {
  server = createServer(createApp());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Send one request; return the status and the decoded JSON body. */
async function call(method: string, path: string, body?: unknown): Promise<[number, unknown]> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body),
  });
  return [response.status, await response.json()];
}

describe('todo API', () => {
  it('GET /health answers ok', async () => {
    const [status, body] = await call('GET', '/health');
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok' });
  });

  it('POST /todos returns 201 with id and title', async () => {
    const [status, body] = await call('POST', '/todos', { title: '  Buy milk ' });
    expect(status).toBe(201);
    expect(body).toEqual({ id: 1, title: 'Buy milk' });
  });

  it('POST /todos without a title returns 400', async () => {
    const [status, body] = await call('POST', '/todos', {});
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'title is required' });
  });

  it('POST /todos with a blank title returns 400', async () => {
    const [status, body] = await call('POST', '/todos', { title: '   ' });
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'title is required' });
  });

  it('POST /todos with invalid JSON returns 400', async () => {
    const [status, body] = await call('POST', '/todos', '{not json');
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'body must be JSON' });
  });

  it('GET /todos lists todos in creation order', async () => {
    await call('POST', '/todos', { title: 'one' });
    await call('POST', '/todos', { title: 'two' });
    const [status, body] = await call('GET', '/todos');
    expect(status).toBe(200);
    expect(body).toEqual({
      items: [
        { id: 1, title: 'one' },
        { id: 2, title: 'two' },
      ],
    });
  });

  it('GET / serves the page', async () => {
    const response = await fetch(`${baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('<form id="new-todo">');
  });

  it('answers 404 for an unknown path', async () => {
    const [status, body] = await call('GET', '/nope');
    expect(status).toBe(404);
    expect(body).toEqual({ error: 'not found' });
  });
});
