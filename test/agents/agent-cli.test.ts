// The CLI and the agents: a spec that names agent models, run where no endpoint is configured, says once that the
// built-in roles are used; `flywheel status` shows the analyst's latest account.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { cliEnv, runCli } from '../helpers/cli';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let h: LoopHarness;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  h = await loopHarness('agent_cli');
  const workers = await h.workers('t-agentcli');
  env = cliEnv(h, workers.prefix, { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' });
});
afterAll(() => h?.close());

test('no key: the run says once that the built-in roles are used; status shows the built-in analysis', async () => {
  const name = uniqueName('nokey');
  const spec = { ...fixtureSpec(name, { steps: 5 }), agents: { proposer: { model: 'gpt-test' }, analyst: { model: 'gpt-test' } } };
  const file = path.join(h.home, `${name}.yaml`);
  fs.writeFileSync(file, YAML.stringify(spec));

  const run = await runCli(env, ['run', file, '--json']);
  expect(run.status).toBe(0);
  const notice =
    'note: agents.proposer.model "gpt-test", agents.analyst.model "gpt-test" set but neither OPENAI_API_KEY nor OPENAI_BASE_URL is: the built-in proposer, analyst and teacher are used';
  expect(run.stderr.split('\n').filter((l) => l === notice)).toHaveLength(1);

  const status = await runCli(env, ['status', name]);
  expect(status.status).toBe(0);
  expect(status.stdout).toContain(
    'analysis of the batch from e0 (built-in analyst):\n  Batch e0–e0 (1 experiments, proposed by tpe-startup). Best: e0 with public exact_match 0.0000 (steps=5). It is the first score of the loop.',
  );
  expect(status.stderr).not.toContain('note:');
}, 180_000);
