import { readFile } from 'node:fs/promises';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { TodoStore } from './store.js';

/** An error the client caused: answered with its status and `{ error: message }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const PUBLIC_DIR = new URL('../public/', import.meta.url);
const STATIC_FILES: Record<string, [file: string, contentType: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
};

/** The trimmed title of a create request; 400 when it is missing or blank. */
export function parseTitle(body: unknown): string {
  if (typeof body !== 'object' || body === null) {
    throw new HttpError(400, 'body must be a JSON object');
  }
  const title = 'title' in body ? body.title : undefined;
  if (typeof title !== 'string' || title.trim() === '') {
    throw new HttpError(400, 'title is required');
  }
  return title.trim();
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'body must be JSON');
  }
}

function send(res: ServerResponse, status: number, body: string, contentType: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  send(res, status, JSON.stringify(payload), 'application/json');
}

async function route(store: TodoStore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  switch (`${req.method} ${path}`) {
    case 'GET /health':
      return sendJson(res, 200, { status: 'ok' });
    case 'GET /todos':
      return sendJson(res, 200, { items: store.items() });
    case 'POST /todos':
      return sendJson(res, 201, store.add(parseTitle(await readJson(req))));
  }
  const file = STATIC_FILES[path];
  if (req.method === 'GET' && file) {
    const [name, contentType] = file;
    return send(res, 200, await readFile(new URL(name, PUBLIC_DIR), 'utf8'), contentType);
  }
  throw new HttpError(404, 'not found');
}

/** The request listener of the API and its page; pass it to `http.createServer`. */
export function createApp(store = new TodoStore()): RequestListener {
  return (req, res) => {
    route(store, req, res).catch((error: unknown) => {
      if (error instanceof HttpError) return sendJson(res, error.status, { error: error.message });
      console.error(error);
      sendJson(res, 500, { error: 'internal server error' });
    });
  };
}
