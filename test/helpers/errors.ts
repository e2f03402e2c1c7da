// Assert that a call fails with a given SvcError code (never message text);
// returns the error so a test can look at its data.

import assert from 'node:assert/strict';
import { SvcError, type ErrorCode } from '../../src/errors.js';

export async function rejectsWithCode(run: Promise<unknown> | (() => unknown), code: ErrorCode): Promise<SvcError> {
  let caught: unknown;
  try {
    await (typeof run === 'function' ? run() : run);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof SvcError, `expected SvcError ${code}, got ${caught === undefined ? 'success' : String(caught)}`);
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}

export function throwsWithCode(run: () => unknown, code: ErrorCode): SvcError {
  let caught: unknown;
  try {
    run();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof SvcError, `expected SvcError ${code}, got ${caught === undefined ? 'success' : String(caught)}`);
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}
