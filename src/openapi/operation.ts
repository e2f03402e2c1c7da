// One OpenAPI operation → one http tool entry (the manifest shape), or the reason it is skipped.
// Guarantees: arguments are the parameters by name (path-level parameters merged under the
// operation's, the operation's winning), then the body as `body`; a name already taken gets
// the suffix `_` + its location (`id_query`, `body_body`), and a path parameter whose name is
// not a template placeholder name gets one made of it (`pet-id` → `pet_id`) — each parameter's
// `arg` then says which argument feeds it. Path parameters are required; others as the
// document says. The JSON body (application/json or any +json) is preferred, then a
// form body (application/x-www-form-urlencoded, and Swagger 2.0 formData); anything else —
// multipart, binary, a `file` parameter, a parameter described by `content`, Swagger 2.0's
// tsv collection format, a method other than GET POST PUT PATCH DELETE — skips the operation
// with the reason, never a guessed request. Accept, Content-Type and Authorization header
// parameters are ignored (OpenAPI says so), and so is a header the source's credential or
// `headers` or the HTTP stack set; a parameter the http backend could not send as described
// (a header fastsvc sets, a cookie beside a credential that sets Cookie, a name that is not a
// token, a style its location does not take) is left out when optional and skips the operation
// when required; a path parameter the path does not name, and an optional GET body, are left out. style/explode are written only when the
// document gives them (Swagger 2.0 collection formats are translated to them). The output
// schema is the first 2xx response's JSON schema when that is an object schema.

import type { JsonSchema, SchemaTranslator } from './schema.js';
import { child, pathOf, type Located, type Refs } from './refs.js';
import { documentError, type OpenApiVersion } from './document.js';
import { BoundPassed, type Budget } from './budget.js';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface Operation {
  method: string;
  path: string;
  operationId?: string;
  tags: string[];
  /** The operation says `deprecated: true`. */
  deprecated?: true;
  node: Located;
  pathItem: Located;
}

export interface HttpParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  style?: string;
  explode?: boolean;
  arg?: string;
}

export interface OpenApiTool {
  name: string;
  title?: string;
  description: string;
  input_schema: { type: 'object'; properties: Record<string, JsonSchema>; required?: string[]; additionalProperties: false };
  output_schema?: Record<string, unknown>;
  required_scopes: string[];
  annotations?: Record<string, unknown>;
  task?: 'forbidden' | 'optional' | 'required';
  http: {
    method: string;
    url: string;
    parameters?: HttpParameter[];
    request_body?: { arg: string; content_type: string };
    headers?: Record<string, string>;
    auth?: unknown;
    timeout_ms?: number;
    max_bytes?: number | string;
  };
}

export interface OperationContext {
  refs: Refs;
  schemas: SchemaTranslator;
  /** What the tool's JSON is charged to (the caller starts and ends each tool). */
  budget: Budget;
  version: OpenApiVersion;
  baseUrl: string;
  /** The header the source's credential sets (lower case), if it sets one. */
  credentialHeader?: string;
  /** The headers the source's `headers` set (lower case). */
  sourceHeaders?: ReadonlySet<string>;
  /** Swagger 2.0: the document's `consumes` and `produces`. */
  consumes?: unknown;
  produces?: unknown;
}

const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json(?:\s*;.*)?$/i;
const FORM_TYPE = 'application/x-www-form-urlencoded';
const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Swagger 2.0 collectionFormat → OpenAPI 3 style/explode, for query (path and header: csv only). */
const COLLECTION: Record<string, { style: string; explode: boolean } | undefined> = {
  csv: { style: 'form', explode: false }, ssv: { style: 'spaceDelimited', explode: false },
  pipes: { style: 'pipeDelimited', explode: false }, multi: { style: 'form', explode: true },
};

export type Built = { tool: Omit<OpenApiTool, 'name' | 'required_scopes'> } | { skip: string };

export function operationTool(o: Operation, ctx: OperationContext): Built {
  if (!(METHODS as readonly string[]).includes(o.method)) return { skip: `method ${o.method} is not one an http tool sends (${METHODS.join(' ')})` };
  const op = o.node.value as Record<string, unknown>;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const parameters: HttpParameter[] = [];
  const taken = new Set<string>();
  const argFor = (name: string, where: string) => {
    let arg = where === 'path' && !PLACEHOLDER_NAME.test(name) ? name.replace(/[^A-Za-z0-9_]/g, '_').replace(/^(?=\d)/, '_') : name;
    if (taken.has(arg)) arg = `${arg}_${where}`;
    for (let n = 2; taken.has(arg); n++) arg = `${arg}${n}`;
    taken.add(arg);
    return arg;
  };

  const translate = (node: Located) => bounded(o, node, () => ctx.schemas.translate(node));

  const params = bounded(o, o.node, () => mergedParameters(o, ctx.refs, ctx.budget));
  const form: { properties: Record<string, JsonSchema>; required: string[] } = { properties: {}, required: [] };
  let bodyNode: Located | undefined;
  let bodyRequired = false;
  for (const p of params) {
    const v = p.value as Record<string, unknown>;
    const name = v.name as string;
    const where = v.in as string;
    if (where === 'body') {
      bodyNode = child(p, 'schema');
      bodyRequired = v.required === true;
      continue;
    }
    const place = placement(name, where, v, o, ctx);
    if (place !== undefined) {
      if (place.leave || v.required !== true) continue;
      return { skip: `its ${where} parameter ${name} is required, and ${place.why}` };
    }
    if (v.content !== undefined) return { skip: `parameter ${name} is described by a media type (content), which fastsvc does not serialize` };
    if (ctx.version === '2.0' && v.type === 'file') return { skip: `parameter ${name} is a file upload (multipart/form-data)` };
    let schema = ctx.version === '2.0' ? translate(p) : translate(child(p, 'schema'));
    if (typeof v.description === 'string' && typeof schema === 'object' && schema.description === undefined) schema = { ...schema, description: v.description };
    if (ctx.version !== '2.0') schema = bounded(o, p, () => withExamples(schema, examplesOf(p, ctx)));
    if (where === 'formData') {
      form.properties[name] = schema;
      if (v.required === true) form.required.push(name);
      continue;
    }
    if (where !== 'path' && where !== 'query' && where !== 'header' && where !== 'cookie') throw documentError(p.doc, [...pathOf(p), 'in'], `parameter ${name}: "in" must be path, query, header or cookie${ctx.version === '2.0' ? ' (or body, formData)' : ''}`);
    const arg = argFor(name, where);
    const param: HttpParameter = { name, in: where };
    if (ctx.version === '2.0') {
      if (v.type === 'array') {
        const format = (v.collectionFormat as string | undefined) ?? 'csv';
        const sx = COLLECTION[format];
        if (!sx || (format !== 'csv' && where !== 'query')) return { skip: `parameter ${name} uses collectionFormat ${format} in ${where}, which OpenAPI 3 styles cannot express` };
        if (where === 'query') Object.assign(param, sx);
      }
    } else {
      if (typeof v.style === 'string') param.style = v.style;
      if (typeof v.explode === 'boolean') param.explode = v.explode;
    }
    if (arg !== name) param.arg = arg;
    parameters.push(param);
    properties[arg] = schema;
    if (where === 'path' || v.required === true) required.push(arg);
  }

  let requestBody: { arg: string; content_type: string } | undefined;
  let bodySchema: JsonSchema | undefined;
  if (ctx.version === '2.0') {
    const consumes = mediaTypes(op.consumes ?? ctx.consumes ?? JSON_ONLY);
    if (Object.keys(form.properties).length) {
      if (!consumes.form) return { skip: `form parameters sent as ${consumes.shown}, which fastsvc does not send (only ${FORM_TYPE})` };
      requestBody = { arg: '', content_type: FORM_TYPE };
      bodySchema = { type: 'object', properties: form.properties, ...(form.required.length && { required: form.required }) };
      bodyRequired = form.required.length > 0;
    } else if (bodyNode && o.method === 'GET') {
      if (bodyRequired) return { skip: 'it is a GET with a required request body, which fastsvc does not send (a GET carries no body)' };
    } else if (bodyNode) {
      if (!consumes.json) return { skip: `its body is sent as ${consumes.shown}, which fastsvc does not send (JSON or ${FORM_TYPE})` };
      requestBody = { arg: '', content_type: 'application/json' };
      bodySchema = translate(bodyNode);
    }
  } else if (op.requestBody !== undefined && o.method === 'GET') {
    if ((ctx.refs.deref(child(o.node, 'requestBody')).value as { required?: unknown }).required === true) return { skip: 'it is a GET with a required request body, which fastsvc does not send (a GET carries no body)' };
  } else if (op.requestBody !== undefined) {
    const rb = ctx.refs.deref(child(o.node, 'requestBody'));
    const content = child(rb, 'content');
    const types = mediaTypes(content.value);
    const chosen = types.json ?? types.form;
    if (!chosen && types.any) return { skip: `its request body is only ${types.shown}, which fastsvc does not send (JSON or ${FORM_TYPE})` };
    if (chosen) {
      requestBody = { arg: '', content_type: JSON_TYPE.test(chosen) ? 'application/json' : FORM_TYPE };
      const media = child(content, chosen);
      bodySchema = translate(child(media, 'schema'));
      bodySchema = bounded(o, media, () => withExamples(bodySchema!, examplesOf(media, ctx)));
      bodyRequired = (rb.value as { required?: unknown }).required === true;
    }
  }
  if (requestBody) {
    requestBody.arg = argFor('body', 'body');
    properties[requestBody.arg] = bodySchema ?? {};
    if (bodyRequired) required.push(requestBody.arg);
  }

  // The URL: path placeholders become the template's {{arg}}.
  const pathArgs = new Map(parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.arg ?? p.name]));
  let missing: string | undefined;
  const path = o.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const arg = pathArgs.get(name);
    if (arg === undefined) missing ??= name;
    return `{{${arg}}}`;
  });
  if (missing !== undefined) return { skip: `its path names {${missing}}, which no path parameter describes` };

  const summary = typeof op.summary === 'string' ? op.summary.trim() : '';
  const description = typeof op.description === 'string' && op.description.trim() ? op.description.trim() : summary || `${o.method} ${o.path}`;
  bounded(o, o.node, () => ctx.budget.charge(description.length + summary.length + 40));
  const output = outputSchema(o, ctx, translate);
  const accept = jsonAnswerType(o, ctx);
  const annotations = o.method === 'GET' ? { readOnlyHint: true } : o.method === 'DELETE' ? { destructiveHint: true } : o.method === 'PUT' ? { idempotentHint: true } : undefined;
  const http = {
    method: o.method,
    url: ctx.baseUrl + path,
    ...(parameters.length && { parameters }),
    ...(requestBody && { request_body: requestBody }),
    ...(accept && { headers: { Accept: accept } }),
  };
  // The rest of the tool (its name, url, parameters, the input schema's frame) is charged too: many small tools add up.
  bounded(o, o.node, () => ctx.budget.charge(JSON.stringify(http).length + 120));
  return {
    tool: {
      ...(summary && summary !== description && { title: summary }),
      description,
      input_schema: { type: 'object', properties, ...(required.length && { required }), additionalProperties: false },
      ...(output && { output_schema: output }),
      ...(annotations && { annotations }),
      http,
    },
  };
}

/**
 * The examples a parameter or a media type gives of its own (OpenAPI 3: `examples`, a map of
 * Example Objects whose `value`s count — $refs followed, an `externalValue` is not fetched — else
 * `example`), charged to the budget; undefined when it gives none.
 */
function examplesOf(node: Located, ctx: OperationContext): unknown[] | undefined {
  if (node.value === null || typeof node.value !== 'object') return undefined;
  const v = node.value as { example?: unknown; examples?: unknown };
  let out: unknown[] | undefined;
  if (v.examples !== null && typeof v.examples === 'object' && !Array.isArray(v.examples)) {
    const map = child(node, 'examples');
    out = Object.keys(v.examples)
      .map((name) => ctx.refs.deref(child(map, name)).value as { value?: unknown } | null)
      .filter((e): e is { value: unknown } => e !== null && typeof e === 'object' && e.value !== undefined)
      .map((e) => e.value);
  }
  if (!out?.length) out = v.example !== undefined ? [v.example] : undefined;
  if (out) ctx.budget.chargeValue(out);
  return out;
}

/** `schema` with `examples` (over its own), or as it was when there are none. */
function withExamples(schema: JsonSchema, examples: unknown[] | undefined): JsonSchema {
  if (!examples) return schema;
  if (schema === false) return schema;
  return { ...(schema === true ? {} : schema), examples };
}

const JSON_ONLY = ['application/json'];

interface MediaTypes {
  /** The first JSON type (application/json or any +json). */
  json?: string;
  /** The form type, as the document writes it. */
  form?: string;
  /** Whether any type is listed. */
  any: boolean;
  /** The types for a message: the first five, and how many more. */
  shown: string;
}

const mediaMemo = new WeakMap<object, MediaTypes>();

/**
 * The media types of a Swagger 2.0 `consumes`/`produces` list or an OpenAPI 3 `content` map (anything
 * else lists none), read once however many operations share the list.
 */
function mediaTypes(v: unknown): MediaTypes {
  if (v === null || typeof v !== 'object') return { any: false, shown: '' };
  let m = mediaMemo.get(v);
  if (!m) {
    const types = (Array.isArray(v) ? v : Object.keys(v)).filter((t): t is string => typeof t === 'string');
    m = {
      json: types.find((t) => JSON_TYPE.test(t)),
      form: types.find((t) => t.toLowerCase() === FORM_TYPE),
      any: types.length > 0,
      shown: types.length > 5 ? `${types.slice(0, 5).join(', ')} and ${types.length - 5} more` : types.join(', '),
    };
    mediaMemo.set(v, m);
  }
  return m;
}

/** Headers the HTTP stack sets on every request: a parameter for one is left out, required or not. */
const STACK_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding']);
/** Other headers fastsvc sets itself (cookies, a proxy's credential, trace context): an optional parameter is left out, a required one skips its operation. */
const OWN_HEADERS = new Set(['cookie', 'proxy-authorization', 'traceparent', 'tracestate']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The styles OpenAPI 3 allows in each location (the Parameter Object's table; the http backend serializes each). */
const STYLES: Record<string, readonly string[] | undefined> = { path: ['simple', 'label', 'matrix'], query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'], header: ['simple'], cookie: ['form'] };

/**
 * Whether a parameter is sent as an argument: undefined when it is; `leave` when something else
 * sends it (the credential, the source's `headers`, the HTTP stack, OpenAPI's ignored headers) or
 * it has nowhere to go (a path parameter the path does not name); else why it cannot be sent —
 * left out when optional, its operation skipped when required.
 */
function placement(name: string, where: string, v: Record<string, unknown>, o: Operation, ctx: OperationContext): { leave: true } | { leave?: false; why: string } | undefined {
  const lower = name.toLowerCase();
  if (where === 'header') {
    if (IGNORED_HEADERS.has(lower) || lower === ctx.credentialHeader || ctx.sourceHeaders?.has(lower) || STACK_HEADERS.has(lower)) return { leave: true };
    if (OWN_HEADERS.has(lower)) return { why: 'fastsvc sets that header itself' };
  }
  if (where === 'cookie') {
    if (ctx.credentialHeader === 'cookie') return { why: 'the source\'s credential sets the Cookie header' };
    if (ctx.sourceHeaders?.has('cookie')) return { why: 'the source\'s headers set the Cookie header' };
  }
  if ((where === 'header' || where === 'cookie') && !TOKEN.test(name)) return { why: `${JSON.stringify(name)} is not a valid ${where} name` };
  if (where === 'path' && !o.path.includes(`{${name}}`)) return { leave: true };
  const style = ctx.version === '2.0' ? undefined : v.style;
  const styles = STYLES[where];
  if (typeof style === 'string' && styles && !styles.includes(style)) return { why: `style ${style} is not allowed for a ${where} parameter (${where} takes ${styles.join(', ')})` };
  return undefined;
}

/** Path-level parameters, then the operation's (which replace one of the same name and location — a header's name in any case), $refs followed. */
function mergedParameters(o: Operation, refs: Refs, budget: Budget): Located[] {
  const out = new Map<string, Located>();
  for (const owner of [o.pathItem, o.node]) {
    const list = child(owner, 'parameters');
    if (list.value === undefined) continue;
    if (!Array.isArray(list.value)) throw documentError(list.doc, pathOf(list), 'parameters must be a list');
    list.value.forEach((_, i) => {
      const p = refs.deref(child(list, i));
      const v = p.value as { name?: unknown; in?: unknown } | null;
      if (!v || typeof v !== 'object' || typeof v.name !== 'string' || typeof v.in !== 'string') throw documentError(p.doc, pathOf(p), 'a parameter needs a name and an "in"');
      budget.charge(v.name.length + 24); // each parameter read is work, sent or not
      out.set(`${v.in}\u0000${v.in === 'header' ? v.name.toLowerCase() : v.name}`, p);
    });
  }
  return [...out.values()];
}

/** The JSON media type the first 2xx response offers, asked for in Accept: an API that also offers XML (the
 * Petstore lists application/xml first) answers the first type it offers to a request that does not say. */
function jsonAnswerType(o: Operation, ctx: OperationContext): string | undefined {
  const responses = (o.node.value as { responses?: Record<string, unknown> }).responses;
  const code = responses && typeof responses === 'object' ? Object.keys(responses).filter((c) => /^2(\d\d|XX)$/i.test(c)).sort()[0] : undefined;
  if (code === undefined) return undefined;
  if (ctx.version === '2.0') return mediaTypes((o.node.value as { produces?: unknown }).produces ?? ctx.produces).json;
  const content = ctx.refs.deref(child(child(o.node, 'responses'), code)).value as { content?: Record<string, unknown> } | undefined;
  return mediaTypes(content?.content).json;
}

/** `make()`, its passing a bound (budget.ts) made an OPENAPI_INVALID at `node`, the schema (or operation) that passed it. */
function bounded<T>(o: Operation, node: Located, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof BoundPassed)) throw e;
    const who = `${o.method} ${o.path}${o.operationId ? ` (operationId ${o.operationId})` : ''}`;
    throw documentError(node.doc, pathOf(node), e.total
      ? `${who}: with it, all the tools of the manifest's openapi sources would hold ${e.message} (every $ref inlined); serve fewer operations (include, exclude)`
      : `${who}: its tool would hold ${e.message} (every $ref inlined: schemas that refer to others many times over?); exclude the operation, or give it a smaller schema`);
  }
}

function outputSchema(o: Operation, ctx: OperationContext, translate: (node: Located) => JsonSchema): Record<string, unknown> | undefined {
  const responses = child(o.node, 'responses');
  if (!responses.value || typeof responses.value !== 'object') return undefined;
  const code = Object.keys(responses.value).filter((c) => /^2(\d\d|XX)$/i.test(c)).sort()[0];
  if (code === undefined) return undefined;
  const res = ctx.refs.deref(child(responses, code));
  let schemaNode: Located | undefined;
  if (ctx.version === '2.0') {
    const produces = mediaTypes((o.node.value as { produces?: unknown }).produces ?? ctx.produces ?? JSON_ONLY);
    if ((res.value as { schema?: unknown } | null)?.schema !== undefined && produces.json) schemaNode = child(res, 'schema');
  } else {
    const content = child(res, 'content');
    const json = mediaTypes(content.value).json;
    if (json && (content.value as Record<string, { schema?: unknown }>)[json]?.schema !== undefined) schemaNode = child(child(content, json), 'schema');
  }
  if (!schemaNode) return undefined;
  const s = translate(schemaNode);
  return typeof s === 'object' && s.type === 'object' ? s : undefined;
}
