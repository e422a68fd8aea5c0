// The orchestration worker's workflow bundle, cached under FLYWHEEL_HOME: webpack takes seconds on every
// worker start, so the bundle is rebuilt only when the workflow sources (or the SDK) change.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const ROOT = path.resolve(__dirname, '..');

export interface WorkflowBundleOptions {
  /** Where bundles are kept, one file per source hash. */
  cacheDir: string;
  /** @default require.resolve('../workflows') */
  workflowsPath?: string;
  /**
   * A module exporting the `failureConverter` workflow code uses (data-converter.ts sets one when payloads are
   * encrypted); bundles with and without one are kept apart. @default the SDK's
   */
  failureConverterPath?: string;
}

export interface WorkflowBundleFile {
  codePath: string;
  /** Whether an existing bundle was reused. */
  cached: boolean;
  ms: number;
}

/** Returns the path of a bundle for the current sources, building it only when none matches. */
export async function cachedWorkflowBundle(opts: WorkflowBundleOptions): Promise<WorkflowBundleFile> {
  const t0 = Date.now();
  const workflowsPath = opts.workflowsPath ?? require.resolve('../workflows');
  const { failureConverterPath } = opts;
  const codePath = path.join(opts.cacheDir, `workflow-bundle-${bundleKey(workflowsPath, failureConverterPath)}.js`);
  if (fs.existsSync(codePath)) return { codePath, cached: true, ms: Date.now() - t0 };
  const { code } = await bundleWorkflowCode({ workflowsPath, failureConverterPath, logger: quietLogger });
  fs.mkdirSync(opts.cacheDir, { recursive: true });
  for (const old of fs.readdirSync(opts.cacheDir).filter((f) => /^workflow-bundle-.*\.js$/.test(f)))
    fs.rmSync(path.join(opts.cacheDir, old), { force: true });
  // Written under a temporary name, then renamed: a concurrent worker never loads half a bundle.
  const tmp = `${codePath}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, codePath);
  return { codePath, cached: false, ms: Date.now() - t0 };
}

/**
 * sha256 over every local file the workflows (and the failure converter, if any) reach by value imports (`import
 * type` is erased, so not followed), and over package-lock.json for the packages they bundle. Editing an unrelated
 * module does not force a rebuild; editing anything the bundle contains does.
 */
export function bundleKey(entry: string, failureConverterPath?: string): string {
  const h = crypto.createHash('sha256');
  const lock = path.join(ROOT, 'package-lock.json');
  if (fs.existsSync(lock)) h.update(fs.readFileSync(lock));
  const files = importClosure(entry);
  if (failureConverterPath) {
    h.update('failure converter\0');
    importClosure(failureConverterPath, files);
  }
  for (const file of [...files].sort()) {
    h.update(path.relative(ROOT, file) + '\0');
    h.update(fs.readFileSync(file));
  }
  return h.digest('hex').slice(0, 16);
}

const IMPORT =
  /\b(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]*)['"]|\b(?:import|require)\(\s*['"](\.{1,2}\/[^'"]*)['"]/g;

/** The local source files reachable from `entry` through relative imports. */
export function importClosure(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const text = fs.readFileSync(entry, 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    if (m[1]) continue; // type-only
    const target = resolveLocal(path.resolve(path.dirname(entry), m[2] ?? m[3]));
    if (target) importClosure(target, seen);
  }
  return seen;
}

function resolveLocal(p: string): string | undefined {
  const candidates = [p, `${p}.ts`, `${p}.tsx`, `${p}.js`, `${p}.json`, path.join(p, 'index.ts'), path.join(p, 'index.js')];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

const quiet = (): void => undefined;
const quietLogger = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m: string) => console.error(m) };
