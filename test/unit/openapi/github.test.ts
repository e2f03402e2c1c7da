// GitHub's REST description (npm @octokit/openapi, api.github.com.json: OpenAPI 3.0, ~13 MB)
// expanded through the whole manifest pipeline: no problem, 1,221 tools, 2 operations skipped
// (a text/plain and an octet-stream body), every input and output schema accepted by
// fastsvc's schema check. Numbers are of @octokit/openapi 23.0.2 (package-lock.json pins it).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkManifest } from '../../../src/manifest/index.js';
import { checkInputSchema } from '../../../src/core/input-schemas.js';

const GITHUB = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');

describe('openapi: GitHub\'s REST description', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'oa-github-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('expands with no problem into 1,221 tools, 2 operations skipped by name', () => {
    const file = join(dir, 'svc.yaml');
    writeFileSync(file, `version: 1\nname: github\nauth:\n  token: \${SVC_TOKEN:-a-test-token-of-some-length}\nopenapi:\n  - name: github\n    document: ${JSON.stringify(GITHUB)}\n    auth:\n      static:\n        bearer: \${GITHUB_TOKEN:-unset}\n`);
    const c = checkManifest(file, {});
    assert.deepEqual(c.problems.map((p) => p.format()), []);
    const tools = c.plan!.manifest.tools!;
    assert.equal(tools.length, 1221);
    assert.deepEqual(c.warnings.map((w) => w.message.replace(/ is not served.*/, '')).sort(), [
      'openapi github: POST /markdown/raw (operationId markdown/render-raw)',
      'openapi github: POST /repos/{owner}/{repo}/releases/{release_id}/assets (operationId repos/upload-release-asset)',
    ]);
    const get = tools.find((t) => t.name === 'repos.get-content')!;
    assert.equal(get.http!.url, 'https://api.github.com/repos/{{owner}}/{{repo}}/contents/{{path}}');
    assert.deepEqual(get.annotations, { readOnlyHint: true });
    for (const t of tools) {
      for (const s of [t.input_schema, t.output_schema]) if (s) assert.doesNotThrow(() => checkInputSchema(s), t.name);
    }
    assert.equal(tools.filter((t) => t.output_schema).length, 643);
  });
});
