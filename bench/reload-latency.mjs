#!/usr/bin/env node
// Reload latency: from the write of svc.yaml to the first request decided by the new policy.
// Starts `node dist/cli.js serve <tmp manifest> --port 0` (watching on, loopback only), then
// flips one tool's required scope N times (in-place writes); after each write it polls the
// tool back-to-back with a token that only the new policy allows or refuses, and records
// the time until the first answer that obeys the new policy. Edits are paced (SETTLE_MS of
// quiet after each one is in force) so each is measured from a settled watcher, as a real
// edit is, not picked up early by the re-check that follows the previous reload. Every
// wait is bounded (5 s per edit); the child is killed and the temp folder removed however
// the run ends.
//
//   node bench/reload-latency.mjs [--edits N] [--smoke] [--json]
//   import { measureReloadLatency } from './reload-latency.mjs';  → { p50, p99, samples }

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
const EDIT_TIMEOUT_MS = 5000;
const SETTLE_MS = 250;

/** The manifest: probe.version needs p.read (policy A) or p.write (policy B); the token holds p.read only. */
function manifest(policy, token) {
  const scope = policy === 'A' ? 'p.read' : 'p.write';
  return `version: 1
name: reload-bench
description: Reload latency probe.
server: { host: 127.0.0.1, port: 0 }
profile: { scopes: [p.read, p.write] }
auth:
  tokens:
    - { name: prober, token: "${token}", scopes: [p.read] }
tools:
  - name: probe.version
    description: Allowed to the prober under policy A only.
    required_scopes: [${scope}]
    template: "${policy}"
`;
}

function startServer(file) {
  const env = { ...process.env, LOG_LEVEL: 'warn' };
  delete env.PORT;
  delete env.HOST;
  const child = spawn(process.execPath, [CLI, 'serve', file, '--port', '0'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the server printed no listening line within 15 s'));
    }, 15_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening: ${err.trim().split('\n').at(-1) ?? ''}`));
    });
  });
}

async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(t);
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted, p) {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Measure reload latency over `edits` policy flips. Returns p50/p99 and every sample, in ms.
 * Requires a build (dist/cli.js).
 */
export async function measureReloadLatency({ edits = 50 } = {}) {
  if (!existsSync(CLI)) throw new Error('dist/cli.js not found: run `npm run build` first');
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-reload-bench-'));
  const file = join(dir, 'svc.yaml');
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, manifest('A', token));
  let server;
  try {
    server = await startServer(file);
    const probe = async () => {
      const res = await fetch(`${server.url}/svc/tools/probe.version`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
      await res.arrayBuffer();
      return res.status;
    };
    if ((await probe()) !== 200) throw new Error('the probe is not allowed under the initial policy');
    const samples = [];
    for (let i = 1; i <= edits; i++) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const policy = i % 2 ? 'B' : 'A';
      const want = policy === 'A' ? 200 : 403;
      const text = manifest(policy, token);
      const t0 = performance.now();
      writeFileSync(file, text);
      for (;;) {
        const status = await probe();
        const elapsed = performance.now() - t0;
        if (status === want) {
          samples.push(Math.round(elapsed * 10) / 10);
          break;
        }
        if (status >= 500) throw new Error(`edit ${i}: the server answered ${status}`);
        if (elapsed > EDIT_TIMEOUT_MS) throw new Error(`edit ${i}: the new policy was not in force after ${EDIT_TIMEOUT_MS} ms`);
      }
    }
    const sorted = [...samples].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples };
  } finally {
    if (server) await stopServer(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(argv) {
  const smoke = argv.includes('--smoke');
  const i = argv.indexOf('--edits');
  const edits = smoke ? 5 : i !== -1 ? Number(argv[i + 1]) : 50;
  if (!Number.isInteger(edits) || edits < 1) throw new Error('--edits must be a positive integer');
  const r = await measureReloadLatency({ edits });
  if (argv.includes('--json')) {
    process.stdout.write(JSON.stringify(r) + '\n');
  } else {
    const sorted = [...r.samples].sort((a, b) => a - b);
    process.stdout.write(`reload latency (write → first request decided by the new policy), ${edits} edits: p50 ${r.p50} ms, p99 ${r.p99} ms (min ${sorted[0]} ms, max ${sorted.at(-1)} ms)\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`reload-latency: ${e.message}\n`);
    process.exitCode = 1;
  });
}
