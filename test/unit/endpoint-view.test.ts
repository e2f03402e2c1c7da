// Endpoints without a server: the selection (globs, sources, tags: OR within a key, AND across keys, an empty
// list matches nothing), reserved and malformed names, the view (the same entries, the endpoint's name and
// instructions, memoised per catalog, an undeclared name empty), per-endpoint change sets, and compile's
// located errors and the validate warning.

import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/core/catalog.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { compileEndpoint, globs, selects } from '../../src/core/endpoint.js';
import { endpointCatalog, viewOf } from '../../src/catalog/endpoint-view.js';
import { changesFor, PolicyStore, type ChangeSet } from '../../src/policy/store.js';
import { compilePlan } from '../../src/manifest/compile.js';
import { manifestWarnings } from '../../src/manifest/warnings.js';
import type { SvcManifest } from '../../src/core/manifest-types.gen.js';

const GH = { kind: 'openapi' as const, name: 'github' };

function app(extra: string[] = []): FastSvc {
  const svc = new FastSvc({ name: 'house', instructions: 'The whole house.' });
  for (const name of ['github_issues_list', 'github_repos_get', 'notes.hello', ...extra]) {
    svc.tool({ name, description: name, handler: () => name, ...(name.startsWith('github_') && { source: GH, tags: [name.split('_')[1]!] }) });
  }
  svc.resource({ uri: 'file:///notes/a', name: 'a', read: (uri) => [{ uri, text: 'a' }] });
  svc.resource({ uri_template: 'file:///notes/{id}/body', name: 'b', read: (uri) => [{ uri, text: 'b' }] });
  svc.prompt({ name: 'notes.summary', get: () => [] });
  svc.endpoint(compileEndpoint('github', { server_name: 'GitHub', instructions: 'GitHub only.', select: { sources: ['github'] } }));
  svc.endpoint(compileEndpoint('notes', { select: { names: ['notes.*', 'file:///notes/*'] } }));
  svc.endpoint(compileEndpoint('issues', { select: { sources: ['github'], tags: ['issues'] } }));
  return svc;
}

describe('endpoints: selection, names, views', () => {
  it('globs match whole names (* any run, ? one character); no glob matches nothing', () => {
    const re = globs(['github_*', 'a?c']);
    assert.deepEqual(['github_x', 'github_', 'abc', 'ac', 'xgithub_y', 'a.c'].map((n) => re.test(n)), [true, true, true, false, false, true]);
    assert.equal(globs([]).test(''), false);
    assert.equal(globs(['a.b']).test('axb'), false, 'a dot is a dot');
  });

  it('selects(): OR within a key, AND across keys; an absent key matches everything; manifest is the own source', () => {
    const sel = compileEndpoint('x', { select: { names: ['github_*', 'notes.*'], sources: ['github'] } }).select;
    assert.equal(selects(sel, 'github_a', GH, undefined), true);
    assert.equal(selects(sel, 'notes.a', GH, undefined), true);
    assert.equal(selects(sel, 'notes.a', undefined, undefined), false, 'names match, the source does not');
    assert.equal(selects(compileEndpoint('y', { select: { sources: ['manifest'] } }).select, 'notes.a', undefined, undefined), true);
    const tagged = compileEndpoint('z', { select: { tags: ['issues', 'pulls'] } }).select;
    assert.deepEqual([selects(tagged, 't', GH, ['pulls']), selects(tagged, 't', GH, ['repos']), selects(tagged, 't', undefined, undefined)], [true, false, false]);
    assert.equal(selects(compileEndpoint('e', { select: { names: [] } }).select, 'anything', undefined, undefined), false);
    assert.equal(selects(undefined, 'anything', undefined, undefined), true);
  });

  it('reserved names and names that are no path segment are refused, in compileEndpoint and FastSvc', () => {
    for (const name of ['tools', 'resources', 'prompts', 'tasks', 'explain', 'default', 'Upper', '1abc', 'a/b', 'x'.repeat(41)]) {
      assert.throws(() => compileEndpoint(name), (e: { code?: string }) => e.code === 'ENDPOINT_CONFIG', name);
    }
    assert.throws(() => new FastSvc({ name: 'x' }).endpoint({ name: 'tasks', requiredScopes: [] }), (e: { code?: string }) => e.code === 'ENDPOINT_CONFIG');
    assert.equal(compileEndpoint('git-hub2').name, 'git-hub2');
  });

  it('the view holds the same entries of the selection only, with the endpoint\'s name and instructions', () => {
    const cat = buildCatalog(app());
    const gh = endpointCatalog(cat, cat.endpoints!.get('github')!);
    assert.deepEqual([...gh.tools.keys()], ['github_issues_list', 'github_repos_get']);
    assert.equal(gh.tools.get('github_repos_get'), cat.tools.get('github_repos_get'), 'the same entry object');
    assert.deepEqual([gh.resources.size, gh.templates.length, gh.prompts.size], [0, 0, 0]);
    assert.deepEqual([gh.name, gh.instructions, gh.endpoint?.name], ['GitHub', 'GitHub only.', 'github']);
    const notes = viewOf(cat, 'notes');
    assert.deepEqual([[...notes.tools.keys()], [...notes.resources.keys()], notes.templates.map((t) => t.def.uri_template), [...notes.prompts.keys()]],
      [['notes.hello'], ['file:///notes/a'], ['file:///notes/{id}/body'], ['notes.summary']]);
    assert.deepEqual([notes.name, notes.instructions], ['house/notes', undefined], 'default name; no instructions unless the endpoint gives them');
    assert.deepEqual([...viewOf(cat, 'issues').tools.keys()], ['github_issues_list']);
    assert.equal(viewOf(cat, 'notes'), notes, 'memoised per catalog');
    assert.equal(viewOf(cat, undefined), cat, 'the default endpoint is the catalog itself');
    const gone = viewOf(cat, 'gone');
    assert.deepEqual([gone.tools.size, gone.resources.size, gone.prompts.size], [0, 0, 0], 'an undeclared endpoint serves nothing');
  });

  it('changesFor(): a change outside an endpoint\'s selection changes nothing there; a widened selection does', () => {
    const store = new PolicyStore({ catalog: buildCatalog(app()), profile: { scopes: [] } });
    const seen: ChangeSet[] = [];
    store.onChange((c) => seen.push(c));
    const c = store.swap({ ...store.current(), catalog: buildCatalog(app(['github_pulls_list'])) });
    assert.equal(c.tools, true);
    assert.equal(changesFor(c, 'github').tools, true);
    assert.equal(changesFor(c, 'notes').tools, false);
    assert.equal(changesFor(c, 'notes'), changesFor(c, 'notes'), 'worked out once per change set');
    // Only the selection changes: the catalog's lists do not, the endpoint's view does, and listeners hear of it.
    const wider = app(['github_pulls_list']);
    wider.endpoints.set('notes', compileEndpoint('notes', { select: { names: ['notes.*', 'file:///notes/*', 'github_pulls_*'] } }));
    const w = store.swap({ ...store.current(), catalog: buildCatalog(wider) });
    assert.equal(w.tools, false);
    assert.equal(changesFor(w, 'notes').tools, true);
    assert.equal(seen.at(-1), w);
  });

  it('compile: an unknown source is a located ENDPOINT_CONFIG with a did-you-mean; undeclared scopes too; a selection of nothing is a warning', () => {
    const m = {
      version: 1, name: 'x', profile: { scopes: ['a'] },
      openapi: [{ name: 'github', document: 'gh.yaml' }],
      tools: [{ name: 'notes.hello', description: 'h', template: 'hi' }],
      endpoints: { gh: { required_scopes: ['b'], select: { sources: ['githb'] } } },
    } as unknown as SvcManifest;
    const { problems } = compilePlan(m, 'svc.yaml', () => ({ line: 7, col: 3 }));
    const codes = problems.map((p) => [p.code, p.path, p.message]);
    assert.ok(codes.some(([c, path, msg]) => c === 'ENDPOINT_CONFIG' && path === '/endpoints/gh/select/sources/0' && /did you mean github\?/.test(msg!)), JSON.stringify(codes));
    assert.ok(codes.some(([c, path]) => c === 'SCOPE_UNDECLARED' && path === '/endpoints/gh/required_scopes/0'), JSON.stringify(codes));
    const empty = { ...m, endpoints: { gh: { select: { names: ['nothing.*'] } }, up: { select: { names: ['nothing.*'] } } }, upstreams: [{ name: 'u', url: 'http://127.0.0.1:9/mcp' }] } as unknown as SvcManifest;
    const warned = manifestWarnings(empty, () => true).filter((w) => w.code === 'ENDPOINT_SELECTS_NOTHING');
    assert.deepEqual(warned.map((w) => w.path), [], 'an upstream could fill both: no warning');
    const offline = manifestWarnings({ ...empty, upstreams: [] } as SvcManifest, () => true).filter((w) => w.code === 'ENDPOINT_SELECTS_NOTHING');
    assert.deepEqual(offline.map((w) => w.path), [['endpoints', 'gh', 'select'], ['endpoints', 'up', 'select']]);
  });
});
