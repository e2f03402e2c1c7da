// An OpenAPI schema object → a JSON Schema a tool's input_schema / output_schema can hold.
// Guarantees: the result uses only keywords that mean the same in JSON Schema draft-07
// (what fastsvc validates an input_schema as when it names no $schema) and in 2020-12
// (what MCP clients assume), and only formats and `u`-valid patterns fastsvc's validator
// knows — anything else (xml, discriminator, externalDocs, x-…, prefixItems, $defs,
// unevaluated*, an unknown format) is dropped, which only ever makes the schema accept
// more, never less (the API still checks its own input). OpenAPI 3.0 / Swagger 2.0 forms are
// translated: `nullable: true` (and 2.0's `x-nullable`) adds "null" to `type` (and to `enum`),
// boolean `exclusiveMinimum`/`exclusiveMaximum` become the numeric form, `example` becomes
// `examples: [example]`. Every $ref is inlined: a $ref that occurs MAX_RECURSION times on
// the way down from the top (a recursive schema) is cut there — replaced by `{}` (any value)
// with a description saying so — and nesting deeper than MAX_DEPTH is cut the same way, so
// the result is finite. The translation of a $ref that met no cut is computed once per document
// and shared (the caller must not mutate results); what a translation makes is charged to the
// budget (budget.ts) as it is made — a shared translation as the copies it stands for — so a
// $ref fan-out passes the bound (BoundPassed) after bounded work instead of exhausting memory.

import type { OpenApiVersion } from './document.js';
import { child, isRef, type Located, type Refs } from './refs.js';
import type { Budget } from './budget.js';

/** A $ref met this many times on one path is cut (so a recursive schema is unrolled once). */
export const MAX_RECURSION = 2;
/** Schemas nested deeper than this are cut. */
export const MAX_DEPTH = 24;

export type JsonSchema = Record<string, unknown> | boolean;

const COPY = new Set(['type', 'enum', 'const', 'default', 'title', 'description', 'readOnly', 'writeOnly', 'deprecated', 'minimum', 'maximum', 'multipleOf', 'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'required']);
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'readOnly', 'writeOnly', 'deprecated']);
const ONE = new Set(['additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else']);
const MAP = new Set(['properties', 'patternProperties']);
const LIST = new Set(['allOf', 'anyOf', 'oneOf']);
/** The formats ajv-formats knows (fastsvc's input validator refuses any other). */
const FORMATS = new Set(['date', 'time', 'date-time', 'iso-time', 'iso-date-time', 'duration', 'uri', 'uri-reference', 'uri-template', 'url', 'email', 'hostname', 'ipv4', 'ipv6', 'regex', 'uuid', 'json-pointer', 'json-pointer-uri-fragment', 'relative-json-pointer', 'byte', 'int32', 'int64', 'float', 'double', 'password', 'binary']);

export class SchemaTranslator {
  /** A $ref's translation (that met no cut) and the characters it was charged. */
  private readonly memo = new Map<string, { schema: JsonSchema; chars: number }>();
  private readonly onPath = new Map<string, number>();
  private cuts = 0;

  constructor(private readonly refs: Refs, private readonly version: OpenApiVersion, private readonly budget: Budget) {}

  translate(node: Located, depth = 0): JsonSchema {
    if (depth > MAX_DEPTH) return this.cut(`nested deeper than ${MAX_DEPTH}`);
    if (isRef(node.value)) return this.viaRef(node, depth);
    const s = node.value;
    if (typeof s === 'boolean') {
      this.budget.charge(5);
      return s;
    }
    if (s === null || typeof s !== 'object' || Array.isArray(s)) {
      this.budget.charge(2);
      return {};
    }
    return this.object(node, s as Record<string, unknown>, depth);
  }

  private viaRef(node: Located, depth: number): JsonSchema {
    const target = this.refs.resolve(node);
    const seen = this.onPath.get(target.key) ?? 0;
    if (seen >= MAX_RECURSION) return this.cut(`recursive schema ${target.key.slice(target.key.indexOf('#') + 1)}`);
    const known = this.memo.get(target.key);
    let out: JsonSchema;
    if (known) {
      this.budget.charge(known.chars);
      out = known.schema;
    } else {
      const cutsBefore = this.cuts;
      const charsBefore = this.budget.toolChars;
      this.onPath.set(target.key, seen + 1);
      try {
        out = this.translate(target, depth + 1);
      } finally {
        if (seen) this.onPath.set(target.key, seen);
        else this.onPath.delete(target.key);
      }
      if (this.cuts === cutsBefore) this.memo.set(target.key, { schema: out, chars: this.budget.toolChars - charsBefore });
    }
    // 3.1: keywords beside a $ref apply too; 3.0 and 2.0 ignore them.
    const siblings = this.version === '3.1' ? Object.keys(node.value as object).filter((k) => k !== '$ref') : [];
    if (!siblings.length) return out;
    const rest = this.object(node, Object.fromEntries(siblings.map((k) => [k, (node.value as Record<string, unknown>)[k]])), depth);
    const keys = Object.keys(rest as object);
    if (!keys.length) return out;
    // Annotations beside a $ref (description, readOnly, …) constrain nothing: merged in, the schema keeps its type.
    if (keys.every((k) => ANNOTATIONS.has(k)) && typeof out === 'object') return { ...out, ...(rest as object) };
    this.budget.charge(12);
    return { allOf: [out, rest] };
  }

  private cut(why: string): JsonSchema {
    this.cuts++;
    const description = `(${why}: not expanded further; any value is accepted here)`;
    this.budget.charge(description.length + 18);
    return { description };
  }

  private object(node: Located, s: Record<string, unknown>, depth: number): JsonSchema {
    const out: Record<string, unknown> = {};
    const budget = this.budget;
    budget.charge(2);
    for (const [k, v] of Object.entries(s)) {
      // The key, its quotes, colon and comma; values copied as they are by their JSON length.
      budget.charge(k.length + 4);
      if (COPY.has(k)) {
        if (k === 'required' && !Array.isArray(v)) continue;
        budget.chargeValue(v);
        out[k] = v;
      } else if (ONE.has(k)) {
        if (k === 'additionalProperties' && typeof v === 'boolean') out[k] = v;
        else out[k] = this.translate(child(node, k), depth + 1);
      } else if (k === 'items') {
        if (!Array.isArray(v)) out[k] = this.translate(child(node, k), depth + 1);
      } else if (MAP.has(k) && v !== null && typeof v === 'object') {
        const props = child(node, k);
        const m: Record<string, JsonSchema> = {};
        budget.charge(2);
        for (const name of Object.keys(v)) {
          if (k === 'patternProperties' && !validRegex(name)) continue;
          budget.charge(name.length + 4);
          m[name] = this.translate(child(props, name), depth + 1);
        }
        if (Object.keys(m).length) budget.charge(-1);
        out[k] = m;
      } else if (LIST.has(k) && Array.isArray(v)) {
        budget.charge(2 + v.length);
        out[k] = v.map((_, i) => this.translate(child(child(node, k), i), depth + 1));
      } else if (k === 'exclusiveMinimum' || k === 'exclusiveMaximum') {
        if (typeof v === 'number') out[k] = v;
      } else if (k === 'pattern') {
        budget.charge(String(v).length + 2);
        if (typeof v === 'string' && validRegex(v)) out[k] = v;
      } else if (k === 'format') {
        if (typeof v === 'string' && FORMATS.has(v)) out[k] = v;
      } else if (k === 'examples') {
        if (Array.isArray(v)) {
          budget.chargeValue(v);
          out[k] = v;
        }
      } else if (k === 'example') {
        if (!Array.isArray(s.examples)) {
          budget.chargeValue(v);
          out.examples = [v];
        }
      }
    }
    // Boolean exclusive bounds (3.0, 2.0) move the bound itself.
    for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
      if (s[flag] === true && typeof s[bound] === 'number') {
        out[flag] = s[bound];
        delete out[bound];
      }
    }
    if (this.version !== '3.1' && (s.nullable === true || s['x-nullable'] === true)) {
      if (typeof out.type === 'string') out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
    if (Array.isArray(out.type) && out.type.length === 0) delete out.type;
    if (Object.keys(s).length) budget.charge(-1); // the last key has no comma
    return out;
  }
}

function validRegex(p: string): boolean {
  try {
    new RegExp(p, 'u');
    return true;
  } catch {
    return false;
  }
}
