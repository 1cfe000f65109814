// Launches Debian's headless Chromium through playwright-core (no browser download), with a fresh profile.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** @returns {Promise<{context: import("playwright-core").BrowserContext, close: () => Promise<void>}>} */
export async function launchChromium() {
  const profile = mkdtempSync(path.join(tmpdir(), "iqstream-e2e-chromium-"));
  // A persistent context is the way to give Chromium its own --user-data-dir through Playwright.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
