// A capability's listing (what tools/list, resources/list, prompts/list and GET /svc show of it)
// made to fit one list page of server.list_page_bytes characters.
// Guarantees: a listing whose page of its own ([listing]) fits is kept as it is; a longer one is
// listed in short, by the first of these steps that fits — a tool without its outputSchema; then
// with its inputSchema cut to the deepest level that fits (below it, each subschema is its `type`
// alone) and a sentence in its description saying so; then, for any capability, its description
// and title shortened — and fitListing() says which step it took. A cut schema accepts every
// value the whole one accepts (keywords a cut could make stricter are left out: not, if/then/else,
// contains, propertyNames, dependencies, patternProperties with the additionalProperties:false
// beside them, unevaluated*; oneOf becomes anyOf), so a client that checks arguments against the
// listing never refuses a call the server would take; the server checks every call against the
// whole schema. Work is bounded by the page size, not by the schema.

type Listing = Readonly<Record<string, unknown>>;

export interface Fitted {
  listing: Listing;
  /** What was left out or cut, in words; undefined when the listing is whole. */
  shortened?: string;
}

/** Subschema keywords whose cut subschemas keep the schema as loose or looser. */
const ONE = new Set(['items', 'additionalItems']);
const MAP = new Set(['properties']);
const LIST = new Set(['allOf', 'anyOf']);
/** Keywords kept as they are: constraints that do not depend on a subschema, and annotations. */
const KEEP = new Set(['type', 'enum', 'const', 'required', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'title', 'description', 'x-mcp-header', '$schema']);

const length = (v: unknown) => JSON.stringify(v).length;

/** What a tool's listing holds (a manifest tool or a catalog's ToolDef). */
export interface ToolListed {
  name: string;
  title?: string;
  description: string;
  output_schema?: object;
  annotations?: object;
  task?: string;
}

/** A tool's listing, whole: `inputSchema` its input schema (or the empty object schema). */
export function toolListing(t: ToolListed, inputSchema: object): Record<string, unknown> {
  return {
    name: t.name,
    ...(t.title !== undefined && { title: t.title }),
    description: t.description,
    inputSchema,
    ...(t.output_schema !== undefined && { outputSchema: t.output_schema }),
    ...(t.annotations !== undefined && { annotations: t.annotations }),
    ...(t.task !== undefined && t.task !== 'forbidden' && { execution: { taskSupport: t.task } }),
  };
}

/** A resource's (or resource template's) listing, whole. */
export function resourceListing(r: { uri?: string; uri_template?: string; name: string; title?: string; description?: string; mime_type?: string }): Record<string, unknown> {
  return {
    ...(r.uri !== undefined ? { uri: r.uri } : { uriTemplate: r.uri_template! }),
    name: r.name,
    ...(r.title !== undefined && { title: r.title }),
    ...(r.description && { description: r.description }),
    mimeType: r.mime_type ?? 'text/plain',
  };
}

/** A prompt's listing, whole. */
export function promptListing(p: { name: string; title?: string; description?: string; arguments?: { name: string; description?: string; required?: boolean }[] }): Record<string, unknown> {
  return {
    name: p.name,
    ...(p.title !== undefined && { title: p.title }),
    ...(p.description && { description: p.description }),
    arguments: (p.arguments ?? []).map((a) => ({ name: a.name, ...(a.description && { description: a.description }), required: a.required ?? false })),
  };
}

/** `listing` as it fits a page of `bytes` characters on its own (see the header). */
export function fitListing(listing: Listing, bytes: number): Fitted {
  const room = bytes - 2; // the page's brackets
  if (length(listing) <= room) return { listing };
  let short: Record<string, unknown> = { ...listing };
  const steps: string[] = [];
  if (short.outputSchema !== undefined) {
    delete short.outputSchema;
    steps.push('its output schema left out');
    if (length(short) <= room) return { listing: short, shortened: steps.join(', ') };
  }
  let note = '';
  const textless = { ...short, ...(short.description !== undefined && { description: '' }), ...(short.title !== undefined && { title: '' }) };
  if (short.inputSchema !== null && typeof short.inputSchema === 'object' && length(textless) > room) {
    // The schema is too long even without the texts: cut it to the deepest level that fits beside them.
    note = ' (Listed in short: its input schema is cut to fit a list page. A call is checked against the whole schema.)';
    const base = { ...short, description: `${String(short.description ?? '')}${note}` };
    const left = Math.max(0, room - length({ ...base, inputSchema: {} }) + 2);
    let best: unknown = { type: 'object' };
    let bestDepth = 0;
    for (let depth = 1; ; depth++) {
      const cut: { left: number; deeper?: boolean } = { left };
      const schema = cutSchema(short.inputSchema, depth, cut);
      if (cut.left < 0 || length(schema) > left) break;
      best = schema;
      bestDepth = depth;
      if (!cut.deeper) break; // nothing was cut at this depth: deeper is the same
    }
    short = { ...base, inputSchema: best };
    steps.push(bestDepth > 0 ? `its input schema cut ${bestDepth} level${bestDepth === 1 ? '' : 's'} down` : 'its input schema listed as any object');
  }
  for (const field of ['description', 'title'] as const) {
    const whole = short[field];
    if (typeof whole !== 'string' || length(short) <= room) continue;
    // The note stays whole; the text before it is cut, by characters of JSON (an escaped one counts for more).
    const text = field === 'description' && note ? whole.slice(0, whole.length - note.length) : whole;
    const tail = field === 'description' ? note : '';
    let keep = Math.max(0, text.length - (length(short) - room) - 1);
    for (;;) {
      short = { ...short, [field]: `${keep > 0 ? `${text.slice(0, keep)}…` : ''}${tail}` };
      if (length(short) <= room || keep === 0) break;
      keep = Math.max(0, keep - Math.max(1, length(short) - room));
    }
    steps.push(`its ${field} shortened`);
  }
  return { listing: short, shortened: steps.join(', ') };
}

/**
 * `s` cut `depth` levels down (a subschema at the cut is its `type` alone), within `cut.left`
 * characters: `cut.left` goes below 0 once the result would be longer (the walk then stops early);
 * `cut.deeper` is set when something was cut at this depth.
 */
function cutSchema(s: unknown, depth: number, cut: { left: number; deeper?: boolean }): unknown {
  if (cut.left < 0) return {};
  if (s === null || typeof s !== 'object' || Array.isArray(s)) {
    cut.left -= length(s ?? {});
    return s;
  }
  const o = s as Record<string, unknown>;
  if (depth === 0) {
    const type = typeof o.type === 'string' || (Array.isArray(o.type) && o.type.every((t) => typeof t === 'string')) ? { type: o.type } : {};
    cut.deeper = true;
    cut.left -= length(type);
    return type;
  }
  const out: Record<string, unknown> = {};
  cut.left -= 2;
  for (const [k, v] of Object.entries(o)) {
    if (cut.left < 0) break;
    let value: unknown;
    if (KEEP.has(k)) value = v;
    else if (k === 'additionalProperties') value = typeof v === 'boolean' ? (o.patternProperties === undefined || v ? v : undefined) : cutSchema(v, depth - 1, cut);
    else if (ONE.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) value = cutSchema(v, depth - 1, cut);
    else if (MAP.has(k) && v !== null && typeof v === 'object') {
      cut.left -= 2;
      value = Object.fromEntries(Object.entries(v).map(([name, sub]) => {
        cut.left -= name.length + 4;
        return [name, cutSchema(sub, depth - 1, cut)];
      }));
    } else if ((LIST.has(k) || k === 'oneOf') && Array.isArray(v)) {
      cut.left -= 1 + v.length;
      value = v.map((sub) => cutSchema(sub, depth - 1, cut));
    }
    if (value === undefined) continue;
    const key = k === 'oneOf' ? 'anyOf' : k;
    if (key === 'anyOf' && out.anyOf !== undefined) continue; // both anyOf and oneOf: the anyOf alone is looser
    out[key] = value;
    cut.left -= key.length + 4 + (KEEP.has(k) || typeof value === 'boolean' ? length(value) : 0);
  }
  return out;
}
