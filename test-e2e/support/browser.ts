// Chromium for the UI tests and the UI bench: Debian's package driven by playwright-core
// (browsers cannot be downloaded here), headless, one context per test file.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ARTIFACTS } from './artifacts.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const CHROMIUM = process.env.TRELLIS_CHROMIUM ?? '/usr/bin/chromium';
/** The README's screenshots, rewritten when UPDATE_SCREENSHOTS=1. */
export const README_SHOTS = join(ROOT, 'docs', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
}

/** Runs `body`; when it fails, saves what the page showed under test-e2e/.artifacts and rethrows. */
export async function withScreenshotOnFailure(page: Page, name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, `${name.replace(/[^A-Za-z0-9_-]+/g, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    console.error(`screenshot of the failure: ${file}`);
    throw error;
  }
}

/** A screenshot for the README, taken only when asked for (UPDATE_SCREENSHOTS=1). */
export async function readmeScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(README_SHOTS, { recursive: true });
  await page.screenshot({ path: join(README_SHOTS, `${name}.png`) });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's serious and critical findings on the page as it is now. */
async function seriousAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document)).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Fails when axe-core finds a serious or critical violation on the page, each named with where it is. */
export async function assertAccessible(page: Page, where: string): Promise<void> {
  const violations = await seriousAccessibilityViolations(page);
  assert.deepEqual(
    violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${where}`,
  );
}
