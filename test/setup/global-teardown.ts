import fs from 'node:fs';
import type { TemporalDevServer } from '../../stack/temporal-dev-server';
import type { EmbeddedPg } from '../../db/embedded-server';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  await (g.__flywheelTemporal as TemporalDevServer | undefined)?.stop();
  await (g.__flywheelPg as EmbeddedPg | undefined)?.stop();
  const scratch = g.__flywheelScratch as string | undefined;
  if (scratch && !process.env.FLYWHEEL_KEEP_SCRATCH) fs.rmSync(scratch, { recursive: true, force: true });
}
