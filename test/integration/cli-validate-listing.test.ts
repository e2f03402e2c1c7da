// `fastsvc validate` warns LISTING_LARGE when the default endpoint lists its tools directly and its listing is past
// 40 tools or 20,000 o200k tokens: one line at the top of the file (1:1) saying the tools, bytes and tokens — the
// figures `fastsvc cost` gives —, what they are past and the way out (discovery: auto); the manifest stays valid
// (exit 0); 40 small tools get no warning. Spawns the real CLI.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, run as runCli } from '../helpers/cli.js';

const ENV = childEnv({ SVC_TOKEN: 'listing-token-0123456789abcdef' });
const run = (args: string[]) => runCli(args, { env: ENV });

type Json = Record<string, any>;

function manifest(tools: number, description = (i: number) => `Tool ${i}.`): string {
  return `version: 1
name: listing
auth:
  token: \${SVC_TOKEN}
tools:
${Array.from({ length: tools }, (_, i) => `  - name: t.n${i}\n    description: ${JSON.stringify(description(i))}\n    template: ok`).join('\n')}
`;
}

describe('validate: LISTING_LARGE', function () {
  this.timeout(60_000);
  let dir: string;
  const file = (name: string, text: string) => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-validate-listing-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('41 tools: one warning at 1:1 with the figures cost gives; still valid', async () => {
    const f = file('many.yaml', manifest(41));
    const r = await run(['validate', f]);
    assert.equal(r.code, 0, r.stderr);
    const cost = JSON.parse((await run(['cost', f, '--json'])).stdout).endpoints[0].listing;
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.equal(lines[0], `${f}:1:1: warning: LISTING_LARGE: the default endpoint (/svc /mcp /ws) lists its tools directly: 41 tools, ${cost.bytes.toLocaleString('en')} bytes, `
      + `~${cost.tokens.toLocaleString('en')} tokens (o200k) in every tools/list, more than 40 tools: models choose tools worse past ~30-40, and the listing takes context before the user asks anything; `
      + 'add discovery: auto (a few meta-tools that search, describe and call, past 40 tools or 20,000 tokens) or split the catalog into endpoints; `fastsvc cost` shows what each source and tool costs');
    const j = JSON.parse((await run(['validate', f, '--json'])).stdout) as Json;
    assert.equal(j.valid, true);
    assert.deepEqual(j.warnings.map((w: Json) => [w.code, w.path, w.line, w.col]), [['LISTING_LARGE', '/', 1, 1]]);
  });

  it('40 small tools: no warning', async () => {
    const r = await run(['validate', file('forty.yaml', manifest(40))]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  it('a named endpoint that lists directly is weighed on its selection, at its key; a progressive one is not', async () => {
    const f = file('endpoints.yaml', manifest(41).replace('tools:\n', `endpoints:
  few:
    select: { names: ["t.n1*"] }
  every: {}
  found:
    discovery: { mode: progressive }
tools:
`));
    const j = JSON.parse((await run(['validate', f, '--json'])).stdout) as Json;
    assert.equal(j.valid, true, JSON.stringify(j.problems));
    assert.deepEqual(j.warnings.map((w: Json) => [w.code, w.path, w.line]), [['LISTING_LARGE', '/', 1], ['LISTING_LARGE', '/endpoints/every', 8]]);
    assert.match(j.warnings[1].message, /^endpoint every \(\/svc\/every \/mcp\/every \/ws\/every\) lists its tools directly: 41 tools, /);
  });

  it('the default endpoint made progressive or auto by the top-level discovery: not weighed', async () => {
    for (const mode of ['progressive', 'auto']) {
      const r = await run(['validate', file(`${mode}.yaml`, manifest(41).replace('tools:\n', `discovery: { mode: ${mode} }\ntools:\n`))]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '', mode);
    }
  });

  it('3 tools past 20,000 tokens: the warning says the tokens, not the tools', async () => {
    const words = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
    const r = await run(['validate', file('heavy.yaml', manifest(3, () => words))]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: LISTING_LARGE: the default endpoint \(\/svc \/mcp \/ws\) lists its tools directly: 3 tools, [\d,]+ bytes, ~[\d,]+ tokens \(o200k\) in every tools\/list, more than 20,000 tokens: /);
  });
});
