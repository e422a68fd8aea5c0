// Eval integrity: (1) scoring throughput per grader kind (items per second, graded two at a time as the eval
// activity does, on this machine; the test-program grader beside the one-program runner it replaced, in the same
// run, with the ratio), and (2) the gate's detection table: for each planted cheat (held-out leaks
// included) and for the honest recipe, over several seeds, how often it is refused or rejected. Figures only;
// nothing here is asserted.
// Run: node bin/run-ts.js bench/eval-integrity.ts [SEEDS] [ITEMS] (SEEDS 0: the throughput alone)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkContamination } from '../activities/eval/check-contamination';
import { gradeItem, type GradeContext } from '../activities/eval/graders/grade-item';
import { openTestProgramGrader } from '../activities/eval/graders/test-program-grader';
import { mapLimit } from '../activities/eval/map-limit';
import { openAiClient } from '../agents/openai-client';
import { INTEGRITY_RULES } from '../core/gate/integrity-checks';
import { graderConfigSchema, type GradeOutcome } from '../core/graders';
import { testProgramConfigSchema } from '../core/graders/test-program';
import { openDb } from '../db/client';
import { ensureDatabase, startEmbeddedPostgres } from '../db/embedded-server';
import { applyMigrations } from '../db/migrate';
import { evalSuites } from '../db/schema';
import { trainCheckpoint } from '../test/helpers/charlm-checkpoint';
import { startChatServer } from '../test/helpers/chat-server';
import { plantedCheats, type OutputRecipe } from '../test/helpers/planted-cheats';
import { freePort } from '../test/helpers/ports';
import { loadAverage } from './lib/load-average';
import { runOneProgram } from './lib/one-program-test-runner';
import { predictScratchRoot } from '../services/paths';
import { eq } from 'drizzle-orm';
import { runBench } from './lib/run-bench';

/** Items per second of `grade` over `n` items, two at a time (as the eval activity grades). */
async function rate(n: number, grade: () => Promise<GradeOutcome>): Promise<{ perSecond: number; passed: number }> {
  const t0 = performance.now();
  const outs = await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    2,
    grade,
  );
  return { perSecond: n / ((performance.now() - t0) / 1000), passed: outs.filter((o) => o.score === 1).length };
}

async function throughput(items: number): Promise<void> {
  const server = await startChatServer(() => ({ content: JSON.stringify({ score: 8, reason: 'fine' }) }));
  const testProgram = openTestProgramGrader({ hide: [predictScratchRoot()], concurrency: 2 });
  const ctx: GradeContext = { rubrics: { r: 'Be right.' }, judge: openAiClient({ OPENAI_BASE_URL: server.baseUrl }), testProgram };
  const kinds: [string, unknown, string, string][] = [
    ['exact_token', { kind: 'exact_token' }, 'return', ' return x;'],
    ['exact_match', { kind: 'exact_match' }, 'Paris', ' Paris'],
    ['numeric_tolerance', { kind: 'numeric_tolerance', absolute: 0.01 }, '3.14159', 'about 3.141'],
    ['llm_judge (local endpoint)', { kind: 'llm_judge', rubric: 'r', model: 'judge' }, 'because', 'because of scattering'],
  ];
  // Two test programs: one call across the boundary (a typical item), and a hundred (every call a round trip).
  const programs: [string, string][] = [
    ['1 call', 'if (add(2, 3) !== 5) throw new Error("no");'],
    ['100 calls', 'for (let i = 0; i < 100; i++) if (add(i, 1) !== i + 1) throw new Error("no");'],
  ];
  const output = 'function add(a, b) { return a + b; }';
  const load = loadAverage();
  console.log(`\n## Scoring throughput (${items} items per kind, 2 at a time, ${os.cpus().length} CPUs, load ${load})\n`);
  console.log('| grader | items/s | passed |\n| --- | ---: | ---: |');
  const ratios: string[] = [];
  try {
    for (const [name, raw, reference, out] of kinds) {
      const config = graderConfigSchema.parse(raw);
      const r = await rate(items, () => gradeItem(config, { prompt: 'q', reference }, out, ctx));
      console.log(`| ${name} | ${r.perSecond.toFixed(1)} | ${r.passed}/${items} |`);
    }
    // The test-program grader beside its peer, today's one-program runner (unsandboxed), in turns: old, new, old, new.
    const n = Math.min(items, 100);
    for (const [label, tests] of programs) {
      const config = testProgramConfigSchema.parse({ kind: 'test_program', tests });
      const sum = { old: { s: 0, passed: 0 }, new: { s: 0, passed: 0 } };
      for (const half of [n / 2, n / 2]) {
        for (const [which, grade] of [
          ['old', () => runOneProgram(output, config)],
          ['new', () => gradeItem(config, { prompt: 'q', reference: '-' }, output, ctx)],
        ] as const) {
          const r = await rate(half, grade);
          sum[which].s += half / r.perSecond;
          sum[which].passed += r.passed;
        }
      }
      const [oldRate, newRate] = [n / sum.old.s, n / sum.new.s];
      console.log(
        `| test_program, ${label}: one program on the host (before; the peer) | ${oldRate.toFixed(1)} | ${sum.old.passed}/${n} |`,
      );
      console.log(`| test_program, ${label}: two sandboxed processes | ${newRate.toFixed(1)} | ${sum.new.passed}/${n} |`);
      ratios.push(`${label} ${(newRate / oldRate).toFixed(2)}`);
    }
    console.log(
      `\ntest_program items/s, two sandboxed processes over one program: ${ratios.join(', ')} (load ${load} before, ${loadAverage()} after)`,
    );
  } finally {
    await testProgram.close();
    await server.close();
  }
}

async function detection(seeds: number): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-evals-'));
  fs.chmodSync(home, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(home, 'pg'), port: await freePort() });
  const url = await ensureDatabase(pg.adminUrl, 'bench');
  await applyMigrations(url);
  const dbh = openDb(url, { max: 4 });
  try {
    const p = await plantedCheats(dbh.db, home, 'bench');
    const [suite] = await dbh.db.select().from(evalSuites).where(eq(evalSuites.id, p.suiteId));
    const canaries = (suite.settings as { canaries: string[] }).canaries;
    const publicItems = await p.publicItems();
    const rejected: Record<string, { n: number; by: Record<string, number>; guard: number; guardRules: Record<string, number> }> = {};
    /** `rule`: the decision's (first failing) rule or the refusal; `guard`: the hacking-guard checks that failed. */
    const count = (recipe: string, rule: string | undefined, guard: string[] = []) => {
      const r = (rejected[recipe] ??= { n: 0, by: {}, guard: 0, guardRules: {} });
      r.n++;
      if (rule) r.by[rule] = (r.by[rule] ?? 0) + 1;
      if (guard.length > 0 || rule === 'ContaminatedDatasetError') r.guard++;
      for (const g of guard) r.guardRules[g] = (r.guardRules[g] ?? 0) + 1;
    };
    for (let seed = 1; seed <= seeds; seed++) {
      const incumbent = await p.production(`s${seed}`, seed);
      const trained = await trainCheckpoint({ dir: home, id: `cand-s${seed}`, text: p.trainText, seed: 100 + seed, steps: 300 });
      for (const recipe of ['honest', 'memorise', 'tamper', 'heldout-memorise'] as OutputRecipe[]) {
        const { summary, checks } = await p.gate(recipe, `-s${seed}`, await p.candidate(recipe, `-s${seed}`, trained), incumbent);
        const guard = INTEGRITY_RULES.filter((rule) => checks[rule] && !checks[rule].passed);
        count(recipe, summary.promote ? undefined : summary.rule, guard);
      }
      // Held-out text in training: each recipe's own train entry, 600 steps from the same seed; only the leak differs.
      for (const recipe of ['honest', 'heldout-train'] as OutputRecipe[]) {
        const tag = `-own-s${seed}`;
        const file = await p.train(recipe, tag, { steps: 600, seed: 100 + seed });
        const { summary, checks } = await p.gate(recipe, tag, await p.candidate(recipe, tag, file), incumbent);
        const guard = INTEGRITY_RULES.filter((rule) => checks[rule] && !checks[rule].passed);
        count(`${recipe} (own train, 600 steps)`, summary.promote ? undefined : summary.rule, guard);
      }
      // Dataset cheats: a few public items (a different handful per seed), or one canary, in the data.
      const pick = publicItems.filter((_, i) => i % seeds === seed - 1).slice(0, 5);
      const dirty = {
        'train-on-public': await p.versionWith(
          `public-s${seed}`,
          pick.map((x, k) => ({ ref: `public-${k}`, content: `${x.prompt}${x.reference}\n` })),
        ),
        'canary-in-data': await p.versionWith(`canary-s${seed}`, [
          { ref: 'page', content: `// scraped\nconst id = "${canaries[seed % canaries.length]}";\n` },
        ]),
      };
      for (const [recipe, versionId] of Object.entries(dirty)) {
        const refused = await checkContamination({ db: dbh.db, home }, { datasetVersionId: versionId, reader: 'bench' }).then(
          () => undefined,
          (e: Error) => e.name,
        );
        count(recipe, refused);
      }
    }
    console.log(`\n## Gate detection over ${seeds} seeds (built-in task; each seed: a new production model and candidate)\n`);
    console.log(
      '| recipe | rejected or refused | by (first failing) rule | caught by the guard or the contamination check | guard checks that failed |\n| --- | ---: | --- | ---: | --- |',
    );
    const list = (m: Record<string, number>) =>
      Object.entries(m)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '-';
    for (const [recipe, r] of Object.entries(rejected)) {
      const total = Object.values(r.by).reduce((a, b) => a + b, 0);
      console.log(`| ${recipe} | ${total}/${r.n} | ${list(r.by)} | ${r.guard}/${r.n} | ${list(r.guardRules)} |`);
    }
  } finally {
    await dbh.close();
    await pg.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const seeds = Number(process.argv[2] ?? 5);
  const items = Number(process.argv[3] ?? 400);
  await throughput(items);
  if (seeds > 0) await detection(seeds);
}

runBench(main);
