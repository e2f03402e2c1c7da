// A backend spec as the loader would hand it over: the schema's own defaults
// (schema/svc.schema.json, top-level properties of one definition) filled in
// where the test's spec leaves a field out. Backends have no defaults of their
// own, so unit tests that call a backend directly build their specs here.

import fs from 'node:fs';

const schema = JSON.parse(fs.readFileSync(new URL('../../schema/svc.schema.json', import.meta.url), 'utf8')) as {
  definitions: Record<string, { properties: Record<string, { default?: unknown }> }>;
};

export function schemaDefaults(def: 'HttpBackend' | 'ExecBackend' | 'FsBackend' | 'SqliteBackend'): Record<string, unknown> {
  const props = schema.definitions[def]!.properties;
  return structuredClone(Object.fromEntries(Object.entries(props).filter(([, p]) => 'default' in p).map(([k, p]) => [k, p.default])));
}

export function withDefaults<T>(def: Parameters<typeof schemaDefaults>[0], spec: object): T {
  return { ...schemaDefaults(def), ...spec } as T;
}
