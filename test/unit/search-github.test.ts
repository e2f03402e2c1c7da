// Search over GitHub's REST description (1,221 tools, the catalog issue 39 measures on): every labelled query of
// bench/search/*.yaml answered with 5 matches fits a model's context — at most 1,500 o200k tokens (the issue's
// limit), each match's `why` naming at most 3 fields a term, strongest first; an operation OpenAPI marks deprecated
// reaches the tool's definition and ranks below the one that replaces it.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadManifest } from '../../src/manifest/index.js';
import { buildCatalog, type Catalog } from '../../src/core/catalog.js';
import { searchIndex } from '../../src/catalog/search-index.js';
import { textCost } from '../../src/catalog/catalog-cost.js';

const GITHUB = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
const QUERY_FILES = ['github-queries.yaml', 'github-queries-2.yaml', 'github-queries-3.yaml'].map((f) => new URL(`../../bench/search/${f}`, import.meta.url));
const ANSWER_TOKENS = 1500;
/** The fields other than arguments, strongest first (an argument's name ranks after tags, its description after source). */
const RANK = ['name', 'title', 'tags', 'source', 'description'];

describe('search over GitHub\'s REST description', () => {
  let dir: string;
  let catalog: Catalog;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-github-'));
    const file = join(dir, 'svc.yaml');
    writeFileSync(file, `version: 1\nname: github\nauth:\n  token: \${SVC_TOKEN:-a-test-token-of-some-length}\nopenapi:\n  - name: github\n    document: ${JSON.stringify(GITHUB)}\n`);
    catalog = buildCatalog((await loadManifest(file, {})).svc);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('carries OpenAPI\'s deprecated to the tool, and ranks a deprecated tool below the operation that replaces it', () => {
    const deprecated = [...catalog.tools.values()].filter((e) => e.def.deprecated).map((e) => e.def.name);
    assert.equal(deprecated.length, 37);
    assert.ok(deprecated.includes('teams.add-member-legacy') && !catalog.tools.get('teams.add-or-update-membership-for-user-in-org')!.def.deprecated);
    const names = searchIndex(catalog).tools.search('add a member to a team', { limit: 10 }).matches.map((m) => m.name);
    assert.ok(names.indexOf('teams.add-or-update-membership-for-user-in-org') < names.indexOf('teams.add-member-legacy'), names.join(', '));
  });

  it('answers every labelled query with 5 matches in at most 1,500 o200k tokens, why naming at most 3 fields a term, strongest first', () => {
    const queries = QUERY_FILES.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { queries: { q: string }[] }).queries.map((x) => x.q));
    assert.ok(queries.length >= 400, `${queries.length} queries`);
    const ix = searchIndex(catalog).tools;
    let largest = { tokens: 0, q: '' };
    let full = 0;
    for (const q of queries) {
      const r = ix.search(q, { limit: 5 });
      if (r.matches.length === 5) full++;
      const tokens = textCost(JSON.stringify(r)).tokens;
      if (tokens > largest.tokens) largest = { tokens, q };
      for (const m of r.matches) {
        for (const w of m.why) {
          assert.ok(w.fields.length >= 1 && w.fields.length <= 3, `${q}: ${m.name} ${JSON.stringify(w)}`);
          const ranks = w.fields.filter((f) => !f.startsWith('arg:')).map((f) => RANK.indexOf(f));
          assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), `${q}: ${m.name} ${JSON.stringify(w)} strongest first`);
        }
      }
    }
    assert.ok(full >= 400, `${full} answers of 5 matches`);
    assert.ok(largest.tokens <= ANSWER_TOKENS, `${largest.tokens} tokens for "${largest.q}"`);
  });
});
