// The proposer agent against the built-in sampler and random search on the built-in task: same trial budget, same
// seeds, the held-out bits per byte of the best-by-public configuration after each trial count. The agent is the
// hybrid proposer (agents/proposer.ts + core/sampler hybrid-mode/hybrid-batch): its proposals are checked, ranked by
// TPE, and handed over to the sampler after 2 batches without a new best.
// Run: node bin/run-ts.js bench/agent-proposer.ts [--quick] [--reps N] [--trials N] [--steps N] [--batch N]
// With OPENAI_BASE_URL (and OPENAI_API_KEY) and BENCH_AGENT_MODEL set, the agent is that model. Otherwise it is a
// SCRIPTED LOCAL ENDPOINT (127.0.0.1, the Chat Completions protocol): a heuristic that perturbs the leaderboard's best
// configuration, not a language model. Its figures measure the hybrid machinery, not a model's judgement.
// Trains in-process; no Temporal or database (agent calls are not recorded here).
import type OpenAI from 'openai';
import { APIConnectionError } from 'openai';
import type { AgentCaller } from '../agents/agent-request';
import { openAiClient } from '../agents/openai-client';
import { proposeWithAgent, type ProposerContext } from '../agents/proposer';
import { spaceKey } from '../agents/proposer-reply';
import { requestStructured } from '../agents/structured-call';
import { BUILTIN_DEFAULT_PARAMS, BUILTIN_SEARCH_SPACE } from '../tasks/builtin-code/search-space';
import { proposeBatch, type Trial } from '../core/sampler';
import { hybridBatch, type Candidate } from '../core/sampler/hybrid-batch';
import { nextProposerMode, type PastBatch } from '../core/sampler/hybrid-mode';
import { createRng, mixSeed } from '../core/sampler/rng';
import { sampleParams } from '../core/sampler/space';
import type { Params, SearchSpace } from '../core/spec';
import { startChatServer, type ChatReply, type ChatRequest } from '../test/helpers/chat-server';
import { builtinEvaluator, heldoutOfBest, type Scored } from './lib/builtin-evaluator';
import { runBench } from './lib/run-bench';

const HAND_OVER_AFTER = 2;
const NEAR_DUPLICATE = 0.02;

function arg(argv: string[], flag: string, dflt: number): number {
  const i = argv.indexOf(flag);
  const v = i >= 0 ? Number(argv[i + 1]) : dflt;
  if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} needs a positive integer`);
  return v;
}

/** The scripted endpoint's "model": each knob of the best finished configuration nudged on its own scale. */
function scriptedReply(req: ChatRequest): ChatReply {
  const ctx = JSON.parse(req.body.messages[1].content) as ProposerContext;
  const space = ctx.searchSpace;
  const done = (ctx.leaderboard as { params: Params; publicScore: number | null }[]).filter((r) => r.publicScore !== null);
  const rng = createRng(mixSeed(ctx.leaderboard.length, req.body.messages.length));
  const best = done.sort((a, b) => a.publicScore! - b.publicScore!)[0];
  const proposals = Array.from({ length: ctx.count }, () => ({
    params: best ? nudge(space, best.params, rng.normal.bind(rng)) : sampleParams(space, rng),
    hypothesis: best ? 'a step around the best so far' : 'a first uniform draw',
  }));
  return { content: JSON.stringify({ proposals }) };
}

function nudge(space: SearchSpace, p: Params, normal: () => number): Params {
  const out: Params = {};
  for (const [k, def] of Object.entries(space)) {
    if (def.type === 'categorical') out[k] = p[k];
    else {
      const v = p[k] as number;
      const x = def.log ? Math.exp(Math.log(v) + 0.35 * normal()) : v + 0.15 * (def.high - def.low) * normal();
      const c = Math.min(def.high, Math.max(def.low, x));
      out[k] = def.type === 'int' ? Math.round(c) : c;
    }
  }
  return out;
}

/** The bench's caller: the same structured request as the activities, without the database record. */
function benchCaller(client: OpenAI, tokens: { n: number }): AgentCaller {
  let call = 0;
  return {
    async complete(req) {
      // Training blocks this process's event loop, so a kept-alive socket the server has closed meanwhile can be
      // reused once: one more try on a connection error.
      const r = await requestStructured(client, req).catch((e: unknown) => {
        if (e instanceof APIConnectionError) return requestStructured(client, req);
        throw e;
      });
      tokens.n += r.tokensIn + r.tokensOut;
      return { callId: `bench/${call++}`, choice: r.choice, reused: false };
    },
    judge: () => Promise.resolve(),
  };
}

async function run(): Promise<void> {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
  const s = {
    reps: arg(argv, '--reps', quick ? 2 : 3),
    trials: arg(argv, '--trials', quick ? 12 : 24),
    steps: arg(argv, '--steps', quick ? 150 : Number(BUILTIN_DEFAULT_PARAMS.steps)),
    batch: arg(argv, '--batch', 4),
    startup: 4,
    lossItems: 40,
  };
  const budgets = [...[8, 16].filter((b) => b < s.trials), s.trials];
  const realModel =
    process.env.BENCH_AGENT_MODEL && (process.env.OPENAI_BASE_URL || process.env.OPENAI_API_KEY)
      ? process.env.BENCH_AGENT_MODEL
      : undefined;
  const server = realModel ? undefined : await startChatServer(scriptedReply);
  const client = openAiClient(server ? { OPENAI_BASE_URL: server.baseUrl } : process.env, { timeoutMs: 120_000 });
  const model = realModel ?? 'scripted-local';
  const label = realModel
    ? `agent (model "${realModel}" at the configured endpoint)`
    : 'agent (SCRIPTED LOCAL ENDPOINT: perturbs the best; not a language model)';
  const ev = await builtinEvaluator({ steps: s.steps, lossItems: s.lossItems });
  console.log(`proposer comparison on the built-in task (${ev.describe})\nsettings: ${JSON.stringify(s)}\nagent: ${label}`);
  const tokens = { n: 0 };
  const caller = benchCaller(client, tokens);
  const space = BUILTIN_SEARCH_SPACE;

  const campaign = async (who: 'agent' | 'tpe' | 'random', seed: number): Promise<(Scored | undefined)[]> => {
    const history: Trial[] = [];
    const scores: (Scored | undefined)[] = [];
    const batches: PastBatch[] = [];
    const hyps: string[] = [];
    while (history.length < s.trials) {
      const count = Math.min(s.batch, s.trials - history.length);
      const drawn = proposeBatch({ kind: who === 'random' ? 'random' : 'tpe', space, history, count, seed, startupTrials: s.startup });
      let batch: Candidate[] = drawn.map((params) => ({ params, hypothesis: '', proposer: who }));
      let mode: PastBatch['mode'] = 'sampler';
      if (who === 'agent') {
        mode = nextProposerMode(batches, HAND_OVER_AFTER).mode;
        const context: ProposerContext = {
          goal: 'lowest bits per byte on the built-in code-completion task',
          metric: 'bits_per_byte',
          mode: 'min',
          searchSpace: space,
          leaderboard: history.map((t, i) => ({
            index: i,
            params: t.params,
            status: t.state,
            publicScore: t.value ?? null,
            hypothesis: hyps[i],
          })),
          analyses: [],
          count,
        };
        const made = await proposeWithAgent(caller, model, context, new Set(history.map((t) => spaceKey(space, t.params))));
        const agent = made.accepted.map((a) => ({ ...a, proposer: 'agent' }));
        batch = hybridBatch({
          mode,
          space,
          history,
          agent,
          builtin: batch.map((b) => ({ ...b, proposer: 'tpe' })),
          count,
          tol: NEAR_DUPLICATE,
        }).batch;
      }
      const bestBefore = Math.min(...history.map((t) => t.value ?? Infinity));
      let agentImproved = false;
      for (const c of batch) {
        const r = ev.evaluate(c.params, seed);
        history.push(r ? { params: c.params, value: r.public, state: 'finished' } : { params: c.params, state: 'failed' });
        hyps.push(c.hypothesis);
        scores.push(r);
        if (c.proposer === 'agent' && r && r.public < bestBefore) agentImproved = true;
      }
      batches.push({ mode, agentImproved });
    }
    if (who === 'agent')
      console.log(`    agent batches by mode: ${batches.map((b) => b.mode[0]).join('')} (a: agent leads, s: sampler leads)`);
    return scores;
  };

  const who = ['agent', 'tpe', 'random'] as const;
  const results: Record<string, number[][]> = { agent: [], tpe: [], random: [] };
  const started = Date.now();
  for (let rep = 0; rep < s.reps; rep++) {
    for (const w of who) {
      const scores = await campaign(w, rep + 1);
      results[w].push(budgets.map((b) => heldoutOfBest(scores, b)));
      console.log(
        `  seed ${rep + 1} ${w.padEnd(6)} held-out of best-by-public: ${results[w][rep].map((v) => v.toFixed(4)).join(' / ')}  [${ev.trained()} runs, ${((Date.now() - started) / 1000).toFixed(0)} s]`,
      );
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log('\nheld-out bits per byte of the best-by-public configuration, mean over seeds (lower is better)');
  console.log(['trials', 'agent  ', 'tpe    ', 'random ', 'agent/tpe', 'agent/random'].join(' | '));
  budgets.forEach((b, j) => {
    const m = (w: string) => mean(results[w].map((r) => r[j]));
    console.log(
      [
        String(b).padStart(6),
        m('agent').toFixed(4),
        m('tpe').toFixed(4),
        m('random').toFixed(4),
        (m('agent') / m('tpe')).toFixed(4).padStart(9),
        (m('agent') / m('random')).toFixed(4).padStart(12),
      ].join(' | '),
    );
  });
  console.log(`\nagent tokens: ${tokens.n}; ${ev.trained()} training runs in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await server?.close();
}

runBench(run);
