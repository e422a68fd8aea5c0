// The arithmetic task's simulated users: they ask sums outside the suite, mostly of the category they care about,
// judge answers exactly, and so concentrate their failures on the category a model gets wrong.
import { arithmeticPopulation, arithmeticUsers, judgeSum, type ArithmeticUser } from '../../tasks/arithmetic/simulated-users';
import { generateArithmetic } from '../../tasks/arithmetic/generate';
import { categoryOf, parsePrompt } from '../../tasks/arithmetic/problems';
import { checkFeedback } from '../../core/feedback';

const reply = (completion: string) => ({ id: 'e1', campaignId: 'arithmetic', modelVersion: 'ckpt-1', completion });
const user = (profile: ArithmeticUser['profile']): ArithmeticUser => ({ id: 'u0', profile, cares: 'carry' });

test('users judge exactly: a right sum is accepted however it is padded, a wrong one edited, rejected or rated low', () => {
  const p = { a: 23, b: 58 };
  expect(judgeSum(user('editor'), p, reply('081\n')).kind).toBe('accept');
  expect(judgeSum(user('rejecter'), p, reply('81\n4')).kind).toBe('accept');
  expect(judgeSum(user('editor'), p, reply('071\n'))).toMatchObject({
    kind: 'edit',
    prompt: '23+58=',
    output: '071\n',
    correction: '081\n',
  });
  expect(judgeSum(user('rejecter'), p, reply('071\n'))).toMatchObject({ kind: 'reject', comment: '23+58 is 81, not 71' });
  expect(judgeSum(user('rater'), p, reply('081\n'))).toMatchObject({ kind: 'rating', rating: 5 });
  expect(judgeSum(user('rater'), p, reply('071\n'))).toMatchObject({ kind: 'rating', rating: 3 });
  expect(judgeSum(user('rater'), p, reply('\n'))).toMatchObject({ kind: 'rating', rating: 1 });
  for (const out of ['081\n', '071\n', ''])
    for (const pr of ['editor', 'rejecter', 'rater'] as const) {
      const e = judgeSum(user(pr), p, reply(out));
      expect(checkFeedback(e)).toEqual(expect.objectContaining({ event: expect.anything() }));
    }
});

test('a round is a pure function of its options, asks only sums outside the suite, and mostly sums that carry', async () => {
  const users = arithmeticUsers(1);
  const o = { round: 1, events: 400, seed: 1, users: 20 };
  const [a, b] = [await users.round(o), await users.round(o)];
  expect(a.map((x) => x.prompt)).toEqual(b.map((x) => x.prompt));
  expect((await users.round({ ...o, round: 2 })).map((x) => x.prompt)).not.toEqual(a.map((x) => x.prompt));
  const suite = new Set(generateArithmetic(1).suite.items.map((i) => i.prompt));
  expect(a.filter((x) => suite.has(x.prompt))).toEqual([]);
  const carry = a.filter((x) => categoryOf(parsePrompt(x.prompt)!) === 'carry').length;
  expect(carry / a.length).toBeGreaterThan(0.55);
  expect(arithmeticPopulation(20, 1)).toEqual(arithmeticPopulation(20, 1));
});

test("a model that fails the sums that carry gets its failures there: the users' edits teach carries", async () => {
  const asks = await arithmeticUsers(1).round({ round: 0, events: 300, seed: 3, users: 20 });
  // A model that adds column by column and drops every carry.
  const noCarry = (prompt: string) => {
    const { a, b } = parsePrompt(prompt)!;
    return `${String(((Math.floor(a / 10) + Math.floor(b / 10)) % 10) * 10 + ((a + b) % 10)).padStart(3, '0')}\n`;
  };
  const events = asks.map((x, k) => x.judge({ ...reply(noCarry(x.prompt)), id: `e${k}` }));
  const failed = events.filter((e) => e.kind === 'edit' || e.kind === 'reject' || (e.kind === 'rating' && e.rating! < 5));
  expect(failed.length).toBeGreaterThan(0);
  expect(failed.every((e) => categoryOf(parsePrompt(e.prompt)!) === 'carry')).toBe(true);
  const edits = events.filter((e) => e.kind === 'edit');
  expect(edits.length).toBeGreaterThan(0);
  for (const e of edits) expect(Number(e.correction)).toBe(parsePrompt(e.prompt)!.a + parsePrompt(e.prompt)!.b);
});
