// cimd.ts on its own: which addresses count as non-public, what is refused before any
// connection (http, IP literals that are not public, hosts outside allowed_hosts), and a
// ca_file that cannot be read being a configuration error.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createCimd, cimdHost, isSpecialUse } from '../../src/auth/oauth/cimd.js';
import { SvcError } from '../../src/errors.js';

const silent = pino({ level: 'silent' });

describe('client id metadata documents: the fetch rules', () => {
  it('classifies loopback, private, link-local, mapped and documentation addresses as non-public', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
      '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '2001:db8::1', 'not-an-ip']) assert.ok(isSpecialUse(a), a);
    for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1']) assert.ok(!isSpecialUse(a), a);
  });

  it('refuses http and non-public IP literals without connecting; allow_private_addresses lifts only the latter', async () => {
    const strict = createCimd({}, process.cwd(), silent);
    await assert.rejects(strict.fetch('http://apps.example/c.json'), /not an https URL/);
    await assert.rejects(strict.fetch('https://127.0.0.1:9/c.json'), /127\.0\.0\.1 is a non-public address/);
    await assert.rejects(strict.fetch('https://[::1]:9/c.json'), /::1 is a non-public address/);
    const dev = createCimd({ allow_private_addresses: true }, process.cwd(), silent);
    await assert.rejects(dev.fetch('https://127.0.0.1:9/c.json'), /ECONNREFUSED/);
  });

  it('allowed_hosts: exact host names, case-insensitive; empty allows any; enabled defaults to true', () => {
    const any = createCimd(undefined, process.cwd(), silent);
    assert.equal(any.enabled, true);
    assert.equal(any.allowFetch('https://whatever.example/c.json'), true);
    const listed = createCimd({ allowed_hosts: ['Apps.Example'] }, process.cwd(), silent);
    assert.equal(listed.allowFetch('https://apps.example/c.json'), true);
    assert.equal(listed.allowFetch('https://evil.apps.example/c.json'), false);
    assert.equal(createCimd({ enabled: false }, process.cwd(), silent).enabled, false);
  });

  it('a ca_file that cannot be read is OAUTH_CONFIG', () => {
    assert.throws(() => createCimd({ ca_file: 'no-such-ca.pem' }, process.cwd(), silent), (e: unknown) => e instanceof SvcError && e.code === 'OAUTH_CONFIG');
  });

  it('cimdHost: the publishing host of an https client id, nothing for others', () => {
    assert.equal(cimdHost('https://apps.example:8443/c.json'), 'apps.example:8443');
    assert.equal(cimdHost('cli'), undefined);
    assert.equal(cimdHost('http://apps.example/c.json'), undefined);
  });
});
