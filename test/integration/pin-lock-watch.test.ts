// The running server's view of the pin lock (src/server/pin-lock-watch.ts), on a real folder:
// from the bytes start-up read (none, or a lock), a lock `upstreams accept` renames over the old
// one reaches onChange, and so does a second; a corrupt file is logged (LOCK_INVALID) and does
// not reach onChange, a good one written after it does; start-up's own read of a corrupt lock
// is LOCK_INVALID (the server does not start).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { watchLock } from '../../src/server/pin-lock-watch.js';
import type { ManifestWatcher } from '../../src/server/watch.js';
import { readLockFile, withUpstream, writeLock, type Lock } from '../../src/upstreams/pin/lock-file.js';
import { lockEntryFor } from '../../src/upstreams/pin/pin-listing.js';
import { throwsWithCode } from '../helpers/errors.js';
import { waitFor } from '../helpers/wait.js';

const lockWith = (...tools: string[]) => withUpstream(undefined, 'up', lockEntryFor({ tools: tools.map((name) => ({ name })) }).entry);
const toolsOf = (l: Lock | undefined) => Object.keys(l?.upstreams.up?.tools ?? {});

describe('pin lock watch', () => {
  let dir: string;
  let file: string;
  let w: ManifestWatcher | undefined;
  let seen: Lock[];
  let logged: string[];
  const logger = pino({ level: 'info' }, { write: (l: string) => void logged.push(l) });
  const start = () => watchLock({ file, initialHash: readLockFile(file).hash, logger, onChange: (l) => void seen.push(l) });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lockwatch-'));
    file = join(dir, 'svc.lock.json');
    seen = [];
    logged = [];
  });
  afterEach(async () => {
    await w?.close();
    w = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('start-up\'s read of a corrupt lock is LOCK_INVALID', () => {
    writeFileSync(file, '{"version": 1, "upstreams": {"up": {"tools": {"x": {}}}}}');
    throwsWithCode(start, 'LOCK_INVALID');
  });

  it('from no file, takes the lock accept writes (rename over), then a second one', async () => {
    w = start();
    await w.ready;
    writeLock(file, lockWith('echo'));
    await waitFor(() => (seen.length === 1 ? true : undefined), 'the first lock');
    assert.deepEqual(toolsOf(seen[0]), ['echo']);
    writeLock(file, lockWith('echo', 'add'));
    await waitFor(() => (seen.length === 2 ? true : undefined), 'the second lock');
    assert.deepEqual(toolsOf(seen[1]), ['add', 'echo']);
    assert.ok(logged.some((l) => l.includes('"upstreams.lock_changed"')));
  });

  it('the bytes start-up read are not news; a corrupt file is logged and not passed on; a good one after it is', async () => {
    writeLock(file, lockWith('echo'));
    w = start();
    await w.ready;
    writeFileSync(file, '{ not json');
    await waitFor(() => (logged.some((l) => l.includes('"upstreams.lock_rejected"') && l.includes('LOCK_INVALID')) ? true : undefined), 'the rejection in the log');
    assert.deepEqual(seen, [], 'neither the lock read at start nor the corrupt one reached onChange');
    unlinkSync(file);
    writeLock(file, lockWith('echo', 'add'));
    await waitFor(() => (seen.length === 1 ? true : undefined), 'the good lock after the bad one');
    assert.deepEqual(toolsOf(seen[0]), ['add', 'echo']);
  });
});
