// Stage 2: check the loaded value against schema/svc.schema.json.
// Guarantees: all schema problems are reported at once, each at the line:col of
// the offending node; an unknown field close to an allowed one says "did you
// mean …?"; defaults from the schema are filled in (ajv useDefaults), so later
// stages never invent a default of their own.

import type { ErrorObject, ValidateFunction } from 'ajv';
import { SvcError } from '../errors.js';
import type { Source } from './load.js';
import type { SvcManifest } from '../core/manifest-types.gen.js';
import { allowedFields } from './schema-fields.js';
import { closestName } from '../util/did-you-mean.js';
// Precompiled from the schema by scripts/gen-types.mjs (ajv standalone; a test
// fails when it is stale), so neither start-up nor a reload compiles the schema.
import { validateManifest as generated } from '../core/validators.gen.js';

/** The manifest schema's validator (all errors, strict, defaults applied). */
export const manifestValidator = generated as unknown as ValidateFunction;

export function validateManifest(src: Source): { manifest?: SvcManifest; problems: SvcError[] } {
  if (src.value === null || typeof src.value !== 'object' || Array.isArray(src.value)) {
    return { problems: [new SvcError('SCHEMA_VIOLATION', 'the manifest must be a YAML mapping (version, name, tools, …)', { file: src.file, line: 1, col: 1 })] };
  }
  const validate = manifestValidator;
  if (validate(src.value)) return { manifest: src.value as SvcManifest, problems: [] };
  const problems = dedupe(validate.errors ?? []).map((e) => {
    const path = pointerToPath(e.instancePath);
    const target = e.keyword === 'additionalProperties' ? [...path, (e.params as { additionalProperty: string }).additionalProperty] : path;
    const { line, col } = src.locate(target, e.keyword === 'additionalProperties' ? 'key' : 'value');
    const suggestion = e.keyword === 'additionalProperties' ? closestName(target[target.length - 1] as string, allowedFields(path)) : undefined;
    const message = describe(e) + (suggestion ? `; did you mean "${suggestion}"?` : '');
    return new SvcError('SCHEMA_VIOLATION', message, { file: src.file, line, col, path: e.instancePath || '/', ...(suggestion && { data: { suggestion } }) });
  });
  return { problems };
}

export function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer.slice(1).split('/').map((s) => {
    const k = s.replace(/~1/g, '/').replace(/~0/g, '~');
    return /^\d+$/.test(k) ? Number(k) : k;
  });
}

function describe(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'manifest';
  switch (e.keyword) {
    case 'additionalProperties':
      return `${where}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `${where}: missing required field "${(e.params as { missingProperty: string }).missingProperty}"`;
    case 'enum':
      return `${where}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${where}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    default:
      return `${where}: ${e.message}`;
  }
}

// anyOf/oneOf produce one error per branch plus a summary; keep the summary and
// the most specific error per path.
function dedupe(errors: ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  const out: ErrorObject[] = [];
  for (const e of errors) {
    const key = `${e.instancePath}|${e.keyword}|${JSON.stringify(e.params)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  const anyOfPaths = new Set(out.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  return out.filter((e) => e.keyword === 'anyOf' || !anyOfPaths.has(e.instancePath));
}
