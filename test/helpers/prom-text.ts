// A strict reader of the Prometheus text exposition format (version 0.0.4) for tests:
// `# HELP`/`# TYPE` lines and samples `name{label="value",…} value [timestamp]`, label
// values unescaped (\\, \", \n). Any other line is an error, so a malformed exposition
// fails the test. (The npm package parse-prometheus-text-format does the same; it is not
// a dependency of this repository.)

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

export function parseProm(text: string): Exposition {
  const out: Exposition = { types: new Map(), help: new Map(), samples: [] };
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE' && !/^(counter|gauge|histogram|summary|untyped)$/.test(meta[3]!)) throw new Error(`line ${i + 1}: unknown type ${meta[3]}`);
      (meta[1] === 'TYPE' ? out.types : out.help).set(meta[2]!, meta[3]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`line ${i + 1}: not a sample: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const l = LABEL.exec(body);
      if (!l) throw new Error(`line ${i + 1}: bad labels: ${body}`);
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    // Prometheus reads values with Go's ParseFloat: NaN and ±Inf in any case.
    const v = m[3]!.toLowerCase();
    const value = v === '+inf' || v === 'inf' ? Infinity : v === '-inf' ? -Infinity : Number(m[3]);
    if (Number.isNaN(value) && v !== 'nan') throw new Error(`line ${i + 1}: bad value ${m[3]}`);
    out.samples.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none). */
export function valueOf(e: Exposition, name: string, labels: Record<string, string> = {}): number {
  const hits = e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value ?? 0;
}
