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
  /** Folders whose files make up the cache key; workflows may import pure code from core/. @default [workflows, core] */
  sourceDirs?: string[];
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
  const key = sourceHash(opts.sourceDirs ?? [path.join(ROOT, 'workflows'), path.join(ROOT, 'core')]);
  const codePath = path.join(opts.cacheDir, `workflow-bundle-${key}.js`);
  if (fs.existsSync(codePath)) return { codePath, cached: true, ms: Date.now() - t0 };
  const { code } = await bundleWorkflowCode({ workflowsPath: opts.workflowsPath ?? require.resolve('../workflows'), logger: quietLogger });
  fs.mkdirSync(opts.cacheDir, { recursive: true });
  for (const old of fs.readdirSync(opts.cacheDir).filter((f) => /^workflow-bundle-.*\.js$/.test(f))) fs.rmSync(path.join(opts.cacheDir, old), { force: true });
  // Written under a temporary name, then renamed: a concurrent worker never loads half a bundle.
  const tmp = `${codePath}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, codePath);
  return { codePath, cached: false, ms: Date.now() - t0 };
}

/** sha256 over every source file's relative path and content, plus the SDK versions that shape the bundle. */
export function sourceHash(dirs: string[]): string {
  const h = crypto.createHash('sha256');
  for (const pkg of ['@temporalio/workflow', '@temporalio/worker']) h.update(`${pkg}@${(require(`${pkg}/package.json`) as { version: string }).version}\n`);
  for (const file of dirs.flatMap((d) => listFiles(d)).sort()) {
    h.update(path.relative(ROOT, file) + '\0');
    h.update(fs.readFileSync(file));
  }
  return h.digest('hex').slice(0, 16);
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : listFiles(p);
    return /\.(ts|js|cjs|mjs|json)$/.test(e.name) ? [p] : [];
  });
}

const quiet = (): void => undefined;
const quietLogger = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m: string) => console.error(m) };
