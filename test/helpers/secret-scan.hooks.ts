// Mocha root hook (loaded by .mocharc.json `require`): after the whole run, scans every
// log line the servers under test wrote for any secret the tests registered
// (test/helpers/secrets.ts) and fails the run, naming the source and the masked line.

import { counts, leaks } from './secrets.js';

export const mochaHooks = {
  afterAll(): void {
    const found = leaks();
    if (found.length) {
      throw new Error(`secret scan: ${found.length} log line(s) contain a secret a test registered:\n${found.slice(0, 20).map((f) => `  [${f.source}] ${f.line}`).join('\n')}`);
    }
    if (process.env.SECRET_SCAN_VERBOSE) {
      const c = counts();
      process.stderr.write(`secret scan: ${c.secrets} secrets, ${c.chunks} output chunks, no leak\n`);
    }
  },
};
