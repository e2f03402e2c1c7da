// upstreams/why-failed.ts: what a failed attempt says. A fetch that failed below HTTP names the system error
// and address under it (through `cause` and the SDK's `data.cause`), a message that already says it is left
// as it is; a stdio child's exit is named by code or signal, with its stderr's last line (cut at 200 characters).
import assert from 'node:assert/strict';
import { ChildExited, describe as why } from '../../../src/upstreams/why-failed.js';

describe('upstreams/why-failed', () => {
  it('a failed fetch names the system error and address below it', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:59999'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 59999 });
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    assert.equal(why(fetchFailed), 'fetch failed (ECONNREFUSED 127.0.0.1:59999)');
    const sdk = Object.assign(new Error('Version negotiation probe failed: fetch failed'), { data: { cause: fetchFailed } });
    assert.equal(why(sdk), 'Version negotiation probe failed: fetch failed (ECONNREFUSED 127.0.0.1:59999)');
    assert.equal(why(new TypeError('fetch failed', { cause: new Error('bad port') })), 'fetch failed (bad port)');
    assert.equal(why(new Error('plain')), 'plain');
    assert.equal(why(new Error('x: ECONNRESET', { cause: Object.assign(new Error('y'), { code: 'ECONNRESET' }) })), 'x: ECONNRESET');
  });

  it('a child\'s exit: its code or signal, and the last line of its stderr', () => {
    assert.equal(new ChildExited({ code: 3, signal: null, stderr: 'one\ntwo: why\n' }, 'before it was connected').message, 'the upstream process exited with code 3 before it was connected; its stderr ends: two: why');
    assert.equal(new ChildExited({ code: null, signal: 'SIGSEGV', stderr: '' }, 'while connected').message, 'the upstream process exited on signal SIGSEGV while connected; it wrote nothing on stderr');
    assert.match(new ChildExited({ code: 1, signal: null, stderr: 'z'.repeat(500) }, 'x').message, /: z{200}…$/);
  });
});
