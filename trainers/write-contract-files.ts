// Writes trainers/torch/contract_files.py, the Python trainers' copy of core/contract-files.ts (the job contract's
// and the launch directory's file names), so Python and TypeScript read one list. Run after changing that file:
//   node bin/run-ts.js trainers/write-contract-files.ts
// test/unit/contract-files.test.ts fails while the written file differs from what this renders.
import fs from 'node:fs';
import path from 'node:path';
import * as names from '../core/contract-files';

export const CONTRACT_FILES_PY = path.join(__dirname, 'torch', 'contract_files.py');

/** The Python module's text: each name of core/contract-files.ts, sorted, as a string constant. */
export function renderContractFilesPy(): string {
  const lines = Object.entries(names).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
  return [
    '"""The training-job contract\'s and the launch directory\'s file names, generated from core/contract-files.ts by',
    'trainers/write-contract-files.ts: do not edit (test/unit/contract-files.test.ts checks it is up to date)."""',
    '',
    ...lines,
    '',
  ].join('\n');
}

if (path.resolve(process.argv[1] ?? '') === __filename) {
  fs.writeFileSync(CONTRACT_FILES_PY, renderContractFilesPy());
  console.log(`wrote ${path.relative(process.cwd(), CONTRACT_FILES_PY)}`);
}
