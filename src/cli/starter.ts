// The manifest `fastsvc init` writes: small, commented, valid as written.
// `schemaRef` is where the editor finds the schema: the CLI passes the path of
// the schema shipped in its own package, relative to the new file.

export const starterManifest = (schemaRef: string): string => `# yaml-language-server: $schema=${schemaRef}
# A fastsvc manifest. Check it with \`npx fastsvc validate\`, run it with \`npx fastsvc serve\`.
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
