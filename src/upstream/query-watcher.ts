import { credentialHash } from "../auth/credential-hash.js";
import { GatewayTimeoutError } from "../errors/adapter-error.js";
import type { AnswerTrace } from "../telemetry/answer-trace.js";
import { isTerminal, mergeSnapshots, type QuerySnapshot } from "../core/query-snapshot.js";
import type { RealtimeChannel } from "../core/realtime-channel.js";
import { Mailbox } from "./mailbox.js";
import { type PollerOptions, WorkspacePoller } from "./poller.js";
import { ChannelFollow } from "./realtime/channel-follow.js";
import type { RealtimeSubscriber } from "./realtime/realtime-hub.js";
import type { Caller } from "./workspace-client.js";

/** Settings of the shared pollers (docs/upstream-assumptions.md#polling), and of the realtime channels beside them. */
export interface WatcherOptions extends PollerOptions {
  /** Follows queries' realtime channels; without it (`REALTIME=off`) every query is polled alone. */
  realtime?: RealtimeSubscriber;
  /** Quiet time after which a live channel no longer relaxes its query's polling (default: twice the longest interval). */
  channelSilenceMs?: number;
}

/** One watch: a query to follow, for whom, until when. */
export interface WatchRequest {
  caller: Caller;
  /** The create answer: the first snapshot, maybe already terminal. */
  initial: QuerySnapshot;
  deadlineMs: number;
  /** Describes the query in a timeout message (`ask query …`). */
  label: string;
  signal: AbortSignal;
  /** The query's realtime channel, from the create answer: followed alongside the poller when given. */
  channel?: RealtimeChannel;
  /** Told once how the watch ended: the terminal status, a timeout, an error, or cancelled. */
  onEnd?: (end: WatchEnd) => void;
  /** The answer's trace: polls link to it, the realtime channel reports to it. */
  trace: AnswerTrace;
}

/** How a watch ended (for metrics). */
export type WatchEnd = "PROCESSED" | "FAILED" | "timeout" | "cancelled" | "error";

/**
 * Follows queries until they end. Polling is shared: one poller per (credential, workspace)
 * lists `GET /queries?limit=100` once per interval for every request waiting in that workspace,
 * follows `next_cursor` (never built or edited) only while some waited-for id is still missing,
 * and stops when nothing waits. The interface has no `GET /queries/{id}` (docs/architecture/upstream.md#queries).
 * A query's realtime channel, when it has one, feeds the same snapshot stream (merged with the
 * list, which stays the source of truth) and makes the poller confirm its end at once
 * (docs/upstream-assumptions.md#realtime).
 */
export class QueryWatcher {
  private readonly pollers = new Map<string, WorkspacePoller>();

  constructor(private readonly options: WatcherOptions) {}

  /**
   * Snapshots of one query as they change, starting with `initial` and ending with a terminal one.
   * Throws `GatewayTimeoutError` at the deadline and the poll error when polling keeps failing;
   * ends quietly (without a terminal snapshot) when `signal` aborts.
   */
  async *watch(request: WatchRequest): AsyncGenerator<QuerySnapshot> {
    let latest = request.initial;
    let end: WatchEnd = "cancelled";
    let mailbox: Mailbox | null = null;
    let poller: WorkspacePoller | undefined;
    let deadline: unknown = null;
    try {
      if (isTerminal(latest.status)) end = latest.status as WatchEnd;
      yield latest;
      if (isTerminal(latest.status) || request.signal.aborted) return;

      mailbox = new Mailbox(latest, this.options.clock.now(), request.signal, request.trace);
      const key = pollerKey(request.caller);
      poller = this.pollers.get(key);
      if (!poller) {
        const onIdle = () => this.pollers.delete(key);
        poller = new WorkspacePoller(this.options, request.caller, credentialKeyOf(request.caller), onIdle);
        this.pollers.set(key, poller);
      }
      const box = mailbox;
      deadline = this.options.clock.setTimeout(
        () => box.fail(new GatewayTimeoutError(`The ${request.label} did not finish within ${request.deadlineMs} ms`)),
        request.deadlineMs,
      );
      poller.add(mailbox);
      const { realtime } = this.options;
      if (request.channel && realtime) {
        const active = poller;
        mailbox.follow = new ChannelFollow(
          latest,
          request.channel,
          realtime,
          { offer: (snapshot) => box.offer(snapshot), pollSoon: () => active.pollSoon(), repace: () => active.repace() },
          this.options.clock,
          this.options.channelSilenceMs ?? 2 * this.options.pollIntervalMaxMs,
          request.trace,
        );
      }
      while (true) {
        const next = await mailbox.take();
        if (!next) return;
        latest = mergeSnapshots(latest, next);
        if (isTerminal(latest.status)) end = latest.status as WatchEnd;
        yield latest;
        if (isTerminal(latest.status)) return;
      }
    } catch (error) {
      end = error instanceof GatewayTimeoutError ? "timeout" : "error";
      throw error;
    } finally {
      if (deadline !== null) this.options.clock.clearTimeout(deadline);
      if (mailbox) {
        mailbox.follow?.close();
        mailbox.stop();
        poller?.remove(mailbox);
      }
      request.onEnd?.(end);
    }
  }

  /** How many pollers are running (one per credential and workspace with waiting queries). */
  get activePollers(): number {
    return this.pollers.size;
  }

  /** How many distinct queries the pollers are waiting for. */
  get waitingQueries(): number {
    let count = 0;
    for (const poller of this.pollers.values()) count += poller.waitingCount;
    return count;
  }
}

/** Pollers are keyed by a hash of the credential, so that no raw credential is kept as a key. */
function pollerKey(caller: Caller): string {
  return `${credentialKeyOf(caller)}\u0000${caller.workspace}`;
}

/** The caller's credential hash: the one its request computed, or computed here. */
function credentialKeyOf(caller: Caller): string {
  return caller.credentialKey ?? credentialHash(caller.credential);
}
