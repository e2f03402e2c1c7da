// operation.ts, select.ts, operation-scopes.ts and expand.ts on the three Petstores and the edge documents:
// one tool per callable operation with its parameters, body, output schema and annotations;
// skipped operations named in OPENAPI_SKIPPED warnings; include/exclude, naming, collisions,
// overrides and scope_map; problems located at the manifest field that decided them.

import assert from 'node:assert/strict';
import { ManifestError, type SvcError } from '../../../src/errors.js';
import { byName, expandFixture } from './helpers.js';

const problems = (f: () => unknown): SvcError[] => {
  try {
    f();
  } catch (e) {
    if (e instanceof ManifestError) return e.problems;
    throw e;
  }
  assert.fail('expected a ManifestError');
};

const PETSTORE_IDS = ['addPet', 'updatePet', 'findPetsByStatus', 'findPetsByTags', 'getPetById', 'updatePetWithForm', 'deletePet', 'getInventory', 'placeOrder', 'getOrderById', 'deleteOrder', 'createUser', 'createUsersWithListInput', 'loginUser', 'logoutUser', 'getUserByName', 'updateUser', 'deleteUser'];

describe('openapi expansion: the Petstores', () => {
  it('3.0: every operation but the binary upload is a tool; the upload is skipped by name', () => {
    const x = expandFixture('petstore-3.0.yaml', { base_url: 'https://pets.example.com/v3' });
    assert.deepEqual(x.tools.map((t) => t.name).sort(), [...PETSTORE_IDS].sort());
    assert.equal(x.warnings.length, 1);
    assert.match(x.warnings[0]!.message, /POST \/pet\/\{petId\}\/uploadImage \(operationId uploadFile\).*application\/octet-stream/);
    assert.deepEqual(x.warnings[0]!.path, ['openapi', 0, 'document']);
  });

  it('3.0: a path parameter, its URL placeholder and the annotations of GET, PUT and DELETE', () => {
    const t = byName(expandFixture('petstore-3.0.yaml', { base_url: 'https://pets.example.com/v3' }));
    const get = t.get('getPetById')!;
    assert.equal(get.http.url, 'https://pets.example.com/v3/pet/{{petId}}');
    assert.deepEqual(get.http.parameters, [{ name: 'petId', in: 'path' }]);
    assert.deepEqual(get.input_schema.required, ['petId']);
    assert.equal((get.input_schema.properties.petId as { type: string }).type, 'integer');
    assert.deepEqual(get.annotations, { readOnlyHint: true });
    assert.deepEqual(t.get('updatePet')!.annotations, { idempotentHint: true });
    assert.deepEqual(t.get('deletePet')!.annotations, { destructiveHint: true });
    assert.equal(t.get('addPet')!.annotations, undefined);
    assert.equal((get.output_schema as { type: string }).type, 'object');
    assert.deepEqual((get.output_schema as { required: string[] }).required, ['name', 'photoUrls']);
    // An array response has no output schema (MCP's outputSchema is an object schema).
    assert.equal(t.get('findPetsByStatus')!.output_schema, undefined);
    // The header parameter of deletePet, and the JSON body of addPet (preferred over XML and form).
    assert.deepEqual(t.get('deletePet')!.http.parameters, [{ name: 'api_key', in: 'header' }, { name: 'petId', in: 'path' }]);
    assert.deepEqual(t.get('addPet')!.http.request_body, { arg: 'body', content_type: 'application/json' });
    assert.deepEqual(t.get('addPet')!.input_schema.required, ['body']);
  });

  it('3.1: a relative server URL (/api/v31) needs base_url (OPENAPI_CONFIG at the source)', () => {
    const [p] = problems(() => expandFixture('petstore-3.1.yaml'));
    assert.equal(p!.code, 'OPENAPI_CONFIG');
    assert.equal(p!.path, '/openapi/0');
  });

  it('3.1: $ref by $anchor resolves; numeric exclusive bounds are kept', () => {
    const x = expandFixture('petstore-3.1.yaml', { base_url: 'https://pets.example.com/api/v31' });
    const t = byName(x);
    const pet = (t.get('getPetById')!.output_schema as any).properties;
    assert.deepEqual(pet.petDetailsId, { type: 'integer', format: 'int64', examples: [10] });
    assert.deepEqual([pet.availableInstances.exclusiveMinimum, pet.availableInstances.exclusiveMaximum], [1, 10]);
    assert.ok(x.tools.length >= 5);
  });

  it('2.0: host and basePath make the base URL; formData is a form body; the file upload is skipped', () => {
    const x = expandFixture('petstore-2.0.json');
    const t = byName(x);
    assert.equal(t.get('getPetById')!.http.url, 'https://petstore.swagger.io/v2/pet/{{petId}}');
    const form = t.get('updatePetWithForm')!;
    assert.deepEqual(form.http.request_body, { arg: 'body', content_type: 'application/x-www-form-urlencoded' });
    assert.deepEqual(Object.keys((form.input_schema.properties.body as any).properties), ['name', 'status']);
    assert.ok(!t.has('uploadFile'));
    assert.ok(x.warnings.some((w) => /uploadFile.*file upload/.test(w.message)));
    // collectionFormat multi → form, explode true; the array param's items keep their enum.
    assert.deepEqual(t.get('findPetsByStatus')!.http.parameters, [{ name: 'status', in: 'query', style: 'form', explode: true }]);
    assert.deepEqual(t.get('addPet')!.http.request_body, { arg: 'body', content_type: 'application/json' });
  });
});

describe('openapi expansion: requests', () => {
  const x = expandFixture('edge-requests.yaml');
  const t = byName(x);

  it('style and explode are written as the document gives them; a cookie parameter is kept', () => {
    const ps = t.get('putItem')!.http.parameters!;
    assert.deepEqual(ps.find((p) => p.name === 'tags'), { name: 'tags', in: 'query', style: 'pipeDelimited', explode: false });
    assert.deepEqual(ps.find((p) => p.name === 'filter'), { name: 'filter', in: 'query', style: 'deepObject', explode: true });
    assert.deepEqual(ps.find((p) => p.name === 'sid'), { name: 'sid', in: 'cookie' });
  });

  it('a name used twice gets the suffix of its location, and arg says which argument feeds it', () => {
    const put = t.get('putItem')!;
    const ps = put.http.parameters!;
    assert.deepEqual(ps.find((p) => p.in === 'path'), { name: 'id', in: 'path' });
    assert.deepEqual(ps.find((p) => p.name === 'id' && p.in === 'query'), { name: 'id', in: 'query', arg: 'id_query' });
    assert.deepEqual(put.http.request_body, { arg: 'body_body', content_type: 'application/json' });
    assert.deepEqual(Object.keys(put.input_schema.properties).sort(), ['body', 'body_body', 'filter', 'id', 'id_query', 'sid', 'tags', 'trace'].sort());
  });

  it('path-level parameters are merged; an Accept header parameter is ignored', () => {
    const ps = t.get('putItem')!.http.parameters!;
    assert.ok(ps.some((p) => p.name === 'trace' && p.in === 'header'));
    assert.ok(!ps.some((p) => p.name === 'Accept'));
    assert.deepEqual(t.get('deleteItem')!.http.parameters?.map((p) => p.name), ['id', 'trace']);
  });

  it('a path parameter that is no placeholder name gets an argument made of it', () => {
    const name = 'get_users_user-id_repos';
    assert.deepEqual(t.get(name)!.http.parameters, [{ name: 'user-id', in: 'path', arg: 'user_id' }]);
    assert.equal(t.get(name)!.http.url, 'https://api.example.com/users/{{user_id}}/repos');
  });

  it('a form body is the body argument with the form content type', () => {
    const f = t.get('sendForm')!;
    assert.deepEqual(f.http.request_body, { arg: 'body', content_type: 'application/x-www-form-urlencoded' });
    assert.deepEqual(f.input_schema.required, ['body']);
    assert.equal(f.output_schema, undefined);
  });

  it('multipart, a parameter with content, and HEAD are skipped, each named with why', () => {
    const msgs = x.warnings.map((w) => w.message);
    assert.equal(msgs.length, 3);
    assert.ok(msgs.some((m) => /POST \/files \(operationId uploadFile\).*multipart\/form-data/.test(m)));
    assert.ok(msgs.some((m) => /GET \/search \(operationId search\).*parameter q.*content/.test(m)));
    assert.ok(msgs.some((m) => /HEAD \/items\/\{id\} \(operationId headItem\).*method HEAD/.test(m)));
  });
});

describe('openapi expansion: selection, naming, overrides, scopes', () => {
  const base = { base_url: 'https://pets.example.com/v3' };

  it('include by tag and method; exclude by operation and path glob', () => {
    const names = (src: object) => expandFixture('petstore-3.0.yaml', { ...base, ...src }).tools.map((t) => t.name).sort();
    assert.deepEqual(names({ include: { tags: ['store'] } }), ['deleteOrder', 'getInventory', 'getOrderById', 'placeOrder']);
    assert.deepEqual(names({ include: { tags: ['store'], methods: ['GET'] } }), ['getInventory', 'getOrderById']);
    assert.deepEqual(names({ include: { tags: ['store'] }, exclude: { operations: ['deleteOrder'] } }), ['getInventory', 'getOrderById', 'placeOrder']);
    assert.deepEqual(names({ include: { paths: ['/store/**'] }, exclude: { paths: ['/store/order/*'] } }), ['getInventory', 'placeOrder']);
    assert.deepEqual(names({ include: { operations: ['getPetById'] } }), ['getPetById']);
  });

  it('naming fills its placeholders; / in a value becomes a dot', () => {
    const t = expandFixture('petstore-3.0.yaml', { ...base, naming: '{tag}.{method}_{path_name}', include: { operations: ['getPetById'] } }).tools;
    assert.equal(t[0]!.name, 'pet.get_pet_petId');
  });

  it('two operations given one name: DUPLICATE_NAME at naming, naming both', () => {
    const ps = problems(() => expandFixture('petstore-3.0.yaml', { ...base, naming: '{tag}.{method}', include: { tags: ['store'] } }));
    assert.equal(ps[0]!.code, 'DUPLICATE_NAME');
    assert.equal(ps[0]!.path, '/openapi/0/naming');
    assert.match(ps[0]!.message, /GET .* and GET .* are both named store\.get/);
  });

  it('a name that is not a tool name is OPENAPI_CONFIG at naming', () => {
    const ps = problems(() => expandFixture('petstore-3.0.yaml', { ...base, naming: '{tag} {method}', include: { operations: ['getPetById'] } }));
    assert.deepEqual([ps[0]!.code, ps[0]!.path], ['OPENAPI_CONFIG', '/openapi/0/naming']);
  });

  it('overrides replace name, description, scopes and task, and merge annotations', () => {
    const t = byName(expandFixture('petstore-3.0.yaml', {
      ...base, required_scopes: ['pets.read'],
      overrides: { deletePet: { name: 'pets.remove', description: 'Remove a pet.', required_scopes: ['pets.admin'], task: 'optional', annotations: { title: 'Remove' } } },
    }));
    const d = t.get('pets.remove')!;
    assert.equal(d.description, 'Remove a pet.');
    assert.deepEqual(d.required_scopes, ['pets.admin']);
    assert.equal(d.task, 'optional');
    assert.deepEqual(d.annotations, { destructiveHint: true, title: 'Remove' });
    assert.deepEqual(t.get('getPetById')!.required_scopes, ['pets.read']);
  });

  it('the source\'s task is every tool\'s, an override\'s wins; each traced to the line that gave it', () => {
    const x = expandFixture('petstore-3.0.yaml', { ...base, task: 'forbidden', overrides: { deletePet: { task: 'optional' } } });
    const t = byName(x);
    assert.equal(t.get('getPetById')!.task, 'forbidden');
    assert.equal(t.get('deletePet')!.task, 'optional');
    const at = (name: string) => x.origins[x.tools.findIndex((tool) => tool.name === name)]!.task;
    assert.deepEqual(at('getPetById'), ['openapi', 0, 'task']);
    assert.deepEqual(at('deletePet'), ['openapi', 0, 'overrides', 'deletePet', 'task']);
    assert.equal(byName(expandFixture('petstore-3.0.yaml', base)).get('getPetById')!.task, undefined, 'none given: none written');
  });

  it('an override of an operation the document lacks is OPENAPI_CONFIG at its key', () => {
    const ps = problems(() => expandFixture('petstore-3.0.yaml', { ...base, overrides: { nope: { description: 'x' } } }));
    assert.deepEqual([ps[0]!.code, ps[0]!.path], ['OPENAPI_CONFIG', '/openapi/0/overrides/nope']);
  });

  it('scope_map maps the oauth2 scopes of every alternative; unmapped operations keep required_scopes', () => {
    const x = expandFixture('petstore-3.0.yaml', { ...base, required_scopes: ['pets.open'], scope_map: { 'write:pets': ['pets.write'], 'read:pets': ['pets.read'] } });
    const t = byName(x);
    assert.deepEqual(t.get('getPetById')!.required_scopes, ['pets.write', 'pets.read']);
    assert.deepEqual(t.get('getInventory')!.required_scopes, ['pets.open'], 'api_key only: nothing mapped');
    const i = x.tools.findIndex((tool) => tool.name === 'getPetById');
    assert.deepEqual(x.origins[i]!.scopes, ['openapi', 0, 'scope_map']);
  });

  it('auth, headers, timeout_ms and max_bytes go into every tool\'s http block', () => {
    const auth = { static: { bearer: '${PET_TOKEN}' } };
    const t = expandFixture('petstore-3.0.yaml', { ...base, auth: auth as never, headers: { 'X-Client': 'fastsvc' }, timeout_ms: 5000, max_bytes: '2mb', include: { operations: ['getPetById'] } }).tools[0]!;
    assert.deepEqual(t.http.auth, auth);
    // Accept asks for the JSON answer the operation documents; the source's headers come on top.
    assert.deepEqual(t.http.headers, { Accept: 'application/json', 'X-Client': 'fastsvc' });
    assert.deepEqual([t.http.timeout_ms, t.http.max_bytes], [5000, '2mb']);
  });
});
