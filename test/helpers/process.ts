// Whether a process still exists, for the tests that assert a cancelled or timed-out
// backend's process is gone: kill(pid, 0) succeeds while it exists and fails with ESRCH
// once it does not (any other error fails the test).
import assert from 'node:assert/strict';

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    assert.equal((e as NodeJS.ErrnoException).code, 'ESRCH');
    return false;
  }
}
