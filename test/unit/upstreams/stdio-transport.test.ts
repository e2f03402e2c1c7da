// upstreams/wire/stdio-transport.ts with a real child (node, no shell) that echoes every line it reads and then
// reports how many lines each read of its stdin held. What is asserted: messages sent in one turn of the event
// loop reach the child in one write (counted at the socket) and one read (as the child saw it), and every
// send() resolves; messageBytes is the byte size of the line being delivered (multi-byte text included) and
// is undefined outside onmessage; a send after close() is refused. A child that exits on its own tells its
// exit code and the end of its stderr (whole lines, bounded, control characters dropped, its env's values
// redacted); one that close() killed tells nothing, and close() resolves once it is gone.

import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { GroupStdioTransport } from '../../../src/upstreams/wire/stdio-transport.js';
import { waitFor } from '../../helpers/wait.js';

// Echoes each line, then one notification per read: {"method":"read","params":{"lines":N}}.
const CHILD = `
let rest = '';
process.stdin.on('data', (chunk) => {
  const lines = (rest + chunk).split('\\n');
  rest = lines.pop();
  process.stdout.write(lines.map((l) => l + '\\n').join('') + JSON.stringify({ jsonrpc: '2.0', method: 'read', params: { lines: lines.length } }) + '\\n');
});`;

function start(): { transport: GroupStdioTransport; got: { message: JSONRPCMessage; bytes: number | undefined }[] } {
  const transport = new GroupStdioTransport({ program: process.execPath, args: ['-e', CHILD], cwd: process.cwd(), env: {}, maxLine: 1 << 20 });
  const got: { message: JSONRPCMessage; bytes: number | undefined }[] = [];
  transport.onmessage = (message) => got.push({ message, bytes: transport.messageBytes });
  return { transport, got };
}

/** Waits for ok() (a child node process started under load can take seconds to answer). */
const until = (what: string, ok: () => boolean) => waitFor(() => (ok() ? true : undefined), what, 15_000);

describe('upstreams/stdio-transport: writes and what is read', () => {
  it('sends the messages of one turn in one write, which the child reads at once', async () => {
    const { transport, got } = start();
    await transport.start();
    const writes: string[] = [];
    const write = Socket.prototype.write;
    Socket.prototype.write = function (this: Socket, data: unknown, ...rest: unknown[]) {
      if (String(data).includes('batched/')) writes.push(String(data));
      return (write as (...a: unknown[]) => boolean).call(this, data, ...rest);
    } as typeof write;
    try {
      const sent = [1, 2, 3].map((n) => transport.send({ jsonrpc: '2.0', method: `batched/${n}` }));
      await Promise.all(sent);
    } finally {
      Socket.prototype.write = write;
    }
    assert.equal(writes.length, 1);
    await until('the echoes', () => got.some((g) => 'method' in g.message && g.message.method === 'read'));
    const reads = got.filter((g) => 'method' in g.message && g.message.method === 'read').map((g) => (g.message as unknown as { params: { lines: number } }).params.lines);
    assert.deepEqual(reads, [3]);
    assert.deepEqual(got.filter((g) => 'method' in g.message && g.message.method !== 'read').map((g) => (g.message as { method: string }).method), ['batched/1', 'batched/2', 'batched/3']);
    await transport.close();
  });

  it('tells the byte size of the line being delivered, and nothing outside onmessage', async () => {
    const { transport, got } = start();
    await transport.start();
    const message = { jsonrpc: '2.0' as const, method: 'sized', params: { text: 'naïve — ✓ 日本' } };
    await transport.send(message);
    await until('the echo', () => got.some((g) => 'method' in g.message && g.message.method === 'sized'));
    const echo = got.find((g) => 'method' in g.message && g.message.method === 'sized')!;
    assert.deepEqual(echo.message, message);
    assert.equal(echo.bytes, Buffer.byteLength(JSON.stringify(message)));
    assert.notEqual(echo.bytes, JSON.stringify(message).length);
    assert.equal(transport.messageBytes, undefined);
    await transport.close();
    await assert.rejects(transport.send(message), /not running/);
  });
});

describe('upstreams/stdio-transport: how the child ended', () => {
  const run = (code: string, env: Record<string, string> = {}) => new GroupStdioTransport({ program: process.execPath, args: ['-e', code], cwd: process.cwd(), env, maxLine: 1 << 20 });

  it('a child that exits on its own: its code and the end of its stderr, bounded, whole lines, env values redacted', async () => {
    const key = 'k3y-of-the-child-0123456789';
    const t = run(`process.stderr.write('x'.repeat(50000) + '\\nsecond \\u001b[31mred\\u001b[0m line\\nkey=' + process.env.KEY + ' short=' + process.env.SHORT + '\\n'); process.exit(4)`, { KEY: key, SHORT: 'abc' });
    let closed = false;
    t.onclose = () => void (closed = true);
    await t.start();
    await until('the child to end', () => closed);
    const exit = t.exit!;
    assert.equal(exit.code, 4);
    assert.equal(exit.signal, null);
    assert.ok(exit.stderr.length <= 1024, `${exit.stderr.length} characters`);
    assert.ok(exit.stderr.endsWith('second [31mred[0m line\nkey=[redacted] short=abc'), JSON.stringify(exit.stderr.slice(-80)));
    assert.ok(!exit.stderr.includes('\u001b'), 'no control characters');
    assert.ok(!exit.stderr.startsWith('x'.repeat(1025)) && !exit.stderr.includes(key));
  });

  it('a child close() killed tells no exit, and close() resolves once it is gone', async () => {
    const t = run(`process.stderr.write('started\\n'); setInterval(() => {}, 1000)`);
    await t.start();
    await t.close();
    assert.equal(t.exit, undefined);
    assert.throws(() => process.kill(t.pid!, 0), 'the child is gone');
  });
});

