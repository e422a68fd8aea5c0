// `flywheel demo --outer N`: the whole circle on an example task. The production model is served over HTTP;
// before each iteration (once there is a production model) the task's seeded population of simulated users asks it
// for completions and sends feedback through the same API; then one outer iteration runs to its
// decision. One line per iteration: new feedback, critiques, dataset size, the inner loop's best, the gate's
// decision and the production model's held-out score; at the end, what production really scores on the sealed test
// split (which no decision read), before the first promotion and after the last.
import { decisionText } from '../core/gate/decision-lines';
import crypto from 'node:crypto';
import { simulateUsers } from '../services/simulate-users';
import type { SimulatedUsersOfTask } from '../services/simulated-users-task';
import type { CampaignSpec } from '../core/spec';
import { productionCheckpointOf } from '../services/production-model';
import { countOuterIterations } from '../services/queries/outer-iterations';
import type { OuterIterationSummary, OuterLoopResult } from '../contracts/outer-loop';
import { startOuterLoopWorkflow } from '../services/campaign-loops';
import { startFeedbackServer } from '../server/feedback-server';
import { type Session } from './session';
import { uiLink } from '../temporal/ui-links';

export interface OuterDemoOptions {
  iterations: number;
  /** Feedback events the simulated users send before each iteration that has a production model. */
  events: number;
  seed: number;
  json: boolean;
  /** The task's simulated users. */
  users: SimulatedUsersOfTask;
}

export interface OuterDemoResult {
  campaign: string;
  seed: number;
  iterations: (OuterIterationSummary & { users?: Record<string, number> })[];
  /** The production model's held-out score after each iteration (the gate's metric). */
  production: (number | undefined)[];
  /** True when production's held-out score after the last iteration beats the first iteration's. */
  improved: boolean;
  /**
   * The sealed test split's figure (the gate's metric), scored on each promotion for the record: the checkpoint the
   * first promotion replaced, and the production model after the last promotion.
   */
  test: { metric?: string; before?: number; after?: number };
}

export async function runOuterDemo(
  s: Session,
  spec: CampaignSpec,
  campaignVersionId: string,
  o: OuterDemoOptions,
): Promise<OuterDemoResult> {
  const token = crypto.randomBytes(16).toString('hex');
  const server = await startFeedbackServer({ db: s.db, port: 0, token });
  const lower = spec.outerLoop.promotion.metric === 'bits_per_byte';
  const out: OuterDemoResult = { campaign: spec.name, seed: o.seed, iterations: [], production: [], improved: false, test: {} };
  try {
    console.error(`feedback and completion API on ${server.url} (a fresh token for this demo)`);
    for (let i = 1; i <= o.iterations; i++) {
      const users = (await hasProduction(s, spec.name)) ? await sendFeedback(s, spec, server.url, token, o) : undefined;
      if (users)
        console.error(
          `users: ${users.sent} events (${Object.entries(users.byKind)
            .map(([k, n]) => `${n} ${k}`)
            .join(', ')})`,
        );
      const handle = await startOuterLoopWorkflow(s.client, s.endpoints, { campaignId: spec.name, campaignVersionId, trigger: 'demo' });
      const workflowId = handle.workflowId;
      const link = uiLink(s.endpoints, workflowId);
      console.error(`iteration ${i}: started ${workflowId}${link ? `  (${link})` : ''}`);
      const r = (await handle.result()) as OuterLoopResult;
      const it = r.iterations[r.iterations.length - 1];
      out.iterations.push({ ...it, users: users?.byKind });
      out.production.push(it.heldout?.production);
      if (!o.json) console.log(formatIteration(i, it, spec.selection.metric));
    }
    const [first, last] = [out.production[0], out.production[out.production.length - 1]];
    out.improved = first !== undefined && last !== undefined && out.iterations.length > 1 && (lower ? last < first : last > first);
    out.test = sealedTestOfDemo(out.iterations);
    if (o.json) console.log(JSON.stringify(out, null, 2));
    else {
      console.log(
        `production held-out ${spec.outerLoop.promotion.metric}: ${out.production.map((p) => (p === undefined ? '-' : p.toFixed(3))).join(' → ')}`,
      );
      console.log(sealedTestSummary(out.test));
    }
    return out;
  } finally {
    await server.close();
  }
}

/** The first scored promotion's before and the last one's production on the sealed test split. */
function sealedTestOfDemo(iterations: OuterIterationSummary[]): OuterDemoResult['test'] {
  const scored = iterations.filter((i) => i.status === 'promoted' && i.test?.production !== undefined);
  const [first, last] = [scored[0]?.test, scored.at(-1)?.test];
  return last ? { metric: last.metric, before: first?.metric === last.metric ? first.before : undefined, after: last.production } : {};
}

function sealedTestSummary(t: OuterDemoResult['test']): string {
  const head = 'production on the sealed test split (what production really scores; no decision read it)';
  if (t.after === undefined) return `${head}: - (no promotion scored on it)`;
  return `${head}: ${t.metric} ${t.before === undefined ? '-' : t.before.toFixed(3)} → ${t.after.toFixed(3)}`;
}

async function hasProduction(s: Session, campaignId: string): Promise<boolean> {
  const production = await productionCheckpointOf(s.db, campaignId);
  return !!production;
}

/** One round per iteration; the round number continues across demos in the same home, so event ids never clash. */
async function sendFeedback(s: Session, spec: CampaignSpec, apiUrl: string, token: string, o: OuterDemoOptions) {
  const n = await countOuterIterations(s.db, spec.name);
  return simulateUsers({
    apiUrl,
    token,
    campaignId: spec.name,
    round: n,
    events: o.events,
    seed: o.seed,
    task: o.users,
  });
}

export function formatIteration(i: number, it: OuterIterationSummary, metric: string): string {
  const h = it.heldout;
  const fmt = (v?: number) => (v === undefined ? '-' : v.toFixed(3));
  return [
    `iteration ${i} (${it.outerIterationId || 'skipped'}): ${it.status.toUpperCase()}`,
    `  new feedback ${it.newFeedback}, critiques ${it.critiques}, dataset ${it.datasetExamples ?? '-'} examples (${it.datasetVersionId ?? '-'})`,
    `  inner loop best: ${it.innerBest ? `${it.innerBest.experimentId} public ${metric} ${fmt(it.innerBest.publicScore)}` : 'none'}`,
    ...decisionText(it.reason),
    `  held-out ${h?.metric ?? ''}: candidate ${fmt(h?.candidate)}, incumbent ${fmt(h?.incumbent)}, production now ${fmt(h?.production)}`,
    ...(it.test
      ? [
          `  sealed test ${it.test.metric}: production now ${fmt(it.test.production)}, before ${fmt(it.test.before)}${it.test.error ? ` (${it.test.error})` : ''}`,
        ]
      : []),
  ].join('\n');
}
