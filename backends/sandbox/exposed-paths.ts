// What a spec may show its trainer: `trainer.readOnlyPaths` and the paths its command names are bound into the sandbox
// as they are, so none may hold what the sandbox exists to hide. Refused, one line each: the filesystem's root, /tmp
// (every run's scratch, PostgreSQL's default socket), a folder that holds or sits inside FLYWHEEL_HOME, Flywheel's
// own scratch (predict's prompts, held-out included), a PostgreSQL socket folder, or a registered suite's file.
// `flywheel validate` and the training worker (checkTrainer) both ask, before a loop writes anything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { within } from './bubblewrap';

export interface ExposureContext {
  /** FLYWHEEL_HOME. */
  home: string;
  /** Flywheel's scratch roots outside FLYWHEEL_HOME (predict's, the graders'). @default [] */
  scratch?: string[];
  /** Every registered suite's source file (services/suites `registeredSuiteSources`). @default [] */
  suiteSources?: string[];
  /**
   * Whether the trainer runs as a uid of its own (the worker is root: sandbox-identity.ts), which reads a path only
   * where others may: then a file or folder it could not read is a problem too. @default false
   */
  ownUid?: boolean;
}

/** The paths a spec's trainer block shows the trainer, with the field that names each. */
export function exposedPaths(trainer: {
  command: 'builtin' | 'hf' | string[];
  readOnlyPaths: string[];
}): { field: string; path: string }[] {
  const named = Array.isArray(trainer.command)
    ? trainer.command.slice(1).flatMap((a, i) => (path.isAbsolute(a) ? [{ field: `trainer.command.${i + 1}`, path: a }] : []))
    : [];
  return [...named, ...trainer.readOnlyPaths.map((p, i) => ({ field: `trainer.readOnlyPaths.${i}`, path: p }))];
}

/** Folders where PostgreSQL puts its sockets on common installs. */
const SOCKET_DIRS = ['/run/postgresql', '/var/run/postgresql'];

/** One `field: path: problem` line per path the sandbox must not show. */
export function exposedPathProblems(paths: { field: string; path: string }[], ctx: ExposureContext): string[] {
  const problems: string[] = [];
  const home = real(ctx.home);
  const tmp = real(os.tmpdir());
  const scratch = (ctx.scratch ?? []).map(real);
  const suites = (ctx.suiteSources ?? []).map(real);
  for (const { field, path: given } of paths) {
    const p = real(given);
    const problem =
      p === '/'
        ? 'is the whole filesystem'
        : within(home, p)
          ? `holds FLYWHEEL_HOME (${home})`
          : within(p, home)
            ? `is inside FLYWHEEL_HOME (${home}): runs, datasets and the database live there`
            : within(tmp, p) || within('/tmp', p)
              ? 'holds /tmp: every run’s scratch and PostgreSQL’s default socket'
              : scratch.find((s) => within(s, p) || within(p, s))
                ? `holds or sits in Flywheel’s eval scratch (${scratch.find((s) => within(s, p) || within(p, s))})`
                : (socketProblem(p) ?? suiteProblem(p, suites));
    if (problem) problems.push(`${field}: ${given}: ${problem}; name a folder that holds only what the trainer needs`);
    else {
      const closed = ctx.ownUid ? unreadable(p) : undefined;
      if (closed)
        problems.push(
          `${field}: ${given}: ${closed.path} is not readable by the sandbox's own uid (mode ${closed.mode}): make it readable by others (chmod -R o+rX ${given})`,
        );
    }
  }
  return problems;
}

/** Entries a walk of `p` looks at, at most: a model cache can hold many files, and a refusal needs one. */
const READABLE_WALK = 5000;

/** The first file (o+r) or folder (o+rx) under `p` that others may not read, links not followed. */
function unreadable(p: string): { path: string; mode: string } | undefined {
  let seen = 0;
  const walk = (at: string): { path: string; mode: string } | undefined => {
    if (++seen > READABLE_WALK) return undefined;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      return undefined;
    }
    const want = st.isDirectory() ? 0o005 : st.isFile() ? 0o004 : 0;
    if ((st.mode & want) !== want) return { path: at, mode: (st.mode & 0o777).toString(8).padStart(4, '0') };
    if (!st.isDirectory()) return undefined;
    for (const name of fs.readdirSync(at)) {
      const found = walk(path.join(at, name));
      if (found) return found;
    }
    return undefined;
  };
  return walk(p);
}

function socketProblem(p: string): string | undefined {
  const dir = SOCKET_DIRS.find((s) => within(s, p) || within(p, s));
  if (dir) return `holds or sits in PostgreSQL’s socket folder ${dir}`;
  try {
    if (fs.statSync(p).isDirectory() && fs.readdirSync(p).some((n) => /^\.s\.PGSQL\.\d+$/.test(n))) return 'holds a PostgreSQL socket';
  } catch {
    /* missing: the trainer check says so */
  }
  return undefined;
}

function suiteProblem(p: string, suites: string[]): string | undefined {
  const suite = suites.find((s) => within(s, p));
  return suite ? `holds the registered eval suite ${suite} (held-out items and their tests)` : undefined;
}

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
