// Issue 31's bench rows, smoke form: `node bench/run.mjs --smoke --only upstream-direct,mcp-proxy,supergateway,
// fastsvc-upstream,upstream-startup-5x100` starts server-everything on the harness's own pipe, behind mcp-proxy and
// supergateway (bench/peers/stdio-gateway.mjs) and behind the real `svc serve` with its upstreams: section, checks every
// answer ("Echo: hello"), and must exit 0 with a figure in every row: req/s, the proxy's CPU per call and the upstream's
// (its child processes'), the start-up with 5 upstreams × 100 tools, and a measured value for each issue-31 target. Apart:
// the gateways bind loopback only (/proc/net/tcp*), and the generated-tools upstream lists and answers its tools and marks
// each tools/list. No timing, no value of a figure.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../../test/helpers/cli.js';

const LIMIT_MS = 240_000; // the harness bounds its own waits; this only stops a wedged run
const EVERYTHING = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';
const ONLY = ['upstream-direct', 'mcp-proxy', 'supergateway', 'fastsvc-upstream', 'upstream-startup-5x100'];
const NUMBER = /^\d[\d,]*(\.\d+)?$/;

/** The cells of the row whose first cell is `name`, in the table under the `## <heading>…` section of `out`. */
function rowOf(out: string, heading: string, name: string): string[] {
  const section = out.split(/^## /m).find((s) => s.startsWith(heading)) ?? '';
  const line = section.split('\n').find((l) => l.startsWith(`| ${name} |`));
  assert.ok(line, `no row ${name} under "${heading}":\n${out}`);
  return line.split('|').slice(1, -1).map((c) => c.trim());
}

/** Runs node with args from the repository root until it exits; its exit code (or signal), stdout and stderr's tail. */
function run(args: string[], children: ChildProcess[]): Promise<{ code: number | string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d).slice(-8000)));
    const timer = setTimeout(() => child.kill('SIGTERM'), LIMIT_MS);
    child.once('error', reject);
    child.once('exit', (c, sig) => {
      clearTimeout(timer);
      resolve({ code: c ?? sig, stdout, stderr });
    });
  });
}

describe('issue 31 bench rows, smoke (node bench/run.mjs --smoke --only upstream-direct,mcp-proxy,supergateway,fastsvc-upstream,…)', function () {
  this.timeout(LIMIT_MS + 10_000);
  const children: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'upstream-smoke-'));
  let report = '';
  before(async () => {
    const { code, stdout, stderr } = await run(['bench/run.mjs', '--smoke', '--only', ONLY.join(','), '--out', join(dir, 'report.md')], children);
    assert.equal(code, 0, `bench smoke exited ${code}\n${stdout}\n${stderr}`);
    report = readFileSync(join(dir, 'report.md'), 'utf8');
  });
  after(() => {
    for (const c of children) c.kill('SIGTERM'); // the harness kills its servers on SIGTERM
    rmSync(dir, { recursive: true, force: true });
  });

  it('drives the upstream on its own pipe and through both gateways, and splits the CPU per call between proxy and upstream', () => {
    const direct = rowOf(report, 'A stdio MCP upstream', 'upstream-direct');
    assert.match(direct[2]!, NUMBER, direct.join(' | '));
    assert.equal(direct[3], '1.00×');
    assert.equal(direct[4], '—', 'no proxy in front of the direct row');
    assert.match(direct[5]!, NUMBER, `the upstream's own CPU: ${direct.join(' | ')}`);
    for (const peer of ['mcp-proxy-mcp', 'supergateway-mcp']) {
      const cells = rowOf(report, 'A stdio MCP upstream', peer);
      assert.match(cells[2]!, NUMBER, cells.join(' | '));
      assert.match(cells[3]!, /^\d+\.\d\d×$/, `${peer}: a ratio to the direct row: ${cells.join(' | ')}`);
      for (const i of [4, 5, 6]) assert.match(cells[i]!, NUMBER, `${peer}: proxy, upstream and total CPU: ${cells.join(' | ')}`);
      assert.equal(cells.at(-1), 'ok', cells.join(' | '));
      assert.match(rowOf(report, 'Throughput', peer)[7]!, /upstream-direct$/, 'the ceiling column names the direct row');
    }
    for (const server of ['upstream-direct', 'mcp-proxy', 'supergateway']) assert.equal(rowOf(report, 'Start-up', server).at(-1), 'ok');
  });

  it('serves the upstream through fastsvc beside its native call, and times start-up with 5 upstreams × 100 tools', () => {
    for (const scn of ['fastsvc-upstream-native-mcp', 'fastsvc-upstream-mcp', 'fastsvc-upstream-native-mcp-2026', 'fastsvc-upstream-mcp-2026', 'fastsvc-upstream-svc']) {
      const cells = rowOf(report, 'Throughput', scn);
      assert.match(cells[2]!, NUMBER, cells.join(' | '));
      assert.match(cells[6]!, NUMBER, `${scn}: server CPU per request: ${cells.join(' | ')}`);
      assert.equal(cells.at(-1), 'ok', cells.join(' | '));
    }
    for (const scn of ['fastsvc-upstream-mcp', 'fastsvc-upstream-mcp-2026', 'fastsvc-upstream-svc']) {
      const cells = rowOf(report, 'A stdio MCP upstream', scn);
      for (const i of [4, 5, 6]) assert.match(cells[i]!, NUMBER, `${scn}: proxy, upstream and total CPU: ${cells.join(' | ')}`);
    }
    const startup = rowOf(report, 'Start-up with upstreams', 'upstream-startup-5x100');
    assert.equal(startup[2], '1', `one smoke sample: ${startup.join(' | ')}`);
    for (const i of [3, 4, 5]) assert.match(startup[i]!, /^-?\d+(\.\d+)?$/, startup.join(' | '));
    assert.equal(startup.at(-1), 'ok');
    const targets = (report.split(/^## /m).find((s) => s.startsWith('Issue 6 targets')) ?? '').split('\n').filter((l) => l.includes('(issue 31)'));
    assert.equal(targets.length, 5, `five issue-31 targets:\n${report}`);
    for (const t of targets) assert.doesNotMatch(t, /not measured/, t);
  });

  it('binds the gateways to loopback only', async () => {
    for (const peer of ['mcp-proxy', 'supergateway']) {
      const child = spawn(process.execPath, ['bench/peers/stdio-gateway.mjs', peer, EVERYTHING, 'stdio'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec((out += d));
          if (m) resolve(Number(m[1]));
        });
        child.once('exit', (c) => reject(new Error(`${peer} exited (${c}) before listening`)));
      });
      // Listening sockets (state 0A) on that port, from /proc/net/tcp and tcp6: local address in hex, port in hex.
      const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
      const listening = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(1))
        .map((l) => l.trim().split(/\s+/)).filter((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A').map((f) => f[1]!.split(':')[0]);
      assert.deepEqual(listening, ['0100007F'], `${peer} listens on 127.0.0.1 only (got ${listening.join(', ')})`);
      child.kill('SIGTERM');
    }
  });

  it('the generated-tools upstream lists N distinct tools, answers a call and marks each tools/list', async () => {
    const mark = join(dir, 'u.mark');
    const client = new Client({ name: 'upstream-smoke', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['bench/peers/many-tools-stdio.mjs', '40', mark], cwd: ROOT }));
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 40);
      assert.equal(new Set(tools.map((t) => JSON.stringify(t.inputSchema))).size, 40, 'distinct input schemas');
      await client.listTools();
      const lines = readFileSync(mark, 'utf8').trim().split('\n');
      assert.equal(lines.length, 2, 'one mark per tools/list');
      for (const l of lines) assert.match(l, /^\d{13}$/);
      const answer = await client.callTool({ name: tools[3]!.name, arguments: { x: 1 } });
      assert.deepEqual(answer.content, [{ type: 'text', text: `${tools[3]!.name} {"x":1}` }]);
    } finally {
      await client.close();
    }
  });
});
