// Real headless Chromium for the tests that drive sign-in pages: Debian's package, installed by
// scripts/ensure-chromium.sh when missing (quietly, one line when it installs), launched through
// playwright-core as the real binary — /usr/bin/chromium is a wrapper script with a bashism —
// with a fresh profile folder that close() removes. Guarantees: the browser resolves no name but
// 127.0.0.1 and opens no background connection (this machine's network is closed, and tests talk
// to loopback only); every launched browser is closed by close().

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { ROOT } from './cli.js';

const CHROMIUM = '/usr/lib/chromium/chromium';

/** Installs Debian's chromium if it is missing (call from a before hook: it may take a while the first time). */
export function ensureChromium(): void {
  execFileSync('sh', ['scripts/ensure-chromium.sh'], { cwd: ROOT, stdio: 'inherit' });
}

export async function launchChromium(): Promise<{ ctx: BrowserContext; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 720, height: 900 },
  });
  return {
    ctx,
    close: async () => {
      await ctx.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
