import { hash } from "node:crypto";
import type { Adapter, AdapterPayload } from "oidc-provider";
import type { Logger } from "pino";
import { z } from "zod";
import { ServiceUnavailableError } from "../errors/adapter-error.js";
import { parseJsonText } from "../util/parse-json.js";
import type { OAuthStorage } from "./oauth-storage.js";

/**
 * How long a registered client is kept (the library gives clients no expiry): some clients register
 * anew on every connection (claude.ai, Claude Code), so a client is dropped 90 days after it last
 * registered, as Cloudflare's provider does; one in use registers again, or identifies itself by
 * its metadata document.
 */
export const CLIENT_TTL_SECONDS = 90 * 24 * 3600;

/** The lifetime of a record of any other model the library stores without one of its own: nothing is kept forever. */
export const DEFAULT_TTL_SECONDS = 24 * 3600;

/** What the adapter needs of the authorization server around its storage. */
export interface ProviderAdapterHooks {
  /** The library's `invalid_grant`, thrown when a one-time code or refresh token was already used. */
  alreadyConsumed(): Error;
  /** A store that does not answer, as the library should send it (a 503 to try again). */
  unavailable?(cause: ServiceUnavailableError): Error;
  /** Revokes a whole grant: a code or refresh token was redeemed twice at once (one of the two is a thief). */
  revokeGrant(grantId: string): Promise<void>;
  /** Where a record that does not parse is told (it is treated as absent). */
  logger?: Logger | undefined;
}

/**
 * A stored record as read back (the storage may be Redis, written by another version or hand):
 * an object, with the fields this adapter reads typed; the rest is the library's, kept as it is.
 * Anything else is no record, which the library answers as it answers an unknown token or code.
 */
const payloadSchema = z.looseObject({ grantId: z.string().optional(), exp: z.number().optional(), uid: z.string().optional() });

/** The models whose records belong to a grant (revoked with it). */
const GRANTABLE = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"]);

/** The models whose ids are secrets a client holds (tokens, codes): stored under a hash of the id only. */
const SECRET_IDS = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "RegistrationAccessToken", "ClientCredentials"]);

/**
 * oidc-provider's persistence (its `adapter`) on the OAuth storage: one record per model and id
 * with the library's expiry (or a default: nothing is kept forever), an index of each grant's
 * records (revocation deletes them all, the index last), and an atomic one-time `consume` (two
 * redemptions of one code or refresh token at once: one wins, on any replica; the other gets
 * `alreadyConsumed()`, the library's `invalid_grant`, and the whole grant is revoked, as the
 * library does for a replay it sees in sequence).
 * Ids that are bearer secrets (codes, tokens) are stored under their SHA-256, not themselves.
 * A store that does not answer (Redis down or slow: a `ServiceUnavailableError`) becomes
 * `unavailable(cause)`, an error the library sends as itself (a 503 to try again), where the
 * library would otherwise answer any error it does not know with a 500 `server_error`.
 */
export function providerAdapter(storage: OAuthStorage, hooks: ProviderAdapterHooks): (model: string) => Adapter {
  const unavailable = hooks.unavailable ?? ((cause: ServiceUnavailableError) => cause);
  return (model) => guarded(unguardedAdapter(storage, hooks, model), unavailable);
}

/** The index of one grant's records. */
export const grantIndexKey = (grantId: string) => `grant:${grantId}`;

/** Deletes every record of a grant, then its index (so that a partial failure leaves the index to retry with). */
export async function deleteGrantRecords(storage: OAuthStorage, grantId: string): Promise<void> {
  const members = await storage.members(grantIndexKey(grantId));
  await storage.delete([...members, ...members.map((member) => `consumed:${member}`)]);
  await storage.delete([grantIndexKey(grantId)]);
}

/** Every method of `adapter`, with a store's `ServiceUnavailableError` turned into `unavailable(cause)`. */
function guarded(adapter: Adapter, unavailable: (cause: ServiceUnavailableError) => Error): Adapter {
  const guard =
    <A extends unknown[], R>(method: (...parameters: A) => Promise<R>) =>
    async (...parameters: A): Promise<R> => {
      try {
        return await method(...parameters);
      } catch (error) {
        throw error instanceof ServiceUnavailableError ? unavailable(error) : error;
      }
    };
  return {
    upsert: guard(adapter.upsert.bind(adapter)),
    find: guard(adapter.find.bind(adapter)),
    findByUid: guard(adapter.findByUid.bind(adapter)),
    findByUserCode: guard(adapter.findByUserCode.bind(adapter)),
    consume: guard(adapter.consume.bind(adapter)),
    destroy: guard(adapter.destroy.bind(adapter)),
    revokeByGrantId: guard(adapter.revokeByGrantId.bind(adapter)),
  };
}

/** The adapter of one model, before `guarded`. */
function unguardedAdapter(storage: OAuthStorage, hooks: ProviderAdapterHooks, model: string): Adapter {
  const key = (id: string) => `${model}:${SECRET_IDS.has(model) ? hash("sha256", id, "base64url") : id}`;
  const grantKey = grantIndexKey;
  const consumedKey = (id: string) => `consumed:${key(id)}`;
  const parsed = (text: string | undefined): AdapterPayload | undefined => {
    if (text === undefined) return undefined;
    const payload = parseJsonText(payloadSchema, text);
    if (payload === undefined) hooks.logger?.warn({ model }, "an OAuth record does not parse: treated as absent");
    // The fields read here are typed; the rest is the library's own, as it wrote it.
    return payload as AdapterPayload | undefined;
  };
  const read = async (id: string): Promise<AdapterPayload | undefined> => {
    const payload = parsed(await storage.get(key(id)));
    if (payload === undefined) return undefined;
    const consumed = await storage.get(consumedKey(id));
    return consumed === undefined ? payload : { ...payload, consumed: Number(consumed) };
  };
  return {
    async upsert(id, payload, expiresIn) {
      const ttl = typeof expiresIn === "number" && expiresIn > 0 ? expiresIn : model === "Client" ? CLIENT_TTL_SECONDS : DEFAULT_TTL_SECONDS;
      await storage.set(key(id), JSON.stringify(payload), ttl);
      if (GRANTABLE.has(model) && payload.grantId) await storage.addMember(grantKey(payload.grantId), key(id), ttl);
      if (model === "Session" && payload.uid) await storage.set(`sessionUid:${payload.uid}`, id, ttl);
    },
    find: read,
    async findByUid(uid) {
      const id = await storage.get(`sessionUid:${uid}`);
      return id === undefined ? undefined : read(id);
    },
    async findByUserCode() {
      return undefined;
    },
    async consume(id) {
      const payload = parsed(await storage.get(key(id)));
      const now = Math.floor(Date.now() / 1000);
      const ttl = payload ? Math.max(1, (payload.exp ?? 0) - now) : 60;
      if (!(await storage.setIfAbsent(consumedKey(id), String(now), ttl))) {
        if (payload?.grantId) await hooks.revokeGrant(payload.grantId);
        throw hooks.alreadyConsumed();
      }
    },
    async destroy(id) {
      await storage.delete([key(id), consumedKey(id)]);
    },
    async revokeByGrantId(grantId) {
      await deleteGrantRecords(storage, grantId);
    },
  };
}
