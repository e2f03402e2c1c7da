// Session-store latencies (issue 40's "session-record reads p99 ≤ 5 ms from PostgreSQL"): get() and append()
// of PostgresSessionStore on a throwaway cluster (the tests' helper, through tsx; or DATABASE_URL) and of
// SqliteSessionStore on a temporary file, from the build (dist/). Each figure is p50/p99 over SAMPLES calls:
// one call in flight ("serial"), then CONCURRENCY in flight; append "one session" has every call contend for
// one session's row lock. Not part of the test suite: `npm run build && node bench/session-store.mjs`.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile } from './reload-latency.mjs';
import { PostgresOAuthProvider } from '../dist/auth/oauth/providers/postgres-provider.js';
import { PostgresSessionStore } from '../dist/sessions/postgres-store.js';
import { SqliteSessionStore } from '../dist/sessions/sqlite-store.js';
import { LoopbackRelay } from '../dist/sessions/loopback-relay.js';

const SESSIONS = 2000;
const SAMPLES = 4000;
const CONCURRENCY = 8;
const MESSAGE = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(200) } };

function record(id) {
  const now = Date.now();
  return {
    id, owner: `oauth\0https://issuer.example\0user-${id}\0client`, sub: `user-${id}`, credentialId: 'grant', version: '2025-11-25',
    clientCaps: { elicitation: {}, roots: { listChanged: true } }, logLevel: 'info', subscriptions: ['notes://1'], loadedTools: [], tasks: [],
    createdAt: now, expiresAt: now + 3_600_000,
  };
}

/** p50/p99 (ms) of `SAMPLES` calls of fn(i), `inFlight` at a time. */
async function measure(fn, inFlight) {
  const times = [];
  let next = 0;
  const worker = async () => {
    while (next < SAMPLES) {
      const i = next++;
      const t0 = performance.now();
      await fn(i);
      times.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  times.sort((a, b) => a - b);
  return { p50: +percentile(times, 50).toFixed(3), p99: +percentile(times, 99).toFixed(3) };
}

async function run(name, store) {
  const ids = Array.from({ length: SESSIONS }, () => randomBytes(16).toString('base64url'));
  for (const id of ids) await store.create(record(id));
  const pick = (i) => ids[(i * 7919) % SESSIONS];
  // Warm-up (pool connections, plans, page cache), checking every read finds its record.
  await measure(async (i) => {
    if (!(await store.get(pick(i)))) throw new Error(`${name}: session ${pick(i)} not found`);
  }, 1);
  const rows = {
    'get serial': await measure((i) => store.get(pick(i)), 1),
    [`get ×${CONCURRENCY}`]: await measure((i) => store.get(pick(i)), CONCURRENCY),
    'append serial': await measure((i) => store.append(pick(i), [MESSAGE]), 1),
    [`append ×${CONCURRENCY}`]: await measure((i) => store.append(pick(i), [MESSAGE]), CONCURRENCY),
    [`append ×${CONCURRENCY} one session`]: await measure(() => store.append(ids[0], [MESSAGE]), CONCURRENCY),
  };
  for (const [what, { p50, p99 }] of Object.entries(rows)) console.log(`${name.padEnd(10)} ${what.padEnd(26)} p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms`);
}

const cleanup = [];
try {
  let url = process.env.DATABASE_URL;
  if (!url) {
    const { tsImport } = await import('tsx/esm/api');
    const { startPostgres } = await tsImport('../test/helpers/postgres.ts', import.meta.url);
    const cluster = await startPostgres();
    cleanup.push(() => cluster.destroy());
    url = cluster.url();
  }
  const provider = await PostgresOAuthProvider.open({ url, poolSize: 10, statementTimeoutMs: 5000, keySecret: randomBytes(32).toString('base64url') });
  cleanup.unshift(() => provider.close());
  await run('postgres', new PostgresSessionStore(provider, { keepEvents: 256, onError: (e) => console.error(e) }));

  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-bench-sessions-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const sqlite = new SqliteSessionStore(join(dir, 'shared.db'), new LoopbackRelay(), { keepEvents: 256 });
  cleanup.unshift(() => sqlite.close());
  await run('sqlite', sqlite);
} finally {
  for (const fn of cleanup) await fn();
}
