#!/usr/bin/env node
// npm run conformance — runs the server scenarios of @modelcontextprotocol/conformance 0.1.16
// against examples/conformance twice: open (as the manifest is written) and behind a static
// bearer token, reached through a loopback proxy that adds the Authorization header (the suite
// sends none) and passes every other header, Host included, untouched. The suite needs Node ≥ 22
// (fs.globSync), so it runs under the binary scripts/ensure-node22.mjs provides (.tools/node22).
// Exits 1 on any unexpected failed or warning check, or if the protected server answers without
// a token. Flags: --no-build (use dist/ as it is), --scenario NAME (one scenario only).

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { ensureNode22 } from './ensure-node22.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const EXAMPLE = join(ROOT, 'examples/conformance');
/** Pending (not active) scenarios of the suite that fastsvc also passes; run one by one after the active set. */
const EXTRA_SCENARIOS = ['json-schema-2020-12'];
/** Scenarios known to fail, with the reason. Empty: every active scenario must pass. */
const EXPECTED_FAILURES = new Map();

const args = process.argv.slice(2);
const scenario = args.includes('--scenario') ? args[args.indexOf('--scenario') + 1] : undefined;

function fail(msg) {
  console.error(`conformance: ${msg}`);
  process.exit(1);
}

const NODE22 = ensureNode22();

function checkNode22() {
  const v = spawnSync(NODE22, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (Number(v.replace(/^v/, '').split('.')[0]) < 22) fail(`the conformance suite needs Node >= 22, ${NODE22} is ${v}`);
  return v;
}

function startServer(manifest, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/cli.js', 'serve', manifest, '--port', '0', '--no-watch'], {
      cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start in 20 s:\n${err}`)), 20_000);
    child.stderr.on('data', (d) => (err = (err + d).slice(-8000)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }), stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${err}`));
    });
  });
}

/** Loopback proxy adding the bearer token; streams both ways (SSE included). */
function startProxy(target, token) {
  const t = new URL(target);
  const server = http.createServer((req, res) => {
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${server.address().port}`, stop: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) });
  }));
}

function runSuite(url, outDir, only = scenario) {
  return new Promise((resolve) => {
    const argv = [SUITE, 'server', '--url', `${url}/mcp`, '-o', outDir, ...(only ? ['--scenario', only] : [])];
    const child = spawn(NODE22, argv, { cwd: outDir, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.once('exit', (code) => resolve({ code, text }));
  });
}

/** Per scenario: SUCCESS / FAILURE / WARNING counts, from the checks.json files the suite wrote. */
async function tally(outDir) {
  const per = new Map();
  for (const dir of await readdir(outDir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir);
    if (!m) continue;
    const checks = JSON.parse(await readFile(join(outDir, dir, 'checks.json'), 'utf8'));
    const count = (s) => checks.filter((c) => c.status === s).length;
    per.set(m[1], { passed: count('SUCCESS'), failed: count('FAILURE'), warnings: count('WARNING'), problems: checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING') });
  }
  return per;
}

async function pass(label, url, work, only = scenario) {
  const outDir = await mkdtemp(join(work, `${label}-`));
  const { code, text } = await runSuite(url, outDir, only);
  const per = await tally(outDir);
  const planned = Number(/Running \w+ suite \((\d+) scenarios\)/.exec(text)?.[1] ?? (only ? 1 : NaN));
  const crashed = [...text.matchAll(/Failed to run scenario (\S+):/g)].map((m) => m[1]);
  const unexpected = [];
  let checks = 0;
  let failedChecks = 0;
  let warnings = 0;
  for (const [name, r] of per) {
    checks += r.passed;
    failedChecks += r.failed;
    warnings += r.warnings;
    if ((r.failed || r.warnings) && !EXPECTED_FAILURES.has(name)) unexpected.push({ name, problems: r.problems });
  }
  for (const name of crashed) unexpected.push({ name, problems: [{ name, errorMessage: 'the scenario crashed (see suite output)' }] });
  const ok = unexpected.length === 0 && per.size + crashed.length === planned;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${label}: ${per.size - unexpected.length}/${planned} scenarios passed; checks ${checks} passed, ${failedChecks} failed, ${warnings} warnings (suite exit ${code})`);
  for (const u of unexpected) {
    console.log(`  ✗ ${u.name}`);
    for (const p of u.problems) console.log(`      ${p.name}: ${p.errorMessage ?? p.description}`);
  }
  if (!ok && !unexpected.length) console.log(text.slice(-4000));
  return ok;
}

async function main() {
  const v = checkNode22();
  if (!args.includes('--no-build')) {
    const b = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (b.status !== 0) fail('npm run build failed');
  }
  console.log(`conformance suite 0.1.16 under node ${v}${scenario ? `, scenario ${scenario}` : ''}`);
  const work = await mkdtemp(join(tmpdir(), 'fastsvc-conformance-'));
  const stops = [];
  let ok = true;
  try {
    const open = await startServer(join(EXAMPLE, 'svc.yaml'), {});
    stops.push(open.stop);
    ok = (await pass('open', open.url, work)) && ok;
    if (!scenario) for (const extra of EXTRA_SCENARIOS) ok = (await pass(`open ${extra}`, open.url, work, extra)) && ok;

    // The same manifest behind a bearer token: a copy whose routes are protected.
    const copy = join(work, 'protected');
    await cp(EXAMPLE, copy, { recursive: true });
    const doc = parse(await readFile(join(copy, 'svc.yaml'), 'utf8'));
    doc.routes = { public: ['/', '/docs', '/healthz', '/readyz', '/metadata'], protected: ['/svc', '/mcp', '/ws'] };
    doc.auth = { token: '${CONFORMANCE_TOKEN}' };
    await writeFile(join(copy, 'svc.yaml'), stringify(doc));
    const token = randomBytes(24).toString('base64url');
    const guarded = await startServer(join(copy, 'svc.yaml'), { CONFORMANCE_TOKEN: token });
    stops.push(guarded.stop);
    const bare = await fetch(`${guarded.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    if (bare.status !== 401 || !bare.headers.get('www-authenticate')?.startsWith('Bearer ')) {
      console.log(`FAIL bearer: the protected server answered ${bare.status} to a request without a token (expected 401 with a Bearer challenge)`);
      ok = false;
    }
    const proxy = await startProxy(guarded.url, token);
    stops.push(proxy.stop);
    ok = (await pass('bearer', proxy.url, work)) && ok;
    if (!scenario) for (const extra of EXTRA_SCENARIOS) ok = (await pass(`bearer ${extra}`, proxy.url, work, extra)) && ok;
  } finally {
    for (const stop of stops.reverse()) await stop();
    await rm(work, { recursive: true, force: true });
  }
  process.exit(ok ? 0 : 1);
}

main().catch((e) => fail(e.stack ?? String(e)));
