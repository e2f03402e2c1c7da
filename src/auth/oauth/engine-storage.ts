// oidc-provider's request AsyncLocalStorage, switched on only while one of its requests
// runs. On Node 20 an enabled AsyncLocalStorage installs promise hooks for the whole
// process, so once the authorization server had answered a single request every later
// promise — every /svc, /mcp and /ws call — paid for them (measured: an OAuth-authorized
// /svc call at ~0.75× the static-token call). Guarantees: while any request is inside
// the engine the storage is on, so the engine's own getStore() sees its request; when
// the last one has finished it is switched off (the next request's run() switches it
// back on); another AsyncLocalStorage (the audit scope) is not affected.

import type { AsyncLocalStorage } from 'node:async_hooks';
// @ts-expect-error oidc-provider ships no types for its internal helpers; the module's default export is the AsyncLocalStorage its Koa app runs each request in.
import engineStorage from 'oidc-provider/lib/helpers/als.js';

export class EngineRequests {
  #inFlight = 0;

  constructor(readonly storage: AsyncLocalStorage<unknown> = engineStorage as AsyncLocalStorage<unknown>) {}

  /** Runs one engine request (a promise for its end); the storage is switched off after the last one in flight. */
  run(request: () => Promise<unknown>): Promise<void> {
    this.#inFlight++;
    let p: Promise<unknown>;
    try {
      p = request();
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.then(() => undefined).finally(() => {
      if (--this.#inFlight === 0) this.storage.disable();
    });
  }
}
