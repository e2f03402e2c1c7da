// Logic-less {{arg}} templates. Guarantees: no code runs — a placeholder is a
// name (letters, digits, _, dotted paths into objects) replaced by the argument's
// text; unknown names render as empty; the names a template uses are known at
// compile time so the compile step can check them against the input schema.

/** `name`: the placeholder's (dotted) argument path, so one encoder can treat arguments differently. */
export type Encoder = (value: string, name: string) => string;

export interface Template {
  /** Argument names used (first path segment of each placeholder). */
  readonly names: readonly string[];
  /** True when the template is exactly one placeholder (keeps the value's type in JSON bodies). */
  readonly single?: string;
  render(vars: Record<string, unknown>, encode?: Encoder): string;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

export function compileTemplate(text: string): Template {
  const parts: string[] = [];
  const paths: string[][] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    parts.push(text.slice(last, m.index));
    paths.push(m[1]!.split('.'));
    last = m.index! + m[0].length;
  }
  parts.push(text.slice(last));
  const names = [...new Set(paths.map((p) => p[0]!))];
  const single = paths.length === 1 && parts[0] === '' && parts[1] === '' ? paths[0]!.join('.') : undefined;
  if (paths.length === 0) return { names, render: () => text };
  return {
    names,
    single,
    render(vars, encode) {
      let out = parts[0]!;
      for (let i = 0; i < paths.length; i++) {
        const s = stringify(lookup(vars, paths[i]!));
        out += (encode ? encode(s, paths[i]!.join('.')) : s) + parts[i + 1]!;
      }
      return out;
    },
  };
}

export function lookup(vars: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = vars;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

function stringify(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}
