// hostRefusal: the DNS-rebinding decision shared by every HTTP route and the /ws handshake.

import assert from 'node:assert/strict';
import { hostRefusal } from '../../../src/http/host-check.js';

const refused = (r: ReturnType<ReturnType<typeof hostRefusal>>) => r?.code;

describe('hostRefusal (DNS-rebinding protection)', () => {
  it('on a loopback bind accepts only loopback Host names, any port', () => {
    const check = hostRefusal({ bindHost: '127.0.0.1', allowedHosts: [], allowedOrigins: [] });
    for (const host of ['127.0.0.1:8080', 'localhost:1', '[::1]:3000', 'LOCALHOST', '127.0.0.2']) assert.equal(refused(check(host, undefined)), undefined, host);
    for (const host of ['evil.example.com', 'evil.example.com:8080', '10.0.0.1', undefined]) assert.equal(refused(check(host, undefined)), 'FORBIDDEN_ORIGIN', String(host));
  });

  it('accepts same-origin and loopback Origins, refuses others and "null"', () => {
    const check = hostRefusal({ bindHost: '127.0.0.1', allowedHosts: [], allowedOrigins: [] });
    assert.equal(refused(check('127.0.0.1:8080', 'http://127.0.0.1:8080')), undefined);
    assert.equal(refused(check('127.0.0.1:8080', 'http://localhost:5173')), undefined);
    assert.equal(refused(check('127.0.0.1:8080', 'http://evil.example.com')), 'FORBIDDEN_ORIGIN');
    assert.equal(refused(check('127.0.0.1:8080', 'null')), 'FORBIDDEN_ORIGIN');
    assert.equal(refused(check('127.0.0.1:8080', 'not a url')), 'FORBIDDEN_ORIGIN');
  });

  it('accepts Origin "null" only where the route guards itself with a CSRF token; foreign Origins and Hosts stay refused there', () => {
    const check = hostRefusal({ bindHost: '0.0.0.0', allowedHosts: ['svc.example.com'], allowedOrigins: ['https://svc.example.com'] });
    assert.equal(refused(check('svc.example.com', 'null', true)), undefined);
    assert.equal(check('svc.example.com', 'null', false)?.data?.reason, 'origin_null');
    assert.equal(check('svc.example.com', 'https://evil.example.com', true)?.data?.reason, 'origin_not_allowed');
    assert.equal(check('evil.example.com', 'null', true)?.data?.reason, 'host_not_allowed');
  });

  it('lets server.allowed_hosts and allowed_origins replace the defaults', () => {
    const check = hostRefusal({ bindHost: '127.0.0.1', allowedHosts: ['mcp.example.com', 'api.example.com:8443'], allowedOrigins: ['https://app.example.com/'] });
    assert.equal(refused(check('mcp.example.com:9000', undefined)), undefined);
    assert.equal(refused(check('api.example.com:8443', undefined)), undefined);
    assert.equal(refused(check('api.example.com:1', undefined)), 'FORBIDDEN_ORIGIN');
    assert.equal(refused(check('127.0.0.1:8080', undefined)), 'FORBIDDEN_ORIGIN');
    assert.equal(refused(check('mcp.example.com', 'https://app.example.com')), undefined);
    assert.equal(refused(check('mcp.example.com', 'http://localhost:5173')), 'FORBIDDEN_ORIGIN');
  });

  it('accepts any Host when bound to a non-loopback address', () => {
    const check = hostRefusal({ bindHost: '0.0.0.0', allowedHosts: [], allowedOrigins: [] });
    assert.equal(refused(check('mcp.example.com', undefined)), undefined);
    assert.equal(refused(check('mcp.example.com', 'https://mcp.example.com')), undefined);
    assert.equal(refused(check('mcp.example.com', 'https://evil.example.com')), 'FORBIDDEN_ORIGIN');
  });

  it('accepts server.cors origins as well, without switching the loopback defaults off', () => {
    const check = hostRefusal({ bindHost: '127.0.0.1', allowedHosts: [], allowedOrigins: [], corsOrigins: ['https://app.example.com'] });
    assert.equal(refused(check('127.0.0.1:8080', 'https://app.example.com')), undefined);
    assert.equal(refused(check('127.0.0.1:8080', 'https://APP.example.com')), undefined);
    assert.equal(refused(check('127.0.0.1:8080', 'http://localhost:5173')), undefined);
    assert.equal(refused(check('127.0.0.1:8080', 'https://other.example.com')), 'FORBIDDEN_ORIGIN');
    assert.equal(refused(check('evil.example.com', 'https://app.example.com')), 'FORBIDDEN_ORIGIN');
  });
});
