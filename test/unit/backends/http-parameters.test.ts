// Parameter serialization (http-parameters.ts) against every row of the OpenAPI 3.1.1
// "Style Examples" table (versions/3.1.1.md of OAI/OpenAPI-Specification), then the encoding
// edge cases: reserved characters, slashes, unicode, empty arrays and objects, null, form bodies.

import assert from 'node:assert/strict';
import { formBody, pct, serializeParameter, type ParameterShape, type Style, type Where } from '../../../src/runtime/backends/http-parameters.js';
import { throwsWithCode } from '../../helpers/errors.js';

const STRING = 'blue';
const ARRAY = ['blue', 'black', 'brown'];
const OBJECT = { R: 100, G: 200, B: 150 };

// [style, explode, undefined, string, array, object]; undefined = n/a (nothing sent).
// The table prefixes query styles with "?" "as if it were the only query parameter": here without it.
type Row = [Style, boolean, string | undefined, string | undefined, string | undefined, string | undefined];
const TABLE: Row[] = [
  ['matrix', false, ';color', ';color=blue', ';color=blue,black,brown', ';color=R,100,G,200,B,150'],
  ['matrix', true, ';color', ';color=blue', ';color=blue;color=black;color=brown', ';R=100;G=200;B=150'],
  ['label', false, '.', '.blue', '.blue,black,brown', '.R,100,G,200,B,150'],
  ['label', true, '.', '.blue', '.blue.black.brown', '.R=100.G=200.B=150'],
  ['simple', false, '', 'blue', 'blue,black,brown', 'R,100,G,200,B,150'],
  ['simple', true, '', 'blue', 'blue,black,brown', 'R=100,G=200,B=150'],
  ['form', false, 'color=', 'color=blue', 'color=blue,black,brown', 'color=R,100,G,200,B,150'],
  ['form', true, 'color=', 'color=blue', 'color=blue&color=black&color=brown', 'R=100&G=200&B=150'],
  ['spaceDelimited', false, undefined, undefined, 'color=blue%20black%20brown', 'color=R%20100%20G%20200%20B%20150'],
  ['pipeDelimited', false, undefined, undefined, 'color=blue%7Cblack%7Cbrown', 'color=R%7C100%7CG%7C200%7CB%7C150'],
  ['deepObject', true, undefined, undefined, undefined, 'color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150'],
];

const where = (style: Style): Where => (['matrix', 'label', 'simple'].includes(style) ? 'path' : 'query');
const param = (style: Style, explode: boolean, over: Partial<ParameterShape> = {}): ParameterShape => ({ name: 'color', in: where(style), style, explode, ...over });

describe('http parameters: the OpenAPI 3.1.1 style examples table', () => {
  for (const [style, explode, undef, str, arr, obj] of TABLE) {
    it(`${style}, explode ${explode}`, () => {
      const p = param(style, explode);
      assert.equal(serializeParameter(p, null), undef, 'undefined (null)');
      if (str !== undefined) assert.equal(serializeParameter(p, STRING), str, 'string');
      if (arr !== undefined) assert.equal(serializeParameter(p, ARRAY), arr, 'array');
      assert.equal(serializeParameter(p, OBJECT), obj, 'object');
    });
  }

  it('the table\'s n/a combinations: spaceDelimited/pipeDelimited with explode are sent as form explode; deepObject ignores explode', () => {
    assert.equal(serializeParameter(param('spaceDelimited', true), ARRAY), 'color=blue&color=black&color=brown');
    assert.equal(serializeParameter(param('pipeDelimited', true), OBJECT), 'R=100&G=200&B=150');
    assert.equal(serializeParameter(param('deepObject', false), OBJECT), 'color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150');
  });

  it('deepObject with a scalar or an array is INVALID_INPUT (the table defines only objects)', () => {
    throwsWithCode(() => serializeParameter(param('deepObject', true), 'blue'), 'INVALID_INPUT');
    throwsWithCode(() => serializeParameter(param('deepObject', true), ARRAY), 'INVALID_INPUT');
  });

  it('header (simple) takes the simple rows, unencoded; cookie (form) joins pairs with "; "', () => {
    const header = param('simple', false, { in: 'header' });
    assert.equal(serializeParameter(header, ARRAY), 'blue,black,brown');
    assert.equal(serializeParameter({ ...header, explode: true }, OBJECT), 'R=100,G=200,B=150');
    assert.equal(serializeParameter(header, 'a b/c'), 'a b/c');
    const cookie = param('form', true, { in: 'cookie' });
    assert.equal(serializeParameter(cookie, ARRAY), 'color=blue; color=black; color=brown');
    assert.equal(serializeParameter(cookie, OBJECT), 'R=100; G=200; B=150');
    assert.equal(serializeParameter({ ...cookie, explode: false }, ARRAY), 'color=blue,black,brown');
    assert.equal(serializeParameter(cookie, 'a;b c'), 'color=a%3Bb%20c');
  });
});

describe('http parameters: encoding', () => {
  it('escapes every reserved character (RFC 3986 gen-delims and sub-delims) and keeps the unreserved ones', () => {
    assert.equal(pct(":/?#[]@!$&'()*+,;="), '%3A%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D');
    assert.equal(pct('AZaz09-._~'), 'AZaz09-._~');
    assert.equal(pct('a b%20'), 'a%20b%2520');
  });

  it('a path value with slashes or dots stays inside its segment', () => {
    const p = param('simple', false);
    assert.equal(serializeParameter(p, '../etc/passwd'), '..%2Fetc%2Fpasswd');
    assert.equal(serializeParameter(p, 'a/b?c#d'), 'a%2Fb%3Fc%23d');
    assert.equal(serializeParameter(param('label', true), ['a/b', 'c.d']), '.a%2Fb.c.d');
    assert.equal(serializeParameter(param('matrix', true), { 'k;': 'v=' }), ';k%3B=v%3D');
  });

  it('unicode is UTF-8 percent-encoded; a lone surrogate is INVALID_INPUT', () => {
    assert.equal(serializeParameter(param('form', true), 'é😀'), 'color=%C3%A9%F0%9F%98%80');
    throwsWithCode(() => serializeParameter(param('form', true), '\ud800'), 'INVALID_INPUT');
  });

  it('a delimiter inside a value is escaped, so it cannot split the value', () => {
    assert.equal(serializeParameter(param('form', false), ['a,b', 'c&d=e']), 'color=a%2Cb,c%26d%3De');
    assert.equal(serializeParameter(param('pipeDelimited', false), ['a|b', 'c d']), 'color=a%7Cb%7Cc%20d');
    assert.equal(serializeParameter(param('deepObject', true, { name: 'f[x]' }), { 'a]': 1 }), 'f%5Bx%5D%5Ba%5D%5D=1');
  });

  it('the parameter name is encoded too', () => {
    assert.equal(serializeParameter(param('form', true, { name: 'a b&c' }), 'x'), 'a%20b%26c=x');
  });

  it('an empty array or object is undefined (RFC 6570), an empty string is a value', () => {
    for (const empty of [[], {}]) {
      assert.equal(serializeParameter(param('form', true), empty), 'color=');
      assert.equal(serializeParameter(param('simple', false), empty), '');
      assert.equal(serializeParameter(param('pipeDelimited', false), empty), undefined);
    }
    assert.equal(serializeParameter(param('form', true), ''), 'color=');
    assert.equal(serializeParameter(param('matrix', false), ''), ';color');
    assert.equal(serializeParameter(param('label', false), ''), '.');
  });

  it('numbers and booleans as their JSON text; nested values (undefined by OpenAPI) as JSON', () => {
    assert.equal(serializeParameter(param('form', false), [1, true, 2.5]), 'color=1,true,2.5');
    assert.equal(serializeParameter(param('form', true), false), 'color=false');
    assert.equal(serializeParameter(param('form', false), [{ a: 1 }]), 'color=%7B%22a%22%3A1%7D');
  });

  it('deepObject nests brackets for nested objects and repeats the key for arrays', () => {
    assert.equal(serializeParameter(param('deepObject', true, { name: 'f' }), { a: { b: 1 }, c: [1, 2] }), 'f%5Ba%5D%5Bb%5D=1&f%5Bc%5D=1&f%5Bc%5D=2');
  });
});

describe('http parameters: form bodies', () => {
  it('each property a pair; arrays repeat; objects as JSON; null empty; spaces as +', () => {
    assert.equal(formBody({ name: 'a b&c=d', tags: ['x', 'y'], meta: { k: 1 }, none: null, n: 3 }, 'body'),
      'name=a+b%26c%3Dd&tags=x&tags=y&meta=%7B%22k%22%3A1%7D&none=&n=3');
    assert.equal(formBody({}, 'body'), '');
  });

  it('a body that is not an object is INVALID_INPUT', () => {
    for (const v of [[1], 'text', 3, null]) throwsWithCode(() => formBody(v, 'body'), 'INVALID_INPUT');
  });
});
