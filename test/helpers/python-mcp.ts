// pythonMcp(): a Python with the official MCP SDK (the `mcp` package: its ClientSession), for tests that drive
// fastsvc with a client this project did not write in another language. Guarantees: one virtual environment,
// fastsvc-python-mcp in the system's temporary folder, made by `python3 -m venv` and filled by pip from the indexes pip is
// configured with (--retries 0: an index that cannot be reached is passed over at once, not retried), once per
// machine — later calls find it (a marker file written only after pip succeeded); it resolves to the venv's python,
// and rejects with pip's output when it cannot be made.

import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const VENV = join(tmpdir(), 'fastsvc-python-mcp');
const READY = join(VENV, '.installed');

let made: Promise<string> | undefined;

export function pythonMcp(): Promise<string> {
  return (made ??= make());
}

async function make(): Promise<string> {
  const python = join(VENV, 'bin', 'python');
  if (existsSync(READY)) return python;
  console.log('test/helpers/python-mcp: making a Python venv with the MCP SDK (once per machine)');
  await run('python3', ['-m', 'venv', VENV]);
  await run(join(VENV, 'bin', 'pip'), ['install', '--quiet', '--retries', '0', '--timeout', '5', 'mcp'], { maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
  writeFileSync(READY, '');
  return python;
}
