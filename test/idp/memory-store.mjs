// The corporate IdP's state: one in-memory store for every oidc-provider model (sessions,
// interactions, grants, codes, tokens, registered clients), kept outside the Provider so it
// survives the IdP rebuilding its Provider (a key rotation, a client added): tokens, grants
// and sign-ins in progress stay valid across a rebuild. Guarantees: an entry is gone once its
// expiresIn has passed; revokeByGrantId removes every token of the grant; find() returns the
// payload as upserted (oidc-provider's adapter contract). Not durable: a restart of the
// process forgets everything, as a test IdP should.

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export function createStore() {
  /** `${model}:${id}` → { payload, expiresAt (ms, or Infinity) } */
  const entries = new Map();
  /** grantId → Set of `${model}:${id}` keys */
  const grants = new Map();
  /** session uid → session id */
  const sessionUids = new Map();

  const live = (key) => {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return e.payload;
  };

  class Adapter {
    constructor(model) {
      this.model = model;
    }

    key(id) {
      return `${this.model}:${id}`;
    }

    async upsert(id, payload, expiresIn) {
      const key = this.key(id);
      entries.set(key, { payload, expiresAt: typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity });
      if (this.model === 'Session' && payload.uid) sessionUids.set(payload.uid, id);
      if (GRANTABLE.has(this.model) && payload.grantId) {
        if (!grants.has(payload.grantId)) grants.set(payload.grantId, new Set());
        grants.get(payload.grantId).add(key);
      }
    }

    async find(id) {
      return live(this.key(id));
    }

    async findByUid(uid) {
      const id = sessionUids.get(uid);
      return id === undefined ? undefined : live(this.key(id));
    }

    async findByUserCode() {
      return undefined;
    }

    async consume(id) {
      const p = live(this.key(id));
      if (p) p.consumed = Math.floor(Date.now() / 1000);
    }

    async destroy(id) {
      const key = this.key(id);
      const p = entries.get(key)?.payload;
      entries.delete(key);
      if (p?.grantId) grants.get(p.grantId)?.delete(key);
      if (p?.uid && sessionUids.get(p.uid) === id) sessionUids.delete(p.uid);
    }

    async revokeByGrantId(grantId) {
      for (const key of grants.get(grantId) ?? []) entries.delete(key);
      grants.delete(grantId);
    }
  }

  return {
    /** oidc-provider's `adapter` option. */
    adapter: (model) => new Adapter(model),
    /** The live payload of one entry (tests and the admin routes). */
    get: (model, id) => live(`${model}:${id}`),
    /** Remove one entry (the admin revoke). */
    remove: (model, id) => new Adapter(model).destroy(id),
  };
}
