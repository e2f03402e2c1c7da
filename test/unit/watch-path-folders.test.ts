// pathFolders(): the folders the manifest watcher must watch so a symlink swap anywhere
// on the path is seen — the parent of every link met while resolving, and the file's
// real folder (or the deepest existing folder when something is missing).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathFolders } from '../../src/server/watch.js';

describe('pathFolders', () => {
  let dir: string;
  beforeEach(() => (dir = realpathSync(mkdtempSync(join(tmpdir(), 'fastsvc-pf-')))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a plain file: its folder only', () => {
    writeFileSync(join(dir, 'svc.yaml'), '');
    assert.deepEqual(pathFolders(join(dir, 'svc.yaml')), [dir]);
  });

  it('ConfigMap: svc.yaml -> ..data/svc.yaml, ..data -> ..v1', () => {
    mkdirSync(join(dir, '..v1'));
    writeFileSync(join(dir, '..v1', 'svc.yaml'), '');
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync('..data/svc.yaml', join(dir, 'svc.yaml'));
    assert.deepEqual(pathFolders(join(dir, 'svc.yaml')).sort(), [dir, join(dir, '..v1')].sort());
  });

  it('a linked ancestor, absolute and relative targets with ..', () => {
    mkdirSync(join(dir, 'a', 'wt'), { recursive: true });
    writeFileSync(join(dir, 'a', 'wt', 'svc.yaml'), '');
    mkdirSync(join(dir, 'b'));
    symlinkSync('../a/wt', join(dir, 'b', 'current'));
    symlinkSync(join(dir, 'b'), join(dir, 'top'));
    assert.deepEqual(pathFolders(join(dir, 'top', 'current', 'svc.yaml')).sort(), [dir, join(dir, 'b'), join(dir, 'a', 'wt')].sort());
  });

  it('a missing component: the deepest existing folder', () => {
    symlinkSync('gone', join(dir, 'current'));
    assert.deepEqual(pathFolders(join(dir, 'current', 'svc.yaml')), [dir]);
  });
});
