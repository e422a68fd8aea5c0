// A task's users and teacher as programs in any language (spec `task.users.command`, `task.teacher.command`): the
// Python example of docs/tasks.md (test/fixtures/task-programs/sums_task.py) runs as `flywheel simulate-users --task
// custom` against a stand-in completion and feedback API, and as the outer loop's teacher; a bad answer is one line
// naming the command and the line; the program runs in the trainers' sandbox (no FLYWHEEL_HOME, no secrets).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { critiqueFeedback } from '../../activities/outer/critique-feedback';
import { teacherChoiceOf } from '../../activities/outer/teach-failures';
import { programTeacherOf } from '../../activities/outer/program-teacher';
import { taskVerdictOf } from '../../activities/outer/revise-feedback';
import { verifyRevision } from '../../core/teacher/verify-revision';
import type { ActivityDeps } from '../../activities/deps';
import { JsonLinesCommand } from '../../backends/sandbox/json-lines-command';
import type { FeedbackEvent } from '../../core/feedback';
import type { CampaignSpecInput } from '../../core/spec';
import type { DbHandle } from '../../db/client';
import { critiques, datasets, datasetVersions } from '../../db/schema';
import { storeFeedback } from '../../services/feedback-store';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';
import { requires } from '../helpers/requires';

requires('bubblewrap');

const SCRIPT = path.join(__dirname, '..', 'fixtures', 'task-programs', 'sums_task.py');
const PROGRAM = ['python3', SCRIPT];
const home = scratchDir('task-programs');
let h: DbHandle;
let env: NodeJS.ProcessEnv;
let api: http.Server;
let apiUrl: string;
const received: FeedbackEvent[] = [];

const spec = (name: string, task: object): CampaignSpecInput =>
  ({
    name,
    task: { kind: 'custom', dataset: 'sums', suite: 'sumsuite', ...task },
    searchSpace: { lr: { type: 'float', low: 0.1, high: 1 } },
  }) as CampaignSpecInput;

beforeAll(async () => {
  const db = await freshDatabase('task_programs');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'task-programs-');
  await h.db.insert(datasets).values({ id: 'sums', name: 'sums', campaignId: null });
  await h.db.insert(datasetVersions).values({
    id: 'sums@aaaaaaaaaaaa',
    datasetId: 'sums',
    parentIds: [],
    path: path.join(home, 'datasets', 'sums'),
    contentHash: 'aaaaaaaaaaaa',
    countsBySource: { user: 1 },
  });
  await registerEvalSuite(h.db, {
    name: 'sumsuite',
    items: [{ id: 'p1', split: 'public', grader: { kind: 'exact_match' }, category: 'carry', prompt: '17 + 25 =', reference: '42' }],
  });
  await registerCampaignVersion(h.db, spec('sums-users', { users: { command: PROGRAM }, teacher: { command: PROGRAM } }));
  await registerCampaignVersion(h.db, spec('sums-plain', {}));
  // The production model as the users see it: `POST /v1/complete` answers 42 to everything.
  api = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { events?: FeedbackEvent[] };
      if (req.url === '/v1/feedback:batch') received.push(...parsed.events!);
      const reply =
        req.url === '/v1/complete' ? { completion: '42\n', modelVersion: 'm1' } : { inserted: parsed.events?.length, duplicates: 0 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  api?.close();
  await h?.close();
});

test('simulate-users --task custom runs the users program the campaign spec names, and sends its verdicts as feedback', async () => {
  const r = await runCli(env, [
    'simulate-users',
    'sums-users',
    '--task',
    'custom',
    '--round',
    '1',
    '--events',
    '6',
    '--seed',
    '3',
    '--url',
    apiUrl,
    '--json',
  ]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ sent: 6, inserted: 6, modelVersions: ['m1'] });
  expect(received).toHaveLength(6);
  for (const [k, e] of received.entries()) {
    expect(e).toMatchObject({ id: `sim-sums-users-r1-${k}`, campaignId: 'sums-users', modelVersion: 'm1', output: '42\n' });
    const [a, b] = e.prompt.split(/[+=]/).map(Number);
    // The program's own judgement: 42 is right only for sums of 42; wrong even asks are fixed, odd ones rejected.
    if (a + b === 42) expect(e.kind).toBe('accept');
    else if (k % 2 === 0) expect(e).toMatchObject({ kind: 'edit', correction: `${a + b}\n` });
    else expect(e).toMatchObject({ kind: 'reject', comment: `${e.prompt} is ${a + b}, not 42` });
  }

  const none = await runCli(env, ['simulate-users', 'sums-plain', '--task', 'custom', '--round', '1', '--url', apiUrl]);
  expect(none.status).toBe(2);
  expect(none.stderr.trim()).toBe(
    'flywheel: campaign "sums-plain" names no users program: add task.users.command to its spec (docs/tasks.md), or pass --task builtin-code or arithmetic',
  );
}, 60_000);

test('docs/tasks.md shows the example program as it is run here, whole', () => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'tasks.md'), 'utf8');
  expect(doc).toContain(`\`\`\`python\n${fs.readFileSync(SCRIPT, 'utf8')}\`\`\``);
});

test('the outer loop critiques a feedback failure through the teacher program: its text, weight and category, the reference as the target', async () => {
  const { spec: parsed } = await registerCampaignVersion(
    h.db,
    spec('sums-users', { users: { command: PROGRAM }, teacher: { command: PROGRAM } }),
  );
  const event = {
    id: 'teach-1',
    campaignId: 'sums-users',
    kind: 'edit',
    modelVersion: 'm1',
    prompt: '17 + 25 =',
    output: '41\n',
    correction: '42\n',
  } as const;
  await storeFeedback(h.db, [event]);
  const choice = teacherChoiceOf({ db: h.db, home, agentEnv: {} } as unknown as ActivityDeps, parsed);
  const r = await critiqueFeedback(h.db, { campaignId: 'sums-users', eventIds: [event.id] }, choice);
  expect(r.counts).toMatchObject({ created: 1, withExample: 1 });
  const [row] = await h.db.select().from(critiques).where(eq(critiques.sourceId, event.id));
  expect(row).toMatchObject({ teacher: 'command:sums_task.py', text: '17+25 is 42, carry; the answer 41 has 1 wrong digit(s).' });
  expect(row.signal).toEqual([
    { kind: 'sft', prompt: '17 + 25 =', target: '42\n', weight: 4 / 3, category: 'carry' },
    { kind: 'pair', prompt: '17 + 25 =', chosen: '42\n', rejected: '41\n', weight: 4 / 3 },
  ]);
}, 30_000);

test('the teacher program is the revision check: the sum trains, a wrong sum does not even where the reference says so, and a prompt it cannot read falls to the reference', async () => {
  const { spec: parsed } = await registerCampaignVersion(
    h.db,
    spec('sums-users', { users: { command: PROGRAM }, teacher: { command: PROGRAM } }),
  );
  const program = programTeacherOf(parsed, home)!;
  const input = { program: { name: program.teacher.name, verify: program.verify } };
  const check = async (prompt: string, revision: string, reference?: string) =>
    verifyRevision(await taskVerdictOf(input as never, prompt, revision), revision, reference);
  try {
    expect(await check('17 + 25 =', '42\n')).toEqual({ verified: true, by: 'task:command:sums_task.py' });
    expect(await check('17 + 25 =', '41\n', '41\n')).toEqual({ verified: false, by: 'task:command:sums_task.py' });
    expect(await check('what is four?', '4', '4')).toEqual({ verified: true, by: 'reference' });
    expect(await check('what is four?', '5')).toEqual({ verified: false, by: 'none' });
  } finally {
    program.close();
  }
}, 30_000);

const ask = (program: string, body: Record<string, unknown> = { type: 'round' }, timeoutMs?: number) => {
  const c = new JsonLinesCommand({ role: 'users', command: ['python3', '-c', program], hide: [home], timeoutMs });
  return c.request(body, (a) => a).finally(() => c.close());
};

test('a bad answer, an error answer, an early exit and a silent program are each one line naming the command', async () => {
  await expect(ask('input(); print("ok"); print("no")')).rejects.toThrow(/^users command line 1: not JSON: .* \("ok"\)$/);
  await expect(ask('input(); print("[1]")')).rejects.toThrow('users command line 1: not a JSON object ("[1]")');
  await expect(ask('import json; input(); print(json.dumps({"error": "no such round"}))')).rejects.toThrow(
    'users command line 1: it answered an error: no such round',
  );
  await expect(ask('import sys; sys.stderr.write("Traceback\\nValueError: bad seed\\n"); sys.exit(3)')).rejects.toThrow(
    'users command exited (code 3) before answering request 1: ValueError: bad seed',
  );
  await expect(ask('import time; time.sleep(60)', { type: 'round' }, 300)).rejects.toThrow(
    'users command did not answer request 1 within 0.3 s',
  );
  // The protocol's own checks: the answer read by the users' reader names the field.
  const { commandUsers } = await import('../../core/command-users');
  const c = new JsonLinesCommand({
    role: 'users',
    command: ['python3', '-c', 'import json; input(); print(json.dumps({"asks": [{"prompt": 1}]}))'],
    hide: [home],
  });
  await expect(commandUsers(c.ask).round({ round: 1, events: 1, seed: 1, users: 1 })).rejects.toThrow(
    'users command line 1: asks.0.prompt: must be a string',
  );
  c.close();
}, 30_000);

test('the program runs in the trainers sandbox: no FLYWHEEL_HOME, no database URL, no network', async () => {
  const probe = [
    'import json, os, socket',
    'req = json.loads(input())',
    'try:',
    '    socket.create_connection(("1.1.1.1", 53), timeout=2); net = True',
    'except OSError:',
    '    net = False',
    'print(json.dumps({"home": os.path.exists(req["home"]) and len(os.listdir(req["home"])) > 0, "db": "DATABASE_URL" in os.environ, "net": net}))',
  ].join('\n');
  fs.writeFileSync(path.join(home, 'secret.txt'), 'the home holds the database and every campaign');
  expect(await ask(probe, { home })).toEqual({ home: false, db: false, net: false });
}, 30_000);
