// Which of Stryker's mutants of the changed lines run: at most the job's cap, spread over the changed
// functions; and the function each belongs to.
//
// Runs inside the sandbox before Stryker, beside the code under test: `node stryker_plan.cjs JOB` reads
//
//   {"files": {"src/a.ts": [[3, 9]]}, "tests": ["test/a.test.ts"], "maxMutants": 16, "seed": 7,
//    "stryker": {...Stryker's options but `mutate`...}, "config": "...stryker.json", "functions": "...functions.json"}
//
// and writes `config`, Stryker's options with `mutate` naming exactly the syntax nodes chosen, and
// `functions` as {"functions": {"<file>": [{"name", "start": [line, column], "end": [line, column]}]},
// "tests": [files left out as tests]} (1-based, as Stryker's report), or {"error": why} in place of the
// functions when the project has no TypeScript to parse with. When the changed lines have no mutant,
// it writes Stryker's (empty) report itself, and Stryker is not run.
//
// Stryker has no cap of its own: given lines, it mutates every syntax node inside them (80 mutants of a
// 50-line change, a third of a second each). Its own instrumenter, from the project's node_modules, lists
// those mutants here first; a node is chosen whole (a range selects all of a node's mutants, and every
// node inside it), the cheapest nodes first, each changed function getting one before any gets two, and
// every changed function one whatever the cap (or the last ones would go unjudged).
// `tests` are the files the unit-test run collected tests from: their mutants would only be dropped
// after the run (static ones, in a test file's top level, rerun every test), so they are left out here;
// the judge then checks Stryker's own run collected tests from each of them. A change of tests alone
// keeps them, and Stryker's run tells which are tests.
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");

const END = Number.MAX_SAFE_INTEGER;

async function main(jobPath) {
  const job = JSON.parse(fs.readFileSync(jobPath, "utf8"));
  const tests = new Set(job.tests || []);
  let files = Object.keys(job.files).filter((file) => !tests.has(file));
  let left = Object.keys(job.files).filter((file) => tests.has(file));
  const instrumenter = await loadInstrumenter();
  let nodes = await mutatedNodes(instrumenter, job, files);
  if (!nodes.length && left.length) {  // tests alone changed: Stryker's run says which files they are
    files = Object.keys(job.files);
    left = [];
    nodes = await mutatedNodes(instrumenter, job, files);
  }
  const ts = typeScript();
  const functions = {};
  for (const file of files) {
    functions[file] = ts ? functionsOf(ts, file, fs.readFileSync(file, "utf8")) : [];
  }
  for (const node of nodes) {
    node.function = ts ? functionAt(functions[node.file], node.start) : `line ${node.start[0]}`;
  }
  const chosen = spread(nodes, Number(job.maxMutants), random(Number(job.seed) >>> 0));
  const mutate = chosen.map((n) => `${n.file}:${n.loc.start.line + 1}:${n.loc.start.column}-`
    + `${n.loc.end.line + 1}:${n.loc.end.column}`);
  fs.writeFileSync(job.config, JSON.stringify({ ...job.stryker, mutate }));
  if (!mutate.length) {  // nothing to mutate (a type, a comment): Stryker would mutate nothing and fail
    const core = path.join(process.cwd(), "node_modules", "@stryker-mutator", "core", "package.json");
    const version = JSON.parse(fs.readFileSync(core, "utf8")).version;
    fs.writeFileSync(job.stryker.jsonReporter.fileName, JSON.stringify({ schemaVersion: "2", thresholds: {},
      files: {}, testFiles: {}, framework: { name: "StrykerJS", version } }));
  }
  fs.writeFileSync(job.functions, JSON.stringify(ts ? { functions, tests: left }
    : { error: "typescript is not installed in the project", tests: left }));
}

async function loadInstrumenter() {
  const roots = [path.join(process.cwd(), "node_modules", "@stryker-mutator", "core"), process.cwd()];
  const where = require.resolve("@stryker-mutator/instrumenter", { paths: roots });
  const { Instrumenter } = await import(pathToFileURL(where).href);
  const quiet = () => false;
  const logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, isTraceEnabled: quiet,
    isDebugEnabled: quiet, isInfoEnabled: quiet, isWarnEnabled: quiet, isErrorEnabled: quiet, isFatalEnabled: quiet };
  return new Instrumenter(logger);
}

// The syntax nodes Stryker mutates in the changed lines of `files`, each with its mutants, as Stryker's
// own run would find them (its default mutator options: our config sets none).
async function mutatedNodes(instrumenter, job, files) {
  if (!files.length) return [];
  const inputs = files.map((name) => ({
    name, content: fs.readFileSync(name, "utf8"),
    mutate: job.files[name].map(([from, to]) => ({ start: { line: from - 1, column: 0 },
      end: { line: to - 1, column: END } })),
  }));
  const result = await instrumenter.instrument(inputs, { plugins: null, excludedMutations: [], ignorers: [] });
  const byNode = new Map();
  for (const mutant of result.mutants) {
    const loc = mutant.location;
    const key = `${mutant.fileName}:${loc.start.line}:${loc.start.column}:${loc.end.line}:${loc.end.column}`;
    const file = path.relative(process.cwd(), path.resolve(mutant.fileName)).split(path.sep).join("/");
    const node = byNode.get(key) || { file, loc, start: [loc.start.line + 1, loc.start.column + 1], mutants: 0 };
    node.mutants += 1;
    byNode.set(key, node);
  }
  const nodes = [...byNode.values()];
  for (const node of nodes) {  // what choosing the node brings along: itself and every node inside it
    node.inside = nodes.filter((other) => other.file === node.file && includes(node.loc, other.loc));
  }
  return nodes;
}

function includes(outer, inner) {
  const before = (a, b) => a.line < b.line || (a.line === b.line && a.column <= b.column);
  return before(outer.start, inner.start) && before(inner.end, outer.end);
}

function spread(nodes, cap, rng) {
  const groups = new Map();
  for (const node of nodes) {
    const key = `${node.file}\u0000${node.function}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(node);
  }
  const cost = (node) => node.inside.reduce((sum, brought) => sum + brought.mutants, 0);
  for (const group of groups.values()) {  // shuffled, then the cheapest first (fewest mutants brought along)
    for (let i = group.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [group[i], group[j]] = [group[j], group[i]];
    }
    group.sort((a, b) => cost(a) - cost(b));
  }
  const taken = new Set();
  const chosen = [];
  let mutants = 0;
  const keys = [...groups.keys()].sort();
  let round = 0;
  while (keys.some((key) => groups.get(key).some((node) => !taken.has(node)))) {
    for (const key of keys) {
      if (round > 0 && mutants >= cap) return chosen;  // every function has had one
      const node = groups.get(key).find((candidate) => !taken.has(candidate));
      if (!node) continue;
      chosen.push(node);
      for (const brought of node.inside) {
        if (!taken.has(brought)) {
          taken.add(brought);
          mutants += brought.mutants;
        }
      }
    }
    round += 1;
    if (mutants >= cap) return chosen;
  }
  return chosen;
}

function random(seed) {  // mulberry32: the judge's seed picks the same mutants every time
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function typeScript() {
  try {
    return require(require.resolve("typescript", { paths: [process.cwd()] }));
  } catch {
    return null;
  }
}

function functionAt(spans, start) {
  const before = (a, b) => a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1]);
  const around = spans.filter((span) => before(span.start, start) && !before(span.end, start));
  return around.length ? around.reduce((a, b) => (before(a.start, b.start) ? b : a)).name : "<module>";
}

function functionsOf(ts, file, source) {
  const kind = /\.[cm]?tsx?$/.test(file) ? (file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
    : (file.endsWith("x") ? ts.ScriptKind.JSX : ts.ScriptKind.JS);
  const tree = ts.createSourceFile(path.basename(file), source, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const where = (pos) => {
    const { line, character } = tree.getLineAndCharacterOfPosition(pos);
    return [line + 1, character + 1];
  };
  const visit = (node, owner) => {
    let inside = owner;
    const own = ts.isFunctionLike(node) && node.body ? nameOf(ts, node) : null;
    if (own) {  // an anonymous callback is part of the function it is written in, as in Python
      const name = `${owner ? owner + "." : ""}${own}`;
      found.push({ name, start: where(node.getStart(tree)), end: where(node.getEnd()) });
      inside = name;
    } else if (ts.isClassLike(node)) {
      inside = `${owner ? owner + "." : ""}${node.name ? node.name.text : "<class>"}`;
    }
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(tree, "");
  return found;
}

function nameOf(ts, node) {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name))) {
    return node.name.text;
  }
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
      && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  return null;
}

main(process.argv[2]).catch((error) => {
  process.stderr.write(`stryker_plan: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
