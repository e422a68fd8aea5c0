// The sandbox a user's trainer (and every program that runs model output) runs in, made with bubblewrap (Debian's
// `bubblewrap`): new mount, pid, ipc, uts and network namespaces, and a filesystem built from a list: the system's
// programs and libraries, the trainer's interpreter and code (read-only), its data (read-only) and its run directory
// (read-write). FLYWHEEL_HOME and the task's sources are hidden under empty tmpfs mounts wherever code covers them.
// The program runs as an unprivileged uid of its own with no capabilities (sandbox-identity.ts), under kernel limits
// (kernel-limits.ts), with no network or egress only (egress-network.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ResourceLimits } from '../../core/resource-limits';
import { egressArgv, egressBlackholes } from './egress-network';
import { findOnPath } from './find-on-path';
import { limitedArgv, PRLIMIT } from './kernel-limits';
import { dropPrivilegesArgv, sandboxIdentity, SETPRIV, type SandboxIdentity } from './sandbox-identity';

export interface SandboxPolicy {
  /** Read-only, bound first: the interpreter, its libraries, the trainer's code. Hidden paths are masked over them. */
  code: string[];
  /** Masked by empty tmpfs mounts after `code` (FLYWHEEL_HOME, the task's eval sources). */
  hide: string[];
  /** Read-only code bound after the masks, for what lives under a hidden path (the hf-venv under FLYWHEEL_HOME). @default [] */
  unmasked?: string[];
  /** Read-only, bound after the masks: the dataset version, the base checkpoint, predict's prompts. */
  data: string[];
  /** Read-write, bound last: the run directory, predict's scratch. */
  readWrite: string[];
  /** The program's whole environment (nothing else of the launcher's reaches it). */
  env: Record<string, string>;
  cwd: string;
  /**
   * `egress`: connections out to the internet through user-mode networking, never to this host or the stack's servers
   * (egress-network.ts). @default false: a network namespace with its own loopback only
   */
  network?: boolean;
  /** Who the program is on the host. @default `{kind: 'userns'}`: the worker's uid mapped to `nobody` */
  identity?: SandboxIdentity;
  /** The kernel's share of its limits (kernel-limits.ts); `diskMb` also caps the sandbox's /tmp. @default none */
  limits?: Partial<ResourceLimits>;
}

/** What the system offers every program, read-only (symlinks, as on merged-/usr systems, are recreated). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt/conda', '/sys'];
/** The few files of /etc that programs and their libraries read; never the whole folder. */
const ETC_FILES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/hosts',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/os-release',
  '/etc/mime.types',
];
/** Inside a networked sandbox, names resolve through slirp4netns's DNS forwarder (the host's may be on its loopback). */
const EGRESS_RESOLV_CONF = path.join(__dirname, 'egress-resolv.conf');
/** The sandbox's user in a user namespace: `nobody`, mapped to the worker's own uid outside. */
const SANDBOX_UID = '65534';
/** The sandbox's /tmp and /dev/shm (tmpfs, so memory): each at most this, or `diskMb` when smaller. */
const TMP_MAX_MB = 1024;

/** bubblewrap's argv that runs `argv` under the policy (wrapped in the egress namespace when it has a network). */
export function bubblewrapArgv(bwrap: string, policy: SandboxPolicy, argv: string[]): string[] {
  const identity = policy.identity ?? { kind: 'userns' };
  const args = [bwrap];
  if (identity.kind === 'uid') {
    // bubblewrap runs as root, so without a user namespace; the program is switched to its uid inside (setpriv).
    args.push('--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try');
    if (!policy.network) args.push('--unshare-net');
  } else {
    args.push('--unshare-all', '--unshare-user', '--uid', SANDBOX_UID, '--gid', SANDBOX_UID, '--cap-drop', 'ALL');
    if (policy.network) args.push('--share-net');
  }
  args.push('--die-with-parent', '--new-session');
  for (const p of SYSTEM_PATHS) args.push(...systemBind(p));
  // Made by bubblewrap as root it would be mode 0700, and the sandbox's own uid could not read a file of it.
  args.push('--perms', '0755', '--dir', '/etc');
  for (const f of ETC_FILES) args.push('--ro-bind-try', f, f);
  args.push('--ro-bind-try', policy.network ? EGRESS_RESOLV_CONF : '/etc/resolv.conf', '/etc/resolv.conf');
  const tmpMb = Math.min(TMP_MAX_MB, policy.limits?.diskMb ?? TMP_MAX_MB);
  const tmpBytes = String(tmpMb * 1024 * 1024);
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--size', tmpBytes, '--tmpfs', '/tmp');
  // Shared memory (PyTorch's DataLoader workers, NCCL) for the sandbox's own uid, capped as /tmp is: it is memory too.
  args.push('--perms', '1777', '--size', tmpBytes, '--tmpfs', '/dev/shm');
  args.push('--perms', '0777', '--dir', '/tmp/home');
  const gpus = gpuDevices();
  for (const dev of gpus) args.push('--dev-bind', dev, dev);
  // Real paths: a symlink on the way (a worktree's node_modules) would not resolve inside the sandbox.
  const hide = minimalCover(policy.hide.map(realPath));
  const system = SYSTEM_PATHS.filter((p) => fs.existsSync(p) && !fs.lstatSync(p).isSymbolicLink());
  const code = minimalCover(policy.code.map(realPath).filter((p) => !hide.some((h) => within(p, h)) && !system.some((s) => within(p, s))));
  // Bound back over a mask: a folder inside a hidden path, never one that holds a hidden path itself.
  const unmasked = minimalCover((policy.unmasked ?? []).map(realPath)).filter((p) => !hide.some((h) => within(h, p)));
  // Folders bubblewrap makes on the way to a mount are root's, mode 0700, when it runs as root: each is made 0755 first
  // (a folder that already exists, in a bind or an earlier mount, is left as it is).
  const mount = (flag: string, p: string) => {
    if (identity.kind === 'uid') for (const d of parentsOf(p)) args.push('--perms', '0755', '--dir', d);
    args.push(flag, ...(flag === '--tmpfs' ? [p] : [p, p]));
  };
  for (const p of code) mount('--ro-bind', p);
  // A hidden path is masked where bound code covers it; elsewhere the sandbox never had it.
  for (const h of hide) if (code.some((c) => within(h, c))) mount('--tmpfs', h);
  for (const p of unmasked) mount('--ro-bind', p);
  for (const p of policy.data) mount('--ro-bind', p);
  for (const p of policy.readWrite) mount('--bind', p);
  args.push('--clearenv');
  // HOME and TMPDIR are the sandbox's own, writable, private folders: the worker's HOME is not in the sandbox.
  for (const [k, v] of Object.entries({ ...policy.env, HOME: '/tmp/home', TMPDIR: '/tmp' })) args.push('--setenv', k, v);
  args.push('--chdir', policy.cwd, '--', ...dropPrivilegesArgv(identity, limitedArgv(policy.limits, identity, gpus.length > 0, argv)));
  return policy.network ? egressArgv(identity, egressBlackholes(), args) : args;
}

/** The folders above a mount point that no system bind provides, outermost first. */
function parentsOf(p: string): string[] {
  const out: string[] = [];
  for (let d = path.dirname(p); d !== path.dirname(d); d = path.dirname(d)) {
    if (d === '/tmp' || SYSTEM_PATHS.some((s) => within(d, s))) break;
    out.unshift(d);
  }
  return out;
}

/** A merged-/usr symlink (`/bin -> usr/bin`) is recreated as a symlink; a real folder is bound read-only. */
function systemBind(p: string): string[] {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return [];
  }
  return st.isSymbolicLink() ? ['--symlink', fs.readlinkSync(p), p] : ['--ro-bind', p, p];
}

/** NVIDIA and DRI device nodes, when the host has them, so a GPU trainer sees its GPUs. */
function gpuDevices(): string[] {
  try {
    return fs
      .readdirSync('/dev')
      .filter((n) => /^nvidia/.test(n))
      .map((n) => `/dev/${n}`)
      .concat(fs.existsSync('/dev/dri') ? ['/dev/dri'] : []);
  } catch {
    return [];
  }
}

function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Whether `p` is `dir` or inside it. */
export function within(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Existing paths, without those inside another of the list (one bind covers them), in a stable order. */
export function minimalCover(paths: string[]): string[] {
  const existing = [...new Set(paths.map((p) => path.resolve(p)))].filter((p) => fs.existsSync(p)).sort();
  return existing.filter((p) => !existing.some((q) => q !== p && within(p, q)));
}

export type SandboxProbe = { ok: true; bwrap: string } | { ok: false; reason: string };

const probes = new Map<string, SandboxProbe>();

/**
 * Whether this host can make the sandbox: bubblewrap on PATH (or `FLYWHEEL_BWRAP`) and namespaces it may use.
 * Asked once per process and bubblewrap path, by running `true` inside a sandbox like a trainer's.
 */
export function probeSandbox(): SandboxProbe {
  const bwrap = process.env.FLYWHEEL_BWRAP ?? findOnPath('bwrap');
  const key = bwrap ?? '';
  const known = probes.get(key);
  if (known) return known;
  const probe = probeWith(bwrap);
  probes.set(key, probe);
  return probe;
}

function probeWith(bwrap: string | undefined): SandboxProbe {
  if (!bwrap) return { ok: false, reason: 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)' };
  const identity = sandboxIdentity('flywheel-sandbox-probe');
  if (identity.kind === 'uid' && !fs.existsSync(SETPRIV))
    return { ok: false, reason: `${SETPRIV} (util-linux) is missing: the sandbox could not drop root` };
  if (!fs.existsSync(PRLIMIT)) return { ok: false, reason: `${PRLIMIT} (util-linux) is missing: the sandbox could not set its limits` };
  // The probe runs as a trainer would: its own uid, under limits, so a host where that fails says so here.
  const policy: SandboxPolicy = { code: [], hide: [], data: [], readWrite: [], env: {}, cwd: '/', identity, limits: { openFiles: 64 } };
  const r = spawnSync(bwrap, bubblewrapArgv(bwrap, policy, ['/bin/true']).slice(1), { encoding: 'utf8', timeout: 10_000 });
  if (r.status === 0) return { ok: true, bwrap };
  const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0];
  return { ok: false, reason: `bubblewrap cannot make namespaces here: ${why}` };
}

/** One line for `flywheel up` and the workers that run trainer code: the sandbox they will use, or why none. */
export function sandboxStatusLine(): string {
  const probe = probeSandbox();
  if (probe.ok) return `trainer sandbox: bubblewrap (${probe.bwrap})`;
  return `trainer sandbox: none: ${probe.reason}; user-supplied trainers are refused unless their spec sets trainer.unsandboxed: true`;
}
