// resolveUpstream(): a stdio upstream's program is found where its env says (or fastsvc's PATH), and a
// program not found is UPSTREAM_CONFIG at command/0 with a message naming where it was looked for and what to do;
// its cwd follows the exec backend's rule (absolute: anywhere; relative: under the manifest folder), and the
// PATH its env gives the child keeps only absolute entries.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveUpstream, type UpstreamSpec } from '../../../src/upstreams/spec.js';
import { SvcError } from '../../../src/errors.js';

const spec = (command: string[], env?: Record<string, string>, cwd = '.') => ({ name: 'up', command, cwd, ...(env && { env }) }) as unknown as UpstreamSpec;

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

  describe('cwd and PATH', () => {
    let base: string;
    let manifestDir: string;
    let project: string;
    before(() => {
      base = realpathSync(mkdtempSync(join(tmpdir(), 'fastsvc-upstream-spec-')));
      manifestDir = join(base, 'manifest');
      project = join(base, 'project');
      mkdirSync(manifestDir);
      mkdirSync(project);
    });
    after(() => rmSync(base, { recursive: true, force: true }));

    it('takes an absolute cwd outside the manifest folder (cwd: ${PROJECT_DIR})', () => {
      assert.equal(resolveUpstream(spec(['sh'], { PATH: '/usr/bin:/bin' }, project), manifestDir).cwd, project);
    });

    it('refuses a relative cwd that climbs out of the manifest folder, at cwd', () => {
      assert.throws(() => resolveUpstream(spec(['sh'], { PATH: '/usr/bin:/bin' }, '../project'), manifestDir), (e: unknown) => {
        assert.ok(e instanceof SvcError);
        assert.equal(e.code, 'UPSTREAM_CONFIG');
        assert.equal(e.path, 'cwd');
        return true;
      });
    });

    it('gives the child only the absolute entries of the PATH its env names', () => {
      assert.equal(resolveUpstream(spec(['sh'], { PATH: '.:/usr/bin::bin:/bin', HOME: '/h' }, project), manifestDir).env?.PATH, '/usr/bin:/bin');
    });
  });
});
