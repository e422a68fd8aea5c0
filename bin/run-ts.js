#!/usr/bin/env node
// Runs a TypeScript entry point (a trainer, a bench) with the tsx loader: `node bin/run-ts.js FILE.ts args...`.
require('tsx/cjs');
const path = require('node:path');
const file = process.argv[2];
if (!file) {
  console.error('usage: run-ts FILE.ts [args...]');
  process.exit(2);
}
process.argv.splice(1, 2, path.resolve(file));
require(path.resolve(file));
