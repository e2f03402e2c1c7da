// Import, then load: `fastsvc import openapi`'s output (toolsYaml) pasted into a manifest gives the
// same tool definitions, defaults filled in, as the `openapi` source it was made from — on the
// Petstores, the edge documents (one description holds `${NAME}` text, which must come back as
// written, not as an environment variable) and GitHub's description.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkManifest } from '../../../src/manifest/index.js';
import { importSource, toolsYaml } from '../../../src/cli/import-openapi.js';
import { expandOpenApi } from '../../../src/openapi/expand.js';
import { FIXTURES } from './helpers.js';

const GITHUB = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
const HEAD = 'version: 1\nname: rt\nauth:\n  token: ${SVC_TOKEN:-a-test-token-of-some-length}\nprofile:\n  scopes: [pets.read]\n';

describe('openapi: import, then load, gives the source\'s tools', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'oa-roundtrip-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, string, Record<string, string[] | string>][] = [
    ['Petstore 3.0', join(FIXTURES, 'petstore-3.0.yaml'), { 'required-scope': ['pets.read'], 'exclude-tag': ['user'] }],
    ['Petstore 3.1', join(FIXTURES, 'petstore-3.1.yaml'), { 'base-url': 'http://127.0.0.1:4010/api/v31' }],
    ['Petstore 2.0', join(FIXTURES, 'petstore-2.0.json'), { naming: '{tag}.{operationId}' }],
    ['edge requests', join(FIXTURES, 'edge-requests.yaml'), {}],
    ['edge schemas', join(FIXTURES, 'edge-schemas.yaml'), {}],
    ['GitHub', GITHUB, {}],
  ];
  for (const [what, doc, flags] of cases) {
    it(what, () => {
      const source = importSource(doc, flags);
      const x = expandOpenApi([source], { file: 'cli', baseDir: dir, locate: () => ({ line: 1, col: 1 }) });
      const imported = join(dir, 'imported.yaml');
      writeFileSync(imported, HEAD + toolsYaml(x.tools, 'test', []));
      const viaSource = join(dir, 'source.yaml');
      writeFileSync(viaSource, HEAD + `openapi:\n  - ${JSON.stringify({ ...source, name: 'api' })}\n`);
      const env = { FORM_NAME: 'replaced', ESCAPED: 'replaced', DEFAULTED: 'replaced' };
      const a = checkManifest(imported, env);
      const b = checkManifest(viaSource, env);
      assert.deepEqual(a.problems.map((p) => p.format()), []);
      assert.deepEqual(b.problems.map((p) => p.format()), []);
      assert.ok(a.plan!.manifest.tools!.length > 0);
      assert.deepEqual(a.plan!.manifest.tools, b.plan!.manifest.tools);
      const form = a.plan!.manifest.tools!.find((t) => t.name === 'sendForm');
      if (what === 'edge requests') assert.equal(form!.description, 'Sends ${FORM_NAME}, $${ESCAPED}, ${DEFAULTED:-x} and ${not a variable} as written.');
    });
  }
});
