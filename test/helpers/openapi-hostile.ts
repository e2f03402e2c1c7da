// OpenAPI documents made to exhaust whoever reads them, for the tests that show they cannot
// (issue 38, point 9). fanOut(): schemas L0…L(n-1), each with ten properties referring to the next,
// the body of POST /x0… — 10^n nodes once inlined, from a few kB. laughs(): an `example` made of
// YAML aliases ten at a time, `depth` deep — 10^depth strings from a few hundred bytes.

const HEAD = (title: string) => `openapi: 3.0.3\ninfo: {title: ${title}, version: "1"}\nservers: [{url: "http://127.0.0.1:9"}]\n`;

/** POST /x0 … /x(operations-1), each with the body L0; L0 → 10 × L1 → … → L(levels-1) of ten strings. */
export function fanOut(levels: number, o: { operations?: number } = {}): string {
  let s = HEAD('fan') + 'paths:\n';
  for (let i = 0; i < (o.operations ?? 1); i++) {
    s += `  /x${i}:\n    post:\n      operationId: fan${i}\n      requestBody:\n        content:\n          application/json:\n            schema: {$ref: "#/components/schemas/L0"}\n      responses:\n        "200": {description: ok}\n`;
  }
  s += 'components:\n  schemas:\n';
  for (let i = 0; i < levels; i++) {
    s += `    L${i}:\n      type: object\n      properties:\n`;
    for (let p = 0; p < 10; p++) s += i + 1 < levels ? `        p${p}: {$ref: "#/components/schemas/L${i + 1}"}\n` : `        p${p}: {type: string}\n`;
  }
  return s;
}

/** GET /laugh whose query parameter q's schema has an example of 10^depth strings, written with YAML aliases. */
export function laughs(depth: number): string {
  let s = HEAD('laughs') + 'x-lol:\n  a0: &a0 "lol lol lol lol lol lol lol lol lol lol"\n';
  for (let i = 1; i <= depth; i++) s += `  a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]\n`;
  return s + `paths:\n  /laugh:\n    get:\n      operationId: laugh\n      parameters:\n        - name: q\n          in: query\n          schema: {type: array, example: *a${depth}}\n      responses:\n        "200": {description: ok}\n`;
}
