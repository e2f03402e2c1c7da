#!/usr/bin/env node
// Prints a generated large manifest (bench/lib/gen-manifest.mjs) to stdout:
//   node bench/gen-manifest.mjs N [--same-schemas] [--json] > large.svc.yaml
// N template tools behind the static token ${SVC_TOKEN} and one scope; distinct input schemas
// unless --same-schemas; --json writes the same manifest as JSON (read without the YAML parser).
import { generateManifest } from './lib/gen-manifest.mjs';

const args = process.argv.slice(2);
const n = Number(args.find((a) => !a.startsWith('--')));
if (!Number.isInteger(n) || n < 1) {
  process.stderr.write('usage: node bench/gen-manifest.mjs N [--same-schemas] [--json] > file.yaml\n');
  process.exit(2);
}
process.stdout.write(generateManifest(n, { same: args.includes('--same-schemas'), json: args.includes('--json') }));
