// Two test files run at a time (jest.config.js maxWorkers 2), and a few must run with no other file beside them: the
// fault suite's, whose faults land at moments timed on its own fault-free run. A readers-writer lock across jest's
// workers, in the run's scratch folder: every file holds a shared slot (test/setup/shared-slot.ts, jest's
// setupFilesAfterEnv) and a file that calls runAlone() trades it for the exclusive one, waiting for the file beside
// it to end while no new file starts. A slot is a file named for its worker's pid, so a worker that died leaves none.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Long enough to wait for the longest file beside this one (jest's default hook timeout is the test timeout). */
export const SLOT_WAIT_MS = 3_600_000;
const POLL_MS = 250;

interface Slots {
  alone: string;
  shared: string;
}

function slotsDir(): Slots | undefined {
  const scratch = process.env.FLYWHEEL_TEST_SCRATCH;
  if (!scratch) return undefined;
  const shared = path.join(scratch, 'file-slots', 'shared');
  fs.mkdirSync(shared, { recursive: true });
  return { alone: path.join(scratch, 'file-slots', 'alone'), shared };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid that holds a slot file `<pid>-<hex>`, or the alone folder's `pid` file. */
const holderOf = (name: string): number => Number(name.split('-')[0]);

function aloneHeld(s: Slots): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(s.alone, 'pid'), 'utf8'));
  } catch {
    return fs.existsSync(s.alone); // being made: its pid file comes next
  }
  if (alive(pid)) return true;
  fs.rmSync(s.alone, { recursive: true, force: true });
  return false;
}

let mine: string | undefined;

/** Takes a shared slot: waits while a file runs alone. */
export async function takeSharedSlot(): Promise<void> {
  const s = slotsDir();
  if (!s) return;
  for (;;) {
    while (aloneHeld(s)) await sleep(POLL_MS);
    const file = path.join(s.shared, `${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    fs.writeFileSync(file, '');
    if (!aloneHeld(s)) {
      mine = file;
      return;
    }
    fs.rmSync(file, { force: true }); // a file asked to run alone meanwhile: it goes first
  }
}

export function releaseSharedSlot(): void {
  if (mine) fs.rmSync(mine, { force: true });
  mine = undefined;
}

/** For a file that must run with no other beside it: call at its top level. */
export function runAlone(): void {
  let held: Slots | undefined;
  beforeAll(async () => {
    releaseSharedSlot();
    const s = slotsDir();
    if (!s) return;
    for (;;) {
      try {
        fs.mkdirSync(s.alone);
        fs.writeFileSync(path.join(s.alone, 'pid'), String(process.pid));
        break;
      } catch {
        await sleep(POLL_MS); // another file runs alone
        aloneHeld(s); // clears a dead holder's
      }
    }
    held = s;
    const others = (): string[] => fs.readdirSync(s.shared).filter((n) => holderOf(n) !== process.pid && alive(holderOf(n)));
    while (others().length > 0) await sleep(POLL_MS);
  }, SLOT_WAIT_MS);
  afterAll(() => {
    if (held) fs.rmSync(held.alone, { recursive: true, force: true });
  });
}
