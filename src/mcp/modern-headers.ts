// The standard and custom request headers of MCP 2026-07-28 (SEP-2243): Mcp-Name mirrors
// params.name / params.uri, and Mcp-Param-<Header> mirrors each tool argument whose input
// schema property carries `x-mcp-header`. Guarantees: values are compared after decoding the
// `=?base64?…?=` sentinel, which is validated strictly (bad padding or a character outside
// the alphabet is a mismatch, never a lenient decode); header names are matched without
// regard to case, values exactly; a header is required exactly when the body has a non-null
// value for it; integers compare numerically, booleans as true/false.

export type HeaderView = (lowercaseName: string) => string | undefined;

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header value with its base64 sentinel decoded; undefined when the sentinel's payload is not valid base64. */
export function decodeHeaderValue(v: string): string | undefined {
  if (v.length < 11 || !v.startsWith('=?base64?') || !v.endsWith('?=')) return v;
  const b = v.slice(9, -2);
  return B64.test(b) ? Buffer.from(b, 'base64').toString('utf8') : undefined;
}

/**
 * The first header problem of a request, as the message of a -32020 error, or undefined.
 * `nameField` is the body field Mcp-Name mirrors (none for unnamed methods); `schemaOf`
 * finds a tool's input schema for the Mcp-Param-* checks.
 */
export function headerProblem(method: string, p: Record<string, unknown>, headers: HeaderView, nameField: string | undefined, schemaOf: (tool: string) => unknown): string | undefined {
  if (!nameField) return undefined;
  const body = p[nameField];
  const raw = headers('mcp-name');
  if (raw === undefined) return `the Mcp-Name header is required for ${method}`;
  const name = decodeHeaderValue(raw);
  if (name === undefined) return 'the Mcp-Name header has an invalid base64 value';
  if (name !== body) return `Header mismatch: Mcp-Name header value '${raw}' does not match body ${nameField} '${String(body)}'`;
  if (method !== 'tools/call' || typeof body !== 'string') return undefined;
  const mirrored = mirroredArgs(schemaOf(body));
  if (!mirrored.length) return undefined;
  const args = (p.arguments ?? {}) as Record<string, unknown>;
  for (const [key, header] of mirrored) {
    const value = args[key];
    if (value === undefined || value === null) continue;
    const got = headers(`mcp-param-${header.toLowerCase()}`);
    if (got === undefined) return `the Mcp-Param-${header} header is required when arguments.${key} is given`;
    const decoded = decodeHeaderValue(got);
    if (decoded === undefined) return `the Mcp-Param-${header} header has an invalid base64 value`;
    if (!sameValue(decoded, value)) return `Header mismatch: Mcp-Param-${header} header value '${got}' does not match arguments.${key}`;
  }
  return undefined;
}

const MIRRORED = new WeakMap<object, [string, string][]>();

/** [argument, header name] for each input schema property carrying x-mcp-header; computed once per schema object. */
function mirroredArgs(schema: unknown): [string, string][] {
  if (schema === null || typeof schema !== 'object') return [];
  let found = MIRRORED.get(schema);
  if (!found) {
    const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
    found = Object.entries(props).flatMap(([key, prop]) => {
      const header = (prop as Record<string, unknown> | null)?.['x-mcp-header'];
      return typeof header === 'string' ? [[key, header] as [string, string]] : [];
    });
    MIRRORED.set(schema, found);
  }
  return found;
}

function sameValue(header: string, value: unknown): boolean {
  if (typeof value === 'string') return header === value;
  if (typeof value === 'boolean') return header === String(value);
  if (typeof value === 'number') return header.trim() !== '' && Number(header) === value;
  return false;
}
