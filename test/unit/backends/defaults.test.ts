import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BACKEND_DEFAULTS } from '../../../src/runtime/backends/types.js';

const schema = JSON.parse(fs.readFileSync(new URL('../../../schema/svc.schema.json', import.meta.url), 'utf8'));

describe('backend defaults', () => {
  const defs: Record<keyof typeof BACKEND_DEFAULTS, string> = { http: 'HttpBackend', exec: 'ExecBackend', fs: 'FsBackend', sqlite: 'SqliteBackend' };
  for (const [kind, def] of Object.entries(defs) as [keyof typeof BACKEND_DEFAULTS, string][]) {
    it(`${kind}: the fallbacks equal the schema's defaults for ${def}`, () => {
      const props = schema.definitions[def].properties as Record<string, { default?: unknown }>;
      const fromSchema = Object.fromEntries(Object.entries(props).filter(([, p]) => 'default' in p).map(([k, p]) => [k, p.default]));
      assert.deepEqual({ ...BACKEND_DEFAULTS[kind] }, fromSchema);
    });
  }
});
