// evaluateGate against a real database: it reads held-out results and item categories, writes one decision per
// decision id however often it runs, never records item text, and names what to score when results are missing.
import { eq } from 'drizzle-orm';
import { evaluateGate } from '../../activities/outer/evaluate-gate';
import { NotFoundError } from '../../core/errors';
import type { DbHandle } from '../../db/client';
import { decisions, evalItems, evalResults, heldoutReads } from '../../db/schema';
import { gateDecisionById } from '../../services/decisions';
import { heldoutSpent } from '../../services/heldout-budget';
import { freshDatabase } from '../helpers/env';

let db: DbHandle;
const suiteId = 'gate-suite@1';
const campaignId = 'gate-campaign';
const SECRET = 'HELDOUT-TEXT-';

/** 40 held-out loss items (two languages) and 20 exact-token items, plus public items the gate must ignore. */
const heldout = [
  ...Array.from({ length: 40 }, (_, i) => ({ id: `l-${i}`, grader: 'bits_per_byte', category: i % 2 ? 'javascript' : 'typescript' })),
  ...Array.from({ length: 20 }, (_, i) => ({ id: `c-${i}`, grader: 'exact_token', category: 'identifier' })),
];

async function insertResult(checkpointId: string, perItem: Record<string, number>) {
  await db.db.insert(evalResults).values({
    id: `${checkpointId}|${suiteId}|heldout`,
    checkpointId,
    experimentId: `exp-of-${checkpointId}`,
    suiteId,
    split: 'heldout',
    itemCount: Object.keys(perItem).length,
    metrics: {},
    perItem,
  });
}

/** Incumbent: 2.5 bits/byte with a deterministic wobble, half the completions right. */
const incumbentScores = (): Record<string, number> =>
  Object.fromEntries(heldout.map((it, i) => [it.id, it.grader === 'bits_per_byte' ? 2.5 + 0.3 * Math.sin(i * 1.7) : i % 2]));

beforeAll(async () => {
  db = (await freshDatabase('gate')).handle;
  const rows = [
    ...heldout.map((it) => ({ ...it, split: 'heldout' })),
    ...Array.from({ length: 10 }, (_, i) => ({ id: `p-${i}`, grader: 'bits_per_byte', category: 'typescript', split: 'public' })),
  ].map((r) => ({
    ...r,
    suiteId,
    prompt: `${SECRET}prompt-${r.id}`,
    reference: `${SECRET}ref-${r.id}`,
    contentHash: `h-${r.id}`,
    // One file per item: independent items (items of one file would be one cluster, core/gate/item-layout.ts).
    sourceFile: `${SECRET}file-${r.id}.ts`,
  }));
  await db.db.insert(evalItems).values(rows);

  const inc = incumbentScores();
  await insertResult('inc', inc);
  // Better by 0.1 bits/byte everywhere (small wobble), completions unchanged.
  await insertResult(
    'good',
    Object.fromEntries(Object.entries(inc).map(([id, s], i) => [id, id.startsWith('l-') ? s - 0.1 + 0.01 * Math.cos(i) : s])),
  );
  // The same as the incumbent plus zero-mean noise.
  await insertResult(
    'noisy',
    Object.fromEntries(Object.entries(inc).map(([id, s], i) => [id, id.startsWith('l-') ? s + 0.3 * (i % 2 ? 1 : -1) : s])),
  );
  // Missing five loss items the incumbent has.
  await insertResult(
    'partial',
    Object.fromEntries(Object.entries(inc).filter(([id]) => !['l-0', 'l-1', 'l-2', 'l-3', 'l-4'].includes(id))),
  );
});

afterAll(async () => {
  await db?.close();
});

const input = (decisionId: string, candidateCheckpointId: string, incumbentCheckpointId = 'inc') => ({
  decisionId,
  campaignId,
  candidateCheckpointId,
  incumbentCheckpointId,
  suiteId,
  settings: { margin: 0.02 },
});

test('a clearly better candidate is promoted; a retried activity writes one decision and returns the same summary', async () => {
  const first = await evaluateGate(db.db, input('outer/1/gate', 'good'));
  const second = await evaluateGate(db.db, input('outer/1/gate', 'good'));
  expect(first).toMatchObject({ promote: true, rule: 'allChecksPassed' });
  expect(first.meanDelta).toBeGreaterThan(0.09);
  expect(first.pValue).toBeLessThan(0.001);
  expect(second).toEqual(first);

  const row = await gateDecisionById(db.db, 'outer/1/gate');
  expect(row).toMatchObject({
    campaignId,
    kind: 'promote',
    checkpointId: 'good',
    experimentId: 'exp-of-good',
    rule: 'allChecksPassed',
    accepted: true,
  });
  const { checks = {}, settings } = row!.figures;
  // jsonb keeps keys in its own order; the hacking guard's checks are recorded beside the held-out ones.
  expect(Object.keys(checks).sort()).toEqual([
    'canaryInOutputs',
    'cheatOnlyPass',
    'heldoutAboveNoise',
    'heldoutCanaryInOutputs',
    'heldoutImprovement',
    'heldoutOutrunsPublic',
    'noCategoryRegression',
    'publicHeldoutGap',
    'twinGap',
  ]);
  expect(checks.heldoutImprovement).toMatchObject({ passed: true, metric: 'bits_per_byte', n: 40, test: 'sign-flip' });
  expect(checks.noCategoryRegression).toMatchObject({
    passed: true,
    'bits_per_byte.typescript.n': 20,
    'exact_match.identifier.n': 20,
  });
  expect(settings).toMatchObject({ margin: 0.02, alpha: 0.05 });
  expect(JSON.stringify(row)).not.toContain(SECRET);
  expect(JSON.stringify(first)).not.toContain(SECRET);

  // The held-out read is logged once: the retry answered from the recorded decision.
  const reads = await db.db.select().from(heldoutReads).where(eq(heldoutReads.reader, 'evaluateGate:outer/1/gate'));
  expect(reads).toHaveLength(1);
  expect(reads[0]).toMatchObject({ suiteId, purpose: 'gate' });
});

test('a candidate better only by noise is rejected and the rejection is recorded with its rule', async () => {
  const summary = await evaluateGate(db.db, input('outer/2/gate', 'noisy'));
  expect(summary).toMatchObject({ promote: false, rule: 'heldoutImprovement' });
  expect(summary.reason).toMatch(/^rejected by heldoutImprovement/);
  const [row] = await db.db.select().from(decisions).where(eq(decisions.id, 'outer/2/gate'));
  expect(row).toMatchObject({ kind: 'reject', rule: 'heldoutImprovement', accepted: false, reason: summary.reason });
});

test('missing held-out results are a NotFoundError naming what to score, and nothing is recorded', async () => {
  const missing = evaluateGate(db.db, input('outer/3/gate', 'never-scored'));
  await expect(missing).rejects.toThrow(NotFoundError);
  await expect(missing).rejects.toThrow(
    /candidate checkpoint "never-scored" has no held-out result on suite "gate-suite@1": run scoreCheckpoint/,
  );
  await expect(evaluateGate(db.db, input('outer/3/gate', 'good', 'no-incumbent'))).rejects.toThrow(/incumbent checkpoint "no-incumbent"/);
  await expect(evaluateGate(db.db, { ...input('outer/3/gate', 'good'), suiteId: 'no-such-suite@1' })).rejects.toThrow(NotFoundError);
  expect(await db.db.select().from(decisions).where(eq(decisions.id, 'outer/3/gate'))).toHaveLength(0);
});

test('held-out scores that do not pair up are refused rather than silently dropped', async () => {
  await expect(evaluateGate(db.db, input('outer/4/gate', 'partial'))).rejects.toThrow(/"partial" lacks 5 items/);
});

test('a decision id reused for another candidate is a non-retryable conflict', async () => {
  await expect(evaluateGate(db.db, input('outer/1/gate', 'noisy'))).rejects.toMatchObject({
    type: 'DecisionConflictError',
    nonRetryable: true,
  });
});

describe('the held-out budget and α-spending (services/heldout-budget.ts)', () => {
  const budgeted = (decisionId: string, candidate: string, campaign: string, settings: Record<string, unknown> = {}) => ({
    ...input(decisionId, candidate),
    campaignId: campaign,
    settings: { margin: 0.02, ...settings },
  });

  test('each decision records what it spent and its level; a retry spends nothing twice; a decision from before the budget counts one', async () => {
    const before = await heldoutSpent(db.db, suiteId);
    const first = await evaluateGate(db.db, budgeted('budget/1/gate', 'good', 'budget-campaign'));
    expect(first).toMatchObject({ promote: true });
    const row = await gateDecisionById(db.db, 'budget/1/gate');
    // No public scores here: the held-out answer is given, noised, and paid for.
    expect(row!.figures.budget).toMatchObject({ suiteId, spent: 1, of: 20, remaining: 20 - before - 1, answeredFrom: 'heldout' });
    const alpha = row!.figures.alpha!;
    expect(alpha).toMatchObject({ index: 1, target: 0.05, wealthBefore: 0.025, discovery: true });
    expect(alpha.wealthAfter).toBeCloseTo(0.025 - alpha.level + 0.025, 12);
    expect(row!.figures.checks!.heldoutImprovement).toMatchObject({ level: alpha.level, significant: 'yes' });

    expect(await evaluateGate(db.db, budgeted('budget/1/gate', 'good', 'budget-campaign'))).toEqual(first);
    expect(await heldoutSpent(db.db, suiteId)).toBe(before + 1);

    // The campaign's next gate is its second test, granted from the wealth the first left.
    await evaluateGate(db.db, budgeted('budget/2/gate', 'noisy', 'budget-campaign'));
    const second = (await gateDecisionById(db.db, 'budget/2/gate'))!.figures.alpha!;
    expect(second).toMatchObject({ index: 2, discovery: false });
    expect(second.wealthBefore).toBeCloseTo(alpha.wealthAfter, 12);
    expect(await heldoutSpent(db.db, suiteId)).toBe(before + 2);

    // A gate decision recorded before the budget existed (no `budget` figures) read held-out exactly: one unit.
    await db.db.insert(decisions).values({
      id: 'old/1/gate',
      campaignId: 'old',
      kind: 'reject',
      rule: 'heldoutImprovement',
      reason: 'old',
      figures: {},
      accepted: false,
    });
    await db.db.insert(heldoutReads).values({ suiteId, reader: 'evaluateGate:old/1/gate', purpose: 'gate' });
    expect(await heldoutSpent(db.db, suiteId)).toBe(before + 3);
  });

  test('two gates at once cannot both spend the last unit; a spent budget rejects and asks for fresh held-out items', async () => {
    const spent = await heldoutSpent(db.db, suiteId);
    const last = { heldoutBudget: { queries: spent + 1 } };
    const [a, b] = await Promise.all([
      evaluateGate(db.db, budgeted('race/a/gate', 'good', 'race-a', last)),
      evaluateGate(db.db, budgeted('race/b/gate', 'good', 'race-b', last)),
    ]);
    const rules = [a.rule, b.rule].sort();
    expect(rules).toEqual(['allChecksPassed', 'heldoutBudgetSpent']);
    expect(await heldoutSpent(db.db, suiteId)).toBe(spent + 1);

    const refused = a.rule === 'heldoutBudgetSpent' ? a : b;
    expect(refused).toMatchObject({ promote: false, hold: false });
    expect(refused.reason).toMatch(
      /^rejected by heldoutBudgetSpent: suite "gate-suite@1"'s held-out split has given all \d+ answers .*register a new suite version with fresh held-out items \(`flywheel suite add`\)/,
    );
    const id = a.rule === 'heldoutBudgetSpent' ? 'race/a/gate' : 'race/b/gate';
    expect((await gateDecisionById(db.db, id))!.figures.budget).toMatchObject({ spent: 0, remaining: 0, answeredFrom: 'none' });
    // The refusal read nothing of held-out.
    expect(
      await db.db
        .select()
        .from(heldoutReads)
        .where(eq(heldoutReads.reader, `evaluateGate:${id}`)),
    ).toHaveLength(0);
  });

  test('a public gain that held-out bears out is answered from public and spends nothing', async () => {
    const inc = incumbentScores();
    const pub = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p-${i}`, 2.4 + 0.1 * Math.sin(i)]));
    // Better by 0.1 bits per byte on both splits, with a small per-item wobble.
    const good = Object.fromEntries(
      heldout.map((it, i) => [it.id, it.id.startsWith('l-') ? inc[it.id] - 0.1 + 0.01 * Math.cos(i) : inc[it.id]]),
    );
    for (const [ckpt, perItem, split] of [
      ['inc-pub', inc, 'heldout'],
      ['good-pub', good, 'heldout'],
      ['inc-pub', pub, 'public'],
      ['good-pub', Object.fromEntries(Object.entries(pub).map(([id, s], i) => [id, s - 0.1 + 0.01 * Math.sin(3 * i)])), 'public'],
    ] as const)
      await db.db.insert(evalResults).values({
        id: `${ckpt}|${suiteId}|${split}`,
        checkpointId: ckpt,
        experimentId: `exp-of-${ckpt}`,
        suiteId,
        split,
        itemCount: Object.keys(perItem).length,
        metrics: {},
        perItem,
      });
    const spent = await heldoutSpent(db.db, suiteId);
    const summary = await evaluateGate(db.db, {
      ...budgeted('public/1/gate', 'good-pub', 'public-campaign', { heldoutBudget: { queries: spent + 1 } }),
      incumbentCheckpointId: 'inc-pub',
    });
    expect(summary).toMatchObject({ promote: true });
    const row = await gateDecisionById(db.db, 'public/1/gate');
    expect(row!.figures.budget).toMatchObject({ spent: 0, remaining: 1, answeredFrom: 'public' });
    // The claim is the public gain, which held-out agreed with to within the threshold.
    expect(row!.figures.budget!.answer).toBeCloseTo(0.1, 2);
    expect(await heldoutSpent(db.db, suiteId)).toBe(spent);
  });
});

test('categories are bounded against the anchor too: a pinned one from its held-out scores, or the incumbent, said, when it has none', async () => {
  // The anchor got every completion right; the incumbent (and so `good`) half of them: `good` is 0.5 below the anchor
  // on "identifier" though level with the incumbent.
  await insertResult('anchor', Object.fromEntries(Object.entries(incumbentScores()).map(([id, s]) => [id, id.startsWith('c-') ? 1 : s])));
  const unbudgeted = { margin: 0.02, heldoutBudget: { enabled: false }, alphaSpending: { enabled: false } };
  const anchored = await evaluateGate(db.db, { ...input('outer/anchor/gate', 'good'), settings: { ...unbudgeted, anchor: 'anchor' } });
  expect(anchored).toMatchObject({ promote: false, rule: 'noCategoryRegression' });
  expect(anchored.reason).toContain('category "identifier" is worse on held-out exact_match than the anchor anchor by 0.5000');
  const row = await gateDecisionById(db.db, 'outer/anchor/gate');
  expect(row!.figures.checks!.noCategoryRegression).toMatchObject({
    anchor: 'anchor',
    anchorSource: 'setting',
    'exact_match.identifier.delta': 0,
    'exact_match.identifier.anchorDelta': -0.5,
  });
  // A pinned anchor never scored on this suite: the incumbent stands in, and the figures say why.
  const missing = await evaluateGate(db.db, {
    ...input('outer/anchor-missing/gate', 'good'),
    settings: { ...unbudgeted, anchor: 'nowhere' },
  });
  expect(missing.promote).toBe(true);
  const fell = (await gateDecisionById(db.db, 'outer/anchor-missing/gate'))!.figures.checks!.noCategoryRegression;
  expect(fell).toMatchObject({ anchor: 'inc', anchorSource: 'incumbent' });
  expect(fell.anchorFallback).toMatch(/^the pinned anchor \(promotion\.anchor\) "nowhere" is not used: it has no held-out result on suite/);
});
