// The line-scanning locator against the `yaml` package: on every YAML manifest in the repository
// and on a generated catalog, each node it indexes is where the yaml package puts it (value and key).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { indexBlockYaml, indexJson } from '../../src/util/position-index.js';
import { positionedRead } from '../../src/manifest/load.js';
import { checkManifest } from '../../src/manifest/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { generateManifest } from '../../bench/lib/gen-manifest.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yamlFiles(p, out);
    else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out;
}

/** Every path of a value, with whether its last element is a mapping key. */
function* paths(v: unknown, path: (string | number)[] = []): Generator<[(string | number)[], boolean]> {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      yield [[...path, i], false];
      yield* paths(v[i], [...path, i]);
    }
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      yield [[...path, k], true];
      yield* paths(x, [...path, k]);
    }
  }
}

function compare(file: string, text: string, json = false): number {
  const index = json ? indexJson(text) : indexBlockYaml(text);
  if (!index) return 0;
  const full = positionedRead(file, text, {}, { allowUnsetEnv: true });
  if (full.problems.length) return 0;
  let checked = 0;
  for (const [path, isKey] of paths(full.value)) {
    if (!index.has(path)) continue;
    assert.deepEqual(index.locate(path), full.locate(path), `${file}: value of ${path.join('.')}`);
    if (isKey) assert.deepEqual(index.locate(path, 'key'), full.locate(path, 'key'), `${file}: key of ${path.join('.')}`);
    checked++;
  }
  return checked;
}

describe('position-index', () => {
  it('agrees with the yaml package on every YAML manifest in the repository', function () {
    this.timeout(60_000);
    const files = [...yamlFiles(join(ROOT, 'examples')), ...yamlFiles(join(ROOT, 'test/fixtures')), ...yamlFiles(join(ROOT, 'bench')), join(ROOT, 'svc.yaml')];
    let indexed = 0;
    let nodes = 0;
    for (const f of files) {
      const n = compare(f, readFileSync(f, 'utf8'));
      if (n) indexed++;
      nodes += n;
    }
    assert.ok(indexed >= files.length / 2, `indexed ${indexed} of ${files.length} files`);
    assert.ok(nodes > 1000, `compared ${nodes} nodes`);
  });

  it('agrees on a generated catalog, locating nodes inside one-line flow mappings at the mapping', () => {
    const text = generateManifest(200);
    assert.ok(compare('gen.yaml', text) > 1000);
    const index = indexBlockYaml(text)!;
    const full = positionedRead('gen.yaml', text, {}, { allowUnsetEnv: true });
    const inner = ['tools', 150, 'input_schema', 'properties'];
    assert.equal(index.has(inner), false);
    assert.equal(index.locate(inner)!.line, full.locate(inner).line, 'same line as the node itself');
  });

  it('locates the problems of a large catalog (the line scan, not the yaml package) where they are', () => {
    const lines = generateManifest(1000).split('\n');
    let bad = lines.length - 1;
    while (!lines[bad]!.includes('required_scopes: [catalog.use]')) bad--;
    lines[bad] = lines[bad]!.replace('catalog.use', 'nope.scope');
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-locate-'));
    try {
      const file = join(dir, 'svc.yaml');
      writeFileSync(file, lines.join('\n'));
      const checked = checkManifest(file, { SVC_TOKEN: 'x' });
      // The scope sits inside a one-line flow sequence: located at the sequence, on its line.
      assert.deepEqual(checked.problems.map((p) => [p.code, p.line, p.col]), [['SCOPE_UNDECLARED', bad + 1, lines[bad]!.indexOf('[') + 1]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('JSON: agrees with the yaml package on a generated catalog (one tool per line) and on pretty-printed JSON, every node', () => {
    const oneLine = generateManifest(100, { json: true });
    const value = JSON.parse(oneLine) as unknown;
    let nodes = 0;
    for (const text of [oneLine, JSON.stringify(value, null, 2), JSON.stringify(value, null, '\t').replaceAll('\n', '\r\n')]) {
      const n = compare('gen.json', text, true);
      assert.equal(n, [...paths(value)].length, 'every node indexed');
      nodes += n;
    }
    assert.ok(nodes > 3000);
  });

  it('JSON: locates the problems of a large catalog exactly (the scan, not the yaml package)', () => {
    const text = generateManifest(1000, { json: true });
    const cut = text.lastIndexOf('"catalog.use"');
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-locate-'));
    try {
      const file = join(dir, 'svc.json');
      writeFileSync(file, `${text.slice(0, cut)}"nope.scope"${text.slice(cut + '"catalog.use"'.length)}`);
      const before = text.slice(0, cut).split('\n');
      assert.deepEqual(checkManifest(file, { SVC_TOKEN: 'x' }).problems.map((p) => [p.code, p.line, p.col]), [['SCOPE_UNDECLARED', before.length, before.at(-1)!.length + 1]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('JSON: a node deeper than the first pass indexes is found by walking from its ancestor, exactly; a missing one is not', () => {
    const text = '{"a": {"b": {"c": {"d": {"e": 1}, "f": [1, {"g": 2}]}, "y": 3}, "x": {"q": 1}, "y": 2}}';
    const index = indexJson(text)!;
    const full = positionedRead('d.json', text, {}, {});
    for (const p of [['a', 'b', 'c', 'd', 'e'], ['a', 'b', 'c', 'f', 1, 'g'], ['a', 'b', 'c', 'f', 0], ['a', 'b', 'y']]) {
      assert.deepEqual(index.locate(p), full.locate(p), p.join('.'));
      assert.deepEqual(index.locate(p, 'key'), full.locate(p, 'key'), `key of ${p.join('.')}`);
    }
    // a.x has no y, but a has: the walk must not take a's y for a.x's.
    assert.equal(index.has(['a', 'x', 'y']), false);
    assert.equal(index.has(['a', 'b', 'c', 'd', 'zz']), false);
    assert.deepEqual(index.locate(['a', 'b', 'c', 'd', 'zz']), full.locate(['a', 'b', 'c', 'd']), 'located at the nearest ancestor');
  });

  it('JSON: undefined for text that is not JSON', () => {
    for (const text of ['{"a": 1,}', '{"a" 1}', '{"a": [1, 2}', '{"a": 1} x', "{'a': 1}"]) assert.equal(indexJson(text), undefined, text);
  });

  it('gives up on what it does not follow', () => {
    for (const text of ['a: [1,\n  2]\n', 'a: &x 1\nb: *x\n', 'a: 1\n---\nb: 2\n', 'a:\n  b: 1\n c: 2\n', 'a: "x\n  y"\n', 'a:\n  - - x\n']) {
      assert.equal(indexBlockYaml(text), undefined, JSON.stringify(text));
    }
  });
});
