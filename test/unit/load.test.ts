// Stage 1 of loading (load.ts) and the file-reading part of assemble: ${VAR}
// interpolation, source positions, and *_file paths resolved against the
// manifest's folder (not the process's cwd). Codes and positions only.

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { serialize } from 'node:v8';
import { readFileSync } from 'node:fs';
import { fastRead, liftJsonLines, parseSource, positionedRead } from '../../src/manifest/load.js';
import { loadManifest } from '../../src/manifest/index.js';
import { ManifestError } from '../../src/errors.js';
import { generateManifest } from '../../bench/lib/gen-manifest.mjs';

const value = (text: string, env: NodeJS.ProcessEnv) => {
  const src = parseSource('t.yaml', text, env);
  assert.deepEqual(src.problems.map((p) => p.format()), []);
  return src.value as Record<string, unknown>;
};

describe('load: environment interpolation', () => {
  it('${A} is replaced by the variable', () => {
    assert.equal(value('x: ${A}\n', { A: 'alpha' }).x, 'alpha');
  });

  it('${A:-d} uses A when set and d when unset', () => {
    assert.equal(value('x: ${A:-d}\n', { A: 'alpha' }).x, 'alpha');
    assert.equal(value('x: ${A:-d}\n', {}).x, 'd');
    assert.equal(value('x: "${A:-}"\n', {}).x, '');
  });

  it('several variables in one scalar, inside text', () => {
    assert.equal(value('x: "http://${H}:${P:-8080}/v1"\n', { H: 'h' }).x, 'http://h:8080/v1');
  });

  it('$${A} is the literal text ${A}', () => {
    assert.equal(value('x: "$${A}"\n', { A: 'alpha' }).x, '${A}');
    assert.equal(value('x: "cost: $${A:-d} and ${A}"\n', { A: 'alpha' }).x, 'cost: ${A:-d} and alpha');
  });

  it("a variable's value is not interpolated again", () => {
    assert.equal(value('x: ${A}\n', { A: '${B}', B: 'boom' }).x, '${B}');
  });

  it('interpolates inside nested mappings and sequences', () => {
    const v = value('a:\n  b: [one, "${A}"]\n', { A: 'two' });
    assert.deepEqual(v.a, { b: ['one', 'two'] });
  });

  it('an unset variable without a default is ENV_UNSET at its scalar, one problem per scalar', () => {
    const src = parseSource('t.yaml', 'version: 1\nname: ok\nx:\n  y: "${NOPE}"\nz: [a, "${ALSO_NOPE}"]\n', {});
    assert.deepEqual(src.problems.map((p) => `${p.code}@${p.line}:${p.col}`), ['ENV_UNSET@4:6', 'ENV_UNSET@5:8']);
  });

  it('allowUnsetEnv: an unset variable becomes unset:NAME, listed once, not a problem; defaults still apply', () => {
    const src = parseSource('t.yaml', 'a: "${NOPE}"\nb: "x-${NOPE}-${OTHER}"\nc: ${D:-dflt}\n', {}, { allowUnsetEnv: true });
    assert.deepEqual(src.problems, []);
    assert.deepEqual(src.value, { a: 'unset:NOPE', b: 'x-unset:NOPE-unset:OTHER', c: 'dflt' });
    assert.deepEqual(src.unsetEnv, ['NOPE', 'OTHER']);
    assert.deepEqual(parseSource('t.yaml', 'a: "${NOPE}"\n', {}).unsetEnv, []);
  });

  it('the config hash is the sha256 of the raw text, before interpolation', () => {
    const a = parseSource('t.yaml', 'x: ${A}\n', { A: '1' });
    const b = parseSource('t.yaml', 'x: ${A}\n', { A: '2' });
    assert.equal(a.hash, b.hash);
    assert.match(a.hash, /^[0-9a-f]{64}$/);
  });
});

describe('load: source positions', () => {
  const text = [
    'version: 1', //           1
    'name: t', //              2
    'tools:', //               3
    '  - name: a.b', //        4
    '    description: x', //   5
    '    input_schema:', //    6
    '      type: object', //   7
    '    empty:', //           8
    '',
  ].join('\n');
  const src = parseSource('t.yaml', text, {});

  it('locates a value node', () => {
    assert.deepEqual(src.locate(['tools', 0, 'description']), { line: 5, col: 18 });
    assert.deepEqual(src.locate(['tools', 0]), { line: 4, col: 5 });
    assert.deepEqual(src.locate(['tools', 0, 'input_schema', 'type']), { line: 7, col: 13 });
  });

  it('locates the key of a field, when asked', () => {
    assert.deepEqual(src.locate(['tools', 0, 'description'], 'key'), { line: 5, col: 5 });
  });

  it('a key with no value points at the key', () => {
    assert.deepEqual(src.locate(['tools', 0, 'empty']), { line: 8, col: 5 });
  });

  it('a path that goes beyond the document points at the deepest node that exists', () => {
    assert.deepEqual(src.locate(['tools', 0, 'input_schema', 'properties', 'x']), { line: 7, col: 7 });
  });

  it('YAML errors carry line:col', () => {
    const bad = parseSource('t.yaml', 'version: 1\nname: t\nx: [a, b]]\n', {});
    assert.deepEqual(bad.problems.map((p) => `${p.code}@${p.line}:${p.col}`), ['YAML_SYNTAX@3:10']);
    assert.equal(bad.value, undefined);
  });
});

describe('load: *_file paths', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-load-'));
    mkdirSync(join(dir, 'secrets'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('auth.token_file and auth.tokens[].token_file resolve against the manifest folder', async () => {
    writeFileSync(join(dir, 'secrets', 'main.token'), 'main-token\n');
    writeFileSync(join(dir, 'secrets', 'ci.token'), 'ci-token\n');
    writeFileSync(join(dir, 'svc.yaml'), [
      'version: 1',
      'name: t',
      'profile: { scopes: [a.use] }',
      'auth:',
      '  token_file: secrets/main.token',
      '  tokens:',
      '    - { name: ci, token_file: ./secrets/ci.token, scopes: [a.use] }',
      '',
    ].join('\n'));
    const loaded = await loadManifest(join(dir, 'svc.yaml'), {});
    try {
      assert.equal(loaded.config.auth!.token_file, join(dir, 'secrets', 'main.token'));
      assert.equal(loaded.config.auth!.tokens![0]!.token_file, join(dir, 'secrets', 'ci.token'));
      assert.equal(loaded.config.base_dir, dir);
    } finally {
      loaded.dispose();
    }
  });

  it('oauth.clients[].client_secret_file is read (trimmed) relative to the manifest', async () => {
    writeFileSync(join(dir, 'secrets', 'client.secret'), 's3cret-value\n');
    writeFileSync(join(dir, 'svc.yaml'), clientManifest('secrets/client.secret'));
    const loaded = await loadManifest(join(dir, 'svc.yaml'), {});
    try {
      const [first, second] = loaded.config.oauth!.clients!;
      assert.equal(first!.client_secret, undefined);
      assert.equal(second!.client_secret, 's3cret-value');
    } finally {
      loaded.dispose();
    }
  });

  it('a missing client_secret_file is FILE_UNREADABLE at the client_secret_file field', async () => {
    writeFileSync(join(dir, 'svc.yaml'), clientManifest('secrets/nope.secret'));
    let caught: unknown;
    try {
      (await loadManifest(join(dir, 'svc.yaml'), {})).dispose();
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof ManifestError, `expected ManifestError, got ${String(caught)}`);
    assert.deepEqual(caught.problems.map((p) => `${p.code}@${p.line}:${p.col}`), ['FILE_UNREADABLE@12:27']);
  });

  it('an upstream credential\'s secret file is read when loading: a missing one is FILE_UNREADABLE at its field', async () => {
    const manifest = (file: string) => [
      'version: 1', //                                              1
      'name: t', //                                                 2
      'auth: { token: a-token-for-tests }', //                       3
      'upstreams:', //                                              4
      '  - name: vendor', //                                        5
      '    url: https://vendor.example/mcp', //                     6
      '    auth: { static: { bearer_file: secrets/up.token } }', // 7
      '    expose:', //                                             8
      '      overrides:', //                                        9
      '        search:', //                                         10
      `          auth: { static: { header: X-Api-Key, value_file: ${file} } }`, // 11
      '',
    ].join('\n');
    writeFileSync(join(dir, 'secrets', 'up.token'), 'up-token\n');
    writeFileSync(join(dir, 'secrets', 'tool.key'), 'tool-key\n');
    writeFileSync(join(dir, 'svc.yaml'), manifest('secrets/tool.key'));
    (await loadManifest(join(dir, 'svc.yaml'), {})).dispose();
    writeFileSync(join(dir, 'svc.yaml'), manifest('secrets/nope.key'));
    let caught: unknown;
    try {
      (await loadManifest(join(dir, 'svc.yaml'), {})).dispose();
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof ManifestError, `expected ManifestError, got ${String(caught)}`);
    assert.deepEqual(caught.problems.map((p) => `${p.code}@${p.line}:${p.col}`), ['FILE_UNREADABLE@11:60']);
  });
});

function clientManifest(secretFile: string): string {
  return [
    'version: 1', //                                         1
    'name: t', //                                            2
    'base_url: http://127.0.0.1:8080', //                    3
    'profile: { scopes: [a.use] }', //                       4
    'routes: { public: [/healthz], protected: [/svc] }', //  5
    'oauth:', //                                             6
    '  enabled: true', //                                    7
    '  clients:', //                                         8
    '    - client_id: first', //                             9
    '      redirect_uris: [http://127.0.0.1/cb]', //         10
    '    - client_id: second', //                            11
    `      client_secret_file: ${secretFile}`, //            12
    '      redirect_uris: [http://127.0.0.1/cb]', //         13
    '',
  ].join('\n');
}

describe('load: a manifest written as JSON', () => {
  const json = JSON.stringify({ version: 1, name: 'j', tools: [{ name: 't', template: 'x ${A} $${B}', input_schema: { type: 'object', properties: { 'a\\"b': { type: 'string' } } } }] }, null, 2);

  it('gives the value the YAML reader gives (variables too), and locate() still points at lines', () => {
    const env = { A: 'alpha' };
    const fast = parseSource('t.json', json, env);
    const slow = positionedRead('t.yaml', `# c\n${json}`, env, {});
    assert.deepEqual(fast.problems, []);
    assert.deepEqual(fast.value, slow.value);
    assert.equal((fast.value as { tools: { template: string }[] }).tools[0]!.template, 'x alpha ${B}');
    assert.deepEqual(fast.locate(['tools', 0, 'template']), { line: 7, col: 19 });
    assert.deepEqual(slow.locate(['tools', 0, 'template']), { line: 8, col: 19 });
  });

  it('reports a duplicate key and an unset variable at their line, as the YAML reader does', () => {
    const dup = parseSource('t.json', '{\n  "name": "a",\n  "tools": [{"name": "x", "name": "y"}]\n}', {});
    assert.deepEqual(dup.problems.map((p) => [p.code, p.line]), [['DUPLICATE_NAME', 3]]);
    const unset = parseSource('t.json', '{\n  "name": "${NOPE}"\n}', {});
    assert.deepEqual(unset.problems.map((p) => [p.code, p.line]), [['ENV_UNSET', 2]]);
    assert.deepEqual(parseSource('t.json', '{"name": "${NOPE}"}', {}, { allowUnsetEnv: true }).unsetEnv, ['NOPE']);
    // Same key text in sibling objects is no duplicate.
    assert.deepEqual(parseSource('t.json', '{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": "\\"k\\""}, {"k": 3}]}', {}).problems, []);
  });
});

describe('load: the fast reader and the positioned reader agree', () => {
  const env = { SVC_TOKEN: 't0k', A: 'alpha' };
  const files = execFileSync('git', ['ls-files', '*.yaml', '*.yml', '*.json'], { encoding: 'utf8' }).split('\n')
    .filter((f) => /svc[^/]*\.(ya?ml|json)$|manifest|examples\//.test(f) && !f.includes('package'));

  it('on every manifest in the repository (same value; the fast reader takes the common case)', () => {
    assert.ok(files.length >= 20, `found ${files.length} manifests`);
    let fastCount = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      const slow = positionedRead(f, text, env, { allowUnsetEnv: true });
      const fast = fastRead(f, text, env, { allowUnsetEnv: true });
      if (!fast) continue; // stepped aside: parseSource gives the positioned reader's answer
      fastCount++;
      assert.deepEqual(slow.problems, [], `${f}: the fast reader accepted a file the positioned reader refuses`);
      assert.deepEqual(fast.value, slow.value, f);
      assert.deepEqual(fast.unsetEnv, slow.unsetEnv, f);
    }
    assert.equal(fastCount, files.length, 'the fast reader takes every manifest in the repository');
  });

  it('on YAML 1.2 core scalars (the cases where YAML 1.1 readers differ)', () => {
    const text = ['a: 0b101', 'b: 1_000', 'c: yes', 'd: 0o14', 'e: 014', 'f: 0x1F', 'g: 2001-12-14', 'h: .inf', 'i: 1e3',
      'j: +12', 'k: ~', 'l: Null', 'm: TRUE', 'n: tRue', '"<<": {x: 1}', 'o: +.5', 'p: +0x1', 'q: "\\x41\\u00e9"',
      'r: >\n  x\n\n  y', 's: |-\n  kept\n   indented', 't: [1, 2, ]', 'u: {v: }', 'w: "#not a comment" # a comment', ''].join('\n');
    const fast = fastRead('t.yaml', text, {}, {});
    assert.ok(fast, 'the fast reader takes plain YAML');
    assert.deepEqual(fast.value, positionedRead('t.yaml', text, {}, {}).value);
  });

  it('on long strings (which it copies out of the source text): escapes, non-ASCII, a lone surrogate', () => {
    const text = ['a: "a long \\"quoted\\" line\\n"', 'b: déjà vu, déjà entendu', 'c: "\\ud800 and a lone surrogate"', 'd: [short, short, "short"]', ''].join('\n');
    const fast = fastRead('t.yaml', text, {}, {});
    assert.ok(fast);
    assert.deepEqual(fast.value, positionedRead('t.yaml', text, {}, {}).value);
    assert.equal((fast.value as { c: string }).c, '\ud800 and a lone surrogate');
  });

  it('in a text with a character beyond Latin-1, gives its Latin-1 strings one-byte copies, short ones too', () => {
    // V8 stores a string one-byte or two-byte; v8.serialize writes the one tag '"', the other 'c'.
    const oneByte = (s: string) => String.fromCharCode(serialize(s)[2]!) === '"';
    const text = ['# a comment with an em dash — and nothing else wide', 'name: bench.echo', 'template: "{{text}}"', 'long: a description long enough to be copied', 'wide: ‘quoted’', 'list: [a, b]', ''].join('\n');
    const v = fastRead('t.yaml', text, {}, {})!.value as Record<string, unknown>;
    assert.deepEqual(v, positionedRead('t.yaml', text, {}, {}).value);
    for (const s of [v.name, v.template, v.long, ...(v.list as string[])]) assert.ok(oneByte(s as string), `${String(s)} is one-byte`);
    assert.equal(oneByte(v.wide as string), false, 'a string with a wide character stays two-byte');
  });

  it('on a catalog over 1 MiB (read, then the parser\'s memory released): the value its JSON form gives', () => {
    const env = { SVC_TOKEN: 't0k' };
    const yamlText = generateManifest(2000, { marker: 'v1' });
    assert.ok(yamlText.length > 1 << 20, `${yamlText.length} characters`);
    const fromYaml = fastRead('big.yaml', yamlText, env, {});
    const fromJson = fastRead('big.json', generateManifest(2000, { json: true, marker: 'v1' }), env, {});
    assert.ok(fromYaml && fromJson);
    assert.deepEqual(fromYaml.value, fromJson.value);
  });

  it('on a large catalog with a syntax error or a duplicate key: the problem where the positioned reader puts it, without it', () => {
    const lines = generateManifest(1000).split('\n');
    const at = lines.findIndex((l) => l.includes('- name: ') && l.includes('_500'));
    const broken = [...lines];
    broken[at] += ' : : bad';
    const dup = [...lines];
    dup.splice(at + 1, 0, dup[at + 1]!); // the tool's next key twice
    for (const [text, code] of [[broken.join('\n'), 'YAML_SYNTAX'], [dup.join('\n'), 'DUPLICATE_NAME']] as const) {
      const fast = fastRead('big.yaml', text, {}, {});
      assert.ok(fast, 'the fast reader reports it (the positioned reader is not needed)');
      const slow = positionedRead('big.yaml', text, {}, {});
      assert.deepEqual(fast.problems.map((p) => [p.code, p.line]), [[code, slow.problems[0]!.line]]);
      assert.equal(slow.problems[0]!.code, code);
    }
  });

  describe('a value written as one line of JSON (read by JSON.parse, not js-yaml)', () => {
    const same = (text: string, e: NodeJS.ProcessEnv = {}) => {
      const fast = fastRead('t.yaml', text, e, {});
      assert.ok(fast, 'the fast reader takes it');
      assert.deepEqual(fast.value, positionedRead('t.yaml', text, e, {}).value);
      return fast.value as Record<string, unknown>;
    };

    it('lifts `key: {…}`, `- key: […]` and CRLF lines, leaves a line with a comment or bad JSON to js-yaml', () => {
      const text = ['a: {"x": [1, 2.5e3, -0, null, true], "y": {"z": "\\u00e9\\/"}}', 'b:', '  - c: ["p", "q"]  ', 'd: {"r": 1}\r',
        'e: {"s": 1} # a comment', 'f: {s: 1}', 'g: {"t": "${HOME_DIR}"}', ''].join('\n');
      assert.equal(liftJsonLines(text)?.values.length, 4);
      same(text, { HOME_DIR: '/home/x' });
      assert.equal((same(text, { HOME_DIR: '/home/x' }).g as { t: string }).t, '/home/x', 'variables in a lifted value are replaced');
    });

    it('gives the same value when a JSON line sits inside a block scalar or a multi-line string (the lifting is undone)', () => {
      const block = same(['a: |', '  k: {"x": 1}', 'b: {"y": 2}', ''].join('\n'));
      assert.equal(block.a, 'k: {"x": 1}\n');
      assert.deepEqual(block.b, { y: 2 });
      const folded = same(['a: "first', '  k: [1]"', ''].join('\n'));
      assert.equal(folded.a, 'first k: [1]');
      same(['a: >-', '  k: {"x": 1}', ''].join('\n'));
      assert.equal(same(['a: |', '  k: [1, 2]', '  l: {}', ''].join('\n')).a, 'k: [1, 2]\nl: {}\n', 'values with no key');
    });

    it('leaves a JSON line with a duplicate key, nested or not, to the readers that refuse it', () => {
      for (const text of ['a: {"x": 1, "x": 2}\n', 'a: [{"y": {"z": ":", "x": 1, "x\\"": 2, "x": 3}}]\n']) {
        assert.equal(liftJsonLines(text)?.values.length, 1);
        assert.equal(fastRead('t.yaml', text, env, {}), undefined, text);
        assert.deepEqual(parseSource('t.yaml', text, env).problems.map((p) => p.code), ['DUPLICATE_NAME'], text);
      }
      same('a: [{"y": {"z": "\\":", "x": 1, "x\\"": 2}}, {"x": 1}]\n');
    });

    it('refuses a __proto__ or ${ key inside a lifted value as it does in YAML', () => {
      for (const text of ['a: {"__proto__": {"p": 1}}\n', 'a: {"${A}": 1}\n']) {
        assert.equal(liftJsonLines(text)?.values.length, 1);
        assert.equal(fastRead('t.yaml', text, env, {}), undefined, text);
      }
    });

    it('agrees with the positioned reader on 400 generated documents mixing JSON lines with block scalars, quoted and plain multi-line strings, comments and duplicates', () => {
      // A fixed-seed generator (mulberry32), so a failure names a document that can be reproduced.
      let seed = 17;
      const rand = () => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const jsons = ['{"a": 1}', '{"a": {"b": [1, "x"]}, "c": null}', '["p", {"q": true}]', '{"s": "${A}"}', '{"k": 1, "k": 2}',
        '{"t": "a: {\\"b\\": 1}"}', '[]', '{}', '{"u": "# not a comment"}', '{"__proto__": {"p": 1}}', '{"v": 1} # note', '[1, 2] trailing'];
      const entry = (key: string, indent: string): string[] => {
        const j = pick(jsons);
        switch (Math.floor(rand() * 6)) {
          case 0: return [`${indent}${key}: ${j}`];
          case 1: return [`${indent}${key}: |`, `${indent}  inner: ${j}`, `${indent}  more: ${pick(jsons)}`];
          case 2: return [`${indent}${key}: "first`, `${indent}  inner: ${j.replace(/"/g, '\\"')}"`];
          case 3: return [`${indent}${key}: >-`, `${indent}  inner: ${j}`];
          case 4: return [`${indent}${key}:`, `${indent}  - name: ${j}`, `${indent}  - ${j}`];
          default: return [`${indent}${key}: plain words`, `${indent}# ${key}: ${j}`];
        }
      };
      let lifted = 0;
      let fastTook = 0;
      for (let n = 0; n < 400; n++) {
        const lines: string[] = [];
        const keys = Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, i) => (rand() < 0.05 && i > 0 ? 'k0' : `k${i}`));
        for (const k of keys) lines.push(...(rand() < 0.3 ? [`${k}:`, ...entry('nested', '  ')] : entry(k, '')));
        const text = lines.join(rand() < 0.1 ? '\r\n' : '\n') + '\n';
        if (liftJsonLines(text)) lifted++;
        const slow = positionedRead('t.yaml', text, env, {});
        const fast = fastRead('t.yaml', text, env, {});
        if (!fast) continue; // stepped aside: parseSource gives the positioned reader's answer
        fastTook++;
        assert.deepEqual(slow.problems.map((p) => p.format()), [], `the fast reader accepted a document the positioned reader refuses:\n${text}`);
        assert.deepEqual(fast.value, slow.value, text);
      }
      assert.ok(lifted > 200 && fastTook > 100, `${lifted} documents had a JSON line, the fast reader took ${fastTook}`);
    });

    it('lifts every schema line of a generated catalog', () => {
      const text = generateManifest(50, { marker: 'v1' });
      assert.equal(liftJsonLines(text)?.values.length, 50);
    });
  });

  it('steps aside for a complex key', () => {
    assert.equal(fastRead('t.yaml', '? [a]\n: 1\n', env, {}), undefined);
  });

  for (const [what, text] of [
    ['an anchor and alias', 'a: &x {b: 1}\nc: *x\n'],
    ['a tag', 'a: !!binary aGk=\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a __proto__ key', '__proto__: {p: 1}\n'],
    ['a ${ in a key', '"${A}": 1\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
    ['a document that is not a mapping', '- 1\n'],
    ['a syntax error', 'a: [1\n'],
  ] as const) {
    it(`steps aside for ${what} (the positioned reader decides)`, () => {
      assert.equal(fastRead('t.yaml', text, env, {}), undefined);
      const src = parseSource('t.yaml', text, env);
      const slow = positionedRead('t.yaml', text, env, {});
      assert.deepEqual(src.problems.map((p) => p.format()), slow.problems.map((p) => p.format()));
      assert.deepEqual(src.value, slow.value);
    });
  }
});
