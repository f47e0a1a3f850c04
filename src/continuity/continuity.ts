import type { Logger } from "pino";
import type { ContinuitySettings } from "../config/config.js";
import type { Clock } from "../util/clock.js";
import type { Ids } from "../util/ids.js";
import type { RetryOutcome } from "../util/retry-briefly.js";
import { BackgroundResponses } from "./background/background-responses.js";
import type { BackgroundStore } from "./background/background-store.js";
import { ConversationsApi } from "./conversations-api/conversations-api.js";
import type { QueryOwnerStore } from "./ownership/query-owner-store.js";
import { QueryOwners } from "./ownership/query-owners.js";
import type { ConversationsApiStore } from "./conversations-api/conversations-api-store.js";
import type { ResponseStore } from "./responses/response-store.js";
import { StoredResponses } from "./responses/stored-responses.js";
import type { StoreWriting } from "./store-writing.js";
import { ThreadMemory } from "./threads/thread-memory.js";
import type { ThreadStore } from "./threads/thread-store.js";

/** How long a replica's lease on a background answer lasts (renewed at a third): past it, another replica takes the answer over. */
const BACKGROUND_LEASE_MS = 3000;
/** How often a follower of a background response looks for events another replica appended. */
const BACKGROUND_FOLLOW_POLL_MS = 100;

/**
 * The stores continuity keeps its records in, all of one backend (memory or Redis), any of them
 * replaceable by a test; `Value` is what a stored response holds (the Responses API's, given by the wiring).
 */
export interface ContinuityStores<Value> {
  threads: ThreadStore;
  responses: ResponseStore<Value>;
  background: BackgroundStore;
  conversations: ConversationsApiStore;
  owners: QueryOwnerStore;
}

/** The stores' writes, as continuity waits for them: one source for every store. */
export interface StoreWrites {
  /** Bounds the wait for a write that ends an answer (`STORE_WRITE_WAIT_MS`); undefined when every store answers at once (in process). */
  waitMs: number | undefined;
  /** Resolves when a shared store answers again after an outage: a failed write's cue to retry at once. */
  answersAgain?: (() => Promise<void>) | undefined;
}

/** The stores continuity reports on, as metrics label them. */
export type ContinuityStoreName = "conversation" | "response" | "query_owner";

/** What continuity reports (metrics): each write's outcome, and each request refused for a store that did not answer. */
export interface ContinuityEvents {
  onWrite(store: ContinuityStoreName, outcome: RetryOutcome): void;
  onRefused(store: ContinuityStoreName): void;
}

/** What continuity is built from besides its stores. */
export interface ContinuityOptions {
  /** The continuity section of the configuration (lifetimes, bounds, the write wait). */
  config: ContinuitySettings;
  writes: StoreWrites;
  clock: Clock;
  ids: Ids;
  logger: Logger;
  events: ContinuityEvents;
}

/**
 * What carries an answer from one request to the next (docs/architecture.md#continuity): the
 * thread memory of chat histories, the stored responses, the background responses and the
 * Conversations API's conversations, each over its store; and whose each query is.
 */
export interface Continuity<Value> {
  threads: ThreadMemory;
  /** Who started each workspace query, checked where the upstream credential is shared (docs/governance.md#whose-query-it-is). */
  owners: QueryOwners;
  stored: StoredResponses<Value>;
  background: BackgroundResponses;
  conversations: ConversationsApi;
  close(): Promise<void>;
}

/**
 * Builds continuity over one set of stores (`memoryBackend` or `redisBackend`, or a test's). Every
 * store's writes are waited for, retried and reported the same way, from the one `writes` setting.
 */
export function createContinuity<Value>(stores: ContinuityStores<Value>, settings: ContinuityOptions): Continuity<Value> {
  const { config, writes, clock, ids, logger, events } = settings;
  const writing = (store: ContinuityStoreName): StoreWriting => ({
    writeWaitMs: writes.waitMs,
    onWrite: (outcome) => events.onWrite(store, outcome),
    onRefused: () => events.onRefused(store),
    wake: writes.answersAgain,
  });
  const threads = new ThreadMemory(stores.threads, { ttlSeconds: config.conversationTtlSeconds, logger, clock, ...writing("conversation") });
  const stored = new StoredResponses({ store: stores.responses, clock, logger, ttlSeconds: config.responsesTtlSeconds, ...writing("response") });
  const background = new BackgroundResponses({
    store: stores.background,
    clock,
    logger,
    ttlSeconds: config.responsesTtlSeconds,
    replica: ids.replica(),
    leaseMs: BACKGROUND_LEASE_MS,
    followPollMs: BACKGROUND_FOLLOW_POLL_MS,
    onRefused: () => events.onRefused("response"),
  });
  const owners = new QueryOwners(stores.owners, { ttlSeconds: config.conversationTtlSeconds, logger, clock, ...writing("query_owner") });
  const conversations = new ConversationsApi({
    store: stores.conversations,
    ttlSeconds: config.conversationTtlSeconds,
    clock,
    ids,
    logger,
    onRefused: () => events.onRefused("conversation"),
  });
  return {
    threads,
    owners,
    stored,
    background,
    conversations,
    close: async () => {
      // Background answers are left to another replica (their queries go on upstream).
      background.close();
      await Promise.all([threads.close(), owners.close(), stores.responses.close()]);
    },
  };
}
