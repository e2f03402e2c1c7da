// The running server's copy of the pin lock (src/server/pin-lock-watch.ts), on a real folder:
// read at start (missing: nothing accepted; corrupt: LOCK_INVALID before serving), replaced when
// `upstreams accept` renames a new lock over it (onChange gets it), and kept when the new file
// is corrupt — the last good lock stays and onChange is not called.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { watchLock, type LockWatch } from '../../src/server/pin-lock-watch.js';
import { withUpstream, writeLock, type Lock } from '../../src/upstreams/lock-file.js';
import { lockEntryFor } from '../../src/upstreams/pin-listing.js';
import { throwsWithCode } from '../helpers/errors.js';
import { waitFor } from '../helpers/wait.js';

const lockWith = (...tools: string[]) => withUpstream(undefined, 'up', lockEntryFor({ tools: tools.map((name) => ({ name })) }).entry);
const toolsOf = (l: Lock | undefined) => Object.keys(l?.upstreams.up?.tools ?? {});

describe('pin lock watch', () => {
  let dir: string;
  let file: string;
  let w: LockWatch | undefined;
  let seen: Lock[];
  let logged: string[];
  const logger = pino({ level: 'info' }, { write: (l: string) => void logged.push(l) });
  const start = () => watchLock({ file, logger, onChange: (l) => void seen.push(l) });

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

  it('refuses to start on a corrupt lock', () => {
    writeFileSync(file, '{"version": 1, "upstreams": {"up": {"tools": {"x": {}}}}}');
    throwsWithCode(start, 'LOCK_INVALID');
  });

  it('starts with none, then takes the lock accept writes (rename over), and a second one', async () => {
    w = start();
    await w.ready;
    assert.equal(w.current(), undefined);
    writeLock(file, lockWith('echo'));
    await waitFor(() => (seen.length === 1 ? true : undefined), 'the first lock');
    assert.deepEqual(toolsOf(w.current()), ['echo']);
    writeLock(file, lockWith('echo', 'add'));
    await waitFor(() => (seen.length === 2 ? true : undefined), 'the second lock');
    assert.deepEqual(toolsOf(seen[1]), ['add', 'echo']);
    assert.ok(logged.some((l) => l.includes('"upstreams.lock_changed"')));
  });

  it('keeps the last good lock when the file turns corrupt, and says so; a good one written after it (deleted, then created anew) is taken', async () => {
    writeLock(file, lockWith('echo'));
    w = start();
    await w.ready;
    writeFileSync(file, '{ not json');
    await waitFor(() => (logged.some((l) => l.includes('"upstreams.lock_rejected"') && l.includes('LOCK_INVALID')) ? true : undefined), 'the rejection in the log');
    assert.deepEqual(toolsOf(w.current()), ['echo']);
    unlinkSync(file);
    writeLock(join(dir, 'other.lock.json'), lockWith('x')); // an event in the folder
    writeLock(file, lockWith('echo', 'add'));
    await waitFor(() => (seen.length === 1 ? true : undefined), 'the good lock after the bad one');
    assert.deepEqual(toolsOf(w.current()), ['add', 'echo']);
  });
});
