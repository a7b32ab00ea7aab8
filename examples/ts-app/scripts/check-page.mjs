// Custom check: every input of public/index.html has a <label for> naming it.
// Prints one JSON object and exits 1 when an input is unlabeled (or there is none).
import { readFileSync } from 'node:fs';

const html = readFileSync(new URL('../public/index.html', import.meta.url), 'utf8');
const labelled = new Set([...html.matchAll(/<label[^>]*\bfor="([^"]+)"/g)].map((m) => m[1]));
const inputs = [...html.matchAll(/<(?:input|select|textarea)\b[^>]*>/g)].map((m) => {
  const id = /\bid="([^"]+)"/.exec(m[0]);
  return id ? id[1] : m[0];
});
const unlabeled = inputs.filter((id) => !labelled.has(id));
const passed = inputs.length > 0 && unlabeled.length === 0;

console.log(JSON.stringify({ passed, count: inputs.length, inputs, unlabeled }));
process.exitCode = passed ? 0 : 1;
