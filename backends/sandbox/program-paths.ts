// What a trainer's argv needs to see, read-only, inside the sandbox: the program resolved on the worker's PATH
// (a Python interpreter asked for its prefix and import path, since a pyenv shim or a venv points elsewhere), and
// the files and folders its arguments name, never the folder a named file happens to sit in (a suite file beside a
// trainer script stays out of reach): a trainer that imports its neighbours names their folder in readOnlyPaths.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath } from './find-on-path';
import { NonRetryableError } from '../../core/errors';

export interface ProgramPaths {
  /** The argv with its program made absolute (a Python shim replaced by the interpreter it runs). */
  argv: string[];
  /** Files and folders to bind read-only for the program to run. */
  code: string[];
  /** Folders to put first on the sandbox's PATH (the interpreter's own bin). */
  pathDirs: string[];
}

/** A program `name` that cannot be found on the worker's PATH. */
export class TrainerProgramNotFoundError extends NonRetryableError {}

interface PythonLayout {
  executable: string;
  prefixes: string[];
  importPath: string[];
}

const pythonLayouts = new Map<string, PythonLayout>();
const PYTHON = /^python(\d+(\.\d+)?)?$/;
const PROBE =
  'import json, sys; print(json.dumps({"executable": sys.executable, "prefixes": [sys.prefix, sys.base_prefix, sys.exec_prefix], "importPath": [p for p in sys.path if p]}))';

/** The program and the folders it needs; `pathVar` is the PATH it is looked up on. */
export function programPaths(argv: string[], pathVar = process.env.PATH ?? ''): ProgramPaths {
  const [program, ...args] = argv;
  const resolved = program.includes('/') ? path.resolve(program) : findOnPath(program, pathVar);
  if (!resolved || !fs.existsSync(resolved))
    throw new TrainerProgramNotFoundError(`trainer program "${program}" was not found${program.includes('/') ? '' : ' on PATH'}`);
  const code: string[] = [];
  const pathDirs: string[] = [];
  let exe = resolved;
  if (PYTHON.test(path.basename(resolved))) {
    const py = pythonLayout(resolved);
    exe = py.executable;
    code.push(...py.prefixes, ...py.importPath);
    pathDirs.push(path.dirname(py.executable));
  }
  const real = fs.realpathSync(exe);
  const dir = path.dirname(real);
  code.push(path.basename(dir) === 'bin' ? path.dirname(dir) : dir);
  pathDirs.push(path.dirname(exe));
  for (const a of args) {
    if (!path.isAbsolute(a)) continue;
    if (fs.existsSync(a)) code.push(a);
  }
  return { argv: [exe, ...args], code, pathDirs: [...new Set(pathDirs)] };
}

function pythonLayout(interpreter: string): PythonLayout {
  const known = pythonLayouts.get(interpreter);
  if (known) return known;
  const out = execFileSync(interpreter, ['-I', '-c', PROBE], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/' },
  });
  const layout = JSON.parse(out.trim().split('\n').pop()!) as PythonLayout;
  layout.importPath = layout.importPath.filter((p) => path.isAbsolute(p) && fs.existsSync(p));
  pythonLayouts.set(interpreter, layout);
  return layout;
}
