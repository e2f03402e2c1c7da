// `npm run bench`: starts every server of bench/scenarios.mjs as its own child process on 127.0.0.1 (port 0),
// measures start-up, then idle memory (a fresh server per IDLE entry), checks each scenario's answer once, warms up,
// then measures the scenarios in interleaved rounds (A/B/A/B) with 10 connections, then the paired targets back to
// back (median of the pairs' ratios), then memory flatness (--memory), reload latency and start-up with upstreams, and prints
// markdown tables with issue 6's targets met or missed (also written to bench/RESULTS.md).
// Exit 1 when a check or a run fails (with --smoke also on any non-2xx or error; with --strict on an unavailable server).
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureReloadLatency } from './reload-latency.mjs';
import { measureRevocationLatency } from './revocation-latency.mjs';
import { measureExternalCache } from './external-cache.mjs';
import { measureUpstreamStartup } from './upstream-startup.mjs';
import { startIdps } from './lib/idp.mjs';
import { BASELINES, ceilingOf, EXTERNAL_CACHE, IDLE, MEMORY, RELOAD, REVOCATION, SCENARIOS, SERVERS, TARGETS, TOKEN, TOOL, UPSTREAM_STARTUP } from './scenarios.mjs';
import { cliOptions } from './lib/cli-args.mjs';
import { KINDS, request } from './lib/clients.mjs';
import { CONNECTIONS } from './lib/load.mjs';
import { OAuthFlow } from './lib/oauth.mjs';
import { inspectorEnv, openInspector } from './lib/inspector.mjs';
import { cpuMs, descendantsCpuMs, fileBackedMiB, installCleanup, measureStartup, rssMiB, sleep, startServer, stopServer } from './lib/proc.mjs';
import { environment, externalCacheTable, idleTable, memoryTable, reloadTable, scalingTable, serverTable, summarize, targetsTable, throughputTable, upstreamStartupTable, upstreamTable, writeResults } from './lib/report.mjs';

const USAGE = `usage: node bench/run.mjs [--smoke] [--memory] [--scaling] [--large] [--search] [--only name,...] [--rounds N] [--pairs N] [--seconds S] [--out FILE] [--strict]`;
const options = {
  smoke: { type: 'boolean' }, memory: { type: 'boolean' }, scaling: { type: 'boolean' }, large: { type: 'boolean' }, search: { type: 'boolean' }, strict: { type: 'boolean' },
  only: { type: 'string' }, rounds: { type: 'string' }, pairs: { type: 'string' }, seconds: { type: 'string' }, out: { type: 'string' },
};
const opt = cliOptions(options, USAGE);

const smoke = Boolean(opt.smoke);
// The smoke form (npm test) checks that every server starts and answers every scenario right, and runs every step
// once, as briefly as it can: no warm-up load, a quarter second per load.
const cfg = {
  rounds: Number(opt.rounds ?? (smoke ? 1 : 3)),
  seconds: Number(opt.seconds ?? (smoke ? 0.25 : 5)),
  warmupSeconds: smoke ? 0 : 2,
  startupSamples: smoke ? 1 : 5,
  // Many short pairs rather than a few long ones: the host's speed drifts on a scale of seconds.
  pairs: Number(opt.pairs ?? (smoke ? 1 : 9)),
  pairSeconds: smoke ? 0.25 : 2,
  idleMs: smoke ? 100 : 1000,
  memoryWarmupCalls: smoke ? 500 : 5000,
  rssCapMiB: 1536, // a leaking peer is stopped here rather than allowed to eat the machine
};
if (!(cfg.rounds >= 1 && cfg.rounds <= 20 && cfg.pairs >= 0 && cfg.pairs <= 20 && cfg.seconds > 0 && cfg.seconds <= 120)) {
  console.error(`--rounds must be 1..20, --pairs 0..20 and --seconds in (0, 120]\n${USAGE}`);
  process.exit(2);
}

const only = opt.only?.split(',').map((s) => s.trim()).filter(Boolean);
const known = new Set([...Object.keys(SERVERS), ...[...SCENARIOS, ...IDLE, ...MEMORY, ...RELOAD, ...REVOCATION, ...EXTERNAL_CACHE, ...UPSTREAM_STARTUP].map((e) => e.name)]);
const unknown = only?.filter((n) => !known.has(n)) ?? [];
if (unknown.length) {
  console.error(`unknown --only name(s): ${unknown.join(', ')}\nknown: ${[...known].join(', ')}`);
  process.exit(2);
}
const picked = (e) => !only || only.includes(e.name) || only.includes(e.server);

// BENCH_DATA_DIR: where servers keep files (the SQLite OAuth provider); removed when the harness exits.
const dataDir = mkdtempSync(join(tmpdir(), 'fastsvc-bench-'));
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
const env = { BENCH_TOKEN: TOKEN, SVC_TOKEN: TOKEN, BENCH_DATA_DIR: dataDir };
const log = (msg) => console.error(`[bench] ${msg}`);
const serverStatus = new Map(); // server name → 'unavailable: …' / 'pending: …'
const running = new Map(); // server name → { child, pid, url }
let failed = false;

/** Why an entry cannot run, or null. */
function blocked(e) {
  if (e.pending) return `pending: ${e.pending}`;
  if (SERVERS[e.server].pending) return `pending: ${SERVERS[e.server].pending}`;
  if (e.kind && !KINDS[e.kind]) return `pending: no runner for kind ${e.kind}`;
  return serverStatus.get(e.server) ?? null;
}

const flows = new Map(); // server URL → OAuthFlow (discovery and one registered client, reused)

let idps; // the corporate IdPs (lib/idp.mjs), when a picked entry's server needs them

/**
 * An external IdP's access token (issue 30): fresh from the RS256 IdP's token endpoint, and sent once to /svc before
 * the clock starts, so the load that follows measures cache hits ("cached after first use").
 */
async function externalToken(scn, url) {
  const token = await idps.RS256.mint(scn.token === 'external-opaque' ? 'opaque' : 'jwt');
  const t = await KINDS.http.open({ path: `/svc/tools/${TOOL}`, auth: true }, url, token);
  await KINDS.http.check(t);
  return token;
}

/** The token a scenario presents: the static one, or a fresh OAuth access token for its route (the real flow). */
async function tokenFor(scn, url) {
  if (!scn.token || scn.token === 'static') return TOKEN;
  if (scn.token.startsWith('external-')) return externalToken(scn, url);
  if (scn.token !== 'oauth') throw new Error(`no source for ${scn.token} tokens`);
  if (!flows.has(url)) flows.set(url, await OAuthFlow.open(url));
  return flows.get(url).accessToken(`${url}${scn.kind === 'mcp' ? scn.path ?? '/mcp' : '/svc'}`);
}

const kept = new Map(); // `keepOpen` scenario + server URL → its target, opened once and left open until the server stops

async function withTarget(scn, server, fn) {
  const kind = KINDS[scn.kind];
  if (scn.keepOpen) {
    const key = `${scn.name} ${server.url}`;
    if (!kept.has(key)) kept.set(key, await kind.open(scn, server.url, await tokenFor(scn, server.url), server));
    return fn(kind, kept.get(key));
  }
  const target = await kind.open(scn, server.url, await tokenFor(scn, server.url), server);
  try {
    return await fn(kind, target);
  } finally {
    await kind.close(target);
  }
}

async function main() {
  installCleanup();
  const scenarios = SCENARIOS.filter(picked);
  const memory = opt.memory ? MEMORY.filter(picked) : [];
  const revocation = REVOCATION.filter(picked);
  const idle = IDLE.filter(picked);
  const externalCache = EXTERNAL_CACHE.filter(picked);
  const serverNames = [...new Set([...scenarios, ...idle, ...memory, ...revocation, ...externalCache].filter((e) => !blocked(e)).map((e) => e.server))];

  // A throwaway PostgreSQL cluster for the servers that need one (the tests' helper, loaded through tsx).
  if (serverNames.some((n) => SERVERS[n].postgres)) {
    const { tsImport } = await import('tsx/esm/api');
    const { startPostgres } = await tsImport('../test/helpers/postgres.ts', import.meta.url);
    const cluster = await startPostgres();
    // The helper's own exit hook may have stopped it already: then only its folder is left to remove.
    process.on('exit', () => {
      try {
        cluster.destroy();
      } catch {
        rmSync(cluster.dir, { recursive: true, force: true });
      }
    });
    Object.assign(env, { DATABASE_URL: cluster.url(), SVC_OAUTH_KEY_SECRET: randomBytes(32).toString('base64url') });
    log(`postgres: throwaway cluster on port ${cluster.port}`);
  }

  // The corporate IdPs (RS256 + introspection, ES256) for the resource-server rows (issue 30), killed with the harness.
  if (serverNames.some((n) => SERVERS[n].idp)) {
    idps = await startIdps(dataDir);
    Object.assign(env, idps.env);
    log(`corporate IdPs: RS256 ${idps.RS256.issuer}, ES256 ${idps.ES256.issuer}`);
  }

  // 1. Start-up: each server alone, spawn → first 200 from /healthz.
  const serverRows = [];
  for (const name of serverNames) {
    const row = { name };
    serverRows.push(row);
    try {
      row.startup = await measureStartup(SERVERS[name], env, cfg.startupSamples);
      log(`${name}: start-up ${row.startup.map((t) => t.toFixed(0)).join(', ')} ms`);
    } catch (err) {
      serverStatus.set(name, `unavailable: ${err.message}`);
      row.status = serverStatus.get(name);
      log(`${name}: ${row.status}`);
    }
  }

  // 2. Idle memory, a fresh server per entry (before the rounds, so its warm-up does not depend on them).
  const idleRows = [];
  for (const entry of idle) idleRows.push(await measureIdle(entry));

  // 2b. Start the servers that are kept up for the rounds (throughput scenarios only).
  for (const name of new Set(scenarios.filter((s) => !blocked(s)).map((s) => s.server))) {
    try {
      running.set(name, await startServer(SERVERS[name], env));
    } catch (err) {
      serverStatus.set(name, `unavailable: ${err.message}`);
    }
  }

  // 3. Check each scenario's answer once, then warm it up.
  const results = scenarios.map((scn) => ({ scn, rounds: [], status: blocked(scn) }));
  for (const r of results.filter((r) => !r.status)) {
    const server = running.get(r.scn.server);
    try {
      if (server.died()) throw new Error('server is gone');
      await withTarget(r.scn, server, async (kind, t) => {
        await kind.check(t);
        if (cfg.warmupSeconds) await kind.load(t, { seconds: cfg.warmupSeconds });
      });
      log(`${r.scn.name}: answer ok${cfg.warmupSeconds ? ', warmed up' : ''}`);
    } catch (err) {
      await sleep(200); // let a crashed server's exit be seen, so the row says why
      r.status = `FAILED: ${err.message}${server.died() ? ` (server ${server.died()})` : ''}`;
      failed = true;
      log(`${r.scn.name}: ${r.status}`);
    }
  }
  for (const row of serverRows) {
    const server = running.get(row.name);
    if (server && !server.died()) await scrape(server);
  }
  await sleep(cfg.idleMs);
  for (const row of serverRows) {
    const server = running.get(row.name);
    if (server?.died()) row.status = `server ${server.died()}`;
    else if (server) row.rss = rssMiB(server.pid);
  }

  // 4. Rounds: every scenario once per round, in table order, so servers alternate.
  for (let round = 1; round <= cfg.rounds; round++) {
    for (const r of results.filter((r) => !r.status)) {
      const server = running.get(r.scn.server);
      try {
        if (server.died()) throw new Error(`server ${server.died()}`);
        const def = SERVERS[r.scn.server];
        const cpu0 = cpuMs(server.pid);
        const upstream0 = def.upstream ? descendantsCpuMs(server.pid) : 0;
        const res = await withTarget(r.scn, server, (kind, t) => kind.load(t, { seconds: cfg.seconds }));
        if (server.died()) throw new Error(`server ${server.died()}`);
        if (!def.noCpu && !KINDS[r.scn.kind].setupInLoad && res.total > 0) res.cpuUs = ((cpuMs(server.pid) - cpu0) * 1000) / res.total;
        if (def.upstream && res.total > 0) res.upstreamCpuUs = ((descendantsCpuMs(server.pid) - upstream0) * 1000) / res.total;
        r.rounds.push(res);
        log(`round ${round} ${r.scn.name}: ${Math.round(res.rps)} req/s, p50 ${res.p50.toFixed(2)} ms, p99 ${res.p99.toFixed(2)} ms` +
          (res.cpuUs ? `, server CPU ${res.cpuUs.toFixed(1)} µs/request` : '') +
          (res.upstreamCpuUs !== undefined ? `, upstream CPU ${res.upstreamCpuUs.toFixed(1)} µs/request` : '') +
          (res.non2xx || res.errors ? `, ${res.non2xx} non-2xx, ${res.errors} errors` : ''));
      } catch (err) {
        r.status = `FAILED: ${err.message}`;
        failed = true;
        log(`round ${round} ${r.scn.name}: ${r.status}`);
      }
    }
  }
  for (const r of results) if (!r.status) r.summary = summarize(r.rounds);

  // 5. Paired ratios for the targets marked `paired`: the two scenarios run back to back (order alternating,
  // cfg.pairs times, cfg.pairSeconds each), and the verdict is the median of the pairs' ratios. The rounds above
  // run ~25 scenarios between the two, so a drift of the shared machine's speed moves one and not the other.
  const paired = new Map(); // 'a/b' → ratios
  for (const t of TARGETS.filter((t) => t.paired && t.ratio && cfg.pairs > 0)) {
    const [a, b] = t.ratio.map((n) => results.find((r) => r.scn.name === n));
    if (!a || !b || a.status || b.status) continue;
    const ratios = [];
    try {
      for (let i = 0; i < cfg.pairs; i++) {
        const once = async (r) => {
          const server = running.get(r.scn.server);
          if (server.died()) throw new Error(`server ${server.died()}`);
          return (await withTarget(r.scn, server, (kind, t) => kind.load(t, { seconds: cfg.pairSeconds }))).rps;
        };
        const [ra, rb] = i % 2 ? [await once(a), await once(b)] : [await once(b), await once(a)].reverse();
        ratios.push(ra / rb);
      }
      paired.set(t.ratio.join('/'), ratios);
      log(`paired ${t.ratio.join(' / ')}: ${ratios.map((x) => x.toFixed(2)).join(', ')}`);
    } catch (err) {
      failed = true;
      log(`paired ${t.ratio.join(' / ')}: FAILED: ${err.message}`);
    }
  }
  for (const server of running.values()) await stopServer(server);
  running.clear();

  // 6. Memory flatness on one /mcp session.
  const memRows = [];
  for (const entry of memory) memRows.push(await measureMemory(entry));

  // 7. Reload latency, each entry on a watching server of its own.
  const reloadRows = [];
  for (const entry of RELOAD.filter(picked)) reloadRows.push(await measureReload(entry));

  // 8. Revocation propagation between two replicas, on a server of its own.
  const revocationRows = [];
  for (const entry of revocation) revocationRows.push(await measureRevocation(entry));

  // 8b. External tokens cached (issue 30), on a server of its own.
  const externalRows = [];
  for (const entry of externalCache) externalRows.push(await measureExternalCacheRow(entry));

  // 8c. Start-up with upstreams (issue 31), fresh servers of their own.
  const upstreamStartupRows = [];
  for (const entry of UPSTREAM_STARTUP.filter(picked)) upstreamStartupRows.push(await measureUpstreamStartupRow(entry));

  // 9. Report.
  const command = `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim();
  const settings = `${cfg.rounds} round(s) × ${cfg.seconds} s per scenario, interleaved; ${CONNECTIONS} connections; ` +
    `warm-up ${cfg.warmupSeconds} s; start-up median of ${cfg.startupSamples}; paired targets: ${cfg.pairs} back-to-back pairs × ${cfg.pairSeconds} s`;
  const pendingHooks = [...results.map((r) => r.scn), ...reloadRows.map((r) => r.entry), ...upstreamStartupRows.map((r) => r.entry)]
    .filter((e) => blocked(e)?.startsWith('pending')).map((e) => `- ${e.name}: ${blocked(e)}`);
  const sections = [
    environment(command, settings),
    `## Throughput (req/s = median over rounds; ratios from the medians of this run)\n\n${throughputTable(results, BASELINES, ceilingOf)}`,
    ...(results.some((r) => r.scn.vs) ? [`## Scaling (req/s ÷ the req/s of \`vs\` in this run)\n\n${scalingTable(results)}`] : []),
    ...(results.some((r) => r.scn.kind === 'stdio' || (r.scn.call && r.scn.ceiling))
      ? [`## A stdio MCP upstream, directly and through proxies (issue 31; CPU from /proc: the proxy's process, its children)\n\n${upstreamTable(results)}`] : []),
    `## Start-up (spawn → first 200 from /healthz) and RSS after the warm-ups (and, where /metrics is served, one scrape)\n\n` +
      `The RSS column is read 1 s after the last warm-up of the run, however long ago that server's own ended: compare ` +
      `servers under Idle memory.\n\n${serverTable(serverRows)}`,
    ...(idleRows.length ? [`## Idle memory (a fresh server per entry: its scenarios warmed up, then two full collections)\n\n${idleTable(idleRows)}`] : []),
    ...(memRows.length ? [`## Memory flatness (/mcp, one session)\n\n${memoryTable(memRows)}`] : []),
    ...(reloadRows.length ? [`## Reload latency (bench/reload-latency.mjs)\n\n${reloadTable(reloadRows)}`] : []),
    ...(revocationRows.length ? [`## Revocation propagation (bench/revocation-latency.mjs)\n\n${reloadTable(revocationRows, 'revocations')}`] : []),
    ...(externalRows.length ? [`## External tokens cached (bench/external-cache.mjs)\n\n${externalCacheTable(externalRows)}`] : []),
    ...(upstreamStartupRows.length ? [`## Start-up with upstreams (bench/upstream-startup.mjs)\n\n${upstreamStartupTable(upstreamStartupRows)}`] : []),
    `## Issue 6 targets in this run${smoke ? ' (smoke: too short to judge)' : ''}\n\n` +
      targetsTable(TARGETS, { results, servers: serverRows, idle: idleRows, memory: memRows, reload: reloadRows, upstreamStartup: upstreamStartupRows, paired }),
    ...(pendingHooks.length ? [`## Not measured yet\n\n${pendingHooks.join('\n')}`] : []),
  ];
  console.log(sections.join('\n\n'));
  const out = report;
  if (out) {
    writeResults(out, sections);
    log(`wrote ${out}`);
  }

  const flagged = results.some((r) => r.summary?.flagged) || memRows.some((m) => m.flagged);
  const unavailable = [...serverStatus.values()].some((s) => s.startsWith('unavailable'));
  return failed || (smoke && flagged) || (opt.strict && unavailable) ? 1 : 0;
}

/** A fresh server for one memory or revocation entry, or undefined with row.status saying why it is unavailable. */
async function startOrMark(entry, row) {
  try {
    return await startServer(SERVERS[entry.server], env);
  } catch (err) {
    row.status = `unavailable: ${err.message}`;
    return undefined;
  }
}

/** A hosted server is scraped: one GET /metrics (static token) where it is routed, so RSS includes the metrics registry
 * fastsvc makes at the first scrape. Servers without /metrics (or behind OAuth) answer 401/404. */
const scrape = (server) => request(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).catch(() => undefined);

/**
 * Fresh server listening for the inspector: every scenario of its server checked and warmed up in table order, one
 * scrape; 1 s later RSS "after load"; then two full collections (bench/lib/inspector.mjs) and 1 s later the idle RSS,
 * its file-backed part and the V8 heap retained (IDLE in bench/scenarios.mjs).
 */
async function measureIdle(entry) {
  const row = { entry, status: blocked(entry) };
  if (row.status) return row;
  const warmups = SCENARIOS.filter((s) => s.server === entry.server && !blocked(s));
  const inspector = await inspectorEnv();
  let server;
  try {
    server = await startServer(SERVERS[entry.server], { ...env, ...inspector.env });
  } catch (err) {
    row.status = `unavailable: ${err.message}`;
    return row;
  }
  let session;
  try {
    for (const scn of warmups) {
      await withTarget(scn, server, async (kind, t) => {
        await kind.check(t);
        if (cfg.warmupSeconds) await kind.load(t, { seconds: cfg.warmupSeconds });
      });
    }
    row.warmups = warmups.map((s) => s.name);
    await scrape(server);
    await sleep(cfg.idleMs);
    row.afterLoad = rssMiB(server.pid);
    session = await openInspector(inspector.port);
    row.heap = await session.heapAfterGcMiB();
    await sleep(cfg.idleMs);
    row.idle = rssMiB(server.pid);
    row.fileBacked = fileBackedMiB(server.pid);
    if (server.died()) throw new Error('server is gone');
    row.status = 'ok';
    log(`${entry.name}: RSS after load ${row.afterLoad.toFixed(1)} MiB, idle ${row.idle.toFixed(1)} MiB (V8 heap ${row.heap.toFixed(1)} MiB)`);
  } catch (err) {
    row.status = `FAILED: ${err.message}${server.died() ? ` (server ${server.died()})` : ''}`;
    failed = true;
    log(`${entry.name}: ${row.status}`);
  } finally {
    session?.close();
    await stopServer(server);
  }
  return row;
}

/** Fresh server, one session: warm up, RSS, `calls` tools/call (sampling peak RSS), RSS again. */
async function measureMemory(entry) {
  const row = { entry, status: blocked(entry) };
  if (row.status) return row;
  const calls = smoke ? entry.smokeCalls : entry.calls;
  const server = await startOrMark(entry, row);
  if (!server) return row;
  try {
    const scn = { name: entry.name, kind: 'mcp', session: !entry.modern, modern: entry.modern };
    await withTarget(scn, server, async (kind, t) => {
      await kind.check(t);
      await kind.load(t, { amount: cfg.memoryWarmupCalls });
      await sleep(cfg.idleMs);
      row.before = row.peak = rssMiB(server.pid);
      const res = await kind.load(t, {
        amount: calls,
        timeoutMs: smoke ? 60_000 : 300_000,
        onTick() {
          if (server.died()) return `server ${server.died()}`;
          row.peak = Math.max(row.peak, rssMiB(server.pid));
          return row.peak > cfg.rssCapMiB ? `RSS passed ${cfg.rssCapMiB} MiB` : null;
        },
      });
      await sleep(cfg.idleMs);
      row.after = rssMiB(server.pid);
      row.peak = Math.max(row.peak, row.after);
      row.calls = res.total;
      const s = summarize([res]);
      row.flagged = s.flagged;
      row.status = s.note || 'ok';
    });
    log(`${entry.name}: ${row.calls} calls, RSS ${row.before.toFixed(1)} → ${row.after.toFixed(1)} MiB`);
  } catch (err) {
    row.status = `FAILED: ${err.message}`;
    failed = true;
  } finally {
    await stopServer(server);
  }
  return row;
}

/** measureReloadLatency over the entry's edits (its own server; throws when an edit is not obeyed in time). */
async function measureReload(entry) {
  const row = { entry, status: blocked(entry) };
  if (row.status) return row;
  const edits = smoke ? entry.smokeEdits : entry.edits;
  try {
    Object.assign(row, await measureReloadLatency({ edits }));
    row.status = 'ok';
    log(`${entry.name}: ${edits} edits, p50 ${row.p50} ms, p99 ${row.p99} ms`);
  } catch (err) {
    row.status = `FAILED: ${err.message}`;
    failed = true;
    log(`${entry.name}: ${row.status}`);
  }
  return row;
}

/** measureRevocationLatency on a fresh two-replica server (throws when B keeps accepting a revoked token). */
async function measureRevocation(entry) {
  const row = { entry, status: blocked(entry) };
  if (row.status) return row;
  const revocations = smoke ? entry.smokeRevocations : entry.revocations;
  const server = await startOrMark(entry, row);
  if (!server) return row;
  try {
    Object.assign(row, await measureRevocationLatency({ url: server.url, revocations }));
    row.status = 'ok';
    log(`${entry.name}: ${revocations} revocations, p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms`);
  } catch (err) {
    row.status = `FAILED: ${err.message}${server.died() ? ` (server ${server.died()})` : ''}`;
    failed = true;
    log(`${entry.name}: ${row.status}`);
  } finally {
    await stopServer(server);
  }
  return row;
}

/** measureExternalCache on a fresh fastsvc-external server (throws when a call is not answered right). */
async function measureExternalCacheRow(entry) {
  const row = { entry, status: blocked(entry) };
  if (row.status) return row;
  try {
    Object.assign(row, await measureExternalCache({ def: SERVERS[entry.server], env, idps, tokens: smoke ? entry.smokeTokens : entry.tokens, cycles: smoke ? 1 : entry.cycles, idleMs: cfg.idleMs, log }));
    row.status = 'ok';
  } catch (err) {
    row.status = `FAILED: ${err.message}`;
    failed = true;
    log(`${entry.name}: ${row.status}`);
  }
  return row;
}

/** measureUpstreamStartup's samples for the entry (smoke: smokeSamples); throws when fastsvc does not serve every imported tool right. */
async function measureUpstreamStartupRow(entry) {
  const row = { entry, status: blocked(entry) };
  if (row.status) return row;
  try {
    Object.assign(row, await measureUpstreamStartup({ upstreams: entry.upstreams, tools: entry.tools, samples: smoke ? entry.smokeSamples : entry.samples, env }));
    row.status = 'ok';
    log(`${entry.name}: after the upstreams ${row.samples.map((x) => x.afterMs).join(', ')} ms`);
  } catch (err) {
    row.status = `FAILED: ${err.message}`;
    failed = true;
    log(`${entry.name}: ${row.status}`);
  }
  return row;
}

// --scaling: then the scaling curves (bench/scaling.mjs, its own servers), written to bench/results/ (smoke: a temp
// folder). --large: then the large-manifest measurements (bench/large-manifest.mjs; not in smoke mode). --search:
// then search recall, latency, index cost and catalog tokens (bench/search.mjs; not in smoke mode). Each adds
// its section (tables and plots) to the report file of this run.
const RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url));
const report = opt.out ?? (smoke ? null : fileURLToPath(new URL('RESULTS.md', import.meta.url)));
const appendToReport = (md) => report && existsSync(report) && appendFileSync(report, `\n${md.trim()}\n`);
async function withScaling(code) {
  if (!opt.scaling) return code;
  const scaled = await (await import('./scaling.mjs')).runScaling({ smoke });
  if (!smoke) appendToReport(readFileSync(join(RESULTS_DIR, 'scaling.md'), 'utf8'));
  return Math.max(code, scaled);
}
/** A section that runs after the rounds outside smoke mode: its Markdown goes into the report; a failure fails the run. */
const section = (wanted, name, run) => async (code) => {
  if (!wanted || smoke) return code;
  try {
    appendToReport(await run());
    return code;
  } catch (err) {
    log(`${name}: FAILED: ${err.message}`);
    return 1;
  }
};
const withLarge = section(opt.large, 'large manifests', async () => (await import('./large-manifest.mjs')).runLargeSection({ outDir: RESULTS_DIR }));
const withSearch = section(opt.search, 'search', async () => (await import('./search.mjs')).runSearchSection({ outDir: RESULTS_DIR }));
main().then(withScaling).then(withLarge).then(withSearch).then((code) => process.exit(code), (err) => {
  console.error(err);
  process.exit(1);
});
