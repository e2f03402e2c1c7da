// A document with any node of the wrong type is a located problem (OPENAPI_INVALID) or a skipped
// operation, never an internal error: every node of the Petstores (3.0 and Swagger 2.0) is replaced,
// one at a time, by null and by a string, and each such document expanded (with scope_map, so
// security is read too). Found this way: a null media type and a null Swagger 2.0 response threw.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { ManifestError, SvcError } from '../../../src/errors.js';
import { expandOpenApi } from '../../../src/openapi/expand.js';
import { FIXTURES } from './helpers.js';

describe('openapi: a node of the wrong type is never an internal error', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'oa-malformed-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const file of ['petstore-3.0.yaml', 'petstore-2.0.json']) {
    it(`${file}: every node replaced by null, then by a string`, () => {
      const base = load(readFileSync(join(FIXTURES, file), 'utf8')) as Record<string, unknown>;
      const paths: (string | number)[][] = [];
      const walk = (v: unknown, at: (string | number)[]) => {
        if (at.length) paths.push(at);
        if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k], [...at, Array.isArray(v) ? Number(k) : k]);
      };
      walk(base, []);
      const internal: string[] = [];
      for (const at of paths) {
        for (const bad of [null, 'x']) {
          const doc = structuredClone(base);
          let o = doc as Record<string | number, unknown>;
          for (const k of at.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
          o[at[at.length - 1]!] = bad;
          writeFileSync(join(dir, 'doc.json'), JSON.stringify(doc));
          try {
            expandOpenApi([{ name: 'api', document: 'doc.json', naming: '{operationId}', required_scopes: [], base_url: 'https://x.example.com', scope_map: { 'write:pets': ['pets.write'] } }], {
              file: 'svc.yaml', baseDir: dir, locate: () => ({ line: 1, col: 1 }),
            });
          } catch (e) {
            if (!(e instanceof ManifestError || e instanceof SvcError)) internal.push(`${at.join('/')} = ${JSON.stringify(bad)}: ${(e as Error).message}`);
          }
        }
      }
      assert.ok(paths.length > 500, `${paths.length} nodes`);
      assert.deepEqual(internal, []);
    });
  }
});
