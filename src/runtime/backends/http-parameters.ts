// Serializing tool arguments as HTTP parameters, OpenAPI 3.1 style. Guarantees: every
// style/explode combination the OpenAPI 3.1.1 "Style Examples" table defines gives exactly its
// string (spaceDelimited/pipeDelimited with explode: true are sent as form explode, deepObject
// ignores explode); URL values and names are percent-encoded per RFC 3986 — everything but the
// unreserved characters A-Z a-z 0-9 - . _ ~, so a path value can never add a segment, a query
// value never a parameter — while the style's own delimiters stay literal; header values are
// sent as they are (the caller refuses control characters); a null value or an empty array or
// object is RFC 6570's "undefined" (the table's first column; omitted where that says n/a).

import { SvcError } from '../../errors.js';

export type Style = 'simple' | 'label' | 'matrix' | 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';
export type Where = 'path' | 'query' | 'header' | 'cookie';

export interface ParameterShape {
  name: string;
  in: Where;
  style: Style;
  explode: boolean;
}

/** The styles OpenAPI 3.1 allows for each location. */
export const STYLES: Readonly<Record<Where, readonly Style[]>> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  cookie: ['form'],
};

/** RFC 3986 percent-encoding of everything outside the unreserved set (UTF-8). */
export function pct(s: string): string {
  try {
    return encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  } catch {
    throw new SvcError('INVALID_INPUT', 'an argument sent as an HTTP parameter is not valid Unicode');
  }
}

type Kind = { t: 'undefined' } | { t: 'scalar'; v: string } | { t: 'array'; v: string[] } | { t: 'object'; v: [string, unknown][] };

function kindOf(value: unknown): Kind {
  if (value === null || value === undefined) return { t: 'undefined' };
  if (Array.isArray(value)) return value.length ? { t: 'array', v: value.map(text) } : { t: 'undefined' };
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return entries.length ? { t: 'object', v: entries } : { t: 'undefined' };
  }
  return { t: 'scalar', v: text(value) };
}

/** A scalar's text; a nested array or object (whose form OpenAPI leaves undefined) as its JSON. */
function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/**
 * One parameter's serialization: for path the text that replaces its placeholder; for header the
 * header's value; for query and cookie the name=value pairs (joined by & and by "; "), or
 * undefined when nothing is sent.
 */
export function serializeParameter(p: ParameterShape, value: unknown): string | undefined {
  const enc = p.in === 'header' ? (s: string) => s : pct;
  const k = kindOf(value);
  const name = enc(p.name);
  const list = (v: string[]) => v.map(enc);
  const pairs = (v: [string, unknown][], kv: string, sep: string) => v.map(([a, b]) => enc(a) + kv + enc(text(b))).join(sep);
  switch (p.style) {
    case 'simple':
    case 'label': {
      const lead = p.style === 'label' ? '.' : '';
      const sep = p.style === 'label' && p.explode ? '.' : ',';
      if (k.t === 'undefined') return lead;
      if (k.t === 'scalar') return lead + enc(k.v);
      if (k.t === 'array') return lead + list(k.v).join(sep);
      return lead + (p.explode ? pairs(k.v, '=', sep) : pairs(k.v, ',', ','));
    }
    case 'matrix': {
      if (k.t === 'undefined' || (k.t === 'scalar' && k.v === '')) return ';' + name;
      if (k.t === 'scalar') return `;${name}=${enc(k.v)}`;
      if (k.t === 'array') return p.explode ? list(k.v).map((v) => `;${name}=${v}`).join('') : `;${name}=${list(k.v).join(',')}`;
      return p.explode ? ';' + pairs(k.v, '=', ';') : `;${name}=${pairs(k.v, ',', ',')}`;
    }
    case 'form':
      return form(p, k, name, list, pairs);
    case 'spaceDelimited':
    case 'pipeDelimited': {
      if (p.explode) return form(p, k, name, list, pairs);
      const sep = p.style === 'spaceDelimited' ? '%20' : '%7C';
      if (k.t === 'undefined') return undefined;
      if (k.t === 'scalar') return `${name}=${enc(k.v)}`;
      if (k.t === 'array') return `${name}=${list(k.v).join(sep)}`;
      return `${name}=${pairs(k.v, sep, sep)}`;
    }
    case 'deepObject': {
      if (k.t === 'undefined') return undefined;
      if (k.t !== 'object') throw new SvcError('INVALID_INPUT', `parameter ${p.name} (style deepObject) takes an object`, { data: { parameter: p.name } });
      return deep(p.name, k.v).join('&');
    }
  }
}

function form(p: ParameterShape, k: Kind, name: string, list: (v: string[]) => string[], pairs: (v: [string, unknown][], kv: string, sep: string) => string): string {
  const sep = p.in === 'cookie' ? '; ' : '&';
  if (k.t === 'undefined') return name + '=';
  if (k.t === 'scalar') return `${name}=${pct(k.v)}`;
  if (k.t === 'array') return p.explode ? list(k.v).map((v) => `${name}=${v}`).join(sep) : `${name}=${list(k.v).join(',')}`;
  return p.explode ? pairs(k.v, '=', sep) : `${name}=${pairs(k.v, ',', ',')}`;
}

/** deepObject: name[key]=value; beyond what OpenAPI defines, a nested object nests brackets and an array repeats its key. */
function deep(prefix: string, entries: [string, unknown][]): string[] {
  const out: string[] = [];
  for (const [key, v] of entries) {
    const at = `${prefix}[${key}]`;
    if (Array.isArray(v)) for (const item of v) out.push(`${pct(at)}=${pct(text(item))}`);
    else if (v !== null && typeof v === 'object') out.push(...deep(at, Object.entries(v)));
    else if (v !== undefined) out.push(`${pct(at)}=${pct(text(v))}`);
  }
  return out;
}

/** An application/x-www-form-urlencoded body: each property a pair (an array repeats it, an object is its JSON, null empty). */
export function formBody(value: unknown, arg: string): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SvcError('INVALID_INPUT', `argument ${arg} is sent as a form body and must be an object`, { data: { argument: arg } });
  }
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(value)) {
    if (Array.isArray(v)) for (const item of v) out.append(k, text(item));
    else if (v !== undefined) out.append(k, text(v));
  }
  return out.toString();
}
