// @modelcontextprotocol/inspector-cli (the MCP Inspector's CLI mode) calling a tool on /mcp with
// a bearer header, as a user would from a shell.
//
// inspector-cli 1.0.3 finds its own package.json with existsSync('../package.json') — relative to
// the working directory — but imports it relative to its module, so it runs from its build folder.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { startMcpApp, type McpApp } from '../helpers/mcp-app.js';

const CLI = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli');

function inspector(url: string, token: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = [CLI, '--cli', `${url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { cwd: dirname(CLI), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('MCP Inspector CLI', () => {
  let app: McpApp;
  before(async () => {
    app = await startMcpApp();
  });
  after(() => app.close());

  it('calls a tool with --tool-arg through a bearer header', async () => {
    const r = await inspector(app.url, app.tokens.reader, '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hello inspector');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { content: [{ type: 'text', text: 'hello inspector' }] });
  });

  it('fails with a wrong token or without the scope', async () => {
    const bad = await inspector(app.url, 'wrong-token', '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=x');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /UNAUTHENTICATED/);
    const denied = await inspector(app.url, app.tokens.reader, '--method', 'tools/call', '--tool-name', 'notes.write');
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /INSUFFICIENT_SCOPE/);
  });
});
