// Large-manifest generator: a svc.yaml with N template tools, as a catalog generated from an
// OpenAPI document would be (resource × operation names, path ids, paging and filter
// parameters, enums, formats, nested bodies). Guarantees: deterministic for a given N; tool
// names are unique; with `distinct` (the default) no two tools have the same input_schema
// (property names, types, constraints and `required` vary per tool, and each schema carries
// its own tool index in a constraint), otherwise every tool has one identical schema; every
// tool needs the one declared scope and sits behind the static token ${SVC_TOKEN}; every
// tool's template names only required string properties, so a call with `requiredArgs(i)`
// succeeds.

const RESOURCES = ['account', 'invoice', 'order', 'customer', 'product', 'shipment', 'ticket', 'payment', 'refund', 'subscription',
  'webhook', 'report', 'user', 'team', 'project', 'task', 'comment', 'attachment', 'tag', 'warehouse'];
const OPS = ['get', 'list', 'create', 'update', 'delete', 'search', 'archive', 'export', 'approve', 'sync'];
const FIELDS = ['name', 'email', 'status', 'note', 'currency', 'region', 'owner', 'label', 'reference', 'channel', 'priority', 'locale'];
const FORMATS = ['email', 'date-time', 'uri', 'uuid', 'date'];

/** The name of tool i. */
export function toolName(i) {
  return `${RESOURCES[i % RESOURCES.length]}.${OPS[Math.floor(i / RESOURCES.length) % OPS.length]}_${i}`;
}

/** The input schema of tool i (distinct per i unless `same`). */
export function inputSchema(i, same = false) {
  if (same) i = 0;
  const res = RESOURCES[i % RESOURCES.length];
  const props = { [`${res}_id`]: { type: 'string', pattern: '^[a-z0-9-]+$', maxLength: 64 + i, description: `The ${res} id.` } };
  const required = [`${res}_id`];
  const n = 2 + (i % 5);
  for (let k = 0; k < n; k++) {
    const f = `${FIELDS[(i + k * 7) % FIELDS.length]}${k ? `_${k}` : ''}`;
    switch ((i + k) % 6) {
      case 0: props[f] = { type: 'string', minLength: 1, maxLength: 16 + ((i * 3 + k) % 200) }; break;
      case 1: props[f] = { type: 'integer', minimum: 0, maximum: 100 + (i % 900) + k }; break;
      case 2: props[f] = { type: 'string', enum: ['low', 'normal', 'high', `p${i % 13}`].slice(0, 2 + ((i + k) % 3)) }; break;
      case 3: props[f] = { type: 'string', format: FORMATS[(i + k) % FORMATS.length] }; break;
      case 4: props[f] = { type: 'boolean', default: (i + k) % 2 === 0 }; break;
      default: props[f] = { type: 'object', properties: { key: { type: 'string' }, value: { type: 'number', multipleOf: 0.01 } }, required: ['key'], additionalProperties: false };
    }
    if ((i + k) % 3 === 0) required.push(f);
  }
  if (i % 4 === 1) {
    props.page_size = { type: 'integer', minimum: 1, maximum: 10 + (i % 500), default: 10 };
    props.page_token = { type: 'string' };
  }
  if (i % 7 === 3) props.tags = { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 5 + (i % 20), uniqueItems: true };
  return { type: 'object', properties: props, required, additionalProperties: false };
}

/** Arguments that satisfy tool i's schema (its required properties only). */
export function requiredArgs(i, same = false) {
  const schema = inputSchema(i, same);
  const sample = { string: 'x1', integer: 1, boolean: true, object: { key: 'k' } };
  const args = {};
  for (const name of schema.required) {
    const p = schema.properties[name];
    if (p.enum) args[name] = p.enum[0];
    else if (p.format === 'email') args[name] = 'a@example.com';
    else if (p.format === 'date-time') args[name] = '2026-01-01T00:00:00Z';
    else if (p.format === 'uri') args[name] = 'https://example.com/x';
    else if (p.format === 'uuid') args[name] = '00000000-0000-4000-8000-000000000000';
    else if (p.format === 'date') args[name] = '2026-01-01';
    else args[name] = sample[p.type];
  }
  return args;
}

/** The manifest as a value (what the JSON form serialises). */
export function manifestValue(n, { same = false, scope = 'catalog.use', marker = 'v1', pageSize } = {}) {
  return {
    version: 1,
    name: `large-${n}`,
    description: `Generated catalog of ${n} tools.`,
    server: { host: '127.0.0.1', port: 0, ...(pageSize && { list_page_size: pageSize }) },
    profile: { scopes: [{ name: scope, description: 'Use the catalog.' }] },
    auth: { token: '${SVC_TOKEN}', scopes: [scope] },
    tools: Array.from({ length: n }, (_, i) => {
      const schema = inputSchema(i, same);
      const id = schema.required[0];
      return {
        name: toolName(i),
        description: `${OPS[Math.floor(i / RESOURCES.length) % OPS.length]} a ${RESOURCES[i % RESOURCES.length]} (operation ${i}).`,
        input_schema: schema,
        required_scopes: [scope],
        template: `${marker} ${id}={{${id}}}`,
      };
    }),
  };
}

/**
 * The manifest text: YAML (block style, each schema a flow mapping), or with `json` the same
 * value as JSON (one tool per line), which fastsvc reads without its YAML parser.
 */
export function generateManifest(n, { same = false, scope = 'catalog.use', marker = 'v1', json = false, pageSize } = {}) {
  if (json) {
    const { tools, ...head } = manifestValue(n, { same, scope, marker, pageSize });
    return `${JSON.stringify(head).slice(0, -1)},\n"tools": [\n${tools.map((t) => JSON.stringify(t)).join(',\n')}\n]}\n`;
  }
  const out = [
    `# Generated by bench/lib/gen-manifest.mjs: ${n} template tools, ${same ? 'one shared input schema' : 'distinct input schemas'}.`,
    'version: 1',
    `name: large-${n}`,
    `description: Generated catalog of ${n} tools.`,
    `server: { host: 127.0.0.1, port: 0${pageSize ? `, list_page_size: ${pageSize}` : ''} }`,
    `profile: { scopes: [{ name: ${scope}, description: Use the catalog. }] }`,
    'auth:',
    '  token: "${SVC_TOKEN}"',
    `  scopes: [${scope}]`,
    'tools:',
  ];
  for (let i = 0; i < n; i++) {
    const schema = inputSchema(i, same);
    const id = schema.required[0];
    out.push(`  - name: ${toolName(i)}`);
    out.push(`    description: ${JSON.stringify(`${OPS[Math.floor(i / RESOURCES.length) % OPS.length]} a ${RESOURCES[i % RESOURCES.length]} (operation ${i}).`)}`);
    out.push(`    input_schema: ${JSON.stringify(schema)}`);
    out.push(`    required_scopes: [${scope}]`);
    out.push(`    template: ${JSON.stringify(`${marker} ${id}={{${id}}}`)}`);
  }
  return out.join('\n') + '\n';
}
