// The field names schema/svc.schema.json allows at a place in a manifest, for
// "did you mean …?" on an unknown field. Guarantees: follows $ref, items and
// anyOf/oneOf/allOf branches (the union of their `properties`); an unknown place
// gives no names; the schema file is read once, on first use, only when needed.

import { readFileSync } from 'node:fs';
import { packageFile } from '../util/package-root.js';

type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[] };

let root: Schema | undefined;

function schema(): Schema {
  root ??= JSON.parse(readFileSync(packageFile('schema', 'svc.schema.json'), 'utf8')) as Schema;
  return root;
}

/** The schemas that apply at one node: $refs resolved, combinator branches spread. */
function expand(s: Schema | undefined): Schema[] {
  if (!s || typeof s !== 'object') return [];
  if (s.$ref) return expand(s.$ref.slice(2).split('/').reduce<unknown>((n, k) => (n as Record<string, unknown> | undefined)?.[k], schema()) as Schema | undefined);
  return [s, ...[...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap(expand)];
}

/** Names allowed in the object at `path` (a manifest path such as ['tools', 0]). */
export function allowedFields(path: readonly (string | number)[]): string[] {
  let here = expand(schema());
  for (const seg of path) {
    here = here.flatMap((s) => expand(typeof seg === 'number' ? s.items : s.properties?.[seg]));
  }
  return [...new Set(here.flatMap((s) => Object.keys(s.properties ?? {})))];
}
