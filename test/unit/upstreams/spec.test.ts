// resolveUpstream(): a stdio upstream's program is found where its env says (or fastsvc's PATH), and a
// program not found is UPSTREAM_CONFIG at command/0 with a message naming where it was looked for and what to do.
import assert from 'node:assert/strict';
import { resolveUpstream, type UpstreamSpec } from '../../../src/upstreams/spec.js';
import { SvcError } from '../../../src/errors.js';

const spec = (command: string[], env?: Record<string, string>) => ({ name: 'up', command, cwd: '.', ...(env && { env }) }) as unknown as UpstreamSpec;

describe('resolveUpstream', () => {
  it('finds a bare program on the PATH its env gives, and makes it absolute', () => {
    assert.equal(resolveUpstream(spec(['sh', '-c', 'true'], { PATH: '/usr/bin:/bin' }), process.cwd()).command![0], '/usr/bin/sh');
  });

  it('names where a bare program was looked for, and what to do', () => {
    for (const [env, where] of [[{ PATH: '/nonexistent' }, 'the PATH its env gives'], [undefined, "fastsvc's own PATH (its env gives none)"]] as const) {
      assert.throws(() => resolveUpstream(spec(['no-such-program-x'], env), process.cwd()), (e: unknown) => {
        assert.ok(e instanceof SvcError);
        assert.equal(e.code, 'UPSTREAM_CONFIG');
        assert.equal(e.path, 'command/0');
        assert.equal(e.message, `upstream up: program "no-such-program-x" not found or not executable on ${where}; name the file by its path (relative to the manifest) or add its folder to env.PATH`);
        return true;
      });
    }
  });
});
