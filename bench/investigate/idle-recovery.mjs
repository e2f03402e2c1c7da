#!/usr/bin/env node
// After a quiet spell: how fast the first requests run, against the same server busy. Once V8 sees a
// process idle, its memory reducer runs a memory-reducing collection, which keeps no object shape ("map")
// that only optimized code still refers to — and while idle no request, socket or parsed body holds
// them — so that code is deoptimized and the next seconds of traffic run while V8 compiles it again.
// V8 offers no switch for this once the process runs (the reducer exists or not from start-up): it is
// node's own option, --no-memory-reducer. Measured here on fastsvc and on the raw node:http echo, each on
// Node's defaults (as npm start runs fastsvc) and with that option, with /mcp 2026-07-28 tools/call traffic
// (the raw echo: the same request). Each cycle: every server busy for --seconds ("busy" req/s and server
// CPU per request), then all idle for --idle seconds, then each busy again for --seconds ("after idle").
// V8 decides by itself whether a quiet spell gets a memory-reducing collection, so each cycle's ratio is
// listed with R where the server ran one while idle (its --trace-gc lines marked "reduce"; scavenges are
// not printed, so the trace costs nothing per request), beside the median over the cycles.
// Run it under the shared lock: flock /tmp/fastsvc-bench.lock node bench/investigate/idle-recovery.mjs
//
//   node bench/investigate/idle-recovery.mjs [--cycles 3] [--idle 90] [--seconds 3] [--warmup 8] [--out bench/investigate/results/idle-recovery.md]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliOptions } from '../lib/cli-args.mjs';
import { KINDS } from '../lib/clients.mjs';
import { cpuMs, installCleanup, sleep, startServer, stopServer } from '../lib/proc.mjs';
import { median } from '../lib/report.mjs';
import { SCENARIOS, SERVERS, TOKEN } from '../scenarios.mjs';

const USAGE = 'usage: node bench/investigate/idle-recovery.mjs [--cycles N] [--idle SECONDS] [--seconds S] [--warmup S] [--out FILE]';
const DEFAULT_OUT = fileURLToPath(new URL('results/idle-recovery.md', import.meta.url));

/** Runs the measurement; returns the report's Markdown section (also written to `out`). */
export async function runIdleRecovery({ cycles = 3, idleSeconds = 90, seconds = 3, warmupSeconds = 8, out = DEFAULT_OUT, log = (m) => console.error(`[idle] ${m}`) } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-idle-'));
  const env = { SVC_TOKEN: TOKEN, BENCH_TOKEN: TOKEN, BENCH_DATA_DIR: dir };
  const TRACE = ['--trace-gc', '--trace-gc-ignore-scavenger'];
  const NO_REDUCER = '--no-memory-reducer';
  const entries = [
    { name: 'fastsvc', what: "fastsvc on Node's defaults (as npm start runs it)", def: SERVERS.fastsvc, nodeArgs: TRACE, scn: 'fastsvc-mcp-2026' },
    { name: 'fastsvc-no-reducer', what: `fastsvc, node ${NO_REDUCER}`, def: SERVERS.fastsvc, nodeArgs: [NO_REDUCER, ...TRACE], scn: 'fastsvc-mcp-2026' },
    { name: 'raw', what: "raw node:http echo of the same request, Node's defaults", def: SERVERS.raw, nodeArgs: TRACE, scn: 'raw-mcp-2026' },
    { name: 'raw-no-reducer', what: `raw node:http echo of the same request, node ${NO_REDUCER}`, def: SERVERS.raw, nodeArgs: [NO_REDUCER, ...TRACE], scn: 'raw-mcp-2026' },
  ];

  try {
    for (const e of entries) {
      e.server = await startServer({ ...e.def, nodeArgs: e.nodeArgs }, env);
      e.reduces = 0;
      e.server.child.stdout.on('data', (d) => (e.reduces += (String(d).match(/\(reduce\)/g) ?? []).length));
      e.busy = [];
      e.after = [];
      e.reduced = []; // per cycle: whether a memory-reducing GC ran while idle
    }
    const load = async (e, secs) => {
      const sc = SCENARIOS.find((s) => s.name === e.scn);
      const kind = KINDS[sc.kind];
      const t = await kind.open(sc, e.server.url, TOKEN);
      const c0 = cpuMs(e.server.pid);
      const r = await kind.load(t, { seconds: secs });
      await kind.close(t);
      if (r.errors || r.non2xx) throw new Error(`${e.name}: ${r.errors} failed requests, ${r.non2xx} answers not 2xx`);
      return { rps: r.rps, cpu: ((cpuMs(e.server.pid) - c0) * 1000) / r.total };
    };
    for (const e of entries) await load(e, warmupSeconds); // 8 s: long enough for V8's first full collection, which arms the memory reducer
    for (let c = 0; c < cycles; c++) {
      for (const e of entries) e.busy.push(await load(e, seconds));
      const before = entries.map((e) => e.reduces);
      log(`cycle ${c + 1}/${cycles}: idle ${idleSeconds} s`);
      await sleep(idleSeconds * 1000);
      entries.forEach((e, i) => e.reduced.push(e.reduces > before[i]));
      // Interleaved so that no server is idle longer than the others by more than a load's length.
      for (const e of c % 2 ? [...entries].reverse() : entries) e.after.push(await load(e, seconds));
      for (const e of entries) log(`${e.name}: busy ${e.busy.at(-1).rps.toFixed(0)} req/s, after idle ${e.after.at(-1).rps.toFixed(0)} req/s`);
    }
  } finally {
    for (const e of entries) if (e.server) await stopServer(e.server);
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (x, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  const rows = entries.map((e) => {
    const ratios = e.after.map((a, i) => a.rps / e.busy[i].rps);
    const cycles = ratios.map((r, i) => `${f(r, 2)}${e.reduced[i] ? ' R' : ''}`).join(', ');
    const cpu = median(e.after.map((a, i) => a.cpu / e.busy[i].cpu));
    return `| ${e.name} | ${e.what} | ${f(median(e.busy.map((b) => b.rps)))} | ${f(median(e.after.map((a) => a.rps)))} | ${f(median(ratios), 2)}× | ${cycles} | ${f(median(e.busy.map((b) => b.cpu)), 1)} → ${f(median(e.after.map((a) => a.cpu)), 1)} (${f(cpu, 2)}×) |`;
  });
  const md = [
    '## After a quiet spell (bench/investigate/idle-recovery.mjs)',
    '',
    `${cycles} cycles: each server busy ${seconds} s, all idle ${idleSeconds} s, each busy ${seconds} s again; /mcp 2026-07-28 tools/call, 10 connections. Ratios: after-idle ÷ busy, each cycle (R: the server ran a memory-reducing GC while idle) and their median.`,
    '',
    '| server | what | busy req/s | after-idle req/s | after ÷ busy (median) | each cycle | server CPU µs/request busy → after |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  if (out) writeFileSync(out, md);
  return md;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  installCleanup();
  const opt = cliOptions({ cycles: { type: 'string' }, idle: { type: 'string' }, seconds: { type: 'string' }, warmup: { type: 'string' }, out: { type: 'string' } }, USAGE);
  const args = { cycles: Number(opt.cycles ?? 3), idleSeconds: Number(opt.idle ?? 90), seconds: Number(opt.seconds ?? 3), warmupSeconds: Number(opt.warmup ?? 8) };
  if (!(Number.isInteger(args.cycles) && args.cycles >= 1 && args.idleSeconds >= 0 && args.seconds > 0 && args.warmupSeconds >= 0)) {
    console.error(`--cycles must be a whole number ≥ 1, --idle and --warmup ≥ 0, --seconds > 0\n${USAGE}`);
    process.exit(2);
  }
  const md = await runIdleRecovery({ ...args, out: opt.out ?? DEFAULT_OUT });
  console.log(md);
  process.exit(0);
}
