// The sandbox a user's trainer runs in, made with bubblewrap (Debian's `bubblewrap`): new user, mount, pid, ipc,
// uts and network namespaces, no capabilities, and a filesystem built from a list: the system's programs and
// libraries, the trainer's interpreter and code (read-only), its data (read-only) and its run directory
// (read-write). FLYWHEEL_HOME and the task's sources are hidden under empty tmpfs mounts wherever code covers them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath } from './find-on-path';

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
  /** Keep the host's network. @default false: a network namespace with loopback only */
  network?: boolean;
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
  '/etc/resolv.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/os-release',
  '/etc/mime.types',
];
/** The sandbox's user: `nobody`, mapped to the worker's own uid outside, so the run directory stays writable. */
const SANDBOX_UID = '65534';

/** bubblewrap's argv that runs `argv` under the policy. */
export function bubblewrapArgv(bwrap: string, policy: SandboxPolicy, argv: string[]): string[] {
  const args = [
    bwrap,
    '--unshare-all',
    '--unshare-user',
    '--uid',
    SANDBOX_UID,
    '--gid',
    SANDBOX_UID,
    '--cap-drop',
    'ALL',
    '--die-with-parent',
  ];
  if (policy.network) args.push('--share-net');
  for (const p of SYSTEM_PATHS) args.push(...systemBind(p));
  for (const f of ETC_FILES) args.push('--ro-bind-try', f, f);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/tmp/home');
  for (const dev of gpuDevices()) args.push('--dev-bind', dev, dev);
  // Real paths: a symlink on the way (a worktree's node_modules) would not resolve inside the sandbox.
  const hide = minimalCover(policy.hide.map(realPath));
  const code = minimalCover(policy.code.map(realPath).filter((p) => !hide.some((h) => within(p, h))));
  for (const p of code) args.push('--ro-bind', p, p);
  // A hidden path is masked where bound code covers it; elsewhere the sandbox never had it.
  for (const h of hide) if (code.some((c) => within(h, c))) args.push('--tmpfs', h);
  // Bound back over a mask: a folder inside a hidden path, never one that holds a hidden path itself.
  const unmasked = minimalCover((policy.unmasked ?? []).map(realPath)).filter((p) => !hide.some((h) => within(h, p)));
  for (const p of unmasked) args.push('--ro-bind', p, p);
  for (const p of policy.data) args.push('--ro-bind', p, p);
  for (const p of policy.readWrite) args.push('--bind', p, p);
  args.push('--clearenv');
  // HOME and TMPDIR are the sandbox's own, writable, private folders: the worker's HOME is not in the sandbox.
  for (const [k, v] of Object.entries({ ...policy.env, HOME: '/tmp/home', TMPDIR: '/tmp' })) args.push('--setenv', k, v);
  args.push('--chdir', policy.cwd, '--', ...argv);
  return args;
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
  const r = spawnSync(
    bwrap,
    bubblewrapArgv(bwrap, { code: [], hide: [], data: [], readWrite: [], env: {}, cwd: '/' }, ['/bin/true']).slice(1),
    { encoding: 'utf8', timeout: 10_000 },
  );
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
