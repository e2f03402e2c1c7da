// Turns measurements into markdown: per-scenario medians over rounds with spread and ratios to the baselines,
// start-up and RSS per server, idle memory, memory flatness, reload latency (and revocation propagation), two-vs-one replica scaling,
// the proxied calls to a stdio upstream and start-up with upstreams (issue 31), issue 6's targets met or missed, and the
// hooks still pending. Pure: no I/O except writeResults, which writes the whole report with the date, Node
// version, CPU and the command.
import { writeFileSync } from 'node:fs';
import os from 'node:os';

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const ms = (x) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) : '—');
const mib = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const ratio = (a, b) => (Number.isFinite(a) && b > 0 ? `${(a / b).toFixed(2)}×` : '—');
const row = (cells) => `| ${cells.join(' | ')} |`;
const cpuCell = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');

/** rounds: load results of one scenario, one per round → the row's figures. */
export function summarize(rounds) {
  const rps = rounds.map((r) => r.rps);
  const non2xx = rounds.reduce((n, r) => n + r.non2xx, 0);
  const errors = rounds.reduce((n, r) => n + r.errors, 0);
  const stopped = rounds.map((r) => r.stopped).filter(Boolean);
  const kinds = [...new Set(rounds.flatMap((r) => Object.keys(r.errorKinds ?? {})))].join(' ');
  const cpu = rounds.map((r) => r.cpuUs).filter(Number.isFinite);
  const upstreamCpu = rounds.map((r) => r.upstreamCpuUs).filter(Number.isFinite);
  return {
    rps: median(rps), min: Math.min(...rps), max: Math.max(...rps),
    cpuUs: cpu.length ? median(cpu) : undefined,
    upstreamCpuUs: upstreamCpu.length ? median(upstreamCpu) : undefined,
    p50: median(rounds.map((r) => r.p50)), p99: median(rounds.map((r) => r.p99)),
    total: rounds.reduce((n, r) => n + r.total, 0), non2xx, errors,
    flagged: non2xx > 0 || errors > 0 || stopped.length > 0,
    note: [non2xx && `⚠ ${non2xx} non-2xx`, errors && `⚠ ${errors} errors${kinds ? ` (${kinds})` : ''}`, ...stopped.map((s) => `⚠ stopped: ${s}`)].filter(Boolean).join(', '),
  };
}

/**
 * results: [{ scn, summary?, status? }] in scenario order; baselines: scenario names for the ratio columns;
 * ceilingOf(scn): the scenario name of its ceiling (raw node:http / bare ws) or null — the "× ceiling" column,
 * as req/s and as server CPU time per request (the ceiling's over this one's: the share of the ceiling's
 * efficiency reached, which the load generator's and the host's noise move far less than req/s).
 */
export function throughputTable(results, baselines, ceilingOf = () => null) {
  const of = (name) => results.find((r) => r.scn.name === name)?.summary;
  const base = Object.fromEntries(baselines.map((b) => [b, of(b)?.rps]));
  const lines = [
    row(['scenario', 'what', 'req/s (median)', 'spread (min–max)', 'p50 ms', 'p99 ms', 'server CPU µs/request', '× ceiling (req/s; CPU)', ...baselines.map((b) => `× ${b}`), 'notes']),
    row(Array(9 + baselines.length).fill('---')),
  ];
  for (const { scn, summary: s, status } of results) {
    if (!s) lines.push(row([scn.name, scn.label, '—', '—', '—', '—', '—', '—', ...baselines.map(() => '—'), status]));
    else {
      const ceiling = ceilingOf(scn);
      const vsCeiling = ceiling ? `${ratio(s.rps, of(ceiling)?.rps)}; ${ratio(of(ceiling)?.cpuUs, s.cpuUs)} ${ceiling}` : '—';
      lines.push(row([scn.name, scn.label, int(s.rps), `${int(s.min)}–${int(s.max)}`, ms(s.p50), ms(s.p99), cpuCell(s.cpuUs), vsCeiling,
        ...baselines.map((b) => ratio(s.rps, base[b])), s.note || 'ok']));
    }
  }
  return lines.join('\n');
}

/** The scenarios with a `vs` (scenarios.mjs): their req/s as a ratio to their `vs` scenario's, from this run's medians. */
export function scalingTable(results) {
  const rps = (name) => results.find((r) => r.scn.name === name)?.summary?.rps;
  const lines = [row(['scenario', 'req/s (median)', 'vs', 'vs req/s (median)', 'ratio']), row(Array(5).fill('---'))];
  for (const { scn } of results.filter((r) => r.scn.vs)) {
    lines.push(row([scn.name, int(rps(scn.name)), scn.vs, int(rps(scn.vs)), ratio(rps(scn.name), rps(scn.vs))]));
  }
  return lines.join('\n');
}

/**
 * Issue 31: the scenarios that reach a stdio upstream (`call` and a `ceiling`, or the stdio kind itself) — req/s against
 * the upstream driven directly, and where the CPU per call goes: the proxy's own process, the upstream (the proxy's
 * child processes; for the direct row the upstream is the server), both.
 */
export function upstreamTable(results) {
  const rows = results.filter((r) => r.scn.kind === 'stdio' || (r.scn.call && r.scn.ceiling));
  const lines = [
    row(['scenario', 'what', 'req/s (median)', '× upstream direct', 'proxy CPU µs/call', 'upstream CPU µs/call', 'together µs/call', 'notes']),
    row(Array(8).fill('---')),
  ];
  for (const { scn, summary: s, status } of rows) {
    if (!s) {
      lines.push(row([scn.name, scn.label, '—', '—', '—', '—', '—', status]));
      continue;
    }
    const direct = scn.kind === 'stdio';
    const ceiling = results.find((r) => r.scn.name === scn.ceiling)?.summary;
    const proxy = direct ? undefined : s.cpuUs;
    const upstream = direct ? s.cpuUs : s.upstreamCpuUs;
    lines.push(row([scn.name, scn.label, int(s.rps), direct ? '1.00×' : ratio(s.rps, ceiling?.rps), cpuCell(proxy), cpuCell(upstream),
      cpuCell(direct ? upstream : proxy + upstream), s.note || 'ok']));
  }
  return lines.join('\n');
}

/** rows: [{ entry, samples?: [{ totalMs, upstreamsMs, afterMs }], status? }] (bench/upstream-startup.mjs). */
export function upstreamStartupTable(rows) {
  const lines = [
    row(['entry', 'what', 'samples', 'spawn → upstreams answered ms', 'spawn → all served ms', 'after the upstreams ms (median)', 'after the upstreams, samples', 'notes']),
    row(Array(8).fill('---')),
  ];
  for (const r of rows) {
    const col = (k) => r.samples?.map((x) => x[k]) ?? [];
    const med = (k) => (r.samples?.length ? ms(median(col(k))) : '—');
    lines.push(row([r.entry.name, r.entry.label, r.samples?.length ?? '—', med('upstreamsMs'), med('totalMs'), med('afterMs'),
      r.samples?.length ? col('afterMs').map(ms).join(', ') : '—', r.status ?? 'ok']));
  }
  return lines.join('\n');
}

/** servers: [{ name, startup?: ms[], rss?: MiB, status? }]. */
export function serverTable(servers) {
  const lines = [row(['server', 'start-up ms (median)', 'start-up samples', 'RSS after the warm-ups MiB', 'notes']), row(Array(5).fill('---'))];
  for (const s of servers) {
    lines.push(row([s.name, s.startup ? ms(median(s.startup)) : '—', s.startup ? s.startup.map(ms).join(', ') : '—', mib(s.rss), s.status ?? 'ok']));
  }
  return lines.join('\n');
}

/** rows: [{ entry, warmups?, afterLoad?, idle?, fileBacked?, heap?, status? }] (MiB). */
export function idleTable(rows) {
  const lines = [
    row(['entry', 'server', 'warmed up by', 'RSS after load MiB', 'idle RSS MiB', 'of which file-backed MiB', 'V8 heap retained MiB', 'notes']),
    row(Array(8).fill('---')),
  ];
  for (const r of rows) {
    lines.push(row([r.entry.name, r.entry.server, r.warmups?.join(', ') || '—', mib(r.afterLoad), mib(r.idle), mib(r.fileBacked), mib(r.heap), r.status ?? 'ok']));
  }
  return lines.join('\n');
}

/** mem: [{ entry, calls?, before?, after?, peak?, status? }]. */
export function memoryTable(mem) {
  const lines = [
    row(['scenario', 'calls', 'RSS after warm-up MiB', 'RSS at end MiB', 'peak MiB', 'delta MiB', 'bytes/call', 'flat (Δ ≤ 50 MB)', 'notes']),
    row(Array(9).fill('---')),
  ];
  for (const m of mem) {
    const delta = m.after - m.before;
    const flat = Number.isFinite(delta) ? (delta * 1024 * 1024 <= 50e6 ? 'yes' : 'no') : '—';
    lines.push(row([m.entry.name, int(m.calls), mib(m.before), mib(m.after), mib(m.peak), mib(delta),
      m.calls ? int((delta * 1024 * 1024) / m.calls) : '—', flat, m.status ?? 'ok']));
  }
  return lines.join('\n');
}

/** rows: [{ entry, p50?, p99?, samples?, status? }] (ms); `unit`: what a sample is (the count column's heading). */
export function reloadTable(rows, unit = 'edits') {
  const lines = [row(['entry', 'what', unit, 'p50 ms', 'p99 ms', 'min–max ms', 'notes']), row(Array(7).fill('---'))];
  for (const r of rows) {
    const range = r.samples?.length ? `${ms(Math.min(...r.samples))}–${ms(Math.max(...r.samples))}` : '—';
    lines.push(row([r.entry.name, r.entry.label, r.samples?.length ?? '—', ms(r.p50), ms(r.p99), range, r.status ?? 'ok']));
  }
  return lines.join('\n');
}

/**
 * rows: [{ entry, tokens?, cycles?, idleRss?, cachedRss?, endRss?, idleHeap?, cachedHeap?, endHeap? (MiB), cachedUs?, coldUs?: { fill,
 * rs256, es256 } (µs), status? }] (bench/external-cache.mjs): memory with `tokens` external JWTs cached, the bound, cold verification.
 */
export function externalCacheTable(rows) {
  const us = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
  const delta = (a, b, n) => (Number.isFinite(a - b) && n ? `${mib(a - b)} (${(((a - b) * 1024) / n).toFixed(2)} KiB/token)` : '—');
  const lines = [
    row(['entry', 'what', 'tokens', 'idle RSS MiB', 'RSS, them cached MiB', 'Δ RSS MiB', 'heap after GC: idle → cached MiB', 'Δ heap MiB',
      'at the end: distinct tokens; RSS; heap MiB', 'server CPU µs/call, cache hit', 'cold verification µs: RS256; ES256', 'first RS256 pass µs', 'notes']),
    row(Array(13).fill('---')),
  ];
  for (const r of rows) {
    const seen = r.tokens && r.cycles !== undefined ? int((2 * r.cycles + 1) * r.tokens) : '—';
    lines.push(row([r.entry.name, r.entry.label, r.tokens ?? '—', mib(r.idleRss), mib(r.cachedRss), delta(r.cachedRss, r.idleRss, r.tokens),
      `${mib(r.idleHeap)} → ${mib(r.cachedHeap)}`, delta(r.cachedHeap, r.idleHeap, r.tokens), `${seen}; ${mib(r.endRss)}; ${mib(r.endHeap)}`, us(r.cachedUs),
      `${us(r.coldUs?.rs256)}; ${us(r.coldUs?.es256)}`, us(r.coldUs?.fill), r.status ?? 'ok']));
  }
  return lines.join('\n');
}

const MB_PER_MIB = 1.048576;

/** targets: TARGETS of scenarios.mjs; the rest as the other tables take them. Rows say met / missed by how much. */
export function targetsTable(targets, { results, servers, idle = [], memory, reload, upstreamStartup = [], paired = new Map() }) {
  const rps = (name) => results.find((r) => r.scn.name === name)?.summary?.rps;
  const cpu = (name) => results.find((r) => r.scn.name === name)?.summary?.cpuUs;
  const lines = [row(['target', 'measured', 'verdict']), row(Array(3).fill('---'))];
  for (const t of targets) {
    let got; // the measured figure
    let shown;
    if (t.ratio) {
      const [a, b] = t.ratio.map(rps);
      got = Number.isFinite(a) && b > 0 ? a / b : NaN;
      shown = Number.isFinite(got) ? `${got.toFixed(2)}× (${int(a)} / ${int(b)} req/s)` : '—';
      const pairs = paired.get(t.ratio.join('/'));
      if (pairs?.length) {
        shown = `${median(pairs).toFixed(2)}× paired (median of ${pairs.map((x) => x.toFixed(2)).join(', ')}); table medians ${shown}`;
        got = median(pairs);
      }
      // The same ratio in server CPU per request (b's over a's, from the rounds' medians): corroboration, not the verdict.
      const [ca, cb] = t.ratio.map(cpu);
      if (Number.isFinite(ca) && Number.isFinite(cb)) shown += `; server CPU per request ${ratio(cb, ca)} (${cpuCell(ca)} µs vs ${cpuCell(cb)} µs)`;
    } else if (t.startup) {
      const s = servers.find((x) => x.name === t.startup)?.startup;
      got = s ? median(s) : NaN;
      // The host's speed drifts between runs: the bare node:http server's start-up in the same run is the yardstick.
      const raw = servers.find((x) => x.name === 'raw')?.startup;
      shown = Number.isFinite(got) ? `${ms(got)} ms${raw ? ` (${(got / median(raw)).toFixed(1)}× raw node:http's ${ms(median(raw))} ms)` : ''}` : '—';
    } else if (t.idle) {
      const m = idle.find((x) => x.entry.name === t.idle);
      const unit = t.mib ? 1 : MB_PER_MIB;
      got = (m?.idle ?? NaN) * unit;
      shown = Number.isFinite(got) ? `${mib(got)} ${t.mib ? 'MiB' : 'MB'} (${mib(m.afterLoad * unit)} right after load)` : '—';
    } else if (t.flat) {
      const m = memory.find((x) => x.entry.name === t.flat);
      got = m ? (m.after - m.before) * MB_PER_MIB : NaN;
      shown = Number.isFinite(got) ? `${mib(got)} MB over ${int(m.calls)} calls` : '—';
    } else if (t.reload) {
      got = reload.find((x) => x.entry.name === t.reload)?.[t.pct] ?? NaN;
      shown = Number.isFinite(got) ? `${ms(got)} ms` : '—';
    } else if (t.cpu) {
      const [a, b] = t.cpu.map(cpu);
      got = Number.isFinite(a) && b > 0 ? a / b : NaN;
      shown = Number.isFinite(got) ? `${got.toFixed(2)}× (${cpuCell(a)} µs vs ${cpuCell(b)} µs per call)` : '—';
    } else if (t.upstreamStartup) {
      const samples = upstreamStartup.find((x) => x.entry.name === t.upstreamStartup)?.samples;
      got = samples?.length ? median(samples.map((x) => x.afterMs)) : NaN;
      shown = Number.isFinite(got) ? `${ms(got)} ms (spawn → all served ${ms(median(samples.map((x) => x.totalMs)))} ms)` : '—';
    }
    let verdict = 'not measured in this run';
    if (Number.isFinite(got)) {
      if (t.info) verdict = 'for information (no target)';
      else if (t.min !== undefined) verdict = got >= t.min ? 'met' : `missed by ${((1 - got / t.min) * 100).toFixed(0)}%`;
      else verdict = got < t.max || ((t.flat || t.cpu || t.upstreamStartup) && got <= t.max) ? 'met' : `missed by ${((got / t.max - 1) * 100).toFixed(0)}%`;
    }
    lines.push(row([t.what, shown, verdict]));
  }
  return lines.join('\n');
}

export function environment(command, settings) {
  return [
    `- date: ${new Date().toISOString()}`,
    `- node: ${process.version}, CPU: ${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}, ` +
      `load average at the end (1/5/15 min, includes this run): ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}`,
    `- command: \`${command}\``,
    `- settings: ${settings}`,
  ].join('\n');
}

export function writeResults(file, sections) {
  writeFileSync(file, `# Benchmark results\n\n${sections.join('\n\n')}\n`);
}
