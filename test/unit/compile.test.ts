// The manifest pipeline up to the Plan (load → validate → compile), file by file.
// Each fixture under test/fixtures/invalid holds one mistake; the test asserts
// the problem's code and the line:col of the offending node — never the wording.
// Environment is passed explicitly ({}), so ${NOPE} is unset whatever the shell has.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkManifest } from '../../src/manifest/index.js';
import type { ErrorCode } from '../../src/errors.js';

const INVALID = fileURLToPath(new URL('../fixtures/invalid/', import.meta.url));
const VALID = fileURLToPath(new URL('../fixtures/valid/', import.meta.url));

type Expect = { code: ErrorCode; line?: number; col?: number };

/** fixture → every problem it must produce (order-insensitive, nothing more). */
const CASES: Record<string, { why: string; problems: Expect[] }> = {
  'yaml-syntax.yaml': { why: 'YAML syntax error (an unquoted colon)', problems: [{ code: 'YAML_SYNTAX', line: 6, col: 18 }] },
  'yaml-duplicate-key.yaml': { why: 'a YAML key given twice', problems: [{ code: 'DUPLICATE_NAME', line: 4, col: 1 }] },
  'schema-unknown-field.yaml': { why: 'unknown field (points at the key)', problems: [{ code: 'SCHEMA_VIOLATION', line: 7, col: 5 }] },
  'schema-wrong-type.yaml': { why: 'wrong type', problems: [{ code: 'SCHEMA_VIOLATION', line: 5, col: 9 }] },
  'schema-missing-required.yaml': { why: 'missing required field', problems: [{ code: 'SCHEMA_VIOLATION', line: 8, col: 5 }] },
  'env-unset.yaml': { why: '${NOPE} with NOPE unset', problems: [{ code: 'ENV_UNSET', line: 3, col: 14 }] },
  'duplicate-tool.yaml': { why: 'two tools with one name', problems: [{ code: 'DUPLICATE_NAME', line: 11, col: 5 }] },
  'duplicate-prompt.yaml': { why: 'two prompts with one name', problems: [{ code: 'DUPLICATE_NAME', line: 7, col: 5 }] },
  'duplicate-resource.yaml': { why: 'two resources with one uri', problems: [{ code: 'DUPLICATE_NAME', line: 8, col: 5 }] },
  'duplicate-token-name.yaml': { why: 'two auth.tokens with one name', problems: [{ code: 'DUPLICATE_NAME', line: 7, col: 7 }] },
  'scope-undeclared-tool.yaml': { why: 'tool scope not in profile.scopes', problems: [{ code: 'SCOPE_UNDECLARED', line: 8, col: 35 }] },
  'scope-undeclared-resource.yaml': { why: 'resource scope not in profile.scopes', problems: [{ code: 'SCOPE_UNDECLARED', line: 12, col: 9 }] },
  'scope-undeclared-prompt.yaml': { why: 'prompt scope not in profile.scopes', problems: [{ code: 'SCOPE_UNDECLARED', line: 7, col: 35 }] },
  'scope-undeclared-auth.yaml': { why: 'auth.scopes entry not in profile.scopes', problems: [{ code: 'SCOPE_UNDECLARED', line: 6, col: 19 }] },
  'scope-undeclared-token.yaml': { why: 'a named token scope not in profile.scopes', problems: [{ code: 'SCOPE_UNDECLARED', line: 11, col: 23 }] },
  'external-issuers.yaml': {
    why: 'external_issuers: http issuer off loopback, http jwks_uri, an undeclared scope in scope_map and in scopes, both introspection secrets, an issuer listed twice',
    problems: [
      { code: 'EXTERNAL_ISSUER_CONFIG', line: 6, col: 13 }, { code: 'EXTERNAL_ISSUER_CONFIG', line: 10, col: 15 }, { code: 'SCOPE_UNDECLARED', line: 12, col: 33 },
      { code: 'EXTERNAL_ISSUER_CONFIG', line: 16, col: 27 }, { code: 'EXTERNAL_ISSUER_CONFIG', line: 17, col: 13 }, { code: 'SCOPE_UNDECLARED', line: 19, col: 26 },
    ],
  },
  'outbound-auth.yaml': {
    why: 'http.auth: secrets written in clear (bare and quoted), a client secret given twice, an http token_url off loopback, a token_exchange naming no backend, without external_issuers, on a tool that may run as a task, an upstream_login of a provider nobody configured',
    problems: [
      { code: 'SECRET_LITERAL', line: 11, col: 33 }, { code: 'OUTBOUND_AUTH_CONFIG', line: 18, col: 22 }, { code: 'OUTBOUND_AUTH_CONFIG', line: 21, col: 31 },
      { code: 'OUTBOUND_AUTH_CONFIG', line: 29, col: 11 }, { code: 'OUTBOUND_AUTH_CONFIG', line: 29, col: 11 }, { code: 'OUTBOUND_AUTH_CONFIG', line: 29, col: 11 },
      { code: 'OUTBOUND_AUTH_CONFIG', line: 36, col: 43 },
      { code: 'SECRET_LITERAL', line: 44, col: 18 },
    ],
  },
  'upstream-auth.yaml': {
    why: 'upstream credentials: auth on a command upstream, token_exchange as the connection\'s auth, expose.auth per caller without an auth for the connection and with an override that may run as a task, an override\'s bearer in clear, a header headers also sets',
    problems: [
      { code: 'UPSTREAM_CONFIG', line: 11, col: 11 }, { code: 'UPSTREAM_CONFIG', line: 15, col: 23 }, { code: 'UPSTREAM_CONFIG', line: 20, col: 9 },
      { code: 'OUTBOUND_AUTH_CONFIG', line: 20, col: 25 }, { code: 'SECRET_LITERAL', line: 23, col: 42 }, { code: 'UPSTREAM_CONFIG', line: 27, col: 11 },
    ],
  },
  'input-schema-bad-type.yaml': { why: 'input_schema with type: objekt', problems: [{ code: 'INPUT_SCHEMA_INVALID', line: 8, col: 7 }] },
  'input-schema-unknown-keyword.yaml': { why: 'input_schema with an unknown keyword', problems: [{ code: 'INPUT_SCHEMA_INVALID', line: 8, col: 7 }] },
  'tenant-scope-unsafe.yaml': {
    why: 'tenant-bound scopes: placeholder argument without a safe pattern, optional, with a loose pattern; a pattern matching no declared scope; bind of an unknown argument',
    problems: [
      { code: 'SCOPE_ARG_UNSAFE', line: 10, col: 23 }, { code: 'SCOPE_ARG_UNSAFE', line: 15, col: 23 }, { code: 'SCOPE_ARG_UNSAFE', line: 20, col: 23 },
      { code: 'SCOPE_UNDECLARED', line: 25, col: 23 }, { code: 'SCOPE_ARG_UNSAFE', line: 30, col: 21 },
    ],
  },
  'template-arg-unknown.yaml': { why: 'template names an undefined argument', problems: [{ code: 'TEMPLATE_ARG_UNKNOWN', line: 11, col: 15 }] },
  'template-arg-unknown-http.yaml': { why: 'http url names an undefined argument', problems: [{ code: 'TEMPLATE_ARG_UNKNOWN', line: 13, col: 12 }] },
  'template-arg-unknown-exec.yaml': { why: 'exec argv names an undefined argument', problems: [{ code: 'TEMPLATE_ARG_UNKNOWN', line: 15, col: 11 }] },
  'template-arg-unknown-prompt.yaml': { why: 'prompt message names an undeclared argument', problems: [{ code: 'TEMPLATE_ARG_UNKNOWN', line: 12, col: 15 }] },
  'template-arg-unknown-sqlite.yaml': { why: 'sqlite :param not in input_schema', problems: [{ code: 'TEMPLATE_ARG_UNKNOWN', line: 13, col: 14 }] },
  'backend-config-sqlite-positional.yaml': { why: 'sqlite positional ? parameter (arguments bind by name only)', problems: [{ code: 'BACKEND_CONFIG', line: 13, col: 14 }] },
  'route-both-lists.yaml': { why: 'route both public and protected', problems: [{ code: 'ROUTE_CONFLICT', line: 5, col: 25 }] },
  'route-unknown.yaml': { why: 'unknown route', problems: [{ code: 'ROUTE_CONFLICT', line: 6, col: 21 }] },
  'auth-missing.yaml': { why: 'protected routes without auth', problems: [{ code: 'AUTH_MISSING', line: 5, col: 14 }] },
  'backend-two.yaml': { why: 'a tool with two backends', problems: [{ code: 'BACKEND_CONFIG', line: 8, col: 5 }] },
  'backend-none.yaml': { why: 'a tool with no backend', problems: [{ code: 'BACKEND_CONFIG', line: 5, col: 5 }] },
  'backend-argv0-templated.yaml': { why: 'exec argv[0] templated', problems: [{ code: 'BACKEND_CONFIG', line: 12, col: 14 }] },
  'prompt-messages-and-module.yaml': { why: 'a prompt with both messages and module, and one with neither', problems: [{ code: 'BACKEND_CONFIG', line: 5, col: 5 }, { code: 'BACKEND_CONFIG', line: 8, col: 5 }] },
  'request-state-key-short.yaml': { why: 'server.request_state_key shorter than 32 characters', problems: [{ code: 'SCHEMA_VIOLATION', line: 4, col: 22 }] },
  'request-state-key-and-file.yaml': { why: 'server.request_state_key and request_state_key_file both given', problems: [{ code: 'SCHEMA_VIOLATION', line: 5, col: 27 }] },
  'oauth-auto-non-loopback.yaml': { why: 'auto login with a non-loopback issuer', problems: [{ code: 'OAUTH_CONFIG', line: 8, col: 11 }] },
  'oauth-enterprise-issuers.yaml': {
    why: 'enterprise issuers: plain-http jwks_uri off loopback, an undeclared client and scope, one issuer twice, with neither jwks nor jwks_uri (the checks start-up makes)',
    problems: [
      { code: 'OAUTH_CONFIG', line: 10, col: 17 },
      { code: 'OAUTH_CONFIG', line: 11, col: 24 },
      { code: 'SCOPE_UNDECLARED', line: 12, col: 15 },
      { code: 'OAUTH_CONFIG', line: 13, col: 7 },
      { code: 'OAUTH_CONFIG', line: 13, col: 7 },
    ],
  },
  'oauth-upstreams.yaml': {
    why: 'upstream login: issuer and an endpoint both, an OIDC provider not asked for openid, plain-http issuer off loopback, client_secret and client_secret_file, a rule scope profile.scopes lacks, a name twice, a plain provider missing endpoints (the checks start-up makes)',
    problems: [
      { code: 'OAUTH_CONFIG', line: 12, col: 33 },
      { code: 'OAUTH_CONFIG', line: 16, col: 17 },
      { code: 'OAUTH_CONFIG', line: 11, col: 17 },
      { code: 'OAUTH_CONFIG', line: 15, col: 29 },
      { code: 'SCOPE_UNDECLARED', line: 18, col: 69 },
      { code: 'DUPLICATE_NAME', line: 19, col: 15 },
      { code: 'OAUTH_CONFIG', line: 19, col: 9 },
    ],
  },
  'oauth-upstream-auth-method.yaml': {
    why: 'upstream login: private_key_jwt without private_key_file, private_key_jwt with a client secret, a private_key_file with another auth_method',
    problems: [
      { code: 'OAUTH_CONFIG', line: 13, col: 22 },
      { code: 'OAUTH_CONFIG', line: 18, col: 24 },
      { code: 'OAUTH_CONFIG', line: 27, col: 27 },
    ],
  },
  'oauth-upstream-claim-name.yaml': {
    why: 'a rule maps a claim whose name a bind cannot read (principal.claims.NAME takes letters, digits and _)',
    problems: [{ code: 'SCHEMA_VIOLATION', line: 13, col: 50 }, { code: 'SCHEMA_VIOLATION', line: 13, col: 50 }],
  },
  'oauth-upstream-mode.yaml': { why: 'login mode upstream without an identity provider', problems: [{ code: 'OAUTH_CONFIG', line: 6, col: 18 }] },
  'oauth-upstreams-wrong-mode.yaml': { why: 'identity providers under another login mode', problems: [{ code: 'OAUTH_CONFIG', line: 9, col: 7 }] },
  'oauth-issuer-and-scopes.yaml': {
    why: 'oauth.issuer with a path, profile.issuer naming another issuer, no profile scope (the checks start-up makes)',
    problems: [{ code: 'OAUTH_CONFIG', line: 8, col: 11 }, { code: 'OAUTH_CONFIG', line: 5, col: 11 }, { code: 'OAUTH_CONFIG', line: 4, col: 11 }],
  },
  'limits-shared-no-postgres.yaml': { why: 'limits.shared without state or a PostgreSQL OAuth provider', problems: [{ code: 'OAUTH_CONFIG', line: 6, col: 11 }] },
  'state-with-postgres-provider.yaml': { why: 'state beside oauth.provider.type postgres (its database already holds the shared state)', problems: [{ code: 'STATE_CONFIG', line: 6, col: 3 }] },
  'multiple-problems.yaml': {
    why: 'several problems, all reported in one pass',
    problems: [
      { code: 'AUTH_MISSING', line: 6, col: 14 },
      { code: 'SCOPE_UNDECLARED', line: 10, col: 23 },
      { code: 'TEMPLATE_ARG_UNKNOWN', line: 11, col: 15 },
      { code: 'DUPLICATE_NAME', line: 12, col: 5 },
    ],
  },
};

const key = (p: Expect) => `${p.code}@${p.line}:${p.col}`;

describe('compile: invalid manifests', () => {
  it('every fixture in test/fixtures/invalid has a case (and every case a fixture)', () => {
    assert.deepEqual(readdirSync(INVALID).filter((f) => f.endsWith('.yaml')).sort(), Object.keys(CASES).sort());
  });

  for (const [fixture, { why, problems }] of Object.entries(CASES)) {
    it(`${fixture}: ${why} → ${problems.map(key).join(', ')}`, () => {
      const file = INVALID + fixture;
      const checked = checkManifest(file, {});
      assert.equal(checked.plan, undefined, 'an invalid manifest must not produce a plan');
      const got = checked.problems.map((p) => ({ code: p.code, line: p.line, col: p.col }));
      assert.deepEqual(got.map(key).sort(), problems.map(key).sort());
      for (const p of checked.problems) {
        assert.equal(p.file, file, 'each problem names the manifest file');
        assert.match(p.format(), new RegExp(`^${escapeRe(file)}:${p.line}:${p.col}: ${p.code}: \\S`));
      }
    });
  }

  it('a missing manifest file is FILE_UNREADABLE, not a throw', () => {
    const checked = checkManifest(INVALID + 'does-not-exist.yaml', {});
    assert.deepEqual(checked.problems.map((p) => p.code), ['FILE_UNREADABLE']);
  });
});

describe('compile: valid manifests', () => {
  it('${NOPE:-x} takes the default when NOPE is unset, and $${…} stays literal', () => {
    const checked = checkManifest(VALID + 'env-default.yaml', {});
    assert.deepEqual(checked.problems, []);
    assert.equal(checked.plan!.manifest.name, 'fallback-name');
    assert.equal(checked.plan!.manifest.description, 'costs ${NOT_INTERPOLATED}');
  });

  it('${NOPE:-x} uses the variable when it is set', () => {
    const checked = checkManifest(VALID + 'env-default.yaml', { NOPE: 'from-env' });
    assert.equal(checked.plan!.manifest.name, 'from-env');
  });

  it('colons inside SQL string literals and comments are not parameters', () => {
    const checked = checkManifest(VALID + 'sqlite-literals.yaml', {});
    assert.deepEqual(checked.problems.map((p) => p.format()), []);
    assert.ok(checked.plan);
  });

  it('state (PostgreSQL) without the OAuth server: limits.shared counts there, the schema fills pool_size and statement_timeout_ms', () => {
    const checked = checkManifest(VALID + 'state-limits-shared.yaml', {});
    assert.deepEqual(checked.problems.map((p) => p.format()), []);
    assert.deepEqual(checked.plan!.manifest.state, { type: 'postgres', url: 'postgres://localhost/svc', pool_size: 10, statement_timeout_ms: 5000 });
  });

  it('a minimal manifest compiles to a plan with schema defaults filled in', () => {
    const checked = checkManifest(VALID + 'minimal.yaml', {});
    assert.deepEqual(checked.problems, []);
    const plan = checked.plan!;
    assert.equal(plan.manifest.name, 'minimal');
    assert.deepEqual([...plan.scopes], ['greet.use', 'notes.read']);
    assert.deepEqual([...plan.publicRoutes], ['/', '/docs', '/healthz', '/readyz', '/metadata']);
    assert.deepEqual([...plan.protectedRoutes], ['/svc', '/mcp', '/ws', '/metrics']);
    const tool = plan.manifest.tools![0]!;
    assert.equal(tool.output_mode, 'scalar');
    assert.equal(tool.inline_ok, true);
    assert.equal(plan.manifest.auth!.token, 'dev-token');
    assert.equal(checked.hash.length, 64);
  });

  it('the plan is deep-frozen', () => {
    const plan = checkManifest(VALID + 'minimal.yaml', {}).plan!;
    const unfrozen: string[] = [];
    const walk = (v: unknown, path: string) => {
      if (v === null || typeof v !== 'object') return;
      if (!Object.isFrozen(v)) unfrozen.push(path || '(plan)');
      for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
    };
    walk(plan, '');
    assert.deepEqual(unfrozen, []);
    assert.throws(() => {
      (plan.manifest.tools as unknown as object[]).push({});
    }, TypeError);
    // Reflect.set reports the refusal whether or not this module runs in strict mode.
    assert.equal(Reflect.set(plan.manifest.tools![0]!.input_schema!.properties as object, 'extra', {}), false);
    assert.equal(Reflect.set(plan.manifest, 'name', 'changed'), false);
    assert.equal(plan.manifest.name, 'minimal');
  });
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
