// The search index's contract (src/catalog/search-index.ts, terms.ts): how text becomes terms (names split on
// . _ - / and camelCase, prose kept whole, stop words out, Porter stems); the order of matches is the same
// whatever order the catalog lists its tools in, ties broken by name; the filter is applied before ranking (a
// refused tool is never returned, counted in the total, nor counted in a term's document frequency); every field `why`
// names holds the term; source and tags are searched; the act a query asks for (read, write, delete) ranks the tool
// whose annotations say it does it first; a deprecated tool gives way to its peer; a misspelt word, a plural and a user's word (CI, bot) are read as meant; the index is built once per catalog object; prompts and
// resources have indexes of their own.

import assert from 'node:assert/strict';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog, type ToolEntry } from '../../src/core/catalog.js';
import type { ToolDef } from '../../src/core/types.js';
import { collector } from '../helpers/gc.js';
import { searchIndex, type SearchMatch } from '../../src/catalog/search-index.js';
import { stem, terms, words } from '../../src/catalog/terms.js';
import { expansions, hintOf, queryWords } from '../../src/catalog/synonyms.js';
import { definitionAct, queryAct } from '../../src/catalog/intent.js';

type Def = Omit<ToolDef, 'handler'>;
const handler = () => 'ok';

function catalogOf(defs: Def[], more: (svc: FastSvc) => void = () => {}) {
  const svc = new FastSvc({ name: 'search-test' });
  for (const d of defs) svc.tool({ ...d, handler });
  more(svc);
  return buildCatalog(svc);
}

const TOOLS: Def[] = [
  { name: 'issues.create', title: 'Create an issue', description: 'Opens a new issue in a repository.', input_schema: { type: 'object', properties: { owner: { type: 'string', description: 'The account owner.' }, repo: { type: 'string' }, body: { type: 'object', properties: { title: { type: 'string', description: 'The title of the issue.' }, labels: { type: 'array', description: 'Labels to add.' } } } }, required: ['owner', 'repo'] } },
  { name: 'issues.update', title: 'Update an issue', description: 'Edits an issue.', input_schema: { type: 'object', properties: { body: { type: 'object', properties: { state: { type: 'string', description: 'Either open or closed: closing an issue.' } } } } } },
  { name: 'activity.listStargazersForRepo', description: 'Lists the people that have starred the repository.' },
  { name: 'repos/get-readme', description: 'Gets the README of a repository.' },
  { name: 'weather_forecast', description: 'The forecast for a city.', source: { kind: 'upstream', name: 'meteo' }, tags: ['climate'] },
  { name: 'weather_alerts', description: 'The forecast for a city.' },
  { name: 'weather_alarms', description: 'The forecast for a city.' },
];

/** The text of the field a `why` entry names, on the tool's definition. */
function fieldText(e: ToolEntry, field: string): string[] {
  const d = e.def;
  if (field === 'name') return [d.name];
  if (field === 'title') return [d.title ?? ''];
  if (field === 'description') return [d.description];
  if (field === 'tags') return d.tags ?? [];
  if (field === 'source') return [d.source?.name ?? ''];
  assert.match(field, /^arg:/, `unknown field ${field}`);
  let s: unknown = e.wire.inputSchema;
  let name = '';
  for (const part of field.slice(4).split('.')) {
    s = (s as { properties: Record<string, unknown> }).properties[part];
    assert.ok(s, `${d.name} has no argument ${field}`);
    name = part;
  }
  const { description, enum: values } = s as { description?: string; enum?: unknown[] };
  return [name, String(description ?? ''), ...(values ?? []).map(String)];
}

function assertWhyIsTrue(cat: ReturnType<typeof catalogOf>, matches: SearchMatch[]) {
  for (const m of matches) {
    const e = cat.tools.get(m.name)!;
    assert.ok(m.why.length > 0, `${m.name} matched for no reason`);
    for (const w of m.why) {
      const t = stem((w.via ?? w.term).toLowerCase());
      assert.ok(w.fields.length > 0, `${m.name}: ${w.term} in no field`);
      for (const f of w.fields) {
        const camel = f === 'name' || f.startsWith('arg:');
        const held = fieldText(e, f).some((text, i) => terms(text, camel && i === 0).includes(t));
        assert.ok(held, `${m.name}: ${f} does not hold ${w.via ?? w.term}`);
      }
    }
  }
}

describe('search index', () => {
  describe('terms', () => {
    it('splits names on . _ - / and camelCase, keeps prose words whole, drops stop words, stems', () => {
      assert.deepEqual(words('issues/create-comment.for_repo'), ['issues', 'create', 'comment', 'for', 'repo']);
      assert.deepEqual(words('listForRepo getHTTPResponse oauth2Token', true), ['list', 'for', 'repo', 'get', 'http', 'response', 'oauth', '2', 'token']);
      assert.deepEqual(words('GitHub listForRepo'), ['github', 'listforrepo']);
      assert.deepEqual(words('see [the docs](https://example.com/x) or https://example.com/y'), ['see', 'the', 'docs', 'or']);
      assert.deepEqual(terms('Who starred the repositories of my organizations?'), ['star', 'repositori', 'organ']);
      assert.deepEqual(['caresses', 'ponies', 'motoring', 'hopping', 'relational', 'generalization', 'adjustment'].map(stem), ['caress', 'poni', 'motor', 'hop', 'relat', 'gener', 'adjust']);
    });
  });

  it('reads a query as a user means it: a file name is `file`, PR is a pull request, my/me hint at the authenticated user', () => {
    assert.deepEqual(queryWords('update package.json and src/index.ts in PR 4'), ['update', 'file', 'and', 'file', 'in', 'pull', 'request', '4']);
    assert.deepEqual(queryWords('Turn off the nightly workflow, then switch on the other'), ['disable', 'the', 'nightly', 'workflow', 'then', 'enable', 'the', 'other']);
    assert.deepEqual(queryWords('stop following bob and stop it'), ['unfollowing', 'following', 'bob', 'and', 'stop', 'it']);
    assert.equal(hintOf('my', 'list'), 'authent');
    assert.equal(hintOf('me', 'follows'), 'authent');
    assert.equal(hintOf('me', 'show'), undefined, '"show me" says whom to show, not whose');
    assert.equal(hintOf('the', 'show'), undefined);
    assert.equal(expansions('repo')?.get('repositori'), 1);
    assert.equal(expansions('make')?.get('creat'), 0.5);
    assert.equal(expansions('branch')?.get('ref'), 0.5);
    assert.equal(expansions('issu'), undefined);
  });

  it('ranks the tool whose words the query uses first, and says why in fields that hold the terms', () => {
    const cat = catalogOf(TOOLS);
    const ix = searchIndex(cat).tools;
    const r = ix.search('who starred my repo', { limit: 3 });
    assert.equal(r.matches[0]!.name, 'activity.listStargazersForRepo');
    assertWhyIsTrue(cat, r.matches);
    const close = ix.search('close the issue', { limit: 5 });
    assert.equal(close.matches[0]!.name, 'issues.update');
    assert.deepEqual(close.matches[0]!.why.find((w) => w.term === 'close'), { term: 'close', via: 'closed', fields: ['arg:body.state'] });
    assertWhyIsTrue(cat, close.matches);
    const make = ix.search('make an issue with a title', { limit: 5 });
    assert.equal(make.matches[0]!.name, 'issues.create');
    assert.ok(make.matches[0]!.why.some((w) => w.term === 'make' && w.via === 'create'), JSON.stringify(make.matches[0]!.why));
    assertWhyIsTrue(cat, make.matches);
    assert.equal(make.matches[0]!.summary, 'Create an issue');
    assert.equal(make.matches[0]!.args, 'owner, repo, body?: {title?, labels?}');
  });

  it('searches the source and the tags', () => {
    const cat = catalogOf(TOOLS);
    const ix = searchIndex(cat).tools;
    const bySource = ix.search('meteo', { limit: 5 });
    assert.deepEqual(bySource.matches.map((m) => m.name), ['weather_forecast']);
    assert.deepEqual(bySource.matches[0]!.why, [{ term: 'meteo', fields: ['source'] }]);
    assert.deepEqual(ix.search('climate', { limit: 5 }).matches.map((m) => [m.name, m.why[0]!.fields]), [['weather_forecast', ['tags']]]);
  });

  it('gives the same matches in the same order whatever the catalog order; equal scores by name', () => {
    const forward = searchIndex(catalogOf(TOOLS)).tools.search('forecast for a city', { limit: 10 });
    const backward = searchIndex(catalogOf([...TOOLS].reverse())).tools.search('forecast for a city', { limit: 10 });
    assert.deepEqual(backward, forward);
    const names = forward.matches.map((m) => m.name);
    assert.deepEqual(names.filter((n) => n !== 'weather_forecast'), ['weather_alarms', 'weather_alerts']);
    const tied = forward.matches.filter((m) => m.name !== 'weather_forecast');
    assert.equal(tied[0]!.score, tied[1]!.score);
  });

  it('applies the filter before ranking: a refused tool is never returned, nor counted in the total or a term\'s frequency', () => {
    const cat = catalogOf(TOOLS);
    const ix = searchIndex(cat).tools;
    const asked: string[] = [];
    const filter = (e: ToolEntry) => {
      asked.push(e.def.name);
      return !e.def.name.startsWith('issues.');
    };
    const all = ix.search('issue repository', { limit: 10 });
    assert.ok(all.matches.some((m) => m.name.startsWith('issues.')));
    const r = ix.search('issue repository', { limit: 10, filter });
    assert.ok(asked.includes('issues.create') && asked.includes('issues.update'), 'the filter was asked about the matching tools');
    assert.ok(!r.matches.some((m) => m.name.startsWith('issues.')));
    assert.equal(r.total, all.total - 2);
    assert.deepEqual(ix.search('update an issue', { limit: 10, filter }), { matches: [], total: 0 });
    // A refused tool does not count in a term's document frequency: the visible tools that share its terms score higher.
    const before = new Map(all.matches.map((m) => [m.name, m.score]));
    for (const m of r.matches) assert.ok(m.score > before.get(m.name)!, `${m.name}: ${m.score} with the filter, ${before.get(m.name)} without`);
    // A filter function is asked about each entry once; its verdicts are kept with it.
    asked.length = 0;
    ix.search('issue repository readme', { limit: 10, filter });
    assert.deepEqual(asked.filter((n) => n === 'activity.listStargazersForRepo'), []);
  });

  it('clamps the limit, answers an empty or unknown query with nothing, and builds once per catalog', () => {
    const cat = catalogOf(TOOLS);
    const ix = searchIndex(cat);
    assert.equal(ix, searchIndex(cat));
    assert.notEqual(ix, searchIndex(catalogOf(TOOLS)));
    assert.equal(ix.tools.size, TOOLS.length);
    assert.equal(ix.tools.search('forecast', { limit: 0 }).matches.length, 1);
    assert.equal(ix.tools.search('forecast', { limit: 1000 }).matches.length, 3);
    assert.deepEqual(ix.tools.search('', { limit: 5 }), { matches: [], total: 0 });
    assert.deepEqual(ix.tools.search('the of and', { limit: 5 }), { matches: [], total: 0 });
    assert.deepEqual(ix.tools.search('zzzqqq', { limit: 5 }), { matches: [], total: 0 });
  });

  it('keeps an index with its catalog object only: a new catalog (a reload, a list_changed) gets a new index, a dropped one\'s is collected', async () => {
    const gc = collector();
    let old: ReturnType<typeof catalogOf> | undefined = catalogOf(TOOLS);
    const oldIndex = new WeakRef(searchIndex(old).tools);
    assert.equal(oldIndex.deref()!.search('forecast', { limit: 1 }).matches[0]!.name, 'weather_forecast');
    // The catalog built next (same definitions) gets its own index, which finds what the new catalog holds.
    const next = catalogOf([...TOOLS, { name: 'weather_radar', description: 'The radar forecast for a city.' }]);
    assert.notEqual(searchIndex(next).tools, oldIndex.deref());
    assert.ok(searchIndex(next).tools.search('radar', { limit: 1 }).matches.length === 1);
    assert.equal(oldIndex.deref()!.search('radar', { limit: 1 }).matches.length, 0);
    // Once the old catalog is unreachable nothing else holds its index: a collection takes it (no module-level Map).
    old = undefined;
    for (let i = 0; i < 20 && oldIndex.deref() !== undefined; i++) {
      await new Promise((resolve) => setImmediate(resolve)); // a WeakRef's target is kept until the current job ends
      gc();
    }
    assert.equal(old, undefined);
    assert.equal(oldIndex.deref(), undefined, 'the dropped catalog\'s index is still reachable');
    assert.equal(searchIndex(next).tools.size, TOOLS.length + 1);
  });

  it('reads the act a query asks for, and a tool\'s act from its annotations; an unknown act is none', () => {
    const act = (q: string) => queryAct(queryWords(q));
    assert.equal(act('who starred my repo'), 'read');
    assert.equal(act('please show me the runs'), 'read');
    assert.equal(act('give me the logs'), 'read');
    assert.equal(act('how do I create a gist'), 'write');
    assert.equal(act('how many stars'), 'read');
    assert.equal(act('leave a comment on issue 17'), 'write');
    assert.equal(act('can you unstar the repo'), 'delete');
    assert.equal(act('kick frank out'), 'delete');
    assert.equal(act('runners for this repo'), undefined);
    assert.equal(act('frobnicate the widget'), undefined);
    assert.equal(definitionAct({ readOnlyHint: true }), 'read');
    assert.equal(definitionAct({ destructiveHint: true }), 'delete');
    assert.equal(definitionAct({ idempotentHint: true }), 'write');
    assert.equal(definitionAct(undefined), undefined);
  });

  it('ranks the tool that does the act asked first among tools of the same words; a tool without annotations is not moved', () => {
    const comments: Def[] = [
      { name: 'comments.list', description: 'Lists the comments on an issue.', annotations: { readOnlyHint: true } },
      { name: 'comments.create', description: 'Posts a comment on an issue.' , annotations: {} },
      { name: 'comments.delete', description: 'Deletes a comment on an issue.', annotations: { destructiveHint: true } },
    ];
    const ix = searchIndex(catalogOf(comments)).tools;
    assert.equal(ix.search('leave a comment on the issue', { limit: 3 }).matches[0]!.name, 'comments.create');
    assert.equal(ix.search('what comments are on the issue', { limit: 3 }).matches[0]!.name, 'comments.list');
    assert.equal(ix.search('get rid of the comment, remove it', { limit: 3 }).matches[0]!.name, 'comments.delete');
    // Without annotations the act moves nothing: the same query orders them as BM25F does.
    const bare = searchIndex(catalogOf(comments.map(({ annotations: _, ...d }) => d))).tools;
    const plain = bare.search('comment issue', { limit: 3 }).matches.map((m) => [m.name, m.score]);
    assert.deepEqual(bare.search('leave a comment on the issue', { limit: 3 }).matches.map((m) => [m.name, m.score]), plain);
  });

  it('reads an argument\'s string enum values as its name: what it sets or picks', () => {
    const reviews: Def[] = [
      { name: 'pulls.create-review', description: 'Creates a review on a pull request.', input_schema: { type: 'object', properties: { event: { type: 'string', enum: ['APPROVE', 'REQUEST_CHANGES', 'COMMENT'] } } } },
      { name: 'pulls.list-reviews', description: 'Lists the reviews on a pull request.', input_schema: { type: 'object', properties: { per_page: { type: 'integer' } } } },
    ];
    const cat = catalogOf(reviews);
    const r = searchIndex(cat).tools.search('approve the pull request', { limit: 2 });
    assert.equal(r.matches[0]!.name, 'pulls.create-review');
    assert.deepEqual(r.matches[0]!.why.find((w) => w.term === 'approve'), { term: 'approve', fields: ['arg:event'] });
    assert.ok(!r.matches[1]!.why.some((w) => w.term === 'approve'));
    assertWhyIsTrue(cat, r.matches);
  });

  it('ranks a deprecated tool below its peer of the same words', () => {
    const teams: Def[] = [
      { name: 'teams.add-member-legacy', description: 'Adds a member to a team.', deprecated: true },
      { name: 'teams.add-member-old', description: 'Adds a member to a team.' },
    ];
    const ix = searchIndex(catalogOf(teams)).tools;
    const r = ix.search('add a member to the team', { limit: 2 }).matches;
    // Without the flag the legacy tool would lead (its name words are as many, and it sorts first by name).
    assert.deepEqual(r.map((m) => m.name), ['teams.add-member-old', 'teams.add-member-legacy']);
    assert.ok(r[1]!.score < r[0]!.score);
    const flat = searchIndex(catalogOf(teams.map(({ deprecated: _, ...d }) => d))).tools.search('add a member to the team', { limit: 2 }).matches;
    assert.equal(flat[0]!.name, 'teams.add-member-legacy');
  });

  it('finds a misspelt word by the catalog\'s words one edit away, reads a plural as a list, and CI and bot as the catalog\'s words', () => {
    const defs: Def[] = [
      { name: 'runners.list', description: 'Lists the self-hosted runners of a repository.', annotations: { readOnlyHint: true } },
      { name: 'runners.get', description: 'Gets a self-hosted runner of a repository.', annotations: { readOnlyHint: true } },
      { name: 'workflows.rerun', description: 'Re-runs a workflow.' },
      { name: 'apps.get', description: 'Gets a GitHub App.', annotations: { readOnlyHint: true } },
      { name: 'issues.list', description: 'Lists issues.', annotations: { readOnlyHint: true } },
    ];
    const cat = catalogOf(defs);
    const ix = searchIndex(cat).tools;
    const typo = ix.search('lsit the isues', { limit: 3 });
    assert.equal(typo.matches[0]!.name, 'issues.list');
    assert.deepEqual(typo.matches[0]!.why.map((w) => [w.term, w.via]), [['lsit', 'list'], ['isues', 'issues']]);
    assertWhyIsTrue(cat, typo.matches);
    assert.deepEqual(ix.search('lsit', { limit: 3, filter: (e) => e.def.name !== 'issues.list' }).matches.map((m) => m.name), ['runners.list'], 'a fuzzy match is filtered too');
    assert.equal(ix.search('runners of this repository', { limit: 2 }).matches[0]!.name, 'runners.list');
    assert.equal(ix.search('the runner of this repository', { limit: 2 }).matches[0]!.name, 'runners.get');
    assert.equal(ix.search('rerun CI', { limit: 1 }).matches[0]!.name, 'workflows.rerun');
    assert.deepEqual(ix.search('the renovate bot', { limit: 3 }).matches.map((m) => m.name), ['apps.get']);
    assert.equal(expansions('workflow')?.has('ci'), undefined, 'the catalog\'s word does not match the user\'s');
  });

  it('indexes prompts and resources apart from tools', () => {
    const cat = catalogOf([], (svc) => {
      svc.prompt({ name: 'review.code', title: 'Review code', description: 'Asks for a code review.', arguments: [{ name: 'language', required: true }, { name: 'style' }], get: () => [] });
      svc.resource({ uri_template: 'docs://{+path}', name: 'docs', description: 'The handbook pages.', read: () => [] });
      svc.resource({ uri: 'config://main', name: 'config', title: 'Main configuration', read: () => [] });
    });
    const ix = searchIndex(cat);
    assert.deepEqual(ix.tools.search('review', { limit: 5 }).matches, []);
    const p = ix.prompts.search('review some code', { limit: 5 }).matches;
    assert.deepEqual(p.map((m) => [m.name, m.args]), [['review.code', 'language, style?']]);
    assert.deepEqual(ix.resources.search('handbook page', { limit: 5 }).matches.map((m) => [m.name, m.args]), [['docs://{+path}', 'path']]);
    assert.deepEqual(ix.resources.search('configuration', { limit: 5 }).matches.map((m) => m.name), ['config://main']);
  });
});
