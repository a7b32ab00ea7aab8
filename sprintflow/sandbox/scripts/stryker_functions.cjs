// The functions of the files in Stryker's JSON report, by the TypeScript compiler of the project.
//
// Runs inside the sandbox after Stryker, beside the code under test: `node stryker_functions.cjs
// REPORT OUT` writes OUT as {"functions": {"<file>": [{"name", "start": [line, column], "end":
// [line, column]}]}} (1-based, as Stryker's locations), or {"error": why} when the project has no
// TypeScript to parse with. Stryker names no function of a mutant; the judge puts each mutant in
// the innermost function around it, so every changed function needs a killed mutant of its own.
"use strict";
const fs = require("fs");
const path = require("path");

function main(reportPath, outPath) {
  let ts;
  try {
    ts = require(require.resolve("typescript", { paths: [process.cwd()] }));
  } catch (error) {
    return { error: `typescript is not installed in the project (${error.code || error.message})` };
  }
  const report = JSON.parse(fs.readFileSync(reportPath, "utf8"));
  const functions = {};
  for (const [file, entry] of Object.entries(report.files || {})) {
    functions[file] = functionsOf(ts, file, String(entry.source || ""));
  }
  return { functions };
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

const [reportPath, outPath] = process.argv.slice(2);
let result;
try {
  result = main(reportPath, outPath);
} catch (error) {
  result = { error: String(error && error.message ? error.message : error) };
}
fs.writeFileSync(outPath, JSON.stringify(result));
