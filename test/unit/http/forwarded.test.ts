// callerResolver / trustFunction: who is calling through server.trust_proxy, without sockets
// (a request is a plain object with the fields the resolver reads).

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { callerResolver, forwardedBase } from '../../../src/http/forwarded.js';
import { trustFunction } from '../../../src/util/proxy-trust.js';
import { throwsWithCode } from '../../helpers/errors.js';

const req = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, headers }) as unknown as IncomingMessage;
const spoof = { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example.com' };

describe('callerResolver (server.trust_proxy)', () => {
  it('0 never reads X-Forwarded-*: the socket peer, no proto, no host', () => {
    const c = callerResolver(0)(req('::ffff:10.1.2.3', spoof));
    assert.deepEqual(c, { ip: '10.1.2.3', viaProxy: false });
    assert.equal(forwardedBase(c, 'svc:8080'), undefined);
  });

  it('N hops: the N-th address from the right is the client; a prefix a client sent is skipped', () => {
    const one = callerResolver(1);
    assert.equal(one(req('10.0.0.5', { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' })).ip, '203.0.113.7');
    assert.equal(callerResolver(2)(req('10.0.0.5', { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' })).ip, '198.51.100.1');
    assert.equal(one(req('10.0.0.5')).ip, '10.0.0.5');
    assert.equal(one(req('10.0.0.5', { 'x-forwarded-for': '[2001:db8::1]:443' })).ip, '2001:db8::1');
  });

  it('a list: hops are walked while their address is trusted', () => {
    const r = callerResolver(['10.0.0.0/8', '192.0.2.1']);
    assert.equal(r(req('10.0.0.5', { 'x-forwarded-for': '203.0.113.7, 192.0.2.1, 10.9.9.9' })).ip, '203.0.113.7');
    // An untrusted peer: its X-Forwarded-* are ignored entirely.
    const outside = r(req('198.51.100.3', spoof));
    assert.deepEqual(outside, { ip: '198.51.100.3', viaProxy: false });
    assert.equal(callerResolver(['loopback'])(req('::1', { 'x-forwarded-for': '203.0.113.7' })).ip, '203.0.113.7');
    assert.equal(callerResolver(['private'])(req('fd00::2', { 'x-forwarded-for': '203.0.113.7' })).ip, '203.0.113.7');
  });

  it('proto and host come from the outermost trusted proxy and must look like a scheme and a host', () => {
    const c = callerResolver(1)(req('10.0.0.5', { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'http, https', 'x-forwarded-host': 'evil.example.com, svc.example.com' }));
    assert.equal(c.proto, 'https');
    assert.equal(c.host, 'svc.example.com');
    assert.equal(forwardedBase(c, 'internal:8080'), 'https://svc.example.com');
    const two = callerResolver(2)(req('10.0.0.5', { 'x-forwarded-for': '203.0.113.7, 10.0.0.4', 'x-forwarded-proto': 'https, http' }));
    assert.equal(two.proto, 'https');
    assert.equal(forwardedBase(two, 'internal:8080'), 'https://internal:8080');
    const junk = callerResolver(1)(req('10.0.0.5', { 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'a b/c' }));
    assert.equal(junk.proto, undefined);
    assert.equal(junk.host, undefined);
    assert.equal(forwardedBase(junk, 'internal:8080'), undefined);
  });

  it('refuses a trust list entry that is not an address, a CIDR or a known name (SCHEMA_VIOLATION)', () => {
    for (const bad of [['10.0.0.0/33'], ['fe80::/129'], ['not-an-ip'], ['300.1.1.1']]) throwsWithCode(() => trustFunction(bad), 'SCHEMA_VIOLATION');
    assert.equal(trustFunction(['10.0.0.0/8'])('10.200.0.1', 5), true);
    assert.equal(trustFunction(3)('203.0.113.1', 2), true);
    assert.equal(trustFunction(3)('203.0.113.1', 3), false);
  });
});
