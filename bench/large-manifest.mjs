#!/usr/bin/env node
// Large manifests: how start-up, reload, memory, `tools/list`, one `tools/call` and `svc validate`
// grow with the number of capabilities. For each size (default 10, 1,000, 10,000 template tools with
// distinct input schemas, from bench/lib/gen-manifest.mjs) it starts the real `svc serve FILE --port 0`
// (watching on) and measures: spawn → first 200 from /readyz; RSS after ready and after walking the
// whole list; `tools/list` over /mcp (MCP 2026-07-28, stateless) — the first page and the whole list
// walked page by page with nextCursor (medians; a first page is timed to its last byte, a walk includes parsing
// each answer); `GET /svc` likewise (first page, and every page by next_cursor); one `tools/call` (median); a reload (rewrite the file
// with a new template marker → first call that answers with it) and the peak RSS during it (VmHWM,
// reset through /proc/PID/clear_refs before the edit, else VmRSS polled every 2 ms); a rejected reload
// (the last tool given an undeclared scope → /readyz reports that text refused) and its peak RSS; `svc validate FILE`
// wall time and peak RSS (getrusage of the child). Every call's answer is checked (the list must hold
// every tool exactly once, the call must echo its id), so a fast wrong answer never gets a number.
// Run it under the shared lock: flock /tmp/fastsvc-bench.lock node bench/large-manifest.mjs
//
//   node bench/large-manifest.mjs [--sizes 10,1000,10000] [--same-schemas] [--json] [--page-size N] [--samples 15] [--out bench/results/large-manifest.json]
// --json writes the generated manifests as JSON (the same value; fastsvc reads it without the YAML parser);
// --page-size sets server.list_page_size in them.
//   FASTSVC_CLI=/path/to/other/dist/cli.js points it at another build.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from './lib/clients.mjs';
import { agent, CLI, mcp, pageMs, peakDuring, timed, TOKEN, validateRun, walkList, walkSvc } from './lib/catalog-probes.mjs';
import { generateManifest, requiredArgs, toolName } from './lib/gen-manifest.mjs';
import { installCleanup, ROOT, rssMiB, sleep, startServer, stopServer, waitFor200 } from './lib/proc.mjs';
import { median } from './lib/report.mjs';
import { linePlot } from './lib/svg-plot.mjs';
import { fileURLToPath } from 'node:url';


function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}


async function callOnce(base, i, same) {
  const name = toolName(i);
  const msg = await mcp(base, 'tools/call', { name, arguments: requiredArgs(i, same) }, name);
  const text = msg.result?.content?.[0]?.text;
  if (msg.result?.isError || typeof text !== 'string') throw new Error(`tools/call ${name} answered ${JSON.stringify(msg).slice(0, 200)}`);
  return text;
}


async function measure(n, { same, json, pageSize, samples, dir }) {
  const file = join(dir, `large-${n}.svc.yaml`);
  writeFileSync(file, generateManifest(n, { same, json, pageSize, marker: 'v1' }));
  const row = { n };
  const t0 = performance.now();
  const server = await startServer({ argv: [CLI, 'serve', file, '--port', '0'] }, { SVC_TOKEN: TOKEN, LOG_LEVEL: 'warn' }, 120_000);
  try {
    await waitFor200(`${server.url}/readyz`, 120_000);
    row.readyMs = performance.now() - t0;
    row.rssReadyMiB = rssMiB(server.pid);
    const walk = await walkList(server.url);
    if (walk.names.length !== n || new Set(walk.names).size !== n) throw new Error(`tools/list walk gave ${walk.names.length} names (${new Set(walk.names).size} distinct), want ${n}`);
    row.pages = walk.pages;
    const svcWalk = await walkSvc(server.url);
    if (svcWalk.names.length !== n || new Set(svcWalk.names).size !== n) throw new Error(`GET /svc walk gave ${svcWalk.names.length} names (${new Set(svcWalk.names).size} distinct), want ${n}`);
    row.svcPages = svcWalk.pages;
    row.rssListMiB = rssMiB(server.pid);
    const first = [];
    const all = [];
    const svcFirst = [];
    const svcAll = [];
    const calls = [];
    const probe = Math.floor(n / 2);
    for (let s = 0; s < samples; s++) {
      first.push(await pageMs(server.url, 'mcp'));
      all.push((await timed(() => walkList(server.url)))[0]);
      svcFirst.push(await pageMs(server.url, 'svc'));
      svcAll.push((await timed(() => walkSvc(server.url)))[0]);
      const [ms, text] = await timed(() => callOnce(server.url, probe, same));
      if (!text.startsWith('v1 ')) throw new Error(`tools/call answered ${text}`);
      calls.push(ms);
    }
    row.listMs = median(first);
    row.listAllMs = median(all);
    row.svcListMs = median(svcFirst);
    row.svcListAllMs = median(svcAll);
    row.callMs = median(calls);
    // Reload: a new template marker in every tool; in force when a call answers with it.
    const text = generateManifest(n, { same, json, pageSize, marker: 'v2' });
    const [peak, reloadMs] = await peakDuring(server.pid, async () => {
      const r0 = performance.now();
      writeFileSync(file, text);
      for (;;) {
        const answer = await callOnce(server.url, probe, same);
        if (answer.startsWith('v2 ')) return performance.now() - r0;
        if (performance.now() - r0 > 120_000) throw new Error('the reload was not in force after 120 s');
        await sleep(2);
      }
    });
    row.reloadMs = reloadMs;
    row.rssReloadPeakMiB = peak;
    row.rssAfterReloadMiB = rssMiB(server.pid);
    // A rejected reload: the last tool needs an undeclared scope; done when /readyz reports the refusal of that text.
    const bad = generateManifest(n, { same, json, pageSize, marker: 'v2' });
    const cut = bad.lastIndexOf('catalog.use');
    const badText = `${bad.slice(0, cut)}nope.use${bad.slice(cut + 'catalog.use'.length)}`;
    const badHash = createHash('sha256').update(badText).digest('hex');
    const [rejectPeak, rejectMs] = await peakDuring(server.pid, async () => {
      const r0 = performance.now();
      writeFileSync(file, badText);
      for (;;) {
        const last = JSON.parse((await request(`${server.url}/readyz`)).body).last_reload;
        if (last?.hash === badHash) {
          if (last.ok !== false) throw new Error('a manifest with an undeclared scope was applied');
          return performance.now() - r0;
        }
        if (performance.now() - r0 > 120_000) throw new Error('the rejected reload was not reported after 120 s');
        await sleep(2);
      }
    });
    row.rejectMs = rejectMs;
    row.rssRejectPeakMiB = rejectPeak;
    writeFileSync(file, text); // svc validate below times the valid catalog
    if (server.died()) throw new Error(`server ${server.died()}`);
  } finally {
    await stopServer(server);
  }
  const v = await validateRun(file);
  row.validateMs = v.ms;
  row.validatePeakMiB = v.peakMiB;
  return row;
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 1 : 0) : 'n/a');

function table(rows) {
  const head = '| tools | ready ms | RSS ready MiB | RSS after list MiB | list page 1 ms | whole list ms (pages) | GET /svc page 1 ms | whole GET /svc ms (pages) | call ms | reload ms | reload peak RSS MiB | rejected reload ms | its peak RSS MiB | validate ms | validate peak MiB |';
  const lines = rows.map((r) => `| ${r.n} | ${f1(r.readyMs)} | ${f1(r.rssReadyMiB)} | ${f1(r.rssListMiB)} | ${f1(r.listMs)} | ${f1(r.listAllMs)} (${r.pages}) | ${f1(r.svcListMs)} | ${f1(r.svcListAllMs)} (${r.svcPages}) | ${f1(r.callMs)} | ${f1(r.reloadMs)} | ${f1(r.rssReloadPeakMiB)} | ${f1(r.rejectMs)} | ${f1(r.rssRejectPeakMiB)} | ${f1(r.validateMs)} | ${f1(r.validatePeakMiB)} |`);
  return [head, head.replace(/[^|]+/g, '---'), ...lines].join('\n');
}

/**
 * Measures each size (fresh servers; every answer checked) and writes `out` (JSON columns for the plots).
 * Resolves { rows, result, table }.
 */
export async function runLarge({ sizes = [10, 1000, 10000], same = false, json = false, pageSize, samples = 15, out } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-large-'));
  const rows = [];
  try {
    for (const n of sizes) {
      rows.push(await measure(n, { same, json, pageSize, samples, dir }));
      process.stderr.write(`large-manifest: ${JSON.stringify(rows.at(-1))}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const col = (k) => rows.map((r) => Math.round(r[k] * 10) / 10);
  const result = {
    schemas: same ? 'same' : 'distinct', format: json ? 'json' : 'yaml', listPageSize: pageSize || 'default', cli: CLI, samples,
    capabilities: rows.map((r) => r.n),
    readyMs: col('readyMs'), reloadMs: col('reloadMs'), listMs: col('listMs'), listAllMs: col('listAllMs'), svcListMs: col('svcListMs'), svcListAllMs: col('svcListAllMs'), callMs: col('callMs'),
    rssMiB: col('rssReadyMiB'), rssAfterListMiB: col('rssListMiB'), reloadPeakMiB: col('rssReloadPeakMiB'),
    rejectMs: col('rejectMs'), rejectPeakMiB: col('rssRejectPeakMiB'),
    validateMs: col('validateMs'), validatePeakMiB: col('validatePeakMiB'), pages: rows.map((r) => r.pages), svcPages: rows.map((r) => r.svcPages),
  };
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  }
  return { rows, result, table: table(rows) };
}

/** Issue 17's large-manifest targets at the largest size measured, for one format's result. */
function verdicts(r) {
  const i = r.capabilities.length - 1;
  const check = (what, got, max, unit) => `| ${what} (${r.format}, ${r.capabilities[i]} tools) | ${got} ${unit} | ${got <= max ? 'met' : `missed by ${Math.round((got / max - 1) * 100)}%`} |`;
  return [
    check('ready ≤ 1,500 ms', r.readyMs[i], 1500, 'ms'),
    check('reload ≤ 1,500 ms', r.reloadMs[i], 1500, 'ms'),
    check('RSS at ready ≤ 150 MiB', r.rssMiB[i], 150, 'MiB'),
    check('tools/list (first page) ≤ 5 ms', r.listMs[i], 5, 'ms'),
    check('GET /svc (first page) ≤ 5 ms', r.svcListMs[i], 5, 'ms'),
  ];
}

/**
 * The whole large-manifest part of a bench run: YAML and JSON catalogs of `sizes` distinct-schema tools, their
 * JSON under outDir, three plots, GitHub's REST description as an `openapi` source (bench/openapi-catalog.mjs), and a markdown section (tables, target verdicts, plots) that is also written to
 * outDir/large-manifest.md. Resolves the markdown.
 */
export async function runLargeSection({ outDir, sizes, samples, imagePrefix = 'results/' } = {}) {
  const yaml = await runLarge({ sizes, samples, out: join(outDir, 'large-manifest.json') });
  const json = await runLarge({ sizes, samples, json: true, out: join(outDir, 'large-manifest-json.json') });
  const x = yaml.result.capabilities;
  const plots = {
    'large-time.svg': linePlot({ x, series: { 'ready, YAML': yaml.result.readyMs, 'reload, YAML': yaml.result.reloadMs, 'ready, JSON': json.result.readyMs, 'reload, JSON': json.result.reloadMs, 'svc validate, YAML': yaml.result.validateMs } },
      { title: 'Start-up, reload and validate against catalog size', xLabel: 'tools (distinct input schemas)', yLabel: 'ms', logX: true }),
    'large-rss.svg': linePlot({ x, series: { 'RSS at ready, YAML': yaml.result.rssMiB, 'reload peak, YAML': yaml.result.reloadPeakMiB, 'rejected reload peak, YAML': yaml.result.rejectPeakMiB, 'RSS at ready, JSON': json.result.rssMiB, 'reload peak, JSON': json.result.reloadPeakMiB } },
      { title: 'Memory against catalog size', xLabel: 'tools (distinct input schemas)', yLabel: 'MiB', logX: true }),
    'large-list.svg': linePlot({ x, series: { 'tools/list first page, YAML': yaml.result.listMs, 'tools/list first page, JSON': json.result.listMs, 'tools/call, YAML': yaml.result.callMs } },
      { title: 'List and call latency against catalog size', xLabel: 'tools (distinct input schemas)', yLabel: 'ms (median)', logX: true }),
  };
  for (const [name, svg] of Object.entries(plots)) writeFileSync(join(outDir, name), svg);
  const { runOpenApi, openApiTable } = await import('./openapi-catalog.mjs');
  const openapi = await runOpenApi({ samples, out: join(outDir, 'openapi-catalog.json') });
  const md = [
    `## Large manifests (bench/large-manifest.mjs; distinct input schemas, medians of ${yaml.result.samples})`,
    `### YAML manifest\n\n${yaml.table}`,
    `### The same catalog as JSON\n\n${json.table}`,
    `### An OpenAPI source: GitHub's REST description (bench/openapi-catalog.mjs; issue 32's targets)\n\n${openApiTable(openapi)}`,
    `### Issue 17 large-manifest targets in this run\n\n| target | measured | verdict |\n| --- | --- | --- |\n${[...verdicts(yaml.result), ...verdicts(json.result)].join('\n')}`,
    Object.keys(plots).map((f) => `![${f}](${imagePrefix}${f})`).join('\n'),
  ].join('\n\n');
  writeFileSync(join(outDir, 'large-manifest.md'), `${md}\n`);
  return md;
}

async function main() {
  installCleanup();
  const same = process.argv.includes('--same-schemas');
  const json = process.argv.includes('--json');
  const { table: t, result } = await runLarge({
    sizes: arg('--sizes', '10,1000,10000').split(',').map(Number),
    samples: Number(arg('--samples', '15')),
    same, json,
    pageSize: arg('--page-size') && Number(arg('--page-size')),
    out: resolve(ROOT, arg('--out', 'bench/results/large-manifest.json')),
  });
  process.stdout.write(`${t}\n\n(${same ? 'identical' : 'distinct'} input schemas, ${json ? 'JSON' : 'YAML'} manifest; medians of ${result.samples})\n`);
  agent.destroy();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`large-manifest: ${e.stack ?? e}\n`);
    process.exit(1);
  });
}
