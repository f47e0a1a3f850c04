/**
 * Every key and pub/sub channel this adapter uses in Redis, named here and nowhere else
 * (docs/architecture/redis.md#redis-topologies). A deployment's Redis holds these names: change one only
 * with a reason, never by accident (`test/unit/redis/keys.test.ts` pins them byte for byte).
 *
 * Hash tags: a Redis Cluster hashes only the part of a key between the first `{` and `}`. Keys that
 * one command, MULTI or script touches together must share a tag, so each (credential hash,
 * workspace) group's keys carry that group as their tag and live in one slot: the rate-limit windows
 * and slots, the polling lease, waiting set and channel. Keys read and written one at a time
 * (the thread memory, stored responses) carry no tag, so they spread over the shards.
 *
 * Adding a key is one line in `redisKeys`: a name under the deployment's prefix, and a tag when it
 * is used together with others of its group.
 */
export function redisKeys(prefix: string) {
  return {
    /** The thread memory: a history's latest query id, by the hash it is looked up by (thread-keys.ts): never a credential or text. (Named `conversation:` in Redis since before the Conversations API.) */
    thread: (lookup: string) => `${prefix}conversation:${lookup}`,
    /** A Conversations API conversation's record or item list: one hash tag per conversation, as its script touches both. */
    apiConversation: (id: string, part: "record" | "items") => `${prefix}conversations:{${id}}:${part}`,
    /** A stored response (its JSON, customer text) by response id. */
    response: (id: string) => `${prefix}response:${id}`,
    /** The id of the stored response an output item belongs to, by item id. */
    responseItem: (itemId: string) => `${prefix}response-item:${itemId}`,
    /** Who started a workspace query (docs/governance.md#whose-query-it-is), by query id: a principal's hash and a workspace. Tagged by its query, as a background response's keys are; each query its own slot. */
    queryOwner: (queryId: string) => `${prefix}query-owner:{${queryId}}`,
    /** A background response's record, event log, "ended" marker or runner's lease: one hash tag per response, as its scripts touch them together. */
    background: (id: string, part: "record" | "events" | "ended" | "lease") => `${prefix}background:{${id}}:${part}`,
    /** One entry of the OAuth authorization server's storage (a client, a code, a hash of a token, a grant's sealed key). */
    oauth: (key: string) => `${prefix}oauth:${key}`,
    /** An OAuth attempt window (client registrations, or wrong keys at consent) of a tag `{<what>:<client address>}`. */
    oauthAttempts: (tag: string) => `${prefix}oauth-attempts:${tag}`,
    /** The polling lease of a (credential hash `:` workspace) group: which replica lists the workspace for all. */
    pollLease: (group: string) => `${prefix}{${group}}:lease`,
    /** The query ids the group's replicas wait for (a sorted set scored by expiry). */
    pollWaiting: (group: string) => `${prefix}{${group}}:waiting`,
    /** The pub/sub channel on which the group's lease holder shares what it found. */
    pollChannel: (group: string) => `${prefix}{${group}}:snapshots`,
    /** A rate-limit window (requests or tokens per minute) of a group tag ({@link groupTag}). */
    limitWindow: (tag: string, kind: "rpm" | "tpm") => `${prefix}limit:${tag}:${kind}`,
    /** The answer slots in flight of a group tag ({@link groupTag}): a sorted set scored by expiry. */
    limitSlots: (tag: string) => `${prefix}limit:${tag}:slots`,
    /** A token quota's count in one period (`tpd:2026-11-23`, `tpmo:2026-11`) of a group tag ({@link groupTag}), expiring after it. */
    limitQuota: (tag: string, period: string) => `${prefix}limit:${tag}:${period}`,
    /** One answer's reservation held in the quotas of a group tag ({@link groupTag}): its tokens, until it is settled (docs/rate-limits.md#reservations). */
    limitHeld: (tag: string, id: string) => `${prefix}limit:${tag}:held:${id}`,
    /** One UTC day's usage (`2026-11-23`): a hash of tokens and answers by account, workspace and mode (docs/governance.md#usage). */
    usageDay: (day: string) => `${prefix}usage:${day}`,
    /**
     * The mark of one usage charge applied to a day (`UsageCharge.id`): what makes a retried write
     * count once. Its tag is the day's whole key name (which has no tag), so it hashes to the day's slot.
     */
    usageCharge: (day: string, id: string) => `${prefix}usage-charge:{${prefix}usage:${day}}:${id}`,
  };
}

/** The key names of one deployment (one `REDIS_KEY_PREFIX`). */
export type RedisKeys = ReturnType<typeof redisKeys>;

/**
 * The hash tag of a (credential hash, workspace) group, `{<principal>:<workspace>}`: what the rate
 * limits count under, so that every limit key of a client key in a workspace lives in one slot.
 */
export function groupTag(principal: string, workspace: string): string {
  return `{${principal}:${workspace}}`;
}
