// `node bench/workers.mjs [--pairs N] [--seconds S] [--out FILE]` (issue 40 point 4): one box's cores. The same
// manifest (bench/fastsvc.svc.yaml) served by one process and by `server.workers: 2`, each scenario (/svc tool call,
// /mcp tools/call on one 2025 session — through SQLite-shared sessions, since a session's requests reach both
// workers) run in back-to-back pairs (1 worker, then 2, N times; the median of the pairs' ratios), with 10 connections.
// The load generator (autocannon, in this process) shares the machine's cores with the server, so each run also
// measures the CPU it took (process.cpuUsage of this process) and the server's (the primary and its workers, from
// /proc). Reported per scenario:
//   raw        req/s of 2 workers ÷ req/s of 1;
//   accounted  the same with the load generator's share of the cores given back: each run's req/s per core the server
//              used, times the cores it would have without the load generator (1 for one worker — it is one thread —
//              and all of the machine's for 2 workers), i.e. (rps₂ / cpu₂ × min(2, cores)) ÷ (rps₁ / cpu₁ × 1);
//   cpu/request of each, and the cores the load generator and the server used.
// Target (issue 40): accounted ≥ 1.6× for /svc and /mcp. Writes a markdown table to --out (default stdout only).
// Run alone: flock /tmp/fastsvc-bench.lock node bench/workers.mjs
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { cliOptions } from './lib/cli-args.mjs';
import { KINDS } from './lib/clients.mjs';
import { cpuMs, descendantsCpuMs, installCleanup, ROOT, startServer, stopServer } from './lib/proc.mjs';
import { SCENARIOS, TOKEN } from './scenarios.mjs';

const USAGE = 'usage: node bench/workers.mjs [--pairs N] [--seconds S] [--out FILE]';
const opt = cliOptions({ pairs: { type: 'string' }, seconds: { type: 'string' }, out: { type: 'string' } }, USAGE);
const pairs = Number(opt.pairs ?? 5);
const seconds = Number(opt.seconds ?? 3);
if (!(pairs >= 1 && pairs <= 20 && seconds > 0 && seconds <= 60)) {
  console.error(`--pairs must be 1..20 and --seconds in (0, 60]\n${USAGE}`);
  process.exit(2);
}
const CORES = availableParallelism();
const FASTSVC_CLI = process.env.FASTSVC_CLI ?? 'dist/cli.js';
installCleanup();

const dir = mkdtempSync(join(tmpdir(), 'fastsvc-bench-workers-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const base = parse(readFileSync(join(ROOT, 'bench/fastsvc.svc.yaml'), 'utf8'));
const manifest = (workers) => {
  const file = join(dir, `workers-${workers}.svc.yaml`);
  writeFileSync(file, stringify({ ...base, server: { ...base.server, workers } }));
  return file;
};
const defs = {
  1: { argv: [FASTSVC_CLI, 'serve', manifest(1), '--port', '0', '--no-watch'], hint: 'run `npm run build` first' },
  2: { argv: [FASTSVC_CLI, 'serve', manifest(2), '--port', '0', '--no-watch'], hint: 'run `npm run build` first' },
};
const picked = ['fastsvc-svc', 'fastsvc-mcp'].map((name) => SCENARIOS.find((s) => s.name === name));

/** The server's CPU time (ms): the process and everything below it (a primary's workers). */
const serverCpuMs = (pid) => cpuMs(pid) + descendantsCpuMs(pid);
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** One measured run of `scn` on `server`: req/s, and the cores the server and the load generator used. */
async function run(server, scn) {
  const kind = KINDS[scn.kind];
  const t = await kind.open(scn, server.url, TOKEN);
  try {
    await kind.check(t);
    await kind.load(t, { seconds: Math.min(1, seconds) }); // warm-up
    const s0 = serverCpuMs(server.pid);
    const g0 = ownCpuMs();
    const w0 = performance.now();
    const res = await kind.load(t, { seconds });
    const wall = performance.now() - w0;
    if (res.non2xx || res.errors) throw new Error(`${scn.name}: ${res.non2xx} non-2xx, ${res.errors} errors`);
    return { rps: res.rps, server: (serverCpuMs(server.pid) - s0) / wall, loadgen: (ownCpuMs() - g0) / wall, p99: res.p99 };
  } finally {
    await kind.close(t);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const servers = { 1: await startServer(defs[1], { SVC_TOKEN: TOKEN }), 2: await startServer(defs[2], { SVC_TOKEN: TOKEN }) };
const rows = [];
try {
  for (const scn of picked) {
    const samples = [];
    for (let i = 0; i < pairs; i++) {
      const one = await run(servers[1], scn);
      const two = await run(servers[2], scn);
      const accounted = (two.rps / two.server * Math.min(2, CORES)) / (one.rps / one.server * 1);
      samples.push({ one, two, raw: two.rps / one.rps, accounted });
      process.stderr.write(`${scn.name} pair ${i + 1}: 1 worker ${one.rps.toFixed(0)} req/s (server ${one.server.toFixed(2)} cores, load ${one.loadgen.toFixed(2)}), 2 workers ${two.rps.toFixed(0)} req/s (server ${two.server.toFixed(2)}, load ${two.loadgen.toFixed(2)}): raw ${(two.rps / one.rps).toFixed(2)}×, accounted ${accounted.toFixed(2)}×\n`);
    }
    const m = (f) => median(samples.map(f));
    rows.push({
      scn: scn.name, rps1: m((s) => s.one.rps), rps2: m((s) => s.two.rps), raw: m((s) => s.raw), accounted: m((s) => s.accounted),
      cpu1: m((s) => (s.one.server * 1e6) / s.one.rps), cpu2: m((s) => (s.two.server * 1e6) / s.two.rps),
      server1: m((s) => s.one.server), server2: m((s) => s.two.server), load1: m((s) => s.one.loadgen), load2: m((s) => s.two.loadgen),
    });
  }
} finally {
  await stopServer(servers[1]);
  await stopServer(servers[2]);
}

const f = (x, d = 2) => x.toFixed(d);
const table = [
  `server.workers 2 vs 1 on ${CORES} cores, bench/fastsvc.svc.yaml, 10 connections, ${pairs} pairs × ${seconds} s (medians)`,
  '',
  '| scenario | 1 worker req/s | 2 workers req/s | raw | accounted (target ≥ 1.6×) | server CPU µs/req 1 → 2 | server cores 1 / 2 | load generator cores 1 / 2 |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.scn} | ${f(r.rps1, 0)} | ${f(r.rps2, 0)} | ${f(r.raw)}× | ${f(r.accounted)}× ${r.accounted >= 1.6 ? 'met' : 'missed'} | ${f(r.cpu1, 0)} → ${f(r.cpu2, 0)} | ${f(r.server1)} / ${f(r.server2)} | ${f(r.load1)} / ${f(r.load2)} |`),
].join('\n');
console.log(table);
if (opt.out) writeFileSync(opt.out, `${table}\n`);
