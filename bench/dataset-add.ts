// `dataset add` at scale: lines per second and peak memory of registerDataset (both passes: every line checked, then
// COPY into PostgreSQL and the version's files) for a file of 1,000,000 lines, beside a peer in the same run: the
// same file read line by line and JSON.parsed, with no checking and no database. Each runs in a child process of its
// own, so each peak RSS is its own. Figures and ratios only, no assertions.
// With SUITE_ITEMS, a suite of that many held-out and probe items (and a canary) is registered first, so every
// line is also checked against them (the registration-time contamination check); no line overlaps them.
// Run: node bin/run-ts.js bench/dataset-add.ts [LINES] [SUITE_ITEMS]   (DATABASE_URL: use that server, else an embedded one)
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { openDb } from '../db/client';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from '../db/embedded-server';
import { applyMigrations } from '../db/migrate';
import { registerDataset } from '../services/datasets/register-dataset';
import { registerEvalSuite } from '../services/suites/register-suite';
import { freePort } from '../test/helpers/ports';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

interface ChildResult {
  seconds: number;
  lines: number;
  maxRssMiB: number;
  examples?: number;
}

/** A realistic line: an arithmetic prompt with a short worked completion, in one of three categories; some chat lines. */
function line(i: number): string {
  // Unique per line (`a` is the line number): the file has no duplicates.
  const a = i;
  const b = (i * 104_729) % 1_000_000;
  const category = ['carry', 'no-carry', 'long'][i % 3];
  if (i % 10 === 9)
    return JSON.stringify({
      messages: [
        { role: 'system', content: 'You add numbers.' },
        { role: 'user', content: `What is ${a} + ${b}?` },
        { role: 'assistant', content: String(a + b) },
      ],
      category,
    });
  return JSON.stringify({ prompt: `Add the numbers.\n${a} + ${b} = `, completion: `${a + b}\n`, category, weight: 1 + (i % 4) / 4 });
}

/**
 * A suite of `n` items, half held-out and half probes, each a few lines of code-like text made of seeded random
 * words (about 200 characters), none of which an arithmetic line can overlap.
 */
function suiteOf(n: number): object {
  let seed = 7;
  const r = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const word = () => Array.from({ length: 3 + Math.floor(r() * 8) }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('');
  const code = () => Array.from({ length: 4 }, () => `  const ${word()} = ${word()}(${word()}, ${word()});\n`).join('');
  return {
    name: 'bench-suite',
    canaries: ['FWCANARY-bench-0123456789abcdef'],
    items: Array.from({ length: n }, (_, i) => ({
      id: `i${i}`,
      split: i % 2 ? 'probe' : 'heldout',
      ...(i % 2 ? { probe: { kind: 'canary' } } : {}),
      grader: { kind: 'exact_match' },
      prompt: `function ${word()}() {\n${code()}`,
      reference: `  return ${word()};\n}`,
    })),
  };
}

async function writeFile(file: string, n: number): Promise<void> {
  const out = fs.createWriteStream(file);
  for (let i = 0; i < n; i++) if (!out.write(line(i) + '\n')) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

/** In a child: the peer (read and JSON.parse each line) or registerDataset; prints one JSON line. */
async function child(kind: string, file: string, url?: string, home?: string): Promise<void> {
  const t0 = performance.now();
  let result: Omit<ChildResult, 'maxRssMiB' | 'seconds'>;
  if (kind === 'peer') {
    let lines = 0;
    for await (const l of readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })) {
      JSON.parse(l);
      lines++;
    }
    result = { lines };
  } else {
    const db = openDb(url!, { max: 2 });
    try {
      const r = await registerDataset(db.db, 'bench', file, { home: home! });
      result = { lines: r.examples + r.duplicates, examples: r.examples };
    } finally {
      await db.close();
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ ...result, seconds, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
}

function runChild(args: string[]): ChildResult {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'run-ts.js'), __filename, '--child', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`bench child ${args[0]} failed (exit ${r.status})`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildResult;
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 1_000_000);
  const suiteItems = Number(process.argv[3] ?? 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-dataset-'));
  fs.chmodSync(dir, 0o755); // the embedded PostgreSQL runs as the `postgres` user when we are root
  let pg: EmbeddedPg | undefined;
  try {
    let serverUrl = process.env.DATABASE_URL;
    if (!serverUrl) {
      pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort() });
      serverUrl = pg.adminUrl;
    }
    const url = await ensureDatabase(serverUrl, `flywheel_bench_dataset_${Date.now().toString(36)}`);
    await applyMigrations(url);
    if (suiteItems > 0) {
      const db = openDb(url, { max: 1 });
      await registerEvalSuite(db.db, suiteOf(suiteItems)).finally(() => db.close());
    }
    const file = path.join(dir, 'data.jsonl');
    await writeFile(file, n);
    const bytes = fs.statSync(file).size;

    const peer = runChild(['peer', file]);
    const reg = runChild(['register', file, url, path.join(dir, 'home')]);
    const version = fs.readdirSync(path.join(dir, 'home', 'datasets'))[0];
    const out = (f: string) => fs.statSync(path.join(dir, 'home', 'datasets', version, f)).size;

    const mib = (b: number) => (b / (1 << 20)).toFixed(0);
    console.log(
      `dataset add: ${n.toLocaleString('en')} lines, ${mib(bytes)} MiB, ${suiteItems ? `checked against a suite of ${suiteItems.toLocaleString('en')} held-out and probe items` : 'no suite registered'} (${os.cpus().length} CPUs, load ${loadAverage()}, PostgreSQL ${pg ? 'embedded' : 'DATABASE_URL'})`,
    );
    console.log('what                                  seconds    lines/s   peak RSS MiB');
    const row = (what: string, r: ChildResult) =>
      console.log(
        `${what.padEnd(36)} ${r.seconds.toFixed(2).padStart(8)} ${(r.lines / r.seconds).toFixed(0).padStart(10)} ${r.maxRssMiB.toFixed(0).padStart(14)}`,
      );
    row('registerDataset (check + COPY + files)', reg);
    row('peer: read + JSON.parse, no database', peer);
    console.log(
      `ratio register/peer: ${(reg.seconds / peer.seconds).toFixed(1)}x the time, ${(reg.maxRssMiB / peer.maxRssMiB).toFixed(2)}x the peak memory; ` +
        `examples ${reg.examples}; train.jsonl ${mib(out('train.jsonl'))} MiB, train.txt ${mib(out('train.txt'))} MiB`,
    );
  } finally {
    await pg?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  runBench(() => child(process.argv[3], process.argv[4], process.argv[5], process.argv[6]));
} else {
  runBench(main);
}
