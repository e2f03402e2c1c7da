// Where does a proxied tools/call's CPU go (issue 31)? One or more builds of fastsvc (`--builds dist,dist-main`: each
// folder holds a `cli.js`, e.g. a copy of main's `dist/` for a before/after in one sitting), each serving
// bench/fastsvc-upstream.svc.yaml, are driven in interleaved rounds with its native template call (bench.echo) and the
// proxied one (ev.echo → server-everything over stdio), on one 2025 /mcp session and on 2026-07-28 (`--eras`),
// 10 connections, as bench/run.mjs's fastsvc-upstream rows are. Reported per build: fastsvc's own CPU µs per call
// (/proc, the stdio child apart) for each row, medians of the rounds, and the proxied ÷ native ratio. With
// `--profile`, the last build listed runs under `node --cpu-prof` and its profile's self time is summed per function
// (the N heaviest, `--top`) and per package, for the proxied 2025 row only (it runs last, alone, after the rounds).
// Guarantees: every server is checked to answer each row's call right before it is measured; children die with the
// harness; run it under the shared lock: `flock /tmp/fastsvc-bench.lock node bench/investigate/proxied-call.mjs`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cliOptions } from '../lib/cli-args.mjs';
import { KINDS } from '../lib/clients.mjs';
import { cpuMs, installCleanup, ROOT, startServer, stopServer } from '../lib/proc.mjs';
import { median } from '../lib/report.mjs';
import { SCENARIOS } from '../scenarios.mjs';

const USAGE = 'usage: node bench/investigate/proxied-call.mjs [--builds dist[,dir…]] [--eras 2025,2026] [--rounds 3] [--seconds 5] [--profile] [--top 25]';
const str = (d) => ({ type: 'string', default: d });
const opts = cliOptions({ builds: str('dist'), eras: str('2025,2026'), rounds: str('3'), seconds: str('5'), profile: { type: 'boolean', default: false }, top: str('25') }, USAGE);
const TOKEN = 'proxied-call-investigation-token';
const rowsOf = (era) => (era === '2026' ? ['fastsvc-upstream-native-mcp-2026', 'fastsvc-upstream-mcp-2026'] : ['fastsvc-upstream-native-mcp', 'fastsvc-upstream-mcp']);
const scenario = (name) => SCENARIOS.find((s) => s.name === name) ?? (() => { throw new Error(`no scenario ${name}`); })();

installCleanup();
const builds = String(opts.builds).split(',');
const eras = String(opts.eras).split(',');
const seconds = Number(opts.seconds);
const profDir = opts.profile ? mkdtempSync(join(tmpdir(), 'proxied-call-prof-')) : undefined;

const servers = [];
for (const [i, dir] of builds.entries()) {
  const profiled = profDir && i === builds.length - 1;
  const def = { argv: [join(dir, 'cli.js'), 'serve', 'bench/fastsvc-upstream.svc.yaml', '--port', '0', '--no-watch'], ...(profiled && { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] }) };
  const server = await startServer(def, { SVC_TOKEN: TOKEN });
  const rows = {};
  for (const name of eras.flatMap(rowsOf)) {
    const scn = scenario(name);
    rows[name] = { scn, t: await KINDS.mcp.open(scn, server.url, TOKEN), cpu: [], rps: [] };
  }
  servers.push({ dir, server, rows, profiled });
}

const measure = async (s, row) => {
  await KINDS.mcp.check(row.t);
  const cpu0 = cpuMs(s.server.pid);
  const res = await KINDS.mcp.load(row.t, { seconds });
  if (res.non2xx || res.errors) throw new Error(`${s.dir} ${row.scn.name}: ${res.non2xx} non-2xx, ${res.errors} errors`);
  return { cpuUs: ((cpuMs(s.server.pid) - cpu0) * 1000) / res.total, rps: res.rps };
};

for (let round = 1; round <= Number(opts.rounds); round++) {
  for (const s of servers) {
    for (const row of Object.values(s.rows)) {
      const { cpuUs, rps } = await measure(s, row);
      row.cpu.push(cpuUs);
      row.rps.push(rps);
      console.error(`[proxied-call] round ${round} ${s.dir} ${row.scn.name}: ${Math.round(rps)} req/s, ${cpuUs.toFixed(1)} µs CPU/call`);
    }
  }
}

console.log(`| build | row | req/s | fastsvc CPU µs/call | × native |`);
console.log(`|---|---|---|---|---|`);
for (const s of servers) {
  for (const era of eras) {
    const [native, proxied] = rowsOf(era).map((n) => s.rows[n]);
    const n = median(native.cpu);
    const p = median(proxied.cpu);
    console.log(`| ${s.dir} | ${native.scn.name} | ${Math.round(median(native.rps))} | ${n.toFixed(1)} | 1 |`);
    console.log(`| ${s.dir} | ${proxied.scn.name} | ${Math.round(median(proxied.rps))} | ${p.toFixed(1)} | ${(p / n).toFixed(2)} |`);
  }
}

if (profDir) {
  const s = servers.find((x) => x.profiled);
  const row = s.rows[rowsOf(eras[0])[1]];
  for (const r of Object.values(s.rows)) await KINDS.mcp.close(r.t);
  await stopServer(s.server); // a fresh one: the profile holds only the proxied row's calls (and start-up)
  const def = { argv: [join(s.dir, 'cli.js'), 'serve', 'bench/fastsvc-upstream.svc.yaml', '--port', '0', '--no-watch'], nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] };
  for (const f of readdirSync(profDir)) rmSync(join(profDir, f));
  s.server = await startServer(def, { SVC_TOKEN: TOKEN });
  const t = await KINDS.mcp.open(row.scn, s.server.url, TOKEN);
  await KINDS.mcp.load(t, { seconds: 2 }); // warm-up
  const res = await KINDS.mcp.load(t, { seconds });
  await KINDS.mcp.close(t);
  await stopServer(s.server);
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no .cpuprofile (did it exit on SIGTERM?)');
  summarize(JSON.parse(readFileSync(join(profDir, file), 'utf8')), res.total, Number(opts.top));
  rmSync(profDir, { recursive: true });
}
for (const s of servers) await stopServer(s.server);
process.exit(0);

/** Self time per function and per package (node_modules/NAME, src, node:, V8's (garbage collector), (program), …), µs per call. */
function summarize(prof, calls, top) {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map(); // node id → µs
  for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + prof.timeDeltas[i]);
  const fns = new Map();
  const pkgs = new Map();
  let busy = 0;
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id);
    if (f.functionName === '(idle)') continue;
    busy += us;
    const where = f.url ? f.url.replace(/^file:\/\//, '').replace(resolve(ROOT) + '/', '') : '';
    const fn = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
    const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(where)?.[1] ?? (where.startsWith('node:') ? 'node:' + where.slice(5).split('/')[0] : where.split('/')[0] || f.functionName);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
  }
  const table = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `| ${(us / calls).toFixed(2)} | ${((100 * us) / busy).toFixed(1)}% | \`${k}\` |`).join('\n');
  console.log(`\nProfile of the proxied 2025 row alone: ${calls} calls, busy ${(busy / calls).toFixed(1)} µs/call (self time, sampled; start-up and warm-up included)\n`);
  console.log(`| µs/call | share | package |\n|---|---|---|\n${table(pkgs, 20)}\n`);
  console.log(`| µs/call | share | function |\n|---|---|---|\n${table(fns, top)}`);
}
