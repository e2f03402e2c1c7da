// What oidc-provider sees when the store refuses. Guarantees: a second consume of a code
// or refresh token (a replay, or two replicas racing for it) revokes the whole grant —
// every token, code and the grant itself — and answers invalid_grant, exactly as a
// replay seen by one process does; a store that is down or too slow (STORE_UNAVAILABLE)
// answers 503 temporarily_unavailable instead of a 500 server_error.

import { errors } from 'oidc-provider';
import { isSvcError } from '../../errors.js';
import { AlreadyConsumed, type Adapter, type AdapterPayload } from '../../core/oauth-provider.js';

const GRANT_MODELS = ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode', 'BackchannelAuthenticationRequest'] as const;

/** `adapterOf` is the (cache-aware) adapter of another model, used to revoke a replayed grant everywhere. */
export function guardAdapter(model: string, inner: Adapter, adapterOf: (model: string) => Adapter): Adapter {
  const guarded = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (e) {
      if (isSvcError(e) && e.code === 'STORE_UNAVAILABLE') {
        const err = new errors.TemporarilyUnavailable('the authorization server cannot reach its store; retry later', { cause: e });
        Object.assign(err, { status: 503, statusCode: 503, expose: true });
        throw err;
      }
      throw e;
    }
  };
  return {
    upsert: (id: string, payload: AdapterPayload, expiresIn: number) => guarded(() => inner.upsert(id, payload, expiresIn)),
    find: (id: string) => guarded(() => inner.find(id)),
    findByUid: (uid: string) => guarded(() => inner.findByUid(uid)),
    findByUserCode: (code: string) => guarded(() => inner.findByUserCode(code)),
    destroy: (id: string) => guarded(() => inner.destroy(id)),
    revokeByGrantId: (grantId: string) => guarded(() => inner.revokeByGrantId(grantId)),
    consume: (id: string) => guarded(async () => {
      try {
        await inner.consume(id);
      } catch (e) {
        if (!(e instanceof AlreadyConsumed)) throw e;
        const grantId = (await inner.find(id))?.grantId;
        if (grantId) {
          await Promise.all([...GRANT_MODELS.map((m) => adapterOf(m).revokeByGrantId(grantId)), adapterOf('Grant').destroy(grantId)]);
        }
        throw new errors.InvalidGrant(`${model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
      }
    }),
  };
}

/** The STORE_UNAVAILABLE SvcError behind an error guardAdapter raised (for callers outside oidc-provider), else `e`. */
export function storeError(e: unknown): unknown {
  const cause = (e as { cause?: unknown })?.cause;
  return isSvcError(cause) && cause.code === 'STORE_UNAVAILABLE' ? cause : e;
}
