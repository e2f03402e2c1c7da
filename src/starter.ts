// The manifest `svc init` writes: small, commented, valid as written.

export const STARTER_MANIFEST = `# yaml-language-server: $schema=https://fastsvc.dev/schema/svc.schema.json
# A fastsvc manifest. Check it with \`svc validate\`, run it with \`svc serve\`.
version: 1
name: my-service
description: What this server offers, in one sentence.

server:
  host: 127.0.0.1   # loopback only; use 0.0.0.0 behind a proxy
  port: 8080

# Static bearer token. Never write the token here: read it from the environment.
auth:
  token: \${SVC_TOKEN:-}
  generate_if_unset: true   # no SVC_TOKEN? a token is generated and printed at start-up

# Every scope used below must be declared here.
profile:
  scopes:
    - name: greet.use
      description: Say hello.

tools:
  - name: greet.hello
    description: Greets someone by name.
    input_schema:
      type: object
      properties:
        name: { type: string, description: Who to greet. }
      required: [name]
    required_scopes: [greet.use]
    template: "Hello, {{name}}!"
`;
