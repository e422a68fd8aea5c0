// `flywheel feedback import FILE.jsonl`: loads user signals collected elsewhere, with the same validation and
// idempotency as the HTTP API; every line is checked before anything is written, then all go in one transaction.
import fs from 'node:fs';
import type { Command } from 'commander';
import { checkFeedback, type FeedbackEvent } from '../../core/feedback';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { requireDatabaseUrl } from '../../stack/endpoints';
import { ConflictingCopiesError, FeedbackConflictError, storeFeedback, UnknownCampaignError } from '../../services/feedback-store';
import { UsageError } from '../errors';
import { campaignDataShapeOf } from '../../services/datasets/campaign-data-shape';
import { correctionWarnings } from '../correction-convention';

/** Problem lines printed before "and N more": a wrong file should not flood the terminal. */
const SHOWN_PROBLEMS = 50;

/** DATABASE_URL, else the PostgreSQL of a running `flywheel up`; feedback needs no Temporal, unlike resolveEndpoints. */
/** Every event of a JSONL file (blank lines skipped), or UsageError listing each bad line as `FILE:LINE: path: message`. */
export function readFeedbackFile(file: string): Array<{ line: number; event: FeedbackEvent }> {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const events: Array<{ line: number; event: FeedbackEvent }> = [];
  const problems: string[] = [];
  // Line by line from the bytes: a line that is not UTF-8 is refused, not stored with U+FFFD in place of its bytes.
  const strict = new TextDecoder('utf-8', { fatal: true });
  splitLines(bytes).forEach((lineBytes, i) => {
    const line = i + 1;
    let raw: string;
    try {
      raw = strict.decode(lineBytes);
    } catch {
      problems.push(`${file}:${line}: (root): not valid UTF-8`);
      return;
    }
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      problems.push(`${file}:${line}: (root): malformed JSON: ${(e as Error).message}`);
      return;
    }
    const r = checkFeedback(value);
    if (r.problems) problems.push(...r.problems.map((p) => `${file}:${line}: ${p}`));
    else events.push({ line, event: r.event });
  });
  if (problems.length) {
    const more = problems.length > SHOWN_PROBLEMS ? [`... and ${problems.length - SHOWN_PROBLEMS} more`] : [];
    throw new UsageError(
      [
        `${file}: ${problems.length} problem${problems.length > 1 ? 's' : ''}, nothing imported`,
        ...problems.slice(0, SHOWN_PROBLEMS),
        ...more,
      ].join('\n'),
    );
  }
  return events;
}

function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let start = 0; start <= bytes.length;) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl < 0 ? bytes.length : nl;
    out.push(bytes.subarray(start, end));
    start = end + 1;
  }
  return out;
}

export function registerFeedback(program: Command): void {
  const feedback = program
    .command('feedback')
    .description('user signals on production outputs (accept, reject, edit, rating)')
    .addHelpText('after', '\nExample:\n  $ flywheel feedback import feedback.jsonl\n');
  feedback
    .command('import')
    .description(
      'validate every line of a JSONL file of feedback events, then store them all in one transaction (ids already stored count as duplicates)',
    )
    .argument('<file>', 'one JSON feedback event per line')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  $ cat feedback.jsonl',
        '  {"id":"evt-1","campaignId":"builtin-demo","kind":"rating","modelVersion":"ckpt-7","prompt":"def add(","output":"a, b):","rating":4}',
        '  $ DATABASE_URL=postgres://... flywheel feedback import feedback.jsonl',
        '  imported 1, duplicates 0',
        '',
        'A bad line is reported as FILE:LINE: path: message (exit 2) and nothing is written.',
        '',
      ].join('\n'),
    )
    .action(async (file: string) => {
      const lines = readFeedbackFile(file);
      const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 1 });
      try {
        const r = await storeFeedback(
          dbh.db,
          lines.map((l) => l.event),
          { requireCampaign: true },
        );
        console.log(`imported ${r.inserted}, duplicates ${r.duplicates}`);
        const campaignIds = [...new Set(lines.filter((l) => l.event.correction).map((l) => l.event.campaignId))];
        const shapes = new Map(await Promise.all(campaignIds.map(async (id) => [id, await campaignDataShapeOf(dbh.db, id)] as const)));
        for (const w of correctionWarnings(file, lines, shapes)) console.error(w);
      } catch (e) {
        if (e instanceof UnknownCampaignError) throw new UsageError(`${file}: ${e.message}`);
        if (!(e instanceof FeedbackConflictError || e instanceof ConflictingCopiesError)) throw e;
        const why =
          e instanceof FeedbackConflictError ? 'already stored with different content' : 'appears again in the file with different content';
        const at = e.ids.slice(0, SHOWN_PROBLEMS).map(
          (id) =>
            `${file}:${
              lines
                .filter((l) => l.event.id === id)
                .map((l) => l.line)
                .join(',') || '?'
            }: id: "${id}" ${why}`,
        );
        throw new UsageError([`${file}: ${e.ids.length} conflicting id${e.ids.length > 1 ? 's' : ''}, nothing imported`, ...at].join('\n'));
      } finally {
        await dbh.close();
      }
    });
}
