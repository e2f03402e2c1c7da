// One token request to a backend's token endpoint (client credentials, RFC 8693 token exchange),
// made with oauth4webapi, which is loaded on the first request (a manifest without such a
// credential never loads it). Guarantees: the endpoint is the manifest's token_url — an operator's
// choice, never a caller's (no SSRF through it), https unless on a loopback address (checked by
// credential-checks.ts); the request ends within timeout_ms, whoever waits for it; the client
// authenticates as the manifest says (client_secret_basic — the id and secret form-encoded as RFC
// 6749 Appendix B says, `-` left as it is — or client_secret_post: client-auth.ts); only a bearer
// access token is accepted; every failure is OUTBOUND_AUTH_FAILED with data.reason (token_timeout,
// token_unreachable, token_refused with the endpoint's OAuth `error`, token_invalid, token_too_large
// for an answer over MAX_TOKEN_ANSWER_BYTES, which is never read whole) and a message
// naming the endpoint without its query — never a secret, a token or the endpoint's own text.

import type * as OAuth from 'oauth4webapi';
import { SvcError } from '../errors.js';
import { BodyTooLarge, readCapped } from '../http/capped-body.js';
import { clientAuth } from './client-auth.js';
import type { OutboundHeader } from './credential.js';
import type { Fetched } from './fetched-tokens.js';

/** What a token request needs of the manifest (client_credentials or token_exchange, defaults filled in). */
export interface TokenEndpoint {
  token_url: string;
  client_id: string;
  auth_method: 'client_secret_basic' | 'client_secret_post';
  timeout_ms: number;
}

/** The largest token endpoint answer read (a token response is a few KiB); a larger one fails the request unread. */
export const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** The token of a header this folder's fetching kinds built (`Bearer TOKEN`). */
export const bearerOf = (h: OutboundHeader): string => h[1].slice('Bearer '.length);

/** A token lifetime assumed when the endpoint gives no expires_in (RFC 6749 makes it optional). */
export const UNSTATED_LIFETIME_S = 300;

let oauthModule: Promise<typeof OAuth> | undefined;
const oauth4webapi = () => (oauthModule ??= import('oauth4webapi'));

/** grantType 'client_credentials', or any other (RFC 8693's URN) with its parameters. */
export async function requestToken(ep: TokenEndpoint, secret: string, grantType: string, params: Record<string, string>): Promise<Fetched> {
  const oauth = await oauth4webapi();
  const url = new URL(ep.token_url);
  const where = `token endpoint ${url.origin}${url.pathname}`;
  const as: OAuth.AuthorizationServer = { issuer: url.origin, token_endpoint: ep.token_url };
  const client: OAuth.Client = { client_id: ep.client_id };
  const auth = clientAuth({ method: ep.auth_method, clientId: ep.client_id, secret }, ep.token_url);
  const signal = AbortSignal.timeout(ep.timeout_ms);
  const options = { signal, [oauth.allowInsecureRequests]: url.protocol === 'http:', [oauth.customFetch]: cappedFetch };
  let answer: OAuth.TokenEndpointResponse;
  try {
    const res = grantType === 'client_credentials'
      ? await oauth.clientCredentialsGrantRequest(as, client, auth, params, options)
      : await oauth.genericTokenEndpointRequest(as, client, auth, grantType, params, options);
    answer = await oauth.processGenericTokenEndpointResponse(as, client, res);
  } catch (e) {
    if (signal.aborted) throw failed('token_timeout', `the ${where} did not answer within ${ep.timeout_ms} ms`);
    if (e instanceof BodyTooLarge) throw failed('token_too_large', `the ${where} answered with more than ${MAX_TOKEN_ANSWER_BYTES} bytes`);
    if (e instanceof oauth.ResponseBodyError) throw failed('token_refused', `the ${where} refused the request (${e.status} ${e.error})`, { error: e.error, status: e.status });
    if (e instanceof oauth.OperationProcessingError && e.code === oauth.RESPONSE_IS_NOT_CONFORM && e.cause instanceof Response) {
      throw failed('token_refused', `the ${where} answered HTTP ${e.cause.status}`, { status: e.cause.status });
    }
    if (e instanceof oauth.OperationProcessingError || e instanceof oauth.WWWAuthenticateChallengeError) throw failed('token_invalid', `the ${where} gave no usable token response`);
    throw failed('token_unreachable', `the ${where} could not be reached`);
  }
  if (answer.token_type !== 'bearer') throw failed('token_invalid', `the ${where} issued a ${answer.token_type} token; only bearer tokens can be sent`);
  const lifetime = typeof answer.expires_in === 'number' ? answer.expires_in : UNSTATED_LIFETIME_S;
  return { token: answer.access_token, expiresAt: Date.now() + lifetime * 1000 };
}

/** fetch, with the answer's body read here under MAX_TOKEN_ANSWER_BYTES (oauth4webapi would read any size). */
async function cappedFetch(url: string, init: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  const body = await readCapped(res, MAX_TOKEN_ANSWER_BYTES);
  return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(body), { status: res.status, statusText: res.statusText, headers: res.headers });
}

function failed(reason: string, message: string, more: Record<string, unknown> = {}): SvcError {
  return new SvcError('OUTBOUND_AUTH_FAILED', `backend credential: ${message}`, { data: { reason, ...more }, reason });
}
