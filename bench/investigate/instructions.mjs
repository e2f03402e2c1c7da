// `node bench/investigate/instructions.mjs`: user-space instructions per request, counted by valgrind's callgrind, for the
// raw node:http echo and fastsvc's hot HTTP scenarios (scenarios.mjs). Throughput on a shared host moves by ±30%
// within seconds; an instruction count moves by under 1% between rounds and up to ~5% between runs (the JIT
// decides a little differently each time), so it shows what a change does to the
// server's own work. It counts neither the kernel (syscalls, loopback TCP) nor cache misses or the load generator,
// so it complements the throughput ratios of `npm run bench`; it does not replace them.
// Each server runs under callgrind with instrumentation off (ensure-valgrind.sh beside it installs valgrind); after
// --warmup requests on one connection (the JIT settled), instrumentation is switched on around --requests requests,
// the counts are dumped and zeroed, and Ir/request is the dump's total over the requests. The first SETTLE
// instrumented rounds are thrown away (switching instrumentation on retranslates the JIT's code: the first round
// counts twice as much, the second ~13% more, the later ones agree within 1%).
// Prints a markdown table (median of the kept rounds, and the raw echo's count over each scenario's, a "work
// ratio") and writes it to --out when given. With --functions N it also says where a /mcp call's instructions beyond
// the raw echo of the same request go: callgrind_annotate's per-function counts of each one's last round, the N
// functions that differ most, per request. V8's builtins and C++ runtime have names in node's binary; JIT-compiled
// JavaScript is named from the perf map V8 writes when the server runs with --perf-basic-prof-only-functions
// (only with --functions; /tmp/perf-PID.map, removed once read). --warm-with a,b first sends each measured scenario's
// server the traffic of those of a,b it serves, as `npm run bench` does before a scenario's turn. --cache-sim has callgrind also simulate the
// caches and branch predictors (slower) and adds a second table: L1 and last-level cache misses and mispredicted
// branches per request, and KCachegrind's cycle estimate from them (Ir + 10 × L1 misses + 100 × LL misses + 10 ×
// mispredicts), whose ratios say what instruction counts leave out: a call that runs more distinct code and data
// misses the caches and predictors more often per instruction. Exit 1 when a server or a round fails.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SAME_REQUEST, SCENARIOS, SERVERS, TOKEN } from '../scenarios.mjs';
import { cliOptions } from '../lib/cli-args.mjs';
import { KINDS } from '../lib/clients.mjs';
import { autocannonLoad } from '../lib/load.mjs';
import { OAuthFlow } from '../lib/oauth.mjs';
import { installCleanup, ROOT, startServer, stopServer } from '../lib/proc.mjs';

/** Instrumented rounds run and dropped before the measured ones. */
const SETTLE = 2;
const DEFAULT = ['raw', 'raw-mcp', 'raw-mcp-2026', 'fastsvc-svc', 'fastsvc-mcp', 'fastsvc-mcp-2026', 'fastsvc-svc-nometrics', 'fastsvc-svc-observed', 'fastsvc-oauth-svc'];
const USAGE = 'usage: node bench/investigate/instructions.mjs [--only a,b] [--requests N] [--warmup N] [--rounds N] [--functions N] [--warm-with a,b] [--cache-sim] [--smoke] [--out FILE]';
const opt = cliOptions({ only: { type: 'string' }, requests: { type: 'string' }, warmup: { type: 'string' }, rounds: { type: 'string' }, functions: { type: 'string' }, 'warm-with': { type: 'string' }, 'cache-sim': { type: 'boolean' }, smoke: { type: 'boolean' }, out: { type: 'string' } }, USAGE);
const smoke = Boolean(opt.smoke);
const cfg = {
  requests: Number(opt.requests ?? (smoke ? 300 : 5000)),
  warmup: Number(opt.warmup ?? (smoke ? 1000 : 30000)),
  rounds: Number(opt.rounds ?? (smoke ? 2 : 3)),
  functions: Number(opt.functions ?? 0),
};
const names = opt.only?.split(',').map((s) => s.trim()).filter(Boolean) ?? (smoke ? ['raw', 'fastsvc-svc'] : DEFAULT);
const chosen = names.map((n) => SCENARIOS.find((s) => s.name === n));
const warmNames = opt['warm-with']?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
const warmWith = warmNames.map((n) => SCENARIOS.find((s) => s.name === n));
const measurable = (scn) => scn && ['http', 'mcp'].includes(scn.kind) && !SERVERS[scn.server].postgres;
const bad = [...names.filter((n, i) => !measurable(chosen[i])), ...warmNames.filter((n, i) => !measurable(warmWith[i]))];
if (bad.length || !(cfg.requests >= 1 && cfg.warmup >= 0 && cfg.rounds >= 2 && Number.isInteger(cfg.functions) && cfg.functions >= 0)) {
  console.error(`${bad.length ? `not an http or mcp scenario on a server without PostgreSQL: ${bad.join(', ')}\n` : ''}--requests ≥ 1, --warmup ≥ 0, --rounds ≥ 2, --functions ≥ 0\n${USAGE}`);
  process.exit(2);
}

execFileSync('sh', [fileURLToPath(new URL('ensure-valgrind.sh', import.meta.url))], { stdio: 'inherit' });
installCleanup();
const dir = mkdtempSync(join(tmpdir(), 'fastsvc-instructions-'));
const env = { BENCH_TOKEN: TOKEN, SVC_TOKEN: TOKEN, BENCH_DATA_DIR: dir };
const cacheSim = Boolean(opt['cache-sim']);
const wrap = ['valgrind', '--tool=callgrind', ...(cacheSim ? ['--cache-sim=yes', '--branch-sim=yes'] : []), '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/cg.%p`];
// vgdb names its pipe after $USER and $HOST: the server runs with HOST=127.0.0.1 (startServer), so its controller must too.
const control = (pid, ...args) => execFileSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOST: '127.0.0.1' } });
const log = (m) => console.error(`[instructions] ${m}`);

/** Instructions per request over the rounds kept (the first instrumented round is dropped). */
async function measure(scn) {
  const server = await startServer({ ...SERVERS[scn.server], wrap, nodeArgs: cfg.functions ? ['--perf-basic-prof-only-functions'] : [] }, env, 180_000);
  try {
    const tokenFor = async (s) => (s.token === 'oauth' ? (await OAuthFlow.open(server.url)).accessToken(`${server.url}${s.kind === 'mcp' ? s.path ?? '/mcp' : '/svc'}`) : TOKEN);
    const token = await tokenFor(scn);
    const kind = KINDS[scn.kind];
    const target = await kind.open(scn, server.url, token);
    try {
      await kind.check(target);
      // --warm-with: the server first serves other traffic it carries in `npm run bench` (what it has served
      // shapes the JIT's feedback), then the measured scenario's own warm-up.
      for (const other of warmWith.filter((o) => o.server === scn.server)) {
        const t = await KINDS[other.kind].open(other, server.url, await tokenFor(other));
        try {
          await KINDS[other.kind].check(t);
          if (cfg.warmup) await autocannonLoad(t, { amount: cfg.warmup, connections: 1 });
          log(`${scn.name}: its server served ${cfg.warmup} requests of ${other.name} first`);
        } finally {
          await KINDS[other.kind].close(t);
        }
      }
      if (cfg.warmup) await autocannonLoad(target, { amount: cfg.warmup, connections: 1 });
      const perRequest = [];
      const events = [];
      let functions;
      for (let round = 0; round < SETTLE + cfg.rounds; round++) {
        control(server.pid, '--instr=on');
        control(server.pid, '--zero');
        const r = await autocannonLoad(target, { amount: cfg.requests, connections: 1 });
        if (r.total !== cfg.requests || r.errors || r.non2xx) throw new Error(`round ${round}: ${r.total} answers, ${r.errors ?? 0} errors, ${r.non2xx ?? 0} non-2xx`);
        control(server.pid, `--dump=${scn.name}-${round}`);
        control(server.pid, '--instr=off');
        const totals = dumpTotals(server.pid, round + 1);
        const ir = totals.Ir;
        if (round >= SETTLE) {
          perRequest.push(ir / r.total);
          events.push(Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v / r.total])));
        }
        log(`${scn.name} round ${round}${round >= SETTLE ? '' : ' (settling, dropped)'}: ${Math.round(ir / r.total)} Ir/request`);
        if (cfg.functions && round === SETTLE + cfg.rounds - 1) {
          functions = perFunction(server.pid, round + 1, r.total);
          if (cacheSim) functions.origins = perOrigin(server.pid, round + 1, r.total);
        }
      }
      return { perRequest, events, functions };
    } finally {
      await kind.close(target);
    }
  } finally {
    await stopServer(server);
    rmSync(perfMap(server.pid), { force: true });
  }
}

/** Where V8 writes the start, size and name of each function it compiles (--perf-basic-prof-only-functions). */
const perfMap = (pid) => `/tmp/perf-${pid}.map`;

/** Code address → "JS name (file:line:column)" from the server's perf map, file paths relative to the repository. */
function jitNames(pid) {
  const ranges = readFileSync(perfMap(pid), 'utf8').split('\n').filter(Boolean).map((line) => {
    const [start, size, ...name] = line.split(' ');
    // e.g. "JS:*handle file:///…/dist/cli.js:13:27128" (* optimized, ^ baseline, ~ interpreted)
    const [fn, where] = name.join(' ').replace(/^JS:[*^~+]?/, '').split(/ (?=\S+$)/);
    const label = where === undefined ? `JS ${fn}` : `JS ${fn || '(anonymous)'} (${where.replace(`file://${ROOT}`, '')})`;
    return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: label };
  }).sort((a, b) => a.start - b.start);
  return (address) => {
    let lo = 0;
    let hi = ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ranges[mid].end <= address) lo = mid + 1;
      else if (ranges[mid].start > address) hi = mid - 1;
      else return ranges[mid].name;
    }
    return 'JIT code the perf map does not name (stubs, regular expressions)';
  };
}

/** Ir per request by function in the n-th dump of process pid (callgrind_annotate, exclusive counts), plus `total`. */
function perFunction(pid, n, requests) {
  const text = execFileSync('callgrind_annotate', ['--show=Ir', '--threshold=100', join(dir, `cg.${pid}.${n}`)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const jit = jitNames(pid);
  const by = new Map();
  let total = 0;
  for (const line of text.split('\n')) {
    // e.g. "20,029,108 ( 2.91%)  ???:Builtins_KeyedLoadIC_Megamorphic [/usr/bin/node]"
    const m = /^\s*([\d,]+) (?:\(\s*[\d.]+%\))?\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    const ir = Number(m[1].replaceAll(',', '')) / requests;
    if (m[2].startsWith('PROGRAM TOTALS')) total = ir;
    else {
      const fn = m[2].replace(/ \[[^\]]*\]$/, '').replace(/^\?\?\?:/, '');
      const name = /^0x[0-9a-f]+$/.test(fn) ? jit(parseInt(fn, 16)) : fn.replaceAll('(anonymous namespace)', '{anonymous}').replace(/\(.*$/, ''); // C++: no argument list
      by.set(name, (by.get(name) ?? 0) + ir);
    }
  }
  if (!total) throw new Error(`no totals in callgrind_annotate's output for dump ${n} of ${pid}`);
  return { total, by };
}

/** Where code comes from, for --functions with --cache-sim: fastsvc's bundle, Node's JavaScript, V8's builtins, … */
function originOf(fn, binary, jit) {
  if (/^0x[0-9a-f]+$/.test(fn)) {
    const name = jit(parseInt(fn, 16));
    if (name.includes('(dist/')) return "fastsvc's JavaScript (dist/)";
    if (name.includes('(node:')) return "Node's JavaScript (node:…)";
    if (name.includes('(bench/')) return "the echo's JavaScript (bench/)";
    if (name.includes('node_modules/')) return 'JavaScript of dependencies (node_modules/)';
    return name.startsWith('JS ') ? 'other JavaScript' : name;
  }
  if (fn.startsWith('Builtins_')) return "V8's builtins (Builtins_*)";
  if (binary.includes('libc.so')) return 'libc (malloc, memcpy, …)';
  return 'C++ of Node and V8 (llhttp, the JSON parser, GC, …)';
}

/** Simulated events per request by origin in the n-th dump of process pid, each with costs() (--functions --cache-sim). */
function perOrigin(pid, n, requests) {
  const shown = ['Ir', 'I1mr', 'D1mr', 'D1mw', 'ILmr', 'DLmr', 'DLmw', 'Bcm', 'Bim'];
  const text = execFileSync('callgrind_annotate', [`--show=${shown.join(',')}`, '--threshold=100', join(dir, `cg.${pid}.${n}`)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const jit = jitNames(pid);
  const sums = new Map();
  for (const line of text.split('\n')) {
    // e.g. "12,075,531 ( 2.77%) 347,033 ( 1.98%) … .  ???:Builtins_KeyedLoadIC_Megamorphic [/usr/bin/node]" ("." is zero)
    const tokens = line.replace(/\(\s*[\d.]+%\)/g, ' ').trim().split(/\s+/);
    if (tokens.length <= shown.length || !tokens.slice(0, shown.length).every((t) => t === '.' || /^[\d,]+$/.test(t))) continue;
    const rest = tokens.slice(shown.length).join(' ');
    if (rest.startsWith('PROGRAM TOTALS')) continue;
    const binary = /\[([^\]]*)\]$/.exec(rest)?.[1] ?? '';
    const origin = originOf(rest.replace(/ \[[^\]]*\]$/, '').replace(/^\?\?\?:/, ''), binary, jit);
    const sum = sums.get(origin) ?? Object.fromEntries(shown.map((e) => [e, 0]));
    shown.forEach((e, i) => (sum[e] += tokens[i] === '.' ? 0 : Number(tokens[i].replaceAll(',', '')) / requests));
    sums.set(origin, sum);
  }
  if (!sums.size) throw new Error(`no per-function lines in callgrind_annotate's output for dump ${n} of ${pid}`);
  return new Map([...sums].map(([origin, e]) => [origin, costs(e)]));
}

/** Markdown: estimated cycles per request by origin for scenario `a` and its same-request echo `b` (--functions --cache-sim). */
function originTable(a, b) {
  const names = [...new Set([...a.functions.origins.keys(), ...b.functions.origins.keys()])];
  const of = (r, n) => r.functions.origins.get(n) ?? { ir: 0, i1: 0, d1: 0, ll: 0, mispredicts: 0, cycles: 0 };
  const total = (r) => [...r.functions.origins.values()].reduce((x, c) => x + c.cycles, 0);
  const diff = (n) => of(a, n).cycles - of(b, n).cycles;
  const k = (x) => `${(x / 1000).toFixed(1)}k`;
  const own = of(a, "fastsvc's JavaScript (dist/)").cycles;
  const raw = rows.find((r) => r.scn.name === 'raw' && r.estimated)?.estimated.cycles;
  return [
    `#### ${a.scn.name} against ${b.scn.name} by origin (estimated cycles per request: Ir + 10·L1 + 100·LL + 10·mispredicts; last round)`,
    '',
    `| origin | ${a.scn.name}: Ir, I1 / D1 misses, mispredicts → cycles | ${b.scn.name}: same | difference in cycles |`,
    '| --- | --- | --- | --- |',
    ...names.sort((x, y) => Math.abs(diff(y)) - Math.abs(diff(x))).map((n) => {
      const [x, y] = [of(a, n), of(b, n)];
      const cell = (c) => `${k(c.ir)}, ${Math.round(c.i1)} / ${Math.round(c.d1)}, ${Math.round(c.mispredicts)} → ${k(c.cycles)}`;
      return `| ${n} | ${cell(x)} | ${cell(y)} | ${diff(n) >= 0 ? '+' : ''}${k(diff(n))} |`;
    }),
    `| all | ${k(total(a))} | ${k(total(b))} | ${total(a) - total(b) >= 0 ? '+' : ''}${k(total(a) - total(b))} |`,
    '',
    `fastsvc's own JavaScript is ${k(own)} of ${k(total(a))} estimated cycles (${((100 * own) / total(a)).toFixed(1)}%)${raw ? `; were it free, the raw echo ÷ this would be ${(raw / (total(a) - own)).toFixed(2)}× instead of ${(raw / total(a)).toFixed(2)}×` : ''}.`,
  ].join('\n');
}

/** Markdown: the `count` functions whose Ir/request differ most between scenario `a` and its same-request echo `b`. */
function functionTable(a, b, count) {
  const names = [...new Set([...a.functions.by.keys(), ...b.functions.by.keys()])];
  const diff = (n) => (a.functions.by.get(n) ?? 0) - (b.functions.by.get(n) ?? 0);
  const top = names.sort((x, y) => Math.abs(diff(y)) - Math.abs(diff(x))).slice(0, count);
  const f = (x) => Math.round(x).toLocaleString('en-US');
  const sign = (x) => (x > 0 ? `+${f(x)}` : f(x));
  return [
    `#### ${a.scn.name} against ${b.scn.name} (Ir/request in each one's last round; exclusive counts)`,
    '',
    `| function | ${a.scn.name} | ${b.scn.name} | difference |`,
    '| --- | --- | --- | --- |',
    `| all (the dump's total) | ${f(a.functions.total)} | ${f(b.functions.total)} | ${sign(a.functions.total - b.functions.total)} |`,
    ...top.map((n) => `| ${n.replaceAll('|', '\\|')} | ${f(a.functions.by.get(n) ?? 0)} | ${f(b.functions.by.get(n) ?? 0)} | ${sign(diff(n))} |`),
  ].join('\n');
}

/** The totals of the n-th dump of process pid by event (Ir; with --cache-sim also I1mr, D1mr, … Bcm, Bim). */
function dumpTotals(pid, n) {
  const text = readFileSync(join(dir, `cg.${pid}.${n}`), 'utf8');
  const names = /^events: (.+)$/m.exec(text)?.[1].trim().split(/\s+/);
  const values = /^(?:summary|totals): ([\d ]+)$/m.exec(text)?.[1].trim().split(/\s+/).map(Number);
  if (!names || !values || names[0] !== 'Ir') throw new Error(`no totals in callgrind dump ${n} of ${pid}`);
  return Object.fromEntries(names.map((name, i) => [name, values[i] ?? 0]));
}

/** Per request, from callgrind's cache and branch simulation: L1 misses, LL misses, mispredicts, KCachegrind's CEst. */
function costs(e) {
  const l1 = e.I1mr + e.D1mr + e.D1mw;
  const ll = e.ILmr + e.DLmr + e.DLmw;
  const mispredicts = e.Bcm + e.Bim;
  return { ir: e.Ir, i1: e.I1mr, d1: e.D1mr + e.D1mw, ll, mispredicts, cycles: e.Ir + 10 * l1 + 100 * ll + 10 * mispredicts };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = [];
let failed = false;
try {
  for (const scn of chosen) {
    try {
      const { perRequest: per, events, functions } = await measure(scn);
      // With --cache-sim, the costs of the round whose estimate is the median.
      const estimated = cacheSim ? events.map(costs).sort((a, b) => a.cycles - b.cycles)[events.length >> 1] : undefined;
      rows.push({ scn, ir: median(per), per, functions, estimated });
    } catch (err) {
      failed = true;
      log(`${scn.name}: FAILED: ${err.message}`);
      rows.push({ scn, error: err.message });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const raw = rows.find((r) => r.scn.name === 'raw' && r.ir)?.ir;
const table = [
  `### Instructions per request (bench/investigate/instructions.mjs: callgrind, ${cfg.requests} requests per round on one connection after ${cfg.warmup} warm-up ones${warmNames.length ? `, each server having first served ${cfg.warmup} of each of ${warmNames.join(', ')} that it serves` : ''}; median of ${cfg.rounds} rounds)`,
  '',
  '| scenario | what | Ir/request (median) | rounds | raw echo ÷ this (work ratio) | raw echo of the same request ÷ this |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rows.map((r) => {
    if (r.error) return `| ${r.scn.name} | ${r.scn.label} | failed: ${r.error} | — | — | — |`;
    const same = rows.find((x) => x.scn.name === SAME_REQUEST[r.scn.name] && x.ir);
    return `| ${r.scn.name} | ${r.scn.label} | ${Math.round(r.ir).toLocaleString('en-US')} | ${r.per.map((x) => Math.round(x / 100) / 10).join(', ')}k | ${raw ? `${(raw / r.ir).toFixed(2)}×` : '—'} | ${same ? `${(same.ir / r.ir).toFixed(2)}× ${same.scn.name}` : '—'} |`;
  }),
].join('\n');
const rawCycles = rows.find((r) => r.scn.name === 'raw' && r.estimated)?.estimated.cycles;
const k = (x) => `${(x / 1000).toFixed(1)}k`;
const cacheTable = !cacheSim ? undefined : [
  `### Cache misses, mispredicted branches and estimated cycles per request (--cache-sim: callgrind's simulation; the round with the median estimate)`,
  '',
  '| scenario | Ir | I1 misses | D1 misses | LL misses | mispredicted branches | estimated cycles (Ir + 10·L1 + 100·LL + 10·mispredicts) | raw echo ÷ this (cycles) | raw echo of the same request ÷ this (cycles) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.filter((r) => r.estimated).map((r) => {
    const c = r.estimated;
    const same = rows.find((x) => x.scn.name === SAME_REQUEST[r.scn.name] && x.estimated);
    return `| ${r.scn.name} | ${k(c.ir)} | ${Math.round(c.i1).toLocaleString('en-US')} | ${Math.round(c.d1).toLocaleString('en-US')} | ${Math.round(c.ll).toLocaleString('en-US')} | ${Math.round(c.mispredicts).toLocaleString('en-US')} | ${k(c.cycles)} | ${rawCycles ? `${(rawCycles / c.cycles).toFixed(2)}×` : '—'} | ${same ? `${(same.estimated.cycles / c.cycles).toFixed(2)}× ${same.scn.name}` : '—'} |`;
  }),
].join('\n');
const pairs = rows.filter((r) => r.functions).map((r) => [r, rows.find((x) => x.scn.name === SAME_REQUEST[r.scn.name] && x.functions)]).filter(([, echo]) => echo);
const report = [
  table,
  ...(cacheTable ? [cacheTable] : []),
  ...(pairs.length === 0 ? [] : [
  `### Where a /mcp call's instructions beyond the raw echo of the same request go (--functions ${cfg.functions})`,
    ...pairs.flatMap(([r, echo]) => [functionTable(r, echo, cfg.functions), ...(r.functions.origins && echo.functions.origins ? [originTable(r, echo)] : [])])]),
].join('\n\n');
console.log(report);
if (opt.out) writeFileSync(opt.out, `${report}\n`);
process.exit(failed ? 1 : 0);
