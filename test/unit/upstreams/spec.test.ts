// resolveUpstream(): a stdio upstream's program is found where its env says (or fastsvc's PATH), and a
// program not found is UPSTREAM_CONFIG at command/0 with a message naming where it was looked for and what to do;
// an interpreter's script that is not in the child's folder (`node ./missing.js`, `python3 missing.py`) is
// UPSTREAM_CONFIG at the script's own argument, and what cannot be told a path (a module, an option's value,
// code given inline) is left alone; its cwd follows the exec backend's rule (absolute: anywhere; relative:
// under the manifest folder), and the PATH its env gives the child keeps only absolute entries.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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

  describe('an interpreter\'s script', () => {
    let dir = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'upstream-spec-'));
      mkdirSync(join(dir, 'srv'));
      writeFileSync(join(dir, 'srv', 'server.js'), '');
      writeFileSync(join(dir, 'srv', 'server.py'), '');
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    const at = (command: string[], cwd = '.') => ({ name: 'up', command, cwd, env: { PATH: process.env.PATH! } }) as unknown as UpstreamSpec;

    it('missing from the child\'s folder is UPSTREAM_CONFIG at its argument', () => {
      for (const [command, cwd, field] of [
        [['node', './missing.js'], '.', 'command/1'],
        [['python3', 'missing.py'], '.', 'command/1'],
        [['node', '--enable-source-maps', 'server.js'], '.', 'command/2'], // server.js is in srv/, not the manifest's folder
        [['python3', '-u', 'server.py'], '.', 'command/2'],
        [['node', 'srv/missing.mjs'], '.', 'command/1'],
        [['python3', './srv/server.py'], 'srv', 'command/1'], // relative to the child's folder, srv/
      ] as const) {
        assert.throws(() => resolveUpstream(at([...command], cwd), dir), (e: unknown) => {
          assert.ok(e instanceof SvcError, String(e));
          assert.equal(e.code, 'UPSTREAM_CONFIG', `${command.join(' ')}`);
          assert.equal(e.path, field, `${command.join(' ')}`);
          assert.match(e.message, /not found/);
          return true;
        }, `${command.join(' ')} in ${cwd}`);
      }
    });

    it('found in the child\'s folder, or not something fastsvc can tell is a path, is left alone', () => {
      for (const [command, cwd] of [
        [['node', 'server.js'], 'srv'],
        [['node', './srv/server.js'], '.'],
        [['python3', 'server.py'], 'srv'],
        [['python3', '-m', 'missing_module'], '.'],
        [['python3', '-c', 'print(1)'], '.'],
        [['node', '-e', 'require("./missing.js")'], '.'],
        [['node', '--import', 'missing.js', 'srv/server.js'], '.'],
        [['node', 'missing'], '.'], // node would try missing.js, missing/index.js…: not a path fastsvc can tell
        [['node', 'srv'], '.'], // a folder node runs the index of
        [['python3', 'srv/server.py', '--port', 'missing.py'], '.'], // the script's own arguments are its own
        [['sh', '-c', 'node missing.js'], '.'],
      ] as const) {
        assert.doesNotThrow(() => resolveUpstream(at([...command], cwd), dir), `${command.join(' ')} in ${cwd}`);
      }
    });
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
