#!/usr/bin/env node
// YAML readers on the large manifest (issue 28: one reader for values and positions, if the
// `yaml` package's parser measures within 10% of today's path). On the generated N-tool
// catalog (bench/lib/gen-manifest.mjs, default 10,000 tools with distinct schemas), written
// as YAML and as JSON, each reader runs in its own fresh `node` process (so one run's garbage
// and JIT state never touch another's), in rounds that rotate the order of the readers; a run
// times the synchronous work from reading the file to the answer (performance.now) and reads
// the process's peak RSS (getrusage maxrss) and its RSS just before. The table gives medians
// and the spread over the runs, and each reader's time over today's read of the same text.
//
// Readers (dist/ is what they run: `npm run build` first):
//   today            src/manifest/load.ts readSource(): JSON.parse for JSON, js-yaml with JSON lines
//                    lifted for YAML; positions not built (a clean file never needs them)
//   today+locate     the same, then locate() of one node, as a problem or a warning needs it
//                    (position-index.ts's scan from 128 KiB on)
//   today load       readSource + validateManifest + compilePlan: what checkManifest() does
//   yaml-parser      the `yaml` package's Parser over the text with a LineCounter: the CST only,
//                    no value — the least any reader built on that parser must do
//   yaml-parser-lifted  the same on the text with its JSON lines lifted (as today's YAML read
//                    does): the least for a parser-based reader that keeps that shortcut
//   yaml-document    load.ts positionedRead(): parseDocument (Parser + Composer) with a
//                    LineCounter, ${VAR}s, toJS — values and every node's position — then the
//                    same locate(): the single reader, complete
//   yaml-document load  yaml-document + validateManifest + compilePlan
// Every run's answer is checked: the readers that give a value must give the same value
// (sha256 of its JSON) and the same line:col for the located node; a load must compile every
// tool with no problem.
//
//   node bench/yaml-readers.mjs [--tools 10000] [--runs 7]
// Run it under the shared lock: flock /tmp/fastsvc-bench.lock node bench/yaml-readers.mjs

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateManifest } from './lib/gen-manifest.mjs';
import { median } from './lib/report.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENV = { SVC_TOKEN: 'yaml-readers-bench-token-0123456789' };
const READERS = {
  yaml: ['today', 'today+locate', 'today load', 'yaml-parser', 'yaml-parser-lifted', 'yaml-document', 'yaml-document load'],
  json: ['today', 'today+locate', 'today load', 'yaml-parser', 'yaml-document', 'yaml-document load'],
};

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

/** One reader, one run, in this process: prints {ms, peakMiB, beforeMiB, digest?, at?, tools?}. */
async function child(reader, file, tools) {
  const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);
  const { readSource, positionedRead, liftJsonLines } = await dist('manifest/load.js');
  const { validateManifest } = await dist('manifest/validate-schema.js');
  const { compilePlan } = await dist('manifest/compile.js');
  const { Parser, LineCounter } = await import('yaml');
  const node = ['tools', tools - 1, 'template'];
  const load = (src) => {
    const v = validateManifest(src);
    if (!v.manifest) return { problems: v.problems.length };
    const c = compilePlan(v.manifest, file, src.locate);
    return { problems: c.problems.length, tools: c.plan?.manifest.tools?.length };
  };
  const cst = (text) => {
    const lines = new LineCounter();
    let tokens = 0;
    for (const _ of new Parser(lines.addNewLine).parse(text)) tokens++;
    return { tokens, lines: lines.lineStarts.length };
  };
  const run = {
    'today': () => ({ src: readSource(file, ENV) }),
    'today+locate': () => {
      const src = readSource(file, ENV);
      return { src, at: src.locate(node) };
    },
    'today load': () => load(readSource(file, ENV)),
    'yaml-parser': () => cst(readFileSync(file, 'utf8')),
    'yaml-parser-lifted': () => {
      const lifted = liftJsonLines(readFileSync(file, 'utf8'));
      return cst(lifted?.text ?? '');
    },
    'yaml-document': () => {
      const src = positionedRead(file, readFileSync(file, 'utf8'), ENV, {});
      return { src, at: src.locate(node) };
    },
    'yaml-document load': () => load(positionedRead(file, readFileSync(file, 'utf8'), ENV, {})),
  }[reader];
  // load.ts requires the `yaml` package the first time it needs it: load it now, outside the clock, for every reader alike.
  positionedRead('warm-up.yaml', 'a: 1\n', ENV, {});
  const beforeMiB = process.memoryUsage().rss / 2 ** 20;
  const t0 = performance.now();
  const out = run();
  const ms = performance.now() - t0;
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  if (out.src?.problems.length) throw new Error(`${reader}: ${out.src.problems[0].message}`);
  const digest = out.src && createHash('sha256').update(JSON.stringify(out.src.value)).digest('hex');
  process.stdout.write(JSON.stringify({ ms, peakMiB, beforeMiB, digest, at: out.at, tools: out.tools, problems: out.problems }));
}

async function main() {
  const tools = Number(arg('--tools', '10000'));
  const runs = Number(arg('--runs', '7'));
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-yaml-readers-'));
  try {
    const files = { yaml: join(dir, 'svc.yaml'), json: join(dir, 'svc.json') };
    writeFileSync(files.yaml, generateManifest(tools));
    writeFileSync(files.json, generateManifest(tools, { json: true }));
    const jobs = Object.entries(READERS).flatMap(([format, readers]) => readers.map((reader) => ({ format, reader })));
    const results = new Map(jobs.map((j) => [`${j.format} ${j.reader}`, []]));
    for (let r = 0; r < runs; r++) {
      // Rotate the order every round, so no reader always runs after the same one.
      const order = jobs.map((_, i) => jobs[(i + r) % jobs.length]);
      for (const { format, reader } of order) {
        const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', reader, files[format], String(tools)], { encoding: 'utf8', maxBuffer: 1 << 20 });
        if (p.status !== 0) throw new Error(`${format} ${reader}: exit ${p.status}\n${p.stderr}`);
        results.get(`${format} ${reader}`).push(JSON.parse(p.stdout));
      }
      process.stderr.write(`round ${r + 1}/${runs} done\n`);
    }
    check(results, tools);
    process.stdout.write(table(results, tools, runs, files));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every value-giving reader agrees with today's read of the same text; every load compiles every tool. */
function check(results, tools) {
  for (const format of Object.keys(READERS)) {
    const base = results.get(`${format} today`)[0];
    for (const [key, rs] of results) {
      if (!key.startsWith(`${format} `)) continue;
      for (const r of rs) {
        if (r.digest && r.digest !== base.digest) throw new Error(`${key}: a different value than ${format} today`);
        if (key.endsWith(' load') && (r.problems !== 0 || r.tools !== tools)) throw new Error(`${key}: ${r.problems} problems, ${r.tools} tools`);
      }
    }
    const at = (k) => JSON.stringify(results.get(`${format} ${k}`)[0].at);
    if (at('today+locate') !== at('yaml-document')) throw new Error(`${format}: located at ${at('today+locate')} today, ${at('yaml-document')} by the yaml document`);
  }
}

function table(results, tools, runs, files) {
  const f = (x) => (x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
  const lines = [
    `YAML readers: ${tools.toLocaleString('en-US')}-tool manifest (YAML ${(readFileSync(files.yaml).length / 2 ** 20).toFixed(1)} MiB, JSON ${(readFileSync(files.json).length / 2 ** 20).toFixed(1)} MiB), ${runs} runs per reader, each in a fresh process; medians`,
    `node ${process.version}; ${new Date().toISOString()}`,
    '',
    '| text | reader | ms (median) | ms (min–max) | × today | peak RSS MiB | peak − RSS before MiB |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [key, rs] of results) {
    const [format, ...name] = key.split(' ');
    const reader = name.join(' ');
    const ms = median(rs.map((r) => r.ms));
    const base = median(results.get(`${format} ${reader.endsWith(' load') ? 'today load' : 'today'}`).map((r) => r.ms));
    const spread = `${f(Math.min(...rs.map((r) => r.ms)))}–${f(Math.max(...rs.map((r) => r.ms)))}`;
    lines.push(`| ${format} | ${reader} | ${f(ms)} | ${spread} | ${(ms / base).toFixed(2)}× | ${f(median(rs.map((r) => r.peakMiB)))} | ${f(median(rs.map((r) => r.peakMiB - r.beforeMiB)))} |`);
  }
  lines.push('', '× today: over today\'s read of the same text (a load: over today\'s load).');
  return lines.join('\n') + '\n';
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4], Number(process.argv[5]));
else await main();
