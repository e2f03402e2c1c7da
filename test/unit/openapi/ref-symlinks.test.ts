// A $ref cannot read outside the document's folder through a symlink (issue 38, point 11):
// containment is decided on the real path (symlinks resolved), as view files are. A file linked to
// one outside the folder (`inner.yaml -> ../outside/secret.yaml`, or to /etc/passwd), a folder
// linked outside (`parts -> ../outside`) and a chain of links that ends outside are refused at the
// $ref, OPENAPI_INVALID, naming neither the target nor its content; a link that stays inside the
// folder is followed; the file read is the one checked (its real path), the message names the
// $ref as written.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expandOpenApi } from '../../../src/openapi/expand.js';
import { problemsOf } from './helpers.js';

const DOC = (ref: string) => `openapi: 3.0.3\ninfo: {title: t, version: "1"}\nservers: [{url: "https://api.example.com"}]\npaths:\n  /a:\n    get:\n      operationId: getA\n      responses:\n        "200":\n          description: ok\n          content:\n            application/json:\n              schema: {$ref: "${ref}"}\n`;
const SECRET = 'Secret:\n  type: object\n  description: the content of a file outside the folder\n  properties: {token: {type: string, default: hunter2-secret}}\n';

describe('openapi $refs: containment decided on the real path', () => {
  let root: string;
  let api: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'oa-symlink-'));
    api = join(root, 'api');
    mkdirSync(join(api, 'parts'), { recursive: true });
    mkdirSync(join(root, 'outside'));
    writeFileSync(join(root, 'outside', 'secret.yaml'), SECRET);
    writeFileSync(join(api, 'parts', 'inside.yaml'), SECRET.replace('hunter2-secret', 'fine'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const expand = (ref: string) => {
    writeFileSync(join(api, 'api.yaml'), DOC(ref));
    return expandOpenApi([{ name: 'api', document: 'api.yaml', naming: '{operationId}', required_scopes: [] }], {
      file: join(api, 'svc.yaml'), baseDir: api, locate: () => ({ line: 1, col: 1 }),
    });
  };
  const refused = (ref: string) => {
    const [p, ...more] = problemsOf(() => expand(ref));
    assert.equal(more.length, 0);
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.equal(p!.file, join(api, 'api.yaml'));
    assert.equal(p!.line, 13);
    assert.match(p!.message, /names a file outside the document's folder/);
    assert.doesNotMatch(p!.message, /hunter2|outside\/secret|\/etc\/passwd/);
  };

  it('a file linked to one outside the folder is refused', () => {
    symlinkSync('../outside/secret.yaml', join(api, 'inner.yaml'));
    refused('inner.yaml#/Secret');
  });

  it('a file linked to /etc/passwd is refused', () => {
    symlinkSync('/etc/passwd', join(api, 'passwd.yaml'));
    refused('passwd.yaml');
  });

  it('a folder linked outside, and a chain of links that ends outside, are refused', () => {
    symlinkSync(join(root, 'outside'), join(api, 'linked'));
    refused('linked/secret.yaml#/Secret');
    symlinkSync('../../outside/secret.yaml', join(api, 'parts', 'hop2.yaml'));
    symlinkSync('parts/hop2.yaml', join(api, 'hop1.yaml'));
    refused('hop1.yaml#/Secret');
  });

  it('a link that stays inside the folder is followed', () => {
    symlinkSync('parts/inside.yaml', join(api, 'alias.yaml'));
    const x = expand('alias.yaml#/Secret');
    const out = x.tools[0]!.output_schema as { properties: { token: { default: string } } };
    assert.equal(out.properties.token.default, 'fine');
  });
});
