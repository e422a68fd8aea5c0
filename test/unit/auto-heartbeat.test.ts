// Short activities heartbeat while they run, so a dead worker is noticed within the heartbeat timeout; without a
// heartbeat timeout (or outside an activity) nothing is sent and the function runs as it is.
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { withAutoHeartbeat } from '../../activities/auto-heartbeat';
import { heartbeatIfActivity } from '../../activities/heartbeat';

const slow = withAutoHeartbeat(async (ms: number) => {
  await sleep(ms);
  return ms * 2;
});

async function beatsDuring(heartbeatTimeoutMs: number | undefined): Promise<{ result: number; beats: number }> {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs });
  let beats = 0;
  env.on('heartbeat', () => beats++);
  const result = (await env.run(slow, 2_300)) as number;
  return { result, beats };
}

test('with a heartbeat timeout, the activity heartbeats every third of it while it runs, and stops after', async () => {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 3_000 });
  let beats = 0;
  env.on('heartbeat', () => beats++);
  expect(await env.run(slow, 2_300)).toBe(4_600);
  expect(beats).toBeGreaterThanOrEqual(1);
  const atEnd = beats;
  await sleep(1_200);
  expect(beats).toBe(atEnd);
});

test('without a heartbeat timeout no heartbeat is sent', async () => {
  expect(await beatsDuring(undefined)).toEqual({ result: 4_600, beats: 0 });
});

test('outside an activity the function runs as it is', async () => {
  await expect(slow(10)).resolves.toBe(20);
});

test('progress the activity reported is re-sent by the automatic heartbeats, not overwritten', async () => {
  const reporting = withAutoHeartbeat(async (_: number) => {
    heartbeatIfActivity({ phase: 'asking the proposer' });
    await sleep(2_300);
  });
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 3_000 });
  const details: unknown[] = [];
  env.on('heartbeat', (d: unknown) => details.push(d));
  await env.run(reporting, 0);
  expect(details.length).toBeGreaterThanOrEqual(2);
  expect(details.every((d) => JSON.stringify(d) === JSON.stringify({ phase: 'asking the proposer' }))).toBe(true);
});
