// A bench's SETTINGS argument, for an A/B of Temporal's settings in the same run: a JSON object with `server` (dynamic
// config over DEFAULT_DYNAMIC_CONFIG), `serverEnv` (the dev server process's environment, e.g. GOGC) and
// `orchestrationWorker` (WorkerOptions for the workflows' worker), turned into the bench stack's options.
import type { WorkerOptions } from '@temporalio/worker';
import { DEFAULT_DYNAMIC_CONFIG } from '../../stack/temporal-dev-server';
import type { BenchStackOptions } from './bench-stack';

export interface TemporalSettings {
  server?: Record<string, string | number>;
  serverEnv?: Record<string, string>;
  orchestrationWorker?: Partial<WorkerOptions>;
}

export const SETTINGS_USAGE = 'SETTINGS: a JSON object of server, serverEnv and orchestrationWorker';

/** The settings in `text` ({} when absent); undefined when it is not such an object. */
export function parseTemporalSettings(text: string | undefined): TemporalSettings | undefined {
  if (text === undefined) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    if (Object.values(v).some((x) => typeof x !== 'object' || x === null || Array.isArray(x))) return undefined;
    if (Object.keys(v).some((k) => !['server', 'serverEnv', 'orchestrationWorker'].includes(k))) return undefined;
    return v as TemporalSettings;
  } catch {
    return undefined;
  }
}

export function stackOptionsOf(
  settings: TemporalSettings,
): Pick<BenchStackOptions, 'dynamicConfig' | 'temporalEnv' | 'orchestrationWorker'> {
  return {
    dynamicConfig: settings.server && { ...DEFAULT_DYNAMIC_CONFIG, ...settings.server },
    temporalEnv: settings.serverEnv,
    orchestrationWorker: settings.orchestrationWorker,
  };
}
