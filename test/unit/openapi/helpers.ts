// Shared by the openapi unit tests: expand one fixture document as a source would; the problems a
// call reports (its ManifestError's, or its one SvcError), failing the test when it reports none.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { ManifestError, SvcError } from '../../../src/errors.js';
import type { OpenApiSource } from '../../../src/core/manifest-types.gen.js';
import { expandOpenApi, type Expanded } from '../../../src/openapi/expand.js';
import type { OpenApiTool } from '../../../src/openapi/operation.js';

export const FIXTURES = resolve('test/fixtures/openapi');

export function expandFixture(document: string, source: Partial<OpenApiSource> = {}, opts: { offline?: boolean } = {}): Expanded {
  return expandOpenApi([{ name: 'api', document, naming: '{operationId}', required_scopes: [], ...source }], {
    file: 'svc.yaml', baseDir: FIXTURES, locate: (path) => ({ line: path.length, col: 1 }), ...opts,
  });
}

export function byName(x: Expanded): Map<string, OpenApiTool> {
  return new Map(x.tools.map((t) => [t.name, t]));
}

export function problemsOf(f: () => unknown): SvcError[] {
  try {
    f();
  } catch (e) {
    if (e instanceof ManifestError) return e.problems;
    if (e instanceof SvcError) return [e];
    throw e;
  }
  assert.fail('expected a problem');
}
