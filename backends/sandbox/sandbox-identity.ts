// Who a sandboxed program is on the host. A worker running as root starts bubblewrap as root (it makes the mounts),
// and the program itself runs as an unprivileged uid of its own, switched to by `setpriv` inside the sandbox with no
// capabilities and no_new_privs: never root, so the kernel's per-user limits (RLIMIT_NPROC) bind, and one uid per key
// (a run, a predict, a graded item), so one run's processes never count against another's. A worker that is not root
// cannot switch uids: the program runs as the worker's own (unprivileged) uid in a user namespace, as before.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** `BASE:COUNT`: the host uids sandboxes take when the worker is root. @default 900000000:1000000 */
export const SANDBOX_UIDS_ENV = 'FLYWHEEL_SANDBOX_UIDS';
const DEFAULT_UIDS = { base: 900_000_000, count: 1_000_000 };

export type SandboxIdentity =
  /** bubblewrap runs as root; the program as `uid`:`uid` (setpriv), a host uid nothing else uses. */
  | { kind: 'uid'; uid: number }
  /** bubblewrap runs as the (unprivileged) worker and maps it to `nobody` in a user namespace. */
  | { kind: 'userns' };

/** The identity for a program keyed by `key`: its own uid when the worker is root. */
export function sandboxIdentity(key: string, env: Record<string, string | undefined> = process.env): SandboxIdentity {
  if (process.getuid?.() !== 0) return { kind: 'userns' };
  const { base, count } = uidRange(env[SANDBOX_UIDS_ENV]);
  const h = crypto.createHash('sha256').update(key).digest().readUInt32BE(0);
  return { kind: 'uid', uid: base + (h % count) };
}

function uidRange(spec: string | undefined): { base: number; count: number } {
  const m = spec?.match(/^(\d+):(\d+)$/);
  if (!m) return DEFAULT_UIDS;
  const base = Number(m[1]);
  const count = Number(m[2]);
  // uid 0 and uids above 2^32 - 2 are never a sandbox's.
  if (base < 1000 || count < 1 || base + count > 4_294_967_294) return DEFAULT_UIDS;
  return { base, count };
}

/**
 * Makes the sandbox's mounts usable by its uid: the folders it writes (a run directory, a predict's scratch) become
 * its own, and the top of each read-only input gets o+rx (an inbox made 0700 for the worker). Nothing outside these
 * paths changes; the sandbox sees only what is bound, so o+rx shows them to no other sandbox.
 */
export function prepareMounts(identity: SandboxIdentity, readWrite: string[], data: string[]): void {
  if (identity.kind !== 'uid') return;
  for (const p of readWrite) {
    try {
      fs.chownSync(p, identity.uid, identity.uid);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  for (const p of data) {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      continue;
    }
    const want = st.isDirectory() ? 0o005 : 0o004;
    if ((st.mode & want) !== want) fs.chmodSync(p, (st.mode & 0o7777) | want);
  }
}

/** The argv that turns the sandbox's root (bubblewrap's first process) into `identity`'s uid before `argv` runs. */
export function dropPrivilegesArgv(identity: SandboxIdentity, argv: string[]): string[] {
  if (identity.kind !== 'uid') return argv;
  const id = String(identity.uid);
  return [
    SETPRIV,
    `--reuid=${id}`,
    `--regid=${id}`,
    '--clear-groups',
    '--no-new-privs',
    '--bounding-set=-all',
    '--inh-caps=-all',
    '--',
    ...argv,
  ];
}

/** util-linux's setpriv, bound into every sandbox with /usr. */
export const SETPRIV = fs.existsSync('/usr/bin/setpriv') ? '/usr/bin/setpriv' : path.join('/bin', 'setpriv');
