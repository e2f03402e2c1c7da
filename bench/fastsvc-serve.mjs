// `svc serve MANIFEST --no-watch` for the OAuth benchmark servers, through the code API so that the per-IP rate
// limits of /token and /register (120/min and 10/min by default) can be raised: the token-endpoint scenarios
// measure the provider, not the limiter. Everything else is what the CLI does: loadManifest → serve on HOST/PORT
// (127.0.0.1:0 from the harness), stdout carries only `listening on URL`, SIGTERM/SIGINT drain and exit 0.
// FASTSVC_CLI (as in scenarios.mjs) picks the build: its folder is where dist modules are loaded from.
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/fastsvc-serve.mjs MANIFEST\n');
  process.exit(2);
}
const dist = pathToFileURL(resolve(dirname(process.env.FASTSVC_CLI ?? 'dist/cli.js'))).href;
const { loadManifest } = await import(`${dist}/manifest/index.js`);
const { serve } = await import(`${dist}/http/serve.js`);

const UNLIMITED = { burst: 1e9, perMinute: 1e9 };
let loaded;
try {
  loaded = await loadManifest(file);
} catch (e) {
  for (const p of e.problems ?? []) process.stderr.write(`${p.format()}\n`);
  throw e;
}
const served = await serve(loaded.svc, { ...loaded.config, oauth_rate_limits: { token: UNLIMITED, register: UNLIMITED } }, {
  host: process.env.HOST || '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
});
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await served.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.stdout.write(`listening on ${served.url}\n`);
