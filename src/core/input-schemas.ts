// Input schemas: the check every tool's input_schema passes when a manifest or catalog is
// loaded, and the validators compiled from them. Guarantees: check() is cheap (no code is
// generated: the meta-schemas are precompiled by scripts/gen-types.mjs) and refuses what
// compile() would refuse for the schemas operators write — a schema that breaks its
// meta-schema (draft-07, or 2020-12 when $schema says so), an unknown keyword (strict mode),
// a pattern that is not a valid `u` regex, a format ajv-formats does not know; an
// InputValidators compiles a schema only on its first use and compiles identical schemas
// (same JSON text) once, so a catalog of thousands of tools costs a compile per schema
// actually called, not per tool declared. A schema that check() passed
// but ajv still refuses at first use (e.g. a $ref that resolves nowhere) throws
// INPUT_SCHEMA_INVALID then.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SvcError } from '../errors.js';
import { validate as metaDraft07 } from './meta-schema-draft-07.gen.js';
import { validate as metaDraft2020 } from './meta-schema-2020-12.gen.js';

// ajv-formats ships CJS with a default export; under NodeNext it arrives as a namespace.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

// x-mcp-header (MCP 2026-07-28, SEP-2243) names the Mcp-Param-* header that mirrors an argument; it is an annotation.
const INPUT_OPTS = { keywords: ['x-mcp-header'], allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, useDefaults: true, coerceTypes: false };
// Ajv's 2020-12 dialect lacks $anchor: accepted as an annotation (a $ref by anchor name does not resolve).
const INPUT_OPTS_2020 = { ...INPUT_OPTS, keywords: ['x-mcp-header', '$anchor'] };

const is2020 = (schema: object) => (schema as { $schema?: string }).$schema?.replace(/#$/, '') === DRAFT_2020;

type MetaValidator = ((schema: unknown) => boolean) & { errors?: ErrorObject[] | null };

// The meta-schema check is a precompiled validator (ajv's own copy of each meta-schema,
// generated at build time); two long-lived instances, with the formats, say which keywords
// and formats exist and write the error text. Neither compiles anything.
let meta7: Ajv | undefined;
let meta2020: Ajv | undefined;
const checker = (wants2020: boolean): Ajv => wants2020
  ? (meta2020 ??= addFormats(new Ajv2020({ ...INPUT_OPTS_2020, meta: false }) as unknown as Ajv))
  : (meta7 ??= addFormats(new Ajv({ ...INPUT_OPTS, meta: false })));

// Keywords whose value is a subschema, a map of subschemas, or a subschema or list of them.
const ONE = new Set(['not', 'if', 'then', 'else', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'contentSchema']);
const MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);

// Schemas that passed check(): buildCatalog skips them (a manifest's schemas were checked by compilePlan).
const checked = new WeakSet<object>();

/** Throws Error(why) when ajv would refuse the schema; cheap: no validator is generated. */
export function checkInputSchema(schema: object): void {
  if (checked.has(schema)) return;
  const wants2020 = is2020(schema);
  const ajv = checker(wants2020);
  const meta: MetaValidator = wants2020 ? metaDraft2020 : metaDraft07;
  if (!meta(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(meta.errors, { dataVar: 'input_schema' })}`);
  walk(schema, ajv, '#');
  checked.add(schema);
}

function walk(s: unknown, ajv: Ajv, at: string): void {
  if (s === null || typeof s !== 'object' || Array.isArray(s)) return; // booleans; the meta-schema refused the rest
  const keywords = ajv.RULES.keywords;
  for (const [k, v] of Object.entries(s)) {
    if (!keywords[k]) throw new Error(`strict mode: unknown keyword: "${k}" (at ${at})`);
    if (k === 'pattern' && typeof v === 'string') {
      try {
        new RegExp(v, 'u');
      } catch (e) {
        throw new Error(`pattern at ${at} is not a valid regular expression: ${(e as Error).message}`);
      }
    } else if (k === 'format' && typeof v === 'string' && !ajv.formats[v]) {
      throw new Error(`unknown format "${v}" ignored in schema at path "${at}"`);
    } else if (ONE.has(k)) walk(v, ajv, `${at}/${k}`);
    else if (MAP.has(k) && v && typeof v === 'object') {
      for (const [name, sub] of Object.entries(v)) {
        if (k === 'patternProperties') checkRegex(name, `${at}/${k}`);
        walk(sub, ajv, `${at}/${k}/${name}`);
      }
    } else if (LIST.has(k)) (Array.isArray(v) ? v : [v]).forEach((sub, i) => walk(sub, ajv, `${at}/${k}/${i}`));
  }
}

function checkRegex(source: string, at: string): void {
  try {
    new RegExp(source, 'u');
  } catch (e) {
    throw new Error(`patternProperties key at ${at} is not a valid regular expression: ${(e as Error).message}`);
  }
}

export interface InputCompiler {
  compile(schema: object): ValidateFunction;
}

/**
 * A plain compiler (tests, one-off checks): check(), then compile. Draft-07 by default; a
 * schema whose $schema is 2020-12 is compiled by Ajv2020 (made on first use).
 */
export function newInputAjv(): InputCompiler {
  const opts = { ...INPUT_OPTS, validateSchema: false };
  const draft7 = addFormats(new Ajv(opts));
  let draft2020: Ajv | undefined;
  return {
    compile(schema) {
      checkInputSchema(schema);
      if (!is2020(schema)) return draft7.compile(schema);
      draft2020 ??= addFormats(new Ajv2020({ ...INPUT_OPTS_2020, validateSchema: false }) as unknown as Ajv);
      return draft2020.compile(schema);
    },
  };
}

/**
 * The validators of one catalog: each made on first use and shared by every tool whose
 * schema has the same JSON text; released with the catalog. `lazy(schema, name)` returns
 * the getter a tool entry uses.
 */
export class InputValidators {
  #ajv: InputCompiler | undefined;
  readonly #byText = new Map<string, ValidateFunction>();

  /** The validator for this schema, compiled now if no identical schema was compiled before. */
  get(schema: object, tool: string): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.#byText.get(key);
    if (v) return v;
    try {
      v = (this.#ajv ??= newInputAjv()).compile(schema);
    } catch (e) {
      throw new SvcError('INPUT_SCHEMA_INVALID', `tool ${tool}: ${(e as Error).message}`, { path: `tools/${tool}/input_schema` });
    }
    this.#byText.set(key, v);
    return v;
  }

  /** How many distinct validators were compiled so far. */
  get compiled(): number {
    return this.#byText.size;
  }
}
