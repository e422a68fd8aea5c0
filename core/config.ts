// Runtime configuration from environment variables, resolved once by each entry point (pure: env is passed in).
import path from 'node:path';

export interface FlywheelConfig {
  /** Folder for local state: SQLite file, embedded PostgreSQL data, runs, datasets. `FLYWHEEL_HOME` @default "./.flywheel" */
  home: string;
  /** `TEMPORAL_ADDRESS`; unset means `flywheel up` starts a dev server. */
  temporalAddress: string | undefined;
  /** `TEMPORAL_NAMESPACE` @default "default" */
  namespace: string;
  /** TLS to the Temporal frontend: `TEMPORAL_TLS_CERT` / `TEMPORAL_TLS_KEY` (mTLS) or `TEMPORAL_TLS=1`. */
  tls: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string } | undefined;
  /** `TEMPORAL_API_KEY` for Temporal Cloud; never logged. */
  temporalApiKey: string | undefined;
  /** `DATABASE_URL`; unset means the embedded PostgreSQL under `home`. */
  databaseUrl: string | undefined;
  /** `FLYWHEEL_TASK_QUEUE_PREFIX` @default "flywheel" */
  taskQueuePrefix: string;
  /** Dev-server frontend port, `FLYWHEEL_TEMPORAL_PORT` @default 7233; the UI is on `FLYWHEEL_TEMPORAL_UI_PORT` @default 8233. */
  temporalPort: number;
  temporalUiPort: number;
  /** Embedded PostgreSQL port, `FLYWHEEL_PG_PORT` @default 54329 */
  pgPort: number;
  /** `FLYWHEEL_PAYLOAD_KEY`: `id:base64key[,id:base64key…]` encrypts workflow payloads (temporal/payload-codec.ts); never logged. @default unset: plaintext */
  payloadKeys: string | undefined;
  /**
   * Warm predict servers (`predict --serve`) an eval worker keeps per campaign, each answering one public split at a
   * time (activities/eval/predict-servers.ts). `FLYWHEEL_WARM_PREDICT_SERVERS` @default 2
   */
  warmPredictServers: number;
}

export function resolveConfig(env: Record<string, string | undefined>, cwd: string): FlywheelConfig {
  const tlsWanted = env.TEMPORAL_TLS === '1' || env.TEMPORAL_TLS === 'true' || !!env.TEMPORAL_TLS_CERT || !!env.TEMPORAL_API_KEY;
  return {
    home: path.resolve(cwd, env.FLYWHEEL_HOME ?? '.flywheel'),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    tls: tlsWanted
      ? {
          certPath: env.TEMPORAL_TLS_CERT,
          keyPath: env.TEMPORAL_TLS_KEY,
          caPath: env.TEMPORAL_TLS_CA,
          serverName: env.TEMPORAL_TLS_SERVER_NAME,
        }
      : undefined,
    temporalApiKey: env.TEMPORAL_API_KEY || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    taskQueuePrefix: env.FLYWHEEL_TASK_QUEUE_PREFIX || 'flywheel',
    temporalPort: intEnv(env.FLYWHEEL_TEMPORAL_PORT, 7233),
    temporalUiPort: intEnv(env.FLYWHEEL_TEMPORAL_UI_PORT, 8233),
    pgPort: intEnv(env.FLYWHEEL_PG_PORT, 54329),
    payloadKeys: env.FLYWHEEL_PAYLOAD_KEY || undefined,
    warmPredictServers: intEnv(env.FLYWHEEL_WARM_PREDICT_SERVERS, 2),
  };
}

function intEnv(v: string | undefined, dflt: number): number {
  const n = v ? Number(v) : NaN;
  return Number.isInteger(n) && n > 0 ? n : dflt;
}
