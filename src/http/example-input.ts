// An example argument object for a tool, built from its input schema, for the
// copy-and-run snippets on /docs. Guarantees: pure and bounded (no I/O, depth
// capped, local $refs only); the operator's own words win — `examples[0]`, then
// `const`, `default`, `enum[0]` — else a typed placeholder that meets the common
// constraints (required properties, min/max, lengths, minItems, well-known formats).
// A schema it cannot satisfy (a `pattern` without `examples`) is the caller's to
// check against the tool's validator.

type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

const FORMATS: Record<string, string> = {
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  date: '2025-01-31',
  time: '12:00:00Z',
  'date-time': '2025-01-31T12:00:00Z',
  duration: 'P1D',
  uuid: '00000000-0000-4000-8000-000000000000',
  regex: '.*',
  'json-pointer': '/example',
};

export function exampleInput(schema: unknown): unknown {
  return build(schema, isObject(schema) ? schema : {}, 0);
}

function build(s: unknown, root: Schema, depth: number): unknown {
  if (!isObject(s) || depth > MAX_DEPTH) return {};
  if (typeof s.$ref === 'string') return build(resolve(root, s.$ref), root, depth + 1);
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return build(merge(s, s.allOf.map((x) => (isObject(x) && typeof x.$ref === 'string' ? resolve(root, x.$ref) : x))), root, depth + 1);
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = s[key];
    if (Array.isArray(branches) && branches.length > 0) return build(merge(s, [branches[0]], key), root, depth + 1);
  }
  switch (typeOf(s)) {
    case 'object': return object(s, root, depth);
    case 'array': return array(s, root, depth);
    case 'integer': return number(s, true);
    case 'number': return number(s, false);
    case 'boolean': return false;
    case 'null': return null;
    default: return string(s);
  }
}

function typeOf(s: Schema): string {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') ?? s.type[0] : s.type;
  if (typeof t === 'string') return t;
  if (isObject(s.properties) || Array.isArray(s.required)) return 'object';
  if (s.items !== undefined || s.minItems !== undefined) return 'array';
  if (s.minimum !== undefined || s.maximum !== undefined || s.multipleOf !== undefined) return 'number';
  return 'string';
}

function object(s: Schema, root: Schema, depth: number): Record<string, unknown> {
  const props = isObject(s.properties) ? s.properties : {};
  const out: Record<string, unknown> = {};
  for (const name of Array.isArray(s.required) ? s.required : []) {
    if (typeof name === 'string') out[name] = build(props[name] ?? {}, root, depth + 1);
  }
  return out;
}

function array(s: Schema, root: Schema, depth: number): unknown[] {
  const n = typeof s.minItems === 'number' ? s.minItems : 0;
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
  return Array.from({ length: Math.min(Math.max(n, 0), 16) }, (_, i) => {
    const item = build(prefix[i] ?? (Array.isArray(s.items) ? {} : s.items), root, depth + 1);
    // Distinct items for uniqueItems when the item is a placeholder string or number.
    if (i > 0 && s.uniqueItems === true && typeof item === 'string') return `${item}${i + 1}`;
    if (i > 0 && s.uniqueItems === true && typeof item === 'number') return item + i;
    return item;
  });
}

function number(s: Schema, integer: boolean): number {
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : 0;
  let n = 0;
  if (typeof s.minimum === 'number') n = s.minimum;
  else if (typeof s.exclusiveMinimum === 'number') n = s.exclusiveMinimum + (step || 1);
  else if (typeof s.maximum === 'number' && s.maximum < 0) n = s.maximum;
  else if (typeof s.exclusiveMaximum === 'number' && s.exclusiveMaximum <= 0) n = s.exclusiveMaximum - (step || 1);
  if (integer) n = Math.ceil(n);
  if (step > 0) n = Math.ceil(n / step) * step;
  return n;
}

function string(s: Schema): string {
  let v = typeof s.format === 'string' && FORMATS[s.format] ? FORMATS[s.format]! : 'example';
  if (typeof s.minLength === 'number' && v.length < s.minLength) v = v.padEnd(s.minLength, 'x');
  if (typeof s.maxLength === 'number' && v.length > s.maxLength) v = v.slice(0, s.maxLength);
  return v;
}

/** The schema with its own keywords and those of the chosen sub-schemas, properties and required lists combined. */
function merge(s: Schema, parts: unknown[], drop: 'allOf' | 'oneOf' | 'anyOf' = 'allOf'): Schema {
  const { [drop]: _dropped, ...base } = s;
  let out: Schema = base;
  for (const p of parts) {
    if (!isObject(p)) continue;
    const properties = isObject(out.properties) || isObject(p.properties) ? { ...(out.properties as Schema), ...(p.properties as Schema) } : undefined;
    const required = Array.isArray(out.required) || Array.isArray(p.required) ? [...new Set([...(out.required as unknown[] ?? []), ...(p.required as unknown[] ?? [])])] : undefined;
    out = { ...out, ...p, ...(properties && { properties }), ...(required && { required }) };
  }
  return out;
}

/** A local reference (`#/$defs/x`, `#/definitions/x`); anything else resolves to no constraint. */
function resolve(root: Schema, ref: string): unknown {
  if (!ref.startsWith('#')) return {};
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    at = isObject(at) ? at[key] : undefined;
  }
  return at ?? {};
}

function isObject(v: unknown): v is Schema {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
