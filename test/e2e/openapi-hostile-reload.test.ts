// No reload can take a running server down (issue 38, point 9): the real `svc serve`, its heap held
// to 256 MB, serves an `openapi` source; its document is then rewritten, while it serves, into
// documents made to exhaust memory or to block whoever reads them — a $ref fan-out, YAML aliases
// "billion laughs", a $ref to a named pipe, a $ref to a link out of the folder, the document swapped
// for a link to /dev/zero. Each reload
// is rejected with the document's problem in the log (FILE:LINE:COL: CODE), the server keeps
// answering with the last good catalog, and a good document afterwards is served again.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { fanOut, laughs } from '../helpers/openapi-hostile.js';

const TOKEN = 'openapi-hostile-token-0123456789';
const MANIFEST = `version: 1\nname: hostile\nauth:\n  token: \${SVC_TOKEN}\nopenapi:\n  - name: api\n    document: api.yaml\n`;
const GOOD = (name: string) => `openapi: 3.0.3\ninfo: {title: good, version: "1"}\nservers: [{url: "http://127.0.0.1:9"}]\npaths:\n  /thing:\n    get:\n      operationId: ${name}\n      responses:\n        "200": {description: ok}\n`;
/** A document whose POST /thing body is `ref`. */
const BODY = (ref: string) => GOOD('posted').replace('get:', 'post:').replace('responses:', `requestBody:\n        content:\n          application/json:\n            schema: {$ref: "${ref}"}\n      responses:`);

describe('openapi e2e: a hostile document written while svc serve serves it', function () {
  this.timeout(120_000);
  let served: Served;
  before(async () => {
    served = await serveManifest(MANIFEST, { files: { 'api.yaml': GOOD('good') }, env: { SVC_TOKEN: TOKEN, NODE_OPTIONS: '--max-old-space-size=256' } });
  });
  after(() => served?.stop());

  const toolNames = async () => {
    const res = await fetch(`${served.url}/svc`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { tools: { name: string }[] }).tools.map((t) => t.name);
  };
  let rejected = 0;
  /** The next reload is rejected with a problem matching `problem`; the server still serves the good tool. */
  const rejects = async (problem: RegExp) => {
    rejected++;
    const died = served.exit.then((e) => {
      throw new Error(`the server exited (${e.code ?? e.signal}): ${served.stderr().slice(-600)}`);
    });
    const logs = await Promise.race([died, waitFor(() => {
      const l = served.logs();
      return l.filter((x) => x.event === 'config.reload_rejected').length >= rejected ? l : undefined;
    }, 'the reload to be rejected', 60_000, 50)]);
    const problems = logs.filter((l) => l.event === 'config.reload_failed').map((l) => String(l.problem));
    assert.ok(problems.some((p) => problem.test(p)), problems.join('\n'));
    assert.equal(served.proc.exitCode, null, 'the server is still running');
    assert.deepEqual(await toolNames(), ['good']);
  };

  it('a $ref fan-out (30 levels of ten): rejected at the operation\'s schema', async () => {
    writeFileSync(join(served.dir, 'api.yaml'), fanOut(30));
    await rejects(/api\.yaml:11:\d+: OPENAPI_INVALID: POST \/x0 \(operationId fan0\): its tool would hold more than 1048576 characters of JSON/);
  });

  it('an example of YAML aliases ten at a time, 5 deep (4 MB of JSON): rejected at the parameter\'s schema', async () => {
    writeFileSync(join(served.dir, 'api.yaml'), laughs(5));
    await rejects(/api\.yaml:\d+:\d+: OPENAPI_INVALID: GET \/laugh \(operationId laugh\): its tool would hold more than/);
  });

  it('YAML aliases ten at a time, 12 deep (10^12 nodes): rejected when the document is read', async () => {
    writeFileSync(join(served.dir, 'api.yaml'), laughs(12));
    await rejects(/api\.yaml:1:1: OPENAPI_INVALID: not a document fastsvc reads: its YAML aliases stand for more than/);
  });

  it('a $ref to a named pipe (no writer: a read would wait forever): rejected, not a file', async () => {
    execFileSync('mkfifo', [join(served.dir, 'pipe.yaml')]);
    writeFileSync(join(served.dir, 'api.yaml'), BODY('pipe.yaml'));
    await rejects(/api\.yaml:\d+:\d+: OPENAPI_INVALID: \$ref pipe\.yaml: .*not a file/);
  });

  it('a $ref to a link out of the folder (to /etc/passwd): rejected at the $ref, nothing read', async () => {
    symlinkSync('/etc/passwd', join(served.dir, 'inner.yaml'));
    writeFileSync(join(served.dir, 'api.yaml'), BODY('inner.yaml'));
    await rejects(/api\.yaml:\d+:\d+: OPENAPI_INVALID: \$ref inner\.yaml: names a file outside the document's folder \(through a symbolic link\)/);
  });

  it('the document swapped for a link to /dev/zero (endless): rejected, not a file', async () => {
    symlinkSync('/dev/zero', join(served.dir, 'zero.yaml'));
    renameSync(join(served.dir, 'zero.yaml'), join(served.dir, 'api.yaml'));
    await rejects(/api\.yaml:1:1: FILE_UNREADABLE: .*not a file/);
  });

  it('a good document afterwards is served', async () => {
    writeFileSync(join(served.dir, 'next.yaml'), GOOD('better'));
    renameSync(join(served.dir, 'next.yaml'), join(served.dir, 'api.yaml'));
    await waitFor(async () => ((await toolNames()).join() === 'better' ? true : undefined), 'the good document to be served', 30_000);
  });
});
