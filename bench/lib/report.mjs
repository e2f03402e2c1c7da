// Turns measurements into markdown: per-scenario medians over rounds with spread and ratios to the baselines,
// start-up and idle RSS per server, memory flatness, and the hooks still pending. Pure: no I/O except
// writeResults, which writes the whole report with the date, Node version, CPU and the command.
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

/** rounds: load results of one scenario, one per round → the row's figures. */
export function summarize(rounds) {
  const rps = rounds.map((r) => r.rps);
  const non2xx = rounds.reduce((n, r) => n + r.non2xx, 0);
  const errors = rounds.reduce((n, r) => n + r.errors, 0);
  const stopped = rounds.map((r) => r.stopped).filter(Boolean);
  const kinds = [...new Set(rounds.flatMap((r) => Object.keys(r.errorKinds ?? {})))].join(' ');
  return {
    rps: median(rps), min: Math.min(...rps), max: Math.max(...rps),
    p50: median(rounds.map((r) => r.p50)), p99: median(rounds.map((r) => r.p99)),
    total: rounds.reduce((n, r) => n + r.total, 0), non2xx, errors,
    flagged: non2xx > 0 || errors > 0 || stopped.length > 0,
    note: [non2xx && `⚠ ${non2xx} non-2xx`, errors && `⚠ ${errors} errors${kinds ? ` (${kinds})` : ''}`, ...stopped.map((s) => `⚠ stopped: ${s}`)].filter(Boolean).join(', '),
  };
}

/** results: [{ scn, summary?, status? }] in scenario order; baselines: scenario names for the ratio columns. */
export function throughputTable(results, baselines) {
  const base = Object.fromEntries(baselines.map((b) => [b, results.find((r) => r.scn.name === b)?.summary?.rps]));
  const lines = [
    row(['scenario', 'what', 'req/s (median)', 'spread (min–max)', 'p50 ms', 'p99 ms', ...baselines.map((b) => `× ${b}`), 'notes']),
    row(Array(7 + baselines.length).fill('---')),
  ];
  for (const { scn, summary: s, status } of results) {
    if (!s) lines.push(row([scn.name, scn.label, '—', '—', '—', '—', ...baselines.map(() => '—'), status]));
    else {
      lines.push(row([scn.name, scn.label, int(s.rps), `${int(s.min)}–${int(s.max)}`, ms(s.p50), ms(s.p99),
        ...baselines.map((b) => ratio(s.rps, base[b])), s.note || 'ok']));
    }
  }
  return lines.join('\n');
}

/** servers: [{ name, startup?: ms[], rss?: MiB, status? }]. */
export function serverTable(servers) {
  const lines = [row(['server', 'start-up ms (median)', 'start-up samples', 'idle RSS MiB', 'notes']), row(Array(5).fill('---'))];
  for (const s of servers) {
    lines.push(row([s.name, s.startup ? ms(median(s.startup)) : '—', s.startup ? s.startup.map(ms).join(', ') : '—', mib(s.rss), s.status ?? 'ok']));
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
