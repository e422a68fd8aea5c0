// A real headless Chromium for the dashboard tests: Debian's `chromium` (.ci/install-chromium.sh) driven by
// playwright-core. FLYWHEEL_CHROMIUM overrides the binary.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.FLYWHEEL_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run .ci/install-chromium.sh (or set FLYWHEEL_CHROMIUM)`);
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Saves a full-page screenshot under test-artifacts/dashboard/NAME.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
