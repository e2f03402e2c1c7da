// resolveConfig: the code API's SvcServerConfig checked against its own schema
// entry (definitions/SvcServerConfig), the schema's defaults filled in.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { resolveConfig } from '../../src/core/config.js';
import { ManifestError } from '../../src/errors.js';
import { InMemoryOAuthProvider } from '../../src/auth/oauth/providers/memory-provider.js';

const schema = JSON.parse(fs.readFileSync(new URL('../../schema/svc.schema.json', import.meta.url), 'utf8'));

describe('resolveConfig', () => {
  it("fills server, routes and profile with the schema's defaults", () => {
    const c = resolveConfig({});
    const settings = schema.definitions.ServerSettings.properties as Record<string, { default?: unknown }>;
    // A section's default ({} for cors) gets its own fields' defaults filled in too.
    for (const [k, p] of Object.entries(settings)) if ('default' in p && !isEmptyObject(p.default)) assert.deepEqual((c.server as unknown as Record<string, unknown>)[k], p.default, k);
    assert.deepEqual(c.server.cors, { origins: [], max_age: schema.definitions.CorsSettings.properties.max_age.default });
    assert.deepEqual(c.routes.protected, schema.definitions.Routes.properties.protected.default);
    assert.deepEqual(c.profile.scopes, []);
  });

  it('keeps what the schema cannot hold (oauth_provider) and where the config came from', () => {
    const provider = new InMemoryOAuthProvider();
    const c = resolveConfig({ oauth_provider: provider, base_dir: '/srv/x', manifest_path: '/srv/x/svc.yaml', config_hash: 'abc' });
    assert.equal(c.oauth_provider, provider);
    assert.deepEqual([c.base_dir, c.manifest_path, c.config_hash], ['/srv/x', '/srv/x/svc.yaml', 'abc']);
  });

  it('refuses what the schema refuses (SCHEMA_VIOLATION), a manifest-only field too', () => {
    for (const bad of [{ server: { port: -1 } }, { tools: [] }, { name: 'x' }]) {
      assert.throws(() => resolveConfig(bad as never), (e: unknown) => e instanceof ManifestError && e.problems.every((p) => p.code === 'SCHEMA_VIOLATION'), JSON.stringify(bad));
    }
  });
});

function isEmptyObject(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
}
