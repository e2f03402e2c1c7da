// The Petstore documents' call tables for test/e2e/openapi-petstore.test.ts: per document, one call of each kind and
// the exact request Prism must receive for it (method, path and query, headers, body), the answer it gives, the
// operations fastsvc cannot express and the annotations each tool carries. Data only: the first test of each
// document sends every expected request with plain fetch, which shows the table is what the document accepts.

type Json = Record<string, unknown>;

/** One call and the request Prism must receive for it. */
export interface Case {
  what: string;
  tool: string;
  args: Json;
  method: string;
  /** Path and query exactly as sent. */
  url: string;
  headers?: Record<string, string>;
  /** The body: JSON (compared parsed) or a form (compared as text). */
  json?: unknown;
  form?: string;
  /** The answer: a JSON object (structured content, valid against the listed output schema), a JSON array (its
   * text; no output schema, which MCP wants an object), or nothing to check. */
  answer: 'object' | 'array' | 'none';
  /** The status Prism answers a valid request with when the document gives the operation no 2xx answer (2.0's
   * addPet documents only 405): then the call is a tool error naming it. Default: a 2xx. */
  status?: number;
}

export interface Doc {
  label: string;
  fixture: string;
  /** The copy Prism reads, when Prism cannot read the fixture itself (fastsvc always reads the fixture). */
  forPrism?: (text: string) => string;
  cases: Case[];
  /** Operations the document has that fastsvc cannot express: absent from the catalog. */
  absent: string[];
  /** Annotations each tool must carry. */
  annotations: Record<string, Json>;
}

// 7: the 3.1 document bounds petId (exclusiveMaximum 10).
export const PET = { id: 7, name: 'rex', photoUrls: ['https://example.com/rex.jpg'], status: 'available' };

const path = (tool: string, petId = 7): Case => ({ what: 'a path parameter', tool, args: { petId }, method: 'GET', url: `/pet/${petId}`, answer: 'object' });
const byTags: Case = { what: 'a query array, exploded', tool: 'findPetsByTags', args: { tags: ['tag1', 'tag two'] }, method: 'GET', url: '/pet/findByTags?tags=tag1&tags=tag%20two', answer: 'array' };
const header: Case = { what: 'a header parameter (DELETE)', tool: 'keyless.deletePet', args: { petId: 7, api_key: 'caller-key' }, method: 'DELETE', url: '/pet/7', headers: { api_key: 'caller-key' }, answer: 'none' };
const post: Case = { what: 'a JSON body (POST)', tool: 'addPet', args: { body: PET }, method: 'POST', url: '/pet', headers: { 'content-type': 'application/json' }, json: PET, answer: 'object' };
const put: Case = { what: 'a JSON body (PUT)', tool: 'updatePet', args: { body: PET }, method: 'PUT', url: '/pet', headers: { 'content-type': 'application/json' }, json: PET, answer: 'object' };
const escaped: Case = { what: 'a path value that needs escaping', tool: 'getUserByName', args: { username: 'ada lovelace/1?#' }, method: 'GET', url: '/user/ada%20lovelace%2F1%3F%23', answer: 'object' };
const deleteOrder: Case = { what: 'DELETE with a path parameter', tool: 'deleteOrder', args: { orderId: 5 }, method: 'DELETE', url: '/store/order/5', answer: 'none' };
const order = { id: 1, petId: 7, quantity: 2, status: 'placed', complete: false };
const placeOrder: Case = { what: 'a JSON body (POST, no security)', tool: 'placeOrder', args: { body: order }, method: 'POST', url: '/store/order', headers: { 'content-type': 'application/json' }, json: order, answer: 'object' };

const ANNOTATIONS = {
  getPetById: { readOnlyHint: true },
  findPetsByTags: { readOnlyHint: true },
  updatePet: { idempotentHint: true },
  'keyless.deletePet': { destructiveHint: true },
};

export const DOCS: Doc[] = [
  {
    label: 'Petstore OpenAPI 3.0',
    fixture: 'petstore-3.0.yaml',
    cases: [
      path('getPetById'),
      { what: 'a query parameter', tool: 'findPetsByStatus', args: { status: 'sold' }, method: 'GET', url: '/pet/findByStatus?status=sold', answer: 'array' },
      byTags, header, post, put,
      { what: 'query parameters on POST', tool: 'updatePetWithForm', args: { petId: 7, name: 'rex', status: 'sold' }, method: 'POST', url: '/pet/7?name=rex&status=sold', answer: 'object' },
      escaped, deleteOrder, placeOrder,
    ],
    absent: ['uploadFile'],
    annotations: ANNOTATIONS,
  },
  {
    label: 'Petstore OpenAPI 3.1',
    fixture: 'petstore-3.1.yaml',
    // Prism 5.14 resolves a $ref only as a JSON pointer or a file: the one $ref by $id and $anchor (which JSON Schema
    // 2020-12 allows and fastsvc must follow) is rewritten for Prism to the pointer it denotes.
    forPrism: (text) => text.replace('$ref: /components/schemas/petdetails#pet_details_id', '$ref: "#/components/schemas/PetDetails/properties/id"'),
    cases: [
      path('getPetById'),
      { what: 'a query parameter', tool: 'findPetsByStatus', args: { status: 'pending' }, method: 'GET', url: '/pet/findByStatus?status=pending', answer: 'array' },
      byTags, header, post, put,
    ],
    absent: [],
    annotations: ANNOTATIONS,
  },
  {
    label: 'Petstore Swagger 2.0',
    fixture: 'petstore-2.0.json',
    cases: [
      path('getPetById'),
      { what: 'a query array, collectionFormat multi', tool: 'findPetsByStatus', args: { status: ['available', 'sold'] }, method: 'GET', url: '/pet/findByStatus?status=available&status=sold', answer: 'array' },
      // The 2.0 Petstore documents no 2xx answer for addPet, updatePet, updatePetWithForm and the DELETEs.
      byTags, { ...header, status: 400 }, { ...post, status: 405, answer: 'none' }, { ...put, status: 400, answer: 'none' },
      { what: 'a form body (formData)', tool: 'updatePetWithForm', args: { petId: 7, body: { name: 'rex', status: 'sold' } }, method: 'POST', url: '/pet/7', headers: { 'content-type': 'application/x-www-form-urlencoded' }, form: 'name=rex&status=sold', answer: 'none', status: 405 },
      // (placeOrder is left out: the 2.0 document declares no `consumes` for it, so Prism refuses any body.)
      escaped, { ...deleteOrder, status: 400 },
    ],
    absent: ['uploadFile'],
    annotations: ANNOTATIONS,
  },
];
