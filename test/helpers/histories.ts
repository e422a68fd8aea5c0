// Saves a workflow's history as a test artefact (test-artifacts/histories/NAME.json), in the proto3 JSON the
// replay suite reads back; copied into test/histories/ after a deliberate, compatible change (see README).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findTemporalCli } from '../../stack/temporal-cli';
import { temporalAddress } from './env';

/** Returns the number of events saved. */
export function saveHistory(name: string, workflowId: string): number {
  const out = path.join(__dirname, '..', '..', 'test-artifacts', 'histories');
  fs.mkdirSync(out, { recursive: true });
  const json = execFileSync(findTemporalCli(), ['workflow', 'show', '--address', temporalAddress(), '-w', workflowId, '--output', 'json'], {
    maxBuffer: 64 << 20,
  }).toString();
  fs.writeFileSync(path.join(out, `${name}.json`), json);
  return (JSON.parse(json) as { events: unknown[] }).events.length;
}
